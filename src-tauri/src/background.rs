//! Engram in the background: the prompt hook's server (`memory_engine::hooks::server`), the
//! dream scheduler's loop (the engine decides which project is due;
//! this only wakes it up), "Dream now" and "Pause" from the tray, the tray's status line, a
//! desktop notification when a dream leaves changes waiting for review, and today's token usage:
//! the tray's line kept current and one notification a day when 80 % of the budget is used;
//! with `[sync] auto = true`, personal sync's debounced push after changes (the engine's
//! `run_sync_auto_push` decides; this only runs it and tells the tray).
//!
//! One dream at a time in the app: every dream here (and the window's "Dream now") runs as the
//! engine's one `Dream` job, so starting one cancels none and the scheduler waits while one runs.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use memory_engine::config::LlmOverrides;
use memory_engine::dream::{DreamEvent, DreamEventKind, DreamOptions, DreamTask, GateCheck};
use memory_engine::llm::usage::{format_tokens, BudgetStatus};
use memory_engine::llm::{CancellationToken, ProviderKind};
use memory_engine::JobKind;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

use crate::events::{DreamFinished, DREAM_FINISHED};
use crate::report;
use crate::state::AppState;

/// The first look for a due project, shortly after start (not at once: the window comes first),
/// or sooner when `[dream] check_every` is shorter. Then one look every `check_every`.
const FIRST_TICK: Duration = Duration::from_secs(60);

/// How often today's token usage is read for the tray's line and the 80 % notice: the hooks'
/// workers (other processes) make model calls too, so the app looks rather than waits to be told.
/// Each look reads only what was logged since the last one.
const USAGE_CHECK: Duration = Duration::from_secs(30);

/// How often `[sync] auto` looks at the local files: a change is pushed once it stayed the same
/// for one whole tick, so a burst of writes pushes once.
const SYNC_AUTO_TICK: Duration = Duration::from_secs(30);

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
    /// Today's tokens against the budget; `None` when they cannot be read (a broken
    /// `config.toml`).
    pub budget: Option<BudgetStatus>,
    /// The budget is reached and dreams would use a model: "Dream now" dreams offline instead.
    pub dreams_over_budget: bool,
    /// A personal sync remote is set, and what the last status found (no fetch here).
    pub sync_remote: bool,
    pub sync: Option<memory_engine::sync::SyncStatus>,
}

pub fn snapshot<R: Runtime>(app: &AppHandle<R>) -> Snapshot {
    let state = app.state::<AppState>();
    let engine = state.engine();
    let config = engine.load_config().ok();
    Snapshot {
        dreaming: app.try_state::<Background>().and_then(|b| b.dreaming()),
        waiting: engine.waiting_change_sets().map_or(0, |sets| sets.len()),
        paused: config
            .as_ref()
            .is_some_and(|c| c.dream.background == Some(false)),
        current_project: state.watched_project(),
        budget: config.as_ref().and_then(|c| engine.budget_in(c).ok()),
        dreams_over_budget: config
            .as_ref()
            .and_then(|c| engine.dream_budget(c, &LlmOverrides::default()).ok())
            .flatten()
            .is_some_and(|b| b.reached),
        sync_remote: config.as_ref().is_some_and(|c| !c.sync.remote.is_empty()),
        sync: engine.sync_last_status(),
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
                Ok(false) => report(
                    &engine,
                    &format!(
                        "another Engram answers prompt hooks on {}",
                        engine.hook_socket_path().display()
                    ),
                ),
                Err(error) => report(&engine, &format!("no prompt hook server: {error}")),
            }
        }
    });
    let scheduler = tauri::async_runtime::spawn({
        let app = app.clone();
        let engine = app.state::<AppState>().engine().clone();
        let stop = stop.clone();
        async move {
            let reporter = engine.clone();
            engine
                .run_dream_scheduler(
                    FIRST_TICK,
                    stop,
                    |event| on_event(&app, &event),
                    |outcome| {
                        if let Err(error) = outcome {
                            report(&reporter, &format!("background dream: {error}"));
                        }
                        crate::tray::refresh(&app);
                    },
                )
                .await;
        }
    });
    let usage = tauri::async_runtime::spawn({
        let app = app.clone();
        let stop = stop.clone();
        async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(USAGE_CHECK) => {}
                    () = stop.cancelled() => break,
                }
                watch_usage(&app).await;
            }
        }
    });
    let sync = tauri::async_runtime::spawn({
        let app = app.clone();
        let engine = app.state::<AppState>().engine().clone();
        let stop = stop.clone();
        async move {
            let reporter = engine.clone();
            engine
                .run_sync_auto_push(SYNC_AUTO_TICK, stop, |outcome| {
                    if let Err(error) = outcome {
                        report(&reporter, &format!("sync auto push: {error}"));
                    }
                    crate::tray::refresh(&app);
                })
                .await;
        }
    });
    *background
        .tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = vec![server, scheduler, usage, sync];
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
                report(
                    app.state::<AppState>().engine(),
                    "cannot listen for signals: quit from the tray",
                );
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

/// One look at today's tokens: the tray's line follows, and the person is told once a day when
/// 80 % of the budget is used (the engine remembers the day it told, for every process).
async fn watch_usage<R: Runtime>(app: &AppHandle<R>) {
    let engine = app.state::<AppState>().engine().clone();
    let notice = tauri::async_runtime::spawn_blocking(move || engine.budget_notice_due()).await;
    crate::tray::refresh(app);
    match notice {
        Ok(Ok(Some(status))) => notify(app, "Engram: token budget", &budget_notice_body(&status)),
        Ok(Ok(None)) => {}
        Ok(Err(error)) => report(
            app.state::<AppState>().engine(),
            &format!("token usage: {error}"),
        ),
        Err(error) => report(
            app.state::<AppState>().engine(),
            &format!("token usage: {error}"),
        ),
    }
}

/// The 80 % notice: how much is used, and what happens at the budget.
fn budget_notice_body(status: &BudgetStatus) -> String {
    format!(
        "{} of today's {} tokens are used ({} %). At the budget, dreams, extraction and recall \
         stop asking the model until tomorrow.",
        format_tokens(status.tokens_today),
        format_tokens(status.daily_tokens.unwrap_or(0)),
        status.percent().unwrap_or(0)
    )
}

/// A desktop notification, when there is a notification service (not in the shell's tests, nor
/// in a bare X session).
fn notify<R: Runtime>(app: &AppHandle<R>, title: &str, body: &str) {
    if app
        .try_state::<tauri_plugin_notification::Notification<R>>()
        .is_some()
    {
        let _ = app.notification().builder().title(title).body(body).show();
    }
}

/// The tray's "Dream now": dreams the project the window shows, gates skipped — offline when
/// the daily token budget is reached (a model dream would be skipped; the menu says so).
pub fn dream_now<R: Runtime>(app: &AppHandle<R>) {
    let Some(project) = app.state::<AppState>().watched_project() else {
        return;
    };
    let offline = snapshot(app).dreams_over_budget;
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
            Ok(Err(error)) => return report(&engine, &format!("dream now: {error}")),
            Err(error) => return report(&engine, &format!("dream now: {error}")),
        };
        let job = engine.jobs().start(JobKind::Dream);
        let options = DreamOptions {
            gates: GateCheck::Skip,
            llm: LlmOverrides {
                provider: offline.then_some(ProviderKind::Offline),
                ..LlmOverrides::default()
            },
            ..DreamOptions::default()
        };
        if let Err(error) = engine
            .run_dream(&target, &options, job.token(), |event| {
                on_event(&app, &event)
            })
            .await
        {
            report(&engine, &format!("dream now: {error}"));
        }
        crate::tray::refresh(&app);
    });
}

/// The tray's "Pause background dreams": flips the setting in `config.toml`.
pub fn toggle_pause<R: Runtime>(app: &AppHandle<R>) {
    let engine = app.state::<AppState>().engine().clone();
    let paused = snapshot(app).paused;
    if let Err(error) = engine.set_background_dreams(paused) {
        report(&engine, &format!("pause background dreams: {error}"));
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
        if waiting > 0 {
            notify(
                app,
                "Engram: changes to review",
                &notification_body(&task.project, waiting),
            );
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

    #[test]
    fn the_budget_notice_says_how_much_is_used_and_what_happens_at_the_budget() {
        let status = BudgetStatus {
            day: "2030-03-14".into(),
            tokens_today: 80_512,
            daily_tokens: Some(100_000),
            reached: false,
        };
        assert_eq!(
            budget_notice_body(&status),
            "80,512 of today's 100,000 tokens are used (80 %). At the budget, dreams, extraction \
             and recall stop asking the model until tomorrow."
        );
    }
}
