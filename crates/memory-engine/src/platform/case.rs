//! Case-insensitive volumes (APFS's default, NTFS, ext4 `casefold` directories): there `Foo.md`
//! and `foo.md` are one file. Engram compares file keys byte for byte everywhere, so each place
//! a *new* name enters (the same places as [`super::names`]) asks here first:
//!
//! - [`new_key_on_disk`]: a new key that differs only in case from an existing file or folder is
//!   refused on a case-sensitive volume (it would be a second file, which a Mac or Windows
//!   checkout folds into one), and on a case-insensitive one is the existing file, spelled as
//!   on disk (so an index line for `Foo.md` is not added again as `foo.md`).
//! - [`CaseIndex`]: keys from elsewhere (a team or sync remote, a local tree) grouped by their
//!   folded form, so two that differ only in case are found in one pass.
//! - [`folds_case`]: whether a directory's volume folds case, probed once per directory per
//!   process with a uniquely named file that is removed again.
//!
//! Folding is Unicode lower-casing, then the decomposed normal form (NFD) ([`fold`]): APFS and
//! ext4's `casefold` directories also take a composed "é" and an "e" followed by a combining
//! accent for one letter, so `Café.md` typed on one machine and on another can be one file on a
//! Mac (NTFS keeps them apart; folding them there too is the safe side). The file systems' own
//! tables still differ at the edges (NTFS's upcase table, full case folding such as "ß" and
//! "ss", Turkish dotless i): a name they would fold and this does not is not caught. Existing
//! files are never refused for reading.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};

/// The form two names share when a case-insensitive volume takes them for one.
pub fn fold(name: &str) -> String {
    name.to_lowercase().nfd().collect()
}

/// How two names of one [`fold`]ed form differ, for messages: "only in case", "only in how an
/// accent is encoded" (a composed "é" against "e" and a combining accent: the same name to a
/// person), or both.
pub fn how_twins_differ(name: &str, twin: &str) -> &'static str {
    let decomposed = |s: &str| s.nfd().collect::<String>();
    if decomposed(name) == decomposed(twin) {
        "only in how an accent is encoded (Unicode normalisation)"
    } else if name.to_lowercase() == twin.to_lowercase() {
        "only in case"
    } else {
        "only in case and in how an accent is encoded"
    }
}

/// Keys grouped by their folded form: finds, for a key, another key that differs from it only
/// in case.
#[derive(Debug, Default)]
pub struct CaseIndex {
    groups: HashMap<String, Vec<String>>,
}

impl CaseIndex {
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> CaseIndex {
        let mut groups: HashMap<String, Vec<String>> = HashMap::new();
        for key in keys {
            let group = groups.entry(fold(key)).or_default();
            if !group.iter().any(|k| k == key) {
                group.push(key.to_owned());
            }
        }
        CaseIndex { groups }
    }

    /// Whether `key` itself, byte for byte, is held here.
    pub fn holds(&self, key: &str) -> bool {
        self.groups
            .get(&fold(key))
            .is_some_and(|group| group.iter().any(|k| k == key))
    }

    /// A key held here that is not `key` byte for byte but is one file with it on a
    /// case-insensitive volume.
    pub fn twin(&self, key: &str) -> Option<&str> {
        self.groups
            .get(&fold(key))?
            .iter()
            .find(|k| *k != key)
            .map(String::as_str)
    }
}

/// `key` (relative to `root`, `/`-separated) as spelled on disk, when some part of it exists
/// under another spelling that differs only in case (`None`: every existing part is spelled as
/// given, or nothing of it exists). Each part is looked up in its directory's listing, so the
/// answer is the same on case-sensitive and case-insensitive volumes; a part spelled exactly
/// is preferred over a case twin (a case-sensitive volume can hold both).
pub fn spelling_on_disk(root: &Path, key: &str) -> io::Result<Option<String>> {
    let parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
    let mut spelled = Vec::with_capacity(parts.len());
    let mut dir = root.to_path_buf();
    let mut differs = false;
    for (i, part) in parts.iter().enumerate() {
        let names = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => Vec::new(),
            Err(e) => return Err(e),
        };
        let on_disk = if names.iter().any(|n| n == part) {
            Some(part.to_string())
        } else {
            let folded = fold(part);
            names.into_iter().find(|n| fold(n) == folded)
        };
        match on_disk {
            Some(name) => {
                differs |= name != *part;
                dir.push(&name);
                spelled.push(name);
            }
            None => {
                spelled.extend(parts[i..].iter().map(|p| p.to_string()));
                break;
            }
        }
    }
    Ok(differs.then(|| spelled.join("/")))
}

/// What a new file at `key` under `root` is to be called: `key` itself when nothing on disk
/// differs from it only in case; on a case-insensitive volume the existing file's own spelling
/// (it *is* that file there); on a case-sensitive one an error naming both (a second file, which
/// a case-insensitive checkout of the same directory would fold into the first). When the
/// volume cannot be probed (a directory Engram may not write), it is refused: the safe answer.
pub fn new_key_on_disk(root: &Path, key: &str) -> Result<String> {
    let on_disk = spelling_on_disk(root, key).map_err(|e| Error::io(root, e))?;
    let Some(on_disk) = on_disk else {
        return Ok(key.to_owned());
    };
    let folding_dir = first_differing_parent(root, key, &on_disk);
    if folds_case(&folding_dir).unwrap_or(false) {
        return Ok(on_disk);
    }
    Err(case_twin_refused(key, &on_disk))
}

/// The error for a new name that differs only in case from an existing one.
pub fn case_twin_refused(key: &str, existing: &str) -> Error {
    Error::InvalidInput(format!(
        "{key:?} differs {} from the existing {existing:?}: on a case-insensitive \
         volume (macOS, Windows) they are one file, so Engram does not create a second; use \
         {existing:?} or another name",
        how_twins_differ(key, existing)
    ))
}

/// The directory holding the first part where `key` and `on_disk` differ.
fn first_differing_parent(root: &Path, key: &str, on_disk: &str) -> PathBuf {
    let mut dir = root.to_path_buf();
    for (given, spelled) in key
        .split('/')
        .filter(|p| !p.is_empty())
        .zip(on_disk.split('/'))
    {
        if given != spelled {
            break;
        }
        dir.push(spelled);
    }
    dir
}

/// Whether names in `dir` are compared without case (`dir` must exist). Probed by creating a
/// uniquely named empty file and looking it up under its upper-case name, then removing it;
/// the answer is kept per directory for the life of the process (ext4 folds case per
/// directory, so one answer per volume would not do).
pub fn folds_case(dir: &Path) -> io::Result<bool> {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let dir = super::fs::canonicalize(dir)?;
    let known = KNOWN.get_or_init(Default::default);
    if let Some(&folds) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&dir) {
        return Ok(folds);
    }
    let (probe, name) = loop {
        // Named as an atomic write's temp file, so one left by a killed process is found by
        // lint and removed by fix like theirs (`disk::stray_temp_files`).
        let name = format!(
            ".case-probe.engram-{}-{}.tmp",
            std::process::id(),
            PROBES.fetch_add(1, Ordering::Relaxed)
        );
        let probe = dir.join(&name);
        match OpenOptions::new().write(true).create_new(true).open(&probe) {
            Ok(_) => break (probe, name),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    // Nobody else names a file `.CASE-PROBE.ENGRAM-<pid>-<n>.TMP`: found, it is the probe.
    let folds = match fs::symlink_metadata(dir.join(name.to_uppercase())) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    };
    let removed = fs::remove_file(&probe);
    let folds = folds?;
    removed?;
    known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(dir, folds);
    Ok(folds)
}

#[cfg(any(test, feature = "test-support"))]
pub mod fat;
#[cfg(test)]
mod tests;
