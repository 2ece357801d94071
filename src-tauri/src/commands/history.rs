//! A memory file's history: its versions (who, when, what), what each changed, and revert.

use memory_engine::history::VersionChange;
use memory_engine::Version;
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// The versions of `file`, newest first, after recording any change history has not seen.
#[tauri::command]
pub async fn file_history(
    state: State<'_, AppState>,
    project: String,
    file: String,
) -> Result<Vec<Version>> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.history(Some(&file))).await
}

/// What `version` changed: the diff from the version before it.
#[tauri::command]
pub async fn version_change(
    state: State<'_, AppState>,
    project: String,
    version: String,
) -> Result<VersionChange> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.version_change(&version)).await
}

/// Puts the file back as it was at `version`; the revert is itself a new version.
#[tauri::command]
pub async fn revert_version(
    state: State<'_, AppState>,
    project: String,
    version: String,
) -> Result<Version> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.revert(&version)).await
}
