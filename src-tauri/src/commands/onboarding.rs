//! The first run: what Engram found (the Claude home, its projects and memories, whether
//! Claude Code's hooks are installed), and installing the hooks with the `settings.json` diff
//! shown first. The other steps reuse the Settings and Dreams commands (model fetch, dream
//! settings, start at login). Whether the first run is over is a mark in the window's prefs, in
//! Engram's data dir ([`crate::prefs::Prefs::onboarded`]): set when it is finished or skipped,
//! cleared by Settings to show it again.

use std::path::PathBuf;

use memory_engine::hooks::{HookChange, HookPlan, HookStatus};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use super::blocking;
use crate::error::{Error, Result};
use crate::state::AppState;

/// What the first run shows on its first screen.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FirstRun {
    /// The first run is not over: show it.
    pub needed: bool,
    /// The Claude Code config home being read.
    #[ts(type = "string")]
    pub claude_home: PathBuf,
    /// Whether that home exists (else the demo home is shown).
    pub claude_home_exists: bool,
    /// Projects Claude Code has seen, and the memory files among them.
    pub projects: u32,
    pub memories: u32,
    /// Engram's hooks in Claude Code's `settings.json`; `None` when the `engram` command the
    /// hooks run is not installed next to the app (then the step says so).
    pub hooks: Option<HookStatus>,
    /// The `engram` command the hooks would run.
    #[ts(type = "string | null")]
    pub engram_command: Option<PathBuf>,
}

/// The `engram` command installed next to the running app (`/usr/bin/engram` beside
/// `/usr/bin/engram-app`; `target/<profile>/engram` in a build tree), as an absolute path with
/// symlinks resolved, as `engram hooks install` writes it.
fn engram_command() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let command = exe.parent()?.join("engram");
    command.is_file().then_some(command)
}

fn require_engram_command() -> Result<PathBuf> {
    engram_command().ok_or_else(|| {
        Error::from(memory_engine::Error::NotFound(PathBuf::from(
            "engram (the command Claude Code's hooks run, installed next to engram-app)",
        )))
    })
}

/// What Engram found, and whether the first run is still to be shown.
#[tauri::command]
pub async fn first_run(state: State<'_, AppState>) -> Result<FirstRun> {
    let needed = !state.prefs().onboarded;
    let engine = state.engine().clone();
    let claude_home_exists = state.demo().is_none();
    blocking(move || {
        let projects = engine.list_projects()?;
        let command = engram_command();
        let hooks = match &command {
            Some(command) => Some(engine.hooks_status(command)?),
            None => None,
        };
        Ok(FirstRun {
            needed,
            claude_home: engine.claude_home(),
            claude_home_exists,
            projects: count(projects.len()),
            memories: count(projects.iter().map(|p| p.memory_files).sum()),
            hooks,
            engram_command: command,
        })
    })
    .await
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The `settings.json` diff installing Engram's hooks would make; writes nothing.
#[tauri::command]
pub async fn plan_hooks_install(state: State<'_, AppState>) -> Result<HookPlan> {
    let engine = state.engine().clone();
    let command = require_engram_command()?;
    blocking(move || engine.plan_hooks_install(&command)).await
}

/// Installs the hooks as `plan_hooks_install` showed them: refused (`conflict`) when
/// `settings.json` changed since, so what lands is the diff the user saw.
#[tauri::command]
pub async fn install_planned_hooks(
    state: State<'_, AppState>,
    base: Option<String>,
) -> Result<HookChange> {
    let engine = state.engine().clone();
    let command = require_engram_command()?;
    blocking(move || engine.install_planned_hooks(&command, base.as_deref())).await
}

/// Removes Engram's hooks from `settings.json` (every other byte kept; a backup first).
#[tauri::command]
pub async fn uninstall_hooks(state: State<'_, AppState>) -> Result<HookChange> {
    let engine = state.engine().clone();
    blocking(move || engine.uninstall_hooks()).await
}

/// Marks the first run over (finished or skipped: `done`), or to be shown again at the next
/// start and now (`!done`, from Settings).
#[tauri::command]
pub fn set_onboarded(state: State<'_, AppState>, done: bool) -> Result<()> {
    mark_onboarded(state.inner(), done)
}

fn mark_onboarded(state: &AppState, done: bool) -> Result<()> {
    let mut prefs = state.prefs();
    prefs.onboarded = done;
    prefs.save().map_err(|message| {
        Error::from(memory_engine::Error::Io {
            path: state.engine().engram_home(),
            source: std::io::Error::other(message),
        })
    })
}
