//! [`MemoryDir`]: one auto-memory directory and the operations on it — scan, load the index, show,
//! remember, forget, lint, append to the daily log — and its recorded past ([`revert`]: history,
//! what a version changed, revert to it). `show` and `forget` take a memory as a person names it
//! ([`find`]: its file, or its name).
//!
//! `remember` is Claude Code's two-step write protocol (`FORMATS.md` §7) as one call: the topic
//! file is written atomically, then its index line is added or refreshed atomically. It never
//! creates a near-duplicate: when a memory with the same name (compared as slugs, so
//! `Testing policy` and `testing-policy` match) or the same derived file already exists, that file
//! is updated in place, keeping every frontmatter key Engram does not own. The index line goes
//! into the nearest `MEMORY.md` at or above the file (so `team/` memories land in
//! `team/MEMORY.md`); an existing line keeps its title, and its hook is rewritten only when the
//! description changed, so hand-written hooks survive body edits.
//!
//! File names for new memories are `{type}_{slug}.md` — the form most common in real memory dirs
//! (`feedback_testing_policy.md`): the name lowercased, every run of characters that are not
//! letters or digits turned into one `_`, trimmed, at most 60 characters.
//!
//! Every file argument is relative to the root and confined to it: absolute paths, `..`, NUL,
//! backslashes, names not ending in `.md`, and `MEMORY.md` itself are refused, and a path whose
//! existing part resolves (through symlinks) outside the root is denied.

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::disk::read_text;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::frontmatter::{self, FieldEdit};
use crate::index::{self, IndexEntry, LoadedIndex, INDEX_FILE};
use crate::memory_type::MemoryType;
use crate::scan::{self, MemoryHeader};
use crate::staleness::{age_label, memory_age_days, staleness_caveat};

mod find;
mod revert;

/// Longest slug used in a derived file name.
const MAX_SLUG_CHARS: usize = 60;

impl Engine {
    /// The memory dir at `root` (it need not exist yet).
    pub fn memory_dir(&self, root: impl Into<PathBuf>) -> MemoryDir {
        MemoryDir {
            root: root.into(),
            engine: self.clone(),
        }
    }
}

/// One auto-memory directory. Cheap to clone.
#[derive(Debug, Clone)]
pub struct MemoryDir {
    root: PathBuf,
    engine: Engine,
}

/// A memory file read in full.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// What a scan reports of the file: key, frontmatter fields, mtime and age.
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub header: MemoryHeader,
    /// The text after the frontmatter.
    pub body: String,
    /// Claude Code's staleness caveat when the memory is more than a day old.
    pub caveat: Option<String>,
    /// The whole file as it is on disk.
    pub content: String,
}

/// What to remember.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RememberRequest {
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    pub name: String,
    pub description: String,
    /// The file to write, relative to the root; derived from type and name when absent.
    pub file: Option<String>,
    /// The memory's text. Empty when updating keeps the existing body.
    pub body: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RememberAction {
    Created,
    Updated,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RememberOutcome {
    pub file: String,
    pub action: RememberAction,
    /// False when the request matched the file exactly and nothing was written.
    pub file_changed: bool,
    /// The file's index line after the call.
    pub index_line: String,
    pub index_changed: bool,
    /// What the person should know: a likely secret written into a private memory (team
    /// memory refuses them outright), naming the rule and where.
    pub warnings: Vec<String>,
    /// The description an update replaced (`None` when it kept it, or the memory is new): the
    /// same name with another description rewrites the memory, and the person is told what it
    /// said.
    pub replaced_description: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForgetOutcome {
    pub file: String,
    pub file_removed: bool,
    pub index_line_removed: bool,
}

impl MemoryDir {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn index_path(&self) -> PathBuf {
        self.root.join(INDEX_FILE)
    }

    /// Memory headers, newest first; `Some(200)` is Claude Code's cap, `None` lists everything.
    pub fn scan(&self, limit: Option<usize>) -> Result<Vec<MemoryHeader>> {
        scan::scan_dir(&self.root, limit, self.engine.clock().now())
    }

    /// `MEMORY.md` as Claude Code loads it; a missing index is empty, not an error.
    pub fn load_index(&self) -> Result<LoadedIndex> {
        match self.read_index()? {
            Some(raw) => Ok(index::load_index_text(&raw)),
            None => Ok(LoadedIndex::default()),
        }
    }

    fn read_index(&self) -> Result<Option<String>> {
        read_optional(&self.index_path())
    }

    /// One memory in full, with its age and staleness caveat; `memory` as
    /// [`MemoryDir::find_memory`] takes it (its file, or its name).
    pub fn show(&self, memory: &str) -> Result<Memory> {
        let (rel, path) = self.resolve(&self.find_memory(memory)?)?;
        let content = read_text(&path)?;
        let mtime = fs::metadata(&path).at(&path)?.modified().at(&path)?;
        let days = memory_age_days(mtime, self.engine.clock().now());
        let doc = frontmatter::parse_document(&content);
        Ok(Memory {
            header: MemoryHeader {
                file: rel,
                name: doc.frontmatter.name,
                description: doc.frontmatter.description,
                memory_type: doc.frontmatter.memory_type,
                mtime,
                age: age_label(days),
                days,
            },
            body: doc.body,
            caveat: staleness_caveat(days),
            content,
        })
    }

    /// Writes (or updates) a topic file, then adds or refreshes its index line, as the user: one
    /// change set, applied with the conflict check and recorded in history.
    pub fn remember(&self, req: RememberRequest) -> Result<RememberOutcome> {
        let mut set = ChangeSet::new(&self.root);
        let outcome = self.plan_remember(&req, &mut set)?;
        crate::disk::create_dir_all(&self.root).at(&self.root)?;
        self.apply_as_user(&set)?;
        Ok(outcome)
    }

    /// Stages into `set` what [`MemoryDir::remember`] writes: the topic file, then its index line.
    /// Reads through `set`, so several plans can share one change set.
    pub fn plan_remember(
        &self,
        req: &RememberRequest,
        set: &mut ChangeSet,
    ) -> Result<RememberOutcome> {
        // Both are one-line fields (frontmatter values, index hooks): line breaks become spaces.
        let name = &one_line(&req.name);
        let description = &one_line(&req.description);
        if name.is_empty() {
            return Err(Error::InvalidInput("a memory needs a name".to_string()));
        }
        if description.is_empty() {
            return Err(Error::InvalidInput(
                "a memory needs a one-line description: recall selects memories by it".to_string(),
            ));
        }
        let rel = match req.file.as_deref() {
            Some(file) => {
                let rel = validate_file_name(&self.root, file)?;
                if self.is_team_file(&rel) {
                    check_team_key(&rel)?;
                }
                crate::platform::case::new_key_on_disk(&self.root, &rel)?
            }
            None => match self.existing_memory_named(name)? {
                Some(existing) => existing,
                None => crate::platform::case::new_key_on_disk(
                    &self.root,
                    &format!("{}_{}.md", req.memory_type.as_str(), slug(name)),
                )?,
            },
        };
        // Confinement (symlinks included) is checked by the change set as it stages.
        let body = req.body.trim_end();

        let reason = format!("remember {name}");
        let mut replaced_description = None;
        let (action, file_changed, written_name, description_changed) = match set.read(&rel)? {
            Some(before) => {
                let current = frontmatter::parse_document(&before).frontmatter;
                let description_changed = current.description.as_deref() != Some(description);
                replaced_description = current.description.clone().filter(|_| description_changed);
                // Same memory under another spelling of its name: keep the file's spelling
                // rather than flip its naming convention.
                let keep_name = current
                    .name
                    .as_deref()
                    .filter(|n| slug(n) == slug(name))
                    .map(str::to_string);
                let written_name = keep_name.unwrap_or_else(|| name.to_string());
                let after = frontmatter::apply_edit(
                    &before,
                    &FieldEdit {
                        name: Some(&written_name),
                        description: Some(description),
                        memory_type: Some(req.memory_type),
                        body: (!body.trim().is_empty()).then_some(body),
                    },
                );
                let changed = after != before;
                if changed {
                    set.stage_write(&rel, after, &reason)?;
                }
                (
                    RememberAction::Updated,
                    changed,
                    written_name,
                    description_changed,
                )
            }
            None => {
                check_linkable_name(&rel)?;
                let text = frontmatter::render_new(name, description, req.memory_type, body);
                set.stage_write(&rel, text, &reason)?;
                (RememberAction::Created, true, name.to_string(), true)
            }
        };

        let (index_file, link) = governing_index(&self.root, &rel);
        let raw_index = set.read(&index_file)?.unwrap_or_default();
        let entries = index::parse_entries(&raw_index);
        let current_entry = entries.iter().find(|e| e.file == link);
        let mut over_cap = None;
        let (index_line, index_changed) = match current_entry {
            // The line may carry a hand-written hook: it follows the file only when the
            // description itself changed.
            Some(entry) if !description_changed => (raw_index_line(&raw_index, entry), false),
            _ => {
                // A refreshed entry keeps its curated title; only the hook follows the file.
                let title = current_entry.map_or(written_name.as_str(), |e| e.title.as_str());
                let line = index::entry_line(title, &link, description);
                let updated = index::upsert_entry(&raw_index, &link, &line, Some(req.memory_type));
                let changed = updated != raw_index;
                if changed {
                    over_cap = index_over_cap(&index_file, &updated);
                    set.stage_write(&index_file, updated, &format!("index {link}"))?;
                }
                (line, changed)
            }
        };
        let mut warnings = secret_warnings(
            &rel,
            self.is_team_file(&rel),
            &req.name,
            &req.description,
            &req.body,
        )?;
        warnings.extend(over_cap);
        Ok(RememberOutcome {
            file: rel,
            action,
            file_changed,
            index_line,
            index_changed,
            warnings,
            replaced_description,
        })
    }

    /// The file of an existing memory whose name matches `name` as a slug.
    fn existing_memory_named(&self, name: &str) -> Result<Option<String>> {
        let wanted = slug(name);
        let headers = self.scan(None)?;
        Ok(headers
            .into_iter()
            .find(|h| h.name.as_deref().is_some_and(|n| slug(n) == wanted))
            .map(|h| h.file))
    }

    /// Deletes a memory file and its index line(s), as the user, through one change set;
    /// `memory` as [`MemoryDir::find_memory`] takes it (its file, or its name).
    pub fn forget(&self, memory: &str) -> Result<ForgetOutcome> {
        let mut set = ChangeSet::new(&self.root);
        let outcome = self.plan_forget(&self.find_memory(memory)?, &mut set)?;
        self.apply_as_user(&set)?;
        Ok(outcome)
    }

    /// Stages into `set` what [`MemoryDir::forget`] deletes: the file and its index line.
    /// [`Error::NotFound`] when there is neither.
    pub fn plan_forget(&self, file: &str, set: &mut ChangeSet) -> Result<ForgetOutcome> {
        let (rel, path) = self.resolve(file)?;
        let file_removed = set.read(&rel)?.is_some();
        if file_removed {
            set.stage_delete(&rel, &format!("forget {rel}"))?;
        }
        let mut index_line_removed = false;
        let (index_file, link) = governing_index(&self.root, &rel);
        if let Some(raw) = set.read(&index_file)? {
            let (updated, removed) = index::remove_entry(&raw, &link);
            if removed {
                set.stage_write(&index_file, updated, &format!("unindex {link}"))?;
                index_line_removed = true;
            }
        }
        if !file_removed && !index_line_removed {
            return Err(Error::NotFound(path));
        }
        Ok(ForgetOutcome {
            file: rel,
            file_removed,
            index_line_removed,
        })
    }

    /// Applies `set` as the user; a file that failed to land is an error naming it.
    fn apply_as_user(&self, set: &ChangeSet) -> Result<()> {
        self.engine
            .apply_change_set(set, Actor::User)?
            .first_failure()
    }

    /// Appends a timestamped line to today's daily log (local date), as the user: the watcher
    /// is told it is Engram's own write and history records the new state. Returns the log's
    /// path.
    pub fn append_log(&self, text: &str) -> Result<PathBuf> {
        // A `logs/` dir or a day's file that is a symlink leading elsewhere is refused: the log
        // is appended to, and must stay inside the memory dir.
        let planned = crate::logs::log_path(&self.root, self.engine.clock().now());
        if let Some(rel) = planned
            .strip_prefix(&self.root)
            .ok()
            .and_then(|r| r.to_str())
        {
            crate::disk::confined_path(&self.root, rel)?;
        }
        let path = crate::logs::append_log_noting(
            &self.root,
            text,
            self.engine.clock().now(),
            |path, content| self.engine.note_own_write(path, Some(content)),
        )?;
        if let Some(rel) = path
            .strip_prefix(&self.root)
            .ok()
            .and_then(|rel| rel.to_str())
        {
            let content = read_text(&path)?;
            self.engine
                .record_version(&self.root, rel, Some(&content), Actor::User)?;
        }
        Ok(path)
    }

    /// Removes the temp files interrupted writes left behind (their writer is gone); returns
    /// them. They are never memories (their names do not end in `.md`), so nothing is recorded.
    pub fn remove_stray_temp_files(&self) -> Result<Vec<String>> {
        let stray = crate::disk::stray_temp_files(&self.root)?;
        for key in &stray {
            let path = self.root.join(key);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(&path, e))
                }
                _ => {}
            }
        }
        Ok(stray)
    }

    /// Whether `rel` is team memory, shared with teammates: under `team/`, or anywhere in a memory
    /// dir that is itself a `team/` folder (`--memory-dir <memory>/team`).
    pub(crate) fn is_team_file(&self, rel: &str) -> bool {
        rel.starts_with("team/") || self.root.file_name().is_some_and(|name| name == "team")
    }

    /// Validates `file` and confines it to the root: returns the normalised relative name and the
    /// path to use.
    pub fn resolve(&self, file: &str) -> Result<(String, PathBuf)> {
        let rel = validate_file_name(&self.root, file)?;
        let path = self.root.join(&rel);
        confine(&self.root, &path)?;
        Ok((rel, path))
    }
}

/// A file's text, `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>> {
    match read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a person should know of a change from `before` to `after` of `index_file`, when it
/// leaves more of the index past what Claude Code loads than before ([`index_over_cap`]).
pub(crate) fn index_growth_warning(
    index_file: &str,
    before: Option<&str>,
    after: &str,
) -> Option<String> {
    // Hidden lines count in the units not loaded too, whichever cap hid them.
    let cut = |text: &str| index::load_index_text(text).bytes_cut;
    if cut(after) <= before.map_or(0, cut) {
        return None;
    }
    index_over_cap(index_file, after)
}

/// What a person should know when the index written to `index_file` is past what Claude Code
/// loads: which lines it no longer sees.
fn index_over_cap(index_file: &str, updated: &str) -> Option<String> {
    if !index::is_index_file(index_file) {
        return None;
    }
    let loaded = index::load_index_text(updated);
    let from = loaded.cut_from_line.filter(|_| loaded.truncated)?;
    let size = if loaded.lines > index::MAX_INDEX_LINES {
        format!(
            "{} lines, past the {}",
            loaded.lines,
            index::MAX_INDEX_LINES
        )
    } else {
        format!(
            "{} bytes, past the {}",
            loaded.bytes,
            index::MAX_INDEX_BYTES
        )
    };
    let unseen = match loaded.lines_cut {
        1 => format!("its last line, line {from}, is"),
        n => format!("its last {n} lines, from line {from} on, are"),
    };
    Some(format!(
        "{index_file} is {size} Claude Code loads: {unseen} not seen at the start of a session \
         (`engram dream` moves old entries into topic files)"
    ))
}

/// The index line of `entry` as written.
fn raw_index_line(raw: &str, entry: &IndexEntry) -> String {
    raw.lines()
        .nth(entry.line - 1)
        .unwrap_or_default()
        .to_string()
}

/// Checks a memory file name given by a caller, relative to `root`, and normalises it (`./` and
/// empty segments dropped). Names that climb out of `root` are [`Error::PathDenied`]; other bad
/// names are [`Error::InvalidInput`].
pub fn validate_file_name(root: &Path, file: &str) -> Result<String> {
    let invalid = |why: &str| Err(Error::InvalidInput(format!("memory file {file:?}: {why}")));
    if file.trim().is_empty() {
        return invalid("empty file name");
    }
    if file.contains('\0') {
        return invalid("contains a NUL byte");
    }
    if file.contains('\\') {
        return invalid("contains a backslash; use '/' between directories");
    }
    let path = Path::new(file);
    let escapes = path.is_absolute()
        || path.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        });
    if escapes {
        return Err(Error::PathDenied {
            path: PathBuf::from(file),
            root: root.to_path_buf(),
        });
    }
    let rel = file
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/");
    if !rel.ends_with(".md") || rel.rsplit('/').next() == Some(".md") {
        return invalid("memory files are Markdown and must end in .md");
    }
    if rel.rsplit('/').next() == Some(INDEX_FILE) {
        return invalid("MEMORY.md is the index, not a memory; it is updated for you");
    }
    Ok(rel)
}

/// Refuses a team memory key in any of the forms FORMATS.md §9 rejects from a teammate: URL
/// escapes (`..%2f`, `%2e%2e/`), characters that NFKC-normalise to something else (fullwidth
/// dots and slashes), control characters. Engram never writes such a key into `team/` itself.
/// Callers check only team files ([`MemoryDir::is_team_file`]).
pub(crate) fn check_team_key(rel: &str) -> Result<()> {
    use unicode_normalization::UnicodeNormalization;
    let refuse = |why: &str| {
        Err(Error::InvalidInput(format!(
            "team memory {rel:?}: {why}; team keys are plain names (FORMATS.md §9)"
        )))
    };
    if rel.contains('%') {
        return refuse("URL escapes are not allowed");
    }
    if rel.chars().any(char::is_control) {
        return refuse("control characters are not allowed");
    }
    if rel.nfkc().collect::<String>() != rel {
        return refuse(
            "it changes under Unicode NFKC normalisation (fullwidth or compatibility characters)",
        );
    }
    Ok(())
}

/// Refuses a name for a *new* memory file that Windows cannot hold
/// ([`crate::platform::names`]) or that the index's `[Title](file)` link cannot carry
/// (whitespace, control characters, `()[]<>#`): its line would dangle and the file stay an
/// orphan that no fix can pair up again. Existing files with such names (written by hand or by
/// Claude Code) stay readable; only Engram does not create them.
pub(crate) fn check_linkable_name(file: &str) -> Result<()> {
    match file
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "()[]<>#".contains(*c))
    {
        Some(c) => Err(Error::InvalidInput(format!(
            "memory file {file:?}: contains {c:?}, which an index link cannot carry; use \
             letters, digits, '-', '_' and '.'"
        ))),
        None => crate::platform::names::check_portable_key(file),
    }
}

/// The index a file's line belongs in — the nearest `MEMORY.md` at or above the file's directory
/// (`team/MEMORY.md` for team memories), else the root's — and the link to the file as that index
/// writes it (relative to the index's directory). An index reached through a symlink leading out
/// of the root does not count.
pub(crate) fn governing_index(root: &Path, rel: &str) -> (String, String) {
    let mut dir = index::parent_of(rel);
    while !dir.is_empty() {
        let candidate = format!("{dir}/{INDEX_FILE}");
        if root.join(&candidate).is_file() && crate::disk::confined_path(root, &candidate).is_ok() {
            return (candidate, rel[dir.len() + 1..].to_owned());
        }
        dir = index::parent_of(dir);
    }
    (INDEX_FILE.to_owned(), rel.to_owned())
}

/// Denies `path` when its deepest existing ancestor (or itself) resolves outside `root`. A
/// dangling symlink is denied too: where it would write cannot be checked.
fn confine(root: &Path, path: &Path) -> Result<()> {
    let real_root = crate::platform::fs::canonicalize(root).at(root)?;
    let denied = || Error::PathDenied {
        path: path.to_path_buf(),
        root: root.to_path_buf(),
    };
    let mut probe = path;
    loop {
        if fs::symlink_metadata(probe).is_ok() {
            let real = crate::platform::fs::canonicalize(probe).map_err(|e| {
                // Still refused, but named for what it is.
                if crate::disk::is_symlink_loop(&e) {
                    Error::InvalidInput(format!(
                        "{}: a loop of symbolic links; it leads nowhere",
                        probe.display()
                    ))
                } else {
                    denied()
                }
            })?;
            return if real.starts_with(&real_root) {
                Ok(())
            } else {
                Err(denied())
            };
        }
        probe = probe.parent().ok_or_else(denied)?;
    }
}

/// Likely secrets in what `remember` is about to write, its file's path included: refused for
/// team memory (`team`: shared with others, FORMATS.md §9), a warning each elsewhere — the
/// description and the path land in the always-loaded index too.
fn secret_warnings(
    rel: &str,
    team: bool,
    name: &str,
    description: &str,
    body: &str,
) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let in_path = crate::secrets::scan_path(rel);
    if !in_path.is_empty() {
        let rules = in_path.join(", ");
        if team {
            return Err(Error::InvalidInput(format!(
                "{rel}: the file's path looks like a credential ({rules}); team memory is shared \
                 and never holds secrets"
            )));
        }
        warnings.push(format!(
            "{rel}: the file's path looks like a credential ({rules}), and MEMORY.md, which \
             every session loads, links it by that path"
        ));
    }
    for (field, text) in [("name", name), ("description", description), ("body", body)] {
        for (line, rules) in crate::secrets::by_line(&crate::secrets::scan_secrets(text)) {
            let rules = rules.join(", ");
            let place = if field == "body" {
                format!("the body, line {line}")
            } else {
                format!("the {field}")
            };
            if team {
                return Err(Error::InvalidInput(format!(
                    "{rel}: {place} looks like a credential ({rules}); team memory is shared \
                     and never holds secrets"
                )));
            }
            let also = if field == "description" {
                ", and the description goes into MEMORY.md, which every session loads"
            } else {
                ""
            };
            warnings.push(format!(
                "{rel}: {place} looks like a credential ({rules}){also}"
            ));
        }
    }
    Ok(warnings)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The slug of a memory name: lowercase letters and digits, other runs as one `_`.
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out: String = out
        .trim_end_matches('_')
        .chars()
        .take(MAX_SLUG_CHARS)
        .collect();
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        "memory".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::{copy_tree, real_memory};
    use crate::{Environment, FixedClock};
    use std::sync::Arc;
    use std::time::Duration;

    const NOW: u64 = 1_800_000_000;

    fn engine() -> (Engine, FixedClock, tempfile::TempDir) {
        let clock = FixedClock::new(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(NOW));
        // History goes to a temp data dir that lives as long as the test holds it.
        let engram_home = tempfile::tempdir().expect("engram home");
        let engine = Engine::builder(Environment::empty())
            .clock(Arc::new(clock.clone()))
            .engram_home(engram_home.path())
            .build();
        (engine, clock, engram_home)
    }

    fn request(t: MemoryType, name: &str, description: &str, body: &str) -> RememberRequest {
        RememberRequest {
            memory_type: t,
            name: name.into(),
            description: description.into(),
            file: None,
            body: body.into(),
        }
    }

    fn read(dir: &Path, rel: &str) -> String {
        fs::read_to_string(dir.join(rel)).expect("read")
    }

    fn with_file(t: MemoryType, name: &str, description: &str, file: &str) -> RememberRequest {
        RememberRequest {
            file: Some(file.into()),
            ..request(t, name, description, "body\n")
        }
    }

    /// A line added to a full index pushes its last line out of what Claude Code loads: the
    /// memory is saved, and the person is told which lines are no longer seen.
    #[test]
    fn remember_into_a_full_index_says_which_lines_claude_code_no_longer_loads() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let mut index = "# Index\n## Project\n".to_owned();
        for n in 0..198 {
            index.push_str(&format!("- note {n}\n"));
        }
        fs::write(tmp.path().join(INDEX_FILE), &index).expect("index");
        let tax = request(MemoryType::Project, "Tax", "Round half to even", "x");
        let outcome = dir.remember(tax.clone()).expect("saved");
        assert_eq!(
            outcome.warnings,
            [
                "MEMORY.md is 201 lines, past the 200 Claude Code loads: its last line, line 201, \
              is not seen at the start of a session (`engram dream` moves old entries into topic \
              files)"
            ]
        );
        assert!(tmp.path().join("project_tax.md").exists());
        // Room to spare: nothing to say.
        let roomy = tempfile::tempdir().expect("tempdir");
        let outcome = engine
            .memory_dir(roomy.path())
            .remember(tax)
            .expect("saved");
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    }

    /// Platforms row 12: on a case-sensitive volume `remember --file foo.md` beside `Foo.md`
    /// would make a second file, which a Mac or Windows checkout of the dir folds into one.
    #[test]
    fn remember_refuses_a_file_differing_only_in_case_from_another() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        dir.remember(with_file(MemoryType::Project, "Deploy", "how", "Deploy.md"))
            .expect("first");
        let index_before = read(tmp.path(), INDEX_FILE);
        let error = dir
            .remember(with_file(MemoryType::User, "Other", "else", "deploy.md"))
            .expect_err("a case twin of Deploy.md");
        let text = error.to_string();
        assert!(
            text.contains("\"deploy.md\"") && text.contains("\"Deploy.md\""),
            "names both files: {text}"
        );
        assert!(!tmp.path().join("deploy.md").exists(), "nothing written");
        assert_eq!(read(tmp.path(), INDEX_FILE), index_before);
        // The exact name still updates the file.
        let out = dir
            .remember(with_file(
                MemoryType::Project,
                "Deploy",
                "how now",
                "Deploy.md",
            ))
            .expect("update");
        assert_eq!(out.action, RememberAction::Updated);
    }

    /// Platforms row 12 on a real case-insensitive directory: `--file foo.md` *is* the existing
    /// `Foo.md` there, so the memory is updated under that spelling and the index keeps one line
    /// for it (before, a second line `(foo.md)` was added for the same file).
    #[test]
    fn on_a_case_insensitive_volume_remember_writes_the_name_as_spelled_on_disk() {
        let fat = match crate::platform::case::fat::CaseInsensitiveDir::mount() {
            Ok(fat) => fat,
            Err(why) => {
                eprintln!("skipped: no case-insensitive directory here: {why}");
                return;
            }
        };
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(fat.path());
        dir.remember(with_file(MemoryType::Project, "Deploy", "how", "Deploy.md"))
            .expect("first");
        let out = dir
            .remember(with_file(
                MemoryType::Project,
                "Deploy",
                "how now",
                "deploy.md",
            ))
            .expect("the same file");
        assert_eq!(out.file, "Deploy.md");
        assert_eq!(out.action, RememberAction::Updated);
        let index = read(fat.path(), INDEX_FILE);
        assert_eq!(index.matches("](").count(), 1, "one line: {index}");
        assert!(index.contains("(Deploy.md)"), "{index}");
        let names: Vec<_> = fs::read_dir(fat.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md") && n != INDEX_FILE)
            .collect();
        assert_eq!(names, ["Deploy.md"]);
    }

    #[test]
    fn remember_creates_the_file_and_its_index_line() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path().join("memory"));
        let out = dir
            .remember(request(
                MemoryType::Feedback,
                "Testing policy",
                "Integration tests must hit a real DB",
                "Use the real DB.\n**Why:** mocks hid a bug.\n",
            ))
            .expect("remember");
        assert_eq!(out.file, "feedback_testing_policy.md");
        assert_eq!(out.action, RememberAction::Created);
        assert_eq!(
            read(dir.root(), "feedback_testing_policy.md"),
            "---\nname: Testing policy\ndescription: Integration tests must hit a real DB\ntype: feedback\n---\n\nUse the real DB.\n**Why:** mocks hid a bug.\n"
        );
        assert_eq!(
            read(dir.root(), "MEMORY.md"),
            "- [Testing policy](feedback_testing_policy.md) — Integration tests must hit a real DB\n"
        );
        let shown = dir.show(&out.file).expect("show");
        assert_eq!(shown.header.memory_type, Some(MemoryType::Feedback));
        assert_eq!(shown.body, "Use the real DB.\n**Why:** mocks hid a bug.\n");
    }

    #[test]
    fn remember_the_same_name_updates_instead_of_duplicating() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        dir.remember(request(
            MemoryType::Feedback,
            "Testing policy",
            "old",
            "old body",
        ))
        .expect("first");
        let out = dir
            .remember(request(
                MemoryType::Feedback,
                "testing-policy",
                "Real DB only",
                "new body",
            ))
            .expect("second");
        assert_eq!(out.action, RememberAction::Updated);
        assert_eq!(out.file, "feedback_testing_policy.md");
        assert_eq!(
            dir.scan(None).expect("scan").len(),
            1,
            "no near-duplicate file"
        );
        assert_eq!(
            read(dir.root(), "feedback_testing_policy.md"),
            "---\nname: Testing policy\ndescription: Real DB only\ntype: feedback\n---\n\nnew body\n",
            "the file's own spelling of the name is kept"
        );
        assert_eq!(
            read(dir.root(), "MEMORY.md"),
            "- [Testing policy](feedback_testing_policy.md) — Real DB only\n",
            "the index line is refreshed, not duplicated"
        );
    }

    #[test]
    fn remember_unchanged_writes_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let req = request(MemoryType::User, "Role", "Senior Rust dev", "Knows Rust.");
        dir.remember(req.clone()).expect("first");
        let out = dir.remember(req).expect("again");
        assert_eq!(out.action, RememberAction::Updated);
        assert!(!out.file_changed && !out.index_changed);
        assert_eq!(out.index_line, "- [Role](user_role.md) — Senior Rust dev");
    }

    #[test]
    fn remember_updates_a_real_2_1_330_file_keeping_its_metadata() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = real_memory("claude-code-2.1.330");
        copy_tree(&src, tmp.path());
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let out = dir
            .remember(request(
                MemoryType::Feedback,
                "prefers-tabs",
                "User prefers tabs, width 4",
                "",
            ))
            .expect("remember");
        assert_eq!(
            out.file, "prefers-tabs-default.md",
            "matched by name, not re-derived"
        );
        let text = read(tmp.path(), "prefers-tabs-default.md");
        let original = fs::read_to_string(src.join("prefers-tabs-default.md")).expect("fixture");
        assert_eq!(
            text,
            original.replace(
                "description: User prefers tabs over spaces WRITTEN-555",
                "description: User prefers tabs, width 4"
            ),
            "only the description line changes; metadata and body stay"
        );
        let index = read(tmp.path(), "MEMORY.md");
        assert!(index.starts_with(
            "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays MEMIDX-777\n"
        ));
        assert!(index
            .ends_with("- [prefers-tabs](prefers-tabs-default.md) — User prefers tabs, width 4\n"));
    }

    #[test]
    fn remember_into_the_real_stockerly_index_files_it_under_its_section() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = real_memory("stockerly");
        copy_tree(&src, tmp.path());
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        dir.remember(request(
            MemoryType::User,
            "Timezone",
            "Adrian works in CST",
            "CST.",
        ))
        .expect("remember");
        let before = fs::read_to_string(src.join("MEMORY.md")).expect("fixture");
        let after = read(tmp.path(), "MEMORY.md");
        let expected = before.replacen(
            "demands brutal honesty\n",
            "demands brutal honesty\n- [Timezone](user_timezone.md) — Adrian works in CST\n",
            1,
        );
        assert_eq!(after, expected);
    }

    #[test]
    fn remember_rejects_bad_input() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let base = request(MemoryType::User, "n", "d", "b");
        let cases: Vec<(RememberRequest, crate::ErrorKind)> = vec![
            (
                RememberRequest {
                    name: "  ".into(),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    description: " \n".into(),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    file: Some("/etc/x.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::PathDenied,
            ),
            (
                RememberRequest {
                    file: Some("../x.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::PathDenied,
            ),
            (
                RememberRequest {
                    file: Some("a/../../x.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::PathDenied,
            ),
            (
                RememberRequest {
                    file: Some("a\\b.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    file: Some("a\0.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    file: Some("notes.txt".into()),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    file: Some("MEMORY.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
            (
                RememberRequest {
                    file: Some("team/MEMORY.md".into()),
                    ..base.clone()
                },
                crate::ErrorKind::InvalidInput,
            ),
        ];
        for (req, kind) in cases {
            let err = dir.remember(req.clone()).expect_err("must be refused");
            assert_eq!(err.kind(), kind, "{req:?}: {err}");
        }
        assert_eq!(
            fs::read_dir(tmp.path()).expect("list").count(),
            0,
            "nothing written"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_pointing_out_of_the_dir_is_denied() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        fs::write(outside.path().join("x.md"), "secret").expect("write");
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("out")).expect("symlink");
        std::os::unix::fs::symlink(outside.path().join("x.md"), tmp.path().join("link.md"))
            .expect("symlink");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        for file in ["out/x.md", "out/new.md", "link.md"] {
            let err = dir.show(file).expect_err("must be denied");
            assert_eq!(err.kind(), crate::ErrorKind::PathDenied, "{file}");
        }
        let req = RememberRequest {
            file: Some("out/new.md".into()),
            ..request(MemoryType::User, "n", "d", "b")
        };
        assert_eq!(
            dir.remember(req).expect_err("denied").kind(),
            crate::ErrorKind::PathDenied
        );
        assert!(!outside.path().join("new.md").exists());
        assert_eq!(
            dir.forget("link.md").expect_err("denied").kind(),
            crate::ErrorKind::PathDenied
        );
        assert!(outside.path().join("x.md").exists());
    }

    #[test]
    fn a_body_only_update_keeps_a_hand_written_hook() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let index = "- [Role](user_role.md) — short curated hook\n";
        fs::write(tmp.path().join("MEMORY.md"), index).expect("seed");
        fs::write(
            tmp.path().join("user_role.md"),
            "---\nname: Role\ndescription: Senior Rust dev at a fintech\ntype: user\n---\n\nold\n",
        )
        .expect("seed");
        let out = dir
            .remember(request(
                MemoryType::User,
                "Role",
                "Senior Rust dev at a fintech",
                "new",
            ))
            .expect("remember");
        assert!(out.file_changed);
        assert!(!out.index_changed);
        assert_eq!(read(tmp.path(), "MEMORY.md"), index);
    }

    #[test]
    fn team_memories_are_indexed_in_the_team_index() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        fs::create_dir_all(tmp.path().join("team")).expect("mkdir");
        fs::write(tmp.path().join("team/MEMORY.md"), "# Team\n").expect("seed");
        let req = RememberRequest {
            file: Some("team/deploys.md".into()),
            ..request(MemoryType::Project, "Deploys", "No Friday deploys", "b")
        };
        dir.remember(req).expect("remember");
        assert_eq!(
            read(tmp.path(), "team/MEMORY.md"),
            "# Team\n- [Deploys](deploys.md) — No Friday deploys\n"
        );
        assert!(
            !tmp.path().join("MEMORY.md").exists(),
            "the root index is not touched"
        );
        let out = dir.forget("team/deploys.md").expect("forget");
        assert!(out.index_line_removed);
        assert_eq!(read(tmp.path(), "team/MEMORY.md"), "# Team\n");
        // Without a team index, the root index links the file by its full relative path.
        dir.remember(RememberRequest {
            file: Some("notes/x.md".into()),
            ..request(MemoryType::Project, "X", "x", "b")
        })
        .expect("remember");
        assert_eq!(read(tmp.path(), "MEMORY.md"), "- [X](notes/x.md) — x\n");
    }

    #[test]
    fn remember_and_forget_go_through_history_and_plans_touch_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let req = request(
            MemoryType::User,
            "Role",
            "Senior Rust dev",
            "Writes Rust.\n",
        );

        let mut set = ChangeSet::new(tmp.path());
        let planned = dir.plan_remember(&req, &mut set).expect("plan");
        assert_eq!(set.len(), 2, "topic file and index line");
        assert!(
            !tmp.path().join(&planned.file).exists(),
            "a plan writes nothing"
        );

        dir.remember(req).expect("remember");
        dir.forget("user_role.md").expect("forget");
        let versions = engine
            .history(tmp.path(), Some("user_role.md"))
            .expect("history");
        let actors: Vec<_> = versions.iter().map(|v| v.actor).collect();
        assert_eq!(actors, [Actor::User, Actor::User], "{versions:?}");
        assert_eq!(
            engine
                .history(tmp.path(), Some("MEMORY.md"))
                .expect("history")
                .len(),
            2,
            "the index line's add and removal are versions of MEMORY.md"
        );
    }

    #[test]
    fn forget_removes_file_and_index_line() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        fs::write(
            tmp.path().join("MEMORY.md"),
            "# Idx\n- [A](a.md) — a\n- [B](b.md) — b\n",
        )
        .expect("seed");
        fs::write(tmp.path().join("a.md"), "---\nname: a\n---\n").expect("seed");
        let out = dir.forget("./a.md").expect("forget");
        assert_eq!(
            out,
            ForgetOutcome {
                file: "a.md".into(),
                file_removed: true,
                index_line_removed: true
            }
        );
        assert!(!tmp.path().join("a.md").exists());
        assert_eq!(read(tmp.path(), "MEMORY.md"), "# Idx\n- [B](b.md) — b\n");
        // A dangling index line alone can be forgotten too; nothing at all is NotFound.
        assert!(dir.forget("b.md").expect("dangling").index_line_removed);
        assert_eq!(
            dir.forget("b.md").expect_err("gone").kind(),
            crate::ErrorKind::NotFound
        );
    }

    #[test]
    fn show_reports_age_and_caveat_from_the_engine_clock() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, clock, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        dir.remember(request(
            MemoryType::Project,
            "Freeze",
            "No Friday deploys",
            "x",
        ))
        .expect("remember");
        let fresh = dir.show("project_freeze.md").expect("show");
        let mtime = fresh.header.mtime;
        clock.set(mtime + Duration::from_secs(86_400));
        let shown = dir.show("project_freeze.md").expect("show");
        assert_eq!(
            (shown.header.age.as_str(), shown.caveat.as_deref()),
            ("yesterday", None)
        );
        clock.set(mtime + Duration::from_secs(5 * 86_400));
        let shown = dir.show("project_freeze.md").expect("show");
        assert_eq!(shown.header.age, "5 days ago");
        assert!(shown
            .caveat
            .expect("stale")
            .starts_with("This memory is 5 days old."));
    }

    #[test]
    fn multi_line_names_and_descriptions_are_flattened() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let out = dir
            .remember(request(
                MemoryType::User,
                "Role\n",
                "Senior\n  Rust dev",
                "b",
            ))
            .expect("remember");
        let shown = dir.show(&out.file).expect("show");
        assert_eq!(shown.header.name.as_deref(), Some("Role"));
        assert_eq!(shown.header.description.as_deref(), Some("Senior Rust dev"));
    }

    #[test]
    fn append_log_writes_under_the_dir_on_the_engine_clock_date() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let dir = engine.memory_dir(tmp.path());
        let path = dir.append_log("shipped v2").expect("log");
        let expected = crate::logs::log_path(tmp.path(), engine.clock().now());
        assert_eq!(path, expected);
        assert!(path.starts_with(tmp.path().join("logs")));
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.ends_with(" shipped v2\n"), "{text}");
    }

    #[test]
    fn load_index_of_a_dir_without_index_is_empty() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, _, _engram_home) = engine();
        let loaded = engine.memory_dir(tmp.path()).load_index().expect("load");
        assert!(!loaded.exists);
        assert_eq!(loaded.content, "");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Testing policy"), "testing_policy");
        assert_eq!(slug("prefers-tabs"), "prefers_tabs");
        assert_eq!(slug("  Vision & audience!! "), "vision_audience");
        assert_eq!(slug("Präferenz: Tabs"), "präferenz_tabs");
        assert_eq!(slug("!!!"), "memory");
        assert!(slug(&"word ".repeat(40)).chars().count() <= MAX_SLUG_CHARS);
        assert!(!slug(&"word ".repeat(40)).ends_with('_'));
        // The names Engram derives hold on Windows too (platforms row 13).
        for name in [
            "CON",
            "nul",
            "Com1",
            "a: b.",
            "what?",
            "x|y*z",
            "trailing. ",
            "\tLPT9",
        ] {
            let file = format!("project_{}.md", slug(name));
            assert_eq!(
                crate::platform::names::windows_key_rule(&file),
                None,
                "{name:?} → {file}"
            );
        }
    }
}
