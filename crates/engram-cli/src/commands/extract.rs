//! `engram extract ID|PATH [--stage|--apply]`: extracts memories from a session's messages since
//! its cursor, as the Stop hook does after each turn. `--json` prints the change set as
//! `engram changes show` does (plus `"status"` when nothing was proposed, `"refused"` and
//! `"redacted"`, and always `"extractor"`, `model` or `offline`, and `"reason"`, e.g. why the
//! rules extracted when the daily token budget is reached). Each secret replaced and each file
//! refused is also one line on stderr, whatever the output; so is each transcript line that could
//! not be read (`"skippedLines"`).

use memory_engine::config::DreamPolicy;
use memory_engine::extract::{ExtractOptions, ExtractStatus};
use memory_engine::job::CancellationToken;
use memory_engine::Result;

use super::recall::{runtime, LlmArgs};
use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session id, or its first characters (searched in every project), or the path of a
    /// `.jsonl` transcript
    pub session: String,
    /// Keep every change for review (`engram changes`), whatever the project's policy
    #[arg(long, conflicts_with = "apply")]
    pub stage: bool,
    /// Apply at once, except protected changes (rewriting or deleting a user or feedback
    /// memory), which wait for `engram changes apply`
    #[arg(long)]
    pub apply: bool,
    /// Read the whole session, not only the messages since the last extraction
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let path = context.engine.find_transcript(&args.session)?;
    let options = ExtractOptions {
        policy: if args.stage {
            Some(DreamPolicy::Review)
        } else if args.apply {
            Some(DreamPolicy::Auto)
        } else {
            None
        },
        llm: args.llm.overrides()?,
        from_start: args.all,
        after_turn: false,
    };
    let outcome = runtime()?.block_on(context.engine.extract_session(
        &path,
        &options,
        &CancellationToken::new(),
    ))?;
    for redacted in &outcome.redacted {
        output::warning_line(&format!(
            "{}: a secret ({}) was replaced by [REDACTED:{}]; it is not saved",
            redacted.file, redacted.rule, redacted.rule
        ));
    }
    for refused in &outcome.refused {
        output::warning_line(&format!("{}: not saved: {}", refused.file, refused.reason));
    }
    for warning in &outcome.warnings {
        output::warning_line(warning);
    }
    output::skipped_lines(&path, &outcome.skipped_lines);
    if context.json() {
        let mut json = match &outcome.change_set {
            Some(set) => serde_json::to_value(set)
                .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?,
            None => serde_json::json!({
                "id": null,
                "status": outcome.status,
                "reason": outcome.reason,
                "sessionId": outcome.session_id,
                "files": [],
            }),
        };
        json["refused"] = serde_json::to_value(&outcome.refused)
            .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?;
        json["redacted"] = serde_json::to_value(&outcome.redacted)
            .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?;
        // Who extracted, and why the rules did when a model is configured (the daily budget).
        json["extractor"] = serde_json::Value::from(outcome.extractor.as_str());
        json["reason"] = serde_json::to_value(&outcome.reason)
            .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?;
        json["skippedLines"] = serde_json::to_value(&outcome.skipped_lines)
            .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?;
        json["warnings"] = serde_json::to_value(&outcome.warnings)
            .map_err(|e| memory_engine::Error::InvalidInput(e.to_string()))?;
        output::print_json(&json)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    let text = match (&outcome.status, &outcome.change_set) {
        (ExtractStatus::Extracted, Some(set)) => {
            let mut text = format!(
                "{} ({} extractor, {} new messages)\n",
                style.paint(Color::Bold, &set.summary),
                outcome.extractor,
                outcome.messages
            );
            if let Some(reason) = &outcome.reason {
                text.push_str(&format!("  {}\n", style.paint(Color::Yellow, reason)));
            }
            for file in &set.files {
                text.push_str(&format!(
                    "  {:<8} {}\n",
                    format!("{:?}", file.status).to_lowercase(),
                    file.change.file
                ));
            }
            if set.waiting() > 0 {
                text.push_str(&format!(
                    "{} waiting for review: engram changes show {}\n",
                    output::plural(set.waiting(), "change"),
                    set.id
                ));
            }
            text
        }
        (ExtractStatus::UpToDate, _) => "nothing new since the last extraction\n".to_owned(),
        (ExtractStatus::Nothing, _) => format!(
            "nothing worth keeping in {} new messages{}\n",
            outcome.messages,
            outcome
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ),
        (_, _) => format!(
            "skipped: {}\n",
            outcome.reason.as_deref().unwrap_or("nothing to do")
        ),
    };
    output::print(&text);
    Ok(Status::Success)
}
