//! `engram index`: `MEMORY.md` exactly as Claude Code loads it, with its line and size budget and
//! the truncation warning made hard to miss.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, plural, thousands, Color, Style};

/// Claude Code's budget for the loaded index (`FORMATS.md` §2).
const MAX_LINES: usize = 200;
const MAX_BYTES: usize = 25_000;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args) -> Result<Status> {
    let memory_dir = context.existing_memory_dir()?;
    let index = memory_dir.load_index()?;
    if context.json() {
        output::print_json(&index)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    if !index.exists {
        output::print(&format!(
            "no MEMORY.md in {}\n",
            memory_dir.root().display()
        ));
        return Ok(Status::Success);
    }
    let mut text = index.content.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let budget_color = if index.truncated {
        Color::Yellow
    } else {
        Color::Dim
    };
    text.push_str(&style.paint(
        budget_color,
        &format!(
            "── MEMORY.md: {} of {MAX_LINES}, {} of {} bytes, {}\n",
            plural(index.lines, "line"),
            thousands(index.bytes),
            thousands(MAX_BYTES),
            match index.entries.len() {
                1 => "1 entry".to_string(),
                n => format!("{n} entries"),
            },
        ),
    ));
    if let Some(warning) = &index.warning {
        text.push_str(&style.paint(Color::Yellow, &format!("warning: {}\n", warning.trim())));
    }
    output::print(&text);
    Ok(Status::Success)
}
