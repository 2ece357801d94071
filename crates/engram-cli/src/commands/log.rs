//! `engram log TEXT`: append a line to today's daily log (`logs/YYYY/MM/YYYY-MM-DD.md`, local
//! date), as Claude Code's assistant mode does.

use memory_engine::Result;
use serde::Serialize;

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The text to log
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
}

#[derive(Serialize)]
struct Logged {
    /// Relative to the memory dir, `/`-separated.
    file: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_dir = context.memory_dir()?;
    let path = memory_dir.append_log(&args.text.join(" "))?;
    let file = path
        .strip_prefix(memory_dir.root())
        .map(|rel| {
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_else(|_| path.display().to_string());
    if context.json() {
        output::print_json(&Logged { file })?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    output::print(&format!(
        "{} {file}\n",
        style.paint(Color::Green, "logged to")
    ));
    Ok(Status::Success)
}
