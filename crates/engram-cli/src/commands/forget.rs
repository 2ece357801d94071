//! `engram forget FILE`: delete a memory file and its `MEMORY.md` line.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory: its file, relative to the memory dir (`feedback_testing.md`), the same
    /// without `.md`, or the name in its frontmatter ("Testing policy"), case aside
    pub file: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let outcome = context.memory_dir()?.forget(&args.file)?;
    if context.json() {
        output::print_json(&outcome)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let index_note = if outcome.index_line_removed {
        "and its MEMORY.md line"
    } else {
        "(it had no MEMORY.md line)"
    };
    output::print(&format!(
        "{} {} {}\n",
        style.paint(Color::Red, "forgot"),
        outcome.file,
        style.paint(Color::Dim, index_note)
    ));
    Ok(Status::Success)
}
