//! Reading what a memory dir holds: optional files, content hashes, and the walk that lists its
//! memory files.

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, IoResultExt, Result};

/// The text of `path`, or `None` if there is no file there.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match super::read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`read_optional`] for a file another program rewrites in place — an index Claude Code edits:
/// its `Write` and `Edit` truncate the file, then write it, so a read in between sees an empty
/// (or partial) file, and planning or merging from that would drop every line. Reads until two
/// reads a moment apart agree — a millisecond, or 25 when the file reads empty, since a writer
/// descheduled between its truncation and its write leaves it empty for longer. Bounded: after
/// [`SETTLE_READS`] reads the last one is returned.
pub fn read_settled(path: &Path) -> Result<Option<String>> {
    let mut last = read_optional(path)?;
    for _ in 0..SETTLE_READS {
        let empty = last.as_deref().is_some_and(str::is_empty);
        std::thread::sleep(std::time::Duration::from_millis(if empty { 25 } else { 1 }));
        let again = read_optional(path)?;
        if again == last {
            return Ok(last);
        }
        last = again;
    }
    Ok(last)
}

/// The most reads [`read_settled`] makes.
pub const SETTLE_READS: usize = 40;

/// The first `max` bytes of the regular file at `path` (symlinks followed) and its metadata;
/// `None` when nothing is there. It is opened without blocking: an ordinary open of a FIFO put
/// in a file's place waits for a writer forever (and no signal ends that wait). Anything but a
/// regular file — a FIFO, a socket, a device, a directory — is refused, naming what it is, and
/// the read stops at `max`, so a huge file is never read whole.
pub fn read_head(path: &Path, max: u64) -> Result<Option<(fs::Metadata, Vec<u8>)>> {
    use std::io::Read;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    crate::platform::fs::open_nonblocking(&mut options, false);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().at(path)?;
    if !meta.is_file() {
        return Err(Error::InvalidInput(format!(
            "{}: not a regular file ({})",
            path.display(),
            file_kind(&meta)
        )));
    }
    let mut head = Vec::new();
    file.take(max).read_to_end(&mut head).at(path)?;
    Ok(Some((meta, head)))
}

/// What a file that is not a regular file is, in words.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    if let Some(kind) = crate::platform::fs::special_kind(meta) {
        return kind;
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The hex SHA-256 of some content: the key of its blob, and what the watcher compares.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether a relative key names a memory file: ends in `.md`, and no component is hidden (that
/// also leaves out `disk::atomic_write`'s `.name.engram-….tmp` temp files and
/// `.consolidate-lock`).
pub fn is_memory_file_key(key: &str) -> bool {
    key.ends_with(".md")
        && key
            .split('/')
            .all(|part| !part.is_empty() && !part.starts_with('.'))
}

/// The memory files under `root` as sorted relative keys. Symlinks are not followed (a link to
/// elsewhere is not part of this dir's history; a link loop must not hang the walk).
pub fn memory_files(root: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries {
            let entry = entry.at(&dir)?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let key = format!("{prefix}{name}");
            let file_type = entry.file_type().at(entry.path())?;
            if file_type.is_dir() {
                pending.push((entry.path(), format!("{key}/")));
            } else if file_type.is_file() && is_memory_file_key(&key) {
                files.push(key);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The process that wrote a temp file of [`super::atomic_write`] (`.name.engram-PID-N.tmp`) or
/// of a daily log's first line (`name.engram-PID-N.tmp`); `None` for any other name.
pub fn temp_writer(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".tmp")?;
    let (rest, _counter) = stem.rsplit_once('-')?;
    let (rest, pid) = rest.rsplit_once('-')?;
    rest.ends_with(".engram").then_some(())?;
    pid.parse().ok()
}

/// Temp files under `root` whose writer is gone (killed mid-write): nothing will finish or
/// remove them. Symlinked dirs are not followed. Relative keys, sorted.
pub fn stray_temp_files(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let key = format!("{prefix}{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push((entry.path(), format!("{key}/")));
            } else if kind.is_file()
                && temp_writer(&name).is_some_and(|pid| !crate::environment::pid_alive(pid))
            {
                found.push(key);
            }
        }
    }
    found.sort();
    Ok(found)
}
