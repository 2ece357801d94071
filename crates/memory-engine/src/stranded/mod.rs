//! Stranded stores: memory no Claude Code session will load any more, found so it is not lost.
//!
//! - **Old worktree key**: `<memory base>/projects/<name>/memory` of a working dir that is a git
//!   worktree (or a sub-directory of a repository) — older Claude Code keyed memory on the working
//!   dir; now every worktree of a repo shares the canonical git root's memory dir.
//! - **Moved project**: a memory dir whose project's working dir (from its transcripts) no longer
//!   exists — the project was renamed or moved, and its new path has a new memory dir.
//! - **Agent memory under a sub-directory**: `<dir>/.claude/agent-memory/` where `<dir>` is inside
//!   a repository but not its root: a session started there, and the next one from the root
//!   will not see it.
//!
//! Each can be merged into the live store through a change set staged for review
//! ([`Engine::stage_stranded_merge`]): files the live store lacks are added, identical ones
//! skipped, and a file that differs is proposed over the live one (the live one shown as the
//! diff's before) — nothing lands until accepted, and the stranded store is never deleted.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::changeset::ChangeSet;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::index::INDEX_FILE;
use crate::staging::{ChangeSource, StagedChangeSet};

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrandedKind {
    OldWorktreeKey,
    MovedProject,
    AgentMemoryInSubdirectory,
}

/// One stranded store (`engram stranded --json`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrandedStore {
    pub kind: StrandedKind,
    pub dir: PathBuf,
    /// Its memory files, relative.
    pub files: Vec<String>,
    /// Where a session loads that memory now, when it can be told.
    pub live: Option<PathBuf>,
    /// The project's working dir the store belongs to.
    pub project: Option<PathBuf>,
}

/// The memory files of `dir` (its index excluded), relative.
fn memory_files(dir: &Path) -> Vec<String> {
    crate::disk::memory_files(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !crate::index::is_index_file(f))
        .collect()
}

impl Engine {
    /// Every stranded store under this Claude home (see the module docs).
    pub fn stranded_stores(&self) -> Result<Vec<StrandedStore>> {
        let mut found = Vec::new();
        for project in self.list_projects()? {
            let dir = project.memory_dir.clone();
            let files = memory_files(&dir);
            let Some(cwd) = project.path.clone() else {
                continue;
            };
            if !cwd.exists() {
                if !files.is_empty() {
                    found.push(StrandedStore {
                        kind: StrandedKind::MovedProject,
                        dir,
                        files,
                        live: None,
                        project: Some(cwd),
                    });
                }
                continue;
            }
            let live = self.resolve_memory_dir(&cwd)?.memory_dir;
            if !files.is_empty()
                && crate::paths::normalize_lexically(&live)
                    != crate::paths::normalize_lexically(&dir)
            {
                found.push(StrandedStore {
                    kind: StrandedKind::OldWorktreeKey,
                    dir,
                    files,
                    live: Some(live),
                    project: Some(cwd.clone()),
                });
            }
            if let Some(root) = crate::paths::canonical_git_root(&cwd).filter(|root| *root != cwd) {
                let agents = cwd.join(".claude").join("agent-memory");
                for entry in std::fs::read_dir(&agents).into_iter().flatten().flatten() {
                    let dir = entry.path();
                    let files = memory_files(&dir);
                    if dir.is_dir() && !files.is_empty() {
                        found.push(StrandedStore {
                            kind: StrandedKind::AgentMemoryInSubdirectory,
                            live: Some(
                                root.join(".claude")
                                    .join("agent-memory")
                                    .join(entry.file_name()),
                            ),
                            dir,
                            files,
                            project: Some(cwd.clone()),
                        });
                    }
                }
            }
        }
        Ok(found)
    }

    /// Stages the merge of the stranded store `from` into the memory dir `into` (see the module
    /// docs); `None` when the live store already holds everything. `project` names the set.
    pub fn stage_stranded_merge(
        &self,
        from: &Path,
        into: &Path,
        project: &str,
    ) -> Result<Option<StagedChangeSet>> {
        if !from.is_dir() {
            return Err(Error::NotFound(from.to_path_buf()));
        }
        let mut set = ChangeSet::new(into);
        let mut added = Vec::new();
        let files = memory_files(from);
        let stranded = crate::platform::case::CaseIndex::new(files.iter().map(String::as_str));
        let rename_there = |e: Error| {
            Error::InvalidInput(format!(
                "{}: {e}; rename it there to merge the store",
                from.display()
            ))
        };
        for file in files.iter() {
            if let Some(twin) = stranded.twin(file) {
                return Err(rename_there(crate::platform::case::case_twin_refused(
                    file, twin,
                )));
            }
            // A case twin of a live file is that file on a case-insensitive volume (compared
            // under the live spelling) and refused on a case-sensitive one.
            let theirs = crate::disk::read_text(&from.join(file))?;
            let file = crate::platform::case::new_key_on_disk(into, file).map_err(rename_there)?;
            match set.read(&file)? {
                None => {
                    crate::platform::names::check_portable_key(&file).map_err(rename_there)?;
                    set.stage_write(&file, theirs, "only in the stranded store: added")?;
                    added.push(file);
                }
                Some(ours) if ours == theirs => {}
                Some(_) => set.stage_write(
                    &file,
                    theirs,
                    "differs from the live store: the stranded version (the live one is the before)",
                )?,
            }
        }
        // The added files' index lines, as the stranded index wrote them.
        let stranded_index = crate::disk::read_text(&from.join(INDEX_FILE)).unwrap_or_default();
        if !added.is_empty() {
            let mut index = set.read(INDEX_FILE)?.unwrap_or_default();
            for entry in crate::index::parse_entries(&stranded_index) {
                if added.contains(&entry.file) {
                    let line = crate::index::entry_line(
                        &entry.title,
                        &entry.file,
                        entry.hook.as_deref().unwrap_or(""),
                    );
                    index = crate::index::upsert_entry(&index, &entry.file, &line, None);
                }
            }
            if set.peek(INDEX_FILE)?.unwrap_or_default() != index {
                set.stage_write(INDEX_FILE, index, "index lines of the added files")?;
            }
        }
        if set.is_empty() {
            return Ok(None);
        }
        let summary = format!("merge of the stranded store {}", from.display());
        Ok(Some(self.stage_change_set(
            &set,
            ChangeSource::Stranded,
            project,
            &summary,
            None,
        )?))
    }
}

#[cfg(test)]
mod tests;
