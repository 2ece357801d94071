//! Redaction on request: every secret the rules find in a memory dir (topic files, indexes, logs,
//! team memory) replaced by `[REDACTED:<rule>]`, proposed as a change set the user reviews file by
//! file — never written on its own. Only the secret goes (a rule's capture group), so
//! `DB_PASSWORD=…` keeps its name. Transcripts are never touched: they are Claude Code's record.
//!
//! A file that is not UTF-8 text (or cannot be read) is not redacted but named, with its secrets'
//! lines: a change set carries text, and the two other ways out would not keep the person safe —
//! writing the file's bytes without a reviewable diff would land a change unseen, and converting
//! it to text would corrupt every byte that is not UTF-8. Named, it is left exactly as it is for
//! the person to edit, and the caller can say the redaction is incomplete (the CLI exits
//! non-zero) instead of "nothing to redact" while `secrets scan` still finds it.

use std::path::Path;

use serde::Serialize;

use crate::changeset::ChangeSet;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::staging::{ChangeSource, StagedChangeSet};

/// What [`Engine::stage_redaction`] proposed, and what it could not.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Redaction {
    /// The change set to review; `None` when there was nothing it could carry.
    pub staged: Option<StagedChangeSet>,
    /// Files that hold secrets (or could not be read to tell) and were left untouched: see the
    /// module docs.
    pub not_redacted: Vec<NotRedacted>,
}

/// A file [`Engine::stage_redaction`] left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRedacted {
    /// Relative to the memory dir.
    pub file: String,
    pub reason: String,
}

impl Engine {
    /// Stages the redaction of every secret in the memory dir `root` (only in the files under
    /// `only_under`, a relative folder such as `team`, when given); `project` names the set.
    /// Files holding secrets that a change set cannot carry are named instead (module docs).
    pub fn stage_redaction(
        &self,
        root: &Path,
        project: &str,
        only_under: Option<&str>,
    ) -> Result<Redaction> {
        if !root.is_dir() {
            return Err(Error::NotFound(root.to_path_buf()));
        }
        let mut set = ChangeSet::new(root);
        let mut not_redacted = Vec::new();
        let mut secrets = 0;
        let folder = only_under.map(|dir| format!("{}/", dir.trim_end_matches('/')));
        for file in crate::disk::memory_files(root)? {
            if folder
                .as_deref()
                .is_some_and(|folder| !file.starts_with(folder))
            {
                continue;
            }
            let path = root.join(&file);
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) => {
                    not_redacted.push(NotRedacted {
                        file,
                        reason: format!("cannot be read ({e}): any secret in it is still there"),
                    });
                    continue;
                }
            };
            let text = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    let found = crate::secrets::redactable_secrets(e.as_bytes());
                    if !found.is_empty() {
                        not_redacted.push(NotRedacted {
                            file,
                            reason: format!(
                                "not UTF-8 text (byte {}), so no change set can carry its \
                                 redaction: its secrets on line {} are still there; edit it by \
                                 hand",
                                e.utf8_error().valid_up_to(),
                                lines_of(&found)
                            ),
                        });
                    }
                    continue;
                }
            };
            let (redacted, replaced) = crate::secrets::redact(&text);
            if replaced.is_empty() {
                continue;
            }
            secrets += replaced.len();
            let mut rules: Vec<&str> = replaced.iter().map(|m| m.rule).collect();
            rules.sort_unstable();
            rules.dedup();
            let reason = format!(
                "secrets replaced by [REDACTED:…] on line {} ({})",
                lines_of(&replaced),
                rules.join(", ")
            );
            set.stage_write(&file, redacted, &reason)?;
        }
        if set.is_empty() {
            return Ok(Redaction {
                staged: None,
                not_redacted,
            });
        }
        let summary = format!(
            "redaction of {secrets} secret{} in {} file{}",
            if secrets == 1 { "" } else { "s" },
            set.len(),
            if set.len() == 1 { "" } else { "s" }
        );
        let staged =
            self.stage_change_set(&set, ChangeSource::Redaction, project, &summary, None)?;
        Ok(Redaction {
            staged: Some(staged),
            not_redacted,
        })
    }
}

/// The lines of `matches`, each once: `3, 7`.
fn lines_of(matches: &[crate::secrets::SecretMatch]) -> String {
    let mut lines: Vec<usize> = matches.iter().map(|m| m.line).collect();
    lines.dedup();
    lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;
    use crate::environment::Environment;
    use crate::staging::ChangeSource;

    #[test]
    fn secrets_are_proposed_redacted_and_land_only_when_accepted() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let engine =
            Engine::builder(Environment::empty().with("HOME", tmp.path().to_string_lossy()))
                .claude_home(tmp.path().join(".claude"))
                .engram_home(tmp.path().join("engram"))
                .build();
        let root = tmp.path().join("mem");
        std::fs::create_dir_all(root.join("team")).expect("dirs");
        let token = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
        let ci = format!(
            "---\nname: CI\ndescription: the CI\ntype: reference\n---\nThe mirror uses {token}.\n"
        );
        std::fs::write(root.join("team/ci.md"), &ci).expect("ci");
        std::fs::write(root.join("MEMORY.md"), "- [CI](team/ci.md) — the CI\n").expect("index");
        std::fs::write(
            root.join("clean.md"),
            "---\nname: Clean\n---\nnothing here\n",
        )
        .expect("clean");

        let redaction = engine.stage_redaction(&root, "p", None).expect("stage");
        assert_eq!(redaction.not_redacted, []);
        let staged = redaction.staged.expect("a set");
        assert_eq!(staged.source, ChangeSource::Redaction);
        assert_eq!(staged.summary, "redaction of 1 secret in 1 file");
        let files: Vec<&str> = staged
            .files
            .iter()
            .map(|f| f.change.file.as_str())
            .collect();
        assert_eq!(files, ["team/ci.md"]);
        assert_eq!(
            std::fs::read_to_string(root.join("team/ci.md")).expect("read"),
            ci,
            "nothing lands before review"
        );
        engine
            .apply_staged(&staged.id, &["team/ci.md".to_string()], false, Some(&root))
            .expect("apply");
        let after = std::fs::read_to_string(root.join("team/ci.md")).expect("read");
        assert!(
            after.ends_with("The mirror uses [REDACTED:github-pat].\n"),
            "{after}"
        );
        assert!(engine
            .stage_redaction(&root, "p", None)
            .expect("again")
            .staged
            .is_none());
        // Limited to a folder, secrets elsewhere are left for another time.
        std::fs::write(
            root.join("other.md"),
            format!("---\nname: O\n---\n{token}\n"),
        )
        .expect("o");
        assert!(engine
            .stage_redaction(&root, "p", Some("team"))
            .expect("team")
            .staged
            .is_none());
        assert!(engine
            .stage_redaction(&root, "p", None)
            .expect("all")
            .staged
            .is_some());

        // Not UTF-8: named with its secret's line, its bytes left as they are.
        let mut latin1 = b"---\nname: L\n---\nCaf\xe9\n".to_vec();
        latin1.extend_from_slice(format!("{token}\n").as_bytes());
        std::fs::write(root.join("latin1.md"), &latin1).expect("latin1");
        let redaction = engine.stage_redaction(&root, "p", None).expect("stage");
        assert_eq!(
            redaction.not_redacted.len(),
            1,
            "{:?}",
            redaction.not_redacted
        );
        let named = &redaction.not_redacted[0];
        assert_eq!(named.file, "latin1.md");
        assert!(
            named.reason.contains("not UTF-8") && named.reason.contains("line 5"),
            "{}",
            named.reason
        );
        assert!(redaction.staged.is_some(), "other.md is still proposed");
        assert_eq!(std::fs::read(root.join("latin1.md")).expect("read"), latin1);
    }
}
