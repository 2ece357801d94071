//! A snapshot of the process environment the engine reads (`CLAUDE_CONFIG_DIR`, `HOME`, …).
//! The engine never calls `std::env::var` itself: tests build an [`Environment`] by hand, so they
//! can run in parallel without mutating the process's environment. Also here: the facts of the
//! platform the engine starts from (where managed settings come from, paths in NFC).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

pub use crate::platform::registry::PolicyHive;
use crate::platform::Os;

#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: BTreeMap<String, String>,
}

impl Environment {
    /// Every variable of the running process that is valid Unicode.
    pub fn from_process() -> Self {
        Environment {
            vars: std::env::vars().collect(),
        }
    }

    /// An empty environment: nothing set, not even `HOME`.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Returns a copy with `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(key.into(), value.into());
        self
    }

    /// Returns a copy without `key`.
    pub fn without(mut self, key: &str) -> Self {
        self.vars.remove(key);
        self
    }

    /// The variable's value, treating an empty value as unset (as Claude Code does).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The user's home directory: `HOME`, else `USERPROFILE` (the other way round on Windows:
    /// see [`crate::platform::dirs::home_dir`]).
    pub fn home_dir(&self) -> Option<PathBuf> {
        crate::platform::dirs::home_dir(|key| self.get(key))
    }
}
/// Where the managed (policy) settings file lives on `os`.
fn managed_settings_file(os: Os) -> PathBuf {
    match os {
        Os::Mac => PathBuf::from("/Library/Application Support/ClaudeCode/managed-settings.json"),
        Os::Windows => PathBuf::from(r"C:\Program Files\ClaudeCode\managed-settings.json"),
        Os::Unix => PathBuf::from("/etc/claude-code/managed-settings.json"),
    }
}

/// One place Claude Code takes its managed (policy) settings from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagedSource {
    /// A `managed-settings.json` file.
    File(PathBuf),
    /// A macOS managed-preferences plist of the `com.anthropic.claudecode` domain (MDM), whose
    /// top-level dictionary holds the settings keys.
    Plist(PathBuf),
    /// The `Settings` value (a JSON string) of a Windows policy key (Group Policy, Intune).
    Registry(PolicyHive),
}

/// The macOS preference domain an MDM profile sets for Claude Code.
pub const MANAGED_PREFERENCES_DOMAIN: &str = "com.anthropic.claudecode";

/// Claude Code's managed-settings sources on `os`, highest priority first. Claude Code uses the
/// first of them that holds any settings and ignores the rest ("first source wins"; its order:
/// server-managed, then HKLM or the plists, then `managed-settings.json`, then HKCU). Sources:
/// code.claude.com/docs/en/managed-settings ("how Claude Code combines managed sources") and
/// Claude Code's `utils/settings/mdm/settings.ts` and `constants.ts` (the per-user plist before the
/// device one, only under `/Library/Managed Preferences`, never the user-writable
/// `~/Library/Preferences`). Server-managed settings (fetched from claude.ai) are not read by
/// Engram. `user` is the login name (`USER`), for the per-user plist.
pub fn managed_settings_sources(os: Os, user: Option<&str>) -> Vec<ManagedSource> {
    let file = ManagedSource::File(managed_settings_file(os));
    match os {
        Os::Mac => {
            let managed = Path::new("/Library/Managed Preferences");
            let plist = format!("{MANAGED_PREFERENCES_DOMAIN}.plist");
            // A name with a separator would leave the managed-preferences dir: not a user's.
            let per_user = user
                .filter(|u| !u.is_empty() && !u.contains(['/', '\\']) && *u != "." && *u != "..")
                .map(|u| ManagedSource::Plist(managed.join(u).join(&plist)));
            per_user
                .into_iter()
                .chain([ManagedSource::Plist(managed.join(&plist)), file])
                .collect()
        }
        Os::Windows => vec![
            ManagedSource::Registry(PolicyHive::Machine),
            file,
            ManagedSource::Registry(PolicyHive::User),
        ],
        Os::Unix => vec![file],
    }
}

/// The managed-settings sources of the running system (see [`managed_settings_sources`]).
pub fn default_managed_settings_sources(env: &Environment) -> Vec<ManagedSource> {
    managed_settings_sources(Os::CURRENT, env.get("USER"))
}

/// The path in Unicode NFC; a path that is not valid Unicode is returned unchanged.
pub fn nfc_path(path: &Path) -> PathBuf {
    match path.to_str() {
        Some(text) => PathBuf::from(text.nfc().collect::<String>()),
        None => path.to_path_buf(),
    }
}
/// Whether `pid` is a live process; PID ≤ 1 counts as dead. See [`crate::platform::process::alive`].
pub fn pid_alive(pid: u32) -> bool {
    crate::platform::process::alive(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> ManagedSource {
        ManagedSource::File(PathBuf::from(path))
    }

    fn plist(path: &str) -> ManagedSource {
        ManagedSource::Plist(PathBuf::from(path))
    }

    #[test]
    fn managed_sources_follow_claude_codes_order_on_each_os() {
        assert_eq!(
            managed_settings_sources(Os::Unix, Some("alice")),
            vec![file("/etc/claude-code/managed-settings.json")]
        );
        assert_eq!(
            managed_settings_sources(Os::Mac, Some("alice")),
            vec![
                plist("/Library/Managed Preferences/alice/com.anthropic.claudecode.plist"),
                plist("/Library/Managed Preferences/com.anthropic.claudecode.plist"),
                file("/Library/Application Support/ClaudeCode/managed-settings.json"),
            ]
        );
        assert_eq!(
            managed_settings_sources(Os::Windows, Some("alice")),
            vec![
                ManagedSource::Registry(PolicyHive::Machine),
                file(r"C:\Program Files\ClaudeCode\managed-settings.json"),
                ManagedSource::Registry(PolicyHive::User),
            ]
        );
    }

    #[test]
    fn a_user_name_that_is_not_one_adds_no_per_user_profile() {
        for user in [None, Some(""), Some(".."), Some("../etc"), Some(r"a\b")] {
            assert_eq!(
                managed_settings_sources(Os::Mac, user),
                vec![
                    plist("/Library/Managed Preferences/com.anthropic.claudecode.plist"),
                    file("/Library/Application Support/ClaudeCode/managed-settings.json"),
                ],
                "{user:?}"
            );
        }
    }
}
