//! `engram sessions [--all-projects]`: the project's Claude Code sessions (transcripts), most
//! recently active first; `--json` prints `[{"id", "project", "title", "messages",
//! "firstPrompt", "lastActivity", "sidechain", "file", "bytes", …}]`.
//!
//! `engram sessions search QUERY`: hits best first; `--json` prints `[{"sessionId", "project",
//! "uuid", "role", "timestamp", "snippet", …}]`. Lines that are not searchable, transcripts that
//! could not be read and an index that had to be built again are warned about on stderr.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
    /// Every project's sessions, not only the current project's
    #[arg(long)]
    pub all_projects: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum SessionsCommand {
    /// Search what was said and done across sessions
    Search(SearchArgs),
}

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Words to find (all must match; "quotes" for a phrase)
    pub query: String,
    /// Search every project, not only the current one
    #[arg(long)]
    pub all_projects: bool,
    /// At most N hits
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

fn search(context: &Context, args: &SearchArgs) -> Result<Status> {
    let project = if args.all_projects {
        None
    } else {
        Some(context.transcripts_project()?)
    };
    let found = context
        .engine
        .search_sessions(&args.query, project.as_deref(), args.limit)?;
    if let Some(why) = &found.rebuilt {
        output::warning_line(&format!(
            "the session index was unusable and was built again from the transcripts ({why})"
        ));
    }
    for problem in &found.problems {
        output::warning_line(problem);
    }
    let hits = found.hits;
    if context.json() {
        output::print_json(&hits)?;
        return Ok(Status::Success);
    }
    if hits.is_empty() {
        output::print("no matches\n");
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let mut text = String::new();
    for hit in &hits {
        let when = hit
            .timestamp
            .as_deref()
            .and_then(|t| t.get(..16))
            .unwrap_or("")
            .replace('T', " ");
        text.push_str(&format!(
            "{} {} {}\n  {}\n",
            style.paint(Color::Dim, &when),
            style.paint(Color::Bold, &hit.role),
            style.paint(Color::Dim, &hit.session_id),
            hit.snippet.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    output::print(&text);
    Ok(Status::Success)
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    if let Some(SessionsCommand::Search(search_args)) = &args.command {
        return search(context, search_args);
    }
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
