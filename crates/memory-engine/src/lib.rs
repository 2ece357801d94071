//! Engram's memory engine: every rule of Claude Code's file-based memory system (`FORMATS.md`)
//! and all of its I/O. The CLI and the desktop shell are thin adapters over [`Engine`]; nothing
//! else parses frontmatter, writes memory files or talks to a model. This crate never depends on
//! Tauri.

pub mod clock;
pub mod disk;
pub mod engine;
pub mod environment;
pub mod error;

pub use clock::{Clock, FixedClock, SystemClock};
pub use engine::{Engine, EngineBuilder};
pub use environment::Environment;
pub use error::{Error, ErrorKind, Result};
