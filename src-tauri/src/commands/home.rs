//! Where Engram is looking: the Claude Code config home in use (`--claude-dir`,
//! `$CLAUDE_CONFIG_DIR` or `~/.claude`, or the bundled demo home when that does not exist), and
//! what the window remembers (the project last open).

use std::path::PathBuf;

use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::state::AppState;

/// What the window needs to know before showing anything.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    /// The Claude Code config home being read.
    #[ts(type = "string")]
    pub claude_home: PathBuf,
    /// Engram's own data dir (history, settings).
    #[ts(type = "string")]
    pub engram_home: PathBuf,
    /// Set when the configured home does not exist and the demo home is shown instead.
    pub demo: Option<DemoInfo>,
    /// The project last opened, to reopen at start.
    pub last_project: Option<String>,
    /// Set when the app runs without its tray icon (no tray library on this system, or the
    /// tray failed to start): why, and what to install, in words for the user.
    pub no_tray: Option<String>,
}

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DemoInfo {
    /// The Claude home that was asked for and does not exist.
    #[ts(type = "string")]
    pub missing_home: PathBuf,
}

/// The window has painted its first frame. With `ENGRAM_READY_FILE` set (by `make bench`, which
/// times the app's cold start to first paint), that file is created then; otherwise nothing.
#[tauri::command]
pub fn ui_ready() {
    if let Some(path) = std::env::var_os("ENGRAM_READY_FILE") {
        let _ = std::fs::write(path, std::process::id().to_string());
    }
}

/// The homes in use and what was remembered. No disk access (the prefs were read at start), so
/// it runs inline.
#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    AppInfo {
        claude_home: state.engine().claude_home(),
        engram_home: state.engine().engram_home(),
        demo: state.demo().map(|demo| DemoInfo {
            missing_home: demo.missing_home.clone(),
        }),
        last_project: state.prefs().last_project.clone(),
        no_tray: state.no_tray().map(str::to_owned),
    }
}
