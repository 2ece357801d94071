//! The lowercased text of files read before, each with the mtime and size it had when listed, so
//! a process that searches again (the MCP server, the app) reads only the files changed since:
//! a file whose mtime or size has changed is read again, never matched from its old text. (A
//! rewrite keeping both — possible only on file systems with coarse timestamps — is matched from
//! the old text until the file changes again; search reads every hit from disk.) Engine-free, so
//! the engine can own it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// Bytes of text a cache holds at most (a home of 20,000 one-kilobyte memories is about a third
/// of it); past it the cache starts over.
const CACHE_BYTES: usize = 64 << 20;

#[derive(Debug, Default)]
pub struct TextCache {
    texts: Mutex<Texts>,
}

#[derive(Debug, Default)]
struct Texts {
    by_path: HashMap<PathBuf, Cached>,
    bytes: usize,
}

#[derive(Debug)]
struct Cached {
    mtime: SystemTime,
    len: u64,
    text: Arc<str>,
}

impl TextCache {
    /// The text kept for `path`, if it was read at this `mtime` and `len`.
    pub fn get(&self, path: &Path, mtime: SystemTime, len: u64) -> Option<Arc<str>> {
        let texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        texts
            .by_path
            .get(path)
            .filter(|cached| cached.mtime == mtime && cached.len == len)
            .map(|cached| Arc::clone(&cached.text))
    }

    /// Keeps `text` for `path` as read at `mtime` and `len`.
    pub fn put(&self, path: &Path, mtime: SystemTime, len: u64, text: Arc<str>) {
        let mut texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        if texts.bytes + text.len() > CACHE_BYTES {
            *texts = Texts::default();
        }
        texts.bytes += text.len();
        if let Some(old) = texts
            .by_path
            .insert(path.to_path_buf(), Cached { mtime, len, text })
        {
            texts.bytes -= old.text.len();
        }
    }
}
