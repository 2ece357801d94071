//! Change sets: every automated change to a memory dir (a dream, an extraction, a fix, a snapshot
//! merge, a revert, a save from the editor) is first planned as a [`ChangeSet`] — per file an add,
//! modify or delete with the content before and after, a unified diff and a one-line reason — so it
//! can be shown and reviewed, and only then applied with [`Engine::apply_change_set`].
//!
//! Contract:
//! - File keys are relative to the change set's root, `/`-separated, without `.`/`..` components,
//!   backslashes or NUL; anything else is refused before the disk is touched, and at apply time the
//!   resolved target (symlinks followed) must still lie inside the root.
//! - A change set holds at most one change per file: staging the same file again folds into the
//!   existing change, keeping the original `before`, so `before` is always what the disk held when
//!   the file was first staged. A change that ends where it started disappears.
//! - Applying is all-or-nothing with respect to conflicts: if any file on disk no longer equals its
//!   `before`, [`Error::Conflict`] is returned and nothing is written. Writes are atomic per file
//!   (temp + rename); each applied file is recorded in history with its [`Actor`]. A write that fails
//!   after the check (disk full, permissions) does not stop the others and is reported per file.
//! - What is deliberately not done: locking the memory dir against other writers between the check
//!   and the writes. Claude Code never locks its memory files, so the window (microseconds) is
//!   accepted; the watcher still records whatever lands afterwards.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::diff::{line_counts, unified_diff};
use crate::disk::{self, confined_path, read_optional};
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::frontmatter;
use crate::history::{PendingVersion, Version};
use crate::index;
use crate::memory_type::MemoryType;

/// What a [`FileChange`] does to its file.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Add,
    Modify,
    Delete,
}

impl ChangeKind {
    /// The kind that turns `before` into `after`; `None` when both are absent.
    fn between(before: Option<&str>, after: Option<&str>) -> Option<ChangeKind> {
        match (before, after) {
            (None, None) => None,
            (None, Some(_)) => Some(ChangeKind::Add),
            (Some(_), Some(_)) => Some(ChangeKind::Modify),
            (Some(_), None) => Some(ChangeKind::Delete),
        }
    }
}

/// One planned change to one file. `before` is what the disk held when the change was planned
/// (`None`: the file did not exist), `after` what it will hold (`None`: deleted).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    pub file: String,
    pub kind: ChangeKind,
    pub before: Option<String>,
    pub after: Option<String>,
    pub reason: String,
    /// Unified diff (3 lines of context) from `before` to `after`, headed `a/<file>` / `b/<file>`,
    /// or `/dev/null` for the missing side of an add or a delete, as `git diff` writes it.
    pub diff: String,
    /// The change deletes or rewrites a `user` or `feedback` memory: it always waits for the
    /// person, whatever the project's policy (derived from `before`, never set by a planner).
    #[serde(default)]
    pub protected: bool,
    /// The sessions (transcript ids) the change drew from, when a run knows them.
    #[serde(default)]
    pub sessions: Vec<String>,
}

impl FileChange {
    /// The change from `before` to `after`, or `None` when they are the same (nothing to do).
    pub(crate) fn between(
        file: &str,
        before: Option<String>,
        after: Option<String>,
        reason: String,
    ) -> Option<FileChange> {
        if before == after {
            return None;
        }
        let kind = ChangeKind::between(before.as_deref(), after.as_deref())?;
        let old_label = match before {
            Some(_) => format!("a/{file}"),
            None => "/dev/null".to_owned(),
        };
        let new_label = match after {
            Some(_) => format!("b/{file}"),
            None => "/dev/null".to_owned(),
        };
        let diff = unified_diff(
            &old_label,
            &new_label,
            before.as_deref().unwrap_or(""),
            after.as_deref().unwrap_or(""),
        );
        let protected = protects(kind, before.as_deref());
        Some(FileChange {
            file: file.to_owned(),
            kind,
            before,
            after,
            reason,
            diff,
            protected,
            sessions: Vec::new(),
        })
    }

    /// Whether the change deletes or rewrites a `user` or `feedback` memory, computed from its
    /// content (a change set read back from disk is not trusted to say so itself).
    pub fn touches_protected_memory(&self) -> bool {
        protects(self.kind, self.before.as_deref())
    }

    /// The hex SHA-256 of `before` (`None`: the file did not exist): the base the change was
    /// planned on.
    pub fn base_hash(&self) -> Option<String> {
        self.before
            .as_deref()
            .map(|b| disk::content_hash(b.as_bytes()))
    }

    /// Lines added and removed, as a diff viewer counts them.
    pub fn line_counts(&self) -> (usize, usize) {
        line_counts(
            self.before.as_deref().unwrap_or(""),
            self.after.as_deref().unwrap_or(""),
        )
    }
}

/// A planned set of file changes under one root (a memory dir).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSet {
    pub root: PathBuf,
    pub changes: Vec<FileChange>,
    /// What [`ChangeSet::read`] returned from the disk for files not staged yet: a later
    /// [`ChangeSet::stage_write`] of such a file plans against exactly what the planner saw, not
    /// against a second read that another writer may have changed in between (that mismatch made
    /// a merge of `MEMORY.md` drop the other writer's line).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    bases: std::collections::BTreeMap<String, Option<String>>,
}

impl ChangeSet {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ChangeSet::from_changes(root, Vec::new())
    }

    /// A set of already planned changes (reviewed in a window, read back from staging).
    pub fn from_changes(root: impl Into<PathBuf>, changes: Vec<FileChange>) -> Self {
        ChangeSet {
            root: root.into(),
            changes,
            bases: std::collections::BTreeMap::new(),
        }
    }

    /// The disk content of `file` as the planner first saw it through this set, else now.
    fn base(&self, file: &str, path: &Path) -> Result<Option<String>> {
        match self.bases.get(file) {
            Some(seen) => Ok(seen.clone()),
            // An index is the file Claude Code rewrites in place while Engram plans: planning
            // from the empty file seen mid-rewrite would rebuild it from scratch.
            None if index::is_index_file(file) => disk::read_settled(path),
            None => read_optional(path),
        }
    }

    /// Plans writing `content` to `file`. `before` is read from disk, or taken from an earlier
    /// staged change of the same file (which this one then replaces).
    pub fn stage_write(&mut self, file: &str, content: String, reason: &str) -> Result<()> {
        let path = confined_path(&self.root, file)?;
        let index = self.position(file);
        let before = match index {
            Some(i) => self.changes[i].before.clone(),
            None => self.base(file, &path)?,
        };
        self.put(index, file, before, Some(content), reason);
        Ok(())
    }

    /// Plans writing `content` to `file` over the content the caller last saw (`opened`; `None`:
    /// the caller saw no file), without reading the disk. This is the editor's save: applying it
    /// fails with [`Error::Conflict`] if the disk moved on since the editor opened the file.
    pub fn stage_write_over(
        &mut self,
        file: &str,
        opened: Option<String>,
        content: String,
        reason: &str,
    ) -> Result<()> {
        confined_path(&self.root, file)?;
        if self.position(file).is_some() {
            return Err(Error::InvalidInput(format!(
                "{file}: already staged in this change set"
            )));
        }
        self.put(None, file, opened, Some(content), reason);
        Ok(())
    }

    /// Plans turning `file` from `from` (what the caller knows it holds; `None`: absent) into `to`
    /// (`None`: deleted), without reading the disk; applying fails with [`Error::Conflict`] if the
    /// disk holds something else by then. Undoing an applied change is this, backwards.
    pub fn stage_over(
        &mut self,
        file: &str,
        from: Option<String>,
        to: Option<String>,
        reason: &str,
    ) -> Result<()> {
        confined_path(&self.root, file)?;
        if self.position(file).is_some() {
            return Err(Error::InvalidInput(format!(
                "{file}: already staged in this change set"
            )));
        }
        self.put(None, file, from, to, reason);
        Ok(())
    }

    /// Plans deleting `file`; [`Error::NotFound`] if it neither exists on disk nor is staged.
    pub fn stage_delete(&mut self, file: &str, reason: &str) -> Result<()> {
        let path = confined_path(&self.root, file)?;
        let index = self.position(file);
        let (before, current) = match index {
            Some(i) => (
                self.changes[i].before.clone(),
                self.changes[i].after.is_some(),
            ),
            None => {
                let before = self.base(file, &path)?;
                let exists = before.is_some();
                (before, exists)
            }
        };
        if !current {
            return Err(Error::NotFound(path));
        }
        self.put(index, file, before, None, reason);
        Ok(())
    }

    /// The staged state of `file`: `None` if it is not staged, `Some(None)` if it is staged for
    /// deletion, `Some(Some(content))` if staged for writing.
    pub fn staged_content(&self, file: &str) -> Option<Option<&str>> {
        self.position(file)
            .map(|i| self.changes[i].after.as_deref())
    }

    /// `file` as it will be once the set is applied: the staged content if staged, else the disk.
    /// `None`: the file does not (or will not) exist. Lets a planner read its own staged writes.
    /// [`ChangeSet::read`] without noting what was read: for looking, not for planning a write
    /// from it.
    pub fn peek(&self, file: &str) -> Result<Option<String>> {
        let path = confined_path(&self.root, file)?;
        match self.staged_content(file) {
            Some(staged) => Ok(staged.map(str::to_owned)),
            None => self.base(file, &path),
        }
    }

    pub fn read(&mut self, file: &str) -> Result<Option<String>> {
        let path = confined_path(&self.root, file)?;
        match self.staged_content(file) {
            Some(staged) => Ok(staged.map(str::to_owned)),
            None => {
                let seen = self.base(file, &path)?;
                self.bases.insert(file.to_owned(), seen.clone());
                Ok(seen)
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Drops the change planned for `file` (a reviewer rejecting it); returns whether there was one.
    pub fn unstage(&mut self, file: &str) -> bool {
        match self.position(file) {
            Some(i) => {
                self.changes.remove(i);
                true
            }
            None => false,
        }
    }

    /// One line for logs, notifications and the CLI, e.g.
    /// `3 files: 1 added, 1 modified, 1 deleted (+12 −4 lines)`.
    pub fn summary(&self) -> String {
        if self.changes.is_empty() {
            return "no changes".to_owned();
        }
        let count = |kind| self.changes.iter().filter(|c| c.kind == kind).count();
        let parts: Vec<String> = [
            (ChangeKind::Add, "added"),
            (ChangeKind::Modify, "modified"),
            (ChangeKind::Delete, "deleted"),
        ]
        .into_iter()
        .filter_map(|(kind, label)| match count(kind) {
            0 => None,
            n => Some(format!("{n} {label}")),
        })
        .collect();
        let (added, removed) = self
            .changes
            .iter()
            .map(FileChange::line_counts)
            .fold((0, 0), |(a, r), (ca, cr)| (a + ca, r + cr));
        let files = match self.changes.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        format!(
            "{files}: {} (+{added} \u{2212}{removed} lines)",
            parts.join(", ")
        )
    }

    fn position(&self, file: &str) -> Option<usize> {
        self.changes.iter().position(|c| c.file == file)
    }

    /// Replaces (or adds, or removes when it became a no-op) the change of `file`.
    fn put(
        &mut self,
        index: Option<usize>,
        file: &str,
        before: Option<String>,
        after: Option<String>,
        reason: &str,
    ) {
        let reason = match index {
            Some(i) => merge_reasons(&self.changes[i].reason, reason),
            None => reason.to_owned(),
        };
        match (FileChange::between(file, before, after, reason), index) {
            (Some(mut change), Some(i)) => {
                change.sessions = std::mem::take(&mut self.changes[i].sessions);
                self.changes[i] = change;
            }
            (Some(change), None) => self.changes.push(change),
            (None, Some(i)) => {
                self.changes.remove(i);
            }
            (None, None) => {}
        }
    }
}

fn merge_reasons(earlier: &str, later: &str) -> String {
    if later.is_empty() || earlier == later {
        earlier.to_owned()
    } else if earlier.is_empty() {
        later.to_owned()
    } else {
        format!("{earlier}; {later}")
    }
}

/// Whether applying a file's change succeeded.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApplyStatus {
    Applied,
    Failed,
}

/// The outcome of one file of an applied change set.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedChange {
    pub file: String,
    pub kind: ChangeKind,
    pub status: ApplyStatus,
    /// The history version recorded for the new state (`None` if the write failed or history
    /// could not be written).
    pub version: Option<Version>,
    /// Why the write failed, or why history could not record an applied write.
    pub error: Option<String>,
}

/// What [`Engine::apply_change_set`] did, file by file, in the set's order.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyReport {
    pub root: PathBuf,
    pub actor: Actor,
    pub files: Vec<AppliedChange>,
}

impl ApplyReport {
    /// True when every file was written.
    pub fn all_applied(&self) -> bool {
        self.files.iter().all(|f| f.status == ApplyStatus::Applied)
    }

    /// The first file that failed to land, as an error naming it; `Ok` when every file landed.
    pub fn first_failure(&self) -> Result<()> {
        match self.files.iter().find(|f| f.status == ApplyStatus::Failed) {
            Some(failed) => Err(Error::io(
                self.root.join(&failed.file),
                std::io::Error::other(failed.error.clone().unwrap_or_default()),
            )),
            None => Ok(()),
        }
    }
}

impl Engine {
    /// Applies `set` as `actor`. First checks that every file on disk still equals its `before`
    /// (absent for `None`): on any difference returns [`Error::Conflict`] naming the first such
    /// file and writes nothing. Then writes (atomically) or deletes each file, telling the watcher
    /// that these are Engram's own writes, and records each new state in history.
    pub fn apply_change_set(&self, set: &ChangeSet, actor: Actor) -> Result<ApplyReport> {
        self.apply_change_set_of(set, actor, None)
    }

    /// [`Engine::apply_change_set`] for a staged change set: every recorded version names
    /// `change_set`, so the whole set can be found in history and undone as one.
    pub fn apply_change_set_of(
        &self,
        set: &ChangeSet,
        actor: Actor,
        change_set: Option<&str>,
    ) -> Result<ApplyReport> {
        let results = self.apply_changes(set, actor, None, change_set)?;
        let files = set
            .changes
            .iter()
            .zip(results)
            .map(|(change, result)| {
                let (status, version, error) = match result {
                    FileResult::Written(Ok(version)) => (ApplyStatus::Applied, version, None),
                    FileResult::Written(Err(e)) => (
                        ApplyStatus::Applied,
                        None,
                        Some(format!("written, but not recorded in history: {e}")),
                    ),
                    FileResult::Failed(e) => (ApplyStatus::Failed, None, Some(e.to_string())),
                };
                AppliedChange {
                    file: change.file.clone(),
                    kind: change.kind,
                    status,
                    version,
                    error,
                }
            })
            .collect();
        Ok(ApplyReport {
            root: set.root.clone(),
            actor,
            files,
        })
    }

    /// The shared body of applying: the conflict check, the writes, the history records.
    /// `summary` overrides the history summary of every recorded version (a revert says what it
    /// reverted to). Returns one result per change, in order.
    ///
    /// Engram processes applying to the same memory dir take turns (an advisory lock in Engram's
    /// data dir), so two of them never interleave. Topic files are written first; an index file
    /// (`MEMORY.md`, shared with Claude Code and people) lands next, only if every file written
    /// before it did — an index line never points at a file that failed to land — and is merged
    /// with what the disk holds at that moment ([`index::merge_edit`]), never overwritten from
    /// the state it was planned on; deletions come last, once no index links to them.
    pub(crate) fn apply_changes(
        &self,
        set: &ChangeSet,
        actor: Actor,
        summary: Option<&str>,
        change_set: Option<&str>,
    ) -> Result<Vec<FileResult>> {
        let _turn = self.lock_memory_dir(&set.root)?;
        let targets = self.check_change_set(set)?;

        // A `before` that history has never seen (Claude Code wrote it while Engram was not
        // looking) is recorded first, so the change about to land has something to diff against
        // and to revert to. This happens before any write: if history is unusable, nothing lands.
        let seen: Vec<PendingVersion<'_>> = set
            .changes
            .iter()
            .map(|c| PendingVersion {
                file: &c.file,
                content: c.before.as_deref(),
                actor: Actor::External,
                summary: None,
            })
            .collect();
        self.record_versions(&set.root, &seen)?;
        // Recording took a while (a lock and a flush): look again right before writing, so the
        // window in which another writer's change could be overwritten is as short as can be.
        self.check_befores(set, &targets)?;

        let mut written: Vec<Option<Result<Option<String>>>> =
            set.changes.iter().map(|_| None).collect();
        // Writes first, then the indexes, then deletions: at every instant (a kill can come at
        // any) an index links only to files that are there — a new line after its file lands,
        // a deleted file after its line is gone. A deletion that fails leaves an orphan, which
        // lint reports; never a dangling line.
        let step = |change: &FileChange| match (merges_with_disk(change), change.after.is_some()) {
            (false, true) => 0,
            (true, _) => 1,
            (false, false) => 2,
        };
        let mut order: Vec<usize> = (0..set.changes.len()).collect();
        order.sort_by_key(|&i| step(&set.changes[i]));
        for i in order {
            let (change, path) = (&set.changes[i], &targets[i]);
            if merges_with_disk(change) {
                let a_file_failed = written.iter().flatten().any(|w| w.is_err());
                written[i] = Some(if a_file_failed {
                    Err(Error::InvalidInput(format!(
                        "{}: not updated, because a file it lists failed to land",
                        change.file
                    )))
                } else {
                    self.write_merged(change, path).map(Some)
                });
                continue;
            }
            let content = change.after.as_deref();
            self.note_own_write(path, content.map(str::as_bytes));
            let result = match content {
                Some(content) => disk::atomic_write(path, content.as_bytes()),
                None => fs::remove_file(path)
                    .at(path)
                    .map(|()| prune_empty_parents(&set.root, path)),
            };
            written[i] = Some(result.map(|()| change.after.clone()));
        }
        let results: Vec<Result<Option<String>>> = written
            .into_iter()
            .map(|w| w.unwrap_or_else(|| Err(Error::InvalidInput("not applied".to_owned()))))
            .collect();

        let landed: Vec<PendingVersion<'_>> = set
            .changes
            .iter()
            .zip(&results)
            .filter_map(|(c, written)| {
                written.as_ref().ok().map(|content| PendingVersion {
                    file: &c.file,
                    content: content.as_deref(),
                    actor,
                    summary,
                })
            })
            .collect();
        let mut recorded = match self.record_versions_of(&set.root, &landed, change_set) {
            Ok(versions) => versions.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => {
                let message = e.to_string();
                landed
                    .iter()
                    .map(|_| Err(Error::InvalidInput(message.clone())))
                    .collect()
            }
        }
        .into_iter();
        Ok(results
            .into_iter()
            .map(|written| match written {
                Ok(_) => FileResult::Written(recorded.next().unwrap_or(Ok(None))),
                Err(e) => FileResult::Failed(e),
            })
            .collect())
    }

    /// Writes an index change merged with what the disk holds at the moment of the rename: the
    /// merged content is swapped in atomically and what it replaced comes back
    /// ([`disk::PreparedWrite::swap_in`]); if that is not what was merged with — someone wrote
    /// in between — their content is merged again and written again. So a line someone else
    /// wrote is never lost, however the writes interleave.
    fn write_merged(&self, change: &FileChange, path: &Path) -> Result<String> {
        const ATTEMPTS: usize = 20;
        let before = change.before.as_deref().unwrap_or("");
        let after = change.after.as_deref().unwrap_or("");
        let mut theirs = disk::read_settled(path)?;
        // What the disk holds if nobody else writes: theirs at first, then our last write.
        let mut expected = theirs.clone();
        for _ in 0..ATTEMPTS {
            let merged = index::merge_edit(before, after, theirs.as_deref().unwrap_or(""))
                .ok_or_else(|| Error::Conflict(path.to_path_buf()))?;
            let prepared = disk::PreparedWrite::new(path, merged.as_bytes())?;
            self.note_own_write(path, Some(merged.as_bytes()));
            let replaced = prepared.swap_in()?;
            if replaced != expected {
                theirs = replaced;
                expected = Some(merged);
                continue;
            }
            // Claude Code edits in place: read, change, write, microseconds apart. A write of
            // ours that lands in between is overwritten with what it read before — our line
            // gone, and no exchange of ours saw it happen. Look once more a moment later: if
            // the index changed and our edit is no longer in it, merge it in again.
            std::thread::sleep(VERIFY_AFTER);
            let now = disk::read_settled(path)?;
            let still_ours = now.as_deref() == Some(merged.as_str())
                || now
                    .as_deref()
                    .and_then(|now| index::merge_edit(before, after, now))
                    .as_deref()
                    == now.as_deref();
            if still_ours {
                return Ok(merged);
            }
            theirs = now.clone();
            expected = now;
        }
        Err(Error::Conflict(path.to_path_buf()))
    }

    /// Holds the advisory lock that makes Engram processes applying to `root` take turns. The
    /// lock file lives in Engram's data dir, never in the memory dir.
    fn lock_memory_dir(&self, root: &Path) -> Result<fs::File> {
        let key = disk::content_hash(disk::resolved_path(root).to_string_lossy().as_bytes());
        let path = self
            .engram_home()
            .join("locks")
            .join(format!("apply-{}.lock", &key[..16]));
        let file = crate::disk::open_lock_file(&path).at(&path)?;
        fs4::fs_std::FileExt::lock_exclusive(&file).at(&path)?;
        Ok(file)
    }

    /// [`Error::Conflict`] naming the first file whose disk content is no longer its `before`.
    /// An index file that is written (not deleted) is merged instead: it conflicts only when
    /// the edit and the disk's cannot both stand ([`index::merge_edit`]).
    fn check_befores(&self, set: &ChangeSet, targets: &[PathBuf]) -> Result<()> {
        for (change, path) in set.changes.iter().zip(targets) {
            if !base_holds(path, change)? {
                return Err(Error::Conflict(path.clone()));
            }
        }
        Ok(())
    }

    /// Validates every change of `set` (confined path, one change per file, kind consistent with
    /// before/after — a set may come back deserialized from staging) and checks the disk still
    /// holds each `before`. Returns the resolved target paths in order.
    fn check_change_set(&self, set: &ChangeSet) -> Result<Vec<PathBuf>> {
        let mut targets = Vec::with_capacity(set.changes.len());
        for (i, change) in set.changes.iter().enumerate() {
            let path = confined_path(&set.root, &change.file)?;
            if set.changes[..i].iter().any(|c| c.file == change.file) {
                return Err(Error::InvalidInput(format!(
                    "{}: staged twice in one change set",
                    change.file
                )));
            }
            if ChangeKind::between(change.before.as_deref(), change.after.as_deref())
                != Some(change.kind)
            {
                return Err(Error::InvalidInput(format!(
                    "{}: change kind {:?} does not match its before/after content",
                    change.file, change.kind
                )));
            }
            targets.push(path);
        }
        self.check_befores(set, &targets)?;
        Ok(targets)
    }
}

/// Both sides of a save that [`Engine::write_memory_file_checked`] refused, for the editor to
/// show: what is on disk now, what the user wanted to save, and the diff from disk to mine.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConflictDetails {
    pub file: String,
    /// `None`: the file was deleted on disk.
    pub disk: Option<String>,
    pub mine: String,
    pub diff: String,
}

impl Engine {
    /// The editor's save: writes `content` to `file` only if the disk still holds `opened` (what
    /// the editor loaded; `None` for a new file). Otherwise returns [`Error::Conflict`] and
    /// overwrites nothing; [`Engine::conflict_details`] then gives both versions. Returns the
    /// recorded version, or `None` when there was nothing to save (or, the file being written,
    /// history could not record it).
    pub fn write_memory_file_checked(
        &self,
        memory_dir: &Path,
        file: &str,
        content: &str,
        opened: Option<&str>,
        actor: Actor,
    ) -> Result<Option<Version>> {
        let mut set = ChangeSet::new(memory_dir);
        set.stage_write_over(file, opened.map(str::to_owned), content.to_owned(), "saved")?;
        if set.is_empty() {
            return Ok(None);
        }
        match self
            .apply_changes(&set, actor, None, None)?
            .into_iter()
            .next()
        {
            Some(FileResult::Written(version)) => Ok(version.unwrap_or(None)),
            Some(FileResult::Failed(e)) => Err(e),
            None => Ok(None),
        }
    }

    /// What the disk holds now for `file` against the content the user tried to save.
    pub fn conflict_details(
        &self,
        memory_dir: &Path,
        file: &str,
        mine: &str,
    ) -> Result<ConflictDetails> {
        let disk = read_optional(&confined_path(memory_dir, file)?)?;
        let diff = unified_diff(
            &format!("a/{file}\tdisk"),
            &format!("b/{file}\tmine"),
            disk.as_deref().unwrap_or(""),
            mine,
        );
        Ok(ConflictDetails {
            file: file.to_owned(),
            disk,
            mine: mine.to_owned(),
            diff,
        })
    }
}

/// The per-file result of [`Engine::apply_changes`]: written (and then recorded in history, or
/// not), or not written at all.
pub(crate) enum FileResult {
    Written(Result<Option<Version>>),
    Failed(Error),
}

/// Whether the file at `path` still holds what `change` was planned on — for an index written
/// (not deleted), whether the edit still merges with what it holds ([`index::merge_edit`]).
pub(crate) fn base_holds(path: &Path, change: &FileChange) -> Result<bool> {
    let current = read_optional(path)?;
    Ok(if merges_with_disk(change) {
        index::merge_edit(
            change.before.as_deref().unwrap_or(""),
            change.after.as_deref().unwrap_or(""),
            current.as_deref().unwrap_or(""),
        )
        .is_some()
    } else {
        current == change.before
    })
}

/// Whether a change of `kind` to a file that held `before` deletes or rewrites a `user` or
/// `feedback` memory.
fn protects(kind: ChangeKind, before: Option<&str>) -> bool {
    kind != ChangeKind::Add
        && before.is_some_and(|text| {
            matches!(
                frontmatter::parse_document(text).frontmatter.memory_type,
                Some(MemoryType::User | MemoryType::Feedback)
            )
        })
}

/// Whether `change` is to an index file that is written rather than deleted: those are merged with
/// the disk at write time (see [`Engine::apply_changes`]) instead of conflicting.
/// How long after writing an index Engram looks again for an in-place writer's overwrite (see
/// `write_merged`): far longer than Claude Code's read-to-write, short enough not to be felt.
const VERIFY_AFTER: std::time::Duration = std::time::Duration::from_millis(3);

fn merges_with_disk(change: &FileChange) -> bool {
    index::is_index_file(&change.file) && change.after.is_some()
}

/// Removes the directories left empty by deleting `path`, up to (not including) `root`. Best
/// effort: a directory that is not empty, or cannot be removed, simply stays.
fn prune_empty_parents(root: &Path, path: &Path) {
    let mut dir = path.parent();
    while let Some(current) = dir {
        if current == root || !current.starts_with(root) || fs::remove_dir(current).is_err() {
            break;
        }
        dir = current.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::TempMemoryDir;

    const TOPIC: &str = "---\nname: Testing policy\ndescription: real DB\ntype: feedback\n---\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n";

    /// Claude Code rewrites `MEMORY.md` in place: truncate, then write. A plan made while the
    /// file is empty between the two must not be taken as "the index is empty": a dream planned
    /// then indexes every file as an orphan, and merging that over the real index puts its own
    /// lines over the ones Claude Code (or a person) wrote. The planner's read waits for the file
    /// to settle instead.
    #[test]
    fn a_dream_planned_while_claude_code_rewrites_the_index_in_place_keeps_its_lines() {
        use std::io::Write as _;
        let fx = TempMemoryDir::new("memory");
        let mut lines = String::new();
        for i in 0..10 {
            // Words of its own in each note: memories with nothing in common, so the dream has
            // nothing to merge (random words from one small vocabulary read as near-duplicates).
            let body: Vec<String> = (0..16).map(|k| format!("n{i}word{k}")).collect();
            fx.write(
                &format!("project_n{i}.md"),
                &format!(
                    "---\nname: N{i}\ndescription: note {i}\ntype: project\n---\n{}\n",
                    body.join(" ")
                ),
            );
            lines.push_str(&format!(
                "- [N{i}](project_n{i}.md) — note {i}, as Claude Code put it\n"
            ));
        }
        fx.write("MEMORY.md", &lines);
        let index = fx.path("MEMORY.md");
        let truncated = std::sync::Arc::new(std::sync::Barrier::new(2));
        let writer = {
            let (index, truncated, lines) = (index.clone(), truncated.clone(), lines.clone());
            std::thread::spawn(move || {
                let mut file = fs::File::create(&index).expect("truncate");
                truncated.wait();
                // A writer descheduled between its truncation and its write.
                std::thread::sleep(std::time::Duration::from_millis(15));
                file.write_all(lines.as_bytes()).expect("write");
            })
        };
        truncated.wait();
        let dream = crate::dream::offline::plan_offline_dream(&fx.dir, &chrono::Utc).expect("plan");
        writer.join().expect("writer");
        fx.engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        assert_eq!(
            fs::read_to_string(&index).expect("index"),
            lines,
            "the dream had nothing to change in this index"
        );
    }

    #[test]
    fn diffs_of_add_modify_delete_render_as_git_does() {
        let fx = TempMemoryDir::new("memory");
        fx.write("testing.md", TOPIC);
        fx.write("old.md", "obsolete\n");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write(
            "testing.md",
            TOPIC.replace("line 7\n", "line seven\n"),
            "clarify",
        )
        .expect("stage modify");
        set.stage_write("new/topic.md", "fresh\n".to_owned(), "new fact")
            .expect("stage add");
        set.stage_delete("old.md", "obsolete")
            .expect("stage delete");
        let rendered: Vec<String> = set
            .changes
            .iter()
            .map(|c| format!("{:?} {} ({})\n{}", c.kind, c.file, c.reason, c.diff))
            .collect();
        insta::assert_snapshot!(format!("{}\n{}", set.summary(), rendered.join("\n")));
    }

    #[test]
    fn staging_a_file_again_keeps_the_original_before_and_a_return_to_it_cancels() {
        let fx = TempMemoryDir::new("memory");
        fx.write("a.md", "one\n");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "two\n".to_owned(), "first")
            .expect("stage");
        // The disk moving on must not change what the set planned against.
        fx.write("a.md", "disk moved\n");
        set.stage_write("a.md", "three\n".to_owned(), "second")
            .expect("restage");
        assert_eq!(set.len(), 1, "one change per file");
        let change = &set.changes[0];
        assert_eq!(change.before.as_deref(), Some("one\n"));
        assert_eq!(change.after.as_deref(), Some("three\n"));
        assert_eq!(change.reason, "first; second");
        assert!(change.diff.contains("-one\n+three\n"), "{}", change.diff);

        set.stage_write("a.md", "one\n".to_owned(), "undo")
            .expect("stage back");
        assert!(set.is_empty(), "a change back to `before` is no change");
    }

    #[test]
    fn a_write_planned_from_a_read_is_based_on_that_read_even_if_the_disk_moved_since() {
        let fx = TempMemoryDir::new("memory");
        fx.write("MEMORY.md", "# Memory\n");
        let mut set = ChangeSet::new(&fx.root);
        let seen = set.read("MEMORY.md").expect("read").expect("exists");
        // Another writer lands a line between the planner's read and its staging.
        fx.write("MEMORY.md", "# Memory\n- [B](b.md)\n");
        set.stage_write("MEMORY.md", format!("{seen}- [A](a.md)\n"), "index a.md")
            .expect("stage");
        assert_eq!(
            set.changes[0].before.as_deref(),
            Some("# Memory\n"),
            "before is what the planner saw, so the edit is exactly `+ A`"
        );
        fx.engine
            .apply_change_set(&set, Actor::User)
            .expect("merged, not refused");
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some("# Memory\n- [A](a.md)\n- [B](b.md)\n"),
            "both lines survive"
        );
    }

    #[test]
    fn staged_reads_see_staged_writes_and_deletes_before_the_disk() {
        let fx = TempMemoryDir::new("memory");
        fx.write("keep.md", "disk\n");
        fx.write("gone.md", "bye\n");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("keep.md", "staged\n".to_owned(), "r")
            .expect("stage");
        set.stage_delete("gone.md", "r").expect("stage delete");

        assert_eq!(set.staged_content("keep.md"), Some(Some("staged\n")));
        assert_eq!(set.staged_content("gone.md"), Some(None));
        assert_eq!(set.staged_content("other.md"), None);
        assert_eq!(set.read("keep.md").expect("read"), Some("staged\n".into()));
        assert_eq!(set.read("gone.md").expect("read"), None);
        fx.write("other.md", "on disk\n");
        assert_eq!(
            set.read("other.md").expect("read"),
            Some("on disk\n".into())
        );
        assert_eq!(
            fx.read("keep.md").as_deref(),
            Some("disk\n"),
            "staging writes nothing"
        );

        let err = set
            .stage_delete("gone.md", "again")
            .expect_err("already staged away");
        assert_eq!(err.kind(), ErrorKind::NotFound);
        set.stage_write("added.md", "x\n".to_owned(), "add")
            .expect("stage add");
        set.stage_delete("added.md", "never mind")
            .expect("delete staged add");
        assert_eq!(
            set.staged_content("added.md"),
            None,
            "add then delete cancels"
        );
    }

    #[test]
    fn file_keys_outside_the_root_or_malformed_are_refused() {
        let fx = TempMemoryDir::new("memory");
        let mut set = ChangeSet::new(&fx.root);
        for (file, kind) in [
            ("../escape.md", ErrorKind::PathDenied),
            ("a/../../escape.md", ErrorKind::PathDenied),
            ("/etc/passwd", ErrorKind::PathDenied),
            ("a\\b.md", ErrorKind::InvalidInput),
            ("a\0b.md", ErrorKind::InvalidInput),
            ("", ErrorKind::InvalidInput),
            ("a//b.md", ErrorKind::InvalidInput),
            ("./a.md", ErrorKind::InvalidInput),
        ] {
            let err = set
                .stage_write(file, "x".to_owned(), "r")
                .expect_err("must be refused");
            assert_eq!(err.kind(), kind, "{file:?}: {err}");
        }
        assert!(set.is_empty());
        assert!(
            !fx.root.parent().expect("parent").join("escape.md").exists(),
            "nothing written outside"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_out_of_the_root_is_refused_at_stage_and_apply() {
        let fx = TempMemoryDir::new("memory");
        let outside = fx.root.parent().expect("parent").join("outside");
        fs::create_dir_all(&outside).expect("outside dir");
        std::os::unix::fs::symlink(&outside, fx.root.join("link")).expect("symlink");
        let mut set = ChangeSet::new(&fx.root);
        let err = set
            .stage_write("link/x.md", "x".to_owned(), "r")
            .expect_err("escapes through the link");
        assert_eq!(err.kind(), ErrorKind::PathDenied, "{err}");

        // A set planned elsewhere (e.g. loaded from staging) is checked again when applied.
        let forged = ChangeSet::from_changes(
            fx.root.clone(),
            vec![
                FileChange::between("link/x.md", None, Some("x".into()), String::new())
                    .expect("a change"),
            ],
        );
        let err = fx
            .engine
            .apply_change_set(&forged, Actor::Dream)
            .expect_err("escapes through the link");
        assert_eq!(err.kind(), ErrorKind::PathDenied, "{err}");
        assert!(!outside.join("x.md").exists());
    }

    #[test]
    fn a_conflict_on_any_file_writes_nothing_at_all() {
        let fx = TempMemoryDir::new("memory");
        fx.write("a.md", "a1\n");
        fx.write("b.md", "b1\n");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "a2\n".to_owned(), "r")
            .expect("stage a");
        set.stage_write("b.md", "b2\n".to_owned(), "r")
            .expect("stage b");
        set.stage_write("c.md", "c2\n".to_owned(), "r")
            .expect("stage c");
        fx.write("b.md", "b changed by Claude\n");

        let err = fx
            .engine
            .apply_change_set(&set, Actor::Dream)
            .expect_err("b.md moved on");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert!(err.to_string().contains("b.md"), "{err}");
        assert_eq!(fx.read("a.md").as_deref(), Some("a1\n"), "a.md untouched");
        assert_eq!(fx.read("b.md").as_deref(), Some("b changed by Claude\n"));
        assert_eq!(fx.read("c.md"), None, "c.md not created");
        let dreamed = fx
            .engine
            .history(&fx.root, None)
            .expect("history")
            .into_iter()
            .filter(|v| v.actor == Actor::Dream)
            .count();
        assert_eq!(dreamed, 0, "no version recorded for a refused set");
    }

    #[test]
    fn a_file_created_since_planning_an_add_is_a_conflict() {
        let fx = TempMemoryDir::new("memory");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("new.md", "mine\n".to_owned(), "r")
            .expect("stage");
        fx.write("new.md", "theirs\n");
        let err = fx
            .engine
            .apply_change_set(&set, Actor::Extract)
            .expect_err("someone created it");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(fx.read("new.md").as_deref(), Some("theirs\n"));
    }

    #[test]
    fn apply_writes_deletes_and_records_each_file_with_its_actor() {
        let fx = TempMemoryDir::new("memory");
        fx.write("a.md", "a1\n");
        fx.write("sub/dir/old.md", "old\n");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "a1\na2\n".to_owned(), "r")
            .expect("stage a");
        set.stage_write("b.md", "b\n".to_owned(), "r")
            .expect("stage b");
        set.stage_delete("sub/dir/old.md", "r")
            .expect("stage delete");

        let report = fx
            .engine
            .apply_change_set(&set, Actor::Dream)
            .expect("apply");
        assert!(report.all_applied(), "{report:?}");
        assert_eq!(fx.read("a.md").as_deref(), Some("a1\na2\n"));
        assert_eq!(fx.read("b.md").as_deref(), Some("b\n"));
        assert_eq!(fx.read("sub/dir/old.md"), None);
        assert!(!fx.root.join("sub").exists(), "emptied dirs are pruned");
        assert!(fx.root.is_dir(), "the root itself stays");

        let summaries: Vec<(String, Option<String>)> = report
            .files
            .iter()
            .map(|f| {
                (
                    f.file.clone(),
                    f.version
                        .as_ref()
                        .map(|v| format!("{} {}", v.actor, v.summary)),
                )
            })
            .collect();
        assert_eq!(
            summaries,
            vec![
                ("a.md".into(), Some("dream +1 \u{2212}0 lines".into())),
                ("b.md".into(), Some("dream created".into())),
                ("sub/dir/old.md".into(), Some("dream deleted".into())),
            ]
        );
        // The states before the dream, never seen by history, were kept as external versions.
        assert_eq!(fx.actors("a.md"), vec![Actor::Dream, Actor::External]);
        let a = fx.engine.history(&fx.root, Some("a.md")).expect("history");
        assert_eq!(
            fx.engine
                .version_content(&a[1].version)
                .expect("content")
                .as_deref(),
            Some("a1\n")
        );
        let json = serde_json::to_value(&report).expect("serialize");
        assert_eq!(json["files"][0]["status"], "applied");
        assert_eq!(json["actor"], "dream");
    }

    #[test]
    fn a_change_set_whose_kind_contradicts_its_content_is_refused() {
        let fx = TempMemoryDir::new("memory");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "x\n".to_owned(), "r")
            .expect("stage");
        set.changes[0].kind = ChangeKind::Delete;
        let err = fx
            .engine
            .apply_change_set(&set, Actor::Dream)
            .expect_err("inconsistent");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(fx.read("a.md"), None);
    }

    #[test]
    fn change_sets_round_trip_through_json_in_camel_case() {
        let fx = TempMemoryDir::new("memory");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "x\n".to_owned(), "why")
            .expect("stage");
        let json = serde_json::to_value(&set).expect("serialize");
        assert_eq!(json["changes"][0]["kind"], "add");
        assert_eq!(json["changes"][0]["before"], serde_json::Value::Null);
        let back: ChangeSet = serde_json::from_value(json).expect("deserialize");
        assert_eq!(back, set);
    }

    #[test]
    fn summary_counts_files_and_lines() {
        let fx = TempMemoryDir::new("memory");
        fx.write("a.md", "1\n2\n");
        fx.write("b.md", "gone\n");
        let mut set = ChangeSet::new(&fx.root);
        assert_eq!(set.summary(), "no changes");
        set.stage_write("a.md", "1\n3\n4\n".to_owned(), "r")
            .expect("stage");
        assert_eq!(set.summary(), "1 file: 1 modified (+2 \u{2212}1 lines)");
        set.stage_delete("b.md", "r").expect("stage delete");
        set.stage_write("c.md", "new\n".to_owned(), "r")
            .expect("stage add");
        assert_eq!(
            set.summary(),
            "3 files: 1 added, 1 modified, 1 deleted (+3 \u{2212}2 lines)"
        );
    }

    #[test]
    fn a_save_over_a_file_changed_on_disk_is_refused_with_both_sides_available() {
        let fx = TempMemoryDir::new("memory");
        fx.write("a.md", "opened\n");
        fx.write("a.md", "changed by Claude\n");
        let err = fx
            .engine
            .write_memory_file_checked(&fx.root, "a.md", "my edit\n", Some("opened\n"), Actor::User)
            .expect_err("disk moved on");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(fx.read("a.md").as_deref(), Some("changed by Claude\n"));

        let details = fx
            .engine
            .conflict_details(&fx.root, "a.md", "my edit\n")
            .expect("details");
        assert_eq!(details.disk.as_deref(), Some("changed by Claude\n"));
        assert_eq!(details.mine, "my edit\n");
        assert!(
            details.diff.contains("-changed by Claude\n+my edit\n"),
            "{}",
            details.diff
        );

        let version = fx
            .engine
            .write_memory_file_checked(
                &fx.root,
                "a.md",
                "my edit\n",
                Some("changed by Claude\n"),
                Actor::User,
            )
            .expect("save over what is really there")
            .expect("a version");
        assert_eq!(version.actor, Actor::User);
        assert_eq!(fx.read("a.md").as_deref(), Some("my edit\n"));

        let err = fx
            .engine
            .write_memory_file_checked(&fx.root, "b.md", "new\n", None, Actor::User)
            .map(|_| ())
            .and_then(|()| {
                fx.engine
                    .write_memory_file_checked(&fx.root, "b.md", "again\n", None, Actor::User)
            })
            .expect_err("the editor believed b.md did not exist");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(fx.read("b.md").as_deref(), Some("new\n"));
    }
}
