//! Memory extraction after a turn (`FORMATS.md` §7): what a session said that is worth keeping
//! across sessions becomes topic files and index lines in the project's memory dir.
//!
//! Contract:
//! - Only the messages since the session's cursor are read. The cursor (the last processed
//!   message's uuid) lives in Engram's data dir (`<engram home>/extract/<session>.json`), never in
//!   `~/.claude`, and advances only when a run succeeds (or is skipped on purpose).
//! - Skipped, cursor advanced: when the main agent itself wrote inside the memory dir since the
//!   cursor (two writers must not race on one file: the user asked it to remember, it did), and
//!   when the new messages carry no prose (only tool output, code, JSON).
//! - With a model: a confined agent run (at most [`MAX_TURNS`] turns; read anywhere in the memory
//!   dir, write only inside it) following the two-step protocol, merging into existing files.
//!   Offline: the rule-based extractor of [`offline`] — explicit statements only. With the daily
//!   token budget reached (before or during the model's run) the rules extract instead, and the
//!   outcome says so (`extractor: "offline"`, `reason`).
//! - Every write becomes a change set. By default it is applied at once as actor `extract` (new
//!   memories and additions wait for no one), except protected changes — rewriting or deleting
//!   an existing `user`/`feedback` memory — which wait for review; the project setting
//!   `[extract.projects."<name>"] policy = "review"` (or `--stage`) stages everything.
//! - Never a secret (`redaction`): before the change set is staged, every secret it would add
//!   is replaced by `[REDACTED:<rule>]` and reported (`ExtractOutcome::redacted`, the change
//!   reasons, the set's summary); a file whose name carries one is refused with its index line.
//! - One extraction per session at a time (an exclusive lock per session in the data dir).

#[rustfmt::skip]
mod lexicon;
pub mod offline;
mod pasted;
pub mod quality;
mod redaction;

pub use redaction::RedactedSecret;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent_loop::{run_agent, AgentOptions, FinishReason};
use crate::changeset::ChangeSet;
use crate::config::{DreamPolicy, LlmOverrides};
use crate::disk;
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::job::CancellationToken;
use crate::llm::{Caller, ModelJob, ProviderKind};
use crate::memdir::RememberRequest;
use crate::scan::manifest_line;
use crate::staging::{ChangeSource, StagedChangeSet};
use crate::transcript::{Message, SkippedLine, Transcript};

/// Model calls an extraction makes at most (Claude Code's `maxTurns: 5`).
pub const MAX_TURNS: usize = 5;
/// Characters of new conversation handed to the model at most: the end of it, where the turn is.
const MAX_CONVERSATION_CHARS: usize = 60_000;

/// Why the Stop hook extracted nothing: Claude Code's auto-memory switch is off.
pub const AUTO_MEMORY_OFF: &str = "Claude Code's auto memory is off for this project \
     (CLAUDE_CODE_DISABLE_AUTO_MEMORY or autoMemoryEnabled): nothing is extracted after a turn";

/// How to run an extraction.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Override the project's policy: `Review` stages everything, `Auto` applies all but
    /// protected changes.
    pub policy: Option<DreamPolicy>,
    /// The model (`--provider`); default: `config.toml`'s, offline when none.
    pub llm: LlmOverrides,
    /// Read the whole session, not only what came after the cursor (someone asked for it
    /// explicitly; the cursor still advances).
    pub from_start: bool,
    /// Run by the Stop hook, not asked for: skipped (the cursor advanced) while Claude Code's
    /// auto memory is off for the session's project, as Claude Code's own extraction stops then.
    pub after_turn: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ExtractStatus {
    /// Changes were proposed (see the change set).
    Extracted,
    /// Ran, and found nothing worth keeping.
    Nothing,
    /// Not run on purpose; the cursor advanced (see `reason`).
    Skipped,
    /// No new messages since the cursor.
    UpToDate,
}

/// What an extraction did (`engram extract --json` prints the change set; this adds the rest).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtractOutcome {
    pub session_id: String,
    pub status: ExtractStatus,
    /// Why it was skipped or found nothing, or why the rules extracted although a model is
    /// configured (the daily token budget).
    pub reason: Option<String>,
    /// Messages read since the cursor.
    pub messages: usize,
    pub memory_dir: PathBuf,
    /// The change set, as it stands after landing (applied files, files waiting).
    pub change_set: Option<StagedChangeSet>,
    /// `model` or `offline`.
    pub extractor: String,
    /// Files the extractor wrote that Engram refused to keep (what must never be saved).
    pub refused: Vec<RefusedFile>,
    /// Secrets the extractor was about to write, replaced by `[REDACTED:<rule>]`.
    pub redacted: Vec<RedactedSecret>,
    /// Transcript lines that could not be read (their messages were not seen).
    pub skipped_lines: Vec<SkippedLine>,
    /// What the person should know of the change set: an index it takes further past what
    /// Claude Code loads, naming the lines no longer seen.
    pub warnings: Vec<String>,
}

/// A file an extraction wrote and Engram dropped, with why.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedFile {
    pub file: String,
    pub reason: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cursor {
    last_uuid: Option<String>,
}

/// The error of a second extraction of a session already being extracted.
const BUSY: &str = "an extraction of this session is already running";

/// Whether `error` says another extraction of the session holds it (a caller may wait).
pub fn is_busy(error: &Error) -> bool {
    matches!(error, Error::InvalidInput(message) if message.starts_with(BUSY))
}

/// Who wrote what in a turn: the Claude Code tools that change a file.
const WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

impl Engine {
    fn extract_dir(&self) -> PathBuf {
        self.engram_home().join("extract")
    }

    fn cursor_path(&self, session: &str) -> PathBuf {
        self.extract_dir()
            .join(format!("{}.json", crate::recall::session_dir_name(session)))
    }

    fn read_cursor(&self, session: &str) -> Cursor {
        disk::read_text(&self.cursor_path(session))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn write_cursor(&self, session: &str, last_uuid: Option<&str>) -> Result<()> {
        let cursor = Cursor {
            last_uuid: last_uuid.map(str::to_owned),
        };
        let json = serde_json::to_vec(&cursor)
            .map_err(|e| Error::InvalidInput(format!("cannot encode cursor: {e}")))?;
        disk::atomic_write(&self.cursor_path(session), &json)
    }

    /// The extraction policy of `project` (a name under `<claude home>/projects/`): `auto`
    /// unless the user chose `review`.
    pub fn extract_policy(&self, project: &str) -> DreamPolicy {
        self.load_config()
            .ok()
            .and_then(|c| c.extract.projects.get(project).and_then(|p| p.policy))
            .unwrap_or(DreamPolicy::Auto)
    }

    /// Extracts memories from the transcript at `path` (see the module contract).
    pub async fn extract_session(
        &self,
        path: &Path,
        options: &ExtractOptions,
        cancel: &CancellationToken,
    ) -> Result<ExtractOutcome> {
        let engine = self.clone();
        let (path_c, options_c) = (path.to_path_buf(), options.clone());
        let prepared =
            tokio::task::spawn_blocking(move || engine.prepare_extract(&path_c, &options_c))
                .await
                .map_err(|e| Error::InvalidInput(format!("extract worker failed: {e}")))??;
        let Prepared {
            session,
            project,
            memory_dir,
            new_messages,
            last_uuid,
            skipped_lines,
            client,
            embedder,
            policy,
            fallback,
            _lock,
        } = match prepared {
            Ready::Done(outcome) => return Ok(*outcome),
            Ready::Go(prepared) => *prepared,
        };
        let outcome =
            |status, reason: Option<String>, change_set, extractor: &str| ExtractOutcome {
                session_id: session.clone(),
                status,
                reason,
                messages: new_messages.len(),
                memory_dir: memory_dir.clone(),
                change_set,
                extractor: extractor.to_owned(),
                refused: Vec::new(),
                redacted: Vec::new(),
                skipped_lines: skipped_lines.clone(),
                warnings: Vec::new(),
            };
        let mut fallback = fallback;
        let by_model = match &client {
            Some(client) => {
                match self
                    .extract_by_model(client.as_ref(), &memory_dir, &new_messages, cancel)
                    .await
                {
                    // The budget ran out between two of the run's calls: nothing of the run is
                    // kept (it only staged), the rules take over, and the outcome says why.
                    Err(Error::BudgetReached { spent, limit }) => {
                        fallback = Some(crate::llm::usage::budget_reason(spent, limit));
                        None
                    }
                    other => Some(other?),
                }
            }
            None => None,
        };
        let extractor = if by_model.is_some() {
            "model"
        } else {
            "offline"
        };
        let mut set = match by_model {
            Some(set) => set,
            None => {
                let dir = self.memory_dir(&memory_dir);
                let messages = new_messages.clone();
                tokio::task::spawn_blocking(move || {
                    plan_offline(&dir, &messages, embedder.as_deref())
                })
                .await
                .map_err(|e| Error::InvalidInput(format!("extract worker failed: {e}")))??
            }
        };
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let mut refused = drop_forbidden(&mut set)?;
        refused.extend(redaction::redact_change_set(&mut set)?);
        let redacted = redaction::redactions(&mut set);
        if set.is_empty() {
            self.write_cursor(&session, last_uuid.as_deref())?;
            let mut nothing = outcome(ExtractStatus::Nothing, fallback.clone(), None, extractor);
            if !refused.is_empty() {
                let refusals = format!(
                    "refused: {}",
                    refused
                        .iter()
                        .map(|r| format!("{} ({})", r.file, r.reason))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                nothing.reason = Some(match &fallback {
                    Some(fallback) => format!("{fallback}; {refusals}"),
                    None => refusals,
                });
            }
            nothing.refused = refused;
            return Ok(nothing);
        }
        let mut summary = format!(
            "extracted from session {}: {}",
            short(&session),
            set.summary()
        );
        let warnings = index_warnings(&set);
        for warning in &warnings {
            // "MEMORY.md is 201 lines, past the 200 Claude Code loads"; the rest is the CLI's.
            let _ = write!(
                summary,
                "; {}",
                warning.split(':').next().unwrap_or(warning)
            );
        }
        if !redacted.is_empty() {
            let mut rules: Vec<&str> = redacted.iter().map(|r| r.rule.as_str()).collect();
            rules.sort_unstable();
            rules.dedup();
            let _ = write!(
                summary,
                "; secrets redacted, never saved ({})",
                rules.join(", ")
            );
        }
        let staged =
            self.stage_change_set(&set, ChangeSource::Extract, &project, &summary, None)?;
        let staged = if policy == DreamPolicy::Auto {
            self.apply_staged(&staged.id, &[], false, Some(&memory_dir))?
        } else {
            staged
        };
        self.write_cursor(&session, last_uuid.as_deref())?;
        Ok(ExtractOutcome {
            refused,
            redacted,
            warnings,
            ..outcome(ExtractStatus::Extracted, fallback, Some(staged), extractor)
        })
    }

    /// The model's extraction: a confined agent run over the memory dir, staged only.
    async fn extract_by_model(
        &self,
        client: &dyn crate::llm::Client,
        memory_dir: &Path,
        new_messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<ChangeSet> {
        let dir = self.memory_dir(memory_dir);
        let task = {
            let messages = new_messages.to_vec();
            tokio::task::spawn_blocking(move || brief(&dir, &messages))
                .await
                .map_err(|e| Error::InvalidInput(format!("extract worker failed: {e}")))??
        };
        crate::disk::create_dir_all(memory_dir).at(memory_dir)?;
        let agent = AgentOptions {
            system: system_prompt(),
            task,
            max_turns: MAX_TURNS,
            max_tokens: 4096,
            reason: "extract".to_owned(),
            transcripts: Vec::new(),
            token_budget: None,
            single_file: None,
        };
        let run = run_agent(client, memory_dir, &agent, cancel, |_| {}).await?;
        if run.finish == FinishReason::TokenBudget {
            return Err(Error::InvalidInput(
                "extraction spent its token budget".into(),
            ));
        }
        Ok(run.changes)
    }

    fn prepare_extract(&self, path: &Path, options: &ExtractOptions) -> Result<Ready> {
        let transcript = Transcript::open(path)?;
        let session = transcript
            .session_id
            .clone()
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .ok_or_else(|| Error::InvalidInput(format!("{}: no session id", path.display())))?;
        let cwd = transcript.cwd.clone().map(PathBuf::from).ok_or_else(|| {
            Error::InvalidInput(format!(
                "{}: no entry names the working directory (cwd)",
                path.display()
            ))
        })?;
        let memory_dir = self.resolve_memory_dir(&cwd)?.memory_dir;
        let project = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock = self.lock_session_extract(&session)?;
        let messages: Vec<Message> = transcript.messages()?.collect::<Result<_>>()?;
        let cursor = self.read_cursor(&session);
        let start = cursor
            .last_uuid
            .as_deref()
            .filter(|_| !options.from_start)
            .and_then(|uuid| messages.iter().position(|m| m.uuid == uuid))
            .map_or(0, |at| at + 1);
        let new_messages: Vec<Message> = messages[start..].to_vec();
        let last_uuid = messages.last().map(|m| m.uuid.clone());
        let done = |status, reason: Option<&str>, extractor: &str| {
            Ok(Ready::Done(Box::new(ExtractOutcome {
                session_id: session.clone(),
                status,
                reason: reason.map(str::to_owned),
                messages: new_messages.len(),
                memory_dir: memory_dir.clone(),
                change_set: None,
                extractor: extractor.to_owned(),
                refused: Vec::new(),
                redacted: Vec::new(),
                skipped_lines: transcript.skipped_lines.clone(),
                warnings: Vec::new(),
            })))
        };
        if new_messages.is_empty() {
            return done(ExtractStatus::UpToDate, None, "none");
        }
        if options.after_turn && !self.auto_memory_enabled(&cwd) {
            // Messages of a time memory was off are not extracted later either.
            self.write_cursor(&session, last_uuid.as_deref())?;
            return done(ExtractStatus::Skipped, Some(AUTO_MEMORY_OFF), "none");
        }
        if main_agent_wrote_memory(&new_messages, &memory_dir) {
            self.write_cursor(&session, last_uuid.as_deref())?;
            return done(
                ExtractStatus::Skipped,
                Some("the main agent wrote to the memory dir itself in these messages"),
                "none",
            );
        }
        if !new_messages.iter().any(has_prose) {
            self.write_cursor(&session, last_uuid.as_deref())?;
            return done(
                ExtractStatus::Skipped,
                Some("no prose in the new messages (only tool output, code or JSON)"),
                "none",
            );
        }
        let config = self.load_config()?;
        let caller = Caller::new(ModelJob::Extract, &project);
        let model = self.llm_client_in(&config, &options.llm, &caller)?;
        let embedder = match model.settings.provider {
            ProviderKind::Local => Some(self.embedder_in(&config, &caller)?),
            _ => None,
        };
        // Over the daily budget (or without the key in this process) the rules extract instead,
        // and the outcome says why.
        let fallback = model.do_without();
        let client = model.client.filter(|_| fallback.is_none());
        Ok(Ready::Go(Box::new(Prepared {
            embedder,
            fallback,
            policy: options
                .policy
                .unwrap_or_else(|| self.extract_policy(&project)),
            session,
            project,
            memory_dir,
            new_messages,
            last_uuid,
            skipped_lines: transcript.skipped_lines,
            client,
            _lock: lock,
        })))
    }

    /// Holds `<engram home>/extract/<session>.lock` for the run: a second extraction of the same
    /// session (two Stop hooks in a row) gives up rather than run twice.
    fn lock_session_extract(&self, session: &str) -> Result<fs::File> {
        use fs4::fs_std::FileExt;
        let path = self
            .extract_dir()
            .join(format!("{}.lock", crate::recall::session_dir_name(session)));
        let file = crate::disk::open_lock_file(&path).at(&path)?;
        match file.try_lock_exclusive() {
            Ok(true) => Ok(file),
            Ok(false) => Err(Error::InvalidInput(format!("{BUSY} (session {session})"))),
            Err(e) => Err(Error::io(&path, e)),
        }
    }
}

enum Ready {
    Done(Box<ExtractOutcome>),
    Go(Box<Prepared>),
}

struct Prepared {
    session: String,
    project: String,
    memory_dir: PathBuf,
    new_messages: Vec<Message>,
    last_uuid: Option<String>,
    skipped_lines: Vec<SkippedLine>,
    client: Option<std::sync::Arc<dyn crate::llm::Client>>,
    /// Sentence vectors for "close to an existing memory" (provider `local`).
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    policy: DreamPolicy,
    /// Why the rules extract although a model is configured (the daily budget is reached).
    fallback: Option<String>,
    _lock: fs::File,
}

fn short(session: &str) -> &str {
    session.get(..8).unwrap_or(session)
}

/// Whether an assistant message in `messages` wrote a file inside `memory_dir` with one of
/// Claude Code's file tools.
fn main_agent_wrote_memory(messages: &[Message], memory_dir: &Path) -> bool {
    let root =
        crate::platform::fs::canonicalize(memory_dir).unwrap_or_else(|_| memory_dir.to_path_buf());
    messages
        .iter()
        .filter(|m| m.role == "assistant")
        .flat_map(|m| &m.tool_uses)
        .filter(|t| WRITE_TOOLS.contains(&t.name.as_str()))
        .filter_map(|t| t.file_path())
        .any(|file| {
            let file = Path::new(file);
            let resolved = file
                .parent()
                .and_then(|p| crate::platform::fs::canonicalize(p).ok())
                .and_then(|p| Some(p.join(file.file_name()?)))
                .unwrap_or_else(|| crate::paths::normalize_lexically(file));
            resolved.starts_with(&root) || file.starts_with(memory_dir)
        })
}

/// What `FORMATS.md` §3 says must never be saved, recognisable from the text itself whatever the
/// model was told: a git log, a file tree. (The rest of that list — code patterns, architecture —
/// takes judgement, and is the prompt's job.)
fn forbidden_content(text: &str) -> Option<&'static str> {
    let lines = || text.lines().map(str::trim_start);
    let commits = lines()
        .filter(|l| {
            l.strip_prefix("commit ").is_some_and(|rest| {
                let sha = rest.split_whitespace().next().unwrap_or("");
                sha.len() >= 7 && sha.chars().all(|c| c.is_ascii_hexdigit())
            })
        })
        .count();
    let authors = lines().filter(|l| l.starts_with("Author: ")).count();
    let one_line_log = lines()
        .filter(|l| {
            let mut words = l.split_whitespace();
            let sha = words.next().unwrap_or("");
            (7..=12).contains(&sha.len())
                && sha.chars().all(|c| c.is_ascii_hexdigit())
                && sha.chars().any(|c| c.is_ascii_digit())
                && words.next().is_some()
        })
        .count();
    if commits >= 2 || (commits >= 1 && authors >= 1) || one_line_log >= 3 {
        return Some("a git log is not a memory: git keeps it");
    }
    let tree = lines()
        .filter(|l| l.contains("├──") || l.contains("└──") || l.starts_with("│"))
        .count();
    if tree >= 3 {
        return Some("a file tree is not a memory: the files are there to look at");
    }
    None
}

/// Drops from `set` every topic file whose new content [`forbidden_content`] refuses, and its
/// index line from the staged index (which is itself dropped if nothing else changed it).
fn drop_forbidden(set: &mut ChangeSet) -> Result<Vec<RefusedFile>> {
    let refused: Vec<RefusedFile> = set
        .changes
        .iter()
        .filter(|c| !c.file.ends_with("MEMORY.md"))
        .filter_map(|c| {
            let body = crate::frontmatter::parse_document(c.after.as_deref()?).body;
            Some(RefusedFile {
                file: c.file.clone(),
                reason: forbidden_content(&body)?.to_owned(),
            })
        })
        .collect();
    for refused_file in &refused {
        drop_file(set, &refused_file.file)?;
    }
    Ok(refused)
}

/// Drops `file`'s change from `set`, and its line from the staged index (the index itself is
/// dropped if nothing else changed it).
fn drop_file(set: &mut ChangeSet, file: &str) -> Result<()> {
    set.unstage(file);
    let (index_file, link) = crate::memdir::governing_index(set.root.as_path(), file);
    if let Some(Some(staged)) = set.staged_content(&index_file) {
        let (without, removed) = crate::index::remove_entry(staged, &link);
        if removed {
            let before = set
                .changes
                .iter()
                .find(|c| c.file == index_file)
                .and_then(|c| c.before.clone());
            if before.as_deref() == Some(without.as_str())
                || (before.is_none() && without.trim().is_empty())
            {
                set.unstage(&index_file);
            } else {
                set.stage_write(&index_file, without, "index")?;
            }
        }
    }
    Ok(())
}

/// The prose of a message: what a person wrote or was told, without code blocks, tool output or
/// Claude Code's own injections.
fn prose_of(message: &Message) -> Option<String> {
    if message.is_meta || message.is_compact_summary || !message.tool_results.is_empty() {
        return None;
    }
    if message.role != "user" && message.role != "assistant" {
        return None;
    }
    prose_text(&message.text)
}

/// The prose of a message's text: `None` for a JSON document, else the text without its code
/// blocks.
fn prose_text(text: &str) -> Option<String> {
    let text = text.trim();
    if (text.starts_with('{') || text.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(text).is_ok()
    {
        return None;
    }
    let mut prose = String::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    Some(prose)
}

/// What the offline extractor keeps from a user's prompt `text`: the statements of its prose.
pub fn offline_statements(text: &str) -> Vec<offline::Statement> {
    prose_text(text)
        .map(|prose| statements_of(&prose))
        .unwrap_or_default()
}

/// The statements of `prose`, each with its secrets redacted before a memory is named after it.
fn statements_of(prose: &str) -> Vec<offline::Statement> {
    offline::statements(prose)
        .into_iter()
        .map(|s| offline::Statement::new(s.memory_type, redaction::redact_text(&s.text)))
        .collect()
}

/// At least three words of letters outside code: a sentence someone could mean.
fn has_prose(message: &Message) -> bool {
    prose_of(message).is_some_and(|prose| {
        prose
            .split_whitespace()
            .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
            .count()
            >= 3
    })
}

/// Similarity (sentence vectors) from which a statement is about an existing memory of its type:
/// all-MiniLM-L6-v2 puts a rule and its restatement at 0.8–0.9, related rules of one project
/// around 0.4–0.6. Appending to the close memory loses nothing.
const CLOSE_SIMILARITY: f32 = 0.75;

/// The offline plan: each explicit statement of the user's becomes a memory (two-step: the topic
/// file, then its index line), merged into a close existing memory of the same type — close by
/// shared words, or, with `embedder`, by meaning.
fn plan_offline(
    dir: &crate::memdir::MemoryDir,
    messages: &[Message],
    embedder: Option<&dyn Embedder>,
) -> Result<ChangeSet> {
    let mut set = ChangeSet::new(dir.root());
    let mut existing = dir.scan(None)?;
    for message in messages.iter().filter(|m| m.role == "user") {
        let Some(prose) = prose_of(message) else {
            continue;
        };
        for statement in statements_of(&prose) {
            let close = offline::close_memory(&statement, &existing).or_else(|| {
                embedder.and_then(|embedder| close_by_meaning(embedder, &statement, &existing))
            });
            let request = match close {
                Some(close) => {
                    let current = set.read(&close.file)?.unwrap_or_default();
                    let body = crate::frontmatter::parse_document(&current).body;
                    if body.contains(&statement.text) {
                        continue;
                    }
                    RememberRequest {
                        memory_type: statement.memory_type,
                        name: close.name.clone().unwrap_or_else(|| statement.name.clone()),
                        description: close
                            .description
                            .clone()
                            .unwrap_or_else(|| statement.text.clone()),
                        file: Some(close.file.clone()),
                        body: format!("{}\n- {}", body.trim_end(), statement.text),
                    }
                }
                None => RememberRequest {
                    memory_type: statement.memory_type,
                    name: statement.name.clone(),
                    description: statement.text.clone(),
                    file: None,
                    body: format!(
                        "{}\n\n**Why:** stated by the user{}.\n",
                        statement.text,
                        message
                            .timestamp
                            .as_deref()
                            .and_then(|t| t.get(..10))
                            .map(|day| format!(" on {day}"))
                            .unwrap_or_default()
                    ),
                },
            };
            let outcome = dir.plan_remember(&request, &mut set)?;
            if !existing.iter().any(|h| h.file == outcome.file) {
                existing.push(crate::scan::MemoryHeader {
                    file: outcome.file.clone(),
                    name: Some(request.name.clone()),
                    description: Some(request.description.clone()),
                    memory_type: Some(request.memory_type),
                    mtime: std::time::SystemTime::now(),
                    age: "today".to_owned(),
                    days: 0,
                });
            }
        }
    }
    for change in &mut set.changes {
        change.reason = format!("extract: {}", change.reason);
    }
    Ok(set)
}

/// For each index `set` takes further past what Claude Code loads, which lines it no longer
/// sees: the memory is saved (recall can still select it), but a session no longer starts with
/// its line, nor with the lines it pushed out.
fn index_warnings(set: &ChangeSet) -> Vec<String> {
    set.changes
        .iter()
        .filter_map(|change| {
            let after = change.after.as_deref()?;
            crate::memdir::index_growth_warning(&change.file, change.before.as_deref(), after)
        })
        .collect()
}

/// The existing memory of the statement's type most alike in meaning, when at least
/// [`CLOSE_SIMILARITY`]; `None` also when the vectors cannot be had (the statement then becomes
/// a memory of its own, as offline).
fn close_by_meaning<'a>(
    embedder: &dyn Embedder,
    statement: &offline::Statement,
    existing: &'a [crate::scan::MemoryHeader],
) -> Option<&'a crate::scan::MemoryHeader> {
    let same_type: Vec<&crate::scan::MemoryHeader> = existing
        .iter()
        .filter(|h| h.memory_type == Some(statement.memory_type))
        .collect();
    if same_type.is_empty() {
        return None;
    }
    let mut texts = vec![statement.text.clone()];
    texts.extend(
        same_type
            .iter()
            .map(|h| crate::corpus::embedding_text(h, "")),
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).ok()?;
    let (statement_vector, memory_vectors) = vectors.split_first()?;
    same_type
        .into_iter()
        .zip(memory_vectors)
        .map(|(header, vector)| (crate::embed::cosine(statement_vector, vector), header))
        .filter(|(similarity, _)| *similarity >= CLOSE_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, header)| header)
}

/// The extraction agent's instructions (after the agent loop's preamble about its tools).
fn system_prompt() -> String {
    "You are the memory extractor of a coding agent. You read the latest messages of a \
conversation and save what is worth remembering in FUTURE conversations as memory files in the \
memory directory, indexed by MEMORY.md.

You have a limited turn budget. The efficient strategy is: turn 1 — read every file you might \
update (in parallel); turn 2 — write or edit them all (in parallel). Do not investigate or verify \
anything further; the conversation is all you need.

Saving a memory is a two-step process: Step 1 — write the memory to its own file (YAML \
frontmatter: name, description (one line: what recall selects it by), type: user | feedback | \
project | reference; then the memory: the rule or fact first, then **Why:** and **How to apply:**); \
Step 2 — add a pointer to that file in MEMORY.md: one line `- [Title](file.md) — one-line hook`, \
under ~150 characters.

Rules:
- Merge into an existing file when the memory belongs there; never create a near-duplicate.
- user: who the person is and how they work. feedback: corrections and standing preferences \
about how to work (\"don't…\", \"always…\"). project: facts and decisions about the project that \
are not in the code. reference: pointers to external resources.
- Never save: code patterns, architecture, file paths or project structure, git history or logs, \
file trees, debugging recipes, anything already in CLAUDE.md, ephemeral task state, credentials \
or secrets. A request to save such things is refused: save nothing for it.
- A memory states its content. Never save a request (\"remember this log\", \"note the \
following:\") in place of what it points at, a reminder meant for the person (\"remember to \
drink water\"), a question about the past, a hypothetical, a one-off instruction for the task \
at hand, or chatter.
- Rewriting or deleting an existing user or feedback memory waits for the person's review: only \
do it to merge or to correct what they contradicted.
- When nothing is worth saving, write nothing and say so."
        .to_owned()
}

/// The first message: the manifest of the memory dir and the new messages, compactly.
fn brief(dir: &crate::memdir::MemoryDir, messages: &[Message]) -> Result<String> {
    let mut out = String::from("## Existing memories (newest first)\n");
    let headers = dir.scan(None)?;
    if headers.is_empty() {
        out.push_str("(none yet)\n");
    }
    for header in &headers {
        out.push_str(&manifest_line(header));
        out.push('\n');
    }
    out.push_str("\n## The latest messages of the conversation\n");
    let mut rendered = String::new();
    for message in messages {
        if message.is_meta {
            continue;
        }
        let _ = write!(rendered, "\n[{}] ", message.role);
        if let Some(prose) = prose_of(message) {
            rendered.push_str(&redaction::redact_text(prose.trim()));
        }
        for tool in &message.tool_uses {
            let _ = write!(rendered, "\n(tool {}", tool.name);
            if let Some(path) = tool.file_path() {
                let _ = write!(rendered, " {path}");
            }
            rendered.push(')');
        }
        if !message.tool_results.is_empty() {
            rendered.push_str("(tool output omitted)");
        }
        rendered.push('\n');
    }
    // The end of the conversation is the turn being extracted: keep it when cutting.
    if rendered.len() > MAX_CONVERSATION_CHARS {
        let mut cut = rendered.len() - MAX_CONVERSATION_CHARS;
        while !rendered.is_char_boundary(cut) {
            cut += 1;
        }
        rendered = format!("(earlier messages omitted)\n{}", &rendered[cut..]);
    }
    out.push_str(&rendered);
    out.push_str("\nSave what is worth remembering, following the rules.");
    Ok(out)
}

#[cfg(test)]
mod tests;
