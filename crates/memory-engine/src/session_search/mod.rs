//! Search across sessions: what the user asked, what the assistant said, the tools it used and the
//! files it touched, in every transcript of one project or all — ranked (BM25), with snippets.
//!
//! Contract:
//! - The index lives in Engram's data dir (`<engram home>/session-index/`), never in `~/.claude`.
//!   It is built with tantivy, a maintained full-text engine (segments, BM25, snippets), rather
//!   than an index of our own.
//! - It follows the transcripts incrementally: a manifest remembers, per file, how many bytes are
//!   indexed (up to the last complete line) and a hash of its head. An update reads only what was
//!   appended; a file that shrank or whose head changed is reindexed whole; a file gone is
//!   removed. With nothing changed an update is a `stat` per transcript.
//! - Entries are indexed one by one (not the chain): every user prompt and assistant reply with
//!   prose or tool uses; Claude Code's own injections (`isMeta`) and tool output are not.
//! - Lines are decoded as every transcript reader here decodes them ([`decode_line`]: lone
//!   surrogates and invalid UTF-8 repaired). A line that cannot be decoded is not searchable: it
//!   is kept in the manifest with its number and reason and reported with every search of its
//!   file, never dropped silently; a transcript that cannot be read is reported and tried again
//!   next time.
//! - A query typed by a person never fails on syntax (a lenient parse); an empty query finds
//!   nothing. When another process holds the index's writer, the search runs on the index as it
//!   is rather than wait.
//! - The index is a cache of the transcripts: when opening, updating or searching it fails — an
//!   error or a panic inside tantivy (truncated segment files), an empty `meta.json`, a missing
//!   file, an unreadable manifest — the index dir is deleted and built again once, and the search
//!   says so ([`SessionSearch::rebuilt`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, QueryParser, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, Value as _, STORED, STRING, TEXT};
use tantivy::snippet::SnippetGenerator;
use tantivy::{doc, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::transcript::{decode_line, LineReader, SkippedLine};

/// How much of a file's head identifies it (a rewrite changes it).
const HEAD_BYTES: usize = 4096;
/// The writer's memory budget.
const WRITER_BYTES: usize = 64 << 20;

/// One hit (`engram sessions search --json`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHit {
    pub session_id: String,
    pub project: String,
    pub uuid: String,
    pub role: String,
    pub timestamp: Option<String>,
    /// The best fragment of the text, plain.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched.
    #[cfg_attr(feature = "ts", ts(type = "Array<[number, number]>"))]
    pub highlights: Vec<(usize, usize)>,
    pub score: f32,
    pub file: PathBuf,
}

/// What [`Engine::search_sessions`] found, and what it could not look at.
#[derive(Debug, Clone, Default)]
pub struct SessionSearch {
    pub hits: Vec<SessionHit>,
    /// Why the index was unusable, when it was deleted and built again for this search.
    pub rebuilt: Option<String>,
    /// Lines not searchable (`<file>:<line>: …`) and transcripts that could not be read, one
    /// message each.
    pub problems: Vec<String>,
}

/// Skipped lines kept per file: a file of garbage says how much, not every line.
const SKIPPED_KEPT: usize = 10;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FileState {
    /// Bytes indexed: the end of the last complete line.
    offset: u64,
    /// Lines read so far (line numbers continue from here).
    lines: usize,
    head: u64,
    mtime_ms: u128,
    /// The first lines that could not be decoded, and how many more there were.
    #[serde(default)]
    skipped: Vec<(usize, String)>,
    #[serde(default)]
    skipped_more: usize,
}

impl FileState {
    fn skip(&mut self, line: SkippedLine) {
        if self.skipped.len() < SKIPPED_KEPT {
            self.skipped.push((line.line, line.reason));
        } else {
            self.skipped_more += 1;
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    files: BTreeMap<PathBuf, FileState>,
}

struct Fields {
    file: Field,
    session: Field,
    project: Field,
    uuid: Field,
    role: Field,
    timestamp: Field,
    text: Field,
    tools: Field,
    paths: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fields = Fields {
        file: builder.add_text_field("file", STRING | STORED),
        session: builder.add_text_field("session", STRING | STORED),
        project: builder.add_text_field("project", STRING | STORED),
        uuid: builder.add_text_field("uuid", STORED),
        role: builder.add_text_field("role", STRING | STORED),
        timestamp: builder.add_text_field("timestamp", STORED),
        text: builder.add_text_field("text", TEXT | STORED),
        tools: builder.add_text_field("tools", TEXT),
        paths: builder.add_text_field("paths", TEXT | STORED),
    };
    (builder.build(), fields)
}

/// An open session index: keep one for searching as the user types.
pub struct SessionIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

fn tantivy_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("session index {}: {e}", dir.display()))
}

/// A hash of the file's first `len` bytes (at most [`HEAD_BYTES`]): the part already indexed, so
/// an append within the head does not read as a rewrite.
fn head_hash(path: &Path, len: u64) -> u64 {
    let want = HEAD_BYTES.min(len as usize);
    let mut head = vec![0; want];
    let read = File::open(path)
        .and_then(|mut f| {
            let mut n = 0;
            while n < want {
                match f.read(&mut head[n..])? {
                    0 => break,
                    got => n += got,
                }
            }
            Ok(n)
        })
        .unwrap_or(0);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    head[..read].hash(&mut hasher);
    hasher.finish()
}

/// The searchable parts of one transcript entry: role, text, tool names, file paths.
fn searchable(entry: &Value) -> Option<(String, String, String, String, Option<String>, String)> {
    let kind = entry.get("type")?.as_str()?;
    if !matches!(kind, "user" | "assistant") || entry.get("isMeta") == Some(&Value::Bool(true)) {
        return None;
    }
    let uuid = entry.get("uuid")?.as_str()?.to_owned();
    let session = entry
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let timestamp = entry
        .get("timestamp")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let content = entry.get("message")?.get("content")?;
    let (mut text, mut tools, mut paths) = (String::new(), String::new(), String::new());
    match content {
        Value::String(s) => text.push_str(s),
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        text.push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
                        text.push('\n');
                    }
                    Some("tool_use") => {
                        tools.push_str(block.get("name").and_then(Value::as_str).unwrap_or(""));
                        tools.push(' ');
                        let input = block.get("input");
                        for key in ["file_path", "notebook_path", "path"] {
                            if let Some(path) =
                                input.and_then(|i| i.get(key)).and_then(Value::as_str)
                            {
                                paths.push_str(path);
                                paths.push('\n');
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if text.trim().is_empty() && tools.is_empty() {
        return None;
    }
    Some((
        kind.to_owned(),
        uuid,
        session,
        text,
        timestamp,
        format!("{tools}\u{0}{paths}"),
    ))
}

impl SessionIndex {
    /// Opens (creating if needed) the index under `dir`.
    pub fn open(dir: &Path) -> Result<SessionIndex> {
        let index_dir = dir.join("tantivy");
        crate::disk::create_dir_all(&index_dir).map_err(|e| Error::io(&index_dir, e))?;
        let (schema, fields) = schema();
        let directory = tantivy::directory::MmapDirectory::open(&index_dir)
            .map_err(|e| tantivy_error(dir, e))?;
        let index = Index::open_or_create(directory, schema).map_err(|e| tantivy_error(dir, e))?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_error(dir, e))?;
        Ok(SessionIndex {
            dir: dir.to_path_buf(),
            index,
            reader,
            fields,
        })
    }

    fn manifest_path(&self) -> PathBuf {
        self.dir.join("manifest.json")
    }

    /// The manifest; none yet is an empty one, one that cannot be read is an error (the index
    /// it describes cannot be trusted either).
    fn load_manifest(&self) -> Result<Manifest> {
        let path = self.manifest_path();
        match disk::read_text(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| Error::parse(&path, Some(e.line()), e.to_string())),
            Err(Error::NotFound(_)) => Ok(Manifest::default()),
            Err(e) => Err(e),
        }
    }

    /// What the index could not take from `transcripts`: each line that is not searchable
    /// (`<file>:<line>: not searchable: <why>`).
    pub fn skipped_lines(&self, transcripts: &[(String, PathBuf)]) -> Result<Vec<String>> {
        let manifest = self.load_manifest()?;
        let mut problems = Vec::new();
        for (_, path) in transcripts {
            let Some(state) = manifest.files.get(path) else {
                continue;
            };
            for (line, reason) in &state.skipped {
                problems.push(format!(
                    "{}:{line}: not searchable: {reason}",
                    path.display()
                ));
            }
            if state.skipped_more > 0 {
                problems.push(format!(
                    "{}: {} more lines not searchable",
                    path.display(),
                    state.skipped_more
                ));
            }
        }
        Ok(problems)
    }

    /// Brings the index up to date with `transcripts` (`(project, path)`), and forgets indexed
    /// files of `projects` that are gone. Returns the transcripts that could not be read (each
    /// message names the file; they are tried again next time). When another process holds the
    /// writer nothing is updated and the search uses the index as it is.
    pub fn update(
        &self,
        transcripts: &[(String, PathBuf)],
        projects: Option<&[String]>,
    ) -> Result<Vec<String>> {
        let mut manifest = self.load_manifest()?;
        let mut todo = Vec::new();
        for (project, path) in transcripts {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            let mtime_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis());
            let known = manifest.files.get(path);
            if known.is_some_and(|k| k.offset == meta.len() && k.mtime_ms == mtime_ms) {
                continue;
            }
            todo.push((project.clone(), path.clone(), meta.len(), mtime_ms));
        }
        let present: std::collections::HashSet<&PathBuf> =
            transcripts.iter().map(|(_, p)| p).collect();
        let gone: Vec<PathBuf> = manifest
            .files
            .keys()
            .filter(|p| !present.contains(p))
            .filter(|p| {
                projects.is_none_or(|names| {
                    p.parent()
                        .and_then(Path::file_name)
                        .is_some_and(|n| names.iter().any(|name| name.as_str() == n))
                })
            })
            .cloned()
            .collect();
        if todo.is_empty() && gone.is_empty() {
            return Ok(Vec::new());
        }
        let mut writer: IndexWriter<TantivyDocument> = match self.index.writer(WRITER_BYTES) {
            Ok(writer) => writer,
            Err(tantivy::TantivyError::LockFailure(..)) => return Ok(Vec::new()),
            Err(e) => return Err(tantivy_error(&self.dir, e)),
        };
        let mut unreadable = Vec::new();
        for path in &gone {
            writer.delete_term(Term::from_field_text(
                self.fields.file,
                &path.to_string_lossy(),
            ));
            manifest.files.remove(path);
        }
        for (project, path, size, mtime_ms) in todo {
            let mut state = manifest.files.get(&path).cloned().unwrap_or_default();
            if state.offset > 0
                && (size < state.offset || head_hash(&path, state.offset) != state.head)
            {
                // Rewritten or truncated: start again.
                state = FileState::default();
            }
            if state.offset == 0 {
                // Read from its start: whatever the index holds of it goes first (a file the
                // manifest did not know may still have entries from a run that stopped between
                // the commit and the manifest's write).
                writer.delete_term(Term::from_field_text(
                    self.fields.file,
                    &path.to_string_lossy(),
                ));
            }
            state.mtime_ms = mtime_ms;
            if let Err(e) = self.index_appended(&mut writer, &project, &path, size, &mut state)? {
                unreadable.push(format!("{e} (not searched; tried again next time)"));
                // No mtime recorded: the next update reads on from where this one stopped.
                state.mtime_ms = 0;
            }
            state.head = head_hash(&path, state.offset);
            manifest.files.insert(path, state);
        }
        writer.commit().map_err(|e| tantivy_error(&self.dir, e))?;
        let json = serde_json::to_vec(&manifest)
            .map_err(|e| Error::InvalidInput(format!("cannot encode the index manifest: {e}")))?;
        disk::atomic_write(&self.manifest_path(), &json)?;
        self.reader
            .reload()
            .map_err(|e| tantivy_error(&self.dir, e))?;
        Ok(unreadable)
    }

    /// Indexes the complete lines appended since `state`, advancing it. The outer error is the
    /// index's; the inner one the transcript's (it could not be read: `state` stops where the
    /// reading did, so what was indexed and what the manifest says stay in step).
    fn index_appended(
        &self,
        writer: &mut IndexWriter<TantivyDocument>,
        project: &str,
        path: &Path,
        size: u64,
        state: &mut FileState,
    ) -> Result<Result<()>> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) => return Ok(Err(Error::io(path, e))),
        };
        if let Err(e) = file.seek(SeekFrom::Start(state.offset)) {
            return Ok(Err(Error::io(path, e)));
        }
        let mut reader = LineReader::starting_at(
            BufReader::with_capacity(1 << 20, file),
            state.offset,
            state.lines,
        );
        let key = path.to_string_lossy();
        let fallback_session = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        loop {
            let line = match reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => return Ok(Err(Error::io(path, e))),
            };
            let end = line.offset + line.len;
            // A last line without its newline may still be being written: it waits.
            if end >= size && !ends_with_newline(path, end) {
                break;
            }
            state.offset = end + 1;
            state.lines = line.number;
            if line.too_long {
                state.skip(SkippedLine {
                    line: line.number,
                    reason: format!(
                        "line of {} bytes exceeds the {}-byte limit",
                        line.len,
                        crate::transcript::MAX_LINE_BYTES
                    ),
                });
                continue;
            }
            let entry = match decode_line(line.bytes) {
                Ok(entry) => entry,
                Err(reason) => {
                    state.skip(SkippedLine {
                        line: line.number,
                        reason,
                    });
                    continue;
                }
            };
            let Some((role, uuid, session, text, timestamp, tools_paths)) = searchable(&entry)
            else {
                continue;
            };
            let (tools, paths) = tools_paths.split_once('\u{0}').unwrap_or(("", ""));
            let session = if session.is_empty() {
                fallback_session.clone()
            } else {
                session
            };
            writer
                .add_document(doc!(
                    self.fields.file => key.as_ref(),
                    self.fields.session => session,
                    self.fields.project => project,
                    self.fields.uuid => uuid,
                    self.fields.role => role,
                    self.fields.timestamp => timestamp.unwrap_or_default(),
                    self.fields.text => text,
                    self.fields.tools => tools,
                    self.fields.paths => paths,
                ))
                .map_err(|e| tantivy_error(&self.dir, e))?;
        }
        Ok(Ok(()))
    }

    /// The best `limit` hits for `query`, in `projects` only when given.
    pub fn search(
        &self,
        query: &str,
        projects: Option<&[String]>,
        limit: usize,
    ) -> Result<Vec<SessionHit>> {
        if query.trim().is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = &self.fields;
        let mut parser = QueryParser::for_index(&self.index, vec![f.text, f.tools, f.paths]);
        parser.set_conjunction_by_default();
        let (parsed, _errors) = parser.parse_query_lenient(query);
        let query: Box<dyn tantivy::query::Query> = match projects {
            None => parsed,
            Some(names) => {
                let any_project: Vec<(Occur, Box<dyn tantivy::query::Query>)> = names
                    .iter()
                    .map(|name| {
                        let term = Term::from_field_text(f.project, name);
                        (
                            Occur::Should,
                            Box::new(TermQuery::new(term, IndexRecordOption::Basic))
                                as Box<dyn tantivy::query::Query>,
                        )
                    })
                    .collect();
                Box::new(BooleanQuery::new(vec![
                    (Occur::Must, parsed),
                    (Occur::Must, Box::new(BooleanQuery::new(any_project))),
                ]))
            }
        };
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&*query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(|e| tantivy_error(&self.dir, e))?;
        let snippets = SnippetGenerator::create(&searcher, &*query, f.text)
            .map_err(|e| tantivy_error(&self.dir, e))?;
        let mut hits = Vec::new();
        for (score, address) in top {
            let document: TantivyDocument = searcher
                .doc(address)
                .map_err(|e| tantivy_error(&self.dir, e))?;
            let get = |field: Field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_owned()
            };
            let text = get(f.text);
            let snippet = snippets.snippet(&text);
            let (fragment, highlights) = if snippet.fragment().is_empty() {
                // Matched on a tool name or a path: show those instead.
                let shown = crate::llm::clip(text.trim(), 200);
                let shown = if shown.is_empty() {
                    get(f.paths).trim().to_owned()
                } else {
                    shown
                };
                (shown, Vec::new())
            } else {
                (
                    snippet.fragment().to_owned(),
                    snippet
                        .highlighted()
                        .iter()
                        .map(|r| (r.start, r.end))
                        .collect(),
                )
            };
            hits.push(SessionHit {
                session_id: get(f.session),
                project: get(f.project),
                uuid: get(f.uuid),
                role: get(f.role),
                timestamp: Some(get(f.timestamp)).filter(|t| !t.is_empty()),
                snippet: fragment,
                highlights,
                score,
                file: PathBuf::from(get(f.file)),
            });
        }
        Ok(hits)
    }
}

fn ends_with_newline(path: &Path, at: u64) -> bool {
    let mut byte = [0u8; 1];
    File::open(path)
        .and_then(|f| crate::platform::fs::read_at(&f, &mut byte, at))
        .is_ok_and(|()| byte[0] == b'\n')
}

impl Engine {
    /// `<engram home>/session-index/`.
    pub fn session_index_dir(&self) -> PathBuf {
        self.engram_home().join("session-index")
    }

    /// The transcripts (`*.jsonl` directly in each project dir) of `project`, or of every project.
    pub fn transcript_files(&self, project: Option<&str>) -> Result<Vec<(String, PathBuf)>> {
        let names = match project {
            Some(name) => vec![name.to_owned()],
            None => self.project_names()?,
        };
        let mut files = Vec::new();
        for name in names {
            let dir = self.project_transcripts_dir_of(&name);
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|t| t.is_file())
                    && path.extension().is_some_and(|e| e == "jsonl")
                {
                    files.push((name.clone(), path));
                }
            }
        }
        Ok(files)
    }

    /// Searches the sessions of `project` (or all), updating the index first; an index that
    /// fails is deleted and built again once (see the module contract).
    pub fn search_sessions(
        &self,
        query: &str,
        project: Option<&str>,
        limit: usize,
    ) -> Result<SessionSearch> {
        let dir = self.session_index_dir();
        let transcripts = self.transcript_files(project)?;
        let projects = project.map(|p| vec![p.to_owned()]);
        let search = || {
            contained(&dir, || {
                let index = SessionIndex::open(&dir)?;
                let mut problems = index.update(&transcripts, projects.as_deref())?;
                let hits = index.search(query, projects.as_deref(), limit)?;
                problems.splice(0..0, index.skipped_lines(&transcripts)?);
                Ok(SessionSearch {
                    hits,
                    rebuilt: None,
                    problems,
                })
            })
        };
        let failure = match search() {
            Ok(found) => return Ok(found),
            Err(failure) => failure,
        };
        if remove_index(&dir).is_err() {
            return Err(failure);
        }
        let mut found = search()?;
        found.rebuilt = Some(failure.to_string());
        Ok(found)
    }
}

/// Deletes the index dir (whatever is at its path), so that it is built again.
fn remove_index(dir: &Path) -> Result<()> {
    let removed = match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(dir),
        Ok(_) => std::fs::remove_file(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| Error::io(dir, e))
}

thread_local! {
    /// Set while [`contained`] runs on this thread: a panic then is caught, not printed.
    static CONTAINING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The last panic caught so, as the panic hook saw it (message and place).
    static CAUGHT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, turning a panic inside it into an error naming the index: tantivy panics on some
/// corrupted files (a truncated `.idx` or `.fast`), and a cache must not bring its caller down.
/// The panic is not printed (the error carries it); panics elsewhere, on other threads or
/// outside this call, reach the previous panic hook as before.
fn contained<T>(dir: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CONTAINING.with(std::cell::Cell::get) {
                let said = info.to_string().replace('\n', " ");
                CAUGHT.with(|caught| *caught.borrow_mut() = Some(said));
            } else {
                previous(info);
            }
        }));
    });
    let was = CONTAINING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CONTAINING.with(|c| c.set(was));
    result.unwrap_or_else(|_| {
        let said = CAUGHT.with(|caught| caught.borrow_mut().take());
        Err(tantivy_error(
            dir,
            said.unwrap_or_else(|| "panicked".to_owned()),
        ))
    })
}

#[cfg(test)]
mod tests;
