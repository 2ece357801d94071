//! A memory file's history: its versions (who, when, what), what each changed, and revert.

use memory_engine::history::VersionChange;
use memory_engine::{Error as EngineError, Version};
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
    let engine = state.engine().clone();
    blocking(move || {
        let change = engine.version_change(&version)?;
        same_dir(&change.version, dir.root())?;
        Ok(change)
    })
    .await
}

/// Puts the file back as it was at `version`; the revert is itself a new version.
#[tauri::command]
pub async fn revert_version(
    state: State<'_, AppState>,
    project: String,
    version: String,
) -> Result<Version> {
    let dir = state.memory_dir(&project)?;
    let engine = state.engine().clone();
    blocking(move || {
        same_dir(&engine.find_version(&version)?, dir.root())?;
        engine.revert(&version)
    })
    .await
}

/// Version ids are unique across every memory dir Engram knows; the window may only reach the
/// versions of the project it names.
fn same_dir(version: &Version, root: &std::path::Path) -> memory_engine::Result<()> {
    let resolved = |path: &std::path::Path| path.canonicalize().unwrap_or(path.to_path_buf());
    if resolved(&version.memory_dir) == resolved(root) {
        Ok(())
    } else {
        Err(EngineError::PathDenied {
            path: version.memory_dir.join(&version.file),
            root: root.to_path_buf(),
        })
    }
}
