//! The history store on disk (layout in the parent module's docs): the lock, the version
//! counter, content-addressed blobs and one append-only log per memory dir.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use fs4::fs_std::FileExt;

use super::Version;
use crate::disk::{self, content_hash};
use crate::error::{Error, IoResultExt, Result};

/// The on-disk store; see the module docs for its layout.
pub(super) struct Store {
    pub(super) root: PathBuf,
}

impl Store {
    pub(super) fn lock(&self) -> Result<fs::File> {
        fs::create_dir_all(&self.root).at(&self.root)?;
        let path = self.root.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .at(&path)?;
        // flock: held per open file, so threads of one process exclude each other too; released
        // when the returned file is dropped.
        FileExt::lock_exclusive(&file).at(&path)?;
        Ok(file)
    }

    pub(super) fn log_path(&self, memory_dir: &Path) -> PathBuf {
        self.root
            .join("dirs")
            .join(dir_folder_name(memory_dir))
            .join("log.jsonl")
    }

    /// Every memory dir's log.
    pub(super) fn logs(&self) -> Result<Vec<PathBuf>> {
        let dirs = self.root.join("dirs");
        let entries = match fs::read_dir(&dirs) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&dirs, e)),
        };
        let mut logs = Vec::new();
        for entry in entries {
            let log = entry.at(&dirs)?.path().join("log.jsonl");
            if log.is_file() {
                logs.push(log);
            }
        }
        logs.sort();
        Ok(logs)
    }

    pub(super) fn blob_path(&self, hash: &str) -> PathBuf {
        let (shard, rest) = hash.split_at(hash.len().min(2));
        self.root.join("blobs").join(shard).join(rest)
    }

    /// Stores contents not stored yet, all flushed to disk at once (see
    /// [`disk::atomic_write_many`]). A blob whose size does not match its content (damaged by a
    /// crash of an older version, or by hand) is written again.
    pub(super) fn put_blobs(&self, blobs: &HashMap<String, &str>) -> Result<()> {
        let mut missing: Vec<(PathBuf, &[u8])> = Vec::new();
        for (hash, content) in blobs {
            let path = self.blob_path(hash);
            let stored = fs::metadata(&path).is_ok_and(|m| m.len() == content.len() as u64);
            if !stored {
                missing.push((path, content.as_bytes()));
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(&self.root).at(&self.root)?;
        disk::atomic_write_many(&self.root, &missing)
    }

    /// A blob's content, checked against its hash.
    pub(super) fn blob(&self, hash: &str) -> Result<String> {
        let path = self.blob_path(hash);
        let text = disk::read_text(&path)?;
        if content_hash(text.as_bytes()) != hash {
            return Err(Error::parse(
                &path,
                None,
                "history blob does not match its hash (corrupted)",
            ));
        }
        Ok(text)
    }

    /// The last version number issued. Called under the lock.
    pub(super) fn last_number(&self) -> Result<u64> {
        let path = self.root.join("counter");
        match fs::read_to_string(&path) {
            Ok(text) => {
                if let Ok(n) = text.trim().parse() {
                    return Ok(n);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
        // Lost or damaged counter: the logs know every id ever issued.
        let mut last = 0;
        for log in self.logs()? {
            for version in read_log(&log)? {
                last = last.max(version.number().unwrap_or(0));
            }
        }
        Ok(last)
    }

    pub(super) fn set_last_number(&self, n: u64) -> Result<()> {
        disk::atomic_write(&self.root.join("counter"), format!("{n}\n").as_bytes())
    }
}

/// The versions in a log, oldest first. A missing log is empty; a line that does not parse (a
/// torn last line from a crash, or one being appended right now) is skipped.
pub(super) fn read_log(path: &Path) -> Result<Vec<Version>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// Appends whole lines in one write. If a crash left the log without a final newline, starts on a
/// fresh line so the torn line stays alone (and skipped) instead of corrupting the new one.
pub(super) fn append_lines(path: &Path, lines: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).at(parent)?;
    }
    let needs_newline = last_byte(path)?.is_some_and(|b| b != b'\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .at(path)?;
    let buffer = if needs_newline {
        format!("\n{lines}")
    } else {
        lines.to_owned()
    };
    file.write_all(buffer.as_bytes()).at(path)?;
    file.sync_data().at(path)
}

/// The last byte of a file; `None` if it is empty or missing.
pub(super) fn last_byte(path: &Path) -> Result<Option<u8>> {
    let mut file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    if file.metadata().at(path)?.len() == 0 {
        return Ok(None);
    }
    file.seek(SeekFrom::End(-1)).at(path)?;
    let mut byte = [0u8; 1];
    file.read_exact(&mut byte).at(path)?;
    Ok(Some(byte[0]))
}

pub(super) fn format_version_number(n: u64) -> String {
    format!("v{n:06}")
}

pub(super) fn parse_version_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix('v')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `<last two components, sanitized>-<16 hex of the SHA-256 of the full path>`.
pub(super) fn dir_folder_name(memory_dir: &Path) -> String {
    let tail: Vec<String> = memory_dir
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .take(2)
        .collect();
    let readable: String = tail
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(60)
        .collect();
    let hash = content_hash(memory_dir.to_string_lossy().as_bytes());
    format!("{readable}-{}", &hash[..16])
}
