//! The tray icon and its menu: a status line (idle, dreaming <project>, N change sets waiting),
//! today's tokens against the daily budget ("Today: 12,345 of 100,000 tokens"), personal sync
//! as the last look found it ("Sync: 2 to push · 1 to pull"), "Dream now" for
//! the project the window shows (offline once the budget is reached), "Pause background dreams",
//! "Open Engram" and "Quit". Closing the window keeps Engram in the tray; Quit really quits.
//!
//! Installed only by [`crate::run`], never by [`crate::builder`]: building a tray needs a real GTK
//! (the mock runtime of tests panics), and under Xvfb it has no host to show in. What a menu item
//! does is decided by [`TrayAction::from_id`], and what the lines say by [`status_text`],
//! [`usage_text`], [`sync_text`] and [`dream_now_text`]: plain functions that tests cover without a desktop.
//!
//! On Linux the tray needs libayatana-appindicator3 (or the older libappindicator3), which Tauri
//! loads only when the tray is built — and then panics when neither is installed.
//! [`missing_library`] asks first, so the app starts without a tray instead, and says so.

use memory_engine::llm::usage::{format_tokens, BudgetStatus};
use memory_engine::platform::Os;
use memory_engine::sync::SyncStatus;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

use crate::MAIN_WINDOW;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayAction {
    ShowWindow,
    DreamNow,
    TogglePause,
    Quit,
}

impl TrayAction {
    const ALL: [TrayAction; 4] = [
        TrayAction::ShowWindow,
        TrayAction::DreamNow,
        TrayAction::TogglePause,
        TrayAction::Quit,
    ];

    /// The menu item id this action is bound to.
    pub fn id(self) -> &'static str {
        match self {
            TrayAction::ShowWindow => "show",
            TrayAction::DreamNow => "dream-now",
            TrayAction::TogglePause => "pause",
            TrayAction::Quit => "quit",
        }
    }

    /// The action of a menu item id; `None` for ids this menu does not own.
    pub fn from_id(id: &str) -> Option<TrayAction> {
        Self::ALL.into_iter().find(|action| action.id() == id)
    }
}

/// Personal sync as the last status found it (the tray never fetches): "Sync: up to date",
/// "Sync: 2 to push · 1 to pull · 1 conflict"; "Sync: off" with no remote, "Sync: not checked
/// yet" before the first look.
pub fn sync_text(remote_set: bool, status: Option<&SyncStatus>) -> String {
    let Some(status) = status.filter(|_| remote_set) else {
        return if remote_set {
            "Sync: not checked yet".to_owned()
        } else {
            "Sync: off".to_owned()
        };
    };
    let mut parts = Vec::new();
    if status.ahead > 0 {
        parts.push(format!("{} to push", status.ahead));
    }
    if status.behind > 0 {
        parts.push(format!("{} to pull", status.behind));
    }
    if status.conflicts > 0 {
        let s = if status.conflicts == 1 { "" } else { "s" };
        parts.push(format!("{} conflict{s}", status.conflicts));
    }
    if parts.is_empty() {
        "Sync: up to date".to_owned()
    } else {
        format!("Sync: {}", parts.join(" · "))
    }
}

/// The status line: what Engram is doing in the background.
pub fn status_text(dreaming: Option<&str>, waiting: usize, paused: bool) -> String {
    let doing = match dreaming {
        Some(project) => format!("Dreaming {project}"),
        None if paused => "Background dreams paused".to_owned(),
        None => "Idle".to_owned(),
    };
    match waiting {
        0 => doing,
        1 => format!("{doing} · 1 change set waiting"),
        n => format!("{doing} · {n} change sets waiting"),
    }
}

/// Today's tokens: "Today: 12,345 of 100,000 tokens", "… · budget reached", or without a budget
/// "Today: 12,345 tokens".
pub fn usage_text(budget: Option<&BudgetStatus>) -> String {
    let Some(budget) = budget else {
        return "Today's token usage cannot be read".to_owned();
    };
    let today = format_tokens(budget.tokens_today);
    match budget.daily_tokens {
        Some(limit) if budget.reached => {
            format!(
                "Today: {today} of {} tokens · budget reached",
                format_tokens(limit)
            )
        }
        Some(limit) => format!("Today: {today} of {} tokens", format_tokens(limit)),
        None => format!("Today: {today} tokens"),
    }
}

/// "Dream now" for the project the window shows; offline when the budget is reached.
pub fn dream_now_text(project: Option<&str>, over_budget: bool) -> String {
    match (project, over_budget) {
        (Some(project), false) => format!("Dream now: {project}"),
        (Some(project), true) => format!("Dream now offline: {project} (token budget reached)"),
        (None, _) => "Dream now (open a project first)".to_owned(),
    }
}

/// The libraries the tray can use on Linux, in the order Tauri's tray (the `libappindicator`
/// crate) tries them.
pub const TRAY_LIBRARIES: [&str; 2] = ["libayatana-appindicator3.so.1", "libappindicator3.so.1"];

/// Why this system cannot show the tray, in words for the user; `None` when it can. Only Linux
/// loads a tray library at run time; elsewhere the answer is always `None`.
pub fn missing_library() -> Option<String> {
    if !cfg!(target_os = "linux") || TRAY_LIBRARIES.iter().any(|name| loads(name)) {
        return None;
    }
    Some(format!(
        "No tray icon: neither {} nor {} is installed, so Engram runs only while this window \
         is open. Install libayatana-appindicator3-1 and restart Engram to keep it in the tray.",
        TRAY_LIBRARIES[0], TRAY_LIBRARIES[1]
    ))
}

/// Whether the dynamic loader finds and loads library `name`, as the tray would.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn loads(name: &str) -> bool {
    // SAFETY: loading runs the library's initialisers; these are the very libraries, under the
    // very names, that the tray loads next in this process, so nothing runs that would not run
    // anyway. No symbol is looked up or called here.
    match unsafe { libloading::Library::new(name) } {
        Ok(library) => {
            // Kept loaded: the tray uses it next, and a GTK library is not safe to unload.
            std::mem::forget(library);
            true
        }
        Err(_) => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn loads(_name: &str) -> bool {
    true
}

/// The menu items whose text or state changes, managed once the tray is installed (its presence
/// also tells the window that closing should hide it, not quit).
pub struct TrayMenu<R: Runtime> {
    status: MenuItem<R>,
    usage: MenuItem<R>,
    sync: MenuItem<R>,
    pause: CheckMenuItem<R>,
    dream_now: MenuItem<R>,
}

/// Adds the tray icon (the app icon) with its menu; a left click brings the window back.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let status = MenuItem::with_id(app, "status", "Idle", false, None::<&str>)?;
    let usage = MenuItem::with_id(app, "usage", usage_text(None), false, None::<&str>)?;
    let sync = MenuItem::with_id(app, "sync", sync_text(false, None), false, None::<&str>)?;
    let dream_now = MenuItem::with_id(
        app,
        TrayAction::DreamNow.id(),
        "Dream now",
        false,
        None::<&str>,
    )?;
    let pause = CheckMenuItem::with_id(
        app,
        TrayAction::TogglePause.id(),
        "Pause background dreams",
        true,
        false,
        None::<&str>,
    )?;
    let show = MenuItem::with_id(
        app,
        TrayAction::ShowWindow.id(),
        "Open Engram",
        true,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, TrayAction::Quit.id(), "Quit", true, None::<&str>)?;
    let separator = || PredefinedMenuItem::separator(app);
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &usage,
            &sync,
            &separator()?,
            &dream_now,
            &pause,
            &separator()?,
            &show,
            &quit,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id("engram")
        .tooltip("Engram")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(
            |app, event| match TrayAction::from_id(event.id().as_ref()) {
                Some(TrayAction::ShowWindow) => show_main_window(app),
                Some(TrayAction::DreamNow) => crate::background::dream_now(app),
                Some(TrayAction::TogglePause) => crate::background::toggle_pause(app),
                Some(TrayAction::Quit) => app.exit(0),
                None => {}
            },
        )
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                show_main_window(tray.app_handle());
            }
        });
    if Os::CURRENT == Os::Mac {
        // The menu bar tints template icons (black and transparency) for its light or dark
        // look; the app's coloured tile would stay a coloured square there.
        tray = tray
            .icon(tauri::include_image!("../icons/tray-template.png"))
            .icon_as_template(true);
    } else if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    app.manage(TrayMenu {
        status,
        usage,
        sync,
        pause,
        dream_now,
    });
    refresh(app);
    Ok(())
}

/// Updates the status line, the pause check and whether "Dream now" has a project to dream.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(menu) = app.try_state::<TrayMenu<R>>() else {
        return;
    };
    let snapshot = crate::background::snapshot(app);
    let _ = menu.status.set_text(status_text(
        snapshot.dreaming.as_deref(),
        snapshot.waiting,
        snapshot.paused,
    ));
    let _ = menu.usage.set_text(usage_text(snapshot.budget.as_ref()));
    let _ = menu
        .sync
        .set_text(sync_text(snapshot.sync_remote, snapshot.sync.as_ref()));
    let _ = menu.pause.set_checked(snapshot.paused);
    let _ = menu.dream_now.set_text(dream_now_text(
        snapshot.current_project.as_deref(),
        snapshot.dreams_over_budget,
    ));
    let _ = menu
        .dream_now
        .set_enabled(snapshot.current_project.is_some() && snapshot.dreaming.is_none());
}

/// Whether the tray is there to come back from: then closing the window only hides it.
pub fn is_installed<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.try_state::<TrayMenu<R>>().is_some()
}

/// Brings the main window to the front, restoring it if it was hidden or minimised (the tray, and
/// a second launch of the app). Failures are ignored: the window is gone only while the app quits.
pub fn show_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_the_loader_cannot_find_does_not_load_and_one_it_can_does() {
        assert!(!loads("libengram-no-such-library.so.1"));
        assert!(loads("libc.so.6"), "the C library is always there");
    }

    #[test]
    fn every_action_round_trips_through_its_menu_id() {
        for action in TrayAction::ALL {
            assert_eq!(TrayAction::from_id(action.id()), Some(action));
        }
    }

    #[test]
    fn menu_ids_are_distinct_and_foreign_ids_do_nothing() {
        let ids: std::collections::HashSet<&str> = TrayAction::ALL.iter().map(|a| a.id()).collect();
        assert_eq!(ids.len(), TrayAction::ALL.len());
        assert_eq!(
            TrayAction::from_id("engram"),
            None,
            "the tray's own id is not an item"
        );
        assert_eq!(
            TrayAction::from_id("status"),
            None,
            "the status line does nothing"
        );
        assert_eq!(
            TrayAction::from_id("usage"),
            None,
            "nor does the usage line"
        );
        assert_eq!(TrayAction::from_id(""), None);
    }

    #[test]
    fn the_status_line_says_what_runs_and_what_waits() {
        assert_eq!(status_text(None, 0, false), "Idle");
        assert_eq!(
            status_text(Some("-home-u-app"), 0, false),
            "Dreaming -home-u-app"
        );
        assert_eq!(status_text(None, 1, false), "Idle · 1 change set waiting");
        assert_eq!(
            status_text(None, 3, true),
            "Background dreams paused · 3 change sets waiting"
        );
        assert_eq!(
            status_text(Some("p"), 2, true),
            "Dreaming p · 2 change sets waiting",
            "a dream started by hand runs even when background dreams are paused"
        );
    }

    #[test]
    fn the_sync_line_says_what_waits_without_fetching() {
        let status = |ahead, behind, conflicts| SyncStatus {
            remote: Some("/r.git".into()),
            ahead,
            behind,
            conflicts,
            projects: Vec::new(),
        };
        assert_eq!(sync_text(false, None), "Sync: off");
        assert_eq!(sync_text(false, Some(&status(1, 0, 0))), "Sync: off");
        assert_eq!(sync_text(true, None), "Sync: not checked yet");
        assert_eq!(sync_text(true, Some(&status(0, 0, 0))), "Sync: up to date");
        assert_eq!(
            sync_text(true, Some(&status(2, 1, 1))),
            "Sync: 2 to push · 1 to pull · 1 conflict"
        );
        assert_eq!(sync_text(true, Some(&status(0, 0, 3))), "Sync: 3 conflicts");
    }

    #[test]
    fn the_usage_line_reads_todays_tokens_against_the_budget() {
        let status = |tokens_today, daily_tokens: Option<u64>| BudgetStatus {
            day: "2030-03-14".into(),
            tokens_today,
            daily_tokens,
            reached: daily_tokens.is_some_and(|limit| tokens_today >= limit),
        };
        assert_eq!(
            usage_text(Some(&status(12_345, Some(100_000)))),
            "Today: 12,345 of 100,000 tokens"
        );
        assert_eq!(
            usage_text(Some(&status(100_200, Some(100_000)))),
            "Today: 100,200 of 100,000 tokens · budget reached"
        );
        assert_eq!(usage_text(Some(&status(42, None))), "Today: 42 tokens");
        assert_eq!(usage_text(None), "Today's token usage cannot be read");
        assert_eq!(dream_now_text(Some("p"), false), "Dream now: p");
        assert_eq!(
            dream_now_text(Some("p"), true),
            "Dream now offline: p (token budget reached)"
        );
        assert_eq!(
            dream_now_text(None, true),
            "Dream now (open a project first)"
        );
    }
}
