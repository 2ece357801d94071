//! `engram sessions [--all-projects]`: the project's Claude Code sessions (transcripts), most
//! recently active first; `--json` prints `[{"id", "project", "title", "messages",
//! "firstPrompt", "lastActivity", "sidechain", "file", "bytes", …}]`.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Every project's sessions, not only the current project's
    #[arg(long)]
    pub all_projects: bool,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let project = if args.all_projects {
        None
    } else {
        Some(context.transcripts_project()?)
    };
    let listing = context.engine.list_sessions(project.as_deref())?;
    for problem in &listing.problems {
        output::warning_line(problem);
    }
    if context.json() {
        output::print_json(&listing.sessions)?;
        return Ok(Status::Success);
    }
    if listing.sessions.is_empty() {
        output::print("no sessions\n");
        return Ok(Status::Success);
    }
    let mut table = Table::new(&[
        ("LAST ACTIVE", Align::Left),
        ("MESSAGES", Align::Right),
        ("SESSION", Align::Left),
        ("TITLE", Align::Left),
    ]);
    let style = Style::detect();
    for session in &listing.sessions {
        let when = session.last_activity.as_deref().map_or_else(
            || "-".to_string(),
            |iso| iso.get(..16).unwrap_or(iso).replace('T', " "),
        );
        let messages = if session.messages_estimated {
            format!("~{}", output::thousands(session.messages))
        } else {
            output::thousands(session.messages)
        };
        let title = session.title.clone().unwrap_or_default();
        let title = if session.sidechain {
            Cell::colored(format!("(subagent) {title}"), Color::Dim)
        } else {
            Cell::new(style.clip(&title, 80))
        };
        table.row(vec![
            Cell::colored(when, Color::Dim),
            Cell::new(messages),
            Cell::new(session.id.clone()),
            title,
        ]);
    }
    output::print(&table.render(style));
    Ok(Status::Success)
}
