//! A JSON file of Claude Code's that Engram edits in place: the user's `settings.json` (the
//! hooks), `.claude.json` and a project's `.mcp.json` (the MCP server entry).
//!
//! Contract:
//! - Edits are splices planned by the caller ([`crate::json_edit`]); this module reads, parses,
//!   backs up and writes. A file that is not one JSON object, or that holds a key twice where
//!   Engram edits (Claude Code keeps only the last of two equal keys, so an edit of the first
//!   would be ignored), is refused with its path and line, never rewritten.
//! - Before every change the file as it was is copied into Engram's data dir
//!   (`<engram home>/backups/<kind>/<file name>.<UTC timestamp>`), never next to the file: the
//!   Claude config dir is Claude Code's, often a dotfiles repository.
//! - Writes are atomic and go through a symlink to its target (dotfile managers link these files
//!   into a repository); a read-only file is refused, not replaced; an existing file keeps its
//!   mode, and a file created here is readable by its owner only (`.claude.json` holds account
//!   details).
//! - Two ways to write: [`JsonFile::write_unchanged_since`] refuses with [`Error::Conflict`] a
//!   file that changed since the edit was planned (`settings.json`, which people edit by hand);
//!   [`JsonFile::write_merged`] plans the edit again on whatever the disk holds at the moment of
//!   the write, and writes again if someone wrote in between (`.claude.json`, which Claude Code
//!   rewrites at every start), so a newer version is never clobbered.

use std::fs;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::disk;
use crate::error::{Error, Result};
use crate::json_edit::{self, Node};

/// Rounds of [`JsonFile::write_merged`] before a file that keeps changing is a conflict.
const MERGE_ATTEMPTS: usize = 20;

/// One JSON file and where its backups go.
#[derive(Debug, Clone)]
pub struct JsonFile {
    pub path: PathBuf,
    backup_dir: PathBuf,
}

/// What [`JsonFile::write_merged`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedWrite {
    /// What the file held when the write landed (`None`: there was no file).
    pub before: Option<String>,
    pub after: String,
    /// The copy of `before` in Engram's data dir.
    pub backup: Option<PathBuf>,
}

impl JsonFile {
    /// `path`, backed up into `backup_dir`.
    pub fn new(path: impl Into<PathBuf>, backup_dir: impl Into<PathBuf>) -> JsonFile {
        JsonFile {
            path: path.into(),
            backup_dir: backup_dir.into(),
        }
    }

    /// The file's text; `None` when there is no file.
    pub fn read(&self) -> Result<Option<String>> {
        match disk::read_text(&self.path) {
            Ok(text) => Ok(Some(text)),
            Err(Error::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Parses `text` as one JSON object with its spans. A key that appears twice at the top
    /// level, or inside one of the top-level objects named in `nested`, is refused.
    pub fn parse(&self, text: &str, nested: &[&str]) -> Result<Node> {
        let root = json_edit::parse(text).map_err(|message| {
            let line = message
                .strip_prefix("line ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok());
            let message = message
                .split_once(": ")
                .map_or(message.clone(), |(_, m)| m.to_owned());
            Error::parse(&self.path, line, message)
        })?;
        if root.members().is_none() {
            return Err(Error::parse(&self.path, None, "not a JSON object"));
        }
        let inner = nested
            .iter()
            .filter_map(|key| root.member(key).map(|m| &m.value));
        for object in std::iter::once(&root).chain(inner) {
            let mut seen = std::collections::HashSet::new();
            for member in object.members().unwrap_or_default() {
                if !seen.insert(member.key.as_str()) {
                    return Err(Error::parse(
                        &self.path,
                        None,
                        format!(
                            "the key \"{}\" appears twice; Claude Code reads only the last one, \
                             so merge them into one first",
                            member.key
                        ),
                    ));
                }
            }
        }
        Ok(root)
    }

    /// The error for a value of the wrong kind at `what` (`hooks`, `mcpServers`).
    pub fn type_error(&self, what: &str) -> Error {
        Error::parse(
            &self.path,
            None,
            format!("`{what}` is not what Claude Code expects there; not touching the file"),
        )
    }

    fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file.json".to_owned())
    }

    /// Engram's backups of this file, newest first.
    pub fn backups(&self) -> Vec<PathBuf> {
        let prefix = format!("{}.", self.file_name());
        let mut backups: Vec<PathBuf> = fs::read_dir(&self.backup_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
            })
            .collect();
        backups.sort();
        backups.reverse();
        backups
    }

    /// The text of the newest backup.
    pub fn latest_backup(&self) -> Option<String> {
        let newest = self.backups().into_iter().next()?;
        disk::read_text(&newest).ok()
    }

    fn backup(&self, text: &str, now: SystemTime) -> Result<PathBuf> {
        let stamp = chrono::DateTime::<chrono::Utc>::from(now)
            .format("%Y%m%dT%H%M%S%.3fZ")
            .to_string();
        let name = self.file_name();
        let mut path = self.backup_dir.join(format!("{name}.{stamp}"));
        let mut n = 1;
        while path.exists() {
            path = self.backup_dir.join(format!("{name}.{stamp}-{n}"));
            n += 1;
        }
        disk::atomic_write(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Where a write lands: the file a symlink points at, else the path itself. A read-only
    /// file is refused: a rename would replace what its owner made read-only.
    fn target(&self) -> Result<PathBuf> {
        let target =
            crate::platform::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        if fs::metadata(&target).is_ok_and(|m| m.permissions().readonly()) {
            return Err(Error::InvalidInput(format!(
                "{}: the file is read-only; make it writable to let Engram change it",
                target.display()
            )));
        }
        Ok(target)
    }

    /// Writes `updated` over the file, which held `original` when the edit was planned: refuses
    /// with [`Error::Conflict`] if it changed since, backs `original` up first. Returns the
    /// backup.
    pub fn write_unchanged_since(
        &self,
        original: Option<&str>,
        updated: &str,
        now: SystemTime,
    ) -> Result<Option<PathBuf>> {
        if self.read()?.as_deref() != original {
            return Err(Error::Conflict(self.path.clone()));
        }
        let backup = original.map(|text| self.backup(text, now)).transpose()?;
        let target = self.target()?;
        disk::PreparedWrite::new(&target, updated.as_bytes())?
            .owner_only_if_new()?
            .commit()?;
        Ok(backup)
    }

    /// Writes the edit `plan` makes of the file's text (`None`: the file as it is needs no
    /// change), planned on what the disk holds at the moment of the write: the new text is
    /// swapped in atomically and what it replaced comes back ([`disk::PreparedWrite::swap_in`]);
    /// if that is not what the edit was planned on — someone wrote in between — the edit is
    /// planned again on their text and written again. `Ok(None)`: nothing to change.
    pub fn write_merged(
        &self,
        mut plan: impl FnMut(Option<&str>) -> Result<Option<String>>,
        now: SystemTime,
    ) -> Result<Option<MergedWrite>> {
        let mut base = self.read()?;
        // What the disk holds if nobody else writes: the base at first, then our last write.
        let mut expected = base.clone();
        let mut backed_up: Option<(String, PathBuf)> = None;
        for round in 0..MERGE_ATTEMPTS {
            let updated = match plan(base.as_deref())? {
                Some(updated) => updated,
                None if round == 0 => return Ok(None),
                // Their newer text already holds the edit: it is what must stay.
                None => base.clone().unwrap_or_default(),
            };
            if let Some(text) = &base {
                if backed_up.as_ref().is_none_or(|(saved, _)| saved != text) {
                    backed_up = Some((text.clone(), self.backup(text, now)?));
                }
            }
            let target = self.target()?;
            let replaced = disk::PreparedWrite::new(&target, updated.as_bytes())?
                .owner_only_if_new()?
                .swap_in()?;
            if replaced == expected {
                return Ok(Some(MergedWrite {
                    before: base,
                    after: updated,
                    backup: backed_up.map(|(_, path)| path),
                }));
            }
            base = replaced;
            expected = Some(updated);
        }
        Err(Error::Conflict(self.path.clone()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn file(dir: &Path) -> JsonFile {
        JsonFile::new(dir.join(".claude.json"), dir.join("backups"))
    }

    fn add_key(text: Option<&str>) -> Result<Option<String>> {
        let text = text.unwrap_or("{}");
        if text.contains("\"engram\"") {
            return Ok(None);
        }
        Ok(Some(text.replacen('{', "{\"engram\":1,", 1)))
    }

    #[test]
    fn a_merged_write_plans_on_the_disk_and_backs_up_what_it_replaced() {
        let tmp = tempfile::tempdir().expect("tmp");
        let json = file(tmp.path());
        fs::write(&json.path, "{\"a\":1}").expect("seed");
        let written = json
            .write_merged(add_key, SystemTime::now())
            .expect("write")
            .expect("changed");
        assert_eq!(written.before.as_deref(), Some("{\"a\":1}"));
        assert_eq!(
            fs::read_to_string(&json.path).expect("read"),
            "{\"engram\":1,\"a\":1}"
        );
        let backup = written.backup.expect("backup");
        assert_eq!(fs::read_to_string(&backup).expect("backup"), "{\"a\":1}");
        assert_eq!(json.backups(), vec![backup]);
        assert_eq!(
            json.write_merged(add_key, SystemTime::now())
                .expect("again"),
            None,
            "nothing to change the second time"
        );
    }

    #[test]
    fn a_write_between_plan_and_swap_is_merged_not_clobbered() {
        let tmp = tempfile::tempdir().expect("tmp");
        let json = file(tmp.path());
        fs::write(&json.path, "{\"a\":1}").expect("seed");
        let path = json.path.clone();
        let mut rounds = 0;
        // Another program writes right after the first plan, before the swap.
        let written = json
            .write_merged(
                |text| {
                    rounds += 1;
                    if rounds == 1 {
                        fs::write(&path, "{\"a\":1,\"numStartups\":2}").expect("theirs");
                    }
                    add_key(text)
                },
                SystemTime::now(),
            )
            .expect("write")
            .expect("changed");
        assert_eq!(rounds, 2, "planned again on their version");
        assert_eq!(
            fs::read_to_string(&json.path).expect("read"),
            "{\"engram\":1,\"a\":1,\"numStartups\":2}",
            "their key and ours both stand"
        );
        assert_eq!(
            written.before.as_deref(),
            Some("{\"a\":1,\"numStartups\":2}")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_private_and_an_existing_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tmp");
        let json = file(tmp.path());
        json.write_merged(add_key, SystemTime::now())
            .expect("write");
        let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&json.path), 0o600);
        let other = JsonFile::new(tmp.path().join(".mcp.json"), tmp.path().join("b"));
        fs::write(&other.path, "{}").expect("seed");
        fs::set_permissions(&other.path, fs::Permissions::from_mode(0o644)).expect("chmod");
        other
            .write_merged(add_key, SystemTime::now())
            .expect("write");
        assert_eq!(mode(&other.path), 0o644);
    }

    #[test]
    fn duplicate_keys_and_non_objects_are_refused_with_the_file_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        let json = file(tmp.path());
        for (text, nested) in [
            ("[1]", &[][..]),
            ("{\"a\":1,\"a\":2}", &[][..]),
            ("{\"m\":{\"x\":1,\"x\":2}}", &["m"][..]),
            ("{\n\"a\": }", &[][..]),
        ] {
            let error = json.parse(text, nested).expect_err(text);
            assert!(
                error.to_string().contains(".claude.json"),
                "{text}: {error}"
            );
        }
        assert!(json.parse("{\"m\":{\"x\":1,\"x\":2}}", &[]).is_ok());
    }
}
