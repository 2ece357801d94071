//! History: every version of every memory file that Engram wrote or saw change, with who made it,
//! so the user can see and diff any change (reverting is an operation of the memory dir, through
//! a change set: `memdir::revert`). This module records and reads; [`store`] is the disk layout.
//!
//! Layout, under `<engram home>/history/` (never inside a memory dir — Claude Code scans every
//! `*.md` there):
//! ```text
//! history/
//!   lock                      advisory lock held while appending (CLI and app may run at once)
//!   counter                   the last version number issued (rebuilt from the logs if lost)
//!   blobs/ab/cdef…            contents, addressed by SHA-256 (identical contents stored once)
//!   packs/<hash>.pack         many contents recorded at once (a first open), in one file
//!   dirs/<name>-<hash>/log.jsonl   one JSON `Version` per line, append-only, oldest first
//! ```
//! A memory dir's folder is named after its last path components plus a hash of its resolved
//! absolute path, so two dirs never share a log and the name stays readable.
//!
//! Invariants: a log line is written only after its blob is on disk, and in one `write` under the
//! lock, so readers (who do not lock) see whole lines or a torn last line, which they skip. Version
//! ids (`v000001`, …) are unique across the whole store and increase in the order lines were
//! appended. A version identical to the latest one of its file is not recorded again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::diff::{line_counts, unified_diff};
use crate::disk::{
    self, check_file_key, content_hash, is_memory_file_key, memory_files, resolved_path,
};
use crate::engine::Engine;
use crate::error::{Error, Result};

mod store;

use store::{append_lines, format_version_number, parse_version_number, read_log, Store};

/// One recorded state of one memory file. `hash` is `None` for a deletion.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    /// Store-wide unique, increasing id: `v000123`.
    pub version: String,
    /// Relative to the memory dir, `/`-separated.
    pub file: String,
    pub memory_dir: PathBuf,
    pub actor: Actor,
    /// ISO 8601, UTC, milliseconds: `2026-11-22T08:38:52.863Z`.
    pub time: String,
    pub hash: Option<String>,
    /// `created`, `deleted`, `+3 −1 lines`, `reverted to v000012`, …
    pub summary: String,
    /// The staged change set (a dream, an extraction) this version applied, so a whole run can
    /// be found and undone as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub change_set: Option<String>,
}

impl Version {
    /// The numeric part of the id, for ordering (`v000123` → 123).
    fn number(&self) -> Option<u64> {
        parse_version_number(&self.version)
    }
}

/// A state of a file to record; see [`Engine::record_versions`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingVersion<'a> {
    pub file: &'a str,
    /// `None`: the file is gone.
    pub content: Option<&'a str>,
    pub actor: Actor,
    /// Replaces the computed summary (`created`, `+a −r lines`, `deleted`).
    pub summary: Option<&'a str>,
}

impl Engine {
    /// Records `content` (`None`: the file was deleted) as the newest version of `file` in
    /// `memory_dir`. Returns `None` without recording when it equals the latest recorded version
    /// (or is the deletion of a file history never saw).
    pub fn record_version(
        &self,
        memory_dir: &Path,
        file: &str,
        content: Option<&str>,
        actor: Actor,
    ) -> Result<Option<Version>> {
        let pending = [PendingVersion {
            file,
            content,
            actor,
            summary: None,
        }];
        Ok(self
            .record_versions(memory_dir, &pending)?
            .into_iter()
            .next()
            .flatten())
    }

    /// Records several versions under one lock and one log append; one result per entry, `None`
    /// where nothing changed since the latest version of that file.
    pub(crate) fn record_versions(
        &self,
        memory_dir: &Path,
        pending: &[PendingVersion<'_>],
    ) -> Result<Vec<Option<Version>>> {
        self.record_versions_of(memory_dir, pending, None)
    }

    /// [`Engine::record_versions`], each version naming the change set it applied.
    pub(crate) fn record_versions_of(
        &self,
        memory_dir: &Path,
        pending: &[PendingVersion<'_>],
        change_set: Option<&str>,
    ) -> Result<Vec<Option<Version>>> {
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        for entry in pending {
            check_file_key(memory_dir, entry.file)?;
        }
        let store = self.history_store();
        let memory_dir = resolved_path(memory_dir);
        let log_path = store.log_path(&memory_dir);
        let _lock = store.lock()?;

        let mut latest: HashMap<String, Option<String>> = HashMap::new();
        for version in read_log(&log_path)? {
            latest.insert(version.file, version.hash);
        }
        let time = iso_now(self);
        let mut next = store.last_number()?;
        let mut recorded = Vec::with_capacity(pending.len());
        let mut lines = String::new();
        // Contents to store, by hash: written together once the batch is known.
        let mut new_blobs: HashMap<String, &str> = HashMap::new();
        for entry in pending {
            let hash = entry.content.map(|c| content_hash(c.as_bytes()));
            let previous = latest.get(entry.file).cloned().flatten();
            let unchanged = match (&previous, &hash) {
                (previous, None) => previous.is_none(),
                (Some(previous), Some(hash)) => previous == hash,
                (None, Some(_)) => false,
            };
            if unchanged {
                recorded.push(None);
                continue;
            }
            let summary = match (entry.summary, &previous, entry.content) {
                (Some(summary), _, _) => summary.to_owned(),
                (None, _, None) => "deleted".to_owned(),
                (None, None, Some(_)) => "created".to_owned(),
                (None, Some(previous), Some(content)) => {
                    // The previous version may be earlier in this batch, its blob not written yet.
                    let old = match new_blobs.get(previous) {
                        Some(old) => (*old).to_owned(),
                        None => store.blob(previous)?,
                    };
                    let (added, removed) = line_counts(&old, content);
                    format!("+{added} \u{2212}{removed} lines")
                }
            };
            next += 1;
            let version = Version {
                version: format_version_number(next),
                file: entry.file.to_owned(),
                memory_dir: memory_dir.clone(),
                actor: entry.actor,
                time: time.clone(),
                hash: hash.clone(),
                summary,
                change_set: change_set.map(str::to_owned),
            };
            let line = serde_json::to_string(&version).map_err(|e| {
                Error::InvalidInput(format!("{}: cannot encode version: {e}", entry.file))
            })?;
            lines.push_str(&line);
            lines.push('\n');
            if let (Some(hash), Some(content)) = (&hash, entry.content) {
                new_blobs.insert(hash.clone(), content);
            }
            latest.insert(entry.file.to_owned(), hash);
            recorded.push(Some(version));
        }
        if !lines.is_empty() {
            // Blobs before their log lines; the counter before the lines too: a crash between
            // the two leaves a gap in the ids, never a reused id.
            store.put_blobs(&new_blobs)?;
            store.set_last_number(next)?;
            append_lines(&log_path, &lines)?;
        }
        Ok(recorded)
    }

    /// The versions of `memory_dir` (of one file if given), newest first.
    pub fn history(&self, memory_dir: &Path, file: Option<&str>) -> Result<Vec<Version>> {
        if let Some(file) = file {
            check_file_key(memory_dir, file)?;
        }
        let store = self.history_store();
        let mut versions = read_log(&store.log_path(&resolved_path(memory_dir)))?;
        if let Some(file) = file {
            versions.retain(|v| v.file == file);
        }
        versions.reverse();
        Ok(versions)
    }

    /// The version with this id, from any memory dir; [`Error::NotFound`] if there is none.
    pub fn find_version(&self, version_id: &str) -> Result<Version> {
        let not_found = || Error::NotFound(PathBuf::from(version_id));
        if parse_version_number(version_id).is_none() {
            return Err(not_found());
        }
        let store = self.history_store();
        for log in store.logs()? {
            if let Some(version) = read_log(&log)?
                .into_iter()
                .find(|v| v.version == version_id)
            {
                return Ok(version);
            }
        }
        Err(not_found())
    }

    /// The content of a version; `None` for a deletion.
    pub fn version_content(&self, version_id: &str) -> Result<Option<String>> {
        let version = self.find_version(version_id)?;
        version
            .hash
            .map(|hash| self.history_store().blob(&hash))
            .transpose()
    }

    /// The content of each of `version_ids` (`None` for a deletion), reading the logs once —
    /// what undoing a change set of hundreds of files needs; [`Engine::version_content`] reads
    /// them per call. An id that names no version is [`Error::NotFound`].
    pub fn version_contents(
        &self,
        version_ids: &[&str],
    ) -> Result<HashMap<String, Option<String>>> {
        let wanted: std::collections::HashSet<&str> = version_ids.iter().copied().collect();
        let store = self.history_store();
        let mut found: HashMap<String, Option<String>> = HashMap::new();
        for log in store.logs()? {
            if found.len() == wanted.len() {
                break;
            }
            for version in read_log(&log)? {
                if wanted.contains(version.version.as_str()) {
                    let content = version.hash.map(|hash| store.blob(&hash)).transpose()?;
                    found.insert(version.version, content);
                }
            }
        }
        match version_ids.iter().find(|id| !found.contains_key(**id)) {
            Some(missing) => Err(Error::NotFound(PathBuf::from(missing))),
            None => Ok(found),
        }
    }

    /// A unified diff from version `a` to version `b` (a deletion diffs as an empty file). The
    /// headers name the file and the version: `a/<file>\tv000012`.
    pub fn diff_versions(&self, a: &str, b: &str) -> Result<String> {
        let (old, new) = (self.find_version(a)?, self.find_version(b)?);
        let old_text = self.version_content(a)?.unwrap_or_default();
        let new_text = self.version_content(b)?.unwrap_or_default();
        Ok(unified_diff(
            &format!("a/{}\t{}", old.file, old.version),
            &format!("b/{}\t{}", new.file, new.version),
            &old_text,
            &new_text,
        ))
    }

    /// The content of the blob `hash` (a version's `hash`).
    pub(crate) fn blob_text(&self, hash: &str) -> Result<String> {
        self.history_store().blob(hash)
    }

    /// Brings history up to date with `memory_dir` as it is now: every memory file (`*.md` at any
    /// depth, outside dot-directories) whose content differs from its latest recorded version is
    /// recorded, and every recorded file that is gone is recorded as deleted, all as `external`.
    /// Run when Engram opens a dir, so the first edit has something to diff against and changes
    /// made while Engram was closed are not lost. A dir that does not exist records nothing.
    pub fn baseline_history(&self, memory_dir: &Path) -> Result<Vec<Version>> {
        Ok(self.baseline(memory_dir)?.0)
    }

    /// [`Engine::baseline_history`], also returning what [`Engine::recorded_memory_files`] would
    /// read back right after it, without reading the log a third time (the watcher needs both
    /// when a project opens).
    pub(crate) fn baseline(&self, memory_dir: &Path) -> Result<(Vec<Version>, RecordedFiles)> {
        if !memory_dir.is_dir() {
            return Ok((Vec::new(), RecordedFiles::new()));
        }
        let files = memory_files(memory_dir)?;
        let mut recorded = self.recorded_memory_files(memory_dir)?;
        // Read and hashed on several threads; only files whose content differs from what history
        // holds go on to be recorded (a reopen with nothing changed records nothing).
        let read = crate::scan::map_parallel(
            &files,
            || (),
            |(), file| {
                match disk::read_text(&memory_dir.join(file)) {
                    Ok(text) => {
                        let unchanged = recorded
                            .get(file)
                            .is_some_and(|hash| *hash == content_hash(text.as_bytes()));
                        Ok((!unchanged).then_some(text))
                    }
                    // A file that is not UTF-8 is not a memory Claude Code can read; leave it out.
                    Err(Error::Parse { .. } | Error::NotFound(_)) => Ok(None),
                    Err(e) => Err(e),
                }
            },
        );
        let mut contents = Vec::new();
        for (file, text) in files.iter().zip(read) {
            if let Some(text) = text? {
                contents.push((file.as_str(), Some(text)));
            }
        }
        // Only memory files are walked, so only recorded memory files can be gone: a recorded
        // non-memory file (a snapshot marker written through a change set) is left alone.
        let walked: std::collections::HashSet<&str> = files.iter().map(String::as_str).collect();
        let gone: Vec<&str> = recorded
            .keys()
            .map(String::as_str)
            .filter(|file| !walked.contains(file))
            .collect();
        let pending: Vec<PendingVersion<'_>> = contents
            .iter()
            .map(|(file, text)| PendingVersion {
                file,
                content: text.as_deref(),
                actor: Actor::External,
                summary: None,
            })
            .chain(gone.iter().map(|file| PendingVersion {
                file,
                content: None,
                actor: Actor::External,
                summary: None,
            }))
            .collect();
        let versions: Vec<Version> = self
            .record_versions(memory_dir, &pending)?
            .into_iter()
            .flatten()
            .collect();
        for version in &versions {
            match &version.hash {
                Some(hash) => recorded.insert(version.file.clone(), hash.clone()),
                None => recorded.remove(&version.file),
            };
        }
        Ok((versions, recorded))
    }

    /// The content hash of every memory file whose latest recorded version is not a deletion.
    pub(crate) fn recorded_memory_files(&self, memory_dir: &Path) -> Result<RecordedFiles> {
        let mut latest = RecordedFiles::new();
        for version in read_log(&self.history_store().log_path(&resolved_path(memory_dir)))? {
            match version.hash {
                Some(hash) if is_memory_file_key(&version.file) => {
                    latest.insert(version.file, hash);
                }
                _ => {
                    latest.remove(&version.file);
                }
            }
        }
        Ok(latest)
    }

    fn history_store(&self) -> Store {
        Store {
            root: self.engram_home().join("history"),
        }
    }
}

/// Content hash of each memory file history holds as existing, by file key.
pub(crate) type RecordedFiles = std::collections::BTreeMap<String, String>;

fn iso_now(engine: &Engine) -> String {
    chrono::DateTime::<chrono::Utc>::from(engine.clock().now())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What one version changed: the version, the one of the same file before it, and the diff.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionChange {
    pub version: Version,
    /// `None`: the first version history has of the file.
    pub previous: Option<Version>,
    /// Unified diff from the previous version (or nothing) to this one, headed
    /// `a/<file>\t<previous id>` / `b/<file>\t<id>`.
    pub diff: String,
}

impl Engine {
    /// What version `version_id` changed in its file, for the history view.
    pub fn version_change(&self, version_id: &str) -> Result<VersionChange> {
        let version = self.find_version(version_id)?;
        let previous = self
            .history(&version.memory_dir, Some(&version.file))?
            .into_iter()
            .skip_while(|v| v.version != version.version)
            .nth(1);
        let old_text = match &previous {
            Some(previous) => self.version_content(&previous.version)?.unwrap_or_default(),
            None => String::new(),
        };
        let new_text = self.version_content(version_id)?.unwrap_or_default();
        let old_label = match &previous {
            Some(previous) => format!("a/{}\t{}", previous.file, previous.version),
            None => "/dev/null".to_owned(),
        };
        let diff = unified_diff(
            &old_label,
            &format!("b/{}\t{}", version.file, version.version),
            &old_text,
            &new_text,
        );
        Ok(VersionChange {
            version,
            previous,
            diff,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs::{self, OpenOptions};
    use std::io::Write;
    use std::time::Duration;

    use super::*;
    use crate::environment::Environment;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::TempMemoryDir;

    fn fixture() -> TempMemoryDir {
        TempMemoryDir::project()
    }

    #[test]
    fn versions_are_recorded_once_per_change_with_summary_time_and_actor() {
        let fx = fixture();
        let v1 = fx
            .record("a.md", Some("one\n"), Actor::External)
            .expect("created");
        assert_eq!(v1.summary, "created");
        assert_eq!(
            v1.time, "2026-11-18T11:06:40.123Z",
            "time comes from the engine's clock"
        );
        assert_eq!(
            fx.record("a.md", Some("one\n"), Actor::Dream),
            None,
            "identical: skipped"
        );
        fx.clock.advance(Duration::from_secs(60));
        let v2 = fx
            .record("a.md", Some("one\ntwo\nthree\n"), Actor::Dream)
            .expect("modified");
        assert_eq!(v2.summary, "+2 \u{2212}0 lines");
        assert_eq!(v2.actor, Actor::Dream);
        assert_eq!(v2.time, "2026-11-18T11:07:40.123Z");
        let v3 = fx.record("a.md", None, Actor::User).expect("deleted");
        assert_eq!((v3.summary.as_str(), v3.hash.as_deref()), ("deleted", None));
        assert_eq!(
            fx.record("a.md", None, Actor::User),
            None,
            "already deleted"
        );
        assert_eq!(fx.record("never.md", None, Actor::User), None, "never seen");
        let v4 = fx
            .record("a.md", Some("one\n"), Actor::External)
            .expect("back");
        assert_eq!(
            v4.summary, "created",
            "a file coming back after a delete is created"
        );
        assert_eq!(v4.hash, v1.hash, "same content, same blob");

        let ids: Vec<&str> = [&v1, &v2, &v3, &v4]
            .iter()
            .map(|v| v.version.as_str())
            .collect();
        assert_eq!(ids, vec!["v000001", "v000002", "v000003", "v000004"]);
        assert_eq!(
            fs::read_dir(fx.temp.path().join("engram/history/blobs"))
                .expect("blobs")
                .count(),
            2,
            "two distinct contents, two blobs"
        );
        assert!(
            memory_files(&fx.root).expect("walk").is_empty(),
            "history never writes into the memory dir"
        );
    }

    #[test]
    fn history_lists_newest_first_and_filters_by_file() {
        let fx = fixture();
        fx.record("a.md", Some("a1"), Actor::External);
        fx.record("b.md", Some("b1"), Actor::Dream);
        fx.record("a.md", Some("a2"), Actor::User);
        let all: Vec<String> = fx
            .engine
            .history(&fx.root, None)
            .expect("history")
            .into_iter()
            .map(|v| format!("{} {}", v.version, v.file))
            .collect();
        assert_eq!(all, vec!["v000003 a.md", "v000002 b.md", "v000001 a.md"]);
        let a = fx.engine.history(&fx.root, Some("a.md")).expect("history");
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].memory_dir, fx.root.canonicalize().expect("canonical"));

        let json = serde_json::to_value(&a[0]).expect("serialize");
        for key in [
            "version",
            "file",
            "actor",
            "time",
            "summary",
            "memoryDir",
            "hash",
        ] {
            assert!(json.get(key).is_some(), "missing {key} in {json}");
        }
        assert_eq!(json["actor"], "user");

        let other = fx.temp.path().join("other/memory");
        fs::create_dir_all(&other).expect("other dir");
        assert!(
            fx.engine.history(&other, None).expect("history").is_empty(),
            "each memory dir has its own history"
        );
    }

    #[test]
    fn the_same_dir_named_through_a_symlink_or_a_trailing_slash_shares_its_history() {
        let fx = fixture();
        fx.record("a.md", Some("a1"), Actor::External);
        let slashed = PathBuf::from(format!("{}/", fx.root.display()));
        assert_eq!(fx.engine.history(&slashed, None).expect("history").len(), 1);
        #[cfg(unix)]
        {
            let link = fx.temp.path().join("link");
            std::os::unix::fs::symlink(&fx.root, &link).expect("symlink");
            assert_eq!(fx.engine.history(&link, None).expect("history").len(), 1);
        }
    }

    #[test]
    fn concurrent_appends_from_two_engines_lose_nothing_and_never_reuse_an_id() {
        let fx = fixture();
        let threads: Vec<_> = (0..2)
            .map(|t| {
                // A separate engine per thread stands for the CLI and the app: nothing shared in
                // memory, only the store on disk.
                let engine = Engine::builder(Environment::empty())
                    .engram_home(fx.temp.path().join("engram"))
                    .build();
                let root = fx.root.clone();
                std::thread::spawn(move || {
                    for i in 0..40 {
                        engine
                            .record_version(
                                &root,
                                &format!("t{t}.md"),
                                Some(&format!("content {i}\n")),
                                Actor::External,
                            )
                            .expect("record");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("thread");
        }
        let versions = fx.engine.history(&fx.root, None).expect("history");
        assert_eq!(versions.len(), 80, "every append kept");
        let mut ids: Vec<u64> = versions.iter().filter_map(Version::number).collect();
        let log_order = ids.clone();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 80, "ids are unique");
        let mut newest_first = ids.clone();
        newest_first.reverse();
        assert_eq!(log_order, newest_first, "ids increase in log order");
        let log = fs::read_to_string(fx.engine.history_store().log_path(&resolved_path(&fx.root)))
            .expect("log");
        assert!(
            log.lines()
                .all(|l| serde_json::from_str::<Version>(l).is_ok()),
            "no torn line"
        );
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_append_starts_on_a_new_line() {
        let fx = fixture();
        fx.record("a.md", Some("a1"), Actor::External);
        let log = fx.engine.history_store().log_path(&resolved_path(&fx.root));
        let mut file = OpenOptions::new()
            .append(true)
            .open(&log)
            .expect("open log");
        file.write_all(b"{\"version\":\"v0000").expect("tear");
        drop(file);
        assert_eq!(fx.engine.history(&fx.root, None).expect("history").len(), 1);
        fx.record("a.md", Some("a2"), Actor::External)
            .expect("recorded");
        let versions = fx.engine.history(&fx.root, None).expect("history");
        assert_eq!(
            versions.len(),
            2,
            "the new line parses despite the torn one"
        );
        assert_eq!(versions[0].version, "v000002");
    }

    #[test]
    fn a_lost_counter_is_rebuilt_from_the_logs() {
        let fx = fixture();
        fx.record("a.md", Some("a1"), Actor::External);
        fx.record("a.md", Some("a2"), Actor::External);
        fs::remove_file(fx.temp.path().join("engram/history/counter")).expect("lose counter");
        let v = fx
            .record("a.md", Some("a3"), Actor::External)
            .expect("recorded");
        assert_eq!(v.version, "v000003");
    }

    #[test]
    fn a_first_open_of_many_files_records_them_in_one_pack() {
        let fx = fixture();
        for i in 0..300 {
            fx.write(&format!("m{i}.md"), &format!("memory {i}\n"));
        }
        let versions = fx.engine.baseline_history(&fx.root).expect("baseline");
        assert_eq!(versions.len(), 300);
        let history = fx.temp.path().join("engram/history");
        let packs: Vec<_> = fs::read_dir(history.join("packs"))
            .expect("packs")
            .flatten()
            .collect();
        assert_eq!(packs.len(), 1, "one pack, not 300 files");
        assert!(!history.join("blobs").exists(), "no loose blob");
        for (i, version) in versions.iter().enumerate().step_by(37) {
            let content = fx.engine.version_content(&version.version).expect("read");
            let file = &version.file;
            assert_eq!(
                content.as_deref(),
                Some(format!("memory {}\n", &file[1..file.len() - 3]).as_str()),
                "{i}"
            );
        }
        // Reopening records nothing; a later edit is a loose blob beside the pack.
        assert!(fx
            .engine
            .baseline_history(&fx.root)
            .expect("again")
            .is_empty());
        fx.write("m7.md", "memory 7, edited\n");
        let edited = fx.engine.baseline_history(&fx.root).expect("edit");
        assert_eq!(edited.len(), 1);
        assert_eq!(
            fx.engine
                .version_content(&edited[0].version)
                .expect("read")
                .as_deref(),
            Some("memory 7, edited\n")
        );
        assert!(history.join("blobs").is_dir());

        // A damaged pack is reported, not read as history.
        let pack = packs[0].path();
        let mut bytes = fs::read(&pack).expect("pack");
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20;
        fs::write(&pack, bytes).expect("damage");
        let errors = versions
            .iter()
            .filter(|v| fx.engine.version_content(&v.version).is_err())
            .count();
        assert_eq!(errors, 1, "exactly the damaged blob fails its hash check");
    }

    #[test]
    fn version_content_and_diff_read_back_what_was_recorded() {
        let fx = fixture();
        let v1 = fx
            .record("a.md", Some("one\ntwo\n"), Actor::External)
            .expect("v1");
        let v2 = fx
            .record("a.md", Some("one\n2\n"), Actor::Dream)
            .expect("v2");
        let v3 = fx.record("a.md", None, Actor::User).expect("v3");
        assert_eq!(
            fx.engine
                .version_content(&v1.version)
                .expect("content")
                .as_deref(),
            Some("one\ntwo\n")
        );
        assert_eq!(
            fx.engine.version_content(&v3.version).expect("content"),
            None
        );
        let diff = fx
            .engine
            .diff_versions(&v1.version, &v2.version)
            .expect("diff");
        assert_eq!(
            diff,
            "--- a/a.md\tv000001\n+++ b/a.md\tv000002\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
        );
        let to_deleted = fx
            .engine
            .diff_versions(&v2.version, &v3.version)
            .expect("diff");
        assert!(to_deleted.contains("-one\n-2\n"), "{to_deleted}");
        for missing in ["v999999", "nonsense", "v"] {
            let err = fx.engine.version_content(missing).expect_err("unknown id");
            assert_eq!(err.kind(), ErrorKind::NotFound, "{missing}");
        }
    }

    #[test]
    fn a_corrupted_blob_is_reported_not_returned() {
        let fx = fixture();
        let v = fx
            .record("a.md", Some("true content"), Actor::External)
            .expect("v");
        let blob = fx
            .engine
            .history_store()
            .blob_path(v.hash.as_deref().expect("hash"));
        fs::write(&blob, "tampered").expect("tamper");
        let err = fx
            .engine
            .version_content(&v.version)
            .expect_err("corrupted");
        assert_eq!(err.kind(), ErrorKind::Parse);
    }

    #[test]
    fn a_blob_truncated_by_a_crash_is_written_again_when_its_content_comes_back() {
        let fx = fixture();
        let v = fx
            .record("a.md", Some("true content"), Actor::External)
            .expect("v");
        let blob = fx
            .engine
            .history_store()
            .blob_path(v.hash.as_deref().expect("hash"));
        fs::write(&blob, "").expect("truncate, as a crash before the flush could");
        fx.record("a.md", None, Actor::External).expect("deleted");
        fx.record("a.md", Some("true content"), Actor::External)
            .expect("back");
        assert_eq!(
            fx.engine
                .version_content(&v.version)
                .expect("readable again"),
            Some("true content".to_owned())
        );
    }

    #[test]
    fn one_batch_may_hold_several_versions_of_one_file() {
        let fx = fixture();
        let pending = [
            PendingVersion {
                file: "a.md",
                content: Some("one\n"),
                actor: Actor::External,
                summary: None,
            },
            PendingVersion {
                file: "a.md",
                content: Some("one\ntwo\n"),
                actor: Actor::User,
                summary: None,
            },
        ];
        let versions: Vec<Version> = fx
            .engine
            .record_versions(&fx.root, &pending)
            .expect("record")
            .into_iter()
            .map(|v| v.expect("both recorded"))
            .collect();
        assert_eq!(versions[0].summary, "created");
        assert_eq!(versions[1].summary, "+1 \u{2212}0 lines");
        for (version, content) in versions.iter().zip(["one\n", "one\ntwo\n"]) {
            assert_eq!(
                fx.engine
                    .version_content(&version.version)
                    .expect("content"),
                Some(content.to_owned())
            );
        }
    }

    #[test]
    fn baseline_records_every_memory_file_once_and_later_catches_up() {
        let fx = fixture();
        fx.write("MEMORY.md", "- [A](a.md) — a\n");
        fx.write("a.md", "a\n");
        fx.write("team/t.md", "t\n");
        fx.write("notes.txt", "not a memory\n");
        fx.write(".consolidate-lock", "123");
        fx.write(".a.md.engram-1-0.tmp", "temp");
        fx.write(".hidden/x.md", "hidden\n");

        let first = fx.engine.baseline_history(&fx.root).expect("baseline");
        let mut files: Vec<&str> = first.iter().map(|v| v.file.as_str()).collect();
        files.sort_unstable();
        assert_eq!(files, vec!["MEMORY.md", "a.md", "team/t.md"]);
        assert!(first.iter().all(|v| v.actor == Actor::External));
        assert!(
            fx.engine
                .baseline_history(&fx.root)
                .expect("again")
                .is_empty(),
            "nothing changed, nothing recorded"
        );

        // A non-memory file written through a change set is not walked, so not "gone" either.
        fx.write(".snapshot-synced.json", "{}");
        fx.record(".snapshot-synced.json", Some("{}"), Actor::Snapshot);

        // Changes made while Engram was closed.
        fx.write("a.md", "a changed\n");
        fs::remove_file(fx.root.join("team/t.md")).expect("delete");
        let later = fx.engine.baseline_history(&fx.root).expect("catch up");
        let summaries: Vec<String> = later
            .iter()
            .map(|v| format!("{} {}", v.file, v.summary))
            .collect();
        assert_eq!(
            summaries,
            vec!["a.md +1 \u{2212}1 lines", "team/t.md deleted"]
        );

        let missing = fx.temp.path().join("nowhere");
        assert!(fx
            .engine
            .baseline_history(&missing)
            .expect("missing")
            .is_empty());
    }

    #[test]
    fn memory_file_keys_exclude_hidden_and_non_markdown_files() {
        assert!(is_memory_file_key("a.md"));
        assert!(is_memory_file_key("logs/2026/11/2026-11-22.md"));
        assert!(!is_memory_file_key(".a.md.engram-1-2.tmp"));
        assert!(!is_memory_file_key(".consolidate-lock"));
        assert!(!is_memory_file_key("dir/.hidden.md"));
        assert!(!is_memory_file_key("a.md.tmp"));
    }

    #[test]
    fn a_version_change_diffs_against_the_previous_version_of_its_file() {
        let fx = fixture();
        let first = fx
            .record("a.md", Some("one\n"), Actor::External)
            .expect("v1");
        fx.record("b.md", Some("other\n"), Actor::User);
        let second = fx
            .record("a.md", Some("one\ntwo\n"), Actor::User)
            .expect("v3");

        let change = fx.engine.version_change(&second.version).expect("change");
        assert_eq!(
            change.previous.as_ref().map(|v| v.version.as_str()),
            Some(first.version.as_str())
        );
        assert_eq!(
            change.diff,
            format!(
                "--- a/a.md\t{}\n+++ b/a.md\t{}\n@@ -1 +1,2 @@\n one\n+two\n",
                first.version, second.version
            )
        );
        let change = fx.engine.version_change(&first.version).expect("first");
        assert_eq!(change.previous, None);
        assert!(
            change.diff.starts_with("--- /dev/null\n"),
            "{}",
            change.diff
        );
        assert_eq!(
            fx.engine
                .version_change("v999999")
                .expect_err("unknown")
                .kind(),
            ErrorKind::NotFound
        );
    }
}
