//! `engram history [FILE]`: every recorded version of the memory dir's files (or of one file),
//! newest first, with who made it. Changes made while Engram was not running are recorded first
//! (as `external`), so the list always ends in what is on disk and every entry can be reverted to.

use memory_engine::{Actor, Result};

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this file, relative to the memory dir (`MEMORY.md` too); without `.md`, a memory
    /// as `engram show` takes it (`feedback_testing`, "Testing policy"), or a deleted one by
    /// its file or the name it had
    pub file: Option<String>,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_dir = context.existing_memory_dir()?;
    let versions = memory_dir.history(args.file.as_deref())?;
    if context.json() {
        output::print_json(&versions)?;
        return Ok(Status::Success);
    }
    if versions.is_empty() {
        output::print(&format!(
            "no history for {}\n",
            memory_dir
                .root()
                .join(args.file.unwrap_or_default())
                .display()
        ));
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let mut table = Table::new(&[
        ("VERSION", Align::Left),
        ("TIME", Align::Left),
        ("ACTOR", Align::Left),
        ("FILE", Align::Left),
        ("CHANGE", Align::Left),
    ]);
    for version in &versions {
        // `2026-11-22T08:38:52.863Z` → `2026-11-22 08:38:52`.
        let time = version
            .time
            .get(..19)
            .unwrap_or(&version.time)
            .replace('T', " ");
        let actor_color = match version.actor {
            Actor::User => Color::Green,
            Actor::External | Actor::ClaudeDream => Color::Yellow,
            Actor::Dream
            | Actor::Extract
            | Actor::Snapshot
            | Actor::Team
            | Actor::Mcp
            | Actor::Sync => Color::Magenta,
        };
        table.row(vec![
            Cell::new(&version.version),
            Cell::colored(time, Color::Dim),
            Cell::colored(version.actor.as_str(), actor_color),
            Cell::new(&version.file),
            Cell::new(&version.summary),
        ]);
    }
    output::print(&table.render(style));
    Ok(Status::Success)
}
