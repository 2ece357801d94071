//! The disk rules every part of Engram goes through.
//!
//! - Writes never leave a half-written file behind: the new content goes to a temp file in the
//!   same directory, is flushed, and is renamed over the target. The temp name never ends in
//!   `.md`, so a Claude Code scan running at the same moment cannot pick it up as a memory.
//! - [`confine`]: a file key becomes a path only inside its root, symlinks followed; fails closed.
//! - [`files`]: optional reads, content hashes, and the walk listing a dir's memory files.
//! - [`echo`]: Engram's own writes, noted so the watcher does not report them as external.
//! - [`private`]: Engram's data dir is private (dirs 0700, new files 0600); every dir and file
//!   created through here follows that rule.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, IoResultExt, Result};
use crate::platform;

pub mod confine;
pub mod echo;
pub mod files;
pub mod private;

pub use confine::{check_file_key, confined_path, is_symlink_loop, resolved_path};
pub use echo::{EchoRegistry, ECHO_TTL};
pub use files::{
    content_hash, is_memory_file_key, memory_files, read_head, read_optional, read_settled,
    stray_temp_files, temp_writer,
};
pub use private::{create_dir_all, open_lock_file, register_private_root, with_mode_for};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Atomically replaces (or creates) `path` with `contents`, creating parent directories.
/// An existing file keeps its permissions; a new one gets the mode [`private`] gives it.
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    PreparedWrite::new(path, contents)?.commit()
}

/// A new content written and flushed to a temp file beside its target, not yet in place: the
/// caller can still look at the target (has it moved since it was read?) before
/// [`PreparedWrite::commit`] renames the temp over it. Dropped uncommitted, the temp is removed.
#[derive(Debug)]
pub struct PreparedWrite {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl PreparedWrite {
    /// Writes `contents` to a flushed temp file beside `path` (parents created; an existing
    /// target's permissions kept).
    pub fn new(path: &Path, contents: &[u8]) -> Result<PreparedWrite> {
        let dir = path.parent().ok_or_else(|| {
            Error::InvalidInput(format!("{}: has no parent directory", path.display()))
        })?;
        create_dir_all(dir).at(dir)?;
        let prepared = PreparedWrite {
            temp: temp_path(path)?,
            target: path.to_path_buf(),
            committed: false,
        };
        let mut file = with_mode_for(
            fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
            path,
        )
        .open(&prepared.temp)
        .at(&prepared.temp)?;
        file.write_all(contents).at(&prepared.temp)?;
        if let Ok(meta) = fs::metadata(path) {
            // A volume without permission modes (FAT through FUSE) has none to keep.
            match fs::set_permissions(&prepared.temp, meta.permissions()) {
                Err(e) if e.kind() != io::ErrorKind::Unsupported => {
                    return Err(e).at(&prepared.temp)
                }
                _ => {}
            }
        }
        file.sync_all().at(&prepared.temp)?;
        Ok(prepared)
    }

    /// Makes the new file readable and writable by its owner only when there is no target yet
    /// (an existing target's mode is kept): for files that hold account details.
    pub fn owner_only_if_new(self) -> Result<PreparedWrite> {
        if fs::symlink_metadata(&self.target).is_err() {
            platform::fs::set_mode(&self.temp, 0o600).at(&self.temp)?;
        }
        Ok(self)
    }

    /// Renames the temp over the target.
    pub fn commit(mut self) -> Result<()> {
        platform::fs::rename(&self.temp, &self.target).at(&self.target)?;
        self.committed = true;
        Ok(())
    }

    /// Puts the new content in place and returns what the target held at that very instant
    /// (`None`: there was no file), so a writer that merged with an earlier read can tell whether
    /// someone wrote in between — and still has their content to merge again. This is one atomic
    /// exchange on Linux and macOS ([`platform::fs::exchange`]; a missing target is
    /// created without replacing, so a file that appears meanwhile is not clobbered either);
    /// elsewhere the target is read just before an ordinary rename.
    pub fn swap_in(mut self) -> Result<Option<String>> {
        let replaced = self.exchange()?;
        self.committed = true;
        Ok(replaced)
    }

    fn exchange(&self) -> Result<Option<String>> {
        use crate::platform::fs::{exchange, Exchanged};
        match exchange(&self.temp, &self.target).at(&self.target)? {
            Exchanged::Swapped => {
                // The temp path now holds what the target held — and a program that had it
                // open to rewrite in place (Claude Code truncates, then writes) may still be
                // writing into it: read it once it has settled.
                let replaced = read_settled(&self.temp);
                let _ = fs::remove_file(&self.temp);
                replaced
            }
            Exchanged::Created => Ok(None),
            // No atomic exchange here: read, then rename. A write landing between the two is
            // replaced; the caller's merge re-check sees what was read, not that write.
            Exchanged::Unsupported => {
                let replaced = read_optional(&self.target)?;
                platform::fs::rename(&self.temp, &self.target).at(&self.target)?;
                Ok(replaced)
            }
        }
    }
}

impl Drop for PreparedWrite {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Creates or replaces many files, each atomically, with one durability barrier for them all
/// instead of one `fsync` each: history records a whole memory dir when it is first opened, and
/// 20,000 per-file flushes take tens of seconds. Every file is written to a temp file, the temps
/// are flushed together, and only then renamed into place, so a crash leaves stray temp files,
/// never a target holding partial content. The targets need not share a directory but must
/// share a filesystem with `root`. Permissions are those of new files ([`private`]).
pub fn atomic_write_many(root: &Path, files: &[(PathBuf, &[u8])]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let mut temps: Vec<(PathBuf, &Path)> = Vec::with_capacity(files.len());
    let result = (|| {
        for (path, contents) in files {
            let dir = path.parent().ok_or_else(|| {
                Error::InvalidInput(format!("{}: has no parent directory", path.display()))
            })?;
            create_dir_all(dir).at(dir)?;
            let temp = temp_path(path)?;
            temps.push((temp.clone(), path));
            // Closed right away: holding 20,000 handles would run out of file descriptors.
            with_mode_for(
                fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true),
                path,
            )
            .open(&temp)
            .and_then(|mut file| file.write_all(contents))
            .at(&temp)?;
        }
        flush_all(root, &temps)?;
        for (temp, path) in &temps {
            platform::fs::rename(temp, path).at(path)?;
        }
        Ok(())
    })();
    if result.is_err() {
        for (temp, _) in &temps {
            let _ = fs::remove_file(temp);
        }
    }
    result
}

/// Makes the written temp files durable: one file-system flush where the OS has it (Linux
/// `syncfs`: a single journal commit), else as few drive flushes as the OS allows
/// ([`platform::fs::sync_files`]).
fn flush_all(root: &Path, temps: &[(PathBuf, &Path)]) -> Result<()> {
    let files: Vec<&Path> = temps.iter().map(|(temp, _)| temp.as_path()).collect();
    platform::fs::sync_files(root, &files).at(root)
}

/// A temp name beside `path` that no other writer uses and that never ends in `.md`.
fn temp_path(path: &Path) -> Result<PathBuf> {
    let dir = path.parent().ok_or_else(|| {
        Error::InvalidInput(format!("{}: has no parent directory", path.display()))
    })?;
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::InvalidInput(format!("{}: has no file name", path.display())))?;
    Ok(dir.join(format!(
        ".{}.engram-{}-{}.tmp",
        file_name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    )))
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
    fn atomic_write_many_writes_every_file_across_dirs_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (dir.path().join("ab/one"), dir.path().join("cd/two"));
        fs::create_dir_all(dir.path().join("ab")).expect("mkdir");
        fs::write(&a, "stale").expect("seed");
        atomic_write_many(dir.path(), &[(a.clone(), b"1"), (b.clone(), b"2")]).expect("write");
        assert_eq!(
            fs::read(&a).expect("a"),
            b"1",
            "an existing file is replaced"
        );
        assert_eq!(fs::read(&b).expect("b"), b"2");
        for sub in ["ab", "cd"] {
            let names: Vec<_> = fs::read_dir(dir.path().join(sub))
                .expect("list")
                .map(|e| e.expect("entry").file_name())
                .collect();
            assert_eq!(
                names.len(),
                1,
                "{sub}: only the target may remain: {names:?}"
            );
        }
    }

    #[test]
    fn a_failed_atomic_write_many_leaves_no_temp_files_behind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let good = dir.path().join("good");
        // A directory in the way: its rename fails after every temp was written.
        let blocked = dir.path().join("blocked");
        fs::create_dir_all(blocked.join("child")).expect("mkdir");
        let err = atomic_write_many(dir.path(), &[(good.clone(), b"1"), (blocked, b"2")])
            .expect_err("a directory cannot be replaced by a file");
        assert!(err.to_string().contains("blocked"), "{err}");
        let stray: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
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
