//! `[sync] auto = true`: while the app runs, a push after local changes — debounced, so a burst
//! of writes (a dream applying thirty files, Claude Code saving a memory and its index) pushes
//! once, after the files stayed the same for one whole tick. Only changes made while it runs
//! count: starting the app pushes nothing. The CLI never runs this.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use super::PersonalSyncReport;
use crate::engine::Engine;
use crate::error::Result;
use crate::job::CancellationToken;

/// What the auto push has seen: the local files' fingerprint as last pushed (or found at start)
/// and as seen at the last tick.
#[derive(Debug, Default, Clone)]
pub struct AutoPush {
    pushed: Option<u64>,
    seen: Option<u64>,
}

impl Engine {
    /// A fingerprint of every local file sync would push (no network).
    fn sync_local_fingerprint(&self) -> Result<u64> {
        let config = self.load_config()?.sync;
        let (units, _) = self.sync_units(&config)?;
        let (files, unreadable) = self.sync_local_files(&units)?;
        let mut hasher = DefaultHasher::new();
        files.hash(&mut hasher);
        unreadable.hash(&mut hasher);
        Ok(hasher.finish())
    }

    /// One tick of the auto push: pushes when `[sync] auto` is on, a remote is set, and the
    /// local files changed since the last push but not since the last tick. `None`: nothing to
    /// push yet.
    pub fn sync_auto_push_step(&self, state: &mut AutoPush) -> Result<Option<PersonalSyncReport>> {
        let config = self.load_config()?.sync;
        let now = self.sync_local_fingerprint()?;
        let pushed = *state.pushed.get_or_insert(now);
        if !config.auto || config.remote.is_empty() || now == pushed {
            // Off (or nothing new): what is here now is the baseline once it is turned on.
            state.pushed = Some(now);
            state.seen = Some(now);
            return Ok(None);
        }
        if state.seen != Some(now) {
            state.seen = Some(now);
            return Ok(None); // still changing: wait one quiet tick
        }
        let report = self.sync_push()?;
        state.pushed = Some(now);
        Ok(Some(report))
    }

    /// Runs [`Engine::sync_auto_push_step`] every `tick` until `cancel`; `after_push` hears each
    /// push and each failure (a remote that moved: the person pulls; the loop keeps going).
    pub async fn run_sync_auto_push(
        &self,
        tick: Duration,
        cancel: CancellationToken,
        mut after_push: impl FnMut(Result<PersonalSyncReport>) + Send,
    ) {
        let mut state = AutoPush::default();
        loop {
            let engine = self.clone();
            let step_state = state.clone();
            let step = tokio::select! {
                step = tokio::task::spawn_blocking(move || {
                    let mut step_state = step_state;
                    let outcome = engine.sync_auto_push_step(&mut step_state);
                    (step_state, outcome)
                }) => step,
                () = cancel.cancelled() => break,
            };
            if let Ok((next, outcome)) = step {
                state = next;
                match outcome {
                    Ok(Some(report)) => after_push(Ok(report)),
                    Ok(None) => {}
                    Err(error) => {
                        // Not retried every tick until something changes again.
                        if let Ok(now) = self.sync_local_fingerprint() {
                            state.pushed = Some(now);
                        }
                        after_push(Err(error));
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(tick) => {}
                () = cancel.cancelled() => break,
            }
        }
    }
}
