//! The background scheduler: which projects are due for a dream, and one tick that dreams the
//! first of them. The tray calls [`Engine::dream_tick`] every few minutes; people without the app
//! run `engram dream run --if-due --all-projects` from cron or a systemd timer, which dreams every
//! due project once, one at a time. Time comes from the engine's clock, so schedules are tested
//! with a fixed clock, not sleeps.

use super::gates::{CheckMode, DreamStatus};
use super::run::{DreamOptions, DreamOutcome};
use super::task::DreamEvent;
use super::DreamTarget;
use crate::engine::Engine;
use crate::error::Result;
use crate::job::{CancellationToken, JobKind};

impl Engine {
    /// The enabled projects whose gates are all open now, longest since their last
    /// consolidation first. Checking records each scan time (the 10-minute throttle), as
    /// Claude Code's own check does, so calling this often stays cheap.
    pub fn due_dreams(&self) -> Result<Vec<(DreamTarget, DreamStatus)>> {
        let config = self.load_config()?;
        let mut due = Vec::new();
        for target in self.dream_targets()? {
            let settings = self.dream_settings_in(&config, &target);
            if !settings.enabled {
                continue;
            }
            let status = self.check_gates(&target, &settings, None, CheckMode::Schedule)?;
            if status.due {
                due.push((target, status));
            }
        }
        // Never consolidated (no hours yet) first, then the longest waiting.
        due.sort_by(|(_, a), (_, b)| {
            let key = |s: &DreamStatus| s.hours_since.unwrap_or(f64::INFINITY);
            key(b).total_cmp(&key(a))
        });
        Ok(due)
    }

    /// One scheduler tick: unless background dreams are paused or a dream already runs in this
    /// process, dreams the first due project (its own gates checked again by the run). Returns
    /// what it did, or `None` when nothing was due.
    pub async fn dream_tick(
        &self,
        on_event: impl FnMut(DreamEvent) + Send,
    ) -> Result<Option<DreamOutcome>> {
        let engine = self.clone();
        let paused = tokio::task::spawn_blocking(move || {
            Ok::<_, crate::Error>(!engine.load_config()?.dream.background.unwrap_or(true))
        })
        .await
        .map_err(|e| crate::Error::InvalidInput(format!("scheduler worker failed: {e}")))??;
        if paused || self.jobs().is_running(JobKind::Dream) {
            return Ok(None);
        }
        let engine = self.clone();
        let due = tokio::task::spawn_blocking(move || engine.due_dreams())
            .await
            .map_err(|e| crate::Error::InvalidInput(format!("scheduler worker failed: {e}")))??;
        let Some((target, _)) = due.into_iter().next() else {
            return Ok(None);
        };
        let job = self.jobs().start(JobKind::Dream);
        let options = DreamOptions {
            scheduled: true,
            ..DreamOptions::default()
        };
        let outcome = self
            .run_dream(&target, &options, job.token(), on_event)
            .await?;
        Ok(Some(outcome))
    }

    /// Runs every due project's dream once, one at a time (`--if-due --all-projects`).
    pub async fn dream_all_due(
        &self,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(DreamEvent) + Send,
    ) -> Result<Vec<DreamOutcome>> {
        let engine = self.clone();
        let due = tokio::task::spawn_blocking(move || engine.due_dreams())
            .await
            .map_err(|e| crate::Error::InvalidInput(format!("scheduler worker failed: {e}")))??;
        let mut outcomes = Vec::new();
        for (target, _) in due {
            if cancel.is_cancelled() {
                break;
            }
            let options = DreamOptions {
                scheduled: true,
                ..DreamOptions::default()
            };
            outcomes.push(
                self.run_dream(&target, &options, cancel, &mut on_event)
                    .await?,
            );
        }
        Ok(outcomes)
    }
}
