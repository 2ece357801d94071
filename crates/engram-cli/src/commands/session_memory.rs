//! `engram session-memory ID|PATH [--update]`: a session's rolling summary (`summary.md`, the ten
//! sections Claude Code's compaction uses), with each section's size against its budget and
//! whether an update is due. `--update` writes it now: with the configured model (an agent whose
//! only tool is editing that file), else offline from the transcript. `--json` prints
//! `{"sessionId", "path", "exists", "content", "sections": [{"header", "tokens", "overBudget"}],
//! "tokens", "due", "updatedBy", "skippedLines": [{"line", "reason"}]}` (skipped transcript lines
//! are also warned about on stderr).

use memory_engine::config::ProviderKind;
use memory_engine::job::CancellationToken;
use memory_engine::session_memory::{Due, INIT_TOKENS, UPDATE_TOKENS};
use memory_engine::Result;

use super::recall::{runtime, LlmArgs};
use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session id, or its first characters (searched in every project), or the path of a
    /// `.jsonl` transcript
    pub session: String,
    /// Write the summary now, whether or not the thresholds say it is due
    #[arg(long)]
    pub update: bool,
    /// With --update: build it from the transcript, without a model
    #[arg(long, requires = "update")]
    pub offline: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let path = context.engine.find_transcript(&args.session)?;
    let view = if args.update {
        let mut overrides = args.llm.overrides()?;
        if args.offline {
            overrides.provider = Some(ProviderKind::Offline);
        }
        runtime()?
            .block_on(context.engine.update_session_memory(
                &path,
                &overrides,
                true,
                &CancellationToken::new(),
            ))?
            .map_or_else(|| context.engine.session_memory(&path), Ok)?
    } else {
        context.engine.session_memory(&path)?
    };
    if let Some(reason) = &view.reason {
        output::warning_line(&format!("{reason}: the summary was written offline"));
    }
    output::skipped_lines(&path, &view.skipped_lines);
    if context.json() {
        output::print_json(&view)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let mut text = format!(
        "{}\n",
        style.paint(Color::Dim, &view.path.display().to_string())
    );
    match &view.content {
        Some(content) => text.push_str(content),
        None => text.push_str("no summary yet\n"),
    }
    for section in view.sections.iter().filter(|s| s.over_budget) {
        text.push_str(&format!(
            "{}\n",
            style.paint(
                Color::Yellow,
                &format!(
                    "\"{}\" is ~{} tokens, over its budget",
                    section.header, section.tokens
                )
            )
        ));
    }
    if let Some(due) = view.due {
        let why = match due {
            Due::Init => format!(
                "the session is past {} tokens with no summary",
                output::thousands(INIT_TOKENS as usize)
            ),
            Due::Update => format!(
                "{}+ tokens since the last one",
                output::thousands(UPDATE_TOKENS as usize)
            ),
        };
        text.push_str(&format!(
            "an update is due ({why}): engram session-memory {} --update\n",
            view.session_id
        ));
    }
    output::print(&text);
    Ok(Status::Success)
}
