//! Long work — a recall preview, a dream, an extraction, a team sync — runs as a job:
//! `run(options, cancel, on_event) -> Result<Outcome>`, where `cancel` is the job's
//! [`CancellationToken`] (checked between steps and raced against every model call) and
//! `on_event` receives the job's typed progress events.
//!
//! [`Jobs`] keeps one slot per [`JobKind`] for the whole engine (every clone shares it): starting
//! a job of a kind cancels the one of that kind still running, so a second recall preview
//! replaces the first and two dreams never run in one process. A [`JobHandle`] cancels its job
//! when dropped — a command whose caller went away stops its work — and frees its slot.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
pub use tokio_util::sync::CancellationToken;

/// A fresh id: `prefix` + 8 of `[0-9a-z]` (a dream task `d…`, a change set `c…`), from the time,
/// the process and a counter, so two processes or two calls never collide in practice.
pub fn fresh_id(prefix: char) -> String {
    use sha2::{Digest, Sha256};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{nanos}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let digest = Sha256::digest(seed.as_bytes());
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut id = String::with_capacity(9);
    id.push(prefix);
    id.extend(
        digest
            .iter()
            .take(8)
            .map(|b| DIGITS[usize::from(*b) % 36] as char),
    );
    id
}

/// The kinds of long work; one of each runs at a time.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum JobKind {
    /// The app's recall preview.
    Recall,
    /// A consolidation run.
    Dream,
    /// Memory extraction from a session.
    Extract,
    /// Team memory pull or push.
    TeamSync,
    /// A model proposing merges of an agent's updated snapshot.
    SnapshotMerge,
    /// Downloading the local embedding model.
    ModelFetch,
    /// Embedding every memory of every project.
    Embed,
}

/// The running job of each kind. Cheap to clone; clones share the slots.
#[derive(Debug, Clone, Default)]
pub struct Jobs {
    inner: Arc<Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    running: Mutex<HashMap<JobKind, (u64, CancellationToken)>>,
    next_id: AtomicU64,
}

impl Jobs {
    /// Starts a job of `kind`, cancelling the one of that kind still running.
    pub fn start(&self, kind: JobKind) -> JobHandle {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let previous = self.slots().insert(kind, (id, token.clone()));
        if let Some((_, previous)) = previous {
            previous.cancel();
        }
        JobHandle {
            kind,
            id,
            token,
            jobs: self.clone(),
        }
    }

    /// Cancels the running job of `kind`; returns whether there was one.
    pub fn cancel(&self, kind: JobKind) -> bool {
        match self.slots().remove(&kind) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Whether a job of `kind` is running.
    pub fn is_running(&self, kind: JobKind) -> bool {
        self.slots().contains_key(&kind)
    }

    /// A panic while the map was held cannot leave it half-updated (entries are inserted and
    /// removed whole), so a poisoned lock is used as is.
    fn slots(&self) -> MutexGuard<'_, HashMap<JobKind, (u64, CancellationToken)>> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running job: its cancellation token, cancelled when the handle is dropped.
#[derive(Debug)]
pub struct JobHandle {
    kind: JobKind,
    id: u64,
    token: CancellationToken,
    jobs: Jobs,
}

impl JobHandle {
    pub fn kind(&self) -> JobKind {
        self.kind
    }

    /// The token to pass to the job's work.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

impl Drop for JobHandle {
    fn drop(&mut self) {
        self.token.cancel();
        let mut slots = self.jobs.slots();
        // A later job of the same kind may hold the slot now; it is not ours to free.
        if slots.get(&self.kind).is_some_and(|(id, _)| *id == self.id) {
            slots.remove(&self.kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_job_of_a_kind_cancels_the_running_one_and_leaves_other_kinds_alone() {
        let jobs = Jobs::default();
        let first = jobs.start(JobKind::Recall);
        let dream = jobs.start(JobKind::Dream);
        let second = jobs.start(JobKind::Recall);
        assert!(first.is_cancelled(), "replaced by the second preview");
        assert!(!second.is_cancelled());
        assert!(!dream.is_cancelled(), "another kind is untouched");
        drop(first);
        assert!(
            jobs.is_running(JobKind::Recall),
            "dropping the replaced job must not free the slot the second one holds"
        );
        assert!(jobs.cancel(JobKind::Recall));
        assert!(second.is_cancelled());
        assert!(!jobs.is_running(JobKind::Recall));
        assert!(!jobs.cancel(JobKind::Recall), "nothing left to cancel");
    }

    #[test]
    fn dropping_a_handle_cancels_its_job_and_frees_the_slot() {
        let jobs = Jobs::default();
        let handle = jobs.start(JobKind::Extract);
        let token = handle.token().clone();
        assert!(jobs.is_running(JobKind::Extract));
        drop(handle);
        assert!(token.is_cancelled(), "cancel on drop");
        assert!(!jobs.is_running(JobKind::Extract));
    }

    #[test]
    fn clones_share_the_slots() {
        let jobs = Jobs::default();
        let handle = jobs.clone().start(JobKind::TeamSync);
        assert!(jobs.cancel(JobKind::TeamSync));
        assert!(handle.is_cancelled());
    }
}
