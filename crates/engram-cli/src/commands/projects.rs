//! `engram projects`: every project under `<claude dir>/projects/`, most recently active first.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args) -> Result<Status> {
    let projects = context.engine.list_projects()?;
    if context.json() {
        output::print_json(&projects)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    if projects.is_empty() {
        output::print(&format!(
            "no projects in {}\n",
            context.engine.claude_home().join("projects").display()
        ));
        return Ok(Status::Success);
    }
    let mut table = Table::new(&[
        ("LAST ACTIVE", Align::Left),
        ("MEMORIES", Align::Right),
        ("SESSIONS", Align::Right),
        ("PROJECT", Align::Left),
    ]);
    for project in &projects {
        // `2026-11-22T08:38:52.863Z` → `2026-11-22 08:38`: minutes are precise enough to scan.
        let when = project.last_activity.as_deref().map_or_else(
            || "-".to_string(),
            |iso| iso.get(..16).unwrap_or(iso).replace('T', " "),
        );
        let name = match &project.path {
            Some(path) => Cell::new(path.display().to_string()),
            None => Cell::colored(format!("{} (path unknown)", project.name), Color::Dim),
        };
        let memories = if project.memory_files == 0 {
            Cell::colored("-", Color::Dim)
        } else {
            Cell::new(project.memory_files.to_string())
        };
        table.row(vec![
            Cell::colored(when, Color::Dim),
            memories,
            Cell::new(project.sessions.to_string()),
            name,
        ]);
    }
    output::print(&table.render(style));
    Ok(Status::Success)
}
