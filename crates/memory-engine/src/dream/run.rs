//! One dream, start to end: gates (unless forced) → the daily token budget (a model dream only;
//! never skipped, even forced) → the lock → the run (a model through the confined agent loop, or
//! offline) → its change set staged → applied at once under the `auto` policy or `--apply`
//! (protected changes always wait) → the lock completed.
//!
//! The run only ever stages: a kill (the job's token), a crash, a failure or a spent token budget
//! leaves the memory dir exactly as it was and rolls the lock back to its prior mtime. While it
//! runs, `<engram home>/dream/<project>/task.json` holds the task (so `engram dream kill` and the
//! app can find it); every run that got the lock is appended to `runs.jsonl` beside it when it
//! ends.

use std::fs;
use std::io::Write;
use std::time::Instant;

use serde::Serialize;

use super::gates::{self, BlockedBy, CheckMode, DreamStatus};
use super::lock::{self, Acquire};
use super::task::{DreamEvent, DreamEventKind, DreamTask, DreamTurn, TaskStatus};
use super::{offline, prompt, DreamTarget, MAX_TURNS};
use crate::agent_loop::{
    run_agent, AgentEvent, AgentOptions, FinishReason, ToolDecision, TranscriptSource,
};
use crate::changeset::ChangeSet;
use crate::config::{DreamPolicy, LlmOverrides};
use crate::disk;
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::job::CancellationToken;
use crate::llm::{Caller, Client, ModelJob, ProviderKind, Usage};
use crate::staging::ChangeSource;
use crate::staleness::iso_time;

/// How to run a dream.
#[derive(Debug, Clone, Default)]
pub struct DreamOptions {
    /// Which gates to check before the lock.
    pub gates: GateCheck,
    /// Override the project's policy: `Some(Review)` stages everything (`--stage`), `Some(Auto)`
    /// applies all but protected changes (`--apply`).
    pub policy: Option<DreamPolicy>,
    /// The model to use (`--provider`); default: `config.toml`'s, offline when none.
    pub llm: LlmOverrides,
    /// The session running this, excluded from the sessions gate (a hook's session).
    pub current_session: Option<String>,
}

/// How a dream checks its gates before taking the lock. Every scheduled dream is checked once:
/// the check that found it due is the check.
#[derive(Debug, Clone, Default)]
pub enum GateCheck {
    /// A person's `dream run`: every gate checked, nothing recorded; a closed one skips it.
    #[default]
    Inspect,
    /// The scheduler's check, made by the run itself (`dream run --if-due` on one project):
    /// stops at the first closed gate and records the scan time (the throttle).
    Schedule,
    /// The scheduler found the project due a moment ago with this status, and recorded its
    /// scan: not checked again (the throttle it just wrote would stop it). If the lock shows a
    /// consolidation since that check, the dream is skipped as not due.
    Passed(Box<DreamStatus>),
    /// No gate (`--force`, "Dream now"); the lock still decides.
    Skip,
}

/// What a dream did, as `engram dream run --json` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamOutcome {
    pub task_id: String,
    pub status: TaskStatus,
    pub blocked_by: Option<BlockedBy>,
    /// The staged change set, if the dream changed anything.
    pub change_set: Option<String>,
    pub summary: String,
    pub tokens: Usage,
    /// The whole task, for the app.
    #[serde(skip)]
    pub task: DreamTask,
}

impl Engine {
    /// Runs one dream on `target`. `on_event` sees the task start, each turn, each file touched
    /// and the end. Cancelling `cancel` kills the dream: nothing lands, the lock rolls back.
    /// A dream blocked by its gates or the lock is `skipped`, not an error.
    pub async fn run_dream(
        &self,
        target: &DreamTarget,
        options: &DreamOptions,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(DreamEvent) + Send,
    ) -> Result<DreamOutcome> {
        let started = Instant::now();
        let engine = self.clone();
        let (target_c, options_c) = (target.clone(), options.clone());
        // Config, settings, gates and the key (keyring: D-Bus) off the async threads.
        let prepared =
            tokio::task::spawn_blocking(move || engine.prepare_dream(&target_c, &options_c))
                .await
                .map_err(|e| Error::InvalidInput(format!("dream worker failed: {e}")))??;
        let Prepared {
            mut task,
            held,
            client,
            embedder,
            token_budget,
            policy,
            sessions,
        } = match prepared {
            // Not recorded among past dreams: a skip is a gate saying "not now", not a run.
            Ready::Skipped(task, blocked) => {
                let task = *task;
                on_event(DreamEvent {
                    kind: DreamEventKind::Finished,
                    task: task.clone(),
                });
                return Ok(DreamOutcome {
                    task_id: task.id.clone(),
                    status: TaskStatus::Skipped,
                    blocked_by: Some(blocked),
                    change_set: None,
                    summary: task.summary.clone().unwrap_or_default(),
                    tokens: Usage::default(),
                    task,
                });
            }
            Ready::Go(prepared) => *prepared,
        };
        on_event(DreamEvent {
            kind: DreamEventKind::Started,
            task: task.clone(),
        });

        let result = match &client {
            Some(client) => {
                self.model_run(
                    client.as_ref(),
                    target,
                    &sessions,
                    token_budget,
                    cancel,
                    &mut task,
                    &started,
                    &mut on_event,
                )
                .await
            }
            None => {
                self.offline_run(target, embedder, &mut task, &mut on_event)
                    .await
            }
        };
        task.elapsed_ms = elapsed_ms(&started);
        let outcome = match result {
            Ok(set) if cancel.is_cancelled() => Err((TaskStatus::Killed, set_len_note(&set))),
            Ok(set) => self
                .land(target, &mut task, &set, policy)
                .map_err(|e| (TaskStatus::Failed, e.to_string())),
            Err(Error::Cancelled) => Err((TaskStatus::Killed, "killed".to_owned())),
            Err(e) => Err((TaskStatus::Failed, e.to_string())),
        };
        match outcome {
            Ok(()) => {
                held.complete(self.clock().now())?;
                task.status = TaskStatus::Completed;
            }
            Err((status, message)) => {
                // Nothing was applied: the next gate check must behave as if this never ran.
                held.rollback()?;
                task.status = status;
                task.error = Some(message);
            }
        }
        task.elapsed_ms = elapsed_ms(&started);
        self.finish_task(&task)?;
        on_event(DreamEvent {
            kind: DreamEventKind::Finished,
            task: task.clone(),
        });
        Ok(DreamOutcome {
            task_id: task.id.clone(),
            status: task.status,
            blocked_by: None,
            change_set: task.change_set.clone(),
            summary: task
                .summary
                .clone()
                .or_else(|| task.error.clone())
                .unwrap_or_default(),
            tokens: task.tokens,
            task,
        })
    }

    /// Gates, lock, settings and client: everything before the run, in a blocking context.
    fn prepare_dream(&self, target: &DreamTarget, options: &DreamOptions) -> Result<Ready> {
        self.recover_crashed_dream(target)?;
        // A dream plans on what the dir holds: never on half of an apply a kill stopped.
        self.finish_interrupted_applies(&target.memory_dir)?;
        let config = self.load_config()?;
        let settings = self.dream_settings_in(&config, target);
        let model =
            self.llm_client_for(&options.llm, &Caller::new(ModelJob::Dream, &target.project))?;
        // A dream asked of a model is never quietly made an offline one.
        if let Some(withheld) = &model.withheld {
            return Err(Error::Llm(format!(
                "{withheld}; set the key in the environment, or dream offline with --provider offline"
            )));
        }
        let provider = model.settings.provider;
        let now = self.clock().now();
        let mut task = DreamTask::new(
            &target.project,
            target.memory_dir.clone(),
            provider.as_str(),
            iso_time(now),
        );
        let mode = match &options.gates {
            GateCheck::Inspect => Some(CheckMode::Inspect),
            GateCheck::Schedule => Some(CheckMode::Schedule),
            GateCheck::Passed(_) | GateCheck::Skip => None,
        };
        if let Some(mode) = mode {
            let status = self.check_gates(
                target,
                &settings,
                options.current_session.as_deref(),
                model.budget.clone(),
                mode,
            )?;
            if let Some(blocked) = status.blocked_by {
                task.status = TaskStatus::Skipped;
                task.summary = Some(format!("not due: {}", blocked.describe(&status)));
                return Ok(Ready::Skipped(Box::new(task), blocked));
            }
        }
        // `--force` and "Dream now" skip the gates, never the budget: it is the person's own
        // limit on spending, not a schedule. The offline dream (`--provider offline`) still runs.
        if let Some(budget) = model.over_budget() {
            task.status = TaskStatus::Skipped;
            task.summary = Some(format!(
                "not run: {}; run it offline with --provider offline",
                budget.reason()
            ));
            return Ok(Ready::Skipped(Box::new(task), BlockedBy::Budget));
        }
        crate::disk::create_dir_all(&target.memory_dir).at(&target.memory_dir)?;
        // The task is recorded before the lock names this process, not after: a process killed
        // at any instant from then on leaves a task naming the prior mtime, so the next look
        // rolls the lock back instead of taking the crash for a consolidation.
        let recorded = lock::try_acquire_recorded(
            &target.memory_dir,
            now,
            std::process::id(),
            &self.dream_lock_file(&target.memory_dir),
            |prior_mtime| {
                task.prior_mtime = Some(prior_mtime);
                task.status = TaskStatus::Running;
                self.save_running_task(&task)
            },
        );
        let held = match recorded {
            Ok(Acquire::Acquired(held)) => held,
            Err(e) => {
                self.clear_running_task(&task);
                return Err(e);
            }
            Ok(Acquire::Held(info)) => {
                self.clear_running_task(&task);
                task.status = TaskStatus::Skipped;
                task.summary = Some(match info.pid {
                    Some(pid) => format!("another dream holds the lock (pid {pid})"),
                    None => "another dream holds the lock".to_owned(),
                });
                return Ok(Ready::Skipped(Box::new(task), BlockedBy::Lock));
            }
        };
        if let GateCheck::Passed(checked) = &options.gates {
            let consolidated_at = checked.lock.mtime_ms.filter(|_| checked.lock.exists);
            let prior = held.prior_mtime_ms();
            if (prior != 0).then_some(prior) != consolidated_at {
                // Another dream (Claude Code's, or another Engram's) finished between the
                // scheduler's check and this lock: its consolidation restarts the clock.
                held.rollback()?;
                self.clear_running_task(&task);
                task.status = TaskStatus::Skipped;
                task.summary = Some("not due: consolidated since the scheduler checked".into());
                return Ok(Ready::Skipped(Box::new(task), BlockedBy::Time));
            }
        }
        let since = held.prior_mtime_ms();
        let sessions = match gates::sessions_touched_since(
            &target.transcripts_dir,
            since,
            options.current_session.as_deref(),
        ) {
            Ok(sessions) => sessions,
            Err(e) => {
                held.rollback()?;
                self.clear_running_task(&task);
                return Err(e);
            }
        };
        task.sessions_reviewing = sessions.clone();
        self.save_running_task(&task)?;
        Ok(Ready::Go(Box::new(Prepared {
            task,
            held,
            embedder: match provider {
                ProviderKind::Local => {
                    Some(self.embedder_in(&config, &Caller::new(ModelJob::Dream, &target.project))?)
                }
                _ => None,
            },
            client: model.client,
            token_budget: settings.token_budget,
            policy: options.policy.unwrap_or(settings.policy),
            sessions,
        })))
    }

    #[allow(clippy::too_many_arguments)]
    async fn model_run(
        &self,
        client: &dyn Client,
        target: &DreamTarget,
        sessions: &[String],
        token_budget: u64,
        cancel: &CancellationToken,
        task: &mut DreamTask,
        started: &Instant,
        on_event: &mut (impl FnMut(DreamEvent) + Send),
    ) -> Result<ChangeSet> {
        let dir = self.memory_dir(&target.memory_dir);
        let transcripts: Vec<TranscriptSource> = sessions
            .iter()
            .map(|session| TranscriptSource {
                session: session.clone(),
                path: target.transcripts_dir.join(format!("{session}.jsonl")),
            })
            .collect();
        let listed: Vec<(String, String)> = transcripts
            .iter()
            .map(|t| {
                let modified = fs::metadata(&t.path)
                    .and_then(|m| m.modified())
                    .map(iso_time)
                    .unwrap_or_default();
                (t.session.clone(), modified)
            })
            .collect();
        let today = chrono::DateTime::<chrono::Local>::from(self.clock().now())
            .format("%Y-%m-%d")
            .to_string();
        let options = AgentOptions {
            system: prompt::system_prompt(),
            task: prompt::brief(&dir, &listed, &today)?,
            max_turns: MAX_TURNS,
            max_tokens: 8192,
            reason: "dream".to_owned(),
            transcripts,
            token_budget: Some(token_budget),
            single_file: None,
        };
        let outcome = run_agent(
            client,
            &target.memory_dir,
            &options,
            cancel,
            |event| match event {
                AgentEvent::ModelReplied {
                    text,
                    tool_calls,
                    usage,
                    ..
                } => {
                    task.tokens += usage;
                    task.push_turn(DreamTurn {
                        text,
                        tool_use_count: tool_calls,
                    });
                    task.elapsed_ms = elapsed_ms(started);
                    on_event(DreamEvent {
                        kind: DreamEventKind::Turn,
                        task: task.clone(),
                    });
                }
                AgentEvent::ToolCall(call)
                    if call.decision == ToolDecision::Allowed
                        && !call.is_error
                        && matches!(call.name.as_str(), "write" | "edit" | "delete") =>
                {
                    if let Some(path) = &call.path {
                        task.touch(path);
                        on_event(DreamEvent {
                            kind: DreamEventKind::FileTouched,
                            task: task.clone(),
                        });
                    }
                }
                _ => {}
            },
        )
        .await?;
        if outcome.finish == FinishReason::TokenBudget {
            return Err(Error::InvalidInput(format!(
                "stopped at its token budget ({token_budget} tokens): nothing applied"
            )));
        }
        let mut set = outcome.changes;
        for change in &mut set.changes {
            change.sessions = sessions.to_vec();
            // The prompt asks for one line per file in the last message: that line is the reason.
            if let Some(line) = outcome
                .final_text
                .lines()
                .find(|line| line.contains(change.file.as_str()))
            {
                let line = line.trim().trim_start_matches(['-', '*', ' ']);
                change.reason = crate::llm::clip(line, 200);
            }
        }
        task.summary = Some(first_line_or(&outcome.final_text, &set.summary()));
        Ok(set)
    }

    async fn offline_run(
        &self,
        target: &DreamTarget,
        embedder: Option<std::sync::Arc<dyn Embedder>>,
        task: &mut DreamTask,
        on_event: &mut (impl FnMut(DreamEvent) + Send),
    ) -> Result<ChangeSet> {
        let dir = self.memory_dir(&target.memory_dir);
        let transcripts = target.transcripts_dir.clone();
        // Reads every file of the dir: off the async threads.
        let planned = tokio::task::spawn_blocking(move || {
            offline::plan_offline_dream_with(
                &dir,
                &chrono::Local,
                offline::DreamSources {
                    embedder: embedder.as_deref(),
                    transcripts: Some(&transcripts),
                },
            )
        })
        .await
        .map_err(|e| Error::InvalidInput(format!("dream worker failed: {e}")))??;
        for change in &planned.changes.changes {
            task.touch(&change.file);
            on_event(DreamEvent {
                kind: DreamEventKind::FileTouched,
                task: task.clone(),
            });
        }
        task.summary = Some(planned.summary.clone());
        Ok(planned.changes)
    }

    /// Stages the run's change set and, under the `auto` policy, applies all but its protected
    /// changes.
    fn land(
        &self,
        target: &DreamTarget,
        task: &mut DreamTask,
        set: &ChangeSet,
        policy: DreamPolicy,
    ) -> Result<()> {
        if set.is_empty() {
            task.summary
                .get_or_insert_with(|| "nothing to change".to_owned());
            return Ok(());
        }
        let summary = task.summary.clone().unwrap_or_else(|| set.summary());
        let staged = self.stage_change_set(
            set,
            ChangeSource::Dream,
            &target.project,
            &summary,
            Some(&task.id),
        )?;
        task.change_set = Some(staged.id.clone());
        if policy == DreamPolicy::Auto {
            self.apply_staged(&staged.id, &[], false, Some(&target.memory_dir))?;
        }
        Ok(())
    }

    fn save_running_task(&self, task: &DreamTask) -> Result<()> {
        let path = self.dream_state_dir(&task.project)?.join("task.json");
        let json = serde_json::to_vec_pretty(task)
            .map_err(|e| Error::InvalidInput(format!("cannot encode task: {e}")))?;
        disk::atomic_write(&path, &json)
    }

    /// Removes `task.json` if it names `task`: the run ended before it began.
    fn clear_running_task(&self, task: &DreamTask) {
        if self
            .running_dream(&task.project)
            .is_some_and(|r| r.id == task.id)
        {
            if let Ok(dir) = self.dream_state_dir(&task.project) {
                let _ = fs::remove_file(dir.join("task.json"));
            }
        }
    }

    /// Appends the finished task to `runs.jsonl` and clears `task.json` if it is this task's.
    fn finish_task(&self, task: &DreamTask) -> Result<()> {
        let dir = self.dream_state_dir(&task.project)?;
        crate::disk::create_dir_all(&dir).at(&dir)?;
        self.clear_running_task(task);
        let mut line = serde_json::to_string(task)
            .map_err(|e| Error::InvalidInput(format!("cannot encode task: {e}")))?;
        line.push('\n');
        let runs = dir.join("runs.jsonl");
        crate::disk::with_mode_for(fs::OpenOptions::new().create(true).append(true), &runs)
            .open(&runs)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .at(&runs)
    }

    /// Whether `pid` runs an Engram dream (its task file names it): its changes are its own,
    /// not Claude Code's.
    pub(crate) fn is_engram_dream(&self, pid: u32) -> bool {
        let Ok(projects) = fs::read_dir(self.engram_home().join("dream")) else {
            return false;
        };
        projects.flatten().any(|dir| {
            disk::read_text(&dir.path().join("task.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<DreamTask>(&text).ok())
                .is_some_and(|task| task.pid == pid)
        })
    }

    /// Cleans up after an Engram dream on `target` whose process died without finishing (a
    /// crash, `kill -9`): its lock, if still its own, goes back to the prior mtime — the crash
    /// was no consolidation — and the run is recorded as failed. Nothing else to undo: a run
    /// only ever stages.
    pub(crate) fn recover_crashed_dream(&self, target: &DreamTarget) -> Result<()> {
        let path = self.dream_state_dir(&target.project)?.join("task.json");
        let Ok(text) = disk::read_text(&path) else {
            return Ok(());
        };
        let Ok(mut task) = serde_json::from_str::<DreamTask>(&text) else {
            return Ok(());
        };
        if lock::pid_alive(task.pid) {
            return Ok(());
        }
        if lock::inspect(&target.memory_dir)?.pid == Some(task.pid) {
            lock::rollback_to(&target.memory_dir, task.prior_mtime.unwrap_or(0))?;
        }
        task.status = TaskStatus::Failed;
        task.error = Some("the process running it ended before it finished".to_owned());
        self.finish_task(&task)?;
        let _ = fs::remove_file(&path);
        Ok(())
    }

    /// The dream running on `project` in any Engram process, if its process is alive.
    pub fn running_dream(&self, project: &str) -> Option<DreamTask> {
        let path = self.dream_state_dir(project).ok()?.join("task.json");
        let task: DreamTask = serde_json::from_str(&disk::read_text(&path).ok()?).ok()?;
        lock::pid_alive(task.pid).then_some(task)
    }

    /// Past dreams of `project`, newest first.
    pub fn past_dreams(&self, project: &str) -> Result<Vec<DreamTask>> {
        let path = self.dream_state_dir(project)?.join("runs.jsonl");
        let text = match disk::read_text(&path) {
            Ok(text) => text,
            Err(Error::NotFound(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut runs: Vec<DreamTask> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        runs.reverse();
        Ok(runs)
    }

    /// Kills the Engram dream running on `project` from any process: the running process is
    /// sent SIGTERM and rolls its lock back itself; a holder that is already dead has its lock
    /// rolled back here. Returns the task killed, or `None` when no Engram dream runs.
    pub fn kill_dream(
        &self,
        project: &str,
        memory_dir: &std::path::Path,
    ) -> Result<Option<DreamTask>> {
        let path = self.dream_state_dir(project)?.join("task.json");
        let Ok(text) = disk::read_text(&path) else {
            return Ok(None);
        };
        let Ok(task) = serde_json::from_str::<DreamTask>(&text) else {
            return Ok(None);
        };
        if task.pid == std::process::id() {
            // This process's own dream: its job handle is the way to stop it.
            self.jobs().cancel(crate::job::JobKind::Dream);
            return Ok(Some(task));
        }
        if lock::pid_alive(task.pid) {
            lock::terminate(task.pid)?;
        } else {
            // Died without cleaning up: roll back for it, if the lock is still its.
            let info = lock::inspect(memory_dir)?;
            if info.pid == Some(task.pid) {
                lock::rollback_to(memory_dir, task.prior_mtime.unwrap_or(0))?;
            }
            let _ = fs::remove_file(&path);
        }
        Ok(Some(task))
    }
}

/// What [`Engine::prepare_dream`] found.
enum Ready {
    Skipped(Box<DreamTask>, BlockedBy),
    Go(Box<Prepared>),
}

struct Prepared {
    task: DreamTask,
    held: lock::ConsolidationLock,
    client: Option<std::sync::Arc<dyn Client>>,
    /// Sentence vectors for the offline dream's near-duplicates (provider `local`).
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    token_budget: u64,
    policy: DreamPolicy,
    sessions: Vec<String>,
}

fn elapsed_ms(started: &Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn set_len_note(set: &ChangeSet) -> String {
    format!("killed; {} staged change(s) discarded", set.len())
}

fn first_line_or(text: &str, fallback: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(|| fallback.to_owned(), |l| crate::llm::clip(l, 200))
}
