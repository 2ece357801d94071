//! No secret is ever written into memory by an extraction (issue #20): before an extraction's
//! change set is staged, every secret it would add — found by the secret rules (gitleaks', as
//! `engram secrets scan` finds them), or a credential given in plain words ("the staging
//! password is Tr0ub4dor&3", which no gitleaks rule matches) — is replaced by
//! `[REDACTED:<rule>]`, as `engram secrets redact` does, in the name, the description, the body
//! and the index line alike.
//!
//! Redacted rather than dropped: the statement around a secret usually says something worth
//! keeping (what the token is for, where the real one lives), the reviewer sees exactly what was
//! taken out, and the secret itself never lands. A file *name* cannot be redacted (its index line
//! links to it, and brackets make no file name), so a file whose name carries a secret is refused
//! whole, with its index line. The offline extractor redacts each statement before it names a
//! file after it, so its memories keep theirs; a model is shown the conversation redacted.
//!
//! Only what the change adds is touched: a secret the file held before the extraction is the
//! `secret` lint's business, not this run's. What was redacted is reported per file and rule
//! (the run's outcome, `runs.jsonl`, the CLI's stderr) and in the staged set's reasons.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Serialize;

use super::RefusedFile;
use crate::changeset::ChangeSet;
use crate::error::Result;

/// A secret an extraction was about to write, replaced by `[REDACTED:<rule>]` in `file`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RedactedSecret {
    pub file: String,
    /// The rule that found it (a gitleaks rule id, or `credential-in-prose`).
    pub rule: String,
    /// How many times it was replaced in the file.
    pub count: usize,
}

/// The rule name of a credential given in plain words.
const PROSE_RULE: &str = "credential-in-prose";

/// `text` with every secret `before` does not hold replaced by `[REDACTED:<rule>]`, and the
/// text of each secret replaced (for the caller to look for it elsewhere, never to show).
fn redact_new(before: Option<&str>, text: &str) -> (String, Vec<String>) {
    let held = |secret: &str| before.is_some_and(|b| b.contains(secret));
    let mut secrets = Vec::new();
    let (text, _) = crate::secrets::redact_where(text, |secret| {
        let new = !held(secret);
        if new {
            secrets.push(secret.to_owned());
        }
        new
    });
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in prose_credentials(&text) {
        if held(&text[range.clone()]) {
            continue;
        }
        secrets.push(text[range.clone()].to_owned());
        out.push_str(&text[at..range.start]);
        out.push_str(&format!("[REDACTED:{PROSE_RULE}]"));
        at = range.end;
    }
    out.push_str(&text[at..]);
    (out, secrets)
}

/// `text` with its secrets redacted: a statement the offline extractor names a memory after (so
/// that no file name carries one), the conversation a model is shown (it cannot write what it
/// never saw).
pub(super) fn redact_text(text: &str) -> String {
    redact_new(None, text).0
}

/// Credentials given in plain words: a credential's name, "is"/"was"/"="/":" within four words,
/// then a value that is no word — at least six characters, letters with digits or symbols, no
/// path or link ("the staging password is Tr0ub4dor&3", "db password: hunter22"). "The API key
/// is stored in Vault" or "the token is 40 characters long" name none.
fn prose_credentials(text: &str) -> Vec<Range<usize>> {
    const NAMES: &[&str] = &[
        "password",
        "passphrase",
        "passwd",
        "pwd",
        "secret",
        "token",
        "key",
        "apikey",
        "credential",
        "credentials",
    ];
    let tokens: Vec<(usize, &str)> = text
        .split_whitespace()
        .map(|word| (word.as_ptr() as usize - text.as_ptr() as usize, word))
        .collect();
    let bare = |word: &str| {
        word.trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase()
    };
    let mut found = Vec::new();
    for (i, (_, word)) in tokens.iter().enumerate() {
        if !NAMES.contains(&bare(word).as_str()) {
            continue;
        }
        let value_at = if word.ends_with(':') || word.ends_with('=') {
            Some(i + 1)
        } else {
            tokens[i + 1..]
                .iter()
                .take(4)
                .position(|(_, w)| {
                    matches!(bare(w).as_str(), "is" | "was" | "are") || *w == "=" || *w == ":"
                })
                .map(|p| i + 1 + p + 1)
        };
        let Some(&(offset, value)) = value_at.and_then(|at| tokens.get(at)) else {
            continue;
        };
        let trimmed = value
            .trim_start_matches(['"', '\'', '`', '('])
            .trim_end_matches(['"', '\'', '`', ')', '.', ',', ';', '!', '?']);
        let start = offset + value.find(trimmed).unwrap_or(0);
        if looks_like_a_secret(trimmed) {
            found.push(start..start + trimmed.len());
        }
    }
    found.dedup();
    found
}

fn looks_like_a_secret(value: &str) -> bool {
    value.chars().count() >= 6
        && !value.contains('/')
        && !value.starts_with('[')
        && value.chars().any(char::is_alphabetic)
        && value
            .chars()
            .any(|c| c.is_ascii_digit() || "!@#$%^&*+=~?".contains(c))
}

/// Redacts every secret the changes in `set` add (see the module contract); returns the files
/// refused because their name carries one.
pub(super) fn redact_change_set(set: &mut ChangeSet) -> Result<Vec<RefusedFile>> {
    let is_index = |file: &str| crate::index::is_index_file(file);
    let written = |set: &ChangeSet, index: bool| -> Vec<String> {
        set.changes
            .iter()
            .filter(|c| c.after.is_some() && is_index(&c.file) == index)
            .map(|c| c.file.clone())
            .collect()
    };
    let mut refused = Vec::new();
    // Topic files first: refusing one drops its index line, which must still name it to be found.
    for file in written(set, false).into_iter().chain(written(set, true)) {
        let Some(change) = set.changes.iter().find(|c| c.file == file) else {
            continue; // dropped with a refused file
        };
        let (Some(after), before) = (change.after.clone(), change.before.clone()) else {
            continue;
        };
        let (redacted, secrets) = redact_new(before.as_deref(), &after);
        if secrets.is_empty() {
            continue;
        }
        if !is_index(&file) {
            if let Some(shown) = name_without_secrets(&file, &secrets) {
                refused.push(RefusedFile {
                    reason: format!(
                        "its file name carries a secret ({shown}); a file name cannot be redacted"
                    ),
                    file: shown,
                });
                super::drop_file(set, &file)?;
                continue;
            }
        }
        let reason = change.reason.clone();
        set.stage_write(&file, redacted, &reason)?;
    }
    Ok(refused)
}

/// `file` with the secrets it carries replaced, when it carries any: as the rules find them in
/// the name itself, or as one of `secrets` (from its content) spelled in any case — a name made
/// from a statement is lowercased, and so is the secret in it.
fn name_without_secrets(file: &str, secrets: &[String]) -> Option<String> {
    let (mut shown, found) = crate::secrets::redact(file);
    let mut carried = !found.is_empty();
    for secret in secrets {
        // ASCII case only: it keeps byte offsets, and secrets are ASCII.
        let lower = shown.to_ascii_lowercase();
        let wanted = secret.to_ascii_lowercase();
        if let Some(at) = lower.find(&wanted).filter(|_| wanted.len() >= 6) {
            if shown.is_char_boundary(at) && shown.is_char_boundary(at + wanted.len()) {
                shown.replace_range(at..at + wanted.len(), "[REDACTED]");
                carried = true;
            }
        }
    }
    carried.then_some(shown)
}

/// What `set` redacted, per file and rule — the `[REDACTED:<rule>]` markers each change adds —
/// noted in each change's reason.
pub(super) fn redactions(set: &mut ChangeSet) -> Vec<RedactedSecret> {
    let mut all = Vec::new();
    for change in &mut set.changes {
        let Some(after) = change.after.as_deref() else {
            continue;
        };
        let before = markers(change.before.as_deref().unwrap_or(""));
        let mut added: Vec<(String, usize)> = markers(after)
            .into_iter()
            .filter_map(|(rule, count)| {
                let new = count.saturating_sub(before.get(&rule).copied().unwrap_or(0));
                (new > 0).then_some((rule, new))
            })
            .collect();
        if added.is_empty() {
            continue;
        }
        added.sort();
        let rules: Vec<&str> = added.iter().map(|(rule, _)| rule.as_str()).collect();
        change.reason.push_str(&format!(
            "; secret redacted, never saved ({})",
            rules.join(", ")
        ));
        all.extend(added.into_iter().map(|(rule, count)| RedactedSecret {
            file: change.file.clone(),
            rule,
            count,
        }));
    }
    all
}

/// How many `[REDACTED:<rule>]` markers `text` holds, per rule.
fn markers(text: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (at, _) in text.match_indices("[REDACTED:") {
        let rest = &text[at + "[REDACTED:".len()..];
        if let Some(end) = rest.find(']') {
            *counts.entry(rest[..end].to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_XyorFAhaggUifQBHAGr0iRdUcM9c9njQdyk1";

    #[test]
    fn only_the_secrets_a_change_adds_are_redacted() {
        let before = format!("old: {TOKEN}\n");
        let key = "AKIA4HCMINVYHRIH7UEE";
        let after = format!("old: {TOKEN}\nnew: {key}\n");
        let (redacted, secrets) = redact_new(Some(&before), &after);
        assert_eq!(
            redacted,
            format!("old: {TOKEN}\nnew: [REDACTED:aws-access-token]\n")
        );
        assert_eq!(secrets, [key]);
    }

    #[test]
    fn credentials_in_plain_words_are_found_and_words_are_not() {
        for (text, value) in [
            ("the staging password is Tr0ub4dor&3.", "Tr0ub4dor&3"),
            ("db password: hunter22", "hunter22"),
            ("Our deploy token for the mirror is 'x9Kq2mWz'", "x9Kq2mWz"),
        ] {
            let found: Vec<&str> = prose_credentials(text)
                .into_iter()
                .map(|r| &text[r])
                .collect();
            assert_eq!(found, [value], "{text}");
        }
        for text in [
            "The API key is stored in Vault",
            "the token is 40 characters long",
            "the password is in 1Password/Engineering",
            "a key is never logged",
        ] {
            assert!(prose_credentials(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_name_carries_a_secret_in_any_case() {
        let lower = "akia4hcminvyhrih7uee";
        assert_eq!(
            name_without_secrets(
                &format!("project_our_aws_key_is_{lower}.md"),
                &["AKIA4HCMINVYHRIH7UEE".to_owned()]
            )
            .as_deref(),
            Some("project_our_aws_key_is_[REDACTED].md")
        );
        assert!(name_without_secrets("project_deploys.md", &[TOKEN.to_owned()]).is_none());
    }
}
