//! Engram's memory engine: every rule of Claude Code's file-based memory system (`FORMATS.md`)
//! and all of its I/O. The CLI and the desktop shell are thin adapters over [`Engine`]; nothing
//! else parses frontmatter, writes memory files or talks to a model. This crate never depends on
//! Tauri.

pub mod actor;
pub mod agent_loop;
pub mod agent_memory;
pub mod bm25;
pub mod changeset;
pub mod clock;
pub mod config;
pub mod corpus;
pub mod demo;
pub mod diff;
pub mod disk;
pub mod dream;
pub mod editor;
pub mod embed;
pub mod engine;
pub mod environment;
pub mod error;
pub mod extract;
pub mod fix;
pub mod frontmatter;
pub mod git_repo;
pub mod history;
pub mod hooks;
pub mod index;
pub mod job;
pub mod json_edit;
pub mod json_file;
pub mod lint;
pub mod llm;
pub mod logs;
pub mod mcp;
pub mod memdir;
pub mod memory_type;
pub mod paths;
pub mod platform;
pub mod problem_log;
pub mod projects;
pub mod recall;
pub mod redact;
pub mod render;
pub mod scan;
pub mod search;
pub mod secrets;
pub mod session_memory;
pub mod session_search;
pub mod settings;
pub mod staging;
pub mod staleness;
pub mod stranded;
pub mod sync;
pub mod team;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub(crate) mod text_cache;
pub mod transcript;
pub mod watch;

pub use actor::Actor;
pub use changeset::{
    AppliedChange, ApplyReport, ApplyStatus, ChangeKind, ChangeSet, ConflictDetails, FileChange,
};
pub use clock::{Clock, FixedClock, SystemClock};
pub use editor::{ConflictResolution, EditOutcome, MemoryForm};
pub use engine::{Engine, EngineBuilder};
pub use environment::Environment;
pub use error::{Error, ErrorKind, Result};
pub use fix::{FixPlan, FixTarget, SkippedFix};
pub use history::{Version, VersionChange};
pub use index::{IndexEntry, LoadedIndex};
pub use job::{JobHandle, JobKind, Jobs};
pub use lint::{Finding, LintReport, Severity};
pub use memdir::{
    ForgetOutcome, Memory, MemoryDir, RememberAction, RememberOutcome, RememberRequest,
};
pub use memory_type::MemoryType;
pub use paths::{MemoryDirResolution, MemoryDirSource};
pub use projects::{EmbedAllProgress, EmbedAllReport, LintCounts, ProjectSummary};
pub use scan::MemoryHeader;
pub use search::{SearchHit, SearchOptions};
pub use secrets::SecretMatch;
pub use staleness::iso_time;
pub use watch::{MemoryDirEvent, MemoryDirEventKind, MemoryDirWatch, WatchOptions};
