//! What the window remembers between launches: its size, the project last open, and whether the
//! first run is over. Kept in `<engram home>/app-state.json` (Engram's own data dir, never a
//! memory dir), written atomically; a field missing from the file is taken as its default.
//!
//! This is convenience state: a missing, unreadable or garbled file means "nothing remembered"
//! and never stops the app from starting; a failed write is reported on stderr and otherwise
//! ignored, since losing a window size must not interrupt the user.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

const FILE_NAME: &str = "app-state.json";
/// Smaller than this is not a size anyone chose (a minimised window reports 0×0 on some
/// platforms): such sizes are not remembered.
const MIN_REMEMBERED: (u32, u32) = (480, 320);

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Prefs {
    /// Inner size in logical pixels.
    pub window: Option<WindowSize>,
    pub maximized: bool,
    /// The directory name (under `<claude home>/projects/`) of the project last opened.
    pub last_project: Option<String>,
    /// The first run (onboarding) was finished or skipped; Settings clears it to show it again.
    pub onboarded: bool,
    #[serde(skip)]
    path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSize {
    pub width: u32,
    pub height: u32,
}

impl Prefs {
    /// The prefs stored under `engram_home`, or none remembered.
    pub fn load(engram_home: &Path) -> Prefs {
        let path = engram_home.join(FILE_NAME);
        let stored = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Prefs>(&bytes).ok())
            .unwrap_or_default();
        Prefs { path, ..stored }
    }

    /// Notes a window size; sizes too small to be a user's choice are ignored.
    pub fn set_window(&mut self, width: u32, height: u32) {
        if width >= MIN_REMEMBERED.0 && height >= MIN_REMEMBERED.1 {
            self.window = Some(WindowSize { width, height });
        }
    }

    /// Writes the prefs back; `Err` carries the message for the log.
    pub fn save(&self) -> Result<(), String> {
        let json = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        if let Some(dir) = self.path.parent() {
            memory_engine::disk::create_dir_all(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        memory_engine::disk::atomic_write(&self.path, &json).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefs_survive_a_round_trip_through_the_engram_home() {
        let home = tempfile::tempdir().expect("temp dir");
        let mut prefs = Prefs::load(home.path());
        assert_eq!(prefs.window, None, "nothing remembered yet");
        prefs.set_window(1000, 700);
        prefs.last_project = Some("-path-to-Demo".into());
        prefs.save().expect("saved");

        let again = Prefs::load(home.path());
        assert_eq!(
            again.window,
            Some(WindowSize {
                width: 1000,
                height: 700
            })
        );
        assert_eq!(again.last_project.as_deref(), Some("-path-to-Demo"));
    }

    #[test]
    fn a_garbled_file_means_nothing_remembered() {
        let home = tempfile::tempdir().expect("temp dir");
        std::fs::write(home.path().join(FILE_NAME), "{ not json").expect("write");
        let prefs = Prefs::load(home.path());
        assert_eq!(prefs.window, None);
        assert_eq!(prefs.last_project, None);
        prefs.save().expect("a garbled file is replaced, not kept");
        assert!(Prefs::load(home.path()).last_project.is_none());
    }

    #[test]
    fn the_first_run_is_over_once_marked_and_a_file_without_the_mark_keeps_the_rest() {
        let home = tempfile::tempdir().expect("temp dir");
        // Written before the mark existed (or by the e2e harness with the mark alone).
        std::fs::write(
            home.path().join(FILE_NAME),
            r#"{"lastProject": "-path-to-Demo"}"#,
        )
        .expect("write");
        let mut prefs = Prefs::load(home.path());
        assert!(!prefs.onboarded, "no mark: the first run shows");
        assert_eq!(prefs.last_project.as_deref(), Some("-path-to-Demo"));
        prefs.onboarded = true;
        prefs.save().expect("saved");
        assert!(Prefs::load(home.path()).onboarded);
    }

    #[test]
    fn a_minimised_window_is_not_remembered() {
        let mut prefs = Prefs::default();
        prefs.set_window(1100, 760);
        prefs.set_window(0, 0);
        assert_eq!(
            prefs.window,
            Some(WindowSize {
                width: 1100,
                height: 760
            })
        );
    }
}
