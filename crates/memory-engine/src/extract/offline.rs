//! The offline extractor: no model, only what the user said in so many words. It recognises
//! explicit statements in the user's own prompts —
//! - "remember that …" / "remember: …" / "please remember …" → a `project` memory (a `user` one
//!   when it is about the speaker),
//! - corrections: sentences that begin "don't …", "do not …", "never …", "always …", "stop …ing"
//!   → a `feedback` memory,
//! - "I'm a … engineer / developer / …", "I work on …" → a `user` memory —
//!
//! and nothing else (it cannot judge what is worth keeping, so it keeps only what the user asked
//! to be kept or stated as a standing rule). A statement close to an existing memory of the same
//! type is merged into it (appended to its body) instead of becoming a near-duplicate.

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

/// Statements in `prompt` (one user message's text).
pub fn statements(prompt: &str) -> Vec<Statement> {
    let mut found = Vec::new();
    for sentence in sentences(prompt) {
        if let Some(statement) = classify(&sentence) {
            if !found.iter().any(|f: &Statement| f.text == statement.text) {
                found.push(statement);
            }
        }
    }
    found
}

/// Splits on sentence ends and line breaks; code blocks and quoted lines are not prose.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || trimmed.starts_with('>') || trimmed.starts_with('<') {
            continue;
        }
        let mut current = String::new();
        let chars: Vec<char> = trimmed.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            current.push(c);
            let ends = matches!(c, '.' | '!' | '?' | ';')
                && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
            if ends {
                push_sentence(&mut out, &current);
                current.clear();
            }
        }
        push_sentence(&mut out, &current);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, text: &str) {
    let text = text
        .trim()
        .trim_start_matches(['-', '*', ' '])
        .trim_end_matches(['.', '!', ';', ' '])
        .trim();
    if !text.is_empty() {
        out.push(text.to_owned());
    }
}

fn classify(sentence: &str) -> Option<Statement> {
    let lower = sentence.to_lowercase();
    // "Please, remember that …", "Remember: …", "can you remember that …"
    if let Some(at) = lower.find("remember") {
        let rest = sentence[at + "remember".len()..]
            .trim_start_matches([':', ',', ' '])
            .trim();
        let rest = strip_prefix_ci(rest, "that ").unwrap_or(rest).trim();
        let before = &lower[..at];
        let asked = before.trim().is_empty()
            || [
                "please",
                "can you",
                "could you",
                "also",
                "and",
                "pls",
                "note:",
                "ok",
            ]
            .iter()
            .any(|w| before.trim_end_matches([',', ' ']).ends_with(w));
        if asked && rest.split_whitespace().count() >= 2 {
            let about_me = starts_with_any(&rest.to_lowercase(), &["i ", "i'm ", "i am ", "my "]);
            let memory_type = if about_me {
                MemoryType::User
            } else {
                MemoryType::Project
            };
            return Some(statement(memory_type, capitalize(rest)));
        }
    }
    const CORRECTIONS: &[&str] = &["don't ", "dont ", "do not ", "never ", "always ", "stop "];
    let lead = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let lead = strip_prefix_ci(lead, "please ").unwrap_or(lead);
    if starts_with_any(lead, CORRECTIONS) {
        let is_stop = lead.starts_with("stop ");
        let second = lead.split_whitespace().nth(1).unwrap_or("");
        // "stop …ing" only: "stop here" is not a rule.
        if (!is_stop || second.ends_with("ing")) && lead.split_whitespace().count() >= 3 {
            return Some(statement(MemoryType::Feedback, capitalize(sentence)));
        }
    }
    const ROLES: &[&str] = &[
        "engineer",
        "developer",
        "designer",
        "scientist",
        "researcher",
        "manager",
        "architect",
        "student",
        "analyst",
        "programmer",
        "founder",
        "maintainer",
        "sre",
        "admin",
        "lead",
    ];
    let about_role = starts_with_any(&lower, &["i'm a ", "i am a ", "i'm an ", "i am an "])
        && lower.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            ROLES.contains(&w)
        });
    if about_role || starts_with_any(&lower, &["i work on ", "i work at ", "i maintain "]) {
        return Some(statement(MemoryType::User, capitalize(sentence)));
    }
    None
}

fn statement(memory_type: MemoryType, text: String) -> Statement {
    let text = crate::llm::clip(&text, 300);
    Statement {
        name: name_for(&text),
        memory_type,
        text,
    }
}

fn starts_with_any(text: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| text.starts_with(p))
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn capitalize(text: &str) -> String {
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
