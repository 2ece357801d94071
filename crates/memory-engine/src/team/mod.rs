//! Team memory (`<memory dir>/team/`, `FORMATS.md` §9): files that come from teammates, so every
//! key (a relative path from someone else's machine or from the remote) is hostile until
//! [`validate_key`] says otherwise, and nothing is written without passing it, the size cap and
//! the secret scan. Checks fail closed and name the rule that refused.

pub mod sync;

use std::fmt;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use crate::disk;
use crate::error::{Error, Result};
use crate::platform::names::{windows_key_rule, WindowsNameRule};

/// The most a team memory file may hold.
pub const MAX_TEAM_FILE_BYTES: usize = 250_000;
/// Rounds of URL-decoding and NFKC before a key that keeps changing is refused outright.
const MAX_DECODE_ROUNDS: usize = 8;
/// The longest file or folder name (Linux's `NAME_MAX`, in bytes): a longer one is no file.
const MAX_NAME_BYTES: usize = 255;
/// The longest key (Linux's `PATH_MAX`, in bytes).
const MAX_KEY_BYTES: usize = 4096;

/// The §9 rule that refused a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyRule {
    Empty,
    Nul,
    UrlEncodedTraversal,
    NfkcTraversal,
    BadEncoding,
    TooLong,
    NotAFileName,
    Backslash,
    Absolute,
    OutsideTeam,
    SymlinkOutsideTeam,
    DanglingSymlink,
    /// A name in it breaks one of Windows' rules ([`crate::platform::names`]).
    WindowsReservedCharacter,
    WindowsControlCharacter,
    WindowsDeviceName,
    WindowsTrailingDotOrSpace,
}

impl From<WindowsNameRule> for KeyRule {
    fn from(rule: WindowsNameRule) -> KeyRule {
        match rule {
            WindowsNameRule::ReservedCharacter => KeyRule::WindowsReservedCharacter,
            WindowsNameRule::ControlCharacter => KeyRule::WindowsControlCharacter,
            WindowsNameRule::DeviceName => KeyRule::WindowsDeviceName,
            WindowsNameRule::TrailingDotOrSpace => KeyRule::WindowsTrailingDotOrSpace,
        }
    }
}

impl KeyRule {
    pub fn describe(self) -> &'static str {
        match self {
            KeyRule::Empty => "empty key",
            KeyRule::Nul => "contains a NUL byte",
            KeyRule::UrlEncodedTraversal => "URL-decodes to a path with `..` or `/`",
            KeyRule::NfkcTraversal => {
                "Unicode NFKC normalisation turns it into a path with `..`, `/`, `\\` or NUL"
            }
            KeyRule::BadEncoding => {
                "URL-decodes to bytes that are not UTF-8 (an overlong or broken encoding)"
            }
            KeyRule::TooLong => "a name in it is over 255 bytes, or the whole key over 4096",
            KeyRule::NotAFileName => "ends in `/`, `.` or `..`: no file has that name",
            KeyRule::Backslash => "contains a backslash",
            KeyRule::Absolute => "is an absolute path",
            KeyRule::OutsideTeam => "resolves outside team/",
            KeyRule::SymlinkOutsideTeam => "a symlink on its path leads outside team/",
            KeyRule::DanglingSymlink => "a symlink on its path is dangling or loops",
            KeyRule::WindowsReservedCharacter => WindowsNameRule::ReservedCharacter.describe(),
            KeyRule::WindowsControlCharacter => WindowsNameRule::ControlCharacter.describe(),
            KeyRule::WindowsDeviceName => WindowsNameRule::DeviceName.describe(),
            KeyRule::WindowsTrailingDotOrSpace => WindowsNameRule::TrailingDotOrSpace.describe(),
        }
    }
}

/// A key [`validate_key`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRefused {
    pub key: String,
    pub rule: KeyRule,
}

impl fmt::Display for KeyRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "team key {:?} refused ({}): {}",
            self.key,
            serde_json::to_value(self.rule)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            self.rule.describe()
        )
    }
}

impl From<KeyRefused> for Error {
    fn from(refused: KeyRefused) -> Error {
        Error::InvalidInput(refused.to_string())
    }
}

/// `text` with each `%XX` escape decoded; `None` when the bytes decoded do not form UTF-8
/// (an overlong `%c0%ae` is refused, never replaced by something that looks harmless).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|b| hex(*b)),
            bytes.get(i + 2).and_then(|b| hex(*b)),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn traverses(text: &str) -> bool {
    text.contains("..") || text.contains('/')
}

/// Checks `key` against every rule of `FORMATS.md` §9 for the team dir `team_root`, and returns
/// the path it names. Fails closed: anything it cannot prove safe is refused.
pub fn validate_key(team_root: &Path, key: &str) -> std::result::Result<PathBuf, KeyRefused> {
    let refuse = |rule| KeyRefused {
        key: key.to_owned(),
        rule,
    };
    if key.is_empty() {
        return Err(refuse(KeyRule::Empty));
    }
    if key.contains('\0') {
        return Err(refuse(KeyRule::Nul));
    }
    if key.len() > MAX_KEY_BYTES || key.split('/').any(|name| name.len() > MAX_NAME_BYTES) {
        return Err(refuse(KeyRule::TooLong));
    }
    // URL-decoding and NFKC, each round both, until the text is stable: one step can make what
    // the other undoes (`％２ｅ` is `%2e` after NFKC, `%ef%bc%8e` is `．` after decoding), so
    // `%252e%252e%252f`, `％２ｅ％２ｅ％２ｆ` and `%ef%bc%8e%ef%bc%8e%ef%bc%8f` are all `../`.
    let mut settled = key.to_owned();
    let mut url_decoded = false;
    for round in 0.. {
        let decoded = percent_decode(&settled).ok_or_else(|| refuse(KeyRule::BadEncoding))?;
        url_decoded |= decoded != settled;
        let next: String = decoded.nfkc().collect();
        if next == settled {
            break;
        }
        if round == MAX_DECODE_ROUNDS {
            return Err(refuse(KeyRule::UrlEncodedTraversal));
        }
        settled = next;
    }
    if settled != key && (traverses(&settled) || settled.contains('\\') || settled.contains('\0')) {
        return Err(refuse(if url_decoded {
            KeyRule::UrlEncodedTraversal
        } else {
            KeyRule::NfkcTraversal
        }));
    }
    if key.contains('\\') {
        return Err(refuse(KeyRule::Backslash));
    }
    if key.starts_with('/') || Path::new(key).is_absolute() {
        return Err(refuse(KeyRule::Absolute));
    }
    // Lexically: `..` may not climb above team/.
    let mut depth = 0usize;
    for component in Path::new(key).components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return Err(refuse(KeyRule::OutsideTeam)),
        }
    }
    if depth == 0 {
        return Err(refuse(KeyRule::OutsideTeam));
    }
    // `notes/` or `notes/.` stays inside team/ but names a folder: nothing could be written there.
    if matches!(key.rsplit('/').next(), Some("" | "." | "..")) {
        return Err(refuse(KeyRule::NotAFileName));
    }
    // A team repository is checked out on every teammate's OS: Windows' rules hold everywhere.
    if let Some((_, rule)) = windows_key_rule(key) {
        return Err(refuse(rule.into()));
    }
    let path = crate::paths::normalize_lexically(&team_root.join(key));
    // On disk: the deepest existing ancestor (the path itself if it exists), with its symlinks
    // resolved, must stay inside the real team/.
    let real_team =
        crate::platform::fs::canonicalize(team_root).map_err(|_| refuse(KeyRule::OutsideTeam))?;
    let mut probe = path.clone();
    loop {
        match std::fs::symlink_metadata(&probe) {
            Ok(_) => {
                let real = crate::platform::fs::canonicalize(&probe)
                    .map_err(|_| refuse(KeyRule::DanglingSymlink))?;
                if !real.starts_with(&real_team) {
                    return Err(refuse(KeyRule::SymlinkOutsideTeam));
                }
                break;
            }
            Err(_) => match probe.parent() {
                Some(parent) if parent.starts_with(team_root) || parent == team_root => {
                    probe = parent.to_path_buf()
                }
                _ => return Err(refuse(KeyRule::OutsideTeam)),
            },
        }
    }
    Ok(path)
}

/// What `engram team check KEY` answers: `key` against every rule ([`validate_key`]), then
/// against the files already in `team_root`: a name differing only in case from an existing one
/// is one file on a teammate's Mac or Windows machine, so on a case-sensitive disk it is refused
/// naming both, and on a case-insensitive one it is that file (its path is returned).
pub fn check_key(team_root: &Path, key: &str) -> Result<PathBuf> {
    validate_key(team_root, key)?;
    let on_disk = crate::platform::case::new_key_on_disk(team_root, key)?;
    Ok(validate_key(team_root, &on_disk)?)
}

/// Writes a teammate's file into `team_root` — key validated, at most
/// [`MAX_TEAM_FILE_BYTES`], no secret in its content or its path — atomically; refused whole
/// otherwise.
pub fn write_team_file(team_root: &Path, key: &str, content: &str) -> Result<PathBuf> {
    let path = validate_key(team_root, key)?;
    if content.len() > MAX_TEAM_FILE_BYTES {
        return Err(Error::InvalidInput(format!(
            "team file {key:?}: {} bytes is over the {MAX_TEAM_FILE_BYTES}-byte cap",
            content.len()
        )));
    }
    if let Some(secret) = crate::secrets::scan_shared_file(key, content.as_bytes()).first() {
        return Err(Error::InvalidInput(format!(
            "team file {key:?}: {secret}; secrets never go into team memory"
        )));
    }
    if let Some(parent) = path.parent() {
        crate::disk::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        // A symlink could have appeared between the check and the write: check again.
        validate_key(team_root, key)?;
    }
    disk::atomic_write(&path, content.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod sync_tests;
#[cfg(test)]
mod tests;
