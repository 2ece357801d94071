//! A project's dreams: the gates in words, its settings, "Dream now" with the live task streamed
//! over a [`Channel`], kill, and the past runs. Background dreams (the tray's scheduler) report
//! only their lifecycle, as the [`crate::events::DREAM_FINISHED`] event (so does this one, for
//! the other windows and the tray).

use memory_engine::config::{DreamPolicy, LlmOverrides};
use memory_engine::dream::{
    DreamEvent, DreamOptions, DreamSettings, DreamStatus, DreamTask, GateCheck,
};
use memory_engine::llm::ProviderKind;
use memory_engine::JobKind;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use ts_rs::TS;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// What the Dreams view shows of a project.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DreamOverview {
    pub status: DreamStatus,
    pub settings: DreamSettings,
    /// The dream running on this project now, in this app or any Engram process.
    pub running: Option<DreamTask>,
    /// Finished dreams, newest first.
    pub past: Vec<DreamTask>,
}

#[tauri::command]
pub async fn dream_overview(state: State<'_, AppState>, project: String) -> Result<DreamOverview> {
    let engine = state.engine().clone();
    state.memory_dir(&project)?;
    blocking(move || {
        let target = engine.dream_target(&project)?;
        Ok(DreamOverview {
            status: engine.dream_status(&target)?,
            settings: engine.dream_settings(&target)?,
            running: engine.running_dream(&project),
            past: engine.past_dreams(&project)?,
        })
    })
    .await
}

/// Turns dreams on or off for `project` and sets its policy (`null` leaves a value as it is).
#[tauri::command]
pub async fn set_dream_settings(
    state: State<'_, AppState>,
    project: String,
    enabled: Option<bool>,
    policy: Option<DreamPolicy>,
) -> Result<DreamSettings> {
    let engine = state.engine().clone();
    state.memory_dir(&project)?;
    blocking(move || {
        let target = engine.dream_target(&project)?;
        engine.set_dream_settings(&target, enabled, policy)
    })
    .await
}

/// Dreams `project` now (the gates skipped, the lock taken), streaming every step over
/// `on_event`; returns the finished task. `offline`: the offline dream whatever the configured
/// model (what the window offers once the daily token budget is reached: a model dream is
/// skipped then, even started by hand). Another dream started in this app replaces this one;
/// [`kill_dream`] stops it.
#[tauri::command]
pub async fn start_dream<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    project: String,
    offline: bool,
    on_event: Channel<DreamEvent>,
) -> Result<DreamTask> {
    state.memory_dir(&project)?;
    let engine = state.engine().clone();
    let target = blocking({
        let engine = engine.clone();
        let project = project.clone();
        move || engine.dream_target(&project)
    })
    .await?;
    let job = engine.jobs().start(JobKind::Dream);
    let options = DreamOptions {
        gates: GateCheck::Skip,
        llm: LlmOverrides {
            provider: offline.then_some(ProviderKind::Offline),
            ..LlmOverrides::default()
        },
        ..DreamOptions::default()
    };
    let outcome = engine
        .run_dream(&target, &options, job.token(), |event| {
            crate::background::on_event(&app, &event);
            let _ = on_event.send(event);
        })
        .await?;
    Ok(outcome.task)
}

/// Kills the dream running on `project`, in this app or another Engram process; `false` when
/// none runs.
#[tauri::command]
pub async fn kill_dream(state: State<'_, AppState>, project: String) -> Result<bool> {
    let dir = state.memory_dir(&project)?;
    let engine = state.engine().clone();
    blocking(move || Ok(engine.kill_dream(&project, dir.root())?.is_some())).await
}
