//! Staged change sets: what a dream, an extraction or a snapshot merge proposes, kept in Engram's
//! data dir (`<engram home>/staging/<id>.json`, never in a memory dir) until the person accepts
//! or rejects it file by file — and, once applied, undone as one.
//!
//! Contract:
//! - A staged set is written whole and atomically; every update (apply, reject, undo) happens
//!   under one lock (`staging/lock`), so the CLI and the app never lose each other's decisions.
//! - Applying re-checks each file against the disk first: a file whose base changed since the run
//!   read it becomes a `conflict` (nothing overwritten; both sides stay available), the others
//!   land through [`Engine::apply_change_set_of`], each version naming the set's id.
//! - A change that deletes or rewrites a `user` or `feedback` memory is applied only when the
//!   caller says the person approved it (`include_protected`): a policy never does.
//! - Undo writes back each applied file's planned-on content, through a change set like any
//!   other: a topic file changed since is a conflict, an index is merged (lines added by others
//!   since are kept).
//! - A staged set is input, not trusted state: anyone who can write `staging/` can edit its
//!   `memoryDir`. So applying, undoing, rejecting (when it writes a snapshot marker) and showing
//!   a conflict first derive the memory dir from the set's `project` and `source` — Claude Code's
//!   default place for the project, the auto-memory dir its working dir resolves to, or its agent
//!   memory dirs, for a project Claude Code lists — or take the one the person names
//!   (`--memory-dir`), and refuse a set whose `memoryDir` is not that dir. Files are written
//!   under the derived dir, never under the JSON's; a snapshot marker only as
//!   `.snapshot-synced.json` in it.

use std::fs;
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;
use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::changeset::{base_holds, ApplyStatus, ChangeSet, FileChange};
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::index::is_index_file;
use crate::paths::{local_scope_agent_memory, project_scope_agent_memory, SYNC_MARKER};
use crate::staleness::iso_time;

/// What produced a staged change set.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeSource {
    Dream,
    Extract,
    Snapshot,
    /// Team sync: a teammate's change that met a local one (a conflict to decide).
    Team,
    /// Memory recovered from a stranded store (one no session loads any more).
    Stranded,
    /// Secrets replaced by `[REDACTED:<rule>]`, on the person's request.
    Redaction,
    /// Claude Code's own dream, recorded as it happened (already applied; reviewable and
    /// undoable as one).
    #[serde(rename = "claude-dream")]
    ClaudeDream,
    /// An agent's `memory_remember` through Engram's MCP server.
    Mcp,
    /// Personal sync: this person's change on another machine that met a local one.
    Sync,
}

impl ChangeSource {
    /// Who history names for the files it applies.
    pub fn actor(self) -> Actor {
        match self {
            ChangeSource::Dream => Actor::Dream,
            ChangeSource::Extract => Actor::Extract,
            ChangeSource::Snapshot => Actor::Snapshot,
            ChangeSource::Team => Actor::Team,
            // Taking stranded memory back is the person's own decision.
            ChangeSource::Stranded | ChangeSource::Redaction => Actor::User,
            ChangeSource::ClaudeDream => Actor::ClaudeDream,
            ChangeSource::Mcp => Actor::Mcp,
            ChangeSource::Sync => Actor::Sync,
        }
    }
}

/// Where one file of a staged set stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    /// Waiting for the person.
    Pending,
    Applied,
    Rejected,
    /// The file changed on disk since the run read it; nothing was written.
    Conflict,
    /// The write itself failed (disk full, permissions); see `error`.
    Failed,
    /// Applied, then undone.
    Undone,
}

/// Where a staged set stands, derived from its files.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SetStatus {
    /// Some file still waits (pending, conflict or failed).
    Pending,
    /// Every file was decided and at least one applied.
    Applied,
    /// Every file was rejected.
    Rejected,
    /// Applied, then undone.
    Undone,
}

/// One file of a staged set: the planned change and what became of it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagedFile {
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub change: FileChange,
    pub status: FileStatus,
    /// The history version that applied it.
    pub version: Option<String>,
    pub error: Option<String>,
}

/// A change set waiting for review, or reviewed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagedChangeSet {
    /// `c` + 8 of `[0-9a-z]`.
    pub id: String,
    pub source: ChangeSource,
    /// The project's folder name under `<claude home>/projects/`.
    pub project: String,
    pub memory_dir: PathBuf,
    /// ISO 8601, UTC.
    pub created_at: String,
    pub status: SetStatus,
    /// One line: what the run did.
    pub summary: String,
    /// The run that produced it (a dream's task id), when there was one.
    pub task_id: Option<String>,
    pub files: Vec<StagedFile>,
    /// A snapshot merge's marker, written once no file waits any more (every file decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub marker: Option<SyncMarker>,
    /// The files an apply is writing, saved before its first write and cleared when it ends:
    /// still there once no apply runs, the apply was killed part way, and
    /// [`Engine::finish_interrupted_applies`] lands the rest. Engram's own bookkeeping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub applying: Option<Vec<String>>,
}

/// The `.snapshot-synced.json` a snapshot merge writes when it is decided (`FORMATS.md` §1).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncMarker {
    pub path: PathBuf,
    pub synced_from: String,
    /// Written already.
    #[serde(default)]
    pub written: bool,
}

impl StagedChangeSet {
    fn refresh_status(&mut self) {
        if self.files.is_empty() {
            return;
        }
        let has = |s: FileStatus| self.files.iter().any(|f| f.status == s);
        // A file that still waits keeps the set waiting, even once what was applied is undone:
        // otherwise the set would leave every "to review" list with decisions still open.
        self.status =
            if has(FileStatus::Pending) || has(FileStatus::Conflict) || has(FileStatus::Failed) {
                SetStatus::Pending
            } else if has(FileStatus::Undone) && !has(FileStatus::Applied) {
                SetStatus::Undone
            } else if has(FileStatus::Applied) {
                SetStatus::Applied
            } else {
                SetStatus::Rejected
            };
    }

    /// Whether `file` is selected by `files` (empty: every file).
    fn selects(files: &[String], file: &str) -> bool {
        files.is_empty() || files.iter().any(|f| f == file)
    }

    /// Files named in `files` that the set does not hold, as an error.
    fn check_names(&self, files: &[String]) -> Result<()> {
        match files
            .iter()
            .find(|name| !self.files.iter().any(|f| &f.change.file == *name))
        {
            Some(name) => Err(Error::InvalidInput(format!(
                "{name}: not a file of change set {}",
                self.id
            ))),
            None => Ok(()),
        }
    }

    /// The files among `files` (every file when empty) that are in conflict or failed: what an
    /// apply of them could not land.
    pub fn unlanded<'a>(&'a self, files: &'a [String]) -> impl Iterator<Item = &'a StagedFile> {
        self.files.iter().filter(move |f| {
            StagedChangeSet::selects(files, &f.change.file)
                && matches!(f.status, FileStatus::Conflict | FileStatus::Failed)
        })
    }

    /// How many files still wait for the person.
    pub fn waiting(&self) -> usize {
        self.waiting_files().count()
    }

    /// The files that still wait for the person (pending, conflict or failed).
    pub fn waiting_files(&self) -> impl Iterator<Item = &StagedFile> {
        self.files.iter().filter(|f| {
            matches!(
                f.status,
                FileStatus::Pending | FileStatus::Conflict | FileStatus::Failed
            )
        })
    }
}

impl Engine {
    fn staging_dir(&self) -> PathBuf {
        self.engram_home().join("staging")
    }

    /// Keeps `set` for review as produced by `source` in `project`; every file `pending`.
    pub fn stage_change_set(
        &self,
        set: &ChangeSet,
        source: ChangeSource,
        project: &str,
        summary: &str,
        task_id: Option<&str>,
    ) -> Result<StagedChangeSet> {
        let mut staged = StagedChangeSet {
            id: crate::job::fresh_id('c'),
            source,
            project: project.to_owned(),
            memory_dir: set.root.clone(),
            created_at: iso_time(self.clock().now()),
            status: SetStatus::Pending,
            summary: summary.to_owned(),
            task_id: task_id.map(str::to_owned),
            marker: None,
            applying: None,
            files: set
                .changes
                .iter()
                .map(|change| StagedFile {
                    change: change.clone(),
                    status: FileStatus::Pending,
                    version: None,
                    error: None,
                })
                .collect(),
        };
        staged.refresh_status();
        let _lock = self.lock_staging()?;
        self.save_staged(&staged)?;
        Ok(staged)
    }

    /// Every staged set, newest first. A file that cannot be read is skipped, not fatal.
    pub fn staged_change_sets(&self) -> Result<Vec<StagedChangeSet>> {
        let dir = self.staging_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        let mut sets: Vec<StagedChangeSet> = entries
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .filter_map(|path| read_staged(&path).ok())
            .collect();
        sets.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(sets)
    }

    /// The staged set `id`; [`Error::NotFound`] if there is none.
    pub fn staged_change_set(&self, id: &str) -> Result<StagedChangeSet> {
        read_staged(&self.staged_path(id)?)
    }

    /// Applies the waiting files of set `id` (those named in `files`; all when empty), as the
    /// set's source, in its memory dir — `memory_dir` when the caller names it, else the one
    /// derived from its project (see the module docs). Protected changes are applied only with
    /// `include_protected` (the person approved them); otherwise they stay pending. Returns the
    /// set as it now stands.
    pub fn apply_staged(
        &self,
        id: &str,
        files: &[String],
        include_protected: bool,
        memory_dir: Option<&Path>,
    ) -> Result<StagedChangeSet> {
        let _lock = self.lock_staging()?;
        let staged = self.staged_change_set(id)?;
        self.apply_staged_locked(staged, files, include_protected, memory_dir)
    }

    /// [`Engine::apply_staged`] once the staging lock is held and the set read under it.
    fn apply_staged_locked(
        &self,
        mut staged: StagedChangeSet,
        files: &[String],
        include_protected: bool,
        memory_dir: Option<&Path>,
    ) -> Result<StagedChangeSet> {
        staged.check_names(files)?;
        let root = self.staged_memory_dir(&staged, memory_dir)?;
        check_marker(&staged, &root)?;
        let mut selected: Vec<usize> = (0..staged.files.len())
            .filter(|&i| {
                let f = &staged.files[i];
                StagedChangeSet::selects(files, &f.change.file)
                    && matches!(
                        f.status,
                        FileStatus::Pending | FileStatus::Conflict | FileStatus::Failed
                    )
                    && (include_protected || !f.change.touches_protected_memory())
            })
            .collect();
        if !include_protected {
            // An index edit that drops the line of a protected change held back here is held
            // back with it: otherwise the memory would vanish from the index (Claude Code's
            // view of it) before anyone approved its deletion.
            let held: Vec<&str> = staged
                .files
                .iter()
                .filter(|f| f.change.touches_protected_memory())
                .map(|f| f.change.file.as_str())
                .collect();
            selected.retain(|&i| !drops_line_of(&staged.files[i].change, &held));
        }
        // A file that already holds what this change writes landed in an apply that was stopped
        // (killed) before it could say so: it is applied, not a conflict — so applying again
        // finishes the set. Then a base that moved since the run read it is a conflict: that
        // file is not written.
        selected.retain(|&i| {
            let file = &mut staged.files[i];
            if !is_index_file(&file.change.file)
                && disk_holds(&root, &file.change.file, file.change.after.as_deref())
            {
                file.status = FileStatus::Applied;
                file.error = None;
                return false;
            }
            match disk::confined_path(&root, &file.change.file)
                .and_then(|path| base_holds(&path, &file.change))
            {
                Ok(true) => true,
                Ok(false) => {
                    file.status = FileStatus::Conflict;
                    file.error = Some("changed on disk since the run read it".to_owned());
                    false
                }
                Err(e) => {
                    file.status = FileStatus::Failed;
                    file.error = Some(e.to_string());
                    false
                }
            }
        });
        if !selected.is_empty() {
            // Written down before the first write: a kill part way leaves the set saying so.
            staged.applying = Some(
                selected
                    .iter()
                    .map(|&i| staged.files[i].change.file.clone())
                    .collect(),
            );
            self.save_staged(&staged)?;
            staged.applying = None;
            let set = ChangeSet::from_changes(
                root.clone(),
                selected
                    .iter()
                    .map(|&i| staged.files[i].change.clone())
                    .collect(),
            );
            match self.apply_change_set_of(&set, staged.source.actor(), Some(&staged.id)) {
                Ok(report) => {
                    for (&i, applied) in selected.iter().zip(report.files) {
                        let file = &mut staged.files[i];
                        file.status = match applied.status {
                            ApplyStatus::Applied => FileStatus::Applied,
                            ApplyStatus::Failed => FileStatus::Failed,
                        };
                        file.version = applied.version.map(|v| v.version);
                        file.error = applied.error;
                    }
                }
                // Moved between the check above and the write: that file waits again.
                Err(Error::Conflict(path)) => {
                    for &i in &selected {
                        let file = &mut staged.files[i];
                        if root.join(&file.change.file) == path {
                            file.status = FileStatus::Conflict;
                            file.error = Some("changed on disk since the run read it".to_owned());
                        }
                    }
                }
                Err(e) => {
                    // Nothing landed (the apply stops before its first write on any error):
                    // no apply is under way any more.
                    staged.refresh_status();
                    self.save_staged(&staged)?;
                    return Err(e);
                }
            }
        }
        staged.refresh_status();
        // What was applied is saved even if the marker cannot be written.
        let marker = write_marker_when_decided(&mut staged, &root);
        self.save_staged(&staged)?;
        marker?;
        Ok(staged)
    }

    /// Lands the rest of every apply into `memory_dir` that was killed part way (its set still
    /// names the files it was writing): the files already written are marked applied, the
    /// others written as that apply would have, so whatever runs next — a dream planning on the
    /// dir above all — never starts from half a change set. Returns the ids of the sets it
    /// finished. A live apply holds the staging lock, so a set it is writing is seen only once
    /// it is done (and no longer names files).
    pub fn finish_interrupted_applies(&self, memory_dir: &Path) -> Result<Vec<String>> {
        let dir = disk::resolved_path(memory_dir);
        let mut finished = Vec::new();
        for staged in self.staged_change_sets()? {
            if staged.applying.is_none() || disk::resolved_path(&staged.memory_dir) != dir {
                continue;
            }
            let _lock = self.lock_staging()?;
            // Read again under the lock: an apply that was running when the list was read has
            // ended since, and cleared its files.
            let staged = self.staged_change_set(&staged.id)?;
            let Some(files) = staged.applying.clone() else {
                continue;
            };
            let id = staged.id.clone();
            // The files were chosen by the apply that was killed (protected ones only if the
            // person approved them then): exactly those, approved as then.
            self.apply_staged_locked(staged, &files, true, Some(memory_dir))?;
            finished.push(id);
        }
        Ok(finished)
    }

    /// Attaches a snapshot merge's marker to set `id` (see [`StagedChangeSet::marker`]), staged
    /// just now for the agent memory dir `memory_dir`.
    pub(crate) fn attach_sync_marker(
        &self,
        id: &str,
        marker: SyncMarker,
        memory_dir: &Path,
    ) -> Result<StagedChangeSet> {
        let _lock = self.lock_staging()?;
        let mut staged = self.staged_change_set(id)?;
        staged.marker = Some(marker);
        check_marker(&staged, memory_dir)?;
        write_marker_when_decided(&mut staged, memory_dir)?;
        self.save_staged(&staged)?;
        Ok(staged)
    }

    /// Rejects the waiting files of set `id` (those named in `files`; all when empty): they are
    /// never applied. Rejecting writes no memory file, so the set's memory dir is checked (as
    /// [`Engine::apply_staged`] does, `memory_dir` naming it) only when the decision writes a
    /// snapshot merge's marker. Returns the set as it now stands.
    pub fn reject_staged(
        &self,
        id: &str,
        files: &[String],
        memory_dir: Option<&Path>,
    ) -> Result<StagedChangeSet> {
        let _lock = self.lock_staging()?;
        let mut staged = self.staged_change_set(id)?;
        staged.check_names(files)?;
        for file in &mut staged.files {
            if StagedChangeSet::selects(files, &file.change.file)
                && matches!(
                    file.status,
                    FileStatus::Pending | FileStatus::Conflict | FileStatus::Failed
                )
            {
                file.status = FileStatus::Rejected;
            }
        }
        staged.refresh_status();
        if staged.marker.as_ref().is_some_and(|m| !m.written) && staged.waiting() == 0 {
            let root = self.staged_memory_dir(&staged, memory_dir)?;
            check_marker(&staged, &root)?;
            write_marker_when_decided(&mut staged, &root)?;
        }
        self.save_staged(&staged)?;
        Ok(staged)
    }

    /// Undoes every applied file of set `id` in one change set, as the user, in its memory dir
    /// (named by `memory_dir`, else derived as [`Engine::apply_staged`] derives it). A topic file
    /// changed since it was applied is a conflict and stays as it is (the error names it); the
    /// others are undone. Returns the set as it now stands.
    pub fn undo_staged(&self, id: &str, memory_dir: Option<&Path>) -> Result<StagedChangeSet> {
        let _lock = self.lock_staging()?;
        let mut staged = self.staged_change_set(id)?;
        let root = self.staged_memory_dir(&staged, memory_dir)?;
        let applied: Vec<usize> = (0..staged.files.len())
            .filter(|&i| staged.files[i].status == FileStatus::Applied)
            .collect();
        if applied.is_empty() {
            return Err(Error::InvalidInput(format!(
                "change set {id} has nothing applied to undo"
            )));
        }
        // Files already back to what they were (an undo that was stopped midway) are undone.
        let (done, applied): (Vec<usize>, Vec<usize>) = applied.into_iter().partition(|&i| {
            let change = &staged.files[i].change;
            !is_index_file(&change.file)
                && disk_holds(&root, &change.file, change.before.as_deref())
        });
        for &i in &done {
            staged.files[i].status = FileStatus::Undone;
        }
        let mut set = ChangeSet::new(&root);
        let reason = format!("undo {id}");
        let versions: Vec<&str> = applied
            .iter()
            .filter_map(|&i| staged.files[i].version.as_deref())
            .collect();
        let recorded = self.version_contents(&versions)?;
        for &i in &applied {
            let file = &staged.files[i];
            // What was written: for an index, the merged content history recorded.
            let written = match &file.version {
                Some(version) => recorded.get(version).cloned().flatten(),
                None => file.change.after.clone(),
            };
            set.stage_over(
                &file.change.file,
                written,
                file.change.before.clone(),
                &reason,
            )?;
        }
        let report = self.apply_change_set(&set, Actor::User)?;
        report.first_failure()?;
        for &i in &applied {
            staged.files[i].status = FileStatus::Undone;
        }
        staged.refresh_status();
        self.save_staged(&staged)?;
        Ok(staged)
    }

    /// Both sides of `file` of set `id` for a conflict: what the disk holds now (in the memory
    /// dir derived from the set's project, as [`Engine::apply_staged`] derives it) against what
    /// the run planned.
    pub fn staged_conflict(&self, id: &str, file: &str) -> Result<crate::ConflictDetails> {
        let set = self.staged_change_set(id)?;
        let root = self.staged_memory_dir(&set, None)?;
        let planned = set
            .files
            .iter()
            .find(|f| f.change.file == file)
            .ok_or_else(|| Error::InvalidInput(format!("{file}: not a file of change set {id}")))?
            .change
            .after
            .clone()
            .unwrap_or_default();
        self.conflict_details(&root, file, &planned)
    }

    /// The memory dir staged set `staged` may read and write: `named` when the person names one,
    /// else one derived from the set's project and source (see the module docs) — and in both
    /// cases only if it is the dir the set says it was staged for (symlinks resolved). The set's
    /// own `memoryDir` only ever picks among these; it is never used as a path.
    fn staged_memory_dir(&self, staged: &StagedChangeSet, named: Option<&Path>) -> Result<PathBuf> {
        let claimed = disk::resolved_path(&staged.memory_dir);
        let found = match named {
            Some(dir) => (disk::resolved_path(dir) == claimed).then(|| dir.to_path_buf()),
            None => self
                .memory_dirs_of(staged, &claimed)
                .into_iter()
                .find(|dir| disk::resolved_path(dir) == claimed),
        };
        found.ok_or_else(|| {
            let id = &staged.id;
            let claimed = staged.memory_dir.display();
            Error::InvalidInput(match named {
                Some(dir) => format!(
                    "change set {id} was staged for {claimed}, not for {}: refused",
                    dir.display()
                ),
                None => format!(
                    "change set {id} names {claimed} as its memory dir, which is not a memory dir \
                     of project {:?}: refused (a staged set is applied only to a memory dir \
                     derived from its project, as Claude Code lists it, or to the one named \
                     again with --memory-dir)",
                    staged.project
                ),
            })
        })
    }

    /// The memory dirs a set of `staged`'s source may target for its project: Claude Code's
    /// default place for it and, for a project Claude Code lists, the auto-memory dir its working
    /// dir resolves to (settings overrides included) — or, for a snapshot merge or a personal
    /// sync set (user-scope agent memory syncs too), the agent
    /// memory dirs of the agent type `claimed` is named after (the user scope's, and the
    /// project's own). A stranded store may be merged into either kind. Costlier candidates are
    /// computed only when the cheap one is not the one claimed.
    fn memory_dirs_of(&self, staged: &StagedChangeSet, claimed: &Path) -> Vec<PathBuf> {
        // A name that is not one plain folder name (`..`, a path) derives nothing.
        let Ok(default) = self.project_memory_dir_checked(&staged.project) else {
            return Vec::new();
        };
        let auto_memory = staged.source != ChangeSource::Snapshot;
        let agent_memory = matches!(
            staged.source,
            ChangeSource::Snapshot | ChangeSource::Stranded | ChangeSource::Sync
        );
        let mut dirs = Vec::new();
        if auto_memory {
            dirs.push(default);
        }
        // An agent memory dir is named after its agent type: the claimed dir's last component
        // (always one plain name), placed where Claude Code keeps that agent's memory.
        let agent = claimed.file_name().filter(|_| agent_memory);
        if let Some(agent) = agent {
            dirs.push(self.user_scope_agent_memory().join(agent));
        }
        if dirs.iter().any(|dir| disk::resolved_path(dir) == claimed) {
            return dirs;
        }
        if let Some(cwd) = self.listed_project_path(&staged.project) {
            if auto_memory {
                if let Ok(resolution) = self.resolve_memory_dir(&cwd) {
                    dirs.push(resolution.memory_dir);
                }
            }
            if let Some(agent) = agent {
                dirs.push(project_scope_agent_memory(&cwd).join(agent));
                dirs.push(local_scope_agent_memory(&cwd).join(agent));
            }
        }
        dirs
    }

    /// The change sets waiting for review, by project folder name.
    pub fn waiting_change_sets(&self) -> Result<Vec<StagedChangeSet>> {
        Ok(self
            .staged_change_sets()?
            .into_iter()
            .filter(|s| s.status == SetStatus::Pending)
            .collect())
    }

    /// The record of Claude Code's dream `key` (its lock's holder and start) on `root`: found, or
    /// created empty. Its id is what the watcher names on the versions it records meanwhile.
    pub(crate) fn claude_dream_record(&self, root: &Path, key: &str) -> Result<String> {
        let _lock = self.lock_staging()?;
        if let Some(existing) = self
            .staged_change_sets()?
            .into_iter()
            .find(|s| s.source == ChangeSource::ClaudeDream && s.task_id.as_deref() == Some(key))
        {
            return Ok(existing.id);
        }
        let project = root
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let staged = StagedChangeSet {
            id: crate::job::fresh_id('c'),
            source: ChangeSource::ClaudeDream,
            project,
            memory_dir: root.to_path_buf(),
            created_at: iso_time(self.clock().now()),
            status: SetStatus::Applied,
            summary: "Claude Code's own dream, recorded while it held the consolidation lock"
                .to_owned(),
            task_id: Some(key.to_owned()),
            files: Vec::new(),
            marker: None,
            applying: None,
        };
        self.save_staged(&staged)?;
        Ok(staged.id)
    }

    /// Adds what Claude Code's dream just changed to its record `id`: per file, the content
    /// before its first change and after its latest, as applied changes (so undo can put the
    /// whole dream back).
    pub(crate) fn add_to_claude_dream(&self, id: &str, changes: Vec<ObservedChange>) -> Result<()> {
        let _lock = self.lock_staging()?;
        let mut staged = self.staged_change_set(id)?;
        for change in changes {
            let at = staged
                .files
                .iter()
                .position(|f| f.change.file == change.file);
            let before = match at {
                Some(i) => staged.files[i].change.before.clone(),
                None => change.before,
            };
            let reason = "changed by Claude Code's own dream".to_owned();
            match (
                FileChange::between(&change.file, before, change.after, reason),
                at,
            ) {
                (Some(planned), Some(i)) => {
                    staged.files[i].change = planned;
                    staged.files[i].version = change.version;
                }
                (Some(planned), None) => staged.files.push(StagedFile {
                    change: planned,
                    status: FileStatus::Applied,
                    version: change.version,
                    error: None,
                }),
                (None, Some(i)) => {
                    staged.files.remove(i);
                }
                (None, None) => {}
            }
        }
        staged.refresh_status();
        self.save_staged(&staged)
    }

    fn staged_path(&self, id: &str) -> Result<PathBuf> {
        let valid = id.len() == 9
            && id.starts_with('c')
            && id[1..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
        if !valid {
            return Err(Error::NotFound(PathBuf::from(id)));
        }
        Ok(self.staging_dir().join(format!("{id}.json")))
    }

    fn save_staged(&self, staged: &StagedChangeSet) -> Result<()> {
        let path = self.staged_path(&staged.id)?;
        let json = serde_json::to_vec_pretty(staged)
            .map_err(|e| Error::InvalidInput(format!("{}: cannot encode: {e}", path.display())))?;
        disk::atomic_write(&path, &json)
    }

    fn lock_staging(&self) -> Result<fs::File> {
        let path = self.staging_dir().join("lock");
        let file = disk::open_lock_file(&path).at(&path)?;
        file.lock_exclusive().at(&path)?;
        Ok(file)
    }
}

/// A change the watcher saw while Claude Code's dream held the lock.
pub(crate) struct ObservedChange {
    pub file: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub version: Option<String>,
}

fn read_staged(path: &Path) -> Result<StagedChangeSet> {
    let text = disk::read_text(path)?;
    serde_json::from_str(&text).map_err(|e| Error::parse(path, Some(e.line()), e.to_string()))
}

/// Whether `change` is an index edit that removes the line of one of `files` (relative to the
/// memory dir) which its previous content had.
fn drops_line_of(change: &crate::changeset::FileChange, files: &[&str]) -> bool {
    if files.is_empty() || !is_index_file(&change.file) {
        return false;
    }
    let dir = crate::index::parent_of(&change.file);
    let linked = |text: Option<&str>| -> Vec<String> {
        crate::index::parse_entries(text.unwrap_or(""))
            .into_iter()
            .map(|e| crate::index::join_rel(dir, &e.file))
            .collect()
    };
    let (before, after) = (
        linked(change.before.as_deref()),
        linked(change.after.as_deref()),
    );
    files
        .iter()
        .any(|file| before.iter().any(|b| b == file) && !after.iter().any(|a| a == file))
}

/// Whether `file` under `root` holds exactly `content` (`None`: is absent).
fn disk_holds(root: &Path, file: &str, content: Option<&str>) -> bool {
    disk::confined_path(root, file)
        .and_then(|path| disk::read_optional(&path))
        .is_ok_and(|on_disk| on_disk.as_deref() == content)
}

/// Refuses `staged`'s marker unless it is a snapshot merge's `.snapshot-synced.json` in `root`
/// (the set's memory dir, checked): the marker's path comes from the staged JSON, so it is only
/// compared, and checked before anything is applied.
fn check_marker(staged: &StagedChangeSet, root: &Path) -> Result<()> {
    let Some(marker) = staged.marker.as_ref().filter(|m| !m.written) else {
        return Ok(());
    };
    let path = root.join(SYNC_MARKER);
    if staged.source != ChangeSource::Snapshot
        || disk::resolved_path(&marker.path) != disk::resolved_path(&path)
    {
        return Err(Error::InvalidInput(format!(
            "change set {}: its marker {} is not {}: refused",
            staged.id,
            marker.path.display(),
            path.display()
        )));
    }
    Ok(())
}

/// Writes a snapshot merge's `.snapshot-synced.json` into `root` (checked by [`check_marker`])
/// once no file of `staged` waits: the person has decided every file, so the snapshot counts as
/// merged (rejected files included — that was their decision) and Claude Code stops prompting
/// for it.
fn write_marker_when_decided(staged: &mut StagedChangeSet, root: &Path) -> Result<()> {
    let decided = staged.waiting() == 0;
    if let Some(marker) = staged.marker.as_mut().filter(|m| !m.written && decided) {
        let json = serde_json::json!({ "syncedFrom": marker.synced_from }).to_string();
        disk::atomic_write(&root.join(SYNC_MARKER), json.as_bytes())?;
        marker.written = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::TempMemoryDir;

    const USER: &str =
        "---\nname: Adrian\ndescription: who the user is\ntype: user\n---\nSenior engineer.\n";

    /// A dir with an index, a project memory and a user memory, and a dream's proposal: add a
    /// memory (and its line), rewrite the project memory, delete the user memory (protected).
    fn proposal(fx: &TempMemoryDir) -> ChangeSet {
        fx.write(
            "MEMORY.md",
            "# Memory\n\n- [Plan](plan.md) \u{2014} the plan\n- [Adrian](user.md) \u{2014} who\n",
        );
        fx.write(
            "plan.md",
            "---\nname: Plan\ndescription: the plan\ntype: project\n---\nShip it yesterday.\n",
        );
        fx.write("user.md", USER);
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write(
            "plan.md",
            "---\nname: Plan\ndescription: the plan\ntype: project\n---\nShip it 2026-11-17.\n"
                .to_owned(),
            "relative date made absolute",
        )
        .expect("stage");
        set.stage_write(
            "new.md",
            "---\nname: New\ndescription: new\ntype: project\n---\nx\n".to_owned(),
            "merged from sessions",
        )
        .expect("stage");
        set.stage_write(
            "MEMORY.md",
            "# Memory\n\n- [Plan](plan.md) \u{2014} the plan\n- [New](new.md) \u{2014} new\n"
                .to_owned(),
            "index",
        )
        .expect("stage");
        set.stage_delete("user.md", "contradicted").expect("stage");
        set
    }

    /// An apply or an undo killed midway left some files written and the set not updated: doing
    /// it again finishes it — the files already written count as done, not as conflicts.
    #[test]
    fn applying_or_undoing_again_after_a_stopped_run_finishes_it() {
        let fx = TempMemoryDir::new("memory");
        let set = proposal(&fx);
        let staged = fx
            .engine
            .stage_change_set(&set, ChangeSource::Dream, "-p", "4 files", None)
            .expect("stage");
        // A stopped apply: plan.md landed, nothing was recorded.
        let plan = staged
            .files
            .iter()
            .find(|f| f.change.file == "plan.md")
            .expect("plan");
        fx.write("plan.md", plan.change.after.as_deref().expect("after"));
        let done = fx
            .engine
            .apply_staged(&staged.id, &[], true, Some(&fx.root))
            .expect("apply again");
        assert!(
            done.files.iter().all(|f| f.status == FileStatus::Applied),
            "{:?}",
            done.files
                .iter()
                .map(|f| (&f.change.file, f.status, &f.error))
                .collect::<Vec<_>>()
        );
        // A stopped undo: plan.md is back, the set still says applied.
        fx.write("plan.md", plan.change.before.as_deref().expect("before"));
        let undone = fx
            .engine
            .undo_staged(&staged.id, Some(&fx.root))
            .expect("undo again");
        assert!(undone.files.iter().all(|f| f.status == FileStatus::Undone));
        assert_eq!(fx.read("plan.md").as_deref(), plan.change.before.as_deref());
        assert!(fx.read("new.md").is_none());
    }

    /// An apply killed part way (its set still names the files it was writing) is finished by
    /// the next caller of `finish_interrupted_applies` — exactly those files, the protected one
    /// it held back still waiting — while a set that only waits for review is left alone.
    #[test]
    fn an_apply_killed_part_way_is_finished_before_anything_plans_on_the_dir() {
        let fx = TempMemoryDir::new("memory");
        let waiting = fx
            .engine
            .stage_change_set(&proposal(&fx), ChangeSource::Dream, "-p", "4 files", None)
            .expect("stage");
        let mut killed = fx
            .engine
            .stage_change_set(&proposal(&fx), ChangeSource::Dream, "-p", "4 files", None)
            .expect("stage");
        // What `apply_staged` writes down before its first write, policy-style (the protected
        // user.md held back), then plan.md landed and the process died.
        killed.applying = Some(vec![
            "plan.md".to_owned(),
            "new.md".to_owned(),
            "MEMORY.md".to_owned(),
        ]);
        fx.engine.save_staged(&killed).expect("save");
        let plan = killed
            .files
            .iter()
            .find(|f| f.change.file == "plan.md")
            .expect("plan");
        fx.write("plan.md", plan.change.after.as_deref().expect("after"));
        assert!(fx.read("new.md").is_none());

        let finished = fx
            .engine
            .finish_interrupted_applies(&fx.root)
            .expect("finish");
        assert_eq!(finished, vec![killed.id.clone()]);
        let now = fx.engine.staged_change_set(&killed.id).expect("read");
        assert_eq!(now.applying, None, "no apply is under way any more");
        let status = |set: &StagedChangeSet, file: &str| {
            set.files
                .iter()
                .find(|f| f.change.file == file)
                .map(|f| f.status)
        };
        for file in ["plan.md", "new.md", "MEMORY.md"] {
            assert_eq!(status(&now, file), Some(FileStatus::Applied), "{file}");
        }
        assert_eq!(status(&now, "user.md"), Some(FileStatus::Pending));
        assert!(fx.read("user.md").is_some(), "never approved: not deleted");
        assert!(fx.read("new.md").is_some());
        assert!(fx
            .read("MEMORY.md")
            .is_some_and(|index| index.contains("(new.md)")));

        let untouched = fx.engine.staged_change_set(&waiting.id).expect("read");
        assert!(untouched
            .files
            .iter()
            .all(|f| f.status == FileStatus::Pending));
        assert_eq!(
            fx.engine
                .finish_interrupted_applies(&fx.root)
                .expect("again"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_staged_set_waits_is_applied_file_by_file_and_protected_changes_need_approval() {
        let fx = TempMemoryDir::new("memory");
        let set = proposal(&fx);
        let staged = fx
            .engine
            .stage_change_set(
                &set,
                ChangeSource::Dream,
                "-p",
                "4 files",
                Some("dabcdefgh"),
            )
            .expect("stage");
        assert_eq!(staged.status, SetStatus::Pending);
        assert!(
            staged.id.starts_with('c') && staged.id.len() == 9,
            "{}",
            staged.id
        );
        let protected: Vec<&str> = staged
            .files
            .iter()
            .filter(|f| f.change.protected)
            .map(|f| f.change.file.as_str())
            .collect();
        assert_eq!(
            protected,
            vec!["user.md"],
            "deleting a user memory is protected"
        );
        assert_eq!(
            fx.read("plan.md")
                .as_deref()
                .map(|t| t.contains("yesterday")),
            Some(true),
            "staging writes nothing"
        );

        // Everything the policy may apply: the protected delete stays pending.
        let after = fx
            .engine
            .apply_staged(&staged.id, &[], false, Some(&fx.root))
            .expect("apply");
        assert!(fx.read("plan.md").expect("plan").contains("2026-11-17"));
        assert!(fx.read("new.md").is_some());
        assert_eq!(
            fx.read("user.md").as_deref(),
            Some(USER),
            "protected: not deleted"
        );
        let status = |s: &StagedChangeSet, f: &str| {
            s.files
                .iter()
                .find(|x| x.change.file == f)
                .expect("file")
                .status
        };
        assert_eq!(status(&after, "user.md"), FileStatus::Pending);
        assert_eq!(
            status(&after, "MEMORY.md"),
            FileStatus::Pending,
            "the index edit dropping user.md's line waits with the delete"
        );
        assert!(
            fx.read("MEMORY.md").expect("index").contains("(user.md)"),
            "the memory stays in the index until its deletion is approved"
        );
        assert_eq!(after.status, SetStatus::Pending, "files still wait");
        let dream_versions: Vec<_> = fx
            .engine
            .history(&fx.root, None)
            .expect("history")
            .into_iter()
            .filter(|v| v.actor == Actor::Dream)
            .collect();
        assert_eq!(dream_versions.len(), 2);
        assert!(
            dream_versions
                .iter()
                .all(|v| v.change_set.as_deref() == Some(staged.id.as_str())),
            "every version names its change set"
        );

        // The person rejects the delete and the index edit that went with it: the set is decided.
        let after = fx
            .engine
            .reject_staged(
                &staged.id,
                &["user.md".to_owned(), "MEMORY.md".to_owned()],
                Some(&fx.root),
            )
            .expect("reject");
        assert_eq!(after.status, SetStatus::Applied);
        assert_eq!(
            fx.engine.staged_change_set(&staged.id).expect("read back"),
            after
        );
    }

    #[test]
    fn a_base_edited_between_run_and_apply_is_a_conflict_and_loses_nothing() {
        let fx = TempMemoryDir::new("memory");
        let set = proposal(&fx);
        let staged = fx
            .engine
            .stage_change_set(&set, ChangeSource::Dream, "-p", "s", None)
            .expect("stage");
        fx.write("plan.md", "edited by hand\n");
        // Claude Code adds a line to the index meanwhile: the index still merges.
        let index = fx.read("MEMORY.md").expect("index") + "- [Other](other.md) \u{2014} o\n";
        fx.write("MEMORY.md", &index);
        let after = fx
            .engine
            .apply_staged(&staged.id, &[], true, Some(&fx.root))
            .expect("apply");
        let plan = after
            .files
            .iter()
            .find(|f| f.change.file == "plan.md")
            .expect("plan");
        assert_eq!(plan.status, FileStatus::Conflict);
        assert_eq!(
            fx.read("plan.md").as_deref(),
            Some("edited by hand\n"),
            "nothing overwritten"
        );
        let merged = fx.read("MEMORY.md").expect("index");
        assert!(
            merged.contains("(other.md)") && merged.contains("(new.md)"),
            "{merged}"
        );
        assert!(!merged.contains("(user.md)"), "{merged}");
        assert_eq!(after.status, SetStatus::Pending, "the conflict still waits");
    }

    /// A memory dir in Claude Code's default place (`<claude home>/projects/-home-u-app/memory`)
    /// and an engine whose Claude home is the fixture's, so sets of project `-home-u-app` derive
    /// their memory dir as the app and `engram changes` do: without naming it.
    fn project_fixture() -> (TempMemoryDir, Engine) {
        let fx = TempMemoryDir::project();
        let engine = Engine::builder(crate::environment::Environment::empty())
            .claude_home(fx.temp.path().canonicalize().expect("canonical temp"))
            .engram_home(fx.temp.path().join("engram"))
            .build();
        (fx, engine)
    }

    /// Rewrites set `id` on disk as someone with write access to `staging/` could.
    fn tamper(engine: &Engine, id: &str, edit: impl FnOnce(&mut StagedChangeSet)) {
        let mut set = engine.staged_change_set(id).expect("set");
        edit(&mut set);
        engine.save_staged(&set).expect("save");
    }

    #[test]
    fn a_conflict_shows_the_disk_against_what_the_run_planned() {
        let (fx, engine) = project_fixture();
        let set = proposal(&fx);
        let staged = engine
            .stage_change_set(&set, ChangeSource::Dream, "-home-u-app", "s", None)
            .expect("stage");
        fx.write("plan.md", "edited by hand\n");
        let details = engine
            .staged_conflict(&staged.id, "plan.md")
            .expect("details");
        assert_eq!(details.disk.as_deref(), Some("edited by hand\n"));
        assert!(details.mine.contains("2026-11-17"), "{}", details.mine);
        let err = engine
            .staged_conflict(&staged.id, "other.md")
            .expect_err("not in the set");
        assert!(err.to_string().contains("other.md"), "{err}");

        // Aimed elsewhere, the conflict view reads nothing there.
        let outside = fx.temp.path().join("outside");
        fs::create_dir_all(&outside).expect("outside");
        fs::write(outside.join("plan.md"), "private\n").expect("private");
        tamper(&engine, &staged.id, |set| set.memory_dir = outside.clone());
        let err = engine
            .staged_conflict(&staged.id, "plan.md")
            .expect_err("not the project's memory dir");
        assert!(err.to_string().contains("refused"), "{err}");
    }

    /// The memory dir a set is applied in is derived from its project, never read from its JSON:
    /// Claude Code's default place, the dir the project's trusted settings put its memory in, or
    /// the one the person names; a set claiming another dir is refused and writes nothing.
    #[test]
    fn a_set_is_applied_only_in_a_memory_dir_derived_from_its_project() {
        let (fx, engine) = project_fixture();
        let home = fx.temp.path().canonicalize().expect("canonical temp");
        let outside = home.join("outside");
        fs::create_dir_all(&outside).expect("outside");
        fs::write(outside.join("user.md"), USER).expect("a file the set would delete");
        let staged = engine
            .stage_change_set(
                &proposal(&fx),
                ChangeSource::Dream,
                "-home-u-app",
                "s",
                None,
            )
            .expect("stage");
        for claimed in [
            outside.clone(),
            fx.root.join("../../../outside"),
            home.join(".ssh"),
        ] {
            tamper(&engine, &staged.id, |set| set.memory_dir = claimed.clone());
            let err = engine
                .apply_staged(&staged.id, &[], true, None)
                .expect_err("not the project's memory dir");
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput, "{err}");
            assert!(
                err.to_string().contains(&claimed.display().to_string()),
                "{err}"
            );
            let err = engine
                .apply_staged(&staged.id, &[], true, Some(&fx.root))
                .expect_err("not the dir the person named");
            assert!(err.to_string().contains("refused"), "{err}");
        }
        assert_eq!(
            fs::read_to_string(outside.join("user.md")).ok().as_deref(),
            Some(USER)
        );
        assert_eq!(fs::read_dir(&outside).expect("outside").count(), 1);
        assert!(!home.join(".ssh").exists());
        assert!(fx.read("new.md").is_none(), "nothing applied anywhere");

        // As staged (the name spelled through `..` resolves to the same dir): applied.
        tamper(&engine, &staged.id, |set| {
            set.memory_dir = fx.root.join("../memory");
        });
        let applied = engine
            .apply_staged(&staged.id, &[], true, None)
            .expect("the project's own memory dir");
        assert_eq!(applied.status, SetStatus::Applied);
        assert!(fx.read("new.md").is_some());
        let undone = engine.undo_staged(&staged.id, None).expect("undo");
        assert_eq!(undone.status, SetStatus::Undone);

        // A project whose local settings put its memory elsewhere (listed by its transcripts):
        // that dir is derived too, under the project's transcripts folder name.
        let cwd = home.join("work");
        let notes = home.join("notes");
        let name = crate::paths::sanitize_path(&cwd.to_string_lossy());
        let transcripts = home.join("projects").join(&name);
        fs::create_dir_all(&transcripts).expect("transcripts");
        let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
            "cwd": cwd, "sessionId": "s", "message": {"role": "user", "content": "hi"}});
        fs::write(
            transcripts.join("11111111-1111-4111-8111-111111111111.jsonl"),
            format!("{line}\n"),
        )
        .expect("transcript");
        crate::testing::fixtures::write_file(
            &cwd.join(".claude/settings.local.json"),
            &serde_json::json!({ "autoMemoryDirectory": notes }).to_string(),
        );
        crate::testing::fixtures::trust_workspace(&engine, &cwd);
        assert_eq!(
            engine.resolve_memory_dir(&cwd).expect("resolve").memory_dir,
            notes,
            "the fixture's override applies"
        );
        let mut set = ChangeSet::new(&notes);
        set.stage_write("a.md", "---\nname: A\n---\na\n".to_owned(), "r")
            .expect("stage");
        let staged = engine
            .stage_change_set(&set, ChangeSource::Extract, &name, "s", None)
            .expect("stage");
        engine
            .apply_staged(&staged.id, &[], true, None)
            .expect("the project's overridden memory dir");
        assert!(notes.join("a.md").is_file());
    }

    /// A snapshot merge's marker is written only as `.snapshot-synced.json` in the agent memory
    /// dir derived from the set (checked before anything is applied); a dream set has none.
    #[test]
    fn a_marker_aimed_elsewhere_is_refused_before_anything_lands() {
        let (fx, engine) = project_fixture();
        let home = fx.temp.path().canonicalize().expect("canonical temp");
        let agent = engine.user_scope_agent_memory().join("reviewer");
        let mut set = ChangeSet::new(&agent);
        set.stage_write("style.md", "---\nname: S\n---\ns\n".to_owned(), "r")
            .expect("stage");
        let staged = engine
            .stage_change_set(&set, ChangeSource::Snapshot, "-home-u-app", "s", None)
            .expect("stage");
        let marker = |path: PathBuf| SyncMarker {
            path,
            synced_from: "2026-11-01T00:00:00Z".to_owned(),
            written: false,
        };
        let elsewhere = home.join("outside/.snapshot-synced.json");
        engine
            .attach_sync_marker(&staged.id, marker(elsewhere.clone()), &agent)
            .expect_err("attached only where it belongs");
        tamper(&engine, &staged.id, |set| {
            set.marker = Some(marker(elsewhere.clone()))
        });
        let err = engine
            .apply_staged(&staged.id, &[], true, None)
            .expect_err("marker elsewhere");
        assert!(err.to_string().contains("marker"), "{err}");
        assert!(
            !agent.join("style.md").exists(),
            "refused before anything landed"
        );
        engine
            .reject_staged(&staged.id, &[], None)
            .expect_err("a decision that writes the marker is refused too");
        assert!(!elsewhere.exists());

        // Where it belongs: applied, and the marker written there once decided.
        let path = agent.join(SYNC_MARKER);
        tamper(&engine, &staged.id, |set| {
            set.marker = Some(marker(path.clone()))
        });
        engine
            .apply_staged(&staged.id, &[], true, None)
            .expect("the user scope's agent memory dir");
        assert!(agent.join("style.md").is_file() && path.is_file());

        // A dream set carries no marker: one put there is refused.
        let staged = engine
            .stage_change_set(
                &proposal(&fx),
                ChangeSource::Dream,
                "-home-u-app",
                "s",
                None,
            )
            .expect("stage");
        tamper(&engine, &staged.id, |set| {
            set.marker = Some(marker(fx.root.join(SYNC_MARKER)));
        });
        engine
            .reject_staged(&staged.id, &[], None)
            .expect_err("not a snapshot merge");
        assert!(!fx.root.join(SYNC_MARKER).exists());
    }

    #[test]
    fn undo_restores_every_file_byte_for_byte() {
        let fx = TempMemoryDir::new("memory");
        let set = proposal(&fx);
        let before: Vec<(String, Option<String>)> = ["MEMORY.md", "plan.md", "new.md", "user.md"]
            .iter()
            .map(|f| (f.to_string(), fx.read(f)))
            .collect();
        let staged = fx
            .engine
            .stage_change_set(&set, ChangeSource::Dream, "-p", "s", None)
            .expect("stage");
        fx.engine
            .apply_staged(&staged.id, &[], true, Some(&fx.root))
            .expect("apply");
        assert_eq!(fx.read("user.md"), None, "approved delete applied");
        let undone = fx
            .engine
            .undo_staged(&staged.id, Some(&fx.root))
            .expect("undo");
        assert_eq!(undone.status, SetStatus::Undone);
        for (file, content) in before {
            assert_eq!(fx.read(&file), content, "{file} is back as it was");
        }
        let err = fx
            .engine
            .undo_staged(&staged.id, Some(&fx.root))
            .expect_err("nothing left to undo");
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
    }

    #[test]
    fn undoing_part_of_a_set_keeps_it_waiting_while_a_file_is_undecided() {
        let fx = TempMemoryDir::new("memory");
        let set = proposal(&fx);
        let staged = fx
            .engine
            .stage_change_set(&set, ChangeSource::Dream, "-p", "s", None)
            .expect("stage");
        fx.engine
            .apply_staged(&staged.id, &["plan.md".to_owned()], false, Some(&fx.root))
            .expect("apply one");
        fx.engine
            .reject_staged(&staged.id, &["new.md".to_owned()], Some(&fx.root))
            .expect("reject one");
        let undone = fx
            .engine
            .undo_staged(&staged.id, Some(&fx.root))
            .expect("undo");
        assert_eq!(
            undone.status,
            SetStatus::Pending,
            "MEMORY.md and user.md still wait: the set must stay in the review lists"
        );
        assert_eq!(
            fx.engine
                .waiting_change_sets()
                .expect("waiting")
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>(),
            vec![staged.id.as_str()]
        );
        let rest = fx
            .engine
            .reject_staged(&staged.id, &[], Some(&fx.root))
            .expect("reject the rest");
        assert_eq!(
            rest.status,
            SetStatus::Undone,
            "decided: undone, none applied"
        );
    }

    #[test]
    fn unknown_ids_and_files_are_refused() {
        let fx = TempMemoryDir::new("memory");
        assert_eq!(
            fx.engine
                .staged_change_set("../x")
                .expect_err("bad id")
                .kind(),
            crate::ErrorKind::NotFound
        );
        let set = proposal(&fx);
        let staged = fx
            .engine
            .stage_change_set(&set, ChangeSource::Dream, "-p", "s", None)
            .expect("stage");
        let err = fx
            .engine
            .apply_staged(&staged.id, &["nope.md".to_owned()], false, Some(&fx.root))
            .expect_err("not in the set");
        assert!(err.to_string().contains("nope.md"), "{err}");
        assert_eq!(fx.engine.staged_change_sets().expect("list").len(), 1);
    }
}
