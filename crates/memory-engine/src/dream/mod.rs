//! Dreams: consolidating a project's memory the way Claude Code's auto-dream does, but where the
//! person sees and controls it. Read top to bottom, a dream goes
//! scheduler → gates → lock → run → change set → review → apply → history:
//!
//! - [`schedule`]: which enabled projects are due, one dream at a time (the tray, or
//!   `engram dream run --if-due --all-projects` from cron).
//! - [`gates`]: enabled → the daily token budget (model dreams) → hours since the last
//!   consolidation → the scan throttle → sessions since → the lock, cheapest first
//!   (FORMATS.md §8).
//! - [`lock`]: Claude Code's `.consolidate-lock`, byte- and mtime-compatible, so an Engram dream
//!   and a Claude Code dream never run at once; Engram processes also take turns.
//! - [`run`]: the run itself, with a model through the confined agent loop ([`prompt`]) or
//!   offline ([`offline`]), tracked as a [`task::DreamTask`]; it only ever stages writes.
//! - Its change set is kept in staging ([`crate::staging`]) for review — or, under the `auto`
//!   policy, applied at once except protected changes — and every applied file is recorded in
//!   history with the change set's id, so the whole dream can be undone.
//!
//! A kill (or a crash) leaves the memory dir untouched and rolls the lock back, so the next gate
//! check behaves as if the dream never ran.

pub mod gates;
pub mod lock;
pub mod offline;
pub mod prompt;
pub mod run;
pub mod schedule;
pub mod task;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Config, DreamPolicy, LlmOverrides};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::llm::BudgetStatus;
use crate::staleness::iso_time;

pub use gates::{BlockedBy, DreamStatus};
pub use run::{DreamOptions, DreamOutcome, GateCheck};
pub use task::{DreamEvent, DreamEventKind, DreamPhase, DreamTask, DreamTurn, TaskStatus};

/// Default hours between consolidations.
pub const DEFAULT_MIN_HOURS: f64 = 24.0;
/// Default sessions since the last consolidation.
pub const DEFAULT_MIN_SESSIONS: usize = 5;
/// Default tokens a model dream may spend.
pub const DEFAULT_TOKEN_BUDGET: u64 = 400_000;
/// Model turns a dream may take.
pub const MAX_TURNS: usize = 30;

/// One project a dream can run on: where its memory and its transcripts are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamTarget {
    /// The project's folder name under `<claude home>/projects/`: the key of its settings.
    pub project: String,
    pub memory_dir: PathBuf,
    pub transcripts_dir: PathBuf,
    /// The project's working dir, when known: its local settings may enable dreams.
    pub cwd: Option<PathBuf>,
}

/// [`DreamSettings::enabled_source`] when Claude Code's auto memory is off for the project.
pub const AUTO_MEMORY_OFF_SOURCE: &str = "autoMemory";

/// A project's dream settings as they apply.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamSettings {
    pub enabled: bool,
    /// Where `enabled` comes from: `engram` (its own setting), `claude` (Claude Code's
    /// `autoDreamEnabled` in trusted settings), `default` (off), or `autoMemory`: Claude Code's
    /// auto memory is off for the project (`CLAUDE_CODE_DISABLE_AUTO_MEMORY`,
    /// `autoMemoryEnabled`), which closes every dream's first gate whatever the rest says, as it
    /// closes Claude Code's own.
    pub enabled_source: String,
    pub policy: DreamPolicy,
    pub min_hours: f64,
    pub min_sessions: usize,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub token_budget: u64,
    /// Whether the background scheduler runs (not paused).
    pub background: bool,
    /// How often sessions are counted (`[dream] scan_throttle`).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub scan_throttle: std::time::Duration,
}

impl Engine {
    /// The dream target of the project Claude Code would use in `cwd`.
    pub fn dream_target_for_cwd(&self, cwd: &Path) -> Result<DreamTarget> {
        let resolution = self.resolve_memory_dir(cwd)?;
        Ok(DreamTarget {
            project: resolution.project_name(),
            memory_dir: resolution.memory_dir,
            transcripts_dir: resolution.transcripts_dir,
            cwd: Some(cwd.to_path_buf()),
        })
    }

    /// The dream target of `memory_dir` (`--memory-dir`), asked from `cwd`: the project in
    /// `cwd` when that is its memory dir, else the project whose memory dir it is
    /// (`<memory base>/projects/<name>/memory`) — its name, sessions and settings, so the gates
    /// read are that project's — else `cwd`'s project with `memory_dir` in its memory dir's
    /// place.
    pub fn dream_target_for_memory_dir(
        &self,
        memory_dir: &Path,
        cwd: &Path,
    ) -> Result<DreamTarget> {
        use crate::disk::resolved_path;
        let mut target = self.dream_target_for_cwd(cwd)?;
        let wanted = resolved_path(memory_dir);
        if resolved_path(&target.memory_dir) == wanted {
            return Ok(target);
        }
        let projects = resolved_path(&self.memory_base().join("projects"));
        let project = wanted
            .parent()
            .filter(|_| wanted.file_name() == Some("memory".as_ref()))
            .filter(|project| project.parent() == Some(projects.as_path()))
            .and_then(Path::file_name)
            .and_then(|name| name.to_str());
        if let Some(project) = project {
            return self.dream_target(project);
        }
        target.memory_dir = memory_dir.to_path_buf();
        Ok(target)
    }

    /// The dream target of a project by its folder name (as the Projects view names it).
    pub fn dream_target(&self, project: &str) -> Result<DreamTarget> {
        let memory_dir = self.project_memory_dir_checked(project)?;
        let transcripts_dir = self.project_transcripts_dir_of(project);
        let cwd = crate::projects::project_path(project, &transcripts_dir);
        Ok(DreamTarget {
            project: project.to_owned(),
            memory_dir,
            transcripts_dir,
            cwd,
        })
    }

    /// Every project Claude Code has seen, as dream targets.
    pub fn dream_targets(&self) -> Result<Vec<DreamTarget>> {
        self.project_names()?
            .iter()
            .map(|name| self.dream_target(name))
            .collect()
    }

    /// The dream settings of `target`: Engram's own per-project setting, else Claude Code's
    /// `autoDreamEnabled` from trusted settings, else off.
    pub fn dream_settings(&self, target: &DreamTarget) -> Result<DreamSettings> {
        let config = self.load_config()?;
        Ok(self.dream_settings_in(&config, target))
    }

    pub(crate) fn dream_settings_in(&self, config: &Config, target: &DreamTarget) -> DreamSettings {
        let own = config.dream.projects.get(&target.project);
        let claude = || {
            target
                .cwd
                .as_deref()
                .and_then(|cwd| self.claude_settings(cwd).auto_dream_enabled_trusted())
                .or_else(|| {
                    // No working dir known: the user's own settings still speak.
                    crate::settings::read_settings_file(&self.claude_home().join("settings.json"))
                        .ok()
                        .flatten()
                        .and_then(|values| {
                            values
                                .get(crate::settings::AUTO_DREAM_ENABLED)
                                .and_then(serde_json::Value::as_bool)
                        })
                })
        };
        let auto_memory = || self.auto_memory_enabled_in(target.cwd.as_deref());
        let (enabled, enabled_source) = match own.and_then(|p| p.enabled) {
            _ if !auto_memory() => (false, AUTO_MEMORY_OFF_SOURCE),
            Some(enabled) => (enabled, "engram"),
            None => match claude() {
                Some(enabled) => (enabled, "claude"),
                None => (false, "default"),
            },
        };
        DreamSettings {
            enabled,
            enabled_source: enabled_source.to_owned(),
            policy: own.and_then(|p| p.policy).unwrap_or_default(),
            min_hours: config.dream.min_hours.unwrap_or(DEFAULT_MIN_HOURS),
            min_sessions: config.dream.min_sessions.unwrap_or(DEFAULT_MIN_SESSIONS),
            token_budget: config.dream.token_budget.unwrap_or(DEFAULT_TOKEN_BUDGET),
            background: config.dream.background.unwrap_or(true),
            scan_throttle: config.dream.scan_throttle(),
        }
    }

    /// The gates of `target` now, read only (`engram dream status`), and when a running
    /// scheduler next looks at it.
    pub fn dream_status(&self, target: &DreamTarget) -> Result<DreamStatus> {
        self.recover_crashed_dream(target)?;
        let config = self.load_config()?;
        let settings = self.dream_settings_in(&config, target);
        let budget = self.dream_budget(&config, &LlmOverrides::default())?;
        let mut status =
            self.check_gates(target, &settings, None, budget, gates::CheckMode::Inspect)?;
        status.next_check = self.next_dream_check(&status).map(iso_time);
        Ok(status)
    }

    /// Today's tokens against the daily budget, when a dream under `config` and `overrides`
    /// would use a model and a budget is set (what the budget gate looks at); `None` otherwise.
    /// The tray asks it to offer the offline dream once the budget is reached.
    pub fn dream_budget(
        &self,
        config: &Config,
        overrides: &LlmOverrides,
    ) -> Result<Option<BudgetStatus>> {
        let remote = self.llm_settings(config, overrides).provider.is_remote();
        if !remote || config.budget.daily_tokens.is_none() {
            return Ok(None);
        }
        self.budget_in(config).map(Some)
    }

    /// The gates of `target` under `settings` at the engine's now; `current_session` is never
    /// counted; `budget` is [`Engine::dream_budget`]'s.
    pub(crate) fn check_gates(
        &self,
        target: &DreamTarget,
        settings: &DreamSettings,
        current_session: Option<&str>,
        budget: Option<BudgetStatus>,
        mode: gates::CheckMode,
    ) -> Result<DreamStatus> {
        let throttle_file = self.dream_state_dir(&target.project)?.join("last-scan");
        gates::check(
            gates::GateInputs {
                project: &target.project,
                memory_dir: &target.memory_dir,
                transcripts_dir: &target.transcripts_dir,
                config: gates::GateConfig {
                    enabled: settings.enabled,
                    min_hours: settings.min_hours,
                    min_sessions: settings.min_sessions,
                    scan_throttle: settings.scan_throttle,
                },
                now: self.clock().now(),
                current_session,
                throttle_file: &throttle_file,
                budget,
            },
            mode,
        )
    }

    /// Sets a project's own dream switch and policy in `config.toml` (`None` leaves a value as
    /// it is) and returns the settings as they now apply.
    pub fn set_dream_settings(
        &self,
        target: &DreamTarget,
        enabled: Option<bool>,
        policy: Option<DreamPolicy>,
    ) -> Result<DreamSettings> {
        let mut config = self.load_config()?;
        let entry = config
            .dream
            .projects
            .entry(target.project.clone())
            .or_default();
        if enabled.is_some() {
            entry.enabled = enabled;
        }
        if policy.is_some() {
            entry.policy = policy;
        }
        self.save_config(&config)?;
        Ok(self.dream_settings_in(&config, target))
    }

    /// Pauses or resumes the background scheduler.
    pub fn set_background_dreams(&self, on: bool) -> Result<()> {
        let mut config = self.load_config()?;
        config.dream.background = Some(on);
        self.save_config(&config)
    }

    /// The advisory lock Engram processes take turns on while one of them holds a memory dir's
    /// `.consolidate-lock`: one per memory dir (a repo's worktrees share one).
    pub(crate) fn dream_lock_file(&self, memory_dir: &Path) -> PathBuf {
        let key = crate::disk::content_hash(
            crate::disk::resolved_path(memory_dir)
                .to_string_lossy()
                .as_bytes(),
        );
        self.engram_home()
            .join("locks")
            .join(format!("dream-{}.lock", &key[..16]))
    }

    /// Engram's own per-project dream state dir (throttle, the running task, past runs): in its
    /// data dir, never in the memory dir.
    pub(crate) fn dream_state_dir(&self, project: &str) -> Result<PathBuf> {
        if project.is_empty() || project.contains(['/', '\\', '\0']) || project == ".." {
            return Err(Error::InvalidInput(format!(
                "{project}: not a project name"
            )));
        }
        Ok(self.engram_home().join("dream").join(project))
    }
}
