//! `engram remember`: write a memory (frontmatter + body) and its `MEMORY.md` line, as Claude
//! Code's two-step save does. The body comes from `--body`, `--body-file`, or piped stdin.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use memory_engine::error::IoResultExt;
use memory_engine::{Error, MemoryType, RememberAction, RememberRequest, Result};

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// user, feedback, project or reference
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: String,
    /// A short name for the memory
    #[arg(long)]
    pub name: String,
    /// One line saying what the memory is for (used to decide relevance)
    #[arg(long)]
    pub description: String,
    /// File name inside the memory dir [default: derived from the type and name]
    #[arg(long)]
    pub file: Option<String>,
    /// The memory's body
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from this file
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_type: MemoryType = args.memory_type.parse()?;
    let body = match (args.body, &args.body_file) {
        (Some(body), _) => body,
        (None, Some(path)) => memory_engine::disk::read_text(path)?,
        (None, None) => read_stdin()?,
    };
    let outcome = context.memory_dir()?.remember(RememberRequest {
        memory_type,
        name: args.name,
        description: args.description,
        file: args.file,
        body,
    })?;
    for warning in &outcome.warnings {
        output::warning_line(warning);
    }
    if context.json() {
        output::print_json(&outcome)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let (action, note) = match outcome.action {
        RememberAction::Created => ("created", ""),
        RememberAction::Updated if !outcome.file_changed && !outcome.index_changed => {
            ("unchanged", " (it already says this)")
        }
        RememberAction::Updated => ("updated", ""),
    };
    let mut text = format!(
        "{} {}{}\n",
        style.paint(Color::Green, action),
        outcome.file,
        style.paint(Color::Dim, note)
    );
    // The same name with another description rewrites a memory: say what it said, and how to
    // get it back.
    if let Some(replaced) = &outcome.replaced_description {
        text.push_str(&style.paint(
            Color::Dim,
            &format!(
                "  its description was: {replaced}\n  `engram history {}` lists its versions; \
                 `engram revert VERSION` puts one back\n",
                outcome.file
            ),
        ));
    }
    output::print(&text);
    Ok(Status::Success)
}

/// The body piped on stdin. An interactive terminal is refused rather than waited on: a user who
/// forgot `--body` should get a message, not a silent prompt.
fn read_stdin() -> Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(Error::InvalidInput(
            "no body: pass --body TEXT, --body-file PATH, or pipe it on stdin".to_string(),
        ));
    }
    let mut body = String::new();
    stdin.lock().read_to_string(&mut body).at("<stdin>")?;
    Ok(body)
}
