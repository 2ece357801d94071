//! `engram hooks install | uninstall | status`: Engram's hooks — UserPromptSubmit (recall before
//! each prompt) and Stop (extraction after each turn) — in Claude Code's user
//! `settings.json` (under `--claude-dir`, else `$CLAUDE_CONFIG_DIR`, else `~/.claude`). The
//! installed command is the absolute path of this `engram` binary. Every other byte of the file
//! is kept; a backup of the previous file goes to Engram's data dir before each change.

use std::path::PathBuf;

use memory_engine::hooks::{HookAction, HookChange};
use memory_engine::{Error, Result};

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Add Engram's UserPromptSubmit hook (recall at every prompt) and Stop hook (memory
    /// extraction after every turn); running it again changes nothing
    Install,
    /// Remove Engram's hook entries, leaving everything else as it was
    Uninstall,
    /// Say whether the hooks are installed, and with which commands
    Status,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    let program = this_binary()?;
    let style = Style::detect();
    match args.action {
        Action::Install => report(context, &engine.install_hooks(&program)?, style),
        Action::Uninstall => report(context, &engine.uninstall_hooks()?, style),
        Action::Status => {
            let status = engine.hooks_status(&program)?;
            if context.json() {
                output::print_json(&status)?;
                return Ok(Status::Success);
            }
            let mut text = String::new();
            for hook in &status.hooks {
                let state = match (hook.installed, hook.up_to_date) {
                    (true, true) => style.paint(Color::Green, "installed"),
                    (true, false) => style.paint(Color::Yellow, "installed, with another command"),
                    (false, _) => style.paint(Color::Dim, "not installed"),
                };
                text.push_str(&format!(
                    "{state}  {} hook in {}\n",
                    hook.event,
                    status.settings_file.display()
                ));
                if let Some(installed) = &hook.command {
                    text.push_str(&format!("  command   {installed}\n"));
                }
                if !hook.up_to_date {
                    text.push_str(&format!(
                        "  {}  {}\n",
                        if hook.installed {
                            "install → "
                        } else {
                            "would run"
                        },
                        hook.expected_command
                    ));
                }
            }
            if let Some(latest) = status.backups.first() {
                text.push_str(&format!("  backup    {}\n", latest.display()));
            }
            output::print(&text);
            Ok(Status::Success)
        }
    }
}

fn report(context: &Context, change: &HookChange, style: Style) -> Result<Status> {
    if context.json() {
        output::print_json(change)?;
        return Ok(Status::Success);
    }
    let file = change.settings_file.display();
    let mut text = match change.action {
        HookAction::Installed => format!(
            "{} Engram's UserPromptSubmit and Stop hooks in {file}\n{}",
            style.paint(Color::Green, "Installed"),
            command_lines(change)
        ),
        HookAction::Updated => format!(
            "{} Engram's hook commands in {file}\n{}",
            style.paint(Color::Green, "Updated"),
            command_lines(change)
        ),
        HookAction::Removed => format!(
            "{} Engram's hook from {file}\n",
            style.paint(Color::Green, "Removed")
        ),
        HookAction::Unchanged => format!("Nothing to change in {file}\n"),
    };
    if let Some(backup) = &change.backup {
        text.push_str(&format!("  backup   {}\n", backup.display()));
    }
    output::print(&text);
    Ok(Status::Success)
}

fn command_lines(change: &HookChange) -> String {
    change
        .commands
        .iter()
        .map(|command| format!("  command  {command}\n"))
        .collect()
}

/// The running `engram`, as an absolute path with symlinks resolved, so the hook keeps working
/// from any directory Claude Code runs it in.
pub fn this_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| Error::io("<current executable>", e))?;
    memory_engine::platform::fs::canonicalize(&exe).map_err(|e| Error::io(&exe, e))
}
