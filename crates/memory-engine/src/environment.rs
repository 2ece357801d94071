//! A snapshot of the process environment the engine reads (`CLAUDE_CONFIG_DIR`, `HOME`, …).
//! The engine never calls `std::env::var` itself: tests build an [`Environment`] by hand, so they
//! can run in parallel without mutating the process's environment. Also here: the facts of the
//! platform the engine starts from (the managed settings file's place, paths in NFC).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

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
/// Where the managed (policy) settings file lives on this platform.
pub fn default_managed_settings_path() -> PathBuf {
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode/managed-settings.json")
    } else if cfg!(windows) {
        PathBuf::from(r"C:\Program Files\ClaudeCode\managed-settings.json")
    } else {
        PathBuf::from("/etc/claude-code/managed-settings.json")
    }
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
