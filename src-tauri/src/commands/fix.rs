//! Fixes for lint findings: planned as a change set the user reviews as diffs, then applied.

use memory_engine::fix::FixTarget;
use memory_engine::{ApplyReport, ChangeSet, FileChange};
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// The change set that would fix one finding (`invalidInput` if it has no fix or no longer
/// holds). Nothing is written.
#[tauri::command]
pub async fn plan_fix(
    state: State<'_, AppState>,
    project: String,
    target: FixTarget,
) -> Result<ChangeSet> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.plan_fix(&target)).await
}

/// Applies reviewed changes to `project`'s memory dir as the user; `conflict` if a file moved
/// since the plan. The root is the project's, never one sent by the window.
#[tauri::command]
pub async fn apply_fix(
    state: State<'_, AppState>,
    project: String,
    changes: Vec<FileChange>,
) -> Result<ApplyReport> {
    let dir = state.memory_dir(&project)?;
    blocking(move || {
        let set = ChangeSet::from_changes(dir.root(), changes);
        dir.apply_fix(&set)
    })
    .await
}
