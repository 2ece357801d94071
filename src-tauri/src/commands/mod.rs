//! The IPC commands, one module per area of the UI. Each is an adapter of a few lines: take the
//! state, call one engine operation, convert its error. Logic found here belongs in the engine.
//!
//! Engine calls touch the disk, so they run on Tauri's blocking pool: a synchronous command would
//! run on the main thread and freeze the window while a large `~/.claude` is read.
//!
//! A project is named by its directory under `<claude home>/projects/` (what `list_projects`
//! reports as `name`), never by a path: [`crate::state::AppState::memory_dir`] turns it into the
//! memory dir and refuses anything else, so the window cannot aim a read or a write elsewhere.

pub mod agents;
pub mod changes;
pub mod dreams;
pub mod editor;
pub mod fix;
pub mod history;
pub mod home;
pub mod memory;
pub mod onboarding;
pub mod projects;
pub mod recall;
pub mod sessions;
pub mod settings;
pub mod sync;
pub mod team;
#[cfg(test)]
pub(crate) mod test_shell;
pub mod watch;

use crate::error::{Error, Result};

/// Runs `work` on the blocking pool and waits for it without blocking the async runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> memory_engine::Result<T> + Send + 'static,
) -> Result<T> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(Error::Task)?
        .map_err(Error::from)
}
