//! Settings → Sync: personal sync of this person's memory through their own git remote — the
//! remote, the status (fetches), Pull and Push (pushing only when the person clicks it, or with
//! `[sync] auto` after changes are applied: `crate::background`). Conflicts from a pull are
//! staged change sets the review screen opens.

use memory_engine::config::SyncConfig;
use memory_engine::sync::{PersonalSyncReport, SyncStatus};
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use ts_rs::TS;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// `[sync]` as Settings → Sync shows it.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncSettings {
    /// Empty when no remote is set.
    pub remote: String,
    pub branch: Option<String>,
    /// Push (debounced) after changes are applied, while the app runs.
    pub auto: bool,
}

impl From<SyncConfig> for SyncSettings {
    fn from(config: SyncConfig) -> SyncSettings {
        SyncSettings {
            remote: config.remote,
            branch: config.branch,
            auto: config.auto,
        }
    }
}

/// `[sync]` as configured (no fetch).
#[tauri::command]
pub async fn sync_settings(state: State<'_, AppState>) -> Result<SyncSettings> {
    let engine = state.engine().clone();
    blocking(move || Ok(engine.load_config()?.sync.into())).await
}

/// Ahead / behind / conflicts and every project's state (fetches); the tray's line follows.
#[tauri::command]
pub async fn sync_status<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<SyncStatus> {
    let engine = state.engine().clone();
    let status = blocking(move || engine.sync_status()).await;
    crate::tray::refresh(&app);
    status
}

#[tauri::command]
pub async fn sync_pull<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<PersonalSyncReport> {
    let engine = state.engine().clone();
    let report = blocking(move || engine.sync_pull()).await;
    crate::tray::refresh(&app);
    report
}

/// Pushes this machine's memory (secrets refused, never forced): the person's click is the
/// opt-in.
#[tauri::command]
pub async fn sync_push<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<PersonalSyncReport> {
    let engine = state.engine().clone();
    let report = blocking(move || engine.sync_push()).await;
    crate::tray::refresh(&app);
    report
}

/// A repo URL or path; `URL#branch` for a branch of another repo.
#[tauri::command]
pub async fn set_sync_remote(state: State<'_, AppState>, remote: String) -> Result<SyncSettings> {
    let engine = state.engine().clone();
    blocking(move || engine.set_sync_remote(&remote).map(SyncSettings::from)).await
}

/// `[sync] auto`: push (debounced) after changes are applied, while the app runs.
#[tauri::command]
pub async fn set_sync_auto(state: State<'_, AppState>, auto: bool) -> Result<SyncSettings> {
    let engine = state.engine().clone();
    blocking(move || engine.set_sync_auto(auto).map(SyncSettings::from)).await
}
