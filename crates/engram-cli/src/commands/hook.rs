//! `engram hook stop`: Claude Code's Stop hook. Reads the payload, starts extraction for the
//! session in a detached background process (`engram hook stop-worker`) and returns at once:
//! exit 0, nothing printed, never `"decision": "block"`.
//!
//! `engram hook user-prompt-submit`: Claude Code's UserPromptSubmit hook. Reads the hook's JSON
//! payload from stdin and prints the recalled memories as
//! `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"…"}}`.
//!
//! When a long-lived Engram (the desktop app, or `engram hook serve`) answers on the hook socket
//! (`memory_engine::hooks::server`), the hook asks it and prints its answer — the same answer,
//! from corpora kept in memory; otherwise it recalls itself. A server that is not the user's
//! own, does not say hello within a short part of the budget, or answers with anything but
//! Engram's hook output is not printed from: the hook recalls itself (the module docs there say
//! exactly what is checked and how the budget is shared). `config.toml` is read once.
//!
//! A hook must never get in the user's way, so this command always exits 0 and, on any failure
//! (malformed stdin, an unreadable memory dir, a provider error) or when its time budget
//! (`--budget-ms`, else `[hooks] budget_ms`, else 2 s) runs out, prints nothing at all.
//! (Exit code 2 would make Claude Code block the prompt.) `--verbose` says on stderr why nothing
//! was printed, for debugging an installation.

use std::io::Read;
use std::time::{Duration, Instant};

use memory_engine::hooks::server::HookRequest;
use memory_engine::llm::CancellationToken;
use memory_engine::Result;

use super::recall::LlmArgs;
use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub event: Event,
}

#[derive(Debug, clap::Subcommand)]
pub enum Event {
    /// Recall memories for the prompt on stdin (Claude Code's UserPromptSubmit payload)
    UserPromptSubmit(PromptArgs),
    /// Start memory extraction for the session on stdin (Claude Code's Stop payload) in a
    /// detached background process, and return at once
    Stop(StopArgs),
    /// The detached worker `stop` starts (not for direct use)
    #[command(hide = true)]
    StopWorker(WorkerArgs),
    /// Answer prompt hooks from memory until stopped, as the desktop app does: keeps each
    /// project's memory index warm so a prompt costs milliseconds (for machines without the app)
    Serve,
}

#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// Say on stderr why nothing was started
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The session's transcript
    pub transcript: std::path::PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Give up (printing nothing) after this many milliseconds [default: `[hooks] budget_ms` in
    /// config.toml, else 2000]
    #[arg(long, value_name = "MS")]
    pub budget_ms: Option<u64>,
    /// Say on stderr why nothing was printed
    #[arg(long)]
    pub verbose: bool,
}

impl Args {
    /// Whether Claude Code runs this (with nobody watching), not a person (`hook serve`).
    pub fn is_run_by_claude_code(&self) -> bool {
        !matches!(self.event, Event::Serve)
    }
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    match args.event {
        Event::UserPromptSubmit(args) => prompt(context, &args),
        Event::Stop(args) => {
            if let Err(why) = start_worker(context) {
                if args.verbose {
                    output::error_line(&format!("hook: nothing started: {why}"));
                }
            }
            Ok(Status::Success)
        }
        Event::StopWorker(args) => worker(context, &args),
        Event::Serve => serve(context),
    }
}

/// Reads the Stop payload and starts `engram hook stop-worker TRANSCRIPT` detached: its own
/// process group (Claude Code ending the hook's group does not end it), no stdio. Returns at
/// once; the worker's outcome is recorded by the engine, never printed, and an error it ends on
/// goes to `<data dir>/logs/engram.log`.
fn start_worker(context: &Context) -> std::result::Result<(), String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_HOOK_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if bytes.len() as u64 > MAX_HOOK_INPUT {
        return Err(format!("the hook payload is over {MAX_HOOK_INPUT} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
    let input = memory_engine::hooks::stop::parse_stop(&text).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(exe);
    command
        .args(["hook", "stop-worker"])
        .arg(&input.transcript_path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    memory_engine::platform::process::detach(&mut command);
    // The Claude dir the hook was given reaches the worker too.
    command
        .arg("--claude-dir")
        .arg(context.engine.claude_home());
    command
        .spawn()
        .map_err(|e| format!("cannot start the worker: {e}"))?;
    Ok(())
}

fn serve(context: &Context) -> Result<Status> {
    let runtime = super::recall::runtime()?;
    let socket = context.engine.hook_socket_path();
    let served = runtime.block_on(async {
        let cancel = CancellationToken::new();
        super::dream::stop_on_signals(cancel.clone());
        output::error_line(&format!(
            "hook: answering prompt hooks on {}",
            socket.display()
        ));
        context.engine.serve_prompt_hook(cancel).await
    })?;
    if !served {
        return Err(memory_engine::Error::InvalidInput(format!(
            "another Engram already answers prompt hooks on {}",
            socket.display()
        )));
    }
    Ok(Status::Success)
}

/// The detached worker's log in Engram's data dir (`logs/engram.log`).
const WORKER_LOG: &str = "engram";

fn worker(context: &Context, args: &WorkerArgs) -> Result<Status> {
    let outcome = (|| {
        let runtime = super::recall::runtime()?;
        let options = memory_engine::extract::ExtractOptions::default();
        runtime.block_on(context.engine.after_turn(
            &args.transcript,
            &options,
            &CancellationToken::new(),
        ))
    })();
    if let Err(error) = &outcome {
        // Detached with its stdio closed, the worker's error would reach no one (main still
        // prints it, for a worker run by hand): it goes to Engram's log.
        memory_engine::problem_log::append_report(
            &context.engine,
            WORKER_LOG,
            &format!("hook stop-worker {}: {error}", args.transcript.display()),
        );
    }
    outcome.map(|_| Status::Success)
}

fn prompt(context: &Context, args: &PromptArgs) -> Result<Status> {
    let started = Instant::now();
    match prompt_context(context, args, started) {
        Ok(Some(line)) => output::print(&format!("{line}\n")),
        Ok(None) => {
            if args.verbose {
                output::error_line("hook: nothing to add for this prompt");
            }
        }
        Err(why) => {
            if args.verbose {
                output::error_line(&format!("hook: printing nothing: {why}"));
            }
        }
    }
    Ok(Status::Success)
}

/// The most a hook's stdin may hold: Claude Code's payloads are a few KiB (the prompt and some
/// fields); 4 MiB leaves room for a very long pasted prompt.
const MAX_HOOK_INPUT: u64 = 4 * 1024 * 1024;

/// The line to print, within the budget counted from `started`: from the running Engram when
/// one answers on the hook socket (its corpora are in memory), else by recalling here.
fn prompt_context(
    context: &Context,
    args: &PromptArgs,
    started: Instant,
) -> std::result::Result<Option<String>, String> {
    let overrides = args.llm.overrides().map_err(|e| e.to_string())?;
    // Read once: the budget and the provider both come from it.
    let config = context.engine.load_config().map_err(|e| e.to_string())?;
    let budget = args
        .budget_ms
        .map_or_else(|| config.hooks.budget(), Duration::from_millis);
    let deadline = started + budget;
    let remaining = || deadline.saturating_duration_since(Instant::now());
    // stdin is read on a plain thread: one that never closes must not hold the hook past its
    // budget, and a blocked thread is simply abandoned when the process exits.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // A hook payload is a prompt and a few fields: anything past the cap is not one, and
        // reading it all would cost time and memory the budget does not have.
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .take(MAX_HOOK_INPUT + 1)
            .read_to_end(&mut bytes)
            .and_then(|n| {
                if n as u64 > MAX_HOOK_INPUT {
                    Err(std::io::Error::other(format!(
                        "the hook payload is over {MAX_HOOK_INPUT} bytes"
                    )))
                } else {
                    String::from_utf8(bytes).map_err(std::io::Error::other)
                }
            });
        let _ = sender.send(read);
    });
    let stdin = match receiver.recv_timeout(remaining()) {
        Ok(read) => read.map_err(|e| format!("cannot read stdin: {e}"))?,
        Err(_) => return Err(format!("time budget of {} ms ran out", budget.as_millis())),
    };

    let request = HookRequest {
        stdin,
        provider: overrides.provider,
        model: overrides.model.clone(),
        claude_home: context.engine.claude_home(),
    };
    match context.engine.ask_hook_server(&request, remaining()) {
        Ok(Some(reply)) if reply.served => {
            if args.verbose {
                output::error_line(&format!("hook: answered by Engram (pid {})", reply.pid));
            }
            return match reply.error {
                Some(error) => Err(error),
                None => Ok(reply.output),
            };
        }
        // Not this configuration's server, none running, or it failed: recall here.
        Ok(_) => {}
        // Not answered in time, or not by this user's Engram: nothing from it is printed.
        Err(why) => {
            if args.verbose {
                output::error_line(&format!(
                    "hook: recalling here, not asking the running Engram: {why}"
                ));
            }
        }
    }

    // One worker thread runs the work, so the budget's timer (on this thread) fires even while
    // the work is busy computing: a time budget that CPU-bound ranking could overrun is no bound.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let engine = context.engine.clone();
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let worker_cancel = cancel.clone();
        let stdin = request.stdin;
        let work = async move {
            engine
                .user_prompt_submit_with(&stdin, &overrides, &config, &worker_cancel)
                .await
                .map_err(|e| e.to_string())
        };
        let work = tokio::spawn(work);
        match tokio::time::timeout_at(deadline.into(), work).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(format!("hook worker failed: {e}")),
            Err(_) => {
                cancel.cancel();
                Err(format!("time budget of {} ms ran out", budget.as_millis()))
            }
        }
    });
    // Do not wait for blocking work still running (a keyring read stuck on D-Bus, a slow disk):
    // the budget is the budget.
    runtime.shutdown_background();
    let outcome = outcome?;
    // Within the budget, so it is printed: now it counts as shown to the session.
    context
        .engine
        .record_prompt_hook_shown(&outcome)
        .map_err(|e| e.to_string())?;
    Ok(outcome.output)
}
