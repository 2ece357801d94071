//! [`DreamTask`]: the live state of one consolidation run, as Claude Code's DreamTask has it
//! (FORMATS.md §8) plus what Engram adds (tokens, elapsed time, the change set it produced).
//! Every progress event carries the whole task, so a watcher that joins late — the app opening
//! while a CLI dream runs — is never out of step.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::llm::Usage;

/// Turns kept on the task (Claude Code keeps the last 30).
pub const MAX_TURNS_KEPT: usize = 30;

/// Where a dream stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Pending,
    Running,
    Completed,
    /// Gates or the lock said no; nothing ran.
    Skipped,
    Failed,
    Killed,
}

impl TaskStatus {
    pub fn is_finished(self) -> bool {
        !matches!(self, TaskStatus::Pending | TaskStatus::Running)
    }
}

/// `starting` until the run stages its first write, then `updating`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DreamPhase {
    Starting,
    Updating,
}

/// One model turn: what it said and how many tools it called.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamTurn {
    pub text: String,
    pub tool_use_count: usize,
}

/// The live state of one dream.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamTask {
    /// `d` + 8 of `[0-9a-z]`.
    pub id: String,
    pub project: String,
    pub memory_dir: PathBuf,
    pub status: TaskStatus,
    pub phase: DreamPhase,
    /// `offline`, `anthropic` or `openai`.
    pub provider: String,
    /// The sessions the run reviews (the ones the gate counted).
    pub sessions_reviewing: Vec<String>,
    pub files_touched: Vec<String>,
    /// The last [`MAX_TURNS_KEPT`] turns.
    pub turns: Vec<DreamTurn>,
    /// The lock's mtime before this run took it (ms since the epoch; 0: there was no lock):
    /// what a kill rolls back to.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub prior_mtime: Option<i64>,
    pub tokens: Usage,
    /// ISO 8601, UTC.
    pub started_at: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
    /// The process running it.
    pub pid: u32,
    /// The staged change set it produced, if it changed anything.
    pub change_set: Option<String>,
    pub summary: Option<String>,
    pub error: Option<String>,
}

impl DreamTask {
    pub(crate) fn new(
        project: &str,
        memory_dir: PathBuf,
        provider: &str,
        started_at: String,
    ) -> Self {
        DreamTask {
            id: crate::job::fresh_id('d'),
            project: project.to_owned(),
            memory_dir,
            status: TaskStatus::Pending,
            phase: DreamPhase::Starting,
            provider: provider.to_owned(),
            sessions_reviewing: Vec::new(),
            files_touched: Vec::new(),
            turns: Vec::new(),
            prior_mtime: None,
            tokens: Usage::default(),
            started_at,
            elapsed_ms: 0,
            pid: std::process::id(),
            change_set: None,
            summary: None,
            error: None,
        }
    }

    pub(crate) fn push_turn(&mut self, turn: DreamTurn) {
        self.turns.push(turn);
        if self.turns.len() > MAX_TURNS_KEPT {
            let extra = self.turns.len() - MAX_TURNS_KEPT;
            self.turns.drain(..extra);
        }
    }

    /// Notes a staged write: the first one moves the phase to `updating`.
    pub(crate) fn touch(&mut self, file: &str) {
        self.phase = DreamPhase::Updating;
        if !self.files_touched.iter().any(|f| f == file) {
            self.files_touched.push(file.to_owned());
        }
    }
}

/// What happened, with the task as it now stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DreamEventKind {
    Started,
    Turn,
    FileTouched,
    Finished,
}

/// A progress event of a dream: what happened, and the whole task after it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamEvent {
    pub kind: DreamEventKind,
    pub task: DreamTask,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_d_and_eight_base36_characters() {
        let task = DreamTask::new("-p", PathBuf::from("/m"), "offline", String::new());
        assert_eq!(task.id.len(), 9);
        assert!(task.id.starts_with('d'));
        assert!(task.id[1..]
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
        let other = DreamTask::new("-p", PathBuf::from("/m"), "offline", String::new());
        assert_ne!(task.id, other.id);
    }

    #[test]
    fn only_the_last_thirty_turns_are_kept_and_the_first_write_moves_the_phase() {
        let mut task = DreamTask::new("-p", PathBuf::from("/m"), "offline", String::new());
        for n in 0..35 {
            task.push_turn(DreamTurn {
                text: format!("turn {n}"),
                tool_use_count: n,
            });
        }
        assert_eq!(task.turns.len(), MAX_TURNS_KEPT);
        assert_eq!(task.turns[0].text, "turn 5");
        assert_eq!(task.phase, DreamPhase::Starting);
        task.touch("a.md");
        task.touch("a.md");
        assert_eq!(task.phase, DreamPhase::Updating);
        assert_eq!(task.files_touched, vec!["a.md"]);
    }
}
