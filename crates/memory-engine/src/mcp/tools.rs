//! The tools of Engram's MCP server, each over the engine call the CLI makes for the same thing:
//! their inputs and outputs (the JSON schemas the server announces are derived from these
//! types), what each calls, and how each answer is kept bounded.
//!
//! | tool | engine call | CLI twin |
//! |---|---|---|
//! | `memory_search` | [`Engine::search_memory_dir`], [`Engine::search_memories`] | `engram search` |
//! | `memory_recall` | [`Engine::prompt_recall`] (the prompt hook's gate and recall) | `engram hook user-prompt-submit` |
//! | `memory_read` | [`crate::MemoryDir::show`] | `engram show` |
//! | `memory_remember` | [`crate::MemoryDir::plan_remember`], then staged and applied as extraction is | `engram remember` |
//! | `session_search` | [`Engine::search_sessions`] | `engram sessions search` |
//! | `session_read` | [`crate::transcript::Transcript::page`] | `engram transcript` |
//!
//! Bounds: a page's listed items are added while they fit [`PAGE_BYTES`] of JSON (and at most a
//! fixed count); each item's long fields are cut first (a memory's body is paged instead), so
//! no answer's text or structured content passes [`MAX_TEXT_BYTES`]. `page` is where to go on
//! (the previous answer's `nextPage`; 0 or absent: the start), `nextPage` is `null` at the end.

use std::fs;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::changeset::ChangeSet;
use crate::config::{DreamPolicy, LlmOverrides};
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::hooks::PromptRecall;
use crate::job::CancellationToken;
use crate::memdir::{RememberAction, RememberRequest};
use crate::memory_type::MemoryType;
use crate::recall::{additional_context, MAX_SELECTED};
use crate::search::SearchOptions;
use crate::staging::{ChangeSource, FileStatus};
use crate::transcript::Transcript;

/// The most text (and structured content) one answer carries.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// JSON a page's listed items may take, leaving room for the rest of the answer.
pub const PAGE_BYTES: usize = 48 * 1024;
/// Search hits per page at most.
const HITS_PER_PAGE: usize = 20;
/// Transcript messages per page at most.
const MESSAGES_PER_PAGE: usize = 40;
/// Characters of one message's prose in `session_read` (the rest is named, not sent).
const MESSAGE_CHARS: usize = 8 * 1024;
/// Characters of one tool result in `session_read`.
const TOOL_RESULT_CHARS: usize = 1024;
/// Characters of a one-line field (a name, a description) in a hit.
const FIELD_CHARS: usize = 400;
/// Characters of a memory's body per `memory_read` page.
const BODY_CHARS_PER_PAGE: usize = 40 * 1024;

/// The project the server answers for, and how it reaches the engine.
#[derive(Debug, Clone)]
pub struct Project {
    pub engine: Engine,
    /// The project's working directory (where Claude Code started the server, or `--project`).
    pub dir: PathBuf,
}

impl Project {
    /// The project's memory dir, resolved as Claude Code resolves it (it may not exist yet).
    fn memory_dir(&self) -> Result<PathBuf> {
        Ok(self.engine.resolve_memory_dir(&self.dir)?.memory_dir)
    }

    /// The project's folder under `<claude home>/projects/` (where its transcripts are).
    fn name(&self) -> String {
        self.engine
            .transcripts_dir(&self.dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// memory_search

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchInput {
    /// Words to find; a memory matches when it holds every one (in its name, description, body
    /// or file name), case-insensitively.
    pub query: String,
    /// Search every project's memory and every agent's, not only this project's.
    #[serde(default)]
    pub all_projects: bool,
    /// Where to go on: the `nextPage` of the previous answer (absent: the best hits).
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchOutput {
    pub query: String,
    /// `project` (this project's memory) or `allProjects`.
    pub scope: String,
    /// Best first.
    pub hits: Vec<MemoryHit>,
    pub page: usize,
    /// Pass as `page` for more hits; `null` when there are no more.
    pub next_page: Option<usize>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    /// Relative to its memory dir: what `memory_read` takes.
    pub file: String,
    pub name: Option<String>,
    pub description: Option<String>,
    /// user, feedback, project or reference.
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    /// The project's folder name, or an agent memory's store name: what `memory_read` takes as
    /// `project` to read a hit outside this project.
    pub project: String,
    /// The project's working directory, when known.
    pub project_path: Option<String>,
    /// The agent whose memory it is, for agent memory.
    pub agent: Option<String>,
    /// The text around the first match.
    pub snippet: String,
    pub score: f64,
    /// ISO 8601, UTC.
    pub mtime: String,
}

pub fn memory_search(project: &Project, input: SearchInput) -> Result<(SearchOutput, String)> {
    let engine = &project.engine;
    // One more than the page asks for says whether there is a next page.
    let options = SearchOptions {
        limit: input.page.saturating_add(HITS_PER_PAGE + 1),
    };
    let hits = if input.all_projects {
        engine.search_memories(&input.query, &options)?
    } else {
        let memory_dir = project.memory_dir()?;
        engine.search_memory_dir(
            &project.name(),
            Some(project.dir.clone()),
            &memory_dir,
            &input.query,
            &options,
        )?
    };
    let available: Vec<MemoryHit> = hits
        .into_iter()
        .skip(input.page)
        .take(HITS_PER_PAGE + 1)
        .map(|hit| MemoryHit {
            file: hit.file,
            name: hit.name.map(|n| clip(&n, FIELD_CHARS)),
            description: hit.description.map(|d| clip(&d, FIELD_CHARS)),
            memory_type: hit.memory_type.map(|t| t.as_str().to_owned()),
            project: hit.project,
            project_path: hit.project_path.map(|p| p.display().to_string()),
            agent: hit.agent.map(|a| a.agent_type),
            snippet: clip(&hit.snippet, FIELD_CHARS),
            score: hit.score,
            mtime: hit.mtime,
        })
        .collect();
    let total = available.len();
    let hits = fit_page(available, HITS_PER_PAGE);
    let next_page = (hits.len() < total).then_some(input.page + hits.len());
    let output = SearchOutput {
        query: input.query,
        scope: scope_name(input.all_projects),
        hits,
        page: input.page,
        next_page,
    };
    let text = render_memory_hits(&output);
    Ok((output, text))
}

fn scope_name(all_projects: bool) -> String {
    if all_projects {
        "allProjects"
    } else {
        "project"
    }
    .to_owned()
}

fn render_memory_hits(output: &SearchOutput) -> String {
    if output.hits.is_empty() {
        let more = if output.page > 0 { " more" } else { "" };
        return format!(
            "No{more} memory matches {:?} in {}.",
            output.query,
            scope_label(&output.scope)
        );
    }
    let mut text = format!(
        "Memories matching {:?} in {}, best first:\n",
        output.query,
        scope_label(&output.scope)
    );
    for (i, hit) in output.hits.iter().enumerate() {
        let title = hit.name.as_deref().unwrap_or(&hit.file);
        let kind = hit.memory_type.as_deref().unwrap_or("untyped");
        text.push_str(&format!(
            "\n{}. {title} [{kind}] — {} (project {})\n",
            output.page + i + 1,
            hit.file,
            hit.project
        ));
        if let Some(description) = &hit.description {
            text.push_str(&format!("   {description}\n"));
        }
        text.push_str(&format!("   {}\n", one_line(&hit.snippet)));
    }
    text.push_str(&more_line(output.next_page, "memory_search"));
    text
}

fn scope_label(scope: &str) -> &'static str {
    if scope == "allProjects" {
        "every project's memory"
    } else {
        "this project's memory"
    }
}

// ---------------------------------------------------------------------------------------------
// memory_recall

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallInput {
    /// The prompt (or question) to recall memories for, as a user would type it.
    pub prompt: String,
    /// At most this many memories (1 to 5; default 5).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecallOutput {
    pub prompt: String,
    /// What the prompt hook would inject, most relevant first.
    pub memories: Vec<RecalledMemory>,
    /// Why nothing was recalled when the hook would not even look (a single-word prompt,
    /// auto-memory turned off).
    pub skipped: Option<String>,
    /// Who selected: offline, local, anthropic or openai.
    pub provider: String,
    /// The text the prompt hook would add to the conversation (empty when nothing).
    pub context: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecalledMemory {
    pub file: String,
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    pub description: Option<String>,
    /// today, yesterday, N days ago.
    pub age: String,
    /// The staleness caveat when the memory is more than a day old.
    pub caveat: Option<String>,
    /// Its first 200 lines / 4,096 bytes.
    pub content: String,
    /// Whether `content` was cut (read the rest with `memory_read`).
    pub truncated: bool,
}

pub async fn memory_recall(
    project: &Project,
    input: RecallInput,
    cancel: &CancellationToken,
) -> Result<(RecallOutput, String)> {
    let limit = input.limit.unwrap_or(MAX_SELECTED);
    if limit == 0 || limit > MAX_SELECTED {
        return Err(Error::InvalidInput(format!(
            "limit must be between 1 and {MAX_SELECTED}"
        )));
    }
    let engine = project.engine.clone();
    let config = tokio::task::spawn_blocking(move || engine.load_config())
        .await
        .map_err(|e| Error::InvalidInput(format!("recall worker failed: {e}")))??;
    let recall = project
        .engine
        .prompt_recall(
            &project.dir,
            &input.prompt,
            limit,
            None,
            &LlmOverrides::default(),
            &config,
            cancel,
        )
        .await?;
    let (report, skipped) = match recall {
        PromptRecall::Skipped(why) => (None, Some(why.to_owned())),
        PromptRecall::Recalled { memory_dir, report } => {
            // A server lives for a whole session: keep the dir's corpus in memory, current
            // through a watcher, as the app does for the prompt hook.
            let engine = project.engine.clone();
            let _ =
                tokio::task::spawn_blocking(move || engine.warm_corpora().keep(&memory_dir)).await;
            let skipped = report.skipped.clone();
            (Some(*report), skipped)
        }
    };
    let output = match &report {
        Some(report) => RecallOutput {
            prompt: input.prompt,
            memories: report
                .results
                .iter()
                .map(|r| RecalledMemory {
                    file: r.file.clone(),
                    memory_type: r.memory_type.map(|t| t.as_str().to_owned()),
                    description: r.description.clone(),
                    age: r.age.clone(),
                    caveat: r.caveat.clone(),
                    content: r.content.clone(),
                    truncated: r.truncated.is_some(),
                })
                .collect(),
            skipped,
            provider: report.provider.to_string(),
            context: additional_context(&report.results),
        },
        None => RecallOutput {
            prompt: input.prompt,
            memories: Vec::new(),
            skipped,
            provider: String::new(),
            context: String::new(),
        },
    };
    let text = if output.context.is_empty() {
        match &output.skipped {
            Some(why) => format!("No memories recalled: {why}."),
            None => "No memories recalled: nothing in this project's memory relates to the prompt."
                .to_owned(),
        }
    } else {
        output.context.clone()
    };
    Ok((output, text))
}

// ---------------------------------------------------------------------------------------------
// memory_read

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadInput {
    /// The memory file, relative to the memory dir (as search and recall name it); the file
    /// without `.md`, or the memory's name, case aside, also finds it.
    pub file: String,
    /// Another memory store: a search hit's `project` (a project's folder name, or an agent
    /// memory's store name). Absent: this project's memory.
    #[serde(default)]
    pub project: Option<String>,
    /// Where to go on in a long body: the `nextPage` of the previous answer.
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadOutput {
    pub file: String,
    /// The store read: this project's folder name, or the `project` asked for.
    pub project: String,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    pub age: String,
    /// The staleness caveat when the memory is more than a day old.
    pub caveat: Option<String>,
    /// The body (after the frontmatter), or this page of it.
    pub body: String,
    /// Characters in the whole body.
    pub body_chars: usize,
    /// Where this page starts, in characters.
    pub page: usize,
    pub next_page: Option<usize>,
}

pub fn memory_read(project: &Project, input: ReadInput) -> Result<(ReadOutput, String)> {
    let engine = &project.engine;
    let (store, root) = match &input.project {
        Some(name) => (name.clone(), engine.memory_store_dir_checked(name)?),
        None => (project.name(), project.memory_dir()?),
    };
    let memory = engine.memory_dir(&root).show(&input.file)?;
    let total = memory.body.chars().count();
    if input.page > 0 && input.page >= total {
        return Err(Error::InvalidInput(format!(
            "page {} is past the end of {} ({total} characters)",
            input.page, memory.header.file
        )));
    }
    let body: String = memory
        .body
        .chars()
        .skip(input.page)
        .take(BODY_CHARS_PER_PAGE)
        .collect();
    let end = input.page + body.chars().count();
    let output = ReadOutput {
        file: memory.header.file.clone(),
        project: store,
        name: memory.header.name.clone(),
        description: memory
            .header
            .description
            .clone()
            .map(|d| clip(&d, 4 * FIELD_CHARS)),
        memory_type: memory.header.memory_type.map(|t| t.as_str().to_owned()),
        age: memory.header.age.clone(),
        caveat: memory.caveat.clone(),
        body,
        body_chars: total,
        page: input.page,
        next_page: (end < total).then_some(end),
    };
    let mut text = String::new();
    if let Some(caveat) = &output.caveat {
        text.push_str(caveat.trim());
        text.push_str("\n\n");
    }
    text.push_str(&format!(
        "Memory (saved {}): {}",
        output.age,
        root.join(&output.file).display()
    ));
    if let Some(name) = &output.name {
        text.push_str(&format!("\nname: {name}"));
    }
    if let Some(kind) = &output.memory_type {
        text.push_str(&format!("\ntype: {kind}"));
    }
    if let Some(description) = &output.description {
        text.push_str(&format!("\ndescription: {description}"));
    }
    text.push_str("\n\n");
    text.push_str(&output.body);
    if let Some(next) = output.next_page {
        text.push_str(&format!(
            "\n\n[characters {}–{end} of {total}; call memory_read with page {next} for the rest]",
            output.page
        ));
    }
    Ok((output, text))
}

// ---------------------------------------------------------------------------------------------
// memory_remember

/// What kind of memory (`FORMATS.md` §3).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryKind {
    /// Who the user is: role, preferences, knowledge.
    User,
    /// How the user wants the work done: corrections and confirmed approaches.
    Feedback,
    /// Facts about the project's work not in the code or git history.
    Project,
    /// Where to find things outside the project.
    Reference,
}

impl From<MemoryKind> for MemoryType {
    fn from(kind: MemoryKind) -> MemoryType {
        match kind {
            MemoryKind::User => MemoryType::User,
            MemoryKind::Feedback => MemoryType::Feedback,
            MemoryKind::Project => MemoryType::Project,
            MemoryKind::Reference => MemoryType::Reference,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RememberInput {
    /// A short name; a memory with the same name is updated rather than duplicated.
    pub name: String,
    /// One line saying what the memory is for: recall selects memories by it.
    pub description: String,
    #[serde(rename = "type")]
    pub memory_type: MemoryKind,
    /// The memory's text (Markdown). Empty when updating keeps the current body.
    #[serde(default)]
    pub body: String,
    /// The file, relative to the memory dir (`team/…` for team memory); derived from the type
    /// and name when absent.
    #[serde(default)]
    pub file: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RememberOutput {
    pub file: String,
    /// `created` or `updated`.
    pub action: String,
    /// `applied` (written, with its index line), `staged` (waiting for the user's review in
    /// Engram), `unchanged` (the memory already says this) or `conflict` (the file changed on
    /// disk meanwhile; nothing was overwritten).
    pub status: String,
    /// The memory's line in MEMORY.md.
    pub index_line: String,
    /// The change set recording this save (`engram changes show ID`).
    pub change_set: Option<String>,
    /// Files of the save that wait for the user's review.
    pub waiting: Vec<String>,
    /// What the user should know (a likely secret in a private memory, by rule).
    pub warnings: Vec<String>,
    /// The description this update replaced, when a memory of this name said something else:
    /// if that was another memory, the user can revert it in Engram; save this one under a name
    /// of its own.
    pub replaced_description: Option<String>,
}

pub fn memory_remember(
    project: &Project,
    input: RememberInput,
) -> Result<(RememberOutput, String)> {
    let engine = &project.engine;
    let root = project.memory_dir()?;
    let dir = engine.memory_dir(&root);
    let request = RememberRequest {
        memory_type: input.memory_type.into(),
        name: input.name,
        description: input.description,
        file: input.file,
        body: input.body,
    };
    let mut set = ChangeSet::new(&root);
    let outcome = dir.plan_remember(&request, &mut set)?;
    let action = match outcome.action {
        RememberAction::Created => "created",
        RememberAction::Updated => "updated",
    }
    .to_owned();
    let mut output = RememberOutput {
        file: outcome.file.clone(),
        action,
        status: "unchanged".to_owned(),
        index_line: outcome.index_line.clone(),
        change_set: None,
        waiting: Vec::new(),
        warnings: outcome.warnings.clone(),
        replaced_description: outcome.replaced_description.clone(),
    };
    if !set.is_empty() {
        fs::create_dir_all(&root).at(&root)?;
        // As extraction does: staged and recorded as one change set, applied at once unless
        // the project reviews everything; rewriting a user or feedback memory always waits.
        let name = project.name();
        let summary = format!("saved through MCP: {}", set.summary());
        let staged = engine.stage_change_set(&set, ChangeSource::Mcp, &name, &summary, None)?;
        let staged = if engine.extract_policy(&name) == DreamPolicy::Auto {
            engine.apply_staged(&staged.id, &[], false, Some(&root))?
        } else {
            staged
        };
        let has = |status: FileStatus| staged.files.iter().any(|f| f.status == status);
        output.status = if has(FileStatus::Conflict) || has(FileStatus::Failed) {
            "conflict"
        } else if has(FileStatus::Pending) {
            "staged"
        } else {
            "applied"
        }
        .to_owned();
        output.waiting = staged
            .waiting_files()
            .map(|f| f.change.file.clone())
            .collect();
        output.change_set = Some(staged.id);
    }
    let text = render_remember(&output, &root);
    Ok((output, text))
}

fn render_remember(output: &RememberOutput, root: &Path) -> String {
    let path = root.join(&output.file);
    let mut text = match output.status.as_str() {
        "applied" => format!(
            "Saved ({}) {}\nIndex line: {}",
            output.action,
            path.display(),
            output.index_line
        ),
        "staged" => format!(
            "Not written yet: the change to {} waits for the user's review in Engram \
             (change set {}; `engram changes show {0}`). Waiting: {}",
            output.file,
            output.change_set.as_deref().unwrap_or("?"),
            output.waiting.join(", ")
        ),
        "conflict" => format!(
            "Not written: {} changed on disk while saving; nothing was overwritten. Read it \
             again and retry.",
            output.file
        ),
        _ => format!("Nothing to change: {} already says this.", path.display()),
    };
    if let Some(replaced) = &output.replaced_description {
        text.push_str(&format!(
            "\nIts description was: {replaced}. If that was another memory, ask the user to \
             revert it in Engram and save this one under a name of its own."
        ));
    }
    for warning in &output.warnings {
        text.push_str(&format!("\nWarning: {warning}"));
    }
    text
}

// ---------------------------------------------------------------------------------------------
// session_search

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSearchInput {
    /// Words to find in prompts, replies, tool names and file paths ("quotes" for a phrase).
    pub query: String,
    /// Search every project's sessions, not only this project's.
    #[serde(default)]
    pub all_projects: bool,
    /// Where to go on: the `nextPage` of the previous answer.
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSearchOutput {
    pub query: String,
    /// `project` or `allProjects`.
    pub scope: String,
    pub hits: Vec<SessionHit>,
    pub page: usize,
    pub next_page: Option<usize>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionHit {
    /// What `session_read` takes.
    pub session_id: String,
    pub project: String,
    /// The message that matched.
    pub uuid: String,
    pub role: String,
    pub timestamp: Option<String>,
    pub snippet: String,
}

pub fn session_search(
    project: &Project,
    input: SessionSearchInput,
) -> Result<(SessionSearchOutput, String)> {
    let name = (!input.all_projects).then(|| project.name());
    let hits = project.engine.search_sessions(
        &input.query,
        name.as_deref(),
        input.page.saturating_add(HITS_PER_PAGE + 1),
    )?;
    let available: Vec<SessionHit> = hits
        .hits
        .into_iter()
        .skip(input.page)
        .map(|hit| SessionHit {
            session_id: hit.session_id,
            project: hit.project,
            uuid: hit.uuid,
            role: hit.role,
            timestamp: hit.timestamp,
            snippet: clip(&hit.snippet, FIELD_CHARS),
        })
        .collect();
    let total = available.len();
    let hits = fit_page(available, HITS_PER_PAGE);
    let next_page = (hits.len() < total).then_some(input.page + hits.len());
    let output = SessionSearchOutput {
        query: input.query,
        scope: scope_name(input.all_projects),
        hits,
        page: input.page,
        next_page,
    };
    let where_ = if output.scope == "allProjects" {
        "every project's sessions"
    } else {
        "this project's sessions"
    };
    let mut text = if output.hits.is_empty() {
        format!("No match for {:?} in {where_}.", output.query)
    } else {
        format!("Matches for {:?} in {where_}, best first:\n", output.query)
    };
    for hit in &output.hits {
        text.push_str(&format!(
            "\n- session {} ({}, {} {})\n  {}\n",
            hit.session_id,
            hit.project,
            hit.role,
            hit.timestamp.as_deref().unwrap_or("no time"),
            one_line(&hit.snippet)
        ));
    }
    text.push_str(&more_line(output.next_page, "session_search"));
    Ok((output, text))
}

// ---------------------------------------------------------------------------------------------
// session_read

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadInput {
    /// A session id, as `session_search` names it.
    pub session_id: String,
    /// Where to go on: the `nextPage` of the previous answer (a message number; 0: the start).
    #[serde(default)]
    pub page: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionReadOutput {
    pub session_id: String,
    pub title: Option<String>,
    /// The project folder the transcript is in.
    pub project: String,
    /// Messages in the conversation as Claude Code resumes it.
    pub total: usize,
    /// The number of this page's first message.
    pub page: usize,
    pub next_page: Option<usize>,
    pub messages: Vec<SessionMessage>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    pub uuid: String,
    /// user, assistant or system.
    pub role: String,
    pub timestamp: Option<String>,
    /// The prose, cut at 8,192 characters.
    pub text: String,
    /// Characters of prose not sent (0: all of it is here).
    pub text_omitted: usize,
    /// Tools the assistant called, with the file each touched when it names one.
    pub tool_uses: Vec<String>,
    /// What tools answered, each cut at 1,024 characters.
    pub tool_results: Vec<String>,
    /// Claude Code's summary of the conversation before a compaction.
    pub is_compact_summary: bool,
}

pub fn session_read(
    project: &Project,
    input: SessionReadInput,
) -> Result<(SessionReadOutput, String)> {
    let engine = &project.engine;
    let id = input.session_id.trim();
    // Only ids: a path (or anything that could become one) never reaches the file system.
    let plain = !id.is_empty()
        && id != "."
        && id != ".."
        && !id.contains(['/', '\\', '\0'])
        && !id.ends_with(".jsonl");
    if !plain {
        return Err(Error::InvalidInput(format!(
            "{id:?} is not a session id; session_search names them"
        )));
    }
    let path = match engine.project_session_transcript(&project.name(), id) {
        Ok(path) => path,
        Err(Error::NotFound(_) | Error::InvalidInput(_)) => engine.find_transcript(id)?,
        Err(e) => return Err(e),
    };
    let transcript = Transcript::open(&path)?;
    let window = transcript.page(input.page, MESSAGES_PER_PAGE)?;
    if input.page > 0 && input.page >= window.total {
        return Err(Error::InvalidInput(format!(
            "page {} is past the end of session {id} ({} messages)",
            input.page, window.total
        )));
    }
    let messages: Vec<SessionMessage> = window
        .messages
        .into_iter()
        .map(|m| {
            let chars = m.text.chars().count();
            let text = clip_chars(&m.text, MESSAGE_CHARS);
            SessionMessage {
                uuid: m.uuid,
                role: m.role,
                timestamp: m.timestamp,
                text_omitted: chars.saturating_sub(MESSAGE_CHARS),
                text,
                tool_uses: m
                    .tool_uses
                    .iter()
                    .map(|t| match t.file_path() {
                        Some(file) => clip(&format!("{} {file}", t.name), FIELD_CHARS),
                        None => clip(&t.name, FIELD_CHARS),
                    })
                    .collect(),
                tool_results: m
                    .tool_results
                    .iter()
                    .map(|r| clip(&r.text, TOOL_RESULT_CHARS))
                    .collect(),
                is_compact_summary: m.is_compact_summary,
            }
        })
        .collect();
    let read = messages.len();
    let messages = fit_page(messages, MESSAGES_PER_PAGE);
    let end = input.page + messages.len();
    let output = SessionReadOutput {
        session_id: transcript
            .session_id
            .clone()
            .unwrap_or_else(|| id.to_owned()),
        title: window.title,
        project: path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        total: window.total,
        page: input.page,
        next_page: (messages.len() < read || end < window.total).then_some(end),
        messages,
    };
    let mut text = format!(
        "Session {} — {} (messages {}–{} of {})\n",
        output.session_id,
        output.title.as_deref().unwrap_or("untitled"),
        output.page + 1,
        end,
        output.total
    );
    for message in &output.messages {
        text.push_str(&format!(
            "\n[{}{}]\n",
            message.role,
            message
                .timestamp
                .as_deref()
                .map(|t| format!(" {t}"))
                .unwrap_or_default()
        ));
        if !message.text.is_empty() {
            text.push_str(message.text.trim_end());
            text.push('\n');
        }
        if message.text_omitted > 0 {
            text.push_str(&format!("[… {} more characters]\n", message.text_omitted));
        }
        for tool in &message.tool_uses {
            text.push_str(&format!("  ▸ {tool}\n"));
        }
        for result in &message.tool_results {
            text.push_str(&format!("  ◂ {}\n", one_line(result)));
        }
    }
    text.push_str(&more_line(output.next_page, "session_read"));
    Ok((output, text))
}

// ---------------------------------------------------------------------------------------------
// Bounds

/// The first items of `items` (at most `max`) whose JSON together fits [`PAGE_BYTES`]; always
/// the first one (each item's fields are cut beforehand, so one alone always fits).
fn fit_page<T: Serialize>(items: Vec<T>, max: usize) -> Vec<T> {
    let mut used = 0;
    let mut page = Vec::new();
    for item in items.into_iter().take(max) {
        let size = serde_json::to_string(&item).map_or(PAGE_BYTES, |s| s.len());
        // The rendered text repeats each item about once: count it twice.
        if !page.is_empty() && used + 2 * size > PAGE_BYTES {
            break;
        }
        used += 2 * size;
        page.push(item);
    }
    page
}

/// `text` cut to `max` characters, marked with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `text` cut to `max` characters, unmarked (the caller says how much was left out).
fn clip_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn more_line(next_page: Option<usize>, tool: &str) -> String {
    next_page
        .map(|next| format!("\n[more: call {tool} again with page {next}]"))
        .unwrap_or_default()
}

/// `text` cut to [`MAX_TEXT_BYTES`] at a character boundary, saying so: the last guard on an
/// answer's text.
pub fn bounded_text(mut text: String) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    const NOTE: &str = "\n[cut: the answer was longer than 64 KiB]";
    let mut end = MAX_TEXT_BYTES - NOTE.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(NOTE);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_stop_before_their_byte_budget_but_never_come_back_empty() {
        let big = "x".repeat(PAGE_BYTES / 3);
        let page = fit_page(vec![big.clone(), big.clone(), big.clone()], 10);
        assert_eq!(page.len(), 1, "two would pass the budget");
        let small: Vec<String> = (0..50).map(|i| format!("hit {i}")).collect();
        assert_eq!(fit_page(small, 20).len(), 20, "the count cap");
        let huge = "y".repeat(PAGE_BYTES * 2);
        assert_eq!(fit_page(vec![huge], 20).len(), 1);
    }

    #[test]
    fn clipping_counts_characters_and_marks_the_cut() {
        assert_eq!(clip("héllo", 10), "héllo");
        assert_eq!(clip("héllo wörld", 5), "héll…");
        let text = bounded_text("é".repeat(MAX_TEXT_BYTES));
        assert!(text.len() <= MAX_TEXT_BYTES, "{}", text.len());
        assert!(text.ends_with("longer than 64 KiB]"));
    }
}
