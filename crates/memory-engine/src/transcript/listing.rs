//! Listing sessions: every `*.jsonl` directly in a project's transcripts dir
//! (`<config home>/projects/<name>/`), with its title, size and last activity. A big file is read
//! only at its head and its tail (its message count is then an estimate, flagged as such), so a
//! project of thousands of sessions lists quickly.

use std::fs::{self, File};
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{Builder, LineReader, Transcript};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Files up to this size are read whole (exact message count); bigger ones at head and tail.
pub const LISTING_FULL_READ_BYTES: u64 = 1 << 20;
/// How much of a big file's head and of its tail a listing reads.
const LISTING_PART_BYTES: u64 = 256 << 10;

/// One session in a listing (`engram sessions --json`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session id (the file name without `.jsonl`).
    pub id: String,
    /// The project's directory name under `<config home>/projects/`.
    pub project: String,
    pub title: Option<String>,
    /// User and assistant messages on the conversation's chain.
    pub messages: usize,
    pub first_prompt: Option<String>,
    /// The newest entry's timestamp, else the file's mtime (ISO-8601 UTC).
    pub last_activity: Option<String>,
    /// A subagent's transcript.
    pub sidechain: bool,
    pub file: PathBuf,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    // Additions to the documented shape.
    /// `messages` was estimated from the head and tail of a big file.
    pub messages_estimated: bool,
    pub cwd: Option<String>,
}

impl Engine {
    /// Sessions of one project (`Some(name)`, a directory name under `<config home>/projects/`)
    /// or of every project, most recently active first. A file that cannot be read is left out
    /// (its error goes to `problems`), never failing the listing.
    pub fn list_sessions(&self, project: Option<&str>) -> Result<SessionListing> {
        let names = match project {
            Some(name) => vec![checked_name(name)?.to_owned()],
            None => self.project_names()?,
        };
        let mut listing = SessionListing::default();
        for name in names {
            let dir = self.project_transcripts_dir_of(&name);
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    listing.problems.push(Error::io(&dir, e).to_string());
                    continue;
                }
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let is_file = entry.file_type().is_ok_and(|t| t.is_file());
                if !is_file || path.extension().is_none_or(|e| e != "jsonl") {
                    continue;
                }
                match summarize(&name, &path) {
                    Ok(summary) => listing.sessions.push(summary),
                    Err(e) => listing.problems.push(e.to_string()),
                }
            }
        }
        listing.sessions.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(listing)
    }

    /// The transcript file of session `id_or_path`: an existing `.jsonl` path as given, else
    /// `<id>.jsonl` in any project's transcripts dir (or a subagent's `agent-<id>.jsonl`), else
    /// the one session whose id starts with it (four characters or more), as a git
    /// commit is named by the start of its hash: `engram transcript 1af7fc5e`.
    pub fn find_transcript(&self, id_or_path: &str) -> Result<PathBuf> {
        let given = Path::new(id_or_path);
        if id_or_path.ends_with(".jsonl") && given.is_file() {
            return Ok(given.to_path_buf());
        }
        let id = checked_name(id_or_path)?;
        let dirs: Vec<PathBuf> = self
            .project_names()?
            .iter()
            .map(|name| self.project_transcripts_dir_of(name))
            .collect();
        for dir in &dirs {
            for candidate in [format!("{id}.jsonl"), format!("agent-{id}.jsonl")] {
                let path = dir.join(candidate);
                if path.is_file() {
                    return Ok(path);
                }
            }
        }
        let starting = if id.chars().count() >= MIN_ID_PREFIX {
            sessions_starting_with(&dirs, id)
        } else {
            Vec::new()
        };
        match starting.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(Error::InvalidInput(format!(
                "no session {id_or_path:?} under {}",
                self.claude_home().join("projects").display()
            ))),
            several => {
                let ids: Vec<String> = several
                    .iter()
                    .take(AMBIGUOUS_SHOWN)
                    .filter_map(|path| path.file_stem())
                    .map(|stem| stem.to_string_lossy().into_owned())
                    .collect();
                let more = several.len().saturating_sub(AMBIGUOUS_SHOWN);
                Err(Error::InvalidInput(format!(
                    "session {id_or_path:?} is ambiguous: {} sessions start with it ({}{}); give \
                     more of its id",
                    several.len(),
                    ids.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )))
            }
        }
    }
}

/// The fewest characters of a session id that name it by its start: fewer match too many
/// sessions to mean one (git asks as many of a commit's hash).
const MIN_ID_PREFIX: usize = 4;

/// How many sessions an ambiguous id's error names.
const AMBIGUOUS_SHOWN: usize = 5;

/// The transcripts in `dirs` whose session id starts with `prefix` (a subagent's with or without
/// `agent-`, as `engram sessions` lists it or as its id), ignoring case as ids are UUIDs, sorted
/// by path.
fn sessions_starting_with(dirs: &[PathBuf], prefix: &str) -> Vec<PathBuf> {
    let prefix = prefix.to_lowercase();
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                continue;
            };
            let id = stem.strip_prefix("agent-").unwrap_or(stem);
            let starts = |name: &str| name.to_lowercase().starts_with(&prefix);
            if (starts(stem) || starts(id)) && entry.file_type().is_ok_and(|t| t.is_file()) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

impl Engine {
    /// The transcript of session `id` in project `project` (both plain names, as listed): the
    /// app's way in, which can reach no other file.
    pub fn project_session_transcript(&self, project: &str, id: &str) -> Result<PathBuf> {
        let path = self
            .project_transcripts_dir_of(checked_name(project)?)
            .join(format!("{}.jsonl", checked_name(id)?));
        if !path.is_file() {
            return Err(Error::NotFound(path));
        }
        Ok(path)
    }
}

/// What [`Engine::list_sessions`] found.
#[derive(Debug, Default)]
pub struct SessionListing {
    pub sessions: Vec<SessionSummary>,
    /// Files or dirs that could not be read, one message each.
    pub problems: Vec<String>,
}

/// A name from outside must be one plain path component.
fn checked_name(name: &str) -> Result<&str> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::InvalidInput(format!(
            "{name:?} is not a session or project name"
        )));
    }
    Ok(name)
}

fn summarize(project: &str, path: &Path) -> Result<SessionSummary> {
    let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let bytes = metadata.len();
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (transcript, messages, estimated) = if bytes <= LISTING_FULL_READ_BYTES {
        let transcript = Transcript::open(path)?;
        let messages = transcript.message_count();
        (transcript, messages, false)
    } else {
        read_head_and_tail(path, bytes)?
    };
    let last_activity = transcript
        .last_timestamp
        .clone()
        .or_else(|| metadata.modified().ok().map(crate::staleness::iso_time));
    Ok(SessionSummary {
        sidechain: transcript.sidechain || id.starts_with("agent-"),
        title: transcript.title(),
        first_prompt: transcript.first_prompt(),
        id,
        project: project.to_owned(),
        messages,
        last_activity,
        file: path.to_path_buf(),
        bytes,
        messages_estimated: estimated,
        cwd: transcript.cwd.clone(),
    })
}

/// The `timestamp` of the last entry of the transcript at `path` that has one: when Claude Code
/// last wrote in it (entries are appended as they happen), which a copy of the file keeps (its
/// mtime becomes the copy's). Reads 64 KiB from the end, up to [`LISTING_PART_BYTES`] when one
/// line fills that (a big tool result), and parses lines from the last until one has a
/// timestamp; `None` when none there has one or the file cannot be read.
pub(crate) fn last_entry_time(path: &Path) -> Option<std::time::SystemTime> {
    let mut file = File::open(path).ok()?;
    let bytes = file.metadata().ok()?.len();
    let mut window = 64 << 10;
    loop {
        let start = bytes.saturating_sub(window);
        file.seek(SeekFrom::Start(start)).ok()?;
        let mut tail = Vec::new();
        (&mut file).take(window).read_to_end(&mut tail).ok()?;
        // A window starting inside the file starts mid-line: its first piece is no entry.
        let whole_lines = match tail.iter().position(|&b| b == b'\n') {
            Some(first_end) if start > 0 => &tail[first_end + 1..],
            None if start > 0 => &[][..],
            _ => &tail[..],
        };
        let last = whole_lines.rsplit(|&b| b == b'\n').find_map(|line| {
            #[derive(serde::Deserialize)]
            struct Stamped {
                timestamp: Option<String>,
            }
            let stamped: Stamped = serde_json::from_slice(line).ok()?;
            chrono::DateTime::parse_from_rfc3339(&stamped.timestamp?).ok()
        });
        if let Some(last) = last {
            return Some(last.into());
        }
        if start == 0 || window >= LISTING_PART_BYTES {
            return None;
        }
        window = LISTING_PART_BYTES;
    }
}

/// A big file's summary from its first and last [`LISTING_PART_BYTES`]: titles, first prompt and
/// last activity are exact (they live at the ends), the message count is scaled from the parts.
fn read_head_and_tail(path: &Path, bytes: u64) -> Result<(Transcript, usize, bool)> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut builder = Builder::default();
    let head = BufReader::new((&mut file).take(LISTING_PART_BYTES));
    let mut reader = LineReader::new(head);
    let mut head_end = 0;
    while let Some(line) = reader.next_line().map_err(|e| Error::io(path, e))? {
        // The part's last line may be cut by the limit: only complete lines count.
        if line.offset + line.len >= LISTING_PART_BYTES {
            break;
        }
        head_end = line.offset + line.len;
        builder.add(&line);
    }
    let tail_start = bytes.saturating_sub(LISTING_PART_BYTES).max(head_end);
    file.seek(SeekFrom::Start(tail_start))
        .map_err(|e| Error::io(path, e))?;
    let mut reader = LineReader::starting_at(BufReader::new(&mut file), tail_start, 0);
    let mut first = true;
    while let Some(line) = reader.next_line().map_err(|e| Error::io(path, e))? {
        // The first tail line usually starts mid-entry.
        if std::mem::take(&mut first) && tail_start > head_end {
            continue;
        }
        builder.add(&line);
    }
    // Line numbers from the tail are unknown: the listing reports none of them.
    builder.skipped_lines.clear();
    let sampled = builder.nodes.iter().filter(|n| n.is_message()).count();
    let transcript = builder.finish(path.to_path_buf(), bytes);
    let read = (head_end + (bytes - tail_start)).max(1);
    let estimate = (sampled as f64 * bytes as f64 / read as f64).round() as usize;
    Ok((transcript, estimate, true))
}
