//! The offline extractor: no model, only what the user said in so many words. A memory comes
//! only from a sentence of the user's own prose that states something with content — a fact, a
//! preference, a standing rule, a role — and the sentence's structure says which:
//!
//! - a request to keep a *statement*: "remember (that) …", "note that …", "keep in mind …",
//!   "for future reference, …", "FYI …", "heads up: …", "our convention is …" → `project`
//!   (`user` when it is about the speaker, `feedback` when it is itself a rule). The object must
//!   be a clause with a verb of its own; a request whose object is "this", "that log", "the
//!   following", a question word ("remember what we changed") or something the conversation did
//!   ("the command we used") keeps nothing: the content is elsewhere, usually pasted;
//! - a standing rule: "from now on / going forward …", an imperative with "always", "never",
//!   "don't", "avoid", "stop …ing", "no …ing" (also after "if/when …,"), "remember to / make
//!   sure to …" only when habitual ("always", "every", "whenever", "before committing") →
//!   `feedback`;
//! - the team's habit: "we always / never / usually / don't …", "we use / deploy / pin …"
//!   (present tense) → `project`;
//! - an obligation of the project's things: "customer data must stay in the EU", "passwords
//!   must be hashed with argon2id" — not a guess ("it must be the cache", "we must have missed
//!   a migration") → `feedback`;
//! - any of these rules given with its reason in one sentence: "our Redis is shared with
//!   analytics; never flush it", "prod runs Postgres 15, so avoid MERGE" → the whole sentence,
//!   `feedback` (the reason is the rule's **Why:**);
//! - about the speaker: a preference ("I prefer …", "I'd rather …", "I hate it when …") or a role
//!   or background ("I'm the … lead", "I'm a … engineer", "I work on …", "I'm new to …") → `user`;
//! - a standing fact stated bare, when its subject, verb and complement all say it stands: "all
//!   money amounts are stored as integer cents", "our on-call rotation is in PagerDuty", "the
//!   staging URL is https://…", "payments is owned by the billing team", "there are two invoice
//!   numbering series" → `project`; "my timezone is CET", "I use Neovim", "I'm on macOS" →
//!   `user` — never the state of the work ("the page is broken", "the consumer lag is at 200k",
//!   "the migration finished"), what was seen ("every request times out"), a guess, a search
//!   typed as a sentence ("python read csv"), or what the same message then asks to change ("X
//!   still uses coroutines. can you move it to UniTask?").
//!
//! Never a memory: a question (except "could you remember that …?"), a hypothetical ("what if",
//! "suppose", "if I were …"), a reminder for the person ("remind me", "remember to drink water",
//! "don't forget to … tomorrow"), anything about now ("today", "for now", "yet", "this PR"), a
//! choice among what is on screen ("I prefer the first one"), what the speaker is doing ("I'm
//! pushing a refactor"), a deadline ("by Friday"), chatter ("never mind", "always happy to
//! help", "we never figured out why"), and pasted material (`pasted`): logs, traces, diffs,
//! trees, JSON, code — nor the sentence that introduces it ("remember this git log:").
//!
//! It cannot judge what is worth keeping beyond that, so it keeps only what the user asked to be
//! kept or stated as standing, in so many words. A statement close to an existing memory of the
//! same type is merged into it (appended to its body) instead of becoming a near-duplicate.

use super::lexicon::{
    ADVERBS, ANNOUNCING, AUXILIARIES, BACKGROUNDS, BUILT, CHATTER, CHOICE, DEICTIC, DISCOURSE,
    ED_VERBS, FOR_THE_PERSON, FUNCTION_WORDS, GUESSES, HABIT_VERBS, HYPOTHETICAL, IMPERATIVES,
    IRREGULAR_PAST, LISTS, NOT_VERBS, NUMBERS, OBSERVED, ON_SCREEN, PASTED_NOUNS, PERSONAL_ACTIONS,
    POINTERS, POLITE, PREFERENCES, PREPOSITIONS, PROFILE, PROJECT_SCOPE, RECENT, ROLES, SCOPES,
    STANDING_COPULAS, STANDING_VERBS, STATES, TROUBLES, WORK,
};
use super::pasted;
use crate::bm25;
use crate::memory_type::MemoryType;
use crate::scan::MemoryHeader;

/// One memory the offline extractor proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub memory_type: MemoryType,
    /// The statement, as the user put it (one sentence, trimmed).
    pub text: String,
    /// A short name derived from it.
    pub name: String,
}

/// Statements in `prompt` (one user message's prose).
pub fn statements(prompt: &str) -> Vec<Statement> {
    let mut found: Vec<Statement> = Vec::new();
    // Whether a new statement was kept.
    let keep = |found: &mut Vec<Statement>, statement: Option<Statement>| match statement {
        Some(statement) if !found.iter().any(|f| f.text == statement.text) => {
            found.push(statement);
            true
        }
        _ => false,
    };
    // The sentence before, for a request that points back at it ("… Remember that.").
    let mut previous: Option<String> = None;
    for line in pasted::prose_lines(prompt) {
        if line.after_pasted {
            previous = None;
        }
        // Quoted lines are someone else's words; tags are markup.
        if line.text.starts_with('>') || line.text.starts_with('<') {
            previous = None;
            continue;
        }
        let mut said = sentences(&line.text);
        let introduction = if line.introduces_pasted || !line.items.is_empty() {
            said.pop()
        } else {
            None
        };
        // The statement the sentence before made, which a fragment after it may complete.
        let mut open: Option<usize> = None;
        for (at, sentence) in said.iter().enumerate() {
            // "DoorController still uses coroutines. can you move it to UniTask?": what is
            // described to be changed is the work at hand, not a fact to keep.
            let changed_next = said[at + 1..].iter().any(|later| asks_to_change_it(later));
            let kept = match points_back(sentence) {
                Some(Back::Previous) => {
                    keep(&mut found, previous.as_deref().and_then(kept_statement))
                }
                Some(Back::Within(head)) => keep(&mut found, kept_statement(head)),
                None => keep(&mut found, classify(sentence, !changed_next)),
            };
            if kept {
                open = Some(found.len() - 1);
            } else if let Some(statement) = open.and_then(|i| found.get_mut(i)) {
                if completes(sentence) {
                    *statement = Statement::new(
                        statement.memory_type,
                        format!("{}. {}", statement.text, capitalize(sentence)),
                    );
                } else {
                    open = None;
                }
            }
            previous = Some(sentence.clone());
        }
        if introduction.is_some() {
            previous = None;
        }
        // What introduces pasted material keeps nothing: the material is not a statement.
        let Some(introduction) = introduction.filter(|_| !line.introduces_pasted) else {
            continue;
        };
        match list_introduction(&introduction) {
            Some(Trigger::Request) => {
                for item in &line.items {
                    keep(&mut found, kept_statement(bare_item(item)));
                }
            }
            Some(Trigger::Standing) => {
                for item in &line.items {
                    keep(&mut found, standing_rule(bare_item(item)));
                }
            }
            _ => {
                keep(&mut found, classify(&introduction, true));
                for item in &line.items {
                    for sentence in sentences(item) {
                        keep(&mut found, classify(&sentence, true));
                    }
                }
            }
        }
    }
    found
}

/// Whether `sentence` completes the statement before it rather than saying something of its
/// own: a fragment with no verb and with content ("grpc codegen is checked in. buf generate,
/// not protoc"; "stop putting emoji in commits. plain conventional commits please") — not a
/// question, not pasted, not thanks.
fn completes(sentence: &str) -> bool {
    let (lead, _) = lead_of(sentence);
    let lead_words = words(lead);
    !sentence.ends_with('?')
        && !pasted::is_pasted_line(sentence)
        && !has_finite_verb(&lead_words)
        && content_count(&lead_words) >= 2
        && !lead_words.iter().any(|w| CHATTER.contains(&w.as_str()))
}

/// Where a request that points back finds its statement.
enum Back<'a> {
    /// The sentence before: "We deploy on Fridays. Remember that."
    Previous,
    /// Its own first part: "The cache is keyed on the lockfile, keep that in mind."
    Within(&'a str),
}

/// Whether `sentence` is (or ends with) a request to keep what was just said: "remember that",
/// "keep it in mind", "please note this".
fn points_back(sentence: &str) -> Option<Back<'_>> {
    let is_pointer_request = |text: &str| {
        if text.trim_end().ends_with('?') && !lead_of(text).1 {
            return false;
        }
        let (lead, _) = lead_of(text);
        let lower = lead
            .to_ascii_lowercase()
            .trim_end_matches(['?', '.', '!', ' '])
            .to_owned();
        let pointer = |rest: &str| {
            let rest = rest.trim_start_matches([',', ':', ' ']);
            let rest = SCOPES
                .iter()
                .chain(&["please"])
                .fold(rest.trim(), |r, tail| {
                    r.strip_suffix(tail).unwrap_or(r).trim()
                });
            matches!(
                rest,
                "that" | "it" | "this" | "that one" | "this one" | "both"
            )
        };
        for keep in ["keep", "bear"] {
            if let Some(rest) = lower
                .strip_prefix(keep)
                .and_then(|r| r.trim().strip_suffix("in mind"))
            {
                return pointer(rest);
            }
        }
        matches!(trigger_of(lead), Some((Trigger::Request, _)))
            && trigger_of(&lower).is_some_and(|(_, rest)| pointer(rest))
    };
    if is_pointer_request(sentence) {
        return Some(Back::Previous);
    }
    let (head, tail) = [", ", " - ", " — "]
        .iter()
        .filter_map(|sep| sentence.rsplit_once(sep))
        .max_by_key(|(head, _)| head.len())?;
    is_pointer_request(tail).then_some(Back::Within(head))
}

/// Splits a line of prose on sentence ends.
fn sentences(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in split_after(line, &['.', '!', '?']) {
        // "Our Redis is shared with analytics; never flush it": one sentence, a rule and its
        // reason ([`rule_with_reason`]); any other ";" parts are sentences of their own.
        if rule_with_reason(lead_of(sentence.trim()).0).is_some() {
            push_sentence(&mut out, sentence);
        } else {
            for part in split_after(sentence, &[';']) {
                push_sentence(&mut out, part);
            }
        }
    }
    out
}

/// `text` cut after each of `ends` that a space (or the end) follows, the ends kept.
fn split_after<'a>(text: &'a str, ends: &[char]) -> Vec<&'a str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if ends.contains(&c) && next_is_space {
            let end = i + c.len_utf8();
            parts.push(&text[start..end]);
            start = end;
        }
    }
    parts.push(&text[start..]);
    parts
}

fn push_sentence(out: &mut Vec<String>, text: &str) {
    let text = text
        .trim()
        .trim_start_matches(['-', '*', '•', ' '])
        .trim_end_matches(['.', '!', ';', ' '])
        .trim();
    if !text.is_empty() {
        out.push(text.replace('’', "'"));
    }
}

/// A list item without its bullet.
fn bare_item(item: &str) -> &str {
    let item = item.trim().trim_start_matches(['-', '*', '•']).trim();
    let numbered = item
        .split_once(['.', ')'])
        .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    numbered.map_or(item, |(_, rest)| rest.trim())
}

/// How a sentence asks for something to be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// Keep the statement that follows ("remember that …", "FYI …").
    Request,
    /// What follows holds from now on ("from now on …").
    Standing,
    /// Do what follows, as a habit ("make sure to …").
    Action,
}

/// Phrases that ask for what follows to be kept, longest first where one starts another.
const TRIGGERS: &[(&str, Trigger)] = &[
    ("i want you to remember", Trigger::Request),
    ("i'd like you to remember", Trigger::Request),
    ("i need you to remember", Trigger::Request),
    ("remember", Trigger::Request),
    ("don't forget", Trigger::Request),
    ("dont forget", Trigger::Request),
    ("do not forget", Trigger::Request),
    ("never forget", Trigger::Request),
    ("make a note", Trigger::Request),
    ("take note", Trigger::Request),
    ("quick note", Trigger::Request),
    ("please note", Trigger::Request),
    ("note", Trigger::Request),
    ("keep in mind", Trigger::Request),
    ("bear in mind", Trigger::Request),
    ("for future reference", Trigger::Request),
    ("for future sessions", Trigger::Request),
    ("for the future", Trigger::Request),
    ("for next time", Trigger::Request),
    ("for reference", Trigger::Request),
    ("for the record", Trigger::Request),
    ("context for later", Trigger::Request),
    ("for context", Trigger::Request),
    ("fyi", Trigger::Request),
    ("f.y.i.", Trigger::Request),
    // "Heads up" announces something the listener should know, as "FYI" does.
    ("just a heads up", Trigger::Request),
    ("a heads up", Trigger::Request),
    ("heads up", Trigger::Request),
    ("heads-up", Trigger::Request),
    ("just so you know", Trigger::Request),
    ("so you know", Trigger::Request),
    ("just to let you know", Trigger::Request),
    ("just letting you know", Trigger::Request),
    ("worth remembering", Trigger::Request),
    ("good to know", Trigger::Request),
    ("our convention is", Trigger::Request),
    ("the convention is", Trigger::Request),
    ("our rule is", Trigger::Request),
    ("the rule is", Trigger::Request),
    ("our policy is", Trigger::Request),
    ("the policy is", Trigger::Request),
    ("our standard is", Trigger::Request),
    ("house rule", Trigger::Request),
    ("team rule", Trigger::Request),
    ("rule of thumb", Trigger::Request),
    ("rule:", Trigger::Request),
    ("policy:", Trigger::Request),
    ("convention:", Trigger::Request),
    ("reminder:", Trigger::Request),
    ("side note", Trigger::Request),
    ("p.s.", Trigger::Request),
    ("ps", Trigger::Request),
    ("from now on", Trigger::Standing),
    ("from here on out", Trigger::Standing),
    ("from here on", Trigger::Standing),
    ("going forward", Trigger::Standing),
    ("moving forward", Trigger::Standing),
    ("in all future sessions", Trigger::Standing),
    ("in future sessions", Trigger::Standing),
    ("in the future", Trigger::Standing),
    ("in future", Trigger::Standing),
    ("henceforth", Trigger::Standing),
    ("next time", Trigger::Standing),
    ("as a general rule", Trigger::Standing),
    ("as a rule", Trigger::Standing),
    ("in general", Trigger::Standing),
    ("by default", Trigger::Standing),
    ("make sure to", Trigger::Action),
    ("make sure you", Trigger::Action),
    ("be sure to", Trigger::Action),
];

/// Whether `lower` starts with `phrase` as whole words.
fn starts_with_phrase(lower: &str, phrase: &str) -> bool {
    lower.starts_with(phrase)
        && lower[phrase.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '\'' && c != '-')
}

/// The sentence without its opening discourse words, and whether it was a polite question.
fn lead_of(sentence: &str) -> (&str, bool) {
    let mut rest = sentence.trim();
    let mut polite = false;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || ",:;!-–—".contains(c));
        let lower = rest.to_ascii_lowercase();
        if TRIGGERS.iter().any(|(t, _)| starts_with_phrase(&lower, t)) {
            break;
        }
        if let Some(word) = DISCOURSE.iter().find(|w| starts_with_phrase(&lower, w)) {
            rest = &rest[word.len()..];
        } else if let Some(word) = POLITE.iter().find(|w| starts_with_phrase(&lower, w)) {
            rest = &rest[word.len()..];
            polite = true;
        } else {
            break;
        }
    }
    (rest.trim(), polite)
}

/// The words of `text`, lowercase, without the punctuation around them.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '+' && c != '#')
                .trim_end_matches("'s")
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `sentence` asks for something said before to be changed: a request ("can you move
/// it to UniTask?", "please rename them") about "it" or "them".
fn asks_to_change_it(sentence: &str) -> bool {
    let (lead, polite) = lead_of(sentence);
    let lead_words = words(lead);
    let request = polite
        || sentence.trim_end().ends_with('?')
        || lead_words
            .first()
            .is_some_and(|w| is_base_verb(w) && !FUNCTION_WORDS.contains(&w.as_str()));
    // "that" may open a clause ("add a check that fails the job"); "it" and "them" point back.
    request
        && lead_words
            .iter()
            .any(|w| matches!(w.as_str(), "it" | "them"))
}

/// The memory `sentence` states, if any (see the module contract); `bare_facts`: whether a
/// standing fact stated bare counts ([`standing_fact`]).
fn classify(sentence: &str, bare_facts: bool) -> Option<Statement> {
    if pasted::is_pasted_line(sentence) {
        return None;
    }
    let question = sentence.ends_with('?');
    let (lead, polite) = lead_of(sentence);
    let lower = lead.to_ascii_lowercase();
    let all_words = words(&lower);
    // Laughing or grumbling marks chatter: "we always seem to break the build lol".
    let chatter = all_words.iter().any(|w| CHATTER.contains(&w.as_str()));
    if (question && !polite) || chatter || hypothetical(&lower) || for_the_person(&lower) {
        return None;
    }
    // A request is no statement of how things stand ("can you set up a Dockerfile so Wei can
    // run the code").
    let bare_facts = bare_facts && !polite && !question;
    if let Some((trigger, rest)) = trigger_of(lead) {
        return match trigger {
            Trigger::Request => kept_statement(rest),
            Trigger::Standing => standing_rule(rest),
            Trigger::Action => habitual_action(rest),
        };
    }
    // "keep this log in mind", "keep the following in mind while reviewing": about something
    // else, usually pasted.
    if (starts_with_phrase(&lower, "keep") || starts_with_phrase(&lower, "bear"))
        && lower.contains(" in mind")
    {
        // "keep this in mind: we deploy with Fly.io" announces its statement.
        let (announcement, after) = lead.split_once(':')?;
        let between = announcement
            .to_ascii_lowercase()
            .replacen("keep", "", 1)
            .replacen("bear", "", 1)
            .replacen("in mind", "", 1);
        return announced(&format!("{}: {after}", between.trim())).and_then(kept_statement);
    }
    if about_now(&all_words, false) || content_count(&all_words) < 2 {
        return None;
    }
    correction(lead, &all_words)
        .or_else(|| conditional_rule(lead, &all_words))
        .or_else(|| preference(lead, &all_words))
        .or_else(|| role(lead, &all_words))
        .or_else(|| team_habit(lead, &all_words))
        .or_else(|| obligation(lead))
        .or_else(|| rule_with_reason(lead))
        .or_else(|| {
            bare_facts
                .then(|| standing_fact(lead, &all_words))
                .flatten()
        })
}

/// A standing fact stated bare, with no word asking to keep it: "all money amounts are stored
/// as integer cents", "our on-call rotation is in PagerDuty", "the staging URL is
/// https://staging.acme.dev", "payments is owned by the billing team", "my timezone is CET".
/// What makes a statement standing rather than the state of the work at hand is read from its
/// three parts:
///
/// - the subject is the project's own or a kind of thing — "our …", "all / every / each …", a
///   name or a bare noun ("payments", "prod deploys") — or the speaker's standing attribute
///   ("my timezone", "my editor"); "the …" only when what follows gives a value to look up (a
///   URL, a path, a version, a name: "the staging URL is https://…", "the mobile app still
///   supports iOS 15"). Never a trouble or a thing of the conversation ("the bug", "the test",
///   "our problem", "my plan", "my branch") nor what points elsewhere ("this", "it");
/// - the verb is present and simple: "is", "has", "can", or a verb of how things stand ("lives
///   in", "goes through", "belongs to", "uses", "supports") — not one that reports what was
///   seen ("fails", "returns", "times out", "looks"), not progressive ("is failing"), not
///   perfect ("has been"), no guess ("probably", "seems");
/// - what it is said to be is no state of the moment ("down", "broken", "slow", "ready",
///   "off by one hour") and no bare participle ("the file is deleted").
fn standing_fact(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let lower = lead.to_ascii_lowercase();
    // A guess, a question without its mark ("python read csv skip header row", "go vs rust,
    // what's better"), puzzlement ("for some reason"), progress ("already"), a comparison with
    // the moment ("bigger than expected") or a recurrence ("again") is no standing fact.
    let unsure = lead_words.iter().any(|w| {
        GUESSES.contains(&w.as_str()) || matches!(w.as_str(), "vs" | "versus" | "again" | "already")
    }) || lead_words.windows(2).any(|pair| match pair[0].as_str() {
        "some" => pair[1] == "reason",
        "than" => matches!(
            pair[1].as_str(),
            "expected" | "usual" | "before" | "normal" | "yesterday" | "last" | "it" | "i"
        ),
        _ => false,
    }) || asks_unmarked(&lower);
    // "~300 jobs backed up": an amount read off something.
    let approximate = lower.contains(" ~");
    if unsure || approximate || about_now(lead_words, false) || content_count(lead_words) < 3 {
        return None;
    }
    if let Some(tools) = speakers_tools(lead, lead_words) {
        return Some(tools);
    }
    if lead_words.first().is_some_and(|w| w == "there") {
        return what_there_is(lead, lead_words);
    }
    let subject = fact_subject(lead_words)?;
    let (verb_at, verb) = fact_verb(lead_words, subject.start)?;
    let words_of_subject = &lead_words[subject.start..verb_at];
    let particular = subject.particular;
    let of_the_moment = |at: usize, w: &str| {
        // "this repo", "that team": the standing scope, as in `about_now`.
        let scope = matches!(w, "this" | "that")
            && words_of_subject
                .get(at + 1)
                .is_some_and(|next| PROJECT_SCOPE.contains(&next.as_str()));
        (POINTERS.contains(&w) && !scope)
            // "pod stuck pending with …": a state, not a kind of thing.
            || (STATES.contains(&w) && !is_adverb(w))
            || matches!(w, "first" | "second" | "third" | "other" | "former" | "latter" | "one")
            // "the new QM9 numbers are in results/": what was just made; "the python in my
            // venv": the speaker's own copy of it, as it is now.
            || (particular
                && matches!(w, "new" | "newest" | "latest" | "current" | "recent" | "my"))
    };
    // "the bug in the parser", "my plan": the subject is a trouble or a thing of the work.
    let subject_ok = subject_head(words_of_subject).is_some_and(|head| !TROUBLES.contains(&head))
        && !words_of_subject
            .iter()
            .enumerate()
            .any(|(at, w)| of_the_moment(at, w));
    // "garbage-free target search for enemies, runs every tick": the verb found is not the
    // subject's when a pause stands between them.
    let before_verb = lower
        .split_whitespace()
        .take_while(|w| w.trim_matches(|c: char| !c.is_alphanumeric()) != verb)
        .collect::<Vec<_>>()
        .join(" ");
    // A sentence opening with quoted text quotes an error or code, not a subject.
    let interrupted = before_verb.contains([',', ':', ';', '(', '—'])
        || before_verb.contains(" - ")
        || lead.starts_with(['`', '"', '\'']);
    // "my timezone", "my editor"; "my branch", "my code" are the work at hand.
    let standing_attribute = subject.memory_type != MemoryType::User
        || words_of_subject
            .iter()
            .any(|w| PROFILE.contains(&w.as_str()));
    if !subject_ok || interrupted || !standing_attribute {
        return None;
    }
    // "the handler needs to return 201", "the rider app needs break_minutes": what the task at
    // hand needs, not how things stand.
    if verb.starts_with("need") && (particular || at_word(lead_words, verb_at + 1) == "to") {
        return None;
    }
    if !complement_stands(lead_words, verb_at) {
        return None;
    }
    // "the …" names something particular; it stands when the statement relates it to something
    // else ("the search service belongs to the discovery team") or gives it a value ("the
    // staging URL is https://…"); "the page is …", "the cache has …" alone are the work at hand.
    if particular
        && STANDING_COPULAS.contains(&verb)
        && !gives_value(lead)
        && !passive_relation(lead_words, verb_at)
    {
        return None;
    }
    Some(whole_sentence(subject.memory_type, lead))
}

/// The `i`th word, or "" past the end.
fn at_word(words: &[String], i: usize) -> &str {
    words.get(i).map(String::as_str).unwrap_or("")
}

/// Whether a clause of `lower` opens as a question without its mark: "php include vs require,
/// what's the difference", "tcp keepalive vs http keep-alive, are they the same thing".
fn asks_unmarked(lower: &str) -> bool {
    lower.split([',', ':', ';', '—']).any(|clause| {
        let first = clause.split_whitespace().next().unwrap_or("");
        matches!(
            first,
            "what"
                | "what's"
                | "whats"
                | "how"
                | "why"
                | "whether"
                | "where"
                | "is"
                | "are"
                | "does"
                | "do"
                | "can"
                | "should"
        )
    })
}

/// What there is, counted or as the only one, as a kind: "there are two invoice numbering
/// series", "there's only one prod database" — not a trouble or a state ("there are 3 failing
/// tests", "there is a bug in …").
fn what_there_is(lead: &str, lead_words: &[String]) -> Option<Statement> {
    // `words` reads "there's" as "there".
    let mut what = 1;
    if matches!(at_word(lead_words, what), "is" | "are") {
        what += 1;
    }
    let counted = at_word(lead_words, what);
    let counted = counted.parse::<u32>().is_ok() || NUMBERS.contains(&counted) || counted == "only";
    let troubled = lead_words[what..]
        .iter()
        .any(|w| TROUBLES.contains(&w.as_str()) || STATES.contains(&w.as_str()));
    (counted && !troubled).then(|| whole_sentence(MemoryType::Project, lead))
}

/// Whose a standing fact is and where its subject starts.
struct FactSubject {
    memory_type: MemoryType,
    start: usize,
    /// "the …": something particular, which stands only with a value or a relation.
    particular: bool,
}

/// The subject of a standing fact: the project's own ("our …"), a kind ("all / every / each
/// …"), something particular ("the …"), the speaker's ("my …"), or a name or bare noun.
fn fact_subject(words: &[String]) -> Option<FactSubject> {
    let at = |i: usize| at_word(words, i);
    let (memory_type, start, particular) = match at(0) {
        "our" => (MemoryType::Project, 1, false),
        "my" => (MemoryType::User, 1, false),
        "all" | "every" | "each" | "both" => match at(1) {
            "time" | "of" | "good" | "set" | "done" | "right" | "fine" | "day" => return None,
            "the" => (MemoryType::Project, 2, false),
            _ => (MemoryType::Project, 1, false),
        },
        // "the monorepo", "the library": the whole of what is built, as "our" is.
        "the" if PROJECT_SCOPE.contains(&at(1)) || BUILT.contains(&at(1)) => {
            (MemoryType::Project, 1, false)
        }
        "the" => (MemoryType::Project, 1, true),
        // A name or a bare noun: not a pronoun, a pointer, a number, a contraction ("let's"),
        // a verb or a word of grammar. A word followed by a determiner is a verb ("refactor the
        // parser").
        first
            if !matches!(
                at(1),
                "the" | "a" | "an" | "my" | "our" | "your" | "this" | "that"
            ) && !first.contains('\'')
                && !first.starts_with(|c: char| c.is_ascii_digit())
                && !NUMBERS.contains(&first)
                && !matches!(
                    first,
                    "some" | "several" | "many" | "few" | "most" | "another"
                )
                && !FUNCTION_WORDS.contains(&first)
                && !DEICTIC.contains(&first)
                && !NOT_VERBS.contains(&first)
                && !is_rule_word(first)
                && !IMPERATIVES.contains(&first)
                && !is_adverb(first)
                && !matches!(first, "i" | "he" | "she" | "they" | "everyone") =>
        {
            (MemoryType::Project, 0, false)
        }
        _ => return None,
    };
    Some(FactSubject {
        memory_type,
        start,
        particular,
    })
}

/// Where a standing fact's verb is and what it is: the first word of the clause that reads as a
/// verb, within eight words of the subject's start. It must be a form of "be", "have", "can" or
/// a verb of how things stand that agrees with the subject's head ("prod deploys go", "staging
/// lives"; in "python read csv" or "the API rate limit is" the word is a noun). A past tense
/// ("the migration finished"; a participle before a preposition, "messages shown to users",
/// only describes the subject), a verb that reports what was seen ("the report shows", "Lin
/// says") or a modal ("must have been") first means the sentence is no standing fact.
fn fact_verb(words: &[String], subject_start: usize) -> Option<(usize, &str)> {
    for i in subject_start + 1..(subject_start + 9).min(words.len()) {
        let word = words[i].as_str();
        let next = at_word(words, i + 1);
        if STANDING_COPULAS.contains(&word) {
            return Some((i, word));
        }
        if is_standing_verb(word) && words[i - 1] != "to" {
            let subject = &words[subject_start..i];
            let head = subject_head(subject)?;
            // "the planner and the controller share one workspace": two are many.
            let plural = third_person(head)
                || (head.len() == 3 && head.ends_with('s'))
                || subject.iter().any(|w| w == "and");
            // A third person agrees with any head ("Postgres goes through PgBouncer" names one
            // thing with an s); a base form only with many ("python read csv" is a search).
            if third_person(word) || plural {
                return Some((i, word));
            }
            continue;
        }
        let observed = base_forms(word).any(|base| OBSERVED.contains(&base.as_str()));
        let describing = is_past(word) && PREPOSITIONS.contains(&next);
        if (is_past(word) && !describing) || observed || AUXILIARIES.contains(&word) {
            return None;
        }
    }
    None
}

/// The word a subject is about: its last word before a preposition ("Sentry alerts for the
/// android app" → "alerts"), adverbs aside; none when that is a word of grammar.
fn subject_head(subject: &[String]) -> Option<&str> {
    let before_preposition = subject
        .iter()
        .position(|w| PREPOSITIONS.contains(&w.as_str()))
        .unwrap_or(subject.len());
    subject[..before_preposition]
        .iter()
        .rev()
        .map(String::as_str)
        .find(|w| !is_adverb(w) && !matches!(*w, "only" | "also" | "all" | "both"))
        .filter(|w| !FUNCTION_WORDS.contains(w))
}

/// Whether a form of "be" joins its subject to something else by a participle: "is shared
/// between the app and the dashboard", "is owned by billing", "are hosted on Fly".
fn passive_relation(words: &[String], verb_at: usize) -> bool {
    let mut i = verb_at + 1;
    while is_adverb(at_word(words, i)) || at_word(words, i) == "only" {
        i += 1;
    }
    let (preposition, object) = (at_word(words, i + 1), at_word(words, i + 2));
    // "are shifted by a day", "is off by one": a measure of what went wrong, no relation.
    let measure = preposition == "by"
        && (matches!(object, "a" | "an") || NUMBERS.contains(&object) || is_quantity(object));
    matches!(at_word(words, verb_at), "is" | "are")
        && is_past(at_word(words, i))
        && PREPOSITIONS.contains(&preposition)
        && !measure
}

/// Whether what follows a standing fact's verb is how things stand: not progressive ("is
/// failing"), not perfect ("has been"), no state of the moment ("is down", "is already in the
/// bank"), no bare participle ("is deleted"), no reading ("the consumer lag is at 200k", "has
/// ~300 jobs").
fn complement_stands(words: &[String], verb_at: usize) -> bool {
    let at = |i: usize| at_word(words, i);
    let verb = at(verb_at);
    let mut i = verb_at + 1;
    while matches!(
        at(i),
        "not" | "no" | "longer" | "always" | "only" | "also" | "all" | "both"
    ) || is_adverb(at(i))
    {
        i += 1;
    }
    let (next, after) = (at(i), at(i + 1));
    if next.is_empty() || STATES.contains(&next) {
        return false;
    }
    let reading = matches!(verb, "is" | "are")
        && (matches!(
            next,
            "at" | "around" | "about" | "over" | "under" | "above" | "below"
        ) && is_quantity(after)
            || is_quantity(next) && STATES.contains(&after));
    let stands = match verb {
        // "has been", "have changed": what happened, not what is.
        "has" | "have" => !is_past(next),
        // "can have several workspaces", "doesn't support batching": what holds always.
        "can" | "cannot" | "can't" => is_base_verb(next) && !OBSERVED.contains(&next),
        "doesn't" | "don't" => is_standing_verb(next),
        // "is owned by billing", "are stored as cents": a participle with what it is done by
        // or with; bare ("is deleted") it is a state.
        _ if is_past(next) => !after.is_empty(),
        _ => !(next.len() > 4 && next.ends_with("ing")),
    };
    stands && !reading
}

/// The speaker's own tools and setup: "I use Neovim, not VS Code", "I'm on Windows with WSL",
/// "I'm in CET".
fn speakers_tools(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let mut i = match lead_words.first().map(String::as_str) {
        Some("i") => 1,
        Some("i'm") => 1,
        _ => return None,
    };
    while lead_words.get(i).is_some_and(|w| is_adverb(w)) {
        i += 1;
    }
    let object = lead_words.get(i + 1).map(String::as_str).unwrap_or("");
    let tools = match (
        lead_words[0].as_str(),
        lead_words.get(i).map(String::as_str),
    ) {
        // "I run everything inside a devcontainer"; "I use it", "I run them" point elsewhere.
        ("i", Some("use" | "run" | "develop" | "code")) => {
            !matches!(object, "this" | "that" | "it" | "them" | "these" | "those")
                && !NOT_VERBS.contains(&object)
        }
        // "I'm on macOS", "I'm in CET": a name; "I'm on the auth bug" is the work at hand.
        ("i'm", Some("on" | "in")) => lead
            .split_whitespace()
            .skip(i + 1)
            .find(|w| !matches!(w.to_ascii_lowercase().as_str(), "a" | "an"))
            .and_then(|w| w.chars().next())
            .is_some_and(char::is_uppercase),
        _ => false,
    };
    tools.then(|| whole_sentence(MemoryType::User, lead))
}

/// A measured amount: "200k", "95%", "3.2s", "1500ms".
fn is_quantity(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
        && word.chars().filter(|c| c.is_alphabetic()).count() <= 3
        && !word.contains(['/', ':'])
}

/// Whether a verb says how things stand ("lives", "goes", "belongs", "uses"), in its base form
/// or its third person.
fn is_standing_verb(word: &str) -> bool {
    base_forms(word).any(|base| STANDING_VERBS.contains(&base.as_str()))
}

/// What base form a verb may have: itself, or its third person's ("lives" → "live", "goes" →
/// "go", "relies" → "rely").
fn base_forms(word: &str) -> impl Iterator<Item = String> + '_ {
    let ies = word.strip_suffix("ies").map(|stem| format!("{stem}y"));
    [
        Some(word.to_owned()),
        word.strip_suffix('s').map(str::to_owned),
        word.strip_suffix("es").map(str::to_owned),
        ies,
    ]
    .into_iter()
    .flatten()
}

/// Whether a statement names something to look up: a URL, a path, a version or a number, a
/// name (a capitalised word after the first), an identifier (`snake_case`, `dotted.name`,
/// quoted).
fn gives_value(lead: &str) -> bool {
    lead.split_whitespace().skip(1).any(|token| {
        let token = token.trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
        token.contains("://")
            || token.contains('/')
            || token.chars().any(|c| c.is_ascii_digit())
            || token.starts_with(['\'', '"', '`'])
            || token.contains('_')
            || (token.contains('.') && !token.ends_with('.'))
            // "(fw-boot)", "user-events": a name.
            || token.starts_with('(')
            || token.trim_matches('-').contains('-')
            || token.chars().next().is_some_and(char::is_uppercase)
                && token != "I"
                && !token.starts_with("I'")
    })
}

/// What joins a statement to the rule it gives a reason for: "…; never flush it", "…, so avoid
/// MERGE".
const REASON_JOINS: &[&str] = &["; ", ", so ", " so "];

/// A standing rule given with its reason in one sentence: "the design tokens come from Figma
/// via Style Dictionary; never hardcode colors", "we're on Postgres 15 in prod but 14 locally,
/// so avoid MERGE". The whole sentence is kept: the reason is what lets a later session judge
/// the rule (Claude Code's own feedback memories carry a **Why:**), and "it" in the rule names
/// the reason's subject ("our Redis is shared with analytics; never flush it"). The rule is
/// read as [`correction`], [`team_habit`] or [`obligation`] read a sentence of their own; the
/// reason must be a clause with a verb and content that is no rule itself (two rules are two
/// sentences).
fn rule_with_reason(lead: &str) -> Option<Statement> {
    let lower = lead.to_ascii_lowercase();
    let (at, join) = REASON_JOINS
        .iter()
        .filter_map(|join| lower.find(join).map(|at| (at, join)))
        .min()?;
    let reason_words = words(&lead[..at]);
    let (rule, _) = lead_of(&lead[at + join.len()..]);
    let rule_words = words(rule);
    let ruled = rule_of(rule, &rule_words, true).is_some()
        || team_habit(rule, &rule_words).is_some()
        || obligation(rule).is_some();
    // "that test is flaky; don't trust it": the reason is about something said elsewhere.
    let pointed = reason_words
        .first()
        .is_some_and(|w| DEICTIC.contains(&w.as_str()) || w == "it's" || w == "that's");
    // "always run the tests; never push to main": two rules, each a sentence of its own.
    let reason = &lead[..at];
    let two_rules = rule_of(reason, &reason_words, false).is_some()
        || team_habit(reason, &reason_words).is_some();
    if !ruled
        || pointed
        || two_rules
        || !has_finite_verb(&reason_words)
        || content_count(&reason_words) < 2
        || about_now(&reason_words, false)
    {
        return None;
    }
    Some(statement(
        MemoryType::Feedback,
        capitalize(lead.trim_end_matches(['?', '.', '!', ':', ';'])),
    ))
}

/// A rule stated as an obligation of the project's things: "customer data must stay in the EU
/// region", "all new endpoints must be documented in the OpenAPI spec", "releases must not go
/// out without a signed tag" — "must" with a verb of its own, or "must be" with a participle
/// and what it is done with, or "must have" what it owes ("every PR must have two approvals").
/// Not a guess ("it must be the cache", "the bug must be in the parser", "someone must have
/// deleted the branch": "must be" without a participle, "must have" with one),
/// nor what the speaker or the listener must do now ("I must …", "you must be tired"), nor
/// about something said elsewhere ("this must be fixed", "that must be why"), nor what a
/// particular thing of the task must do ("the endpoint must return 404"). The subject is
/// read from the clause holding "must" (after its last comma), so a sentence giving the rule
/// after a statement ("we deprecated the v1 webhooks in March, new integrations must use v2")
/// is kept whole.
fn obligation(lead: &str) -> Option<Statement> {
    let text = lead.trim_end_matches(['?', '.', '!', ':', ';']);
    let lower = text.to_ascii_lowercase();
    let must = [" must ", " mustn't "]
        .iter()
        .filter_map(|m| lower.find(m))
        .min()?;
    let clause_start = lower[..must].rfind(", ").map_or(0, |comma| comma + 2);
    let subject = words(&lower[clause_start..must]);
    let first = subject.first()?.as_str();
    // A particular thing's obligation is the task at hand ("the endpoint must return 404", "my
    // PR must go in first"); a standing rule binds a kind of thing ("passwords", "all new
    // endpoints", "customer data", "our API") or the whole of what is built ("the library must
    // stay compatible with Python 3.8").
    let the_whole = first == "the"
        && subject.len() == 2
        && (PROJECT_SCOPE.contains(&subject[1].as_str()) || BUILT.contains(&subject[1].as_str()));
    let particular = matches!(first, "the" | "my" | "your" | "his" | "her" | "their") && !the_whole;
    if particular
        || DEICTIC.contains(&first)
        || matches!(first, "i" | "we" | "you" | "i'm" | "we're")
    {
        return None;
    }
    let after = words(&lower[must..]);
    let mut i = 1;
    while matches!(
        after.get(i).map(String::as_str),
        Some("not" | "always" | "never")
    ) || after.get(i).is_some_and(|w| is_adverb(w))
    {
        i += 1;
    }
    let verb = after.get(i).map(String::as_str).unwrap_or("");
    let obliged = match verb {
        // "must have two approvals" is owed; "must have missed", "must have been" are guesses.
        "have" => after.get(i + 1).is_some_and(|w| w != "been" && !is_past(w)),
        // A passive rule names what it is done with ("hashed with argon2id"); a state ("must be
        // broken") is a guess.
        "be" => after.get(i + 1).is_some_and(|w| is_past(w)) && after.len() > i + 3,
        verb => is_base_verb(verb) && !AUXILIARIES.contains(&verb),
    };
    let all_words = words(&lower);
    if !obliged || about_now(&all_words, false) || content_count(&all_words) < 3 {
        return None;
    }
    Some(statement(MemoryType::Feedback, capitalize(text)))
}

/// The trigger `lead` opens with and what follows it.
fn trigger_of(lead: &str) -> Option<(Trigger, &str)> {
    let lower = lead.to_ascii_lowercase();
    TRIGGERS
        .iter()
        .find(|(t, _)| starts_with_phrase(&lower, t))
        .map(|(t, trigger)| (*trigger, &lead[t.len()..]))
}

/// Whether an introduction ending in ":" announces a list of statements ("Remember the
/// following:", "For future reference:", "From now on:") rather than pasted material.
fn list_introduction(introduction: &str) -> Option<Trigger> {
    let (lead, _) = lead_of(introduction);
    let (trigger, rest) = trigger_of(lead)?;
    let rest = rest
        .trim()
        .trim_end_matches(':')
        .trim()
        .to_ascii_lowercase();
    let rest = rest.trim_start_matches("that").trim();
    let rest = SCOPES
        .iter()
        .find_map(|s| rest.strip_suffix(s))
        .unwrap_or(rest)
        .trim();
    (LISTS.contains(&rest) && trigger != Trigger::Action).then_some(trigger)
}

/// What a request to keep something keeps: the statement that follows, when it is one.
fn kept_statement(object: &str) -> Option<Statement> {
    let mut object = object.trim_start_matches(|c: char| c.is_whitespace() || ",:;-–—".contains(c));
    // "remember for next time: …", "note for the future, …"
    for scope in SCOPES {
        if starts_with_phrase(&object.to_ascii_lowercase(), scope) {
            object = object[scope.len()..]
                .trim_start_matches(|c: char| c.is_whitespace() || ",:;-–—".contains(c));
        }
    }
    // "remember this: production secrets live in Vault", "remember this for next time: …" —
    // "this" announces the statement after the colon.
    if let Some(after) = announced(object) {
        object = after;
    }
    let object = object.trim().trim_end_matches(['?', '.', '!']).trim();
    // Ends with ":": it introduces something that is not here.
    if object.is_empty() || object.ends_with(':') {
        return None;
    }
    let lower = object.to_ascii_lowercase();
    if let Some(action) = lower.strip_prefix("to ") {
        return habitual_action(&object[object.len() - action.len()..]);
    }
    // "that" opens a clause ("remember that we deploy …") or points at something ("remember
    // that trace", "note that down").
    let (clause, introduced) = match lower.strip_prefix("that ") {
        Some(rest) => (&object[object.len() - rest.len()..], true),
        None => (object, false),
    };
    let clause_words = words(clause);
    let first = clause_words.first()?.as_str();
    if clause_words.len() < 3
        || DEICTIC.contains(&first)
        || (first == "the" && clause_words.get(1).is_some_and(|w| w == "following"))
        || (introduced && PASTED_NOUNS.contains(&first))
        || !has_finite_verb(&clause_words)
        || (!introduced && about_the_conversation(&clause_words[1..]))
        || about_now(&clause_words, false)
        || content_count(&clause_words) < 2
    {
        return None;
    }
    let memory_type = match first {
        "i" | "i'm" | "i've" | "i'd" | "my" | "i'll" => MemoryType::User,
        _ if is_rule(&clause_words) => MemoryType::Feedback,
        _ => MemoryType::Project,
    };
    Some(statement(memory_type, capitalize(clause)))
}

/// The statement after an announcement: "this: …", "the following for next time: …".
fn announced(text: &str) -> Option<&str> {
    let (head, after) = text.split_once([':', '—'])?;
    let head_words = words(head);
    let announcing = matches!(
        head_words.first().map(String::as_str),
        Some("this" | "these" | "the" | "that")
    ) && head_words.iter().all(|w| ANNOUNCING.contains(&w.as_str()));
    let after = after.trim();
    (announcing && !after.is_empty()).then_some(after)
}

/// What holds from now on ("from now on, write commit messages in the imperative").
fn standing_rule(rest: &str) -> Option<Statement> {
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || ",:;-–—".contains(c));
    let (rest, _) = lead_of(rest);
    let rest = rest.trim_end_matches(['?', '.', '!', ':']).trim();
    let rest_words = words(rest);
    let first = rest_words.first()?.as_str();
    if rest_words.len() < 2
        || about_now(&rest_words, true)
        || content_count(&rest_words) < 2
        || DEICTIC.contains(&first)
    {
        return None;
    }
    let memory_type = match first {
        "i" | "i'm" | "i've" | "i'd" | "my" | "i'll" => MemoryType::User,
        "we" | "our" => MemoryType::Project,
        _ => MemoryType::Feedback,
    };
    Some(statement(memory_type, capitalize(rest)))
}

/// An action to take as a habit ("remember to always update the CHANGELOG"); a one-off
/// reminder ("remember to push the branch", "remember to drink some water") is for the person.
fn habitual_action(action: &str) -> Option<Statement> {
    let action = action
        .trim_start_matches(|c: char| c.is_whitespace() || ",:;-–—".contains(c))
        .trim_end_matches(['?', '.', '!', ':'])
        .trim();
    let action_words = words(action);
    let habitual = action_words.iter().any(|w| {
        matches!(
            w.as_str(),
            "always" | "never" | "every" | "each" | "whenever" | "anytime"
        )
    }) || action_words.windows(2).any(|pair| {
        matches!(pair[0].as_str(), "before" | "after" | "when" | "while")
            && pair[1].len() > 4
            && pair[1].ends_with("ing")
    });
    let verb = action_words
        .iter()
        .find(|w| !is_adverb(w))
        .map(String::as_str)
        .unwrap_or("");
    if !habitual
        || PERSONAL_ACTIONS.contains(&verb)
        || about_now(&action_words, true)
        || content_count(&action_words) < 2
    {
        return None;
    }
    Some(statement(MemoryType::Feedback, capitalize(action)))
}

/// A correction as a standing rule: "always …", "never …", "don't …", "avoid …", "stop …ing".
fn correction(lead: &str, lead_words: &[String]) -> Option<Statement> {
    rule_of(lead, lead_words, false)
}

/// [`correction`]; `antecedent`: a condition before it names what "it" is ("when a test is
/// flaky, never just retry it").
fn rule_of(lead: &str, lead_words: &[String], antecedent: bool) -> Option<Statement> {
    // "You should never …", "you must always …": the same rule, addressed.
    let addressed = match (
        lead_words.first().map(String::as_str),
        lead_words.get(1).map(String::as_str),
    ) {
        (Some("you"), Some("should" | "must" | "shouldn't" | "mustn't")) => 2,
        _ => 0,
    };
    let at = |i: usize| {
        lead_words
            .get(addressed + i)
            .map(String::as_str)
            .unwrap_or("")
    };
    let lower = lead.to_ascii_lowercase();
    let contrasted = [", not ", " instead of ", " rather than ", " over ", " not "]
        .iter()
        .any(|c| lower.contains(c));
    let (marker, mut i) = match (at(0), at(1)) {
        ("do", "not") => ("don't", 2),
        ("don't" | "dont", _) => ("don't", 1),
        ("shouldn't" | "mustn't", _) if addressed > 0 => ("don't", 0),
        ("not", _) if addressed > 0 => ("don't", 1),
        (word @ ("always" | "never" | "avoid" | "stop"), _) => (word, 1),
        ("quit", _) => ("stop", 1),
        // "no pushing straight to main": a prohibition without its verb.
        ("no", _) => ("no", 1),
        // "prefer X over Y", "use pnpm, not npm": a standing choice, not "use the second one".
        (word @ ("prefer" | "use"), _) if contrasted && addressed == 0 => (word, 0),
        _ => return None,
    };
    while is_adverb(at(i)) {
        i += 1;
    }
    let head = at(i);
    let imperative = match marker {
        "stop" | "no" => head.len() > 4 && head.ends_with("ing"),
        "avoid" | "prefer" | "use" => !head.is_empty() && !NOT_VERBS.contains(&head),
        _ => is_base_verb(head),
    };
    // "never do that again", "don't use it": the rule is about something not said here.
    let pointed = matches!(
        at(i + 1),
        "it" | "that" | "this" | "them" | "those" | "these"
    ) && !matches!(marker, "prefer" | "use")
        && !(antecedent && matches!(at(i + 1), "it" | "them"));
    if !imperative || pointed || about_now(lead_words, true) {
        return None;
    }
    Some(whole_sentence(MemoryType::Feedback, lead))
}

/// A rule under a condition: "when a test is flaky, never just retry it".
fn conditional_rule(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let first = lead_words.first()?.as_str();
    let second = lead_words.get(1).map(String::as_str);
    // "every time you change the schema, regenerate the types": the condition is a habit, so
    // any imperative under it is a rule.
    let habitual = first == "whenever"
        || (matches!(first, "every" | "each" | "any") && second == Some("time"));
    if !habitual
        && !matches!(
            first,
            "if" | "when" | "before" | "after" | "once" | "unless"
        )
    {
        return None;
    }
    // "when you write SQL migrations always include a down migration": the rule's marker
    // stands for the comma.
    let main = match lead.split_once(", ") {
        Some((_, main)) => main,
        None => [" always ", " never ", " don't "]
            .iter()
            .find_map(|marker| lead.find(marker).map(|at| &lead[at + 1..]))?,
    };
    let (main, _) = lead_of(main);
    let main_words = words(main);
    let ruled = rule_of(main, &main_words, true).is_some()
        || (habitual
            && main_words.first().is_some_and(|w| {
                is_base_verb(w) && !matches!(w.as_str(), "we" | "you" | "i" | "it")
            }));
    if !ruled {
        return None;
    }
    Some(whole_sentence(MemoryType::Feedback, lead))
}

/// The speaker's standing preference: "I prefer …", "I'd rather …", "I hate it when …" — not a
/// choice among what is on screen ("I prefer the first one", "I like this").
fn preference(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let lower = lead.to_ascii_lowercase();
    let prefix = PREFERENCES.iter().find(|p| starts_with_phrase(&lower, p))?;
    let mut object = words(&lower[prefix.len()..]);
    // "I prefer that you ask first": "that" opens a clause.
    if object.first().is_some_and(|w| w == "that")
        && object.get(1).is_some_and(|w| {
            matches!(
                w.as_str(),
                "you" | "we" | "i" | "they" | "the" | "our" | "all" | "every"
            )
        })
    {
        object.remove(0);
    }
    let first = object.first()?.as_str();
    let compared = [" over ", " rather than ", " instead of ", " than "]
        .iter()
        .any(|c| lower.contains(c));
    let chosen = CHOICE.contains(&first)
        || (first == "the" && !compared)
        || object.windows(2).any(|pair| {
            matches!(pair[0].as_str(), "the" | "your" | "that")
                && ON_SCREEN.contains(&pair[1].as_str())
        });
    if chosen || content_count(&object) == 0 || about_now(lead_words, false) {
        return None;
    }
    Some(whole_sentence(MemoryType::User, lead))
}

/// Who the speaker is: a role ("I'm the backend lead", "I'm a data scientist"), a team ("I'm on
/// the platform team"), what they work on or know ("I work on …", "I'm new to Rust").
fn role(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let lower = lead.to_ascii_lowercase();
    let keep = || Some(whole_sentence(MemoryType::User, lead));
    if about_now(lead_words, false) {
        return None;
    }
    // "I work mostly on …": adverbs aside.
    let plain: String = lead_words
        .iter()
        .filter(|w| !is_adverb(w))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(phrase) = WORK.iter().find(|p| starts_with_phrase(&plain, p)) {
        // "I maintain it myself", "I work on this in the evenings": on what was said elsewhere.
        let object = plain[phrase.len()..]
            .split_whitespace()
            .next()
            .unwrap_or("");
        if matches!(object, "it" | "this" | "that" | "them" | "these" | "those") {
            return None;
        }
        return keep();
    }
    // "As the team lead, I decide the release dates."
    if matches!(lead_words.first().map(String::as_str), Some("as"))
        && matches!(
            lead_words.get(1).map(String::as_str),
            Some("a" | "an" | "the")
        )
        && lower.contains(", i ")
    {
        let title: Vec<&str> = lower
            .split(", i ")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if title.iter().any(|w| ROLES.contains(w)) {
            return keep();
        }
    }
    let years = lead_words.iter().any(|w| w == "years" || w == "decade")
        && (starts_with_phrase(&lower, "i've been") || starts_with_phrase(&lower, "i have"));
    if years {
        return keep();
    }
    let (i, am) = match (
        lead_words.first()?.as_str(),
        lead_words.get(1).map(String::as_str),
    ) {
        ("i'm", _) => (1, true),
        ("i", Some("am")) => (2, true),
        _ => (0, false),
    };
    if !am {
        return None;
    }
    let mut i = i;
    while lead_words.get(i).is_some_and(|w| is_adverb(w)) {
        i += 1;
    }
    let rest = lead_words[i..].join(" ");
    if BACKGROUNDS.iter().any(|p| starts_with_phrase(&rest, p)) {
        return keep();
    }
    // The phrase after "I'm", up to the first comma: "I'm a bit tired, the engineer …" names no
    // role of the speaker's.
    let clause = words(lead.split([',', ';', '—', '(']).next().unwrap_or(lead));
    let noun_phrase: Vec<&str> = clause
        .iter()
        .skip(i)
        .map(String::as_str)
        .take_while(|w| {
            !matches!(
                *w,
                "and" | "so" | "but" | "because" | "who" | "which" | "that" | "since" | "when"
            )
        })
        .collect();
    let on_a_team = matches!(noun_phrase.first(), Some(&("on" | "in" | "part")))
        && noun_phrase.contains(&"team");
    let a_role = matches!(noun_phrase.first(), Some(&("a" | "an" | "the")))
        && noun_phrase.iter().any(|w| {
            w.split('-')
                .chain(std::iter::once(*w))
                .any(|part| ROLES.contains(&part))
        });
    if on_a_team || a_role {
        return keep();
    }
    None
}

/// The team's habit in the present tense: "we always squash-merge", "we never deploy on
/// Fridays", "we use Renovate" — not "we always had problems" or "we never figured out why".
fn team_habit(lead: &str, lead_words: &[String]) -> Option<Statement> {
    let at = |i: usize| lead_words.get(i).map(String::as_str).unwrap_or("");
    let (mut i, singular) = match (at(0), at(1)) {
        ("we", _) => (1, false),
        ("our" | "the", "team") => (2, true),
        ("everyone" | "everybody", _) => (1, true),
        _ => return None,
    };
    let mut habitual = false;
    loop {
        match (at(i), at(i + 1)) {
            ("do", "not") | ("no", "longer") => i += 2,
            (
                "don't" | "dont" | "always" | "never" | "usually" | "generally" | "typically"
                | "normally" | "only" | "rarely" | "mostly" | "also",
                _,
            ) => i += 1,
            ("must" | "should", "always" | "never" | "not") => i += 1,
            _ => break,
        }
        habitual = true;
    }
    // "The team uses Linear": the same verb in its third person.
    let head = match at(i) {
        word if singular && third_person(word) => &word[..word.len() - 1],
        word => word,
    };
    // "we have three environments": what the team has, counted (not "we have a problem").
    let number = at(i + 1);
    let counted = head == "have"
        && (number.parse::<u32>().is_ok() || NUMBERS.contains(&number))
        && !TROUBLES.contains(&at(i + 2));
    let present = if habitual {
        is_base_verb(head)
    } else {
        HABIT_VERBS.contains(&head) || counted
    };
    // "We use it everywhere": what "it" is was said elsewhere.
    let pointed = matches!(
        at(i + 1),
        "it" | "that" | "this" | "them" | "those" | "these"
    );
    if !present || pointed || about_now(lead_words, false) {
        return None;
    }
    Some(whole_sentence(MemoryType::Project, lead))
}

/// A hypothetical or counterfactual: nothing in it is so.
fn hypothetical(lower: &str) -> bool {
    HYPOTHETICAL.iter().any(|o| starts_with_phrase(lower, o))
        || lower.contains("what if ")
        || (starts_with_phrase(lower, "if")
            && [" were ", " would ", "'d "]
                .iter()
                .any(|w| lower.contains(w)))
}

/// A reminder meant for the person, not the agent.
fn for_the_person(lower: &str) -> bool {
    FOR_THE_PERSON.iter().any(|p| lower.starts_with(p))
}

/// Whether the words are about now rather than always: a time that passes ("today", "for now",
/// "yet", "earlier"), or something on screen ("this PR", "these tests", "that output") — "this
/// project" and its kin are the standing scope, not a moment. In an imperative, "here" and
/// "now" are the moment too ("don't change it here").
fn about_now(words: &[String], imperative: bool) -> bool {
    if speaker_busy(words) {
        return true;
    }
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        let before = i
            .checked_sub(1)
            .and_then(|p| words.get(p))
            .map(String::as_str);
        match w.as_str() {
            "this" | "these" | "those" => next.is_none_or(|n| !PROJECT_SCOPE.contains(&n)),
            "that" => next.is_some_and(|n| PASTED_NOUNS.contains(&n)),
            "today" | "tonight" | "tomorrow" | "yesterday" | "earlier" | "yet" | "currently" => {
                true
            }
            "now" => {
                matches!(before, Some("right" | "for" | "just"))
                    || (imperative && before != Some("from"))
                    || next.is_some_and(|n| n.len() > 4 && n.ends_with("ing"))
            }
            // "I just changed the port": a moment ago.
            "just" => next.is_some_and(is_past),
            "moment" => before == Some("the"),
            "week" | "weekend" | "sprint" | "month" | "night" | "monday" | "tuesday"
            | "wednesday" | "thursday" | "friday" | "saturday" | "sunday" => {
                // "by Friday", "until Monday": a deadline, once.
                matches!(before, Some("next" | "last" | "this" | "by" | "until"))
            }
            "here" => imperative && before != Some("from"),
            // "don't touch the Dockerfile though": against what is being done now.
            "though" => imperative,
            // "the last commit", "the previous run": what just happened.
            "last" | "previous" | "latest" => next.is_some_and(|n| RECENT.contains(&n)),
            // The state of the work at hand: "the test is now passing", "the build is broken".
            "failing" | "passing" | "broken" | "crashing" | "hanging" | "down" => {
                matches!(before, Some("is" | "are" | "now" | "still" | "'s"))
            }
            _ => false,
        }
    })
}

/// Whether the words open with what the speaker is doing ("I'm pushing a refactor in a few
/// minutes"), which holds only while they do it.
fn speaker_busy(words: &[String]) -> bool {
    let gerund = |w: Option<&String>| w.is_some_and(|w| w.len() > 4 && w.ends_with("ing"));
    match words.first().map(String::as_str) {
        Some("i'm") => gerund(words.get(1)),
        Some("i") => words.get(1).is_some_and(|w| w == "am") && gerund(words.get(2)),
        _ => false,
    }
}

/// Whether a clause speaks of something that happened in the conversation ("the command we
/// used", "the trace you showed me"): a pointer to it, not a statement.
fn about_the_conversation(words: &[String]) -> bool {
    words
        .windows(2)
        .any(|pair| matches!(pair[0].as_str(), "we" | "you" | "i") && is_past(&pair[1]))
}

/// Whether the clause has a verb of its own: a statement, not a bare noun phrase ("the deploy
/// steps").
fn has_finite_verb(words: &[String]) -> bool {
    let last = words.len().saturating_sub(1);
    words.iter().enumerate().any(|(i, w)| {
        let w = w.as_str();
        AUXILIARIES.contains(&w)
            || ["'s", "'re", "'ve", "'m", "'ll", "'d"]
                .iter()
                .any(|c| w.ends_with(c))
            || (i < last && matches!(w, "i" | "we" | "you" | "they" | "he" | "she"))
            || (i >= 1 && i < last && third_person(w))
            || (i == 0 && (is_rule_word(w) || IMPERATIVES.contains(&w)))
    }) || prohibits(words)
}

/// Whether a clause is itself a rule ("never log request bodies", "no pushing to main").
fn is_rule(words: &[String]) -> bool {
    words
        .first()
        .is_some_and(|w| is_rule_word(w) || IMPERATIVES.contains(&w.as_str()))
        || prohibits(words)
}

/// "no pushing straight to main", "no logging of request bodies": "no" with a gerund.
fn prohibits(words: &[String]) -> bool {
    words.first().is_some_and(|w| w == "no")
        && words
            .get(1)
            .is_some_and(|w| w.len() > 4 && w.ends_with("ing"))
}

fn is_rule_word(word: &str) -> bool {
    matches!(
        word,
        "always" | "never" | "don't" | "dont" | "avoid" | "stop" | "please"
    )
}

/// A verb in its base form, as an imperative or after "we always" has it: not a past tense,
/// not a participle, not a third person ("always fails"), not a word that is no verb at all.
fn is_base_verb(word: &str) -> bool {
    let gerund = word.ends_with("ing") && word.len() > 4;
    !(word.is_empty() || NOT_VERBS.contains(&word) || is_past(word) || gerund || third_person(word))
}

/// A past tense or participle: "had", "changed", "wrote" (not "need", "embed").
fn is_past(word: &str) -> bool {
    IRREGULAR_PAST.contains(&word) || (word.ends_with("ed") && !ED_VERBS.contains(&word))
}

/// "fails", "works", "returns": a verb's third person (or a plural noun), never "address",
/// "focus", "alias" or "this".
fn third_person(word: &str) -> bool {
    word.len() > 3
        && word.ends_with('s')
        && !["ss", "us", "is", "as"].iter().any(|e| word.ends_with(e))
        && word.chars().all(|c| c.is_alphabetic())
}

fn is_adverb(word: &str) -> bool {
    ADVERBS.contains(&word)
        || (word.len() > 4
            && word.ends_with("ly")
            && word != "only"
            && word != "apply"
            && word != "reply"
            && word != "supply")
}

/// Words with meaning (not function words), at least two in a statement with content.
fn content_count(words: &[String]) -> usize {
    words
        .iter()
        .filter(|w| w.chars().any(char::is_alphanumeric) && !FUNCTION_WORDS.contains(&w.as_str()))
        .count()
}

/// A statement of the whole of `lead`, as the user put it.
fn whole_sentence(memory_type: MemoryType, lead: &str) -> Statement {
    statement(
        memory_type,
        capitalize(lead.trim_end_matches(['?', '.', '!', ':'])),
    )
}

fn statement(memory_type: MemoryType, text: String) -> Statement {
    Statement::new(memory_type, text)
}

impl Statement {
    /// A statement of `text` (clipped to 300 characters), named after its first words.
    pub fn new(memory_type: MemoryType, text: String) -> Statement {
        let text = crate::llm::clip(&text, 300);
        Statement {
            name: name_for(&text),
            memory_type,
            text,
        }
    }
}

fn capitalize(text: &str) -> String {
    let text = text.trim();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A short name: the statement's first words (up to 6, stopping at a comma), as a title.
fn name_for(text: &str) -> String {
    let head = text.split([',', '(', ':']).next().unwrap_or(text);
    let words: Vec<&str> = head.split_whitespace().take(6).collect();
    capitalize(&words.join(" "))
}

/// Words that say nothing about what a memory is about.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "we", "i", "you", "is",
    "are", "be", "it", "that", "this", "our", "my", "use", "always", "never", "don't", "do", "not",
    "dont", "should", "must", "when", "by", "at", "as",
];

fn content_words(text: &str) -> std::collections::BTreeSet<String> {
    bm25::tokens(text)
        .into_iter()
        .filter(|t| t.len() > 2 && !STOPWORDS.contains(&t.as_str()))
        .collect()
}

/// The existing memory of the same type a statement is close to: at least two content words in
/// common, covering at least half of the smaller side (name + description of the memory).
pub fn close_memory<'a>(
    statement: &Statement,
    existing: &'a [MemoryHeader],
) -> Option<&'a MemoryHeader> {
    let words = content_words(&statement.text);
    existing
        .iter()
        .filter(|h| h.memory_type == Some(statement.memory_type))
        .filter_map(|h| {
            let theirs = content_words(&format!(
                "{} {}",
                h.name.as_deref().unwrap_or(""),
                h.description.as_deref().unwrap_or("")
            ));
            let shared = words.intersection(&theirs).count();
            let smaller = words.len().min(theirs.len()).max(1);
            (shared >= 2 && shared * 2 >= smaller).then_some((shared, h))
        })
        .max_by_key(|(shared, _)| *shared)
        .map(|(_, h)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(prompt: &str) -> Vec<(MemoryType, String)> {
        statements(prompt)
            .into_iter()
            .map(|s| (s.memory_type, s.text))
            .collect()
    }

    #[test]
    fn explicit_requests_corrections_and_roles_are_recognised() {
        assert_eq!(
            kinds("Great. Remember that we deploy with Fly.io, never Heroku."),
            [(
                MemoryType::Project,
                "We deploy with Fly.io, never Heroku".to_owned()
            )]
        );
        assert_eq!(
            kinds("please remember: I prefer tabs"),
            [(MemoryType::User, "I prefer tabs".to_owned())]
        );
        assert_eq!(
            kinds("Don't mock the database in integration tests. Thanks!"),
            [(
                MemoryType::Feedback,
                "Don't mock the database in integration tests".to_owned()
            )]
        );
        assert_eq!(
            kinds("Stop adding summaries at the end of every answer"),
            [(
                MemoryType::Feedback,
                "Stop adding summaries at the end of every answer".to_owned()
            )]
        );
        assert_eq!(
            kinds("I'm a data engineer and I work on the billing pipeline"),
            [(
                MemoryType::User,
                "I'm a data engineer and I work on the billing pipeline".to_owned()
            )]
        );
    }

    /// The issue's session (#21): each of these used to become a memory of its request sentence.
    #[test]
    fn requests_about_something_else_questions_and_reminders_keep_nothing() {
        for prompt in [
            "remember to drink some water, I'm a bit tired today",
            "can you remember what we changed in the parser yesterday?",
            "remember this stack trace for later:\nTypeError: x is undefined\n    at f (src/a.js:1:2)",
            "Please remember this git log so you have it next time:\ncommit 3f2a9c1d5e\nAuthor: A <a@b.c>",
            "Remember that trace I pasted earlier? Same thing again.",
            "Remind me to call the bank at 3pm.",
            "Don't forget to email Sam about the invoice tomorrow.",
            "What if we always deployed on Fridays?",
            "If I were the team lead I would never allow force pushes.",
            "Don't touch the tests in this PR.",
            "I prefer the first version you wrote.",
            "We never figured out why the cache was stale.",
            "Keep this log in mind while you debug:\n2026-11-23T10:12:44Z ERROR api: reset",
        ] {
            assert!(kinds(prompt).is_empty(), "{prompt}: {:?}", kinds(prompt));
        }
    }

    #[test]
    fn a_statement_announced_listed_or_pointed_back_at_is_kept() {
        assert_eq!(
            kinds("Remember this: production secrets live in Vault, never in .env files."),
            [(
                MemoryType::Project,
                "Production secrets live in Vault, never in .env files".to_owned()
            )]
        );
        assert_eq!(
            kinds("For future reference:\n- the staging DB resets every Sunday\n- Alice owns auth"),
            [
                (
                    MemoryType::Project,
                    "The staging DB resets every Sunday".to_owned()
                ),
                (MemoryType::Project, "Alice owns auth".to_owned())
            ]
        );
        assert_eq!(
            kinds("The CI cache is keyed on the lockfile hash. Remember that!"),
            [(
                MemoryType::Project,
                "The CI cache is keyed on the lockfile hash".to_owned()
            )]
        );
        // What "that" points at is pasted: nothing.
        assert!(kinds("Here:\n{\"a\": 1}\nRemember that.").is_empty());
        assert_eq!(
            kinds("From now on, write commit messages in the imperative mood."),
            [(
                MemoryType::Feedback,
                "Write commit messages in the imperative mood".to_owned()
            )]
        );
        assert_eq!(
            kinds("Remember to always update the CHANGELOG when you touch a public API."),
            [(
                MemoryType::Feedback,
                "Always update the CHANGELOG when you touch a public API".to_owned()
            )]
        );
        assert_eq!(
            kinds("We always squash-merge pull requests into main."),
            [(
                MemoryType::Project,
                "We always squash-merge pull requests into main".to_owned()
            )]
        );
    }

    /// A rule with its reason in one sentence is kept whole; an obligation of the project's
    /// things is a rule; "heads up" announces a statement as "FYI" does. None of them from a
    /// guess, a deadline, what the speaker is doing, or a reason that points elsewhere.
    #[test]
    fn rules_with_reasons_obligations_and_heads_ups_are_kept_and_guesses_are_not() {
        let feedback = |text: &str| vec![(MemoryType::Feedback, text.to_owned())];
        assert_eq!(
            kinds("Our Redis instance is shared with the analytics team; never flush it."),
            feedback("Our Redis instance is shared with the analytics team; never flush it")
        );
        assert_eq!(
            kinds("we're on Postgres 15 in prod but 14 locally, so avoid MERGE"),
            feedback("We're on Postgres 15 in prod but 14 locally, so avoid MERGE")
        );
        assert_eq!(
            kinds("Passwords must be hashed with argon2id."),
            feedback("Passwords must be hashed with argon2id")
        );
        assert_eq!(
            kinds("we deprecated the v1 webhooks in March, new integrations must use v2"),
            feedback("We deprecated the v1 webhooks in March, new integrations must use v2")
        );
        assert_eq!(
            kinds("Releases must not go out without a signed tag."),
            feedback("Releases must not go out without a signed tag")
        );
        assert_eq!(
            kinds("A PR must have two approvals before it merges."),
            feedback("A PR must have two approvals before it merges")
        );
        assert_eq!(
            kinds("Heads up, the payments service only accepts requests signed with the v3 key."),
            [(
                MemoryType::Project,
                "The payments service only accepts requests signed with the v3 key".to_owned()
            )]
        );
        for prompt in [
            "It must be the cache again.",
            "The bug must be in the date parser, can you check?",
            "We must have missed a migration somewhere.",
            "Something must have changed in the lockfile",
            "Someone must have deleted the branch",
            "Old builds must have been cached by the CDN",
            "A user must be able to reset their password from the login page",
            "The cache must be corrupted somehow",
            "You must be tired of this bug by now",
            "This must be fixed before the demo.",
            "The fix must be deployed by Friday",
            "The endpoint must return 404 when the order doesn't exist, not 500.",
            "The output must be sorted by date, newest first",
            "My PR must go in before the release branch is cut",
            "The server must restart after the config change, right?",
            "heads up, I'm pushing a big refactor in a few minutes",
            "Heads up: the build is broken right now.",
            "That test is flaky; don't trust it",
            "The deploy failed, so don't merge yet",
            "I rebased on main; never mind the conflicts, I fixed them.",
            "The test is flaky, so retry it once and tell me what you see.",
        ] {
            assert!(kinds(prompt).is_empty(), "{prompt}: {:?}", kinds(prompt));
        }
        assert_eq!(
            kinds("Always run the tests; never push to main."),
            [
                (MemoryType::Feedback, "Always run the tests".to_owned()),
                (MemoryType::Feedback, "Never push to main".to_owned())
            ]
        );
        // Without a rule after it, a ";" still parts two sentences.
        assert_eq!(
            kinds("FYI the docs moved to Docusaurus; the old wiki is gone"),
            [(
                MemoryType::Project,
                "The docs moved to Docusaurus".to_owned()
            )]
        );
    }

    /// Text of any shape is read without a panic: multibyte characters where a rule slices,
    /// lone punctuation, a long pasted block with no blank line.
    #[test]
    fn bare_standing_facts_are_kept_and_the_state_of_the_work_is_not() {
        let project = |text: &str| vec![(MemoryType::Project, capitalize(text))];
        for fact in [
            "All dates in the API are ISO 8601 strings in UTC",
            "our feature flags live in LaunchDarkly",
            "every service exposes its metrics on port 9102",
            "The marketing site is hosted on https://www.example.org",
            "the analytics pipeline belongs to the data platform team",
            "Staging deploys go through a manual approval in Spinnaker",
            "refunds are handled by the ledger service",
            "customers can have several billing addresses",
            "Our API doesn't support batch requests",
            "search indexes are rebuilt nightly by a cron job",
        ] {
            assert_eq!(kinds(fact), project(fact));
        }
        assert_eq!(
            kinds("my timezone is PST and I start around 10"),
            [(
                MemoryType::User,
                "My timezone is PST and I start around 10".to_owned()
            )]
        );
        assert_eq!(
            kinds("I use Emacs with evil-mode"),
            [(MemoryType::User, "I use Emacs with evil-mode".to_owned())]
        );
        assert_eq!(
            kinds("hmm, I'm in Lisbon so mornings are best for me"),
            [(
                MemoryType::User,
                "I'm in Lisbon so mornings are best for me".to_owned()
            )]
        );
        // The whole of what is built binds as a kind does.
        assert_eq!(
            kinds("The SDK must stay compatible with Java 11."),
            [(
                MemoryType::Feedback,
                "The SDK must stay compatible with Java 11".to_owned()
            )]
        );
        // A fact beside a request stays a fact; one the request then changes does not.
        assert_eq!(
            kinds("the billing service talks to Stripe through a proxy. can you add retries?"),
            project("the billing service talks to Stripe through a proxy")
        );
        assert!(
            kinds("the importer still uses a global lock. can you make it per table?").is_empty()
        );
        // What there is, counted; a prohibition without its verb; a passive relation.
        for fact in [
            "there are three regions, each with its own database",
            "The payroll service is maintained by the platform team",
        ] {
            assert_eq!(kinds(fact), project(fact));
        }
        assert_eq!(
            kinds("no logging of request bodies, they hold card numbers"),
            [(
                MemoryType::Feedback,
                "No logging of request bodies, they hold card numbers".to_owned()
            )]
        );
        // A fragment after a statement completes it; a rule's marker stands for a comma.
        assert_eq!(
            kinds("the frontend is deployed with Vercel. one project per app, not a shared one"),
            project("the frontend is deployed with Vercel. One project per app, not a shared one")
        );
        assert_eq!(
            kinds("when you touch the schema always regenerate the types"),
            [(
                MemoryType::Feedback,
                "When you touch the schema always regenerate the types".to_owned()
            )]
        );
        assert_eq!(
            kinds("the monorepo has four packages: api, web, admin and shared"),
            project("the monorepo has four packages: api, web, admin and shared")
        );
        for prompt in [
            "there are 3 failing tests in the auth module",
            "the prices in the feed are shifted by a cent",
            "build 17 is still on the old runner, the others moved already",
            "no idea why this happens",
        ] {
            assert!(kinds(prompt).is_empty(), "{prompt}: {:?}", kinds(prompt));
        }
        for prompt in [
            // The state of the work, a reading, what happened, what was seen.
            "our staging environment is down",
            "the checkout page is broken on Safari",
            "the queue depth is at 12k",
            "the migration finished",
            "the search results are off by one page",
            "every request to /orders times out",
            "the function returns null for an empty list",
            "Lin says the new config is already deployed",
            "my branch is behind main",
            "the new handler needs to validate the payload",
            "the bundle is way bigger than expected",
            "CI is red again",
            // Guesses, plans, questions without their mark, searches, a thing of the task.
            "the problem is probably the DNS",
            "my plan is to split the parser into two files",
            "python read json file",
            "go vs rust for a cli tool, which is better",
            "the bug is in the date parser",
            "Two builds with the same commit produced different hashes",
            "Let's use serde for this",
            "Refactor the parser to use an iterator.",
            "the cache has stale entries",
        ] {
            assert!(kinds(prompt).is_empty(), "{prompt}: {:?}", kinds(prompt));
        }
    }

    #[test]
    fn odd_text_is_read_without_a_panic() {
        let long_block = format!("remember:\n{}", "some words here\n".repeat(20_000));
        for prompt in [
            "12é4-5 remember that",
            "1é:3é",
            "ééé: remember: é",
            "İ remember that İstanbul is where the team sits",
            "remember that\u{feff}",
            ":",
            "?",
            "—",
            "- ",
            "1.",
            "I'm",
            "we",
            "Remember that İ İ İ",
            "never ",
            long_block.as_str(),
        ] {
            let _ = statements(prompt);
        }
    }

    #[test]
    fn ordinary_prompts_and_code_give_nothing() {
        for prompt in [
            "fix the failing test in parser.rs",
            "stop here",
            "```\nnever_call(x);\n```",
            "what do you remember about the parser?",
            "Never mind",
            "{\"always\": true}",
        ] {
            assert!(kinds(prompt).is_empty(), "{prompt}: {:?}", kinds(prompt));
        }
    }

    #[test]
    fn a_close_memory_of_the_same_type_is_found() {
        let header = |name: &str, description: &str, kind| MemoryHeader {
            file: format!("{name}.md"),
            name: Some(name.to_owned()),
            description: Some(description.to_owned()),
            memory_type: Some(kind),
            mtime: std::time::SystemTime::UNIX_EPOCH,
            age: String::new(),
            days: 0,
        };
        let existing = vec![
            header(
                "deploys",
                "How we deploy: Fly.io apps, staging first",
                MemoryType::Project,
            ),
            header("tabs", "Prefers tabs over spaces", MemoryType::User),
        ];
        let statement = &statements("remember that we deploy with Fly.io, never Heroku")[0];
        assert_eq!(
            close_memory(statement, &existing).map(|h| h.file.as_str()),
            Some("deploys.md")
        );
        let other = &statements("remember that the CI runs on Buildkite")[0];
        assert!(close_memory(other, &existing).is_none());
    }
}
