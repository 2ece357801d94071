//! Redaction on request: every secret the rules find in a memory dir (topic files, indexes, logs,
//! team memory) replaced by `[REDACTED:<rule>]`, proposed as a change set the user reviews file by
//! file — never written on its own. Only the secret goes (a rule's capture group), so
//! `DB_PASSWORD=…` keeps its name. Transcripts are never touched: they are Claude Code's record.

use std::path::Path;

use crate::changeset::ChangeSet;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::staging::{ChangeSource, StagedChangeSet};

impl Engine {
    /// Stages the redaction of every secret in the memory dir `root` (only in the files under
    /// `only_under`, a relative folder such as `team`, when given); `None` when there is none.
    /// `project` names the set. Files that are not UTF-8 text are left out (their findings still
    /// show in `engram secrets scan`).
    pub fn stage_redaction(
        &self,
        root: &Path,
        project: &str,
        only_under: Option<&str>,
    ) -> Result<Option<StagedChangeSet>> {
        if !root.is_dir() {
            return Err(Error::NotFound(root.to_path_buf()));
        }
        let mut set = ChangeSet::new(root);
        let mut secrets = 0;
        let folder = only_under.map(|dir| format!("{}/", dir.trim_end_matches('/')));
        for file in crate::disk::memory_files(root)? {
            if folder
                .as_deref()
                .is_some_and(|folder| !file.starts_with(folder))
            {
                continue;
            }
            let Ok(text) = crate::disk::read_text(&root.join(&file)) else {
                continue;
            };
            let (redacted, replaced) = crate::secrets::redact(&text);
            if replaced.is_empty() {
                continue;
            }
            secrets += replaced.len();
            let mut rules: Vec<&str> = replaced.iter().map(|m| m.rule).collect();
            rules.sort_unstable();
            rules.dedup();
            let lines: Vec<String> = replaced.iter().map(|m| m.line.to_string()).collect();
            let reason = format!(
                "secrets replaced by [REDACTED:…] on line {} ({})",
                lines.join(", "),
                rules.join(", ")
            );
            set.stage_write(&file, redacted, &reason)?;
        }
        if set.is_empty() {
            return Ok(None);
        }
        let summary = format!(
            "redaction of {secrets} secret{} in {} file{}",
            if secrets == 1 { "" } else { "s" },
            set.len(),
            if set.len() == 1 { "" } else { "s" }
        );
        Ok(Some(self.stage_change_set(
            &set,
            ChangeSource::Redaction,
            project,
            &summary,
            None,
        )?))
    }
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

        let staged = engine
            .stage_redaction(&root, "p", None)
            .expect("stage")
            .expect("a set");
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
            .is_none());
        assert!(engine
            .stage_redaction(&root, "p", None)
            .expect("all")
            .is_some());
    }
}
