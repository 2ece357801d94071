//! `engram mcp`: Engram's memory as an MCP server over stdio, for the project of the working
//! directory (or `--project`) — what Claude Code, Codex, Cursor or Claude Desktop start.
//! `engram mcp install [--scope user|project] | uninstall [--scope …] | status`: the server's
//! entry in Claude Code's `.claude.json` (user scope) or the project's `.mcp.json`, as
//! `claude mcp add` writes it; every other byte of the file kept, a backup made first.

use memory_engine::mcp::install::{McpAction, McpChange, McpScope};
use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Add Engram's MCP server to Claude Code (running it again changes nothing)
    Install(ScopeArgs),
    /// Remove Engram's MCP server entry, leaving everything else as it was
    Uninstall(ScopeArgs),
    /// Say whether the server is configured, for the user and for this project
    Status,
}

#[derive(Debug, clap::Args)]
pub struct ScopeArgs {
    /// user: every project (Claude Code's .claude.json); project: this project's .mcp.json
    #[arg(long, value_name = "SCOPE", default_value = "user", value_parser = ["user", "project"])]
    pub scope: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    let project = context.project()?;
    let Some(action) = args.action else {
        // Serve until the client closes stdin. Nothing but JSON-RPC may go to stdout.
        let runtime = super::recall::runtime()?;
        runtime.block_on(engine.serve_mcp(project, tokio::io::stdin(), tokio::io::stdout()))?;
        return Ok(Status::Success);
    };
    let program = super::hooks::this_binary()?;
    let style = Style::detect();
    match action {
        Action::Install(scope) => {
            let change = engine.install_mcp(&program, scope.scope.parse()?, &project)?;
            report(context, &change, style)
        }
        Action::Uninstall(scope) => {
            let change = engine.uninstall_mcp(scope.scope.parse()?, &project)?;
            report(context, &change, style)
        }
        Action::Status => {
            let statuses = [McpScope::User, McpScope::Project]
                .into_iter()
                .map(|scope| engine.mcp_status(&program, scope, &project))
                .collect::<Result<Vec<_>>>()?;
            if context.json() {
                output::print_json(&statuses)?;
                return Ok(Status::Success);
            }
            let mut text = String::new();
            for status in &statuses {
                let scope = match status.scope {
                    McpScope::User => "user scope",
                    McpScope::Project => "project scope",
                };
                let state = match (status.installed, status.up_to_date, status.foreign) {
                    (true, _, true) => style.paint(Color::Yellow, "another program named engram"),
                    (true, true, _) => style.paint(Color::Green, "installed"),
                    (true, false, _) => {
                        style.paint(Color::Yellow, "installed, with another command")
                    }
                    (false, _, _) => style.paint(Color::Dim, "not installed"),
                };
                text.push_str(&format!("{state}  {scope}: {}\n", status.file.display()));
                if let Some(command) = &status.command {
                    text.push_str(&format!("  command   {command}\n"));
                }
                if !status.up_to_date && !status.foreign {
                    text.push_str(&format!("  install → {}\n", status.expected_command));
                }
            }
            output::print(&text);
            Ok(Status::Success)
        }
    }
}

fn report(context: &Context, change: &McpChange, style: Style) -> Result<Status> {
    if context.json() {
        output::print_json(change)?;
        return Ok(Status::Success);
    }
    let file = change.file.display();
    let mut text = match change.action {
        McpAction::Installed => format!(
            "{} Engram's MCP server in {file}\n  command  {}\n",
            style.paint(Color::Green, "Installed"),
            change.command
        ),
        McpAction::Updated => format!(
            "{} Engram's MCP server command in {file}\n  command  {}\n",
            style.paint(Color::Green, "Updated"),
            change.command
        ),
        McpAction::Removed => format!(
            "{} Engram's MCP server from {file}\n",
            style.paint(Color::Green, "Removed")
        ),
        McpAction::Unchanged => format!("Nothing to change in {file}\n"),
    };
    if let Some(backup) = &change.backup {
        text.push_str(&format!("  backup   {}\n", backup.display()));
    }
    output::print(&text);
    Ok(Status::Success)
}
