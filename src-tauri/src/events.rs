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

/// A dream finished (started from the window, or by the tray's scheduler): its final task, with
/// the change set it staged if any. The run being watched streams its steps over a `Channel`;
/// this is the lifecycle event every window sees.
pub const DREAM_FINISHED: &str = "dream-finished";

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DreamFinished {
    pub task: memory_engine::dream::DreamTask,
}
