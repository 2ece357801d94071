//! What every command shares, managed by Tauri and handed to commands as `State<AppState>`.
//!
//! The engine is cheap to clone and synchronises internally where it must, so it is held bare:
//! no lock, and a command clones it to move it onto a worker thread. The only mutable parts are
//! the open project's file watcher (one at a time: the app shows one project) and the remembered
//! window and project ([`Prefs`]), each behind its own short-lived lock.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use memory_engine::{Engine, MemoryDir, MemoryDirWatch};

use crate::prefs::Prefs;

pub struct AppState {
    engine: Engine,
    /// Set when the configured Claude home did not exist and the bundled demo home is shown.
    demo: Option<DemoHome>,
    watch: Mutex<WatchSlot>,
    prefs: Mutex<Prefs>,
    /// Bumped by every window resize: a delayed save runs only if no resize came after it.
    window_changes: AtomicU64,
    /// Set when the app runs without its tray icon: why, in words for the window.
    no_tray: OnceLock<String>,
}

/// The open project's watcher, and which request may install one. Starting a watcher takes a
/// while (history is brought up to date first), so the user may have switched projects, or left
/// the project, before it is ready: only the latest request installs its watcher.
#[derive(Default)]
struct WatchSlot {
    /// Bumped by every watch or unwatch request.
    generation: u64,
    current: Option<ProjectWatch>,
}

/// The demo home in use instead of a missing Claude home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoHome {
    /// The Claude home that was asked for (flag, `$CLAUDE_CONFIG_DIR` or `~/.claude`).
    pub missing_home: PathBuf,
}

/// The watcher of the project the window shows.
pub struct ProjectWatch {
    pub project: String,
    /// Dropping it stops the watcher thread.
    pub handle: MemoryDirWatch,
}

impl AppState {
    /// State over `engine`; the remembered window and project are read from Engram's home.
    pub fn new(engine: Engine, demo: Option<DemoHome>) -> Self {
        let prefs = Prefs::load(&engine.engram_home());
        AppState {
            engine,
            demo,
            watch: Mutex::new(WatchSlot::default()),
            prefs: Mutex::new(prefs),
            window_changes: AtomicU64::new(0),
            no_tray: OnceLock::new(),
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn demo(&self) -> Option<&DemoHome> {
        self.demo.as_ref()
    }

    /// Notes that the app runs without its tray, and why (the first reason given is kept).
    pub fn set_no_tray(&self, why: String) {
        let _ = self.no_tray.set(why);
    }

    /// Why the app runs without its tray, if it does.
    pub fn no_tray(&self) -> Option<&str> {
        self.no_tray.get().map(String::as_str)
    }

    /// The memory dir of `project`, a project name as `list_projects` reports it. Anything but
    /// one plain name (a path, `..`, a separator) is refused, so the window can only ever reach
    /// the memory dirs of the home Engram reads.
    pub fn memory_dir(&self, project: &str) -> Result<MemoryDir, memory_engine::Error> {
        let root = self.engine.memory_store_dir_checked(project)?;
        Ok(self.engine.memory_dir(root))
    }

    /// Stops the current watcher, cancels any watcher still starting, and returns the ticket of a
    /// new request for [`AppState::install_watch`].
    pub fn begin_watch(&self) -> u64 {
        let mut slot = self.watch_slot();
        slot.generation += 1;
        slot.current = None;
        slot.generation
    }

    /// Installs the watcher started for request `ticket`, unless a later request came in
    /// meanwhile: then it is dropped (which stops it) and `false` returned.
    pub fn install_watch(&self, ticket: u64, watch: ProjectWatch) -> bool {
        let mut slot = self.watch_slot();
        if slot.generation != ticket {
            return false;
        }
        slot.current = Some(watch);
        true
    }

    /// The project being watched, if any.
    pub fn watched_project(&self) -> Option<String> {
        self.watch_slot()
            .current
            .as_ref()
            .map(|w| w.project.clone())
    }

    /// A panic while the slot was held cannot leave it half-updated (its fields are replaced
    /// whole), so a poisoned lock is used as is.
    fn watch_slot(&self) -> MutexGuard<'_, WatchSlot> {
        self.watch.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn prefs(&self) -> MutexGuard<'_, Prefs> {
        self.prefs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a window resize; the ticket tells a delayed save whether it is still the latest.
    pub fn note_window_change(&self) -> u64 {
        self.window_changes.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn is_latest_window_change(&self, ticket: u64) -> bool {
        self.window_changes.load(Ordering::SeqCst) == ticket
    }
}

#[cfg(test)]
mod tests {
    use memory_engine::{Environment, ErrorKind};

    use super::*;

    fn state() -> AppState {
        let engine = Engine::builder(Environment::empty())
            .claude_home("/h")
            .engram_home("/nonexistent/engram")
            .build();
        AppState::new(engine, None)
    }

    #[test]
    fn a_project_is_a_directory_under_the_homes_projects() {
        let dir = state().memory_dir("-path-to-Demo").expect("a plain name");
        assert_eq!(
            dir.root(),
            PathBuf::from("/h/projects/-path-to-Demo/memory")
        );
    }

    fn watch_of(project: &str, dir: &std::path::Path) -> ProjectWatch {
        let engine = Engine::builder(Environment::empty())
            .engram_home(dir.join("engram"))
            .build();
        let root = dir.join(project);
        std::fs::create_dir_all(&root).expect("mkdir");
        let handle = engine
            .watch_memory_dir(&root, memory_engine::WatchOptions::default(), |_| {})
            .expect("watch");
        ProjectWatch {
            project: project.to_owned(),
            handle,
        }
    }

    #[test]
    fn a_watcher_that_finishes_starting_after_a_newer_request_is_dropped() {
        let temp = tempfile::tempdir().expect("temp dir");
        let state = state();
        let slow = state.begin_watch();
        let fast = state.begin_watch();
        assert!(state.install_watch(fast, watch_of("b", temp.path())));
        assert!(!state.install_watch(slow, watch_of("a", temp.path())));
        assert_eq!(state.watched_project().as_deref(), Some("b"));
    }

    #[test]
    fn leaving_the_project_cancels_a_watcher_still_starting() {
        let temp = tempfile::tempdir().expect("temp dir");
        let state = state();
        let pending = state.begin_watch();
        state.begin_watch(); // what unwatch_project does
        assert!(!state.install_watch(pending, watch_of("a", temp.path())));
        assert_eq!(state.watched_project(), None);
    }

    #[test]
    fn anything_but_a_plain_name_is_denied() {
        for project in ["", ".", "..", "../x", "a/b", "/etc", "a\\b", "a\0b"] {
            let denied = state()
                .memory_dir(project)
                .map(|_| ())
                .expect_err("not a plain project name");
            assert_eq!(denied.kind(), ErrorKind::PathDenied, "{project:?}");
        }
    }
}
