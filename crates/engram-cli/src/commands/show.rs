//! `engram show FILE`: one memory, its frontmatter, age and staleness caveat, then its body.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, type_color, type_label, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory: its file, relative to the memory dir (`feedback_testing.md`), the same
    /// without `.md`, or the name in its frontmatter ("Testing policy"), case aside
    pub file: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory = context.existing_memory_dir()?.show(&args.file)?;
    if context.json() {
        output::print_json(&memory)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let title = memory.header.name.as_deref().unwrap_or(&memory.header.file);
    let mut text = format!(
        "{}  {}  {}\n",
        style.paint(Color::Bold, title),
        style.paint(
            type_color(memory.header.memory_type),
            &format!("[{}]", type_label(memory.header.memory_type))
        ),
        style.paint(
            Color::Dim,
            &format!("{} · {}", memory.header.file, memory.header.age)
        ),
    );
    if let Some(description) = &memory.header.description {
        text.push_str(description);
        text.push('\n');
    }
    if let Some(caveat) = &memory.caveat {
        text.push_str(&style.paint(Color::Yellow, caveat.trim()));
        text.push('\n');
    }
    text.push('\n');
    text.push_str(memory.body.trim_end());
    text.push('\n');
    output::print(&text);
    Ok(Status::Success)
}
