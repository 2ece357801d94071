//! The engine's one error type. Every variant carries the context a user needs to act (the path,
//! and the line where there is one); `kind()` is what adapters (CLI exit codes, the UI) branch on,
//! never the message text.

use std::path::{Path, PathBuf};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file-system operation failed on `path`.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Input read from `path` could not be understood.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// A request the engine refuses: unknown type, empty description, bad name, …
    #[error("{0}")]
    InvalidInput(String),
    /// A path that resolves outside the directory it is confined to.
    #[error("{}: outside {}", path.display(), root.display())]
    PathDenied { path: PathBuf, root: PathBuf },
    /// The file is not there.
    #[error("{}: not found", .0.display())]
    NotFound(PathBuf),
    /// The file changed on disk since the caller read it; nothing was written.
    #[error("{}: changed on disk since it was read; not overwritten", .0.display())]
    Conflict(PathBuf),
    /// A language-model provider failed (HTTP, protocol, or the model's answer).
    #[error("{0}")]
    Llm(String),
    /// The job was cancelled by its caller.
    #[error("cancelled")]
    Cancelled,
    /// Today's model calls have used the daily token budget (`[budget] daily_tokens`): no model
    /// call is made until tomorrow (local time).
    #[error(
        "the daily token budget is reached: {spent} of {limit} tokens used today \
         ([budget] daily_tokens in config.toml); model work resumes tomorrow"
    )]
    BudgetReached { spent: u64, limit: u64 },
}

/// The stable classification of an [`Error`], for adapters to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
    Budget,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } => ErrorKind::Io,
            Error::Parse { .. } => ErrorKind::Parse,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::PathDenied { .. } => ErrorKind::PathDenied,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Llm(_) => ErrorKind::Llm,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::BudgetReached { .. } => ErrorKind::Budget,
        }
    }

    /// Wraps an I/O error with its path; a missing file becomes [`Error::NotFound`].
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Error {
        let path = path.as_ref().to_path_buf();
        if source.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound(path)
        } else {
            Error::Io { path, source }
        }
    }

    pub fn parse(path: impl AsRef<Path>, line: Option<usize>, message: impl Into<String>) -> Error {
        Error::Parse {
            path: path.as_ref().to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// `result.at(path)?` attaches the path to an I/O error.
pub trait IoResultExt<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoResultExt<T> for std::io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}
