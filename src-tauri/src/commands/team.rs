//! The Team tab: the project's shared `team/` memory — its sync status with the git remote, pull
//! and push (pushing only when the person clicks it), the remote setting, and the secrets found
//! in it. Conflicts from a pull are staged change sets the review screen opens.

use memory_engine::config::ProjectTeamConfig;
use memory_engine::secrets::SecretFinding;
use memory_engine::staging::StagedChangeSet;
use memory_engine::team::sync::{SyncReport, TeamStatus};
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// Ahead / behind / conflicts against the remote (fetches; no remote: all zero).
#[tauri::command]
pub async fn team_status(state: State<'_, AppState>, project: String) -> Result<TeamStatus> {
    let engine = state.engine().clone();
    let dir = state.memory_dir(&project)?;
    blocking(move || engine.team_status(&project, dir.root())).await
}

#[tauri::command]
pub async fn team_pull(state: State<'_, AppState>, project: String) -> Result<SyncReport> {
    let engine = state.engine().clone();
    let dir = state.memory_dir(&project)?;
    blocking(move || engine.team_pull(&project, dir.root())).await
}

/// Pushes `team/` (keys checked, secrets refused): the person's click is the opt-in.
#[tauri::command]
pub async fn team_push(state: State<'_, AppState>, project: String) -> Result<SyncReport> {
    let engine = state.engine().clone();
    let dir = state.memory_dir(&project)?;
    blocking(move || engine.team_push(&project, dir.root())).await
}

#[tauri::command]
pub async fn set_team_remote(
    state: State<'_, AppState>,
    project: String,
    remote: String,
) -> Result<ProjectTeamConfig> {
    let engine = state.engine().clone();
    state.memory_dir(&project)?;
    blocking(move || engine.set_team_remote(&project, &remote)).await
}

/// Secrets found in the project's `team/` (read only).
#[tauri::command]
pub async fn team_secrets(
    state: State<'_, AppState>,
    project: String,
) -> Result<Vec<SecretFinding>> {
    let dir = state.memory_dir(&project)?;
    blocking(move || Ok(memory_engine::secrets::scan_tree(&dir.root().join("team")).0)).await
}

/// Stages the redaction of the secrets in the project's `team/` (each replaced by
/// `[REDACTED:<rule>]`) for the review screen; `None` when there is none it can carry. (A file it
/// cannot redact, not being UTF-8 text, keeps showing in `team_secrets`.)
#[tauri::command]
pub async fn redact_team_secrets(
    state: State<'_, AppState>,
    project: String,
) -> Result<Option<StagedChangeSet>> {
    let engine = state.engine().clone();
    let dir = state.memory_dir(&project)?;
    blocking(move || {
        Ok(engine
            .stage_redaction(dir.root(), &project, Some("team"))?
            .staged)
    })
    .await
}
