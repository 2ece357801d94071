//! The confined agent's tools — `list`, `read`, `grep`, `glob`, `write`, `edit`, `delete` — over
//! one root and a [`ChangeSet`] that holds every write: each path is confined before anything
//! is touched, and a refused call becomes an error the model reads, never an action.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::glob::glob_match;
use super::{ToolDecision, TranscriptSource, GREP_MAX_MATCHES, READ_DEFAULT_LINES, TOOL_NAMES};
use crate::changeset::ChangeSet;
use crate::disk::confined_path;
use crate::error::{Error, Result};
use crate::llm::{clip, ToolSpec};
use crate::paths::normalize_lexically;

/// The tools' definitions, as the model sees them.
pub fn tool_specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: schema,
    };
    let path = json!({"type": "string", "description": "Path relative to the directory"});
    vec![
        spec(
            "list",
            "List the entries of a directory (default: the root). Directories end in `/`.",
            json!({"type": "object", "properties": {"path": path}}),
        ),
        spec(
            "read",
            "Read a text file. Optional 1-based `offset` line and `limit` lines.",
            json!({"type": "object", "properties": {
                "path": path, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
                "required": ["path"]}),
        ),
        spec(
            "grep",
            "Search file contents with a regular expression; prints `file:line: text`. Optional \
             `path` (a file or directory) and `glob` (e.g. `**/*.md`) narrow the search.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "path": path, "glob": {"type": "string"},
                "case_insensitive": {"type": "boolean"}},
                "required": ["pattern"]}),
        ),
        spec(
            "glob",
            "List files whose path matches a glob: `*` within a name, `**` across directories, \
             `?` one character.",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}},
                "required": ["pattern"]}),
        ),
        spec(
            "write",
            "Create or replace a file with `content`.",
            json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}},
                "required": ["path", "content"]}),
        ),
        spec(
            "edit",
            "Replace `old_string` with `new_string` in a file. `old_string` must occur exactly \
             once unless `replace_all` is true.",
            json!({"type": "object", "properties": {
                "path": path, "old_string": {"type": "string"}, "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}},
                "required": ["path", "old_string", "new_string"]}),
        ),
        spec(
            "delete",
            "Delete a file.",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        ),
    ]
}

/// What one tool call did.
pub(super) struct ToolOutcome {
    pub(super) decision: ToolDecision,
    pub(super) path: Option<String>,
    pub(super) output: String,
    pub(super) is_error: bool,
}

impl ToolOutcome {
    fn ok(path: Option<String>, output: String) -> ToolOutcome {
        ToolOutcome {
            decision: ToolDecision::Allowed,
            path,
            output,
            is_error: false,
        }
    }

    fn error(path: Option<String>, output: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            decision: ToolDecision::Allowed,
            path,
            output: output.into(),
            is_error: true,
        }
    }

    fn denied(reason: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            decision: ToolDecision::Denied,
            path: None,
            output: format!("Denied: {}", reason.into()),
            is_error: true,
        }
    }
}

/// A refused or failed call, before it becomes a [`ToolOutcome`].
enum Refusal {
    Denied(String),
    Failed(Option<String>, String),
}

impl From<Refusal> for ToolOutcome {
    fn from(refusal: Refusal) -> ToolOutcome {
        match refusal {
            Refusal::Denied(reason) => ToolOutcome::denied(reason),
            Refusal::Failed(path, message) => ToolOutcome::error(path, message),
        }
    }
}

/// The root, the staged changes, and the tools over them.
pub(super) struct Workspace {
    pub(super) root: PathBuf,
    real_root: Option<PathBuf>,
    pub(super) set: ChangeSet,
    reason: String,
    /// Read-only transcripts, by session id: the only files outside the root the agent reaches.
    transcripts: Vec<TranscriptSource>,
    /// A one-file job (see `AgentOptions::single_file`).
    pub(super) single_file: Option<String>,
}

impl Workspace {
    pub(super) fn new(root: &Path, reason: &str, transcripts: &[TranscriptSource]) -> Workspace {
        Workspace {
            root: root.to_path_buf(),
            real_root: crate::platform::fs::canonicalize(root).ok(),
            set: ChangeSet::new(root),
            reason: reason.to_owned(),
            transcripts: transcripts.to_vec(),
            single_file: None,
        }
    }

    pub(super) fn run(&mut self, name: &str, input: &Value) -> ToolOutcome {
        if let Some(only) = self.single_file.clone() {
            let target = optional_str(input, "path").map(|p| self.resolve(p, false));
            let result = match (name, target) {
                ("edit", Some(Ok(rel))) if rel == only => self.edit(input),
                _ => Err(Refusal::Denied(format!(
                    "the only tool here is `edit` on {only}"
                ))),
            };
            return result.unwrap_or_else(ToolOutcome::from);
        }
        let result = match name {
            "list" => self.list(input),
            "read" => self.read(input),
            "grep" => self.grep(input),
            "glob" => self.glob(input),
            "write" => self.write(input),
            "edit" => self.edit(input),
            "delete" => self.delete(input),
            "transcript_read" if !self.transcripts.is_empty() => self.transcript_read(input),
            "transcript_grep" if !self.transcripts.is_empty() => self.transcript_grep(input),
            other => Err(Refusal::Denied(format!(
                "there is no tool `{other}`; the tools are {}",
                TOOL_NAMES.join(", ")
            ))),
        };
        result.unwrap_or_else(ToolOutcome::from)
    }

    /// `raw` as a key relative to the root, or a denial. `""` is the root itself, accepted only
    /// where a directory is (`allow_root`).
    fn resolve(&self, raw: &str, allow_root: bool) -> Result<String, Refusal> {
        let raw_trimmed = raw.trim();
        let rel = if Path::new(raw_trimmed).is_absolute() {
            let normalized = normalize_lexically(Path::new(raw_trimmed));
            let inside = normalized.strip_prefix(&self.root).ok().or_else(|| {
                self.real_root
                    .as_ref()
                    .and_then(|real| normalized.strip_prefix(real).ok())
            });
            match inside {
                Some(rel) => rel.to_string_lossy().into_owned(),
                None => {
                    return Err(Refusal::Denied(format!(
                        "{raw_trimmed} is outside {}",
                        self.root.display()
                    )))
                }
            }
        } else {
            let mut rel = raw_trimmed;
            while let Some(rest) = rel.strip_prefix("./") {
                rel = rest;
            }
            if rel == "." {
                rel = "";
            }
            rel.trim_end_matches('/').to_owned()
        };
        if rel.is_empty() {
            return if allow_root {
                Ok(rel)
            } else {
                Err(Refusal::Failed(None, "a file path is required".to_owned()))
            };
        }
        confined_path(&self.root, &rel).map_err(|e| match e {
            Error::Io { .. } => Refusal::Failed(Some(rel.clone()), e.to_string()),
            _ => Refusal::Denied(format!("{raw_trimmed}: {}", denial_text(&e, &self.root))),
        })?;
        Ok(rel)
    }

    fn list(&self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let rel = self.resolve(optional_str(input, "path").unwrap_or(""), true)?;
        let dir = self.root.join(&rel);
        let mut entries: Vec<String> = Vec::new();
        let on_disk = fs::read_dir(&dir);
        if let Ok(read) = on_disk {
            for entry in read.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let key = join_key(&rel, &name);
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let is_dir = if kind.is_symlink() {
                    // Only links that stay inside are shown; walks never follow them into dirs.
                    if confined_path(&self.root, &key).is_err() {
                        continue;
                    }
                    fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
                } else {
                    kind.is_dir()
                };
                if !is_dir && self.set.staged_content(&key) == Some(None) {
                    continue;
                }
                entries.push(if is_dir { format!("{name}/") } else { name });
            }
        } else if !self.staged_under(&rel) {
            return Err(Refusal::Failed(
                Some(rel.clone()),
                format!("{}: no such directory", display_key(&rel)),
            ));
        }
        for change in &self.set.changes {
            if change.after.is_none() {
                continue;
            }
            let Some(rest) = strip_dir(&change.file, &rel) else {
                continue;
            };
            let entry = match rest.split_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => rest.to_owned(),
            };
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        entries.sort();
        let output = if entries.is_empty() {
            "(empty)".to_owned()
        } else {
            entries.join("\n")
        };
        Ok(ToolOutcome::ok(Some(rel), output))
    }

    fn staged_under(&self, rel: &str) -> bool {
        self.set
            .changes
            .iter()
            .any(|c| c.after.is_some() && strip_dir(&c.file, rel).is_some())
    }

    fn read(&mut self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let rel = self.resolve(required_str(input, "path")?, false)?;
        let text = self.read_text(&rel)?;
        let offset = input
            .get("offset")
            .and_then(Value::as_u64)
            .map_or(1, |n| n.max(1) as usize);
        let limit = input
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(READ_DEFAULT_LINES, |n| n as usize);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let start = (offset - 1).min(total);
        let end = start.saturating_add(limit).min(total);
        let mut output: String = lines[start..end].concat();
        if start > 0 || end < total {
            output.push_str(&format!(
                "\n[lines {}–{end} of {total}; use offset/limit for more]",
                start + 1
            ));
        }
        if total == 0 {
            output = "(empty file)".to_owned();
        }
        Ok(ToolOutcome::ok(Some(rel), output))
    }

    /// The file as it will be once staged changes land.
    fn read_text(&mut self, rel: &str) -> Result<String, Refusal> {
        let failed = |message: String| Refusal::Failed(Some(rel.to_owned()), message);
        if self.set.staged_content(rel).is_none() && self.root.join(rel).is_dir() {
            return Err(failed(format!("{rel}: is a directory (use list)")));
        }
        match self.set.read(rel) {
            Ok(Some(text)) => Ok(text),
            Ok(None) => Err(failed(format!("{rel}: no such file"))),
            Err(e) => Err(failed(e.to_string())),
        }
    }

    fn grep(&mut self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let pattern = required_str(input, "pattern")?;
        let insensitive = input
            .get("case_insensitive")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let regex = regex::RegexBuilder::new(pattern)
            .case_insensitive(insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Refusal::Failed(None, format!("invalid pattern: {e}")))?;
        let rel = self.resolve(optional_str(input, "path").unwrap_or(""), true)?;
        let glob = optional_str(input, "glob");
        let files = if !rel.is_empty() && self.is_file(&rel) {
            vec![rel.clone()]
        } else {
            self.files_under(&rel)
        };
        let mut matches = Vec::new();
        let mut more = false;
        'files: for file in files {
            if glob.is_some_and(|g| !glob_match(g, &file)) {
                continue;
            }
            let Ok(text) = self.read_text(&file) else {
                continue;
            };
            for (n, line) in text.lines().enumerate() {
                if regex.is_match(line) {
                    if matches.len() == GREP_MAX_MATCHES {
                        more = true;
                        break 'files;
                    }
                    matches.push(format!("{file}:{}: {}", n + 1, clip(line, 300)));
                }
            }
        }
        let mut output = if matches.is_empty() {
            "No matches.".to_owned()
        } else {
            matches.join("\n")
        };
        if more {
            output.push_str(&format!("\n[only the first {GREP_MAX_MATCHES} matches]"));
        }
        Ok(ToolOutcome::ok(Some(rel), output))
    }

    /// The transcript of one offered session, as lines `N: text` where text is each JSONL
    /// record's readable part (`offset`, `limit` in lines). Only offered sessions are reachable.
    fn transcript_read(&self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let source = self.transcript(required_str(input, "session")?)?;
        let offset = input.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let limit = input
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(READ_DEFAULT_LINES, |l| l as usize);
        let text = transcript_text(&source.path)
            .map_err(|e| Refusal::Failed(None, format!("{}: {e}", source.session)))?;
        let lines: Vec<String> = text
            .iter()
            .enumerate()
            .skip(offset)
            .take(limit)
            .map(|(n, line)| format!("{}: {}", n + 1, clip(line, 2000)))
            .collect();
        let output = if lines.is_empty() {
            "(no more lines)".to_owned()
        } else {
            lines.join("\n")
        };
        Ok(ToolOutcome::ok(
            Some(format!("transcripts/{}", source.session)),
            output,
        ))
    }

    /// Lines of the offered transcripts (or of one `session`) matching `pattern`.
    fn transcript_grep(&self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let pattern = required_str(input, "pattern")?;
        let regex = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Refusal::Failed(None, format!("invalid pattern: {e}")))?;
        let sources: Vec<&TranscriptSource> = match optional_str(input, "session") {
            Some(session) => vec![self.transcript(session)?],
            None => self.transcripts.iter().collect(),
        };
        let mut matches = Vec::new();
        'sessions: for source in sources {
            let Ok(text) = transcript_text(&source.path) else {
                continue;
            };
            for (n, line) in text.iter().enumerate() {
                if regex.is_match(line) {
                    if matches.len() == GREP_MAX_MATCHES {
                        break 'sessions;
                    }
                    matches.push(format!("{}:{}: {}", source.session, n + 1, clip(line, 300)));
                }
            }
        }
        let output = if matches.is_empty() {
            "No matches.".to_owned()
        } else {
            matches.join("\n")
        };
        Ok(ToolOutcome::ok(None, output))
    }

    fn transcript(&self, session: &str) -> Result<&TranscriptSource, Refusal> {
        self.transcripts
            .iter()
            .find(|t| t.session == session)
            .ok_or_else(|| {
                Refusal::Denied(format!(
                    "{session}: not a session offered to this run (offered: {})",
                    self.transcripts
                        .iter()
                        .map(|t| t.session.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }

    fn glob(&self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let pattern = required_str(input, "pattern")?;
        if Path::new(pattern).is_absolute() || pattern.split('/').any(|part| part == "..") {
            return Err(Refusal::Denied(format!(
                "{pattern}: patterns are relative to {}",
                self.root.display()
            )));
        }
        let pattern = pattern.trim_start_matches("./");
        let found: Vec<String> = self
            .files_under("")
            .into_iter()
            .filter(|f| glob_match(pattern, f))
            .collect();
        let output = if found.is_empty() {
            "No files matched.".to_owned()
        } else {
            found.join("\n")
        };
        Ok(ToolOutcome::ok(None, output))
    }

    fn write(&mut self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let rel = self.resolve(required_str(input, "path")?, false)?;
        let content = required_str(input, "content")?.to_owned();
        if self.set.staged_content(&rel).is_none() && self.root.join(&rel).is_dir() {
            return Err(Refusal::Failed(
                Some(rel.clone()),
                format!("{rel}: is a directory"),
            ));
        }
        // A new file's name must be one every OS can hold; an existing one is kept as it is.
        // A case twin of a file on disk is that file on a case-insensitive volume (written
        // under its own spelling) and refused on a case-sensitive one; so is a case twin of a
        // file this run already staged.
        let rel = if self.set.staged_content(&rel).is_none() {
            crate::platform::case::new_key_on_disk(&self.root, &rel)
                .map_err(|e| Refusal::Denied(e.to_string()))?
        } else {
            rel
        };
        let is_new = self.set.staged_content(&rel).is_none()
            && fs::symlink_metadata(self.root.join(&rel)).is_err();
        if is_new {
            crate::platform::names::check_portable_key(&rel)
                .map_err(|e| Refusal::Denied(e.to_string()))?;
            let staged = crate::platform::case::CaseIndex::new(
                self.set.changes.iter().map(|c| c.file.as_str()),
            );
            if let Some(twin) = staged.twin(&rel) {
                return Err(Refusal::Denied(
                    crate::platform::case::case_twin_refused(&rel, twin).to_string(),
                ));
            }
        }
        let bytes = content.len();
        self.set
            .stage_write(&rel, content, &self.reason)
            .map_err(|e| Refusal::Failed(Some(rel.clone()), e.to_string()))?;
        Ok(ToolOutcome::ok(
            Some(rel.clone()),
            format!("Staged {rel} ({bytes} bytes)."),
        ))
    }

    fn edit(&mut self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let rel = self.resolve(required_str(input, "path")?, false)?;
        let old = required_str(input, "old_string")?;
        let new = required_str(input, "new_string")?;
        let all = input
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let failed = |message: String| Refusal::Failed(Some(rel.clone()), message);
        if old.is_empty() {
            return Err(failed("old_string is empty".to_owned()));
        }
        let text = self.read_text(&rel)?;
        let count = text.matches(old).count();
        let updated = match count {
            0 => return Err(failed(format!("{rel}: old_string not found"))),
            1 => text.replacen(old, new, 1),
            _ if all => text.replace(old, new),
            n => {
                return Err(failed(format!(
                    "{rel}: old_string occurs {n} times; include more context or set replace_all"
                )))
            }
        };
        self.set
            .stage_write(&rel, updated, &self.reason)
            .map_err(|e| failed(e.to_string()))?;
        Ok(ToolOutcome::ok(
            Some(rel.clone()),
            format!("Staged an edit of {rel} ({count} replaced)."),
        ))
    }

    fn delete(&mut self, input: &Value) -> Result<ToolOutcome, Refusal> {
        let rel = self.resolve(required_str(input, "path")?, false)?;
        if self.set.staged_content(&rel).is_none() && self.root.join(&rel).is_dir() {
            return Err(Refusal::Failed(
                Some(rel.clone()),
                format!("{rel}: is a directory; delete its files"),
            ));
        }
        self.set
            .stage_delete(&rel, &self.reason)
            .map_err(|e| Refusal::Failed(Some(rel.clone()), e.to_string()))?;
        Ok(ToolOutcome::ok(
            Some(rel.clone()),
            format!("Staged the deletion of {rel}."),
        ))
    }

    fn is_file(&self, rel: &str) -> bool {
        match self.set.staged_content(rel) {
            Some(staged) => staged.is_some(),
            None => self.root.join(rel).is_file(),
        }
    }

    /// Every file under `rel` (the root for `""`) as it will be once staged changes land,
    /// sorted: the disk's files (symlinked dirs not followed, symlinked files only when they stay
    /// inside) plus staged additions, minus staged deletions.
    fn files_under(&self, rel: &str) -> Vec<String> {
        let mut files = Vec::new();
        let mut pending = vec![rel.to_owned()];
        while let Some(dir) = pending.pop() {
            let Ok(read) = fs::read_dir(self.root.join(&dir)) else {
                continue;
            };
            for entry in read.flatten() {
                let key = join_key(&dir, &entry.file_name().to_string_lossy());
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    pending.push(key);
                } else if kind.is_file()
                    || kind.is_symlink()
                        && fs::metadata(entry.path()).is_ok_and(|m| m.is_file())
                        && confined_path(&self.root, &key).is_ok()
                {
                    files.push(key);
                }
            }
        }
        files.retain(|f| self.set.staged_content(f) != Some(None));
        for change in &self.set.changes {
            if change.after.is_some()
                && strip_dir(&change.file, rel).is_some()
                && !files.contains(&change.file)
            {
                files.push(change.file.clone());
            }
        }
        files.sort();
        files
    }
}

/// The tools over read-only transcripts, offered when a run has some.
pub fn transcript_tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "transcript_read".to_owned(),
            description: "Read a past session's transcript (read-only): one line per record, \
                          `role: text`. Use offset/limit to page."
                .to_owned(),
            input_schema: json!({"type": "object", "properties": {
                "session": {"type": "string"}, "offset": {"type": "integer"},
                "limit": {"type": "integer"}}, "required": ["session"]}),
        },
        ToolSpec {
            name: "transcript_grep".to_owned(),
            description: "Search past sessions' transcripts (read-only) for a regular \
                          expression, case-insensitive; `session` narrows to one."
                .to_owned(),
            input_schema: json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "session": {"type": "string"}},
                "required": ["pattern"]}),
        },
    ]
}

/// A transcript's records as readable lines: `role: text` for messages (text blocks and tool
/// names), skipping metadata records. Malformed lines are skipped.
fn transcript_text(path: &Path) -> std::io::Result<Vec<String>> {
    let raw = fs::read(path)?;
    let text = String::from_utf8_lossy(&raw);
    let mut lines = Vec::new();
    for record in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(record.trim_start_matches('\u{feff}')) else {
            continue;
        };
        let Some(kind) = value.get("type").and_then(Value::as_str) else {
            continue;
        };
        if !matches!(kind, "user" | "assistant") {
            continue;
        }
        let content = &value["message"]["content"];
        let mut parts: Vec<String> = Vec::new();
        match content {
            Value::String(text) => parts.push(text.clone()),
            Value::Array(blocks) => {
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = block.get("text").and_then(Value::as_str) {
                                parts.push(t.to_owned());
                            }
                        }
                        Some("tool_use") => {
                            if let Some(name) = block.get("name").and_then(Value::as_str) {
                                parts.push(format!("[tool {name}]"));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if !parts.is_empty() {
            lines.push(format!("{kind}: {}", parts.join(" ").replace('\n', " ")));
        }
    }
    Ok(lines)
}

/// Why `confined_path` refused, in words for the model (the root is named, not repeated).
fn denial_text(e: &Error, root: &Path) -> String {
    match e {
        Error::PathDenied { .. } => format!("outside {}", root.display()),
        other => other.to_string(),
    }
}

fn join_key(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

fn display_key(rel: &str) -> &str {
    if rel.is_empty() {
        "."
    } else {
        rel
    }
}

/// `file` relative to directory `dir` (`""` is the root), if it is inside it.
fn strip_dir<'a>(file: &'a str, dir: &str) -> Option<&'a str> {
    if dir.is_empty() {
        return Some(file);
    }
    file.strip_prefix(dir)?.strip_prefix('/')
}

fn required_str<'a>(input: &'a Value, key: &str) -> Result<&'a str, Refusal> {
    input.get(key).and_then(Value::as_str).ok_or_else(|| {
        Refusal::Failed(
            None,
            format!(
                "missing string argument `{key}` (got {})",
                clip(&input.to_string(), 200)
            ),
        )
    })
}

fn optional_str<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}
