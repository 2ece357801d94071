//! `engram scan`: the memory files Claude Code would see, newest first, with their frontmatter.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, type_color, type_label, Align, Cell, Color, Style, Table};

/// Claude Code keeps this many files after sorting; `--all` lifts the cap.
const CLAUDE_SCAN_CAP: usize = 200;
/// Descriptions are clipped to this on a terminal so each memory stays on one line.
const DESCRIPTION_WIDTH: usize = 90;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// List every file, not just the newest 200 that Claude Code considers
    #[arg(long)]
    pub all: bool,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_dir = context.existing_memory_dir()?;
    let limit = (!args.all).then_some(CLAUDE_SCAN_CAP);
    let headers = memory_dir.scan(limit)?;
    for (file, why) in memory_engine::scan::unreadable(memory_dir.root(), &headers) {
        output::warning_line(&format!(
            "{file}: cannot be read ({why}); listed without its frontmatter"
        ));
    }
    if context.json() {
        output::print_json(&headers)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    if headers.is_empty() {
        output::print(&format!("no memories in {}\n", memory_dir.root().display()));
        return Ok(Status::Success);
    }
    let mut table = Table::new(&[
        ("TYPE", Align::Left),
        ("AGE", Align::Left),
        ("FILE", Align::Left),
        ("DESCRIPTION", Align::Left),
    ]);
    for header in &headers {
        let age_color = if header.days > 1 {
            Color::Yellow
        } else {
            Color::Dim
        };
        let description = match (&header.description, &header.name) {
            (Some(description), _) => Cell::new(style.clip(description, DESCRIPTION_WIDTH)),
            (None, Some(name)) => Cell::colored(format!("{name} (no description)"), Color::Dim),
            (None, None) => Cell::colored("(no frontmatter)", Color::Dim),
        };
        table.row(vec![
            Cell::colored(
                type_label(header.memory_type),
                type_color(header.memory_type),
            ),
            Cell::colored(header.age.clone(), age_color),
            Cell::new(header.file.clone()),
            description,
        ]);
    }
    let mut text = table.render(style);
    if limit.is_some_and(|cap| headers.len() >= cap) {
        text.push_str(&style.paint(
            Color::Yellow,
            &format!("showing the newest {CLAUDE_SCAN_CAP}, as Claude Code does; --all lists every file\n"),
        ));
    }
    output::print(&text);
    Ok(Status::Success)
}
