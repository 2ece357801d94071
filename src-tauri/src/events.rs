//! Events the shell emits to the window (lifecycle and live updates; no request/response).

use memory_engine::MemoryDirEvent;
use serde::Serialize;
use ts_rs::TS;

/// A batch of changes to the open project's memory dir made by anyone but Engram itself
/// (Claude Code, an editor, git): Engram's own writes are filtered out by the engine.
pub const MEMORY_DIR_CHANGED: &str = "memory-dir-changed";

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDirChanged {
    /// The project whose memory dir changed (its directory name).
    pub project: String,
    pub changes: Vec<MemoryDirEvent>,
}
