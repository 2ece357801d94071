//! The error every command returns, and its wire form: `{ "kind": "...", "message": "..." }`
//! ([`WireError`], exported to TypeScript).
//!
//! `kind` is what the UI branches on: the engine's [`memory_engine::ErrorKind`] (`notFound`,
//! `conflict`, …) or `internal` for a failure of the shell itself (a command's worker thread
//! panicked). `message` is for people: the error and every cause below it, joined with `: `, so
//! the UI can show it as is and never needs to parse it.

use serde::ser::{Serialize, Serializer};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Engine(#[from] memory_engine::Error),
    /// The blocking task running an engine call could not complete.
    #[error("background task failed")]
    Task(#[source] tauri::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a failed command is about: every [`memory_engine::ErrorKind`], plus `internal` for the
/// shell's own failures. Listed here (not re-exported) so a kind added to the engine fails to
/// compile until the UI's copy of this enum — generated from it — knows it too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    Io,
    Parse,
    InvalidInput,
    PathDenied,
    NotFound,
    Conflict,
    Llm,
    Cancelled,
    /// The daily token budget is reached: no model call until tomorrow.
    Budget,
    Internal,
}

impl From<memory_engine::ErrorKind> for ErrorKind {
    fn from(kind: memory_engine::ErrorKind) -> Self {
        use memory_engine::ErrorKind as Engine;
        match kind {
            Engine::Io => ErrorKind::Io,
            Engine::Parse => ErrorKind::Parse,
            Engine::InvalidInput => ErrorKind::InvalidInput,
            Engine::PathDenied => ErrorKind::PathDenied,
            Engine::NotFound => ErrorKind::NotFound,
            Engine::Conflict => ErrorKind::Conflict,
            Engine::Llm => ErrorKind::Llm,
            Engine::Cancelled => ErrorKind::Cancelled,
            Engine::Budget => ErrorKind::Budget,
        }
    }
}

/// A failed command as the UI receives it: [`Error`] serializes through this type, so the
/// TypeScript binding generated from it is the wire form by construction.
#[derive(Debug, serde::Serialize, ts_rs::TS)]
pub struct WireError {
    pub kind: ErrorKind,
    /// For people: the error and its causes, naming the file (and line) involved.
    pub message: String,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Engine(error) => error.kind().into(),
            Error::Task(_) => ErrorKind::Internal,
        }
    }

    /// The message with its whole cause chain. A cause already quoted by the message above it
    /// (the engine's I/O errors print their source) is not repeated.
    pub fn message(&self) -> String {
        let mut message = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            let text = error.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            cause = error.source();
        }
        message
    }
}

impl Serialize for Error {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireError {
            kind: self.kind(),
            message: self.message(),
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    #[test]
    fn engine_errors_keep_their_kind_and_path() {
        let error = Error::from(memory_engine::Error::NotFound(PathBuf::from("/m/a.md")));
        assert_eq!(
            serde_json::to_value(&error).ok(),
            Some(json!({ "kind": "notFound", "message": "/m/a.md: not found" }))
        );
    }

    #[test]
    fn the_cause_chain_is_in_the_message_once() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied by policy");
        let error = Error::from(memory_engine::Error::io("/m/MEMORY.md", io));
        let wire = serde_json::to_value(&error).unwrap_or_default();
        assert_eq!(wire["kind"], "io");
        assert_eq!(
            wire["message"], "/m/MEMORY.md: denied by policy",
            "the engine already prints its I/O cause; it must not be doubled"
        );
    }

    #[test]
    fn shell_failures_are_internal_and_name_their_cause() {
        let cause = tauri::Error::from(std::io::Error::other("worker thread panicked"));
        let wire = serde_json::to_value(Error::Task(cause)).unwrap_or_default();
        assert_eq!(wire["kind"], "internal");
        assert_eq!(
            wire["message"], "background task failed: worker thread panicked",
            "the cause below the shell's own message must reach the user"
        );
    }
}
