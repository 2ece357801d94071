//! Session memory (`FORMATS.md` §6): a rolling `summary.md` per session, next to its transcript
//! (`<project dir>/<session-id>/session-memory/summary.md`, dir 0700, file 0600), that Claude
//! Code's compaction uses as its summary.
//!
//! Contract:
//! - The file always has the ten sections of [`SECTIONS`], each `# Header` then its italic
//!   `_description_` line, intact and in order ([`check_structure`]); only the content under them
//!   changes. An update that breaks the structure is discarded.
//! - Thresholds ([`due`]): the first summary at ≥ 10,000 context tokens; then an update when
//!   ≥ 5,000 new tokens AND (≥ 3 tool calls since the last update OR the last assistant turn made
//!   no tool call). Context tokens are the last assistant message's usage (input + output +
//!   cache), else the sum of the messages' estimates. What was summarised last is remembered in
//!   Engram's data dir (`<engram home>/session-memory/<session>.json`), never in `~/.claude`.
//! - Budgets: 2,000 tokens a section, 12,000 in all (tokens ≈ chars / 4); an update prompt over
//!   budget carries Claude Code's condensing instruction; [`truncate_for_compaction`] cuts each
//!   section to its budget when the summary goes into a compaction.
//! - [`compaction_start`]: where a compaction's kept messages start (see its docs).
//! - The update is an agent run whose only tool is `edit` on that one file; offline (no model),
//!   a deterministic summary is built from the transcript ([`offline_summary`]) — also when the
//!   daily token budget is reached, and then the view says so (`reason`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent_loop::{run_agent, AgentOptions};
use crate::config::LlmOverrides;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::job::CancellationToken;
use crate::llm::{Caller, ModelJob};
use crate::transcript::{Message, SkippedLine, Transcript};

/// The sections, in order, with their italic descriptions (Claude Code's template).
pub const SECTIONS: [(&str, &str); 10] = [
    ("Session Title", "A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler"),
    ("Current State", "What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps."),
    ("Task specification", "What did the user ask to build? Any design decisions or other explanatory context"),
    ("Files and Functions", "What are the important files? In short, what do they contain and why are they relevant?"),
    ("Workflow", "What bash commands are usually run and in what order? How to interpret their output if not obvious?"),
    ("Errors & Corrections", "Errors encountered and how they were fixed. What did the user correct? What approaches failed and should not be tried again?"),
    ("Codebase and System Documentation", "What are the important system components? How do they work/fit together?"),
    ("Learnings", "What has worked well? What has not? What to avoid? Do not duplicate items from other sections"),
    ("Key results", "If the user asked a specific output such as an answer to a question, a table, or other document, repeat the exact result here"),
    ("Worklog", "Step by step, what was attempted, done? Very terse summary for each step"),
];

pub const INIT_TOKENS: u64 = 10_000;
pub const UPDATE_TOKENS: u64 = 5_000;
pub const UPDATE_TOOL_CALLS: usize = 3;
pub const SECTION_TOKENS: usize = 2_000;
pub const TOTAL_TOKENS: usize = 12_000;
pub const COMPACT_MIN_TOKENS: usize = 10_000;
pub const COMPACT_MIN_TEXT_MESSAGES: usize = 5;
pub const COMPACT_MAX_TOKENS: usize = 40_000;

/// Tokens as `FORMATS.md` §6 counts them: chars / 4.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// An empty summary: every header and description, no content.
pub fn template() -> String {
    let mut out = String::new();
    for (header, description) in SECTIONS {
        let _ = write!(out, "# {header}\n_{description}_\n\n");
    }
    out
}

/// The sections of `text`: `(header, content below its description line)`.
pub fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(header) = line.strip_prefix("# ") {
            // Its description line, if next, is not content.
            if lines
                .peek()
                .is_some_and(|l| l.starts_with('_') && l.ends_with('_'))
            {
                lines.next();
            }
            out.push((header.trim().to_owned(), String::new()));
        } else if let Some((_, content)) = out.last_mut() {
            content.push_str(line);
            content.push('\n');
        }
    }
    out
}

/// Whether `text` keeps every header and description of [`SECTIONS`], in order.
pub fn check_structure(text: &str) -> std::result::Result<(), String> {
    let mut at = 0;
    for (header, description) in SECTIONS {
        let heading = format!("# {header}\n_{description}_");
        match text[at..].find(&heading) {
            Some(found) => at += found + heading.len(),
            None => {
                return Err(format!(
                    "the section `# {header}` or its description line was changed or removed"
                ))
            }
        }
    }
    Ok(())
}

/// Each section's content cut to [`SECTION_TOKENS`] (marked as cut), for a compaction.
pub fn truncate_for_compaction(text: &str) -> String {
    let mut out = String::new();
    let descriptions: std::collections::HashMap<&str, &str> = SECTIONS.iter().copied().collect();
    for (header, content) in sections(text) {
        let _ = writeln!(out, "# {header}");
        if let Some(description) = descriptions.get(header.as_str()) {
            let _ = writeln!(out, "_{description}_");
        }
        if estimate_tokens(&content) > SECTION_TOKENS {
            let cut: String = content.chars().take(SECTION_TOKENS * 4).collect();
            let _ = writeln!(
                out,
                "{}\n[... section truncated for length ...]\n",
                cut.trim_end()
            );
        } else {
            out.push_str(&content);
        }
    }
    out
}

/// Why an update is due.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Due {
    Init,
    Update,
}

/// What the last update covered (`<engram home>/session-memory/<session>.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryState {
    pub last_uuid: Option<String>,
    pub tokens: u64,
}

/// The context size at the end of `messages` (see the module contract).
pub fn context_tokens(messages: &[Message]) -> u64 {
    messages
        .iter()
        .rev()
        .find_map(|m| m.usage.filter(|u| u.context_tokens() > 0))
        .map(|u| u.context_tokens())
        .unwrap_or_else(|| messages.iter().map(|m| m.estimated_tokens() as u64).sum())
}

/// Whether a summary is due for `messages`, given the last update's `state`.
pub fn due(messages: &[Message], state: Option<&SummaryState>) -> Option<Due> {
    let tokens = context_tokens(messages);
    let Some(state) = state else {
        return (tokens >= INIT_TOKENS).then_some(Due::Init);
    };
    if tokens < state.tokens + UPDATE_TOKENS {
        return None;
    }
    let since = state
        .last_uuid
        .as_deref()
        .and_then(|uuid| messages.iter().position(|m| m.uuid == uuid))
        .map_or(0, |at| at + 1);
    let new = &messages[since..];
    let tool_calls: usize = new.iter().map(|m| m.tool_uses.len()).sum();
    let last_turn_without_tools = messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .is_some_and(|m| m.tool_uses.is_empty());
    (tool_calls >= UPDATE_TOOL_CALLS || last_turn_without_tools).then_some(Due::Update)
}

/// Where the messages a compaction keeps start: after `last_summarized` (`None`: a resumed
/// session with nothing marked — keep everything), expanded backwards until the kept messages
/// hold ≥ [`COMPACT_MIN_TOKENS`] tokens and ≥ [`COMPACT_MIN_TEXT_MESSAGES`] messages with text,
/// but not past [`COMPACT_MAX_TOKENS`]; then further back if a kept tool result's tool use would
/// be cut off. Records sharing a `message.id` are already one [`Message`], so a cut between
/// messages never splits them.
pub fn compaction_start(messages: &[Message], last_summarized: Option<usize>) -> usize {
    let Some(last) = last_summarized else {
        return 0;
    };
    let mut start = (last + 1).min(messages.len());
    let mut tokens: usize = messages[start..]
        .iter()
        .map(Message::estimated_tokens)
        .sum();
    let mut with_text = messages[start..]
        .iter()
        .filter(|m| !m.text.trim().is_empty())
        .count();
    while start > 0 && (tokens < COMPACT_MIN_TOKENS || with_text < COMPACT_MIN_TEXT_MESSAGES) {
        let next = &messages[start - 1];
        if tokens + next.estimated_tokens() > COMPACT_MAX_TOKENS {
            break;
        }
        start -= 1;
        tokens += next.estimated_tokens();
        with_text += usize::from(!next.text.trim().is_empty());
    }
    // Never an orphan tool_result: its tool_use comes along.
    loop {
        let wanted: std::collections::HashSet<&str> = messages[start..]
            .iter()
            .flat_map(|m| m.tool_results.iter().map(|r| r.tool_use_id.as_str()))
            .collect();
        let kept_uses: std::collections::HashSet<&str> = messages[start..]
            .iter()
            .flat_map(|m| m.tool_uses.iter().map(|t| t.id.as_str()))
            .collect();
        let missing = messages[..start].iter().rposition(|m| {
            m.tool_uses
                .iter()
                .any(|t| wanted.contains(t.id.as_str()) && !kept_uses.contains(t.id.as_str()))
        });
        match missing {
            Some(at) => start = at,
            None => return start,
        }
    }
}

fn clip_chars(text: &str, max: usize) -> String {
    crate::llm::clip(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// A deterministic summary of `transcript` (no model): see the module contract.
pub fn offline_summary(transcript: &Transcript, messages: &[Message]) -> String {
    let prompts: Vec<&Message> = messages
        .iter()
        .filter(|m| {
            m.role == "user"
                && !m.is_meta
                && m.tool_results.is_empty()
                && !m.text.trim().is_empty()
                && !m.is_compact_summary
        })
        .collect();
    let last_reply = messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant" && !m.text.trim().is_empty());
    let mut body: Vec<String> = vec![String::new(); SECTIONS.len()];
    body[0] = transcript
        .title()
        .map(|t| clip_chars(&t, 120))
        .unwrap_or_default();
    if let Some(last) = prompts.last() {
        body[1].push_str(&format!("Last request: {}\n", clip_chars(&last.text, 600)));
    }
    if let Some(reply) = last_reply {
        body[1].push_str(&format!("Last reply: {}\n", clip_chars(&reply.text, 600)));
    }
    for prompt in prompts.iter().take(3) {
        body[2].push_str(&format!("- {}\n", clip_chars(&prompt.text, 400)));
    }
    let mut files: Vec<(String, std::collections::BTreeSet<String>)> = Vec::new();
    let mut commands: Vec<String> = Vec::new();
    for tool in messages.iter().flat_map(|m| &m.tool_uses) {
        if let Some(path) = tool.file_path() {
            match files.iter_mut().find(|(p, _)| p == path) {
                Some((_, tools)) => {
                    tools.insert(tool.name.clone());
                }
                None => files.push((path.to_owned(), [tool.name.clone()].into())),
            }
        }
        if let Some(command) = tool.input.get("command").and_then(|c| c.as_str()) {
            let command = clip_chars(command, 160);
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
    }
    for (path, tools) in files.iter().take(60) {
        body[3].push_str(&format!(
            "- {path} ({})\n",
            tools.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    for command in commands.iter().take(30) {
        body[4].push_str(&format!("- `{command}`\n"));
    }
    for result in messages
        .iter()
        .flat_map(|m| &m.tool_results)
        .filter(|r| r.is_error)
        .take(20)
    {
        let first = result
            .text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        body[5].push_str(&format!("- {}\n", clip_chars(first, 200)));
    }
    if let Some(reply) = last_reply {
        body[8] = clip_chars(&reply.text, 1500);
    }
    for prompt in &prompts {
        let when = prompt
            .timestamp
            .as_deref()
            .and_then(|t| t.get(11..16))
            .unwrap_or("--:--");
        body[9].push_str(&format!("- {when} {}\n", clip_chars(&prompt.text, 120)));
    }
    let mut out = String::new();
    for ((header, description), content) in SECTIONS.iter().zip(body) {
        let content = if estimate_tokens(&content) > SECTION_TOKENS {
            // Keep the newest: the end of a list is the latest work.
            let chars: Vec<char> = content.chars().collect();
            chars[chars.len() - SECTION_TOKENS * 4..]
                .iter()
                .collect::<String>()
        } else {
            content
        };
        let _ = write!(
            out,
            "# {header}\n_{description}_\n{}\n\n",
            content.trim_end()
        );
    }
    out
}

/// The update prompt for a model run over `current` and the `new` messages.
fn update_prompt(current: &str, new: &[Message]) -> String {
    let mut out = format!(
        "Update the session notes in summary.md from the latest messages of the conversation below.\n\n\
Rules:\n- The file must keep its exact structure: NEVER modify, delete or add section headers; NEVER \
modify or delete the italic _section description_ lines; ONLY update the content below them.\n\
- Keep each section under ~{SECTION_TOKENS} tokens/words.\n- IMPORTANT: always update \"Current State\" \
to reflect the most recent work.\n- Edit with the `edit` tool (old_string → new_string) on summary.md.\n"
    );
    let total = estimate_tokens(current);
    if total > TOTAL_TOKENS {
        let _ = write!(
            out,
            "\nCRITICAL: The session memory file is currently ~{total} tokens, which exceeds the maximum of \
{TOTAL_TOKENS} tokens. You MUST condense the file to fit within this budget.\n"
        );
    }
    for (header, content) in sections(current) {
        let tokens = estimate_tokens(&content);
        if tokens > SECTION_TOKENS {
            let _ = writeln!(
                out,
                "- The section \"{header}\" is ~{tokens} tokens: condense it below {SECTION_TOKENS}."
            );
        }
    }
    let _ = write!(out, "\n## summary.md now\n{current}\n## New messages\n");
    let mut rendered = String::new();
    for message in new.iter().filter(|m| !m.is_meta) {
        let _ = write!(
            rendered,
            "\n[{}] {}",
            message.role,
            clip_chars(&message.text, 2000)
        );
        for tool in &message.tool_uses {
            let _ = write!(
                rendered,
                "\n(tool {} {})",
                tool.name,
                tool.file_path().unwrap_or("")
            );
        }
        for result in message.tool_results.iter().filter(|r| r.is_error) {
            let _ = write!(
                rendered,
                "\n(tool error: {})",
                clip_chars(&result.text, 300)
            );
        }
    }
    let keep = 60_000;
    if rendered.len() > keep {
        let mut cut = rendered.len() - keep;
        while !rendered.is_char_boundary(cut) {
            cut += 1;
        }
        rendered = format!("(earlier messages omitted){}", &rendered[cut..]);
    }
    out.push_str(&rendered);
    out
}

/// One session's summary, for `engram session-memory` and the app.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMemoryView {
    pub session_id: String,
    pub path: PathBuf,
    pub exists: bool,
    pub content: Option<String>,
    pub sections: Vec<SectionStat>,
    pub tokens: usize,
    /// What [`due`] says now.
    pub due: Option<Due>,
    /// `model` or `offline`, when this view follows an update.
    pub updated_by: Option<String>,
    /// Why an update was written offline although a model is configured (the daily token
    /// budget is reached).
    pub reason: Option<String>,
    /// Transcript lines that could not be read (their messages were not counted).
    pub skipped_lines: Vec<SkippedLine>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionStat {
    pub header: String,
    pub tokens: usize,
    pub over_budget: bool,
}

/// `<project dir>/<session>/session-memory/summary.md` for the transcript `<project dir>/<session>.jsonl`.
pub fn summary_path(transcript: &Path) -> PathBuf {
    transcript
        .with_extension("")
        .join("session-memory")
        .join("summary.md")
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    use crate::platform::fs::set_mode;
    let dir = path
        .parent()
        .ok_or_else(|| Error::InvalidInput(format!("{}: no parent", path.display())))?;
    crate::disk::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    set_mode(dir, 0o700).map_err(|e| Error::io(dir, e))?;
    disk::atomic_write(path, text.as_bytes())?;
    set_mode(path, 0o600).map_err(|e| Error::io(path, e))
}

impl Engine {
    fn summary_state_path(&self, session: &str) -> PathBuf {
        self.engram_home()
            .join("session-memory")
            .join(format!("{}.json", crate::recall::session_dir_name(session)))
    }

    fn summary_state(&self, session: &str) -> Option<SummaryState> {
        disk::read_text(&self.summary_state_path(session))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
    }

    /// The summary of the session whose transcript is `transcript`.
    pub fn session_memory(&self, transcript: &Path) -> Result<SessionMemoryView> {
        let parsed = Transcript::open(transcript)?;
        let messages: Vec<Message> = parsed.messages()?.collect::<Result<_>>()?;
        let session = session_id(&parsed, transcript);
        let state = self.summary_state(&session);
        Ok(view(
            &parsed,
            &session,
            due(&messages, state.as_ref()),
            None,
        ))
    }

    /// Updates the session's summary: when `force`, or when [`due`] says so. With a model
    /// configured (or chosen in `overrides`), an agent run editing only summary.md; otherwise
    /// [`offline_summary`]. Returns `None` when nothing was due.
    pub async fn update_session_memory(
        &self,
        transcript: &Path,
        overrides: &LlmOverrides,
        force: bool,
        cancel: &CancellationToken,
    ) -> Result<Option<SessionMemoryView>> {
        let parsed = Transcript::open(transcript)?;
        let messages: Vec<Message> = parsed.messages()?.collect::<Result<_>>()?;
        let session = session_id(&parsed, transcript);
        let state = self.summary_state(&session);
        if !force && due(&messages, state.as_ref()).is_none() {
            return Ok(None);
        }
        let path = summary_path(transcript);
        let current = std::fs::read_to_string(&path)
            .ok()
            .filter(|text| check_structure(text).is_ok())
            .unwrap_or_else(template);
        let project = transcript
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let model =
            self.llm_client_for(overrides, &Caller::new(ModelJob::SessionMemory, project))?;
        // Over the daily budget (or without the key in this process) the offline summary is
        // written instead, and the view says why.
        let mut fallback = model.do_without();
        let client = model.client.filter(|_| fallback.is_none());
        let by_model = match client {
            Some(client) => {
                let since = state
                    .as_ref()
                    .and_then(|s| s.last_uuid.as_deref())
                    .and_then(|uuid| messages.iter().position(|m| m.uuid == uuid))
                    .map_or(0, |at| at + 1);
                write_private(&path, &current)?;
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let options = AgentOptions {
                    system: "You keep the running notes of a coding session, for the agent that will continue it after its context is compacted.".into(),
                    task: update_prompt(&current, &messages[since..]),
                    max_turns: 3,
                    max_tokens: 4096,
                    reason: "session memory".into(),
                    transcripts: Vec::new(),
                    token_budget: None,
                    single_file: Some("summary.md".into()),
                };
                match run_agent(client.as_ref(), &dir, &options, cancel, |_| {}).await {
                    // The budget ran out between two calls of the run: offline instead.
                    Err(Error::BudgetReached { spent, limit }) => {
                        fallback = Some(crate::llm::usage::budget_reason(spent, limit));
                        None
                    }
                    run => {
                        let edited = run?
                            .changes
                            .staged_content("summary.md")
                            .flatten()
                            .map(str::to_owned)
                            .unwrap_or(current);
                        check_structure(&edited).map_err(|why| {
                            Error::InvalidInput(format!("the model's summary was discarded: {why}"))
                        })?;
                        Some(edited)
                    }
                }
            }
            None => None,
        };
        let (updated, by) = match by_model {
            Some(edited) => (edited, "model"),
            None => (offline_summary(&parsed, &messages), "offline"),
        };
        write_private(&path, &updated)?;
        let state = SummaryState {
            last_uuid: messages.last().map(|m| m.uuid.clone()),
            tokens: context_tokens(&messages),
        };
        let json = serde_json::to_vec(&state)
            .map_err(|e| Error::InvalidInput(format!("cannot encode session memory state: {e}")))?;
        disk::atomic_write(&self.summary_state_path(&session), &json)?;
        let mut view = view(&parsed, &session, due(&messages, Some(&state)), Some(by));
        view.reason = fallback;
        Ok(Some(view))
    }
}

fn session_id(transcript: &Transcript, path: &Path) -> String {
    transcript
        .session_id
        .clone()
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

fn view(
    transcript: &Transcript,
    session: &str,
    due: Option<Due>,
    by: Option<&str>,
) -> SessionMemoryView {
    let path = summary_path(&transcript.path);
    let content = std::fs::read_to_string(&path).ok();
    let sections = content
        .as_deref()
        .map(|text| {
            sections(text)
                .into_iter()
                .map(|(header, body)| {
                    let tokens = estimate_tokens(&body);
                    SectionStat {
                        header,
                        tokens,
                        over_budget: tokens > SECTION_TOKENS,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    SessionMemoryView {
        session_id: session.to_owned(),
        exists: content.is_some(),
        tokens: content.as_deref().map_or(0, estimate_tokens),
        content,
        sections,
        path,
        due,
        updated_by: by.map(str::to_owned),
        reason: None,
        skipped_lines: transcript.skipped_lines.clone(),
    }
}

#[cfg(test)]
mod tests;
