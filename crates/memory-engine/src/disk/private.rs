//! Engram's own data dir is private to the person running it, as Claude Code keeps session
//! memory (dir 0700, files 0600): it holds every version of every memory (history), staged
//! contents, settings backups — and so any secret they carried.
//!
//! The rule is keyed on paths and lives here, so every write that goes through `disk` follows
//! it without knowing: under a registered private root (the engine registers its data dir),
//! directories are created 0700 and new files 0600, and an existing root that belongs to this
//! user but is open to others is tightened to 0700 the first time this process creates
//! anything in it. Deliberately nothing else: a file that exists keeps its mode, and memory dirs
//! — never under a private root — keep what Claude Code gives them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::platform;

/// A private root, and whether this process has made sure of its own mode yet.
struct Root {
    path: PathBuf,
    checked: bool,
}

/// Every private root registered in this process (one per data dir in use: a process normally
/// has one; tests have many).
static ROOTS: Mutex<Vec<Root>> = Mutex::new(Vec::new());

/// The mode of a directory created under a private root.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// The mode of a file created under a private root.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Makes `root` private (see the module docs). Touches nothing on disk: the root is created or
/// tightened when something is first created in it.
pub fn register_private_root(root: &Path) {
    let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    if !roots.iter().any(|r| r.path == root) {
        roots.push(Root {
            path: root.to_path_buf(),
            checked: false,
        });
    }
}

/// The private root `path` lies in (lexically, as the paths Engram builds from its data dir
/// do), if any.
fn private_root_of(path: &Path) -> Option<PathBuf> {
    let roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    roots
        .iter()
        .filter(|r| path.starts_with(&r.path))
        .max_by_key(|r| r.path.as_os_str().len())
        .map(|r| r.path.clone())
}

/// Whether a new file at `path` is private (0600).
pub fn is_private(path: &Path) -> bool {
    private_root_of(path).is_some()
}

/// `options` set to create a file at `path` with the mode the rule gives it: 0600 under a
/// private root, the default elsewhere.
pub fn with_mode_for<'a>(options: &'a mut fs::OpenOptions, path: &Path) -> &'a mut fs::OpenOptions {
    if is_private(path) {
        platform::fs::create_mode(options, PRIVATE_FILE_MODE);
    }
    options
}

/// Opens (creating it and its folder, never truncating) the file an advisory lock is taken on,
/// with the mode [`with_mode_for`] gives it. The caller locks it; dropping the file unlocks.
pub fn open_lock_file(path: &Path) -> io::Result<fs::File> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    with_mode_for(
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        path,
    )
    .open(path)
}

/// [`fs::create_dir_all`], except that under a private root every directory it creates (the
/// root included) is 0700, and the root is made sure of first (see the module docs).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let Some(root) = private_root_of(dir) else {
        return fs::create_dir_all(dir);
    };
    make_root_private(&root)?;
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    platform::fs::dir_create_mode(&mut builder, PRIVATE_DIR_MODE);
    builder.create(dir)
}

/// Creates `root` 0700 (its parents as usual), or — once per process — tightens an existing
/// one that belongs to this user and lets others in.
fn make_root_private(root: &Path) -> io::Result<()> {
    {
        let roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
        if roots.iter().any(|r| r.path == root && r.checked) {
            return Ok(());
        }
    }
    match fs::metadata(root) {
        Ok(meta) => tighten_if_ours(root, &meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = root.parent() {
                fs::create_dir_all(parent)?;
            }
            let mut builder = fs::DirBuilder::new();
            platform::fs::dir_create_mode(&mut builder, PRIVATE_DIR_MODE);
            match builder.create(root) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        Err(e) => return Err(e),
    }
    let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(r) = roots.iter_mut().find(|r| r.path == root) {
        r.checked = true;
    }
    Ok(())
}

/// Tightens `root` to 0700 when it is this user's and open to others (nothing to do where the OS
/// has no modes: see [`platform::fs::set_mode`]).
fn tighten_if_ours(root: &Path, meta: &fs::Metadata) -> io::Result<()> {
    if meta.is_dir() && platform::fs::ours_and_open_to_others(meta) {
        platform::fs::set_mode(root, PRIVATE_DIR_MODE)?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn under_a_private_root_dirs_are_0700_and_new_files_0600_and_elsewhere_nothing_changes() {
        let temp = tempfile::tempdir().expect("temp");
        let root = temp.path().join("data/engram");
        register_private_root(&root);
        let deep = root.join("history/blobs");
        create_dir_all(&deep).expect("create");
        for dir in [&root, &root.join("history"), &deep] {
            assert_eq!(mode(dir), 0o700, "{}", dir.display());
        }
        let file = deep.join("x");
        with_mode_for(fs::OpenOptions::new().write(true).create(true), &file)
            .open(&file)
            .expect("create");
        assert_eq!(mode(&file), 0o600);

        let memory = temp.path().join("memory/team");
        create_dir_all(&memory).expect("create");
        assert_ne!(mode(&memory), 0o700, "a memory dir keeps the default");
        let note = memory.join("a.md");
        with_mode_for(fs::OpenOptions::new().write(true).create(true), &note)
            .open(&note)
            .expect("create");
        assert_ne!(mode(&note), 0o600);
    }

    #[test]
    fn an_existing_root_of_ours_open_to_others_is_tightened() {
        let temp = tempfile::tempdir().expect("temp");
        let root = temp.path().join("engram");
        fs::create_dir(&root).expect("mkdir");
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).expect("chmod");
        let existing = root.join("config.toml");
        fs::write(&existing, "").expect("file");
        fs::set_permissions(&existing, fs::Permissions::from_mode(0o644)).expect("chmod");
        register_private_root(&root);
        create_dir_all(&root.join("staging")).expect("create");
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&existing), 0o644, "a file that exists keeps its mode");
    }
}
