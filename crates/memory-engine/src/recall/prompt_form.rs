//! What kind of prompt it is, read from its form: a **general question** (one the model's own
//! knowledge answers, whatever project it sits in) or a prompt **set in the project** (work to do
//! on it, a question about its own state). The gate asks more evidence of a general question:
//! offline of a memory's shared words ([`super::gate::LexicalEvidence::passes`]), locally of the
//! prompt's strongest memory ([`super::gate::Bars::prompt_bar`]).
//!
//! Why the form: a memory is about one project and its people, so a prompt that points at the
//! shared situation ("we", "our", "this", "here", "today", "again") or asks for work ("add …",
//! "deploy …", "the hourly report shows …") is where a memory sharing one of its words is likely
//! to be the one meant; an ordinary programming question ("what does `set -euo pipefail` do?",
//! "how does a TLS handshake work?", "write a regex that …") shares words with any project by
//! chance. Retrieving more readily when the request depends on the asker's own context, and
//! only on strong evidence when it asks for general knowledge, is how adaptive retrieval decides
//! when to look things up; here it is read from the words alone, so it costs one pass over the
//! prompt's prose.
//!
//! The rule, in order:
//! 1. Code is not prose: fenced blocks and `inline code` are set aside (a pasted log that says
//!    "this" points at nothing).
//! 2. Any word pointing at the shared situation makes the prompt set in the project; "this",
//!    "these" and "here" only when the prompt holds no code, as beside pasted code they point at
//!    it ("why does this throw `ConcurrentModificationException`?").
//! 3. What only names the subject first is set aside: a topic label of up to three words before
//!    a colon or a dash ("jq: …", "CMake question: …", "useEffect vs useLayoutEffect — …"), or
//!    a phrase setting the scene ("In a Makefile, …", "On Windows how …", "With pytest, …"),
//!    up to its comma or the question word after it. People name the subject first as often as
//!    not; the clause after it says what they ask — unless the subject is a particular thing
//!    ("For the cmd handler, can I …", "In the Makefile, what's …"): then the question is about
//!    the project's own.
//! 4. Otherwise the prompt is a general question when that clause opens (after "please", "hey"
//!    …, and "can you" / "could you", which only make a request polite) with a question word or
//!    an auxiliary ("what", "how", "why", "when", "which", "is", "does", "should" …), a verb
//!    asking for an explanation ("explain", "describe", "compare" …), a verb asking for
//!    something new and generic ("write a …", "suggest a …", "give me …"), a demonstration
//!    ("show me how …", "show me an example …"; "show me the logs" is work), or a way to do a
//!    thing ("fastest way to …", "the best way to …", "any way to …": "how do I …" put as a
//!    search).
//! 5. It is a general question too when the prompt names no thing both the asker and the
//!    project know — it does not say "the" — and either opens by weighing two things ("redis vs
//!    memcached for a cache", "CMD vs ENTRYPOINT in a Dockerfile"), or opens with the asker's
//!    own trouble ("my cron job works by hand but not from cron", "I keep getting 'permission
//!    denied' on push"), or refers to nothing in particular and asks for no work: no
//!    possessive ("my", "their" …), no "I" reporting, no opening verb of work ("add", "fix",
//!    "deploy" …). That is how a search is typed ("docker prune everything", "java string to
//!    int"); a prompt about a project names its particular things ("the nightly export", "my
//!    training job on the cluster") or asks for work on them.
//! 6. Anything else — a request for work, a report of what happened — is set in the project.
//!
//! "Where" and "who" open no general question: where a thing lives and who owns it are facts
//! of one project. A question asking yes or no ("is …", "does …", "can I …") stays a general
//! question, though most of the labeled sets' yes/no prompts are about their project ("Is the
//! site down or is it just me?"): read as set in the project, the 48 yes/no questions of
//! `bench/recall-questions.toml` (`style = "yesno"`, written to check this) injected in 35 of
//! their 72 tuning pairs offline instead of 4, and 43 instead of 6 locally, for 0.015 more
//! recall@5 held out. English only: a prompt in another language reads as set in the project (the
//! milder bar), and the bar for it is still words shared with a memory; one typed without
//! accents ("agrega una columna") can read as naming nothing in particular, and get the
//! general bar.

/// How a prompt reads, and why, for the gate's verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptForm {
    /// A general question: a memory needs the gate's full lexical evidence.
    pub general: bool,
    /// Why, in words: `a general question ("how …")`, `set in the project (it says "we")`.
    pub why: String,
}

/// Words that point at the asker's own situation.
const SHARED_SITUATION: &[&str] = &[
    "we",
    "our",
    "ours",
    "us",
    "we're",
    "we've",
    "we'll",
    "we'd",
    "let's",
    "this",
    "these",
    "here",
    "today",
    "yesterday",
    "tomorrow",
    "again",
];

/// Openings of a question the model's general knowledge answers.
const ASKING: &[&str] = &[
    "what",
    "what's",
    "whats",
    "how",
    "why",
    "when",
    "which",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "should",
    "does",
    "do",
    "did",
    "will",
    "would",
    // "Has ext4 been replaced by btrfs …?"; not "have", which opens work as often ("have it
    // return a Result").
    "has",
    "explain",
    "describe",
    "compare",
    "tell",
    "summarise",
    "summarize",
    "define",
];

/// Verbs asking for something new; generic when what follows is ("write a …", "give me …").
const MAKING: &[&str] = &[
    "write",
    "suggest",
    "give",
    "help",
    "generate",
    "create",
    "recommend",
    "draft",
    "name",
    "translate",
];

/// What follows a making verb when the thing made is generic.
const GENERIC_OBJECT: &[&str] = &["a", "an", "me", "some"];

/// What follows "show me" when a demonstration is asked for ("show me how …", "show me an
/// example …").
const SHOWN: &[&str] = &["how", "a", "an", "some"];

/// The word that, after one or two words opening the clause, asks how a thing is done ("fastest
/// way to …", "the best way to …").
const WAY: &[&str] = &["way", "ways"];

/// What follows [`WAY`] when a way of doing something is asked for.
const WAY_TO: &[&str] = &["to", "of"];

/// Words of the shared situation that point at pasted code instead when the prompt holds some
/// ("why does this throw `…`?", "convert this to a list comprehension: ```…```").
const POINTING: &[&str] = &["this", "these", "here"];

/// Words referring to a particular thing: the definite article, a possessive. A prompt with
/// none of them nor of [`FIRST_PERSON`] names nothing of its own.
const PARTICULAR: &[&str] = &["the", "your", "his", "her", "its", "their"];

/// The asker, telling of their own situation ("I added …", "my build …").
const FIRST_PERSON: &[&str] = &["i", "i'm", "im", "i've", "i'd", "i'll", "my"];

/// Verbs opening a request for work, which a prompt naming nothing in particular may still be
/// ("Add a new alert for high queue depth", "Scaffold a new microservice for notifications").
const WORK: &[&str] = &[
    "add",
    "adding",
    "archive",
    "backfill",
    "build",
    "bump",
    "change",
    "check",
    "clean",
    "commit",
    "compute",
    "configure",
    "cut",
    "debug",
    "delete",
    "deploy",
    "design",
    "disable",
    "document",
    "drop",
    "enable",
    "extract",
    "find",
    "fix",
    "go",
    "hook",
    "implement",
    "import",
    "install",
    "investigate",
    "let",
    "list",
    "log",
    "look",
    "make",
    "merge",
    "migrate",
    "move",
    "open",
    "optimise",
    "optimize",
    "parse",
    "port",
    "post",
    "profile",
    "publish",
    "push",
    "refactor",
    "release",
    "remove",
    "rename",
    "replace",
    "rerun",
    "restart",
    "retrain",
    "revert",
    "review",
    "rewrite",
    "run",
    "scaffold",
    "schedule",
    "send",
    "set",
    "ship",
    "show",
    "speed",
    "split",
    "start",
    "stop",
    "switch",
    "sync",
    "tag",
    "test",
    "update",
    "upgrade",
    "use",
    "wire",
];

/// Words weighing one thing against another ("redis vs memcached …").
const VERSUS: &[&str] = &["vs", "versus"];

/// How far into the main clause a comparison's "vs" stands ("postgres jsonb vs json …").
const COMPARISON_WORDS: usize = 4;

/// Words that open a prompt without changing its form.
const GREETINGS: &[&str] = &[
    "please", "hey", "hi", "hello", "ok", "okay", "so", "quick", "question",
];

/// Auxiliaries that, followed by "you", only make a request polite ("could you add …").
const POLITE: &[&str] = &["can", "could", "would", "will"];

/// Words that open a phrase setting the scene before the question ("In Go, …", "On macOS how …",
/// "With pytest, …").
const SCENE: &[&str] = &[
    "in", "on", "for", "with", "using", "inside", "within", "under", "from", "via", "across",
];

/// Question words that open the main clause after a scene-setting phrase with no comma ("On
/// Windows how do I …"). Not the auxiliaries: "is", "do" … also stand inside such a phrase.
const CLAUSE_OPENING: &[&str] = &["what", "what's", "whats", "how", "why", "when", "which"];

/// Words a topic label ("jq: …", "CMake question: …", "useEffect vs useLayoutEffect — …") has
/// at most before its colon or dash.
const LABEL_WORDS: usize = 3;

/// How far into a scene-setting phrase its end (a comma, a question word) is looked for.
const SCENE_WORDS: usize = 6;

/// Reads `prompt`'s form.
pub fn read(prompt: &str) -> PromptForm {
    let tokens = prose_tokens(prompt);
    let holds_code = prompt.contains('`');
    // "yesterday's change", "here's": a possessive or a contraction points as well.
    let points_at_the_situation = |t: &&String| {
        let word = t.strip_suffix("'s").unwrap_or(t);
        (SHARED_SITUATION.contains(&t.as_str()) || SHARED_SITUATION.contains(&word))
            && !(holds_code && POINTING.contains(&word))
    };
    if let Some(word) = tokens.iter().find(points_at_the_situation) {
        return in_project(format!("set in the project (it says \"{word}\")"));
    }
    let mut rest = main_clause(skip_greetings(&tokens));
    // "For the cmd handler, can I …", "In the Makefile, what's …": the subject named first is
    // a thing of the project's own.
    let subject = &tokens[..tokens.len() - rest.len()];
    if let Some(word) = subject.iter().find(|t| PARTICULAR.contains(&t.as_str())) {
        return in_project(format!(
            "set in the project (it names its subject with \"{word}\" first)"
        ));
    }
    if rest.len() > 1 && POLITE.contains(&rest[0].as_str()) && rest[1] == "you" {
        rest = skip_greetings(&rest[2..]);
    }
    let words: Vec<&String> = rest.iter().filter(|t| !is_mark(t)).collect();
    let Some(opening) = words.first() else {
        return in_project("set in the project (nothing outside code)".to_owned());
    };
    let making_generic = MAKING.contains(&opening.as_str())
        && words
            .iter()
            .skip(1)
            .take(2)
            .any(|w| GENERIC_OBJECT.contains(&w.as_str()));
    // "show me how …", "show me an example of …": a demonstration, asked for as "how do I …"
    // asks; "show me the logs" is work.
    let showing_how = opening.as_str() == "show"
        && words.get(1).is_some_and(|w| w.as_str() == "me")
        && words.get(2).is_some_and(|w| SHOWN.contains(&w.as_str()));
    // "fastest way to …", "the best way to …": asked as "how do I …" is, unless a verb of
    // work opens it ("find a way to speed up the build").
    let asking_a_way = !WORK.contains(&opening.as_str())
        && !MAKING.contains(&opening.as_str())
        && words.iter().enumerate().skip(1).take(2).any(|(at, w)| {
            WAY.contains(&w.as_str())
                && words
                    .get(at + 1)
                    .is_some_and(|next| WAY_TO.contains(&next.as_str()))
        });
    let says = |word: &str| tokens.iter().any(|t| t == word);
    // "X vs Y" opening the clause, unless the prompt says which thing of its own it is for
    // ("float vs int for the new setback offset?").
    let versus = words
        .iter()
        .take(COMPARISON_WORDS)
        .position(|w| VERSUS.contains(&w.as_str()))
        .filter(|at| *at > 0 && *at + 1 < words.len() && !says("the"));
    // Letters outside ASCII are another language's ("Lösche bitte den alten Branch"), whose
    // particular things these English words do not tell.
    let names_nothing_particular = tokens.iter().all(|t| t.is_ascii())
        && !PARTICULAR.iter().chain(FIRST_PERSON).any(|word| says(word))
        && !WORK.contains(&opening.as_str())
        && !MAKING.contains(&opening.as_str());
    // The asker's own trouble or wish told first ("my cron job works by hand but not from
    // cron", "I keep getting 'permission denied' on push") names a thing both know only with
    // "the" ("my training job on the cluster …").
    let own_trouble = FIRST_PERSON.contains(&opening.as_str()) && !says("the");
    if ASKING.contains(&opening.as_str()) || making_generic || showing_how || asking_a_way {
        general(format!("\"{opening} …\""))
    } else if let Some(at) = versus {
        general(format!("\"{} vs {}\"", words[at - 1], words[at + 1]))
    } else if names_nothing_particular {
        general("it names nothing in particular and asks for no work".to_owned())
    } else if own_trouble {
        general(format!(
            "\"{opening} …\": the asker's own trouble, with no \"the\""
        ))
    } else {
        in_project(format!(
            "set in the project (it opens with \"{opening}\", not as a general question)"
        ))
    }
}

/// Where the main clause starts, past what only names the question's subject first: a topic
/// label ("jq: how do I …", "git - how do I …") or a phrase setting the scene ("In a
/// Makefile, what's …", "On Windows how do I …"). People put the subject first as often as not;
/// the clause after it says whether they ask for general knowledge.
fn main_clause(tokens: &[String]) -> &[String] {
    let label_end = tokens
        .iter()
        .take(LABEL_WORDS + 1)
        .position(|t| t == ":" || t == "-");
    // A question or a request before the colon is the clause itself ("What does position:
    // sticky do?", "Write a haiku: autumn rain").
    let is_label = |end: &usize| {
        *end > 0
            && !tokens[..*end]
                .iter()
                .any(|t| ASKING.contains(&t.as_str()) || MAKING.contains(&t.as_str()))
    };
    if let Some(end) = label_end.filter(is_label) {
        return skip_greetings(&tokens[end + 1..]);
    }
    if tokens.first().is_some_and(|t| SCENE.contains(&t.as_str())) {
        let phrase = &tokens[1..tokens.len().min(SCENE_WORDS + 1)];
        if let Some(comma) = phrase.iter().position(|t| t == ",") {
            return &tokens[comma + 2..];
        }
        if let Some(question) = phrase
            .iter()
            .position(|t| CLAUSE_OPENING.contains(&t.as_str()))
        {
            return &tokens[question + 1..];
        }
    }
    tokens
}

fn skip_greetings(mut tokens: &[String]) -> &[String] {
    while tokens
        .first()
        .is_some_and(|t| is_mark(t) || GREETINGS.contains(&t.as_str()))
    {
        tokens = &tokens[1..];
    }
    tokens
}

/// Punctuation kept as a token: a comma, a colon, a dash.
fn is_mark(token: &str) -> bool {
    matches!(token, "," | ":" | "-")
}

fn general(why: String) -> PromptForm {
    PromptForm {
        general: true,
        why: format!("a general question ({why})"),
    }
}

fn in_project(why: String) -> PromptForm {
    PromptForm {
        general: false,
        why,
    }
}

/// The prompt's prose, lowercased, code set aside: its words, and the marks that end a label or a
/// phrase (`,`; `:`; a dash standing alone, `-`) as tokens of their own.
fn prose_tokens(prompt: &str) -> Vec<String> {
    let mut prose = String::with_capacity(prompt.len());
    for (i, part) in prompt.split("```").enumerate() {
        // Even parts are outside fences; an unclosed fence runs to the end.
        if i % 2 == 0 {
            for (j, piece) in part.split('`').enumerate() {
                if j % 2 == 0 {
                    prose.push_str(piece);
                }
                prose.push(' ');
            }
        }
        prose.push(' ');
    }
    let prose = prose.to_lowercase().replace('\u{2019}', "'");
    let mut tokens = Vec::new();
    for chunk in prose.split_whitespace() {
        // A dash between spaces ends a label; one inside a word ("set-up") does not.
        if chunk
            .chars()
            .all(|c| matches!(c, '-' | '\u{2013}' | '\u{2014}'))
        {
            tokens.push("-".to_owned());
            continue;
        }
        for piece in chunk.split(|c: char| !(c.is_alphabetic() || c == '\'')) {
            let word = piece.trim_matches('\'');
            if !word.is_empty() {
                tokens.push(word.to_owned());
            }
        }
        // A mark ending the chunk ends a label or a phrase ("jq:", "In Go,").
        if let Some(mark) = chunk.chars().last().and_then(|c| match c {
            ',' => Some(","),
            ':' => Some(":"),
            '\u{2013}' | '\u{2014}' => Some("-"),
            _ => None,
        }) {
            tokens.push(mark.to_owned());
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn general(prompt: &str) -> bool {
        read(prompt).general
    }

    #[test]
    fn questions_of_general_knowledge_read_as_general() {
        for prompt in [
            "What does a Makefile's .PHONY target do?",
            "how do I undo the last commit but keep the changes",
            "Why is my Python list comprehension slower than map?",
            "Explain the CAP theorem in two sentences",
            "Can you explain how epoll differs from select?",
            "Please describe how HTTP/2 multiplexing works",
            "Write a function that flattens a nested list in JavaScript",
            "give me a cron expression for every weekday at 7",
            "show me how to write a table-driven test in Go",
            "show me an example GitHub Actions workflow with a matrix over node versions",
            "numpy: fastest way to get the indices of the top-k values without sorting the whole thing?",
            "the best way to cache the build between CI runs",
            "any way to make the regex lazy?",
            "Is it safe to store JWTs in localStorage?",
            "Has ext4 been replaced by btrfs as the default on most distros?",
            "What\u{2019}s the difference between a mutex and a semaphore?",
        ] {
            let form = read(prompt);
            assert!(form.general, "{prompt:?}: {form:?}");
        }
        assert_eq!(
            read("hey, how does TCP slow start work?").why,
            "a general question (\"how …\")"
        );
    }

    #[test]
    fn prompts_about_the_shared_situation_or_asking_for_work_are_set_in_the_project() {
        for prompt in [
            "How do we version the public API?",
            "What did I decide about the retry policy yesterday?",
            "Is this migration safe to run on a Friday?",
            "Rename the billing module to invoicing",
            "The nightly export timed out twice",
            "Could you add pagination to the audit log endpoint?",
            "Where do the feature flags live?",
            "Who approves changes to the payments service?",
            "Write the release notes for the 3.2 tag",
            "show me the failing tests from last night",
            "find a way to speed up the nightly build",
            "Lösche bitte den alten Branch",
        ] {
            let form = read(prompt);
            assert!(!form.general, "{prompt:?}: {form:?}");
        }
        assert_eq!(
            read("Why does our build take 20 minutes?").why,
            "set in the project (it says \"our\")"
        );
        assert_eq!(
            read("Bump the Node version in CI").why,
            "set in the project (it opens with \"bump\", not as a general question)"
        );
    }

    #[test]
    fn a_subject_named_first_leaves_the_question_after_it_to_decide() {
        for prompt in [
            "jq: how do I print one field per line?",
            "CMake question: what's the difference between PUBLIC and PRIVATE?",
            "useEffect vs useLayoutEffect \u{2014} when does it matter?",
            "git - how do I undo a rebase that went wrong?",
            "In a Makefile, what's the difference between = and :=?",
            "In TypeScript, when should I reach for `unknown` instead of `any`?",
            "On Windows how do I find out which process has a lock on a file?",
            "With pytest, how do I run one test by name?",
        ] {
            let form = read(prompt);
            assert!(form.general, "{prompt:?}: {form:?}");
        }
        // The clause after the subject can still ask for work or report the project's state.
        for prompt in [
            "Billing: add a retry to the invoice export",
            "In the checkout flow, the total is off by a cent",
            "For the nightly export, bump the timeout to an hour",
            "On staging the login page returns a 502",
            "Postgres - the replica lags by ten minutes",
            // A subject that is a thing of the project's own makes the question about it.
            "for the cmd handler, can I just grab a buffer sized to the incoming message?",
            "In the Makefile, what's the difference between = and :=?",
        ] {
            let form = read(prompt);
            assert!(!form.general, "{prompt:?}: {form:?}");
        }
        assert_eq!(
            read("In the Makefile, what does -j do?").why,
            "set in the project (it names its subject with \"the\" first)"
        );
        // A question before a colon is the clause itself, not a label.
        assert!(general("What does position: sticky do?"));
        assert!(general("Write a haiku: autumn rain on a tin roof"));
        assert_eq!(
            read("Explain semantic versioning: when do I bump major?").why,
            "a general question (\"explain …\")"
        );
    }

    #[test]
    fn a_search_or_a_comparison_naming_nothing_in_particular_reads_as_general() {
        for prompt in [
            "docker prune everything",
            "java string to int",
            "python list comprehension with two loops?",
            "tar extract to a specific directory",
            "redis vs memcached for a simple cache in front of a database?",
            "Gradle Kotlin DSL vs Groovy DSL \u{2014} is it worth switching?",
            "git merge vs git rebase, which one should I use to update my branch?",
            "linter keeps telling me to use \\A instead of ^ in a validation regex",
            "my cron job works fine by hand but does nothing from cron",
            "I keep getting 'permission denied (publickey)' when I push to github",
        ] {
            let form = read(prompt);
            assert!(form.general, "{prompt:?}: {form:?}");
        }
        assert_eq!(
            read("CMD vs ENTRYPOINT in a Dockerfile").why,
            "a general question (\"cmd vs entrypoint\")"
        );
        assert_eq!(
            read("my docker container exits right after it starts").why,
            "a general question (\"my …\": the asker's own trouble, with no \"the\")"
        );
        assert_eq!(
            read("npm list globally installed packages").why,
            "a general question (it names nothing in particular and asks for no work)"
        );
        // A definite reference, a verb of work, the asker reporting past the opening, or "the"
        // in their own trouble keeps it in the project; so does a "vs" deep in a report, and
        // another language.
        for prompt in [
            "nightly export timeout after the upgrade",
            "my training job on the cluster keeps getting killed after two days",
            "I added the --json flag, is the PR ready to merge?",
            "Add a new Prometheus alert for high queue depth",
            "Scaffold a new microservice for notifications",
            "Someone is stuck getting started, where should I send them to ask?",
            "two runs with the same seed gave different scores, 0.7913 vs 0.7891",
            "Lösche bitte den alten Branch",
        ] {
            let form = read(prompt);
            assert!(!form.general, "{prompt:?}: {form:?}");
        }
    }

    #[test]
    fn code_and_pasted_text_are_not_read_as_the_prompts_words() {
        // "this" inside code points at nothing of the asker's.
        assert!(general(
            "What does `this` refer to inside an arrow function?"
        ));
        assert!(general(
            "Why would a shell script print that?\n```\nhere: line 3: this: command not found\n```"
        ));
        assert!(!general("```\nTraceback (most recent call last):\n```"));
        // Beside pasted code, "this" points at the code, not at the asker's situation.
        assert!(general(
            "why does this throw `ConcurrentModificationException`?"
        ));
        assert!(general(
            "convert this to a list comprehension:\n```python\nfor x in xs: out.append(x)\n```"
        ));
        assert!(!general("Rewrite this nested query so it's readable"));
        assert!(!general(""));
    }
}
