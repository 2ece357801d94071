//! Writes that never leave a half-written file behind: the new content goes to a temp file in the
//! same directory, is flushed, and is renamed over the target. The temp name never ends in `.md`,
//! so a Claude Code scan running at the same moment cannot pick it up as a memory.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, IoResultExt, Result};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Atomically replaces (or creates) `path` with `contents`, creating parent directories.
/// An existing file keeps its permissions.
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().ok_or_else(|| {
        Error::InvalidInput(format!("{}: has no parent directory", path.display()))
    })?;
    fs::create_dir_all(dir).at(dir)?;
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::InvalidInput(format!("{}: has no file name", path.display())))?;
    let temp = dir.join(format!(
        ".{}.engram-{}-{}.tmp",
        file_name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::File::create(&temp).at(&temp)?;
        file.write_all(contents).at(&temp)?;
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&temp, meta.permissions()).at(&temp)?;
        }
        file.sync_all().at(&temp)?;
        fs::rename(&temp, path).at(path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Reads a file as UTF-8 text, naming the file in any error.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = fs::read(path).at(path)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::parse(
            path,
            None,
            format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_parents_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("a/b/note.md");
        atomic_write(&target, b"one").expect("first write");
        atomic_write(&target, b"two").expect("second write");
        assert_eq!(fs::read(&target).expect("read back"), b"two");
        let names: Vec<_> = fs::read_dir(target.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec!["note.md"], "only the target may remain");
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_existing_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("summary.md");
        fs::write(&target, "x").expect("seed");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).expect("chmod");
        atomic_write(&target, b"y").expect("write");
        let mode = fs::metadata(&target).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn read_text_names_the_file_when_missing() {
        let err = read_text(Path::new("/nonexistent/engram/x.md")).expect_err("must fail");
        assert!(
            err.to_string().contains("/nonexistent/engram/x.md"),
            "{err}"
        );
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
    }
}
