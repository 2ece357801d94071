//! Live updates: the open project's memory dir is watched (the engine's debounced watcher, which
//! records external changes in history and drops Engram's own writes), and each batch of changes
//! is emitted to the window as [`MEMORY_DIR_CHANGED`]. One project is watched at a time; watching
//! another stops the previous watcher.

use memory_engine::WatchOptions;
use tauri::{AppHandle, Emitter, Runtime, State};

use super::blocking;
use crate::error::Result;
use crate::events::{MemoryDirChanged, MEMORY_DIR_CHANGED};
use crate::state::{AppState, ProjectWatch};

/// Starts watching `project`'s memory dir (replacing any other watch). Returns `false` when the
/// dir does not exist yet (there is nothing to watch until the first memory is created), or when
/// another project was opened or the project left while the watcher was starting.
#[tauri::command]
pub async fn watch_project<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    project: String,
) -> Result<bool> {
    let dir = state.memory_dir(&project)?;
    // Stop the previous watcher first: its thread must not emit for a project no longer shown.
    let ticket = state.begin_watch();
    if !dir.root().is_dir() {
        return Ok(false);
    }
    let engine = state.engine().clone();
    let name = project.clone();
    // Starting brings history up to date with the dir (hashes every file): off the main thread.
    let handle = blocking(move || {
        engine.watch_memory_dir(dir.root(), WatchOptions::default(), move |changes| {
            let payload = MemoryDirChanged {
                project: name.clone(),
                changes,
            };
            // Fails only while the app shuts down.
            let _ = app.emit(MEMORY_DIR_CHANGED, payload);
        })
    })
    .await?;
    // False when the user moved on while it started: the watcher is dropped, not installed.
    Ok(state.install_watch(ticket, ProjectWatch { project, handle }))
}

/// Stops watching (the window left the project).
#[tauri::command]
pub fn unwatch_project(state: State<'_, AppState>) {
    state.begin_watch();
}
