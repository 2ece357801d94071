//! `engram`: parse arguments, call one engine operation, render its result.
//!
//! Every subcommand lives in its own module under `commands/` (an `Args` struct and a `run`);
//! adding one is a variant in [`Command`] plus a module. Output is either for people (aligned
//! columns, colour on a terminal) or, with `--json`, the engine's own types serialized with
//! camelCase keys — that JSON is a stable interface.
//!
//! Exit codes: 0 success, 1 `lint` found errors or a dream failed, 130 a dream was killed, 2 bad
//! usage or bad input (one line on stderr, `engram: <error>`, naming the file and line where
//! there is one).

mod commands;
mod output;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use commands::{Context, GlobalArgs, Status};
use memory_engine::hooks::unattended_environment;
use memory_engine::platform::Os;
use memory_engine::Environment;

#[derive(Debug, Parser)]
#[command(
    name = "engram",
    version,
    about = "See and manage Claude Code's file-based memory",
    propagate_version = true
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show where the project's memory and transcripts live, and why.
    Where(commands::r#where::Args),
    /// List every project Claude Code has seen, most recently active first.
    Projects(commands::projects::Args),
    /// List memory files with their frontmatter, newest first.
    Scan(commands::scan::Args),
    /// Show MEMORY.md as Claude Code loads it, with its budget.
    Index(commands::index::Args),
    /// Check the memory dir for problems; exits 1 when any is an error.
    Lint(commands::lint::Args),
    /// Show one memory file.
    Show(commands::show::Args),
    /// Create or update a memory and its index line.
    Remember(commands::remember::Args),
    /// Delete a memory and its index line.
    Forget(commands::forget::Args),
    /// Append a line to today's daily log.
    Log(commands::log::Args),
    /// List the recorded versions of the memory files, newest first, with who made them.
    History(commands::history::Args),
    /// Put a file back to a recorded version (itself recorded as a new version).
    Revert(commands::revert::Args),
    /// Search every project's memories; all words must match.
    Search(commands::search::Args),
    /// Recall the memories relevant to a prompt (offline BM25, or a configured model).
    Recall(commands::recall::Args),
    /// Run as one of Claude Code's hooks (reads the hook payload on stdin; always exits 0).
    Hook(commands::hook::Args),
    /// Install, remove or check Engram's hooks in Claude Code's settings.json.
    Hooks(commands::hooks::Args),
    /// Consolidate memory as Claude Code's auto-dream does, with every change reviewable.
    Dream(commands::dream::Args),
    /// Review the change sets dreams staged: list, show, apply, reject, undo.
    Changes(commands::changes::Args),
    /// List the project's Claude Code sessions (transcripts), most recently active first.
    Sessions(commands::sessions::Args),
    /// Show one session's conversation as Claude Code resumes it.
    Transcript(commands::transcript::Args),
    /// Show or update a session's rolling summary (summary.md).
    SessionMemory(commands::session_memory::Args),
    /// Extract memories from a session's new messages, as the Stop hook does after each turn.
    Extract(commands::extract::Args),
    /// List subagents' memory and their team snapshots; sync or publish a snapshot.
    Agents(commands::agents::Args),
    /// Team memory: check a key a teammate sent.
    Team(commands::team::Args),
    /// Personal sync: this person's memory on every machine through their own git remote.
    Sync(commands::sync::Args),
    /// Scan files for secrets (API keys, tokens, private keys).
    Secrets(commands::secrets::Args),
    /// The local embedding model behind `--provider local`: status, fetch.
    Models(commands::models::Args),
    /// Memory no session loads any more (old worktree keys, moved projects); merge it back.
    Stranded(commands::stranded::Args),
    /// Tokens used by every model call, per day, project and job; today's against the budget.
    Usage(commands::usage::Args),
    /// Serve the project's memory and sessions over MCP (stdio); install it into Claude Code.
    Mcp(commands::mcp::Args),
    /// Print shell completions or the man page (for packagers).
    #[command(hide = true)]
    Generate(commands::generate::Args),
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors and 0 for --help/--version, as the contract wants.
    let cli = Cli::parse();
    let env = match &cli.command {
        Command::Hook(args) if args.is_run_by_claude_code() => {
            unattended_environment(Environment::from_process(), Os::CURRENT)
        }
        _ => Environment::from_process(),
    };
    let context = Context::new(cli.global, env);
    let result = match cli.command {
        Command::Where(args) => commands::r#where::run(&context, args),
        Command::Projects(args) => commands::projects::run(&context, args),
        Command::Scan(args) => commands::scan::run(&context, args),
        Command::Index(args) => commands::index::run(&context, args),
        Command::Lint(args) => commands::lint::run(&context, args),
        Command::Show(args) => commands::show::run(&context, args),
        Command::Remember(args) => commands::remember::run(&context, args),
        Command::Forget(args) => commands::forget::run(&context, args),
        Command::Log(args) => commands::log::run(&context, args),
        Command::History(args) => commands::history::run(&context, args),
        Command::Revert(args) => commands::revert::run(&context, args),
        Command::Search(args) => commands::search::run(&context, args),
        Command::Recall(args) => commands::recall::run(&context, args),
        Command::Hook(args) => commands::hook::run(&context, args),
        Command::Hooks(args) => commands::hooks::run(&context, args),
        Command::Dream(args) => commands::dream::run(&context, args),
        Command::Changes(args) => commands::changes::run(&context, args),
        Command::Sessions(args) => commands::sessions::run(&context, args),
        Command::Transcript(args) => commands::transcript::run(&context, args),
        Command::SessionMemory(args) => commands::session_memory::run(&context, args),
        Command::Extract(args) => commands::extract::run(&context, args),
        Command::Agents(args) => commands::agents::run(&context, args),
        Command::Team(args) => commands::team::run(&context, args),
        Command::Sync(args) => commands::sync::run(&context, args),
        Command::Secrets(args) => commands::secrets::run(&context, args),
        Command::Models(args) => commands::models::run(&context, args),
        Command::Stranded(args) => commands::stranded::run(&context, args),
        Command::Usage(args) => commands::usage::run(&context, args),
        Command::Mcp(args) => commands::mcp::run(&context, args),
        Command::Generate(args) => commands::generate::run(Cli::command(), args),
    };
    match result {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::Findings | Status::Failed) => ExitCode::from(1),
        Ok(Status::Killed) => ExitCode::from(130),
        Err(error) => {
            output::error_line(&error.to_string());
            ExitCode::from(2)
        }
    }
}
