//! The memory view of one project: its index as Claude Code loads it, its topic files, their
//! lint findings, and one memory read in full with its body rendered.

use std::path::PathBuf;

use memory_engine::render::render_markdown;
use memory_engine::{LintReport, LoadedIndex, Memory, MemoryHeader};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// One project's memory dir at a moment: what the memory view lists.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSnapshot {
    pub project: String,
    #[ts(type = "string")]
    pub memory_dir: PathBuf,
    /// Whether the memory dir exists (Claude Code creates it on first run in the project).
    pub exists: bool,
    pub index: LoadedIndex,
    /// Every topic file, newest first (not capped at Claude Code's 200: the view shows all).
    pub memories: Vec<MemoryHeader>,
}

/// A memory read in full, with its body as sanitised HTML.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDocument {
    pub memory: Memory,
    /// The body rendered by the engine (raw HTML shown as text, unsafe links dropped).
    pub html: String,
}

/// Reads `project`'s index and topic files, and remembers it as the project last open.
#[tauri::command]
pub async fn open_project(state: State<'_, AppState>, project: String) -> Result<ProjectSnapshot> {
    let dir = state.memory_dir(&project)?;
    remember_project(&state, &project);
    blocking(move || {
        Ok(ProjectSnapshot {
            memory_dir: dir.root().to_path_buf(),
            exists: dir.root().is_dir(),
            index: dir.load_index()?,
            memories: dir.scan(None)?,
            project,
        })
    })
    .await
}

/// Lint findings of `project`'s memory dir. Separate from [`open_project`] because duplicate
/// detection compares files pairwise: the list shows first, the findings follow.
#[tauri::command]
pub async fn lint_project(state: State<'_, AppState>, project: String) -> Result<LintReport> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.lint()).await
}

/// One memory in full, recorded in history if history has not seen it, so the first save has a
/// version to diff against and revert to.
#[tauri::command]
pub async fn read_memory(
    state: State<'_, AppState>,
    project: String,
    file: String,
) -> Result<MemoryDocument> {
    let dir = state.memory_dir(&project)?;
    blocking(move || {
        let memory = dir.open_memory(&file)?;
        let html = render_markdown(&memory.body);
        Ok(MemoryDocument { memory, html })
    })
    .await
}

/// Stores `project` as the one to reopen at the next start. A failure only costs that
/// convenience, so it is logged, not returned.
fn remember_project(state: &AppState, project: &str) {
    let mut prefs = state.prefs();
    if prefs.last_project.as_deref() != Some(project) {
        prefs.last_project = Some(project.to_owned());
        if let Err(error) = prefs.save() {
            crate::report(
                state.engine(),
                &format!("could not remember the open project: {error}"),
            );
        }
    }
}
