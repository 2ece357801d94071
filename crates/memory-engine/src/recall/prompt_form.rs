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
//! 2. Any word pointing at the shared situation makes the prompt set in the project.
//! 3. Otherwise the prompt is a general question when it opens (after "please", "hey" …, and
//!    "can you" / "could you", which only make a request polite) with a question word or an
//!    auxiliary ("what", "how", "why", "when", "which", "is", "does", "should" …), a verb asking
//!    for an explanation ("explain", "describe", "compare" …), or a verb asking for something
//!    new and generic ("write a …", "suggest a …", "give me …").
//! 4. Anything else — a request for work, a report of what happened — is set in the project.
//!
//! "Where" and "who" open no general question: where a thing lives and who owns it are facts
//! of one project. English only: a prompt in another language reads as set in the project (the
//! milder bar), and the bar for it is still words shared with a memory.

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

/// Words that open a prompt without changing its form.
const GREETINGS: &[&str] = &[
    "please", "hey", "hi", "hello", "ok", "okay", "so", "quick", "question",
];

/// Auxiliaries that, followed by "you", only make a request polite ("could you add …").
const POLITE: &[&str] = &["can", "could", "would", "will"];

/// Reads `prompt`'s form.
pub fn read(prompt: &str) -> PromptForm {
    let words = prose_words(prompt);
    if let Some(word) = words
        .iter()
        .find(|w| SHARED_SITUATION.contains(&w.as_str()))
    {
        return in_project(format!("set in the project (it says \"{word}\")"));
    }
    let mut rest = skip_greetings(&words);
    if rest.len() > 1 && POLITE.contains(&rest[0].as_str()) && rest[1] == "you" {
        rest = skip_greetings(&rest[2..]);
    }
    let Some(opening) = rest.first() else {
        return in_project("set in the project (nothing outside code)".to_owned());
    };
    let making_generic = MAKING.contains(&opening.as_str())
        && rest
            .iter()
            .skip(1)
            .take(2)
            .any(|w| GENERIC_OBJECT.contains(&w.as_str()));
    if ASKING.contains(&opening.as_str()) || making_generic {
        PromptForm {
            general: true,
            why: format!("a general question (\"{opening} …\")"),
        }
    } else {
        in_project(format!(
            "set in the project (it opens with \"{opening}\", not as a general question)"
        ))
    }
}

fn skip_greetings(mut words: &[String]) -> &[String] {
    while words
        .first()
        .is_some_and(|w| GREETINGS.contains(&w.as_str()))
    {
        words = &words[1..];
    }
    words
}

fn in_project(why: String) -> PromptForm {
    PromptForm {
        general: false,
        why,
    }
}

/// The prompt's prose words, lowercased, code set aside.
fn prose_words(prompt: &str) -> Vec<String> {
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
    prose
        .to_lowercase()
        .replace('\u{2019}', "'")
        .split(|c: char| !(c.is_alphabetic() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
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
            "Is it safe to store JWTs in localStorage?",
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
    fn code_and_pasted_text_are_not_read_as_the_prompts_words() {
        // "this" inside code points at nothing of the asker's.
        assert!(general(
            "What does `this` refer to inside an arrow function?"
        ));
        assert!(general(
            "Why would a shell script print that?\n```\nhere: line 3: this: command not found\n```"
        ));
        assert!(!general("```\nTraceback (most recent call last):\n```"));
        assert!(!general(""));
    }
}
