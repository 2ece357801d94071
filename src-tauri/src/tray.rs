//! The tray icon and its menu. Installed only by [`crate::run`], never by [`crate::builder`]:
//! building a tray needs a real GTK (the mock runtime of tests panics), and under Xvfb it has no
//! host to show in. What a menu item does is decided by [`TrayAction::from_id`], a plain function
//! that tests cover without a desktop.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Runtime};

use crate::MAIN_WINDOW;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayAction {
    ShowWindow,
    Quit,
}

impl TrayAction {
    const ALL: [TrayAction; 2] = [TrayAction::ShowWindow, TrayAction::Quit];

    /// The menu item id this action is bound to.
    pub fn id(self) -> &'static str {
        match self {
            TrayAction::ShowWindow => "show",
            TrayAction::Quit => "quit",
        }
    }

    /// The action of a menu item id; `None` for ids this menu does not own.
    pub fn from_id(id: &str) -> Option<TrayAction> {
        Self::ALL.into_iter().find(|action| action.id() == id)
    }
}

/// Adds the tray icon (the app icon) with its menu; a left click brings the window back.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let show = MenuItem::with_id(
        app,
        TrayAction::ShowWindow.id(),
        "Show Engram",
        true,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(
        app,
        TrayAction::Quit.id(),
        "Quit Engram",
        true,
        None::<&str>,
    )?;
    let menu = Menu::with_items(app, &[&show, &PredefinedMenuItem::separator(app)?, &quit])?;
    let mut tray = TrayIconBuilder::with_id("engram")
        .tooltip("Engram")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(
            |app, event| match TrayAction::from_id(event.id().as_ref()) {
                Some(TrayAction::ShowWindow) => show_main_window(app),
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
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
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
    fn every_action_round_trips_through_its_menu_id() {
        for action in TrayAction::ALL {
            assert_eq!(TrayAction::from_id(action.id()), Some(action));
        }
    }

    #[test]
    fn menu_ids_are_distinct_and_foreign_ids_do_nothing() {
        assert_ne!(TrayAction::ShowWindow.id(), TrayAction::Quit.id());
        assert_eq!(
            TrayAction::from_id("engram"),
            None,
            "the tray's own id is not an item"
        );
        assert_eq!(TrayAction::from_id(""), None);
    }
}
