//! The history store on disk (layout in the parent module's docs): the lock, the version
//! counter, content-addressed blobs and one append-only log per memory dir.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use fs4::fs_std::FileExt;

use super::Version;
use crate::disk::{self, content_hash};
use crate::error::{Error, IoResultExt, Result};

/// At least this many new blobs at once go in a pack rather than loose files.
const PACK_THRESHOLD: usize = 256;
const PACK_MAGIC: &str = "ENGRAMPACK1";

/// Every pack of a store, and where each blob in them is.
struct PackIndex {
    packs: Vec<PathBuf>,
    blobs: HashMap<String, (PathBuf, u64, u64)>,
}

/// A pack's table of contents.
struct PackHeader {
    /// Where the contents start.
    data_start: u64,
    /// (hash, offset from `data_start`, length).
    entries: Vec<(String, u64, u64)>,
}

fn read_pack_header(path: &Path) -> Result<PackHeader> {
    let bad = |why: &str| Error::parse(path, None, format!("not a history pack: {why}"));
    let file = fs::File::open(path).at(path)?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    let mut consumed = 0u64;
    let mut next_line = |line: &mut String| -> Result<()> {
        line.clear();
        let n = std::io::BufRead::read_line(&mut reader, line).at(path)?;
        consumed += n as u64;
        Ok(())
    };
    next_line(&mut line)?;
    if line.trim_end() != PACK_MAGIC {
        return Err(bad("no ENGRAMPACK1 line"));
    }
    next_line(&mut line)?;
    let count: usize = line.trim_end().parse().map_err(|_| bad("no count"))?;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        next_line(&mut line)?;
        let mut parts = line.split_whitespace();
        let (Some(hash), Some(offset), Some(len)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("a short entry line"));
        };
        let offset: u64 = offset.parse().map_err(|_| bad("an offset"))?;
        let len: u64 = len.parse().map_err(|_| bad("a length"))?;
        entries.push((hash.to_owned(), offset, len));
    }
    next_line(&mut line)?;
    if !line.trim_end().is_empty() {
        return Err(bad("no blank line after the entries"));
    }
    Ok(PackHeader {
        data_start: consumed,
        entries,
    })
}

/// The on-disk store; see the module docs for its layout.
pub(super) struct Store {
    pub(super) root: PathBuf,
}

impl Store {
    pub(super) fn lock(&self) -> Result<fs::File> {
        let path = self.root.join("lock");
        let file = crate::disk::open_lock_file(&path).at(&path)?;
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

    /// Stores contents not stored yet, all flushed to disk at once. A few go in as loose blobs
    /// ([`disk::atomic_write_many`]); many at once (a first open records every file of a dir) go
    /// in one pack: one file written and flushed instead of thousands. A loose blob whose size
    /// does not match its content (damaged by a crash of an older version, or by hand) is written
    /// again.
    pub(super) fn put_blobs(&self, blobs: &HashMap<String, &str>) -> Result<()> {
        let packed = self.pack_index()?;
        let mut missing: Vec<(&str, &str)> = Vec::new();
        for (hash, content) in blobs {
            if packed.blobs.contains_key(hash.as_str()) {
                continue;
            }
            let stored =
                fs::metadata(self.blob_path(hash)).is_ok_and(|m| m.len() == content.len() as u64);
            if !stored {
                missing.push((hash, content));
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        crate::disk::create_dir_all(&self.root).at(&self.root)?;
        if missing.len() >= PACK_THRESHOLD {
            return self.write_pack(&mut missing);
        }
        let loose: Vec<(PathBuf, &[u8])> = missing
            .iter()
            .map(|(hash, content)| (self.blob_path(hash), content.as_bytes()))
            .collect();
        disk::atomic_write_many(&self.root, &loose)
    }

    /// Writes `blobs` as one pack: `ENGRAMPACK1`, the count, one `hash offset length` line per
    /// blob, a blank line, then the contents back to back (offsets from there). Packs are never
    /// changed once written; the file is named by its header's hash.
    fn write_pack(&self, blobs: &mut [(&str, &str)]) -> Result<()> {
        blobs.sort_unstable();
        let mut header = format!("{PACK_MAGIC}\n{}\n", blobs.len());
        let mut offset = 0usize;
        for (hash, content) in blobs.iter() {
            header.push_str(&format!("{hash} {offset} {}\n", content.len()));
            offset += content.len();
        }
        header.push('\n');
        let mut bytes = Vec::with_capacity(header.len() + offset);
        bytes.extend_from_slice(header.as_bytes());
        for (_, content) in blobs.iter() {
            bytes.extend_from_slice(content.as_bytes());
        }
        let dir = self.root.join("packs");
        crate::disk::create_dir_all(&dir).at(&dir)?;
        let path = dir.join(format!("{}.pack", content_hash(header.as_bytes())));
        disk::atomic_write(&path, &bytes)
    }

    /// Where each packed blob is: hash → (pack, offset of its content, length). Packs never
    /// change once written, so the index is rebuilt only when the set of packs does (one
    /// directory read per call).
    fn pack_index(&self) -> Result<Arc<PackIndex>> {
        static INDEXES: OnceLock<Mutex<HashMap<PathBuf, Arc<PackIndex>>>> = OnceLock::new();
        let dir = self.root.join("packs");
        let mut packs: Vec<PathBuf> = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("pack"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        packs.sort();
        let cache = INDEXES.get_or_init(Mutex::default);
        if let Some(index) = cache.lock().ok().and_then(|c| c.get(&dir).cloned()) {
            if index.packs == packs {
                return Ok(index);
            }
        }
        let mut blobs = HashMap::new();
        for pack in &packs {
            let header = read_pack_header(pack)?;
            for (hash, offset, len) in header.entries {
                blobs.insert(hash, (pack.clone(), header.data_start + offset, len));
            }
        }
        let index = Arc::new(PackIndex { packs, blobs });
        if let Ok(mut c) = cache.lock() {
            c.insert(dir, Arc::clone(&index));
        }
        Ok(index)
    }

    /// A blob's content, checked against its hash: loose, else from a pack.
    pub(super) fn blob(&self, hash: &str) -> Result<String> {
        let path = self.blob_path(hash);
        let (text, source) = match disk::read_text(&path) {
            Ok(text) => (text, path),
            Err(Error::NotFound(_)) => {
                let index = self.pack_index()?;
                let Some((pack, offset, len)) = index.blobs.get(hash) else {
                    return Err(Error::NotFound(path));
                };
                let mut file = fs::File::open(pack).at(pack)?;
                file.seek(SeekFrom::Start(*offset)).at(pack)?;
                let mut bytes = vec![0u8; usize::try_from(*len).unwrap_or(0)];
                file.read_exact(&mut bytes).at(pack)?;
                let text = String::from_utf8(bytes)
                    .map_err(|e| Error::parse(pack, None, e.to_string()))?;
                (text, pack.clone())
            }
            Err(e) => return Err(e),
        };
        if content_hash(text.as_bytes()) != hash {
            return Err(Error::parse(
                &source,
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
        crate::disk::create_dir_all(parent).at(parent)?;
    }
    let needs_newline = last_byte(path)?.is_some_and(|b| b != b'\n');
    let mut file = crate::disk::with_mode_for(OpenOptions::new().create(true).append(true), path)
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
