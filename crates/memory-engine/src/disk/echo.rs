//! Engram's own writes, remembered briefly so the file watcher can tell them from everyone
//! else's: a writer notes the path and the content it is about to write, and the watcher, finding
//! exactly that content there, consumes the note instead of reporting an external change.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{content_hash, resolved_path};

/// How long a note of an own write waits for the watcher to see it.
pub const ECHO_TTL: Duration = Duration::from_secs(10);

/// Engram's own recent writes, shared by every clone of an [`Engine`]: path + content hash.
#[derive(Debug, Default, Clone)]
pub struct EchoRegistry {
    notes: Arc<Mutex<Vec<OwnWrite>>>,
}

#[derive(Debug)]
struct OwnWrite {
    path: PathBuf,
    /// `None`: a delete.
    hash: Option<String>,
    // Monotonic time, not the engine's clock: this is a runtime timeout, not a domain date, and
    // a test's fixed clock must not make notes immortal.
    noted: Instant,
}

impl EchoRegistry {
    /// Notes that Engram is about to write `content` to `path` (`None`: delete it).
    pub fn note(&self, path: &Path, content: Option<&[u8]>) {
        let note = OwnWrite {
            path: resolved_path(path),
            hash: content.map(content_hash),
            noted: Instant::now(),
        };
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        notes.retain(|n| n.noted.elapsed() < ECHO_TTL);
        notes.push(note);
    }

    /// Whether `path` holding `hash` (`None`: absent) is the echo of a noted own write; consumes
    /// the note if so.
    pub fn take(&self, path: &Path, hash: Option<&str>) -> bool {
        let path = resolved_path(path);
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        notes.retain(|n| n.noted.elapsed() < ECHO_TTL);
        match notes
            .iter()
            .position(|n| n.path == path && n.hash.as_deref() == hash)
        {
            Some(i) => {
                notes.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_note_matches_only_its_path_and_content_and_only_once() {
        let registry = EchoRegistry::default();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.md");
        registry.note(&path, Some(b"mine"));
        registry.note(&dir.path().join("gone.md"), None);
        assert!(!registry.take(&path, Some(&content_hash(b"theirs"))));
        assert!(!registry.take(&dir.path().join("b.md"), Some(&content_hash(b"mine"))));
        assert!(registry.take(&path, Some(&content_hash(b"mine"))));
        assert!(
            !registry.take(&path, Some(&content_hash(b"mine"))),
            "consumed"
        );
        assert!(registry.take(&dir.path().join("gone.md"), None));
    }
}
