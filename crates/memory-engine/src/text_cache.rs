//! What search keeps of the files it read: each file's searchable fields, lowercased, with the
//! mtime and size the file had when listed. A process that searches again (the MCP server, the
//! app) reads only the files changed since: a file whose mtime or size has changed is read
//! again, never matched from its old text. (A rewrite keeping both — possible only on file
//! systems with coarse timestamps — is matched from the old text until the file changes again;
//! search reads every hit it returns from disk.) Engine-free, so the engine can own it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// Bytes of fields a cache holds at most (a home of 20,000 four-kilobyte memories is about
/// 80 MiB); past it the cache starts over.
const CACHE_BYTES: usize = 128 << 20;

/// A memory file's searchable fields, lowercased.
#[derive(Debug)]
pub struct FoldedFields {
    pub name: String,
    pub description: String,
    pub body: String,
}

impl FoldedFields {
    fn bytes(&self) -> usize {
        self.name.len() + self.description.len() + self.body.len()
    }
}

#[derive(Debug, Default)]
pub struct TextCache {
    files: Mutex<Files>,
}

#[derive(Debug, Default)]
struct Files {
    by_path: HashMap<PathBuf, Stamped>,
    bytes: usize,
}

#[derive(Debug)]
struct Stamped {
    mtime: SystemTime,
    len: u64,
    fields: Arc<FoldedFields>,
}

impl TextCache {
    /// The fields kept for `path`, if it was read at this `mtime` and `len`.
    pub fn get(&self, path: &Path, mtime: SystemTime, len: u64) -> Option<Arc<FoldedFields>> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files
            .by_path
            .get(path)
            .filter(|stamped| stamped.mtime == mtime && stamped.len == len)
            .map(|stamped| Arc::clone(&stamped.fields))
    }

    /// Keeps `fields` for `path` as read at `mtime` and `len`.
    pub fn put(&self, path: &Path, mtime: SystemTime, len: u64, fields: Arc<FoldedFields>) {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if files.bytes + fields.bytes() > CACHE_BYTES {
            *files = Files::default();
        }
        files.bytes += fields.bytes();
        let stamped = Stamped { mtime, len, fields };
        if let Some(old) = files.by_path.insert(path.to_path_buf(), stamped) {
            files.bytes -= old.fields.bytes();
        }
    }
}
