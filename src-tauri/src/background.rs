//! Engram in the background: the prompt hook's server (`memory_engine::hooks::server`), the
//! dream scheduler's loop (the engine decides which project is due;
//! this only wakes it up), "Dream now" and "Pause" from the tray, the tray's status line, and a
//! desktop notification when a dream leaves changes waiting for review.
//!
//! One dream at a time in the app: every dream here (and the window's "Dream now") runs as the
//! engine's one `Dream` job, so starting one cancels none and the scheduler waits while one runs.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use memory_engine::dream::{DreamEvent, DreamEventKind, DreamOptions, DreamTask, GateCheck};
use memory_engine::llm::CancellationToken;
use memory_engine::JobKind;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::events::{DreamFinished, DREAM_FINISHED};
use crate::state::AppState;

/// The first look for a due project, shortly after start (not at once: the window comes first),
/// or sooner when `[dream] check_every` is shorter. Then one look every `check_every`.
const FIRST_TICK: Duration = Duration::from_secs(60);

/// How long quitting waits for the hook server and the scheduler to stop (socket removed, a
/// dream in progress rolled back).
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The project dreaming in this app now, for the tray's status line; and what stops the
/// background work when the app quits.
#[derive(Default)]
pub struct Background {
    dreaming: Mutex<Option<String>>,
    stop: CancellationToken,
    tasks: Mutex<Vec<tauri::async_runtime::JoinHandle<()>>>,
}

impl Background {
    fn set_dreaming(&self, project: Option<String>) {
        *self.dreaming.lock().unwrap_or_else(PoisonError::into_inner) = project;
    }

    fn dreaming(&self) -> Option<String> {
        self.dreaming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// What the tray shows.
pub struct Snapshot {
    pub dreaming: Option<String>,
    pub waiting: usize,
    pub paused: bool,
    pub current_project: Option<String>,
}

pub fn snapshot<R: Runtime>(app: &AppHandle<R>) -> Snapshot {
    let state = app.state::<AppState>();
    let engine = state.engine();
    Snapshot {
        dreaming: app.try_state::<Background>().and_then(|b| b.dreaming()),
        waiting: engine.waiting_change_sets().map_or(0, |sets| sets.len()),
        paused: engine
            .load_config()
            .map(|c| c.dream.background == Some(false))
            .unwrap_or(false),
        current_project: state.watched_project(),
    }
}

/// Starts the hook server and the scheduler loop for the app's lifetime ([`stop`] ends them),
/// and quits the app as the tray's Quit does when the system asks it to end (SIGTERM at logout
/// or shutdown, SIGINT, SIGHUP).
pub fn start<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Background::default());
    let background = app.state::<Background>();
    let stop = background.stop.clone();
    // The prompt hook's fast path: while the app runs, Claude Code's hook asks it over a private
    // socket, answered from memory indexes kept current by file watchers. Runs until the app
    // ends (the socket is removed then, or replaced by the next start after a crash).
    let engine = app.state::<AppState>().engine().clone();
    let server = tauri::async_runtime::spawn({
        let stop = stop.clone();
        async move {
            match engine.serve_prompt_hook(stop).await {
                Ok(true) => {}
                Ok(false) => eprintln!(
                    "engram-app: another Engram answers prompt hooks on {}",
                    engine.hook_socket_path().display()
                ),
                Err(error) => eprintln!("engram-app: no prompt hook server: {error}"),
            }
        }
    });
    let scheduler = tauri::async_runtime::spawn({
        let app = app.clone();
        let engine = app.state::<AppState>().engine().clone();
        let stop = stop.clone();
        async move {
            engine
                .run_dream_scheduler(
                    FIRST_TICK,
                    stop,
                    |event| on_event(&app, &event),
                    |outcome| {
                        if let Err(error) = outcome {
                            eprintln!("engram-app: background dream: {error}");
                        }
                        crate::tray::refresh(&app);
                    },
                )
                .await;
        }
    });
    *background
        .tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = vec![server, scheduler];
    quit_on_signals(app);
}

/// The system asking the app to end (SIGTERM at logout or shutdown, SIGINT, SIGHUP) quits it
/// the way the tray's Quit does, so [`stop`] runs.
fn quit_on_signals<R: Runtime>(app: &AppHandle<R>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let (Ok(mut term), Ok(mut interrupt), Ok(mut hangup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            ) else {
                eprintln!("engram-app: cannot listen for signals: quit from the tray");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
                _ = hangup.recv() => {}
            }
            app.exit(0);
        });
    }
}

/// The tray's "Dream now": dreams the project the window shows, gates skipped.
pub fn dream_now<R: Runtime>(app: &AppHandle<R>) {
    let Some(project) = app.state::<AppState>().watched_project() else {
        return;
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let engine = app.state::<AppState>().engine().clone();
        let target = match tauri::async_runtime::spawn_blocking({
            let engine = engine.clone();
            move || engine.dream_target(&project)
        })
        .await
        {
            Ok(Ok(target)) => target,
            Ok(Err(error)) => return eprintln!("engram-app: dream now: {error}"),
            Err(error) => return eprintln!("engram-app: dream now: {error}"),
        };
        let job = engine.jobs().start(JobKind::Dream);
        let options = DreamOptions {
            gates: GateCheck::Skip,
            ..DreamOptions::default()
        };
        if let Err(error) = engine
            .run_dream(&target, &options, job.token(), |event| {
                on_event(&app, &event)
            })
            .await
        {
            eprintln!("engram-app: dream now: {error}");
        }
        crate::tray::refresh(&app);
    });
}

/// The tray's "Pause background dreams": flips the setting in `config.toml`.
pub fn toggle_pause<R: Runtime>(app: &AppHandle<R>) {
    let engine = app.state::<AppState>().engine().clone();
    let paused = snapshot(app).paused;
    if let Err(error) = engine.set_background_dreams(paused) {
        eprintln!("engram-app: pause background dreams: {error}");
    }
    crate::tray::refresh(app);
}

/// A background dream's lifecycle: the tray follows it; when it ends, every window hears of it
/// and, if it left changes waiting, so does the person.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: &DreamEvent) {
    let background = app.try_state::<Background>();
    match event.kind {
        DreamEventKind::Started => {
            if let Some(background) = background {
                background.set_dreaming(Some(event.task.project.clone()));
            }
            crate::tray::refresh(app);
        }
        DreamEventKind::Finished => {
            if let Some(background) = background {
                background.set_dreaming(None);
            }
            finished(app, &event.task);
        }
        DreamEventKind::Turn | DreamEventKind::FileTouched => {}
    }
}

/// Ends the background work as the app quits: the hook server stops (its socket removed), the
/// scheduler stops (a dream in progress is dropped: nothing lands, its lock rolls back). Waits
/// a few seconds at most.
pub fn stop<R: Runtime>(app: &AppHandle<R>) {
    let Some(background) = app.try_state::<Background>() else {
        return;
    };
    background.stop.cancel();
    let tasks = std::mem::take(
        &mut *background
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    tauri::async_runtime::block_on(async {
        let all = async {
            for task in tasks {
                let _ = task.await;
            }
        };
        let _ = tokio::time::timeout(STOP_GRACE, all).await;
    });
}

/// Tells the windows a dream finished and notifies the person when it left changes to review.
pub fn finished<R: Runtime>(app: &AppHandle<R>, task: &DreamTask) {
    let _ = app.emit(DREAM_FINISHED, DreamFinished { task: task.clone() });
    crate::tray::refresh(app);
    if let Some(id) = &task.change_set {
        let waiting = app
            .state::<AppState>()
            .engine()
            .staged_change_set(id)
            .map(|set| set.waiting())
            .unwrap_or(0);
        // The plugin is absent from the shell tests build; no notification daemon (a bare X
        // session, CI) is not an error worth reporting either.
        let notifications = app
            .try_state::<tauri_plugin_notification::Notification<R>>()
            .is_some();
        if waiting > 0 && notifications {
            let _ = app
                .notification()
                .builder()
                .title("Engram: changes to review")
                .body(notification_body(&task.project, waiting))
                .show();
        }
    }
}

fn notification_body(project: &str, waiting: usize) -> String {
    match waiting {
        1 => format!("A dream on {project} left 1 change waiting for your review."),
        n => format!("A dream on {project} left {n} changes waiting for your review."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notification_names_the_project_and_counts_the_changes() {
        assert_eq!(
            notification_body("-home-u-app", 1),
            "A dream on -home-u-app left 1 change waiting for your review."
        );
        assert_eq!(
            notification_body("p", 4),
            "A dream on p left 4 changes waiting for your review."
        );
    }
}
