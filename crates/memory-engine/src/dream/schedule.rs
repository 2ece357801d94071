//! The background scheduler: which projects are due for a dream, and one tick that dreams the
//! first of them. The app runs [`Engine::run_dream_scheduler`], a tick every `[dream]
//! check_every` (5 minutes by default); people without the app run `engram dream run --if-due
//! --all-projects` from cron or a systemd timer, which dreams every due project once, one at a
//! time. Each scheduled dream's gates are checked once: the check that found it due records the
//! scan time (the throttle) and the run only takes the lock. A running scheduler records when it
//! looks next (`<engram home>/dream/scheduler.json`), which `engram dream status` reports. Gate
//! time comes from the engine's clock, so schedules are tested with a fixed clock as well as in
//! real processes.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::gates::{BlockedBy, CheckMode, DreamStatus};
use super::lock::epoch_ms;
use super::run::{DreamOptions, DreamOutcome, GateCheck};
use super::task::DreamEvent;
use super::DreamTarget;
use crate::disk;
use crate::engine::Engine;
use crate::error::Result;
use crate::job::{CancellationToken, JobKind};

/// What a running scheduler records of itself, for `dream status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SchedulerRecord {
    pid: u32,
    /// When it looks for due projects next (ms since the epoch).
    next_check_ms: i64,
}

impl Engine {
    /// The enabled projects whose gates are all open now, longest since their last
    /// consolidation first. Checking records each scan time (the 10-minute throttle), as
    /// Claude Code's own check does, so calling this often stays cheap.
    pub fn due_dreams(&self) -> Result<Vec<(DreamTarget, DreamStatus)>> {
        let config = self.load_config()?;
        // Read once: every project's dream spends from the same day's budget.
        let budget = self.dream_budget(&config, &crate::config::LlmOverrides::default())?;
        let mut due = Vec::new();
        for target in self.dream_targets()? {
            let settings = self.dream_settings_in(&config, &target);
            if !settings.enabled {
                continue;
            }
            let status = self.check_gates(
                &target,
                &settings,
                None,
                budget.clone(),
                CheckMode::Schedule,
            )?;
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
    /// process, dreams the first due project. The check that found it due is its gate check
    /// (the run only takes the lock). Returns what it did, or `None` when nothing was due.
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
        let Some((target, status)) = due.into_iter().next() else {
            return Ok(None);
        };
        let job = self.jobs().start(JobKind::Dream);
        let options = DreamOptions {
            gates: GateCheck::Passed(Box::new(status)),
            ..DreamOptions::default()
        };
        let outcome = self
            .run_dream(&target, &options, job.token(), on_event)
            .await?;
        Ok(Some(outcome))
    }

    /// The background scheduler, until `cancel` fires: a first look after `first` (or after
    /// `[dream] check_every` if that is sooner), then a [`Engine::dream_tick`] every
    /// `check_every`, read again before each wait so a changed setting applies from the next
    /// tick. `after_tick` hears each tick's result (a failed tick does not stop the scheduler).
    /// Cancelling stops it at once, a dream in progress included (nothing lands, its lock rolls
    /// back), and removes its record.
    pub async fn run_dream_scheduler(
        &self,
        first: Duration,
        cancel: CancellationToken,
        mut on_event: impl FnMut(DreamEvent) + Send,
        mut after_tick: impl FnMut(Result<Option<DreamOutcome>>) + Send,
    ) {
        let mut wait = first.min(self.dream_check_every().await);
        loop {
            self.record_next_dream_check(wait);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => break,
            }
            // Stopping mid-dream drops the run: its lock rolls back, as after a kill.
            let outcome = tokio::select! {
                outcome = self.dream_tick(&mut on_event) => outcome,
                () = cancel.cancelled() => break,
            };
            after_tick(outcome);
            wait = self.dream_check_every().await;
        }
        let _ = std::fs::remove_file(self.scheduler_record_path());
    }

    /// `[dream] check_every`, the default when the config cannot be read (the scheduler keeps
    /// going; the tick reports the config's error).
    async fn dream_check_every(&self) -> Duration {
        let engine = self.clone();
        tokio::task::spawn_blocking(move || engine.load_config())
            .await
            .ok()
            .and_then(Result::ok)
            .map_or(crate::config::DEFAULT_CHECK_EVERY, |c| {
                c.dream.check_every()
            })
    }

    fn scheduler_record_path(&self) -> PathBuf {
        self.engram_home().join("dream").join("scheduler.json")
    }

    /// Records that this process's scheduler looks next `after` from now (real time: the
    /// scheduler sleeps in real time).
    fn record_next_dream_check(&self, after: Duration) {
        let record = SchedulerRecord {
            pid: std::process::id(),
            next_check_ms: epoch_ms(SystemTime::now() + after),
        };
        if let Ok(json) = serde_json::to_vec(&record) {
            // Only `dream status` reads it: failing to record is not worth stopping dreams for.
            let _ = disk::atomic_write(&self.scheduler_record_path(), &json);
        }
    }

    /// When a running scheduler next looks at the project of `status` and can count its
    /// sessions: its next tick, or the end of the scan throttle if that is later. `None` when
    /// no scheduler runs (or background dreams are paused).
    pub(crate) fn next_dream_check(&self, status: &DreamStatus) -> Option<SystemTime> {
        let text = disk::read_text(&self.scheduler_record_path()).ok()?;
        let record: SchedulerRecord = serde_json::from_str(&text).ok()?;
        let paused = !self.load_config().ok()?.dream.background.unwrap_or(true);
        if paused || !crate::environment::pid_alive(record.pid) {
            return None;
        }
        let mut next_ms = record.next_check_ms;
        if status.blocked_by == Some(BlockedBy::Throttle) {
            if let Some(scan) = status.last_scan_ms {
                next_ms = next_ms.max(scan + status.scan_throttle.as_millis() as i64);
            }
        }
        let next_ms = u64::try_from(next_ms).ok()?;
        Some(SystemTime::UNIX_EPOCH + Duration::from_millis(next_ms))
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
        for (target, status) in due {
            if cancel.is_cancelled() {
                break;
            }
            let options = DreamOptions {
                gates: GateCheck::Passed(Box::new(status)),
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

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::dream::run::GateCheck;
    use crate::dream::TaskStatus;
    use crate::environment::Environment;
    use crate::testing::fixtures::write_file;

    /// A Claude home with one project whose dreams are on and six sessions since (never
    /// consolidated), on the real clock; and the engine over it.
    fn due_project(check_every: &str) -> (tempfile::TempDir, Engine, DreamTarget) {
        let temp = tempfile::tempdir().expect("temp");
        let project = temp.path().join("claude/projects/-work-app");
        write_file(
            &project.join("memory/MEMORY.md"),
            "- [Deploy](deploy.md) \u{2014} how we deploy\n",
        );
        write_file(
            &project.join("memory/deploy.md"),
            "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nShipped yesterday.\n",
        );
        for i in 0..6 {
            write_file(
                &project.join(format!("{i:08}-1111-4111-8111-111111111111.jsonl")),
                "{\"type\":\"user\"}\n",
            );
        }
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path().join("claude"))
            .engram_home(temp.path().join("engram"))
            .build();
        write_file(
            &engine.engram_home().join("config.toml"),
            &format!("[dream]\ncheck_every = \"{check_every}\"\n"),
        );
        let target = engine.dream_target("-work-app").expect("target");
        engine
            .set_dream_settings(&target, Some(true), None)
            .expect("enable");
        (temp, engine, target)
    }

    fn lock_of(memory_dir: &Path) -> Option<SystemTime> {
        fs::metadata(memory_dir.join(".consolidate-lock"))
            .and_then(|m| m.modified())
            .ok()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tick_dreams_the_due_project_once_then_nothing_is_due() {
        let (_temp, engine, target) = due_project("5m");
        let outcome = engine
            .dream_tick(|_| {})
            .await
            .expect("tick")
            .expect("a due project dreams");
        assert_eq!(outcome.status, TaskStatus::Completed, "{outcome:?}");
        assert!(lock_of(&target.memory_dir).is_some(), "consolidated");
        assert!(
            engine.dream_tick(|_| {}).await.expect("tick").is_none(),
            "consolidated a moment ago: nothing due"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dream_found_due_is_skipped_when_another_consolidated_since_the_check() {
        let (_temp, engine, target) = due_project("5m");
        let (_, status) = engine
            .due_dreams()
            .expect("due")
            .into_iter()
            .next()
            .expect("due");
        // Claude Code's dream finished between the check and the run: the lock is fresh.
        write_file(&target.memory_dir.join(".consolidate-lock"), "");
        let options = DreamOptions {
            gates: GateCheck::Passed(Box::new(status)),
            ..DreamOptions::default()
        };
        let outcome = engine
            .run_dream(&target, &options, &CancellationToken::new(), |_| {})
            .await
            .expect("run");
        assert_eq!(outcome.status, TaskStatus::Skipped);
        assert_eq!(outcome.blocked_by, Some(BlockedBy::Time));
        assert!(
            lock_of(&target.memory_dir).is_some(),
            "the other dream's consolidation stands"
        );
    }

    /// A model dream while the daily token budget is reached: not due for the scheduler, named
    /// by `dream status`, skipped when forced — and the offline dream still runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reached_budget_stops_model_dreams_even_forced_but_not_the_offline_dream() {
        let (temp, _, target) = due_project("5m");
        let engine = Engine::builder(Environment::empty().with("ANTHROPIC_API_KEY", "k"))
            .claude_home(temp.path().join("claude"))
            .engram_home(temp.path().join("engram"))
            .build();
        let mut config = engine.load_config().expect("config");
        config.llm.provider = Some(crate::llm::ProviderKind::Anthropic);
        // Nothing listens there: a call made by mistake would fail the run, not skip it.
        config.llm.anthropic.base_url = Some("http://127.0.0.1:9".into());
        config.budget.daily_tokens = Some(1000);
        engine.save_config(&config).expect("save");
        engine
            .record_usage(
                &crate::llm::Caller::new(crate::llm::ModelJob::Extract, "-other"),
                crate::llm::ProviderKind::Anthropic,
                "m",
                &crate::llm::Usage {
                    input_tokens: 1000,
                    ..crate::llm::Usage::default()
                },
            )
            .expect("spent");

        assert!(engine.due_dreams().expect("due").is_empty(), "not due");
        let status = engine.dream_status(&target).expect("status");
        assert_eq!(status.blocked_by, Some(BlockedBy::Budget), "{status:?}");
        assert_eq!(status.budget.as_ref().map(|b| b.tokens_today), Some(1000));
        let forced = DreamOptions {
            gates: GateCheck::Skip,
            ..DreamOptions::default()
        };
        let outcome = engine
            .run_dream(&target, &forced, &CancellationToken::new(), |_| {})
            .await
            .expect("run");
        assert_eq!(outcome.status, TaskStatus::Skipped, "{outcome:?}");
        assert_eq!(outcome.blocked_by, Some(BlockedBy::Budget));
        assert!(
            outcome
                .summary
                .contains("daily token budget reached (1,000 of 1,000"),
            "{}",
            outcome.summary
        );
        assert_eq!(
            lock_of(&target.memory_dir),
            None,
            "the lock was never taken"
        );

        let offline = DreamOptions {
            gates: GateCheck::Skip,
            llm: crate::config::LlmOverrides {
                provider: Some(crate::llm::ProviderKind::Offline),
                ..Default::default()
            },
            ..DreamOptions::default()
        };
        let outcome = engine
            .run_dream(&target, &offline, &CancellationToken::new(), |_| {})
            .await
            .expect("run");
        assert_eq!(outcome.status, TaskStatus::Completed, "{outcome:?}");
    }

    /// The app's loop in real time: with `check_every = "1s"` the due project dreams within
    /// seconds, `dream status` names the next check while it runs, and nothing after it stops.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_scheduler_loop_dreams_a_due_project_and_says_when_it_looks_next() {
        let (_temp, engine, target) = due_project("1s");
        let cancel = CancellationToken::new();
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let scheduler = tokio::spawn({
            let (engine, cancel, outcomes) = (engine.clone(), cancel.clone(), outcomes.clone());
            async move {
                engine
                    .run_dream_scheduler(
                        Duration::from_secs(60),
                        cancel,
                        |_| {},
                        |outcome| {
                            if let Ok(Some(outcome)) = outcome {
                                outcomes.lock().expect("outcomes").push(outcome.status);
                            }
                        },
                    )
                    .await;
            }
        });
        let start = std::time::Instant::now();
        while outcomes.lock().expect("outcomes").is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no background dream with check_every = 1s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(*outcomes.lock().expect("outcomes"), [TaskStatus::Completed]);
        let status = engine.dream_status(&target).expect("status");
        assert!(status.next_check.is_some(), "a scheduler runs: {status:?}");
        assert!(status
            .next_check_words(SystemTime::now())
            .starts_with("next check"));

        cancel.cancel();
        scheduler.await.expect("scheduler");
        let status = engine.dream_status(&target).expect("status");
        assert_eq!(status.next_check, None, "no scheduler any more");
        assert_eq!(
            *outcomes.lock().expect("outcomes"),
            [TaskStatus::Completed],
            "one dream: consolidated, the project waits for min_hours"
        );
    }
}
