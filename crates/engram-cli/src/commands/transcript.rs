//! `engram transcript ID|PATH`: one session's conversation, rebuilt as Claude Code resumes it
//! (chain from the leaf, compactions, rewinds kept as branches). `--json` prints `{"sessionId",
//! "title", "messages": [{"uuid", "parentUuid", "role", "timestamp", "text", "toolUses",
//! "isCompactSummary", …}], "compactions", "branches", "skippedLines": [{"line", "reason"}],
//! "unknownTypes": {type: count}, "parentCycle": line|null, …}`, streamed: any transcript size in
//! bounded memory. Skipped lines and a `parentUuid` cycle (where the chain was cut) are also
//! warned about on stderr.

use std::io::Write;

use memory_engine::transcript::Transcript;
use memory_engine::{Error, Result};

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session id, or its first characters (searched in every project), or the path of a
    /// `.jsonl` transcript
    pub session: String,
    /// Show thinking blocks too
    #[arg(long)]
    pub thinking: bool,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    match show(context, args) {
        // `engram transcript X | head` closing the pipe is not an error.
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(Status::Success)
        }
        other => other,
    }
}

fn show(context: &Context, args: Args) -> Result<Status> {
    let path = context.engine.find_transcript(&args.session)?;
    let transcript = Transcript::open(&path)?;
    output::skipped_lines(&path, &transcript.skipped_lines);
    if let Some(line) = transcript.parent_cycle {
        output::warning_line(&format!(
            "{}:{line}: parentUuid leads back into the conversation (a cycle): shown from this entry on",
            path.display()
        ));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io = |e: std::io::Error| Error::io("<stdout>", e);
    if context.json() {
        serde_json::to_writer_pretty(&mut out, &transcript).map_err(|e| {
            match e.io_error_kind() {
                Some(kind) => io(kind.into()),
                None => Error::InvalidInput(e.to_string()),
            }
        })?;
        writeln!(out).map_err(io)?;
        out.flush().map_err(io)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let title = transcript.title().unwrap_or_else(|| "(untitled)".into());
    writeln!(out, "{}", style.paint(Color::Bold, &title)).map_err(io)?;
    writeln!(
        out,
        "{}\n",
        style.paint(Color::Dim, &path.display().to_string())
    )
    .map_err(io)?;
    let mut segment = 0;
    for message in transcript.messages()? {
        let message = message?;
        if message.segment != segment {
            segment = message.segment;
            writeln!(out, "{}", style.paint(Color::Dim, "──── compacted ────")).map_err(io)?;
        }
        let when = message
            .timestamp
            .as_deref()
            .unwrap_or("")
            .get(..19)
            .unwrap_or("");
        let who = match message.role.as_str() {
            "user" if !message.tool_results.is_empty() => "tool result",
            role => role,
        };
        writeln!(
            out,
            "{} {}",
            style.paint(Color::Bold, who),
            style.paint(Color::Dim, when)
        )
        .map_err(io)?;
        if args.thinking && !message.thinking.is_empty() {
            writeln!(out, "{}", style.paint(Color::Dim, &message.thinking)).map_err(io)?;
        }
        if !message.text.is_empty() {
            writeln!(out, "{}", message.text.trim_end()).map_err(io)?;
        }
        for tool in &message.tool_uses {
            let target = tool
                .file_path()
                .map(|p| format!(" {p}"))
                .unwrap_or_default();
            writeln!(out, "  ▸ {}{target}", tool.name).map_err(io)?;
        }
        for result in &message.tool_results {
            let first = result.text.lines().next().unwrap_or("");
            writeln!(out, "  ◂ {}", style.clip(first, 100)).map_err(io)?;
        }
        writeln!(out).map_err(io)?;
    }
    for branch in &transcript.branches {
        writeln!(
            out,
            "{}",
            style.paint(
                Color::Dim,
                &format!(
                    "branch (rewound): {} messages from {} to {}",
                    branch.messages,
                    branch.fork_uuid.as_deref().unwrap_or("a separate root"),
                    branch.leaf_uuid
                )
            )
        )
        .map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(Status::Success)
}
