//! `engram dream status | run | kill | set`: consolidation, as Claude Code's auto-dream does it,
//! in the open. `run` prints `{"taskId", "status", "blockedBy", "changeSet", "summary",
//! "tokens"}` with `--json` and its progress on stderr (one JSON event per line with `--json`);
//! SIGINT or SIGTERM kill the run cleanly (nothing lands, the lock rolls back). Exit codes: 0
//! completed or skipped, 1 failed, 130 killed.

use memory_engine::config::DreamPolicy;
use memory_engine::dream::{
    DreamEvent, DreamEventKind, DreamOptions, DreamOutcome, DreamTarget, GateCheck, TaskStatus,
};
use memory_engine::job::CancellationToken;
use memory_engine::{Error, Result};

use super::recall::{runtime, LlmArgs};
use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: DreamCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum DreamCommand {
    /// Show the dream gates: enabled, hours and sessions since the last consolidation, the lock.
    Status(StatusArgs),
    /// Consolidate the project's memory now (gates checked unless --force; the lock always).
    Run(RunArgs),
    /// Kill the Engram dream holding this project's lock.
    Kill,
    /// Turn dreams on or off for this project, choose its policy, or pause background dreams.
    Set(SetArgs),
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Every project Claude Code has seen
    #[arg(long)]
    pub all_projects: bool,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Skip the gates (enabled, time, sessions); the lock is still taken
    #[arg(long)]
    pub force: bool,
    /// Keep every change for review (`engram changes`), whatever the project's policy
    #[arg(long, conflicts_with = "apply")]
    pub stage: bool,
    /// Apply the changes at once, except protected ones (deleting or rewriting a user or
    /// feedback memory), which stay staged for `engram changes apply`
    #[arg(long)]
    pub apply: bool,
    /// Only when the gates are open, recording the scan as the scheduler does (for cron)
    #[arg(long, conflicts_with = "force")]
    pub if_due: bool,
    /// With --if-due: every due project, one at a time
    #[arg(long, requires = "if_due")]
    pub all_projects: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// Dreams for this project (overrides Claude Code's autoDreamEnabled)
    #[arg(long, value_name = "BOOL")]
    pub enabled: Option<bool>,
    /// review: every change waits for you; auto: applied at once, protected changes wait
    #[arg(long, value_name = "POLICY", value_parser = ["review", "auto"])]
    pub policy: Option<String>,
    /// Background dreams by the app's tray (all projects)
    #[arg(long, value_name = "BOOL")]
    pub background: Option<bool>,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    match args.command {
        DreamCommand::Status(args) => status(context, &args),
        DreamCommand::Run(args) => run_dream(context, &args),
        DreamCommand::Kill => kill(context),
        DreamCommand::Set(args) => set(context, &args),
    }
}

/// The project this command is about: `--project` (or the current dir) as Claude Code resolves
/// it, or the project whose memory dir `--memory-dir` is.
fn target(context: &Context) -> Result<DreamTarget> {
    let cwd = context.project()?;
    match context.global.memory_dir {
        Some(_) => context
            .engine
            .dream_target_for_memory_dir(context.memory_dir()?.root(), &cwd),
        None => context.engine.dream_target_for_cwd(&cwd),
    }
}

fn status(context: &Context, args: &StatusArgs) -> Result<Status> {
    let engine = &context.engine;
    if args.all_projects {
        // One project whose gates cannot be read (its lock is a FIFO, say) is named; the others
        // are still shown, and the exit code says the list is incomplete.
        let mut statuses = Vec::new();
        let mut unreadable = 0;
        for target in engine.dream_targets()? {
            match engine.dream_status(&target) {
                Ok(status) => statuses.push(status),
                Err(e) => {
                    output::warning_line(&format!("{}: {e}", target.project));
                    unreadable += 1;
                }
            }
        }
        if context.json() {
            output::print_json(&statuses)?;
        } else {
            for status in &statuses {
                output::print(&format!("{}\n", status_line(status)));
            }
        }
        if unreadable > 0 {
            return Err(Error::InvalidInput(format!(
                "the gates of {} could not be read",
                output::plural(unreadable, "project")
            )));
        }
        return Ok(Status::Success);
    }
    let status = engine.dream_status(&target(context)?)?;
    if context.json() {
        output::print_json(&status)?;
    } else {
        output::print(&format!("{}\n", status_line(&status)));
    }
    Ok(Status::Success)
}

/// `-home-u-app: 18 h of 24 · 3 of 5 sessions · lock free — not due (sessions)`.
fn status_line(status: &memory_engine::dream::DreamStatus) -> String {
    let hours = match status.hours_since {
        Some(h) => format!("{:.0} h of {:.0}", h.floor(), status.min_hours),
        None => "never consolidated".to_owned(),
    };
    let lock = if status.lock.is_held(std::time::SystemTime::now()) {
        format!("lock held by {}", status.lock.pid.unwrap_or_default())
    } else {
        "lock free".to_owned()
    };
    let verdict = match status.blocked_by {
        None => "due".to_owned(),
        Some(gate) => format!("not due ({})", gate.describe(status)),
    };
    let next = if status.enabled {
        format!(
            " · {}",
            status.next_check_words(std::time::SystemTime::now())
        )
    } else {
        String::new()
    };
    format!(
        "{}: {}{} · {} of {} sessions · {} — {}{}",
        status.project,
        if status.enabled { "" } else { "off · " },
        hours,
        status.sessions_since,
        status.min_sessions,
        lock,
        verdict,
        next
    )
}

fn run_dream(context: &Context, args: &RunArgs) -> Result<Status> {
    let engine = context.engine.clone();
    let json = context.json();
    let options = DreamOptions {
        gates: if args.force {
            GateCheck::Skip
        } else if args.if_due {
            GateCheck::Schedule
        } else {
            GateCheck::Inspect
        },
        policy: if args.stage {
            Some(DreamPolicy::Review)
        } else if args.apply {
            Some(DreamPolicy::Auto)
        } else {
            None
        },
        llm: args.llm.overrides()?,
        current_session: None,
    };
    let runtime = runtime()?;
    let cancel = CancellationToken::new();
    let progress = move |event: DreamEvent| report(&event, json);
    let outcomes = runtime.block_on(async {
        stop_on_signals(cancel.clone());
        if args.all_projects {
            engine.dream_all_due(&cancel, progress).await
        } else {
            let target = target(context)?;
            Ok(vec![
                engine
                    .run_dream(&target, &options, &cancel, progress)
                    .await?,
            ])
        }
    })?;
    if json {
        if args.all_projects {
            output::print_json(&outcomes)?;
        } else if let Some(outcome) = outcomes.first() {
            output::print_json(outcome)?;
        }
    } else {
        for outcome in &outcomes {
            print_outcome(outcome);
        }
    }
    let worst = outcomes
        .iter()
        .map(|o| o.status)
        .fold(TaskStatus::Completed, |worst, s| match (worst, s) {
            (TaskStatus::Killed, _) | (_, TaskStatus::Killed) => TaskStatus::Killed,
            (TaskStatus::Failed, _) | (_, TaskStatus::Failed) => TaskStatus::Failed,
            _ => worst,
        });
    Ok(match worst {
        TaskStatus::Failed => Status::Failed,
        TaskStatus::Killed => Status::Killed,
        _ => Status::Success,
    })
}

/// SIGINT and SIGTERM cancel the run: the dream stops, nothing lands, the lock rolls back.
pub fn stop_on_signals(cancel: CancellationToken) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        cancel.cancel();
    });
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
}

/// Progress on stderr: one JSON event per line with `--json`, else a line per step.
fn report(event: &DreamEvent, json: bool) {
    if json {
        if let Ok(line) = serde_json::to_string(event) {
            eprintln!("{line}");
        }
        return;
    }
    let task = &event.task;
    match event.kind {
        DreamEventKind::Started => eprintln!(
            "dream {} on {} ({}, {} sessions to review)",
            task.id,
            task.project,
            task.provider,
            task.sessions_reviewing.len()
        ),
        DreamEventKind::Turn => {
            if let Some(turn) = task.turns.last() {
                let text = turn.text.lines().next().unwrap_or("").trim();
                eprintln!(
                    "  turn: {} ({} tool calls)",
                    output::Style::detect().clip(text, 100),
                    turn.tool_use_count
                );
            }
        }
        DreamEventKind::FileTouched => {
            if let Some(file) = task.files_touched.last() {
                eprintln!("  staged {file}");
            }
        }
        DreamEventKind::Finished => {}
    }
}

fn print_outcome(outcome: &DreamOutcome) {
    let style = Style::detect();
    let (color, word) = match outcome.status {
        TaskStatus::Completed => (Color::Green, "completed"),
        TaskStatus::Skipped => (Color::Dim, "skipped"),
        TaskStatus::Failed => (Color::Red, "failed"),
        TaskStatus::Killed => (Color::Yellow, "killed"),
        TaskStatus::Pending | TaskStatus::Running => (Color::Dim, "running"),
    };
    output::print(&format!(
        "{} {} {}: {}\n",
        style.paint(color, word),
        outcome.task.project,
        style.paint(Color::Dim, &outcome.task_id),
        outcome.summary
    ));
    if let Some(id) = &outcome.change_set {
        output::print(&format!(
            "  changes: {id} — review with `engram changes show {id}`, then `engram changes apply {id}`\n"
        ));
    }
    let tokens = &outcome.tokens;
    if tokens.calls > 0 {
        output::print(&format!(
            "  tokens: {} in, {} out, {} cache read, {} cache write\n",
            tokens.input_tokens,
            tokens.output_tokens,
            tokens.cache_read_tokens,
            tokens.cache_creation_tokens
        ));
    }
}

fn kill(context: &Context) -> Result<Status> {
    let target = target(context)?;
    let killed = context
        .engine
        .kill_dream(&target.project, &target.memory_dir)?;
    match killed {
        Some(task) => {
            if context.json() {
                output::print_json(&task)?;
            } else {
                output::print(&format!("killed dream {} (pid {})\n", task.id, task.pid));
            }
            Ok(Status::Success)
        }
        None => {
            let lock = memory_engine::dream::lock::inspect(&target.memory_dir)?;
            let message = if lock.is_held(std::time::SystemTime::now()) {
                format!(
                    "no Engram dream runs on {}; the lock is held by pid {} (Claude Code's own dream?)",
                    target.project,
                    lock.pid.unwrap_or_default()
                )
            } else {
                format!("no dream runs on {}", target.project)
            };
            Err(Error::InvalidInput(message))
        }
    }
}

fn set(context: &Context, args: &SetArgs) -> Result<Status> {
    let engine = &context.engine;
    if let Some(on) = args.background {
        engine.set_background_dreams(on)?;
    }
    let policy = match args.policy.as_deref() {
        Some("auto") => Some(DreamPolicy::Auto),
        Some("review") => Some(DreamPolicy::Review),
        Some(other) => return Err(Error::InvalidInput(format!("unknown policy `{other}`"))),
        None => None,
    };
    let target = target(context)?;
    let settings = engine.set_dream_settings(&target, args.enabled, policy)?;
    if context.json() {
        output::print_json(&settings)?;
    } else {
        output::print(&format!(
            "{}: dreams {} ({}), policy {}, background {}\n",
            target.project,
            if settings.enabled { "on" } else { "off" },
            settings.enabled_source,
            match settings.policy {
                DreamPolicy::Review => "review",
                DreamPolicy::Auto => "auto",
            },
            if settings.background { "on" } else { "paused" }
        ));
    }
    Ok(Status::Success)
}
