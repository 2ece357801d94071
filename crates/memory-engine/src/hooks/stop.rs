//! **The Stop hook.** Claude Code runs `engram hook stop` when a turn ends, with JSON on stdin
//! (`session_id`, `transcript_path`, `cwd`, `stop_hook_active`, …; the transcript already holds
//! the final assistant message). The hook itself only parses the payload and starts a detached
//! worker (the CLI's job), so the turn is never held up; the worker calls [`Engine::after_turn`]:
//! the session's memory extraction ([`crate::extract`]; none while Claude Code's auto memory is
//! off for the project, as its own extraction stops then) and, when its thresholds say so, the
//! session-memory update ([`crate::session_memory`]), each run recorded as one line of
//! `<engram home>/extract/runs.jsonl`. Nothing here ever asks Claude Code to continue
//! (`"decision": "block"`): a background memory job must not steer the conversation.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::extract::{ExtractOptions, ExtractOutcome};
use crate::job::CancellationToken;

/// What Claude Code sends a Stop hook on stdin (fields Engram does not use are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StopInput {
    #[serde(default)]
    pub session_id: Option<String>,
    pub transcript_path: PathBuf,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
}

/// Reads a Stop hook's stdin; anything else is an error. The transcript must be a `.jsonl`
/// file: the worker reads it, so a payload naming anything else is refused up front.
pub fn parse_stop(stdin: &str) -> Result<StopInput> {
    let input: StopInput = serde_json::from_str(stdin).map_err(|e| {
        Error::parse(
            "<stdin>",
            Some(e.line()),
            format!("not a Stop hook payload: {e}"),
        )
    })?;
    if let Some(other) = input
        .hook_event_name
        .as_deref()
        .filter(|e| *e != super::STOP_EVENT && *e != "SubagentStop")
    {
        return Err(Error::InvalidInput(format!(
            "hook payload is for `{other}`, not {}",
            super::STOP_EVENT
        )));
    }
    if input
        .transcript_path
        .extension()
        .is_none_or(|e| e != "jsonl")
        || !input.transcript_path.is_absolute()
    {
        return Err(Error::InvalidInput(format!(
            "{}: not an absolute path to a .jsonl transcript",
            input.transcript_path.display()
        )));
    }
    Ok(input)
}

/// One worker run, as recorded in `runs.jsonl`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterTurnReport {
    pub at: String,
    pub transcript: PathBuf,
    pub extract: std::result::Result<ExtractOutcome, String>,
    /// The session-memory update: `Ok(None)` when none was due.
    pub session_memory:
        std::result::Result<Option<crate::session_memory::SessionMemoryView>, String>,
}

/// How long a worker waits for another extraction of the same session to end before giving up:
/// the one running will not see this turn's messages, so this one runs after it.
const WAIT_FOR_OTHER_RUN: Duration = Duration::from_secs(120);

/// How long the worker waits for Claude Code to finish writing the transcript.
const SETTLE_LIMIT: Duration = Duration::from_secs(15);
/// How long the transcript's size must hold still to count as written.
const SETTLE_QUIET: Duration = Duration::from_millis(300);

/// Waits until `transcript` exists and its size holds still: Claude Code appends the turn's last
/// records around the time it runs the hook (and a fresh session's file may not exist yet in
/// headless mode), so reading at once could miss the turn. Gives up quietly after a while.
async fn settle(transcript: &Path) {
    let started = std::time::Instant::now();
    let mut last: Option<u64> = None;
    while started.elapsed() < SETTLE_LIMIT {
        let size = std::fs::metadata(transcript).ok().map(|m| m.len());
        if size.is_some() && size == last {
            return;
        }
        last = size;
        tokio::time::sleep(SETTLE_QUIET).await;
    }
}

impl Engine {
    /// The worker of the Stop hook: extraction for the session of `transcript`, recorded in
    /// `runs.jsonl`. Waits for a run of the same session already going (one at a time).
    pub async fn after_turn(
        &self,
        transcript: &Path,
        options: &ExtractOptions,
        cancel: &CancellationToken,
    ) -> Result<AfterTurnReport> {
        settle(transcript).await;
        let options = &ExtractOptions {
            after_turn: true,
            ..options.clone()
        };
        let started = std::time::Instant::now();
        let extract = loop {
            match self.extract_session(transcript, options, cancel).await {
                Err(e) if crate::extract::is_busy(&e) && started.elapsed() < WAIT_FOR_OTHER_RUN => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                other => break other.map_err(|e| e.to_string()),
            }
        };
        let session_memory = self
            .update_session_memory(transcript, &options.llm, false, cancel)
            .await
            .map_err(|e| e.to_string());
        let report = AfterTurnReport {
            at: crate::staleness::iso_time(self.clock().now()),
            transcript: transcript.to_path_buf(),
            extract,
            session_memory,
        };
        self.record_after_turn(&report)?;
        Ok(report)
    }

    fn record_after_turn(&self, report: &AfterTurnReport) -> Result<()> {
        let dir = self.engram_home().join("extract");
        crate::disk::create_dir_all(&dir).at(&dir)?;
        let path = dir.join("runs.jsonl");
        let mut line = serde_json::to_string(report)
            .map_err(|e| Error::InvalidInput(format!("cannot encode the run: {e}")))?;
        line.push('\n');
        crate::disk::with_mode_for(std::fs::OpenOptions::new().create(true).append(true), &path)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .at(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_checked() {
        let ok = parse_stop(
            r#"{"session_id":"s","transcript_path":"/h/.claude/projects/p/s.jsonl","cwd":"/w","hook_event_name":"Stop","stop_hook_active":false}"#,
        )
        .expect("a Stop payload");
        assert_eq!(ok.session_id.as_deref(), Some("s"));
        for bad in [
            r#"{"transcript_path":"/etc/passwd","hook_event_name":"Stop"}"#,
            r#"{"transcript_path":"rel/s.jsonl"}"#,
            r#"{"transcript_path":"/a/s.jsonl","hook_event_name":"UserPromptSubmit"}"#,
            "not json",
        ] {
            assert!(parse_stop(bad).is_err(), "{bad}");
        }
    }
}
