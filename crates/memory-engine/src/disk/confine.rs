//! Path confinement: a file key from anywhere (a change set, a model's tool call, the window)
//! becomes a path under its root only if it is a plain relative key and, with symlinks followed,
//! still lands inside the root. Every check fails closed.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Checks a file key (relative, `/`-separated, no `.`/`..`, no backslash, no NUL, not empty) and
/// returns `root/key`. Does not touch the disk.
pub fn check_file_key(root: &Path, file: &str) -> Result<PathBuf> {
    if file.is_empty() {
        return Err(Error::InvalidInput("empty file name".to_owned()));
    }
    if file.contains('\0') {
        return Err(Error::InvalidInput(format!(
            "{}: file name contains NUL",
            file.escape_debug()
        )));
    }
    if file.contains('\\') {
        return Err(Error::InvalidInput(format!(
            "{file}: use `/` to separate directories, not `\\`"
        )));
    }
    let denied = || Error::PathDenied {
        path: PathBuf::from(file),
        root: root.to_path_buf(),
    };
    if file.starts_with('/') {
        return Err(denied());
    }
    for part in file.split('/') {
        match part {
            ".." => return Err(denied()),
            "" | "." => {
                return Err(Error::InvalidInput(format!(
                    "{file}: not a plain relative path (empty or `.` component)"
                )))
            }
            _ => {}
        }
    }
    // `C:x` on Windows is relative to a drive, not to the root: refuse anything with a prefix.
    if Path::new(file)
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(denied());
    }
    Ok(root.join(file))
}

/// [`check_file_key`], then follows symlinks: the deepest existing ancestor of the target (the
/// target itself if it exists) must resolve inside the resolved root. A root that does not exist
/// yet cannot hold symlinks, so only the lexical check applies.
pub fn confined_path(root: &Path, file: &str) -> Result<PathBuf> {
    let path = check_file_key(root, file)?;
    let Ok(real_root) = crate::platform::fs::canonicalize(root) else {
        return Ok(path);
    };
    let mut existing = path.as_path();
    loop {
        match crate::platform::fs::canonicalize(existing) {
            Ok(real) => {
                if real.starts_with(&real_root) {
                    return Ok(path);
                }
                return Err(Error::PathDenied {
                    path: path.clone(),
                    root: root.to_path_buf(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => match existing.parent() {
                Some(parent) if parent.starts_with(root) => existing = parent,
                _ => return Ok(path),
            },
            Err(e) => return Err(Error::io(existing, e)),
        }
    }
}

/// `path` made absolute with symlinks resolved, as far as it exists: the deepest existing ancestor
/// is canonicalized and the rest appended. So the same dir always maps to the same key, whether it
/// was named through a symlink, relatively, or before it was created.
pub fn resolved_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = crate::platform::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// Whether an I/O error is "too many levels of symbolic links" (a loop).
pub fn is_symlink_loop(error: &io::Error) -> bool {
    crate::platform::fs::is_symlink_loop(error)
}
