//! The gates a dream passes, cheapest first, exactly as Claude Code's auto-dream checks them
//! (FORMATS.md §8): enabled → hours since the last consolidation (the lock's mtime; no lock means
//! never) ≥ `min_hours` → the session-scan throttle (10 minutes, kept in Engram's data dir) →
//! sessions touched since (`<uuid>.jsonl` in the project's transcripts dir, not `agent-*`, the
//! current session excluded) ≥ `min_sessions` → the lock is free. Engram adds one gate after
//! `enabled`: a model dream waits while the daily token budget is reached (`[budget]`; see
//! [`crate::llm::usage`]) — it holds for the whole day, so it is named before gates that open
//! sooner, and the scheduler stops there without counting sessions.
//!
//! Two modes: [`CheckMode::Schedule`] is the scheduler's — it stops at the first closed gate, as
//! Claude Code does, and records the scan time whenever it counted sessions; [`CheckMode::Inspect`]
//! is `engram dream status` — it writes nothing and fills in every number, so the person sees
//! all of them, naming the first closed gate.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::lock::{self, epoch_ms, LockInfo};
use crate::disk;
use crate::error::{Error, Result};
use crate::llm::BudgetStatus;

/// The thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct GateConfig {
    pub enabled: bool,
    pub min_hours: f64,
    pub min_sessions: usize,
    pub scan_throttle: Duration,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            enabled: false,
            min_hours: super::DEFAULT_MIN_HOURS,
            min_sessions: super::DEFAULT_MIN_SESSIONS,
            scan_throttle: Duration::from_secs(10 * 60),
        }
    }
}

/// The first gate that is closed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockedBy {
    Disabled,
    Time,
    Throttle,
    Sessions,
    Lock,
    /// The daily token budget is reached and the dream would use a model.
    Budget,
}

impl BlockedBy {
    /// The gate in words, with its numbers.
    pub fn describe(self, status: &DreamStatus) -> String {
        match self {
            BlockedBy::Disabled => "dreams are off for this project".to_owned(),
            BlockedBy::Time => format!(
                "{:.0} h of {:.0} since the last consolidation",
                status.hours_since.unwrap_or(0.0).floor(),
                status.min_hours
            ),
            BlockedBy::Throttle => format!(
                "sessions were counted less than {} ago",
                humantime::format_duration(status.scan_throttle)
            ),
            BlockedBy::Sessions => format!(
                "{} of {} sessions since the last consolidation",
                status.sessions_since, status.min_sessions
            ),
            BlockedBy::Lock => match status.lock.pid {
                Some(pid) => format!("another dream holds the lock (pid {pid})"),
                None => "another dream holds the lock".to_owned(),
            },
            BlockedBy::Budget => match &status.budget {
                Some(budget) => format!("{}; an offline dream can run", budget.reason()),
                None => "the daily token budget is reached".to_owned(),
            },
        }
    }
}

/// A project's gates now, as `engram dream status --json` prints them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamStatus {
    pub project: String,
    pub memory_dir: std::path::PathBuf,
    pub enabled: bool,
    /// Hours since the last consolidation; `None`: never consolidated.
    pub hours_since: Option<f64>,
    pub min_hours: f64,
    pub sessions_since: usize,
    pub min_sessions: usize,
    pub lock: LockInfo,
    pub blocked_by: Option<BlockedBy>,
    pub due: bool,
    /// Today's tokens against the daily budget, when the dream would use a model and a budget
    /// is set; `None` otherwise.
    pub budget: Option<BudgetStatus>,
    /// When a running scheduler (the app's) next looks at this project and can count its
    /// sessions (ISO 8601); `None` when no scheduler runs.
    pub next_check: Option<String>,
    /// How often sessions are counted.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub scan_throttle: Duration,
    /// When sessions were last counted (ms since the epoch).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub last_scan_ms: Option<i64>,
}

impl DreamStatus {
    /// When the scheduler looks next, in words: "next check in 4 min", or that none runs.
    pub fn next_check_words(&self, now: SystemTime) -> String {
        let next = self
            .next_check
            .as_deref()
            .and_then(|iso| chrono::DateTime::parse_from_rfc3339(iso).ok())
            .map(SystemTime::from);
        match next {
            Some(next) => {
                let secs = next.duration_since(now).map_or(0, |d| d.as_secs());
                match secs {
                    0 => "next check now".to_owned(),
                    1..=119 => format!("next check in {secs} s"),
                    _ => format!("next check in {} min", secs.div_ceil(60)),
                }
            }
            None => "no background scheduler running (the app, or `engram dream run --if-due \
                     --all-projects` from cron)"
                .to_owned(),
        }
    }
}

/// How to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Read only; every number filled in.
    Inspect,
    /// The scheduler's: stop at the first closed gate; record the scan time.
    Schedule,
}

/// What the gates look at.
#[derive(Debug, Clone)]
pub struct GateInputs<'a> {
    pub project: &'a str,
    pub memory_dir: &'a Path,
    pub transcripts_dir: &'a Path,
    pub config: GateConfig,
    pub now: SystemTime,
    /// The session asking (a hook's): never counted.
    pub current_session: Option<&'a str>,
    /// Where the last scan time is kept (Engram's data dir).
    pub throttle_file: &'a Path,
    /// The daily budget, when the dream would use a model and a budget is set.
    pub budget: Option<BudgetStatus>,
}

/// Checks the gates of one project.
pub fn check(inputs: GateInputs<'_>, mode: CheckMode) -> Result<DreamStatus> {
    let config = &inputs.config;
    let lock = lock::inspect(inputs.memory_dir)?;
    let now_ms = epoch_ms(inputs.now);
    let last_ms = lock.mtime_ms.filter(|_| lock.exists);
    let hours_since = last_ms.map(|last| (now_ms - last).max(0) as f64 / 3_600_000.0);
    let mut status = DreamStatus {
        project: inputs.project.to_owned(),
        memory_dir: inputs.memory_dir.to_path_buf(),
        enabled: config.enabled,
        hours_since,
        min_hours: config.min_hours,
        sessions_since: 0,
        min_sessions: config.min_sessions,
        lock,
        blocked_by: None,
        due: false,
        budget: inputs.budget.clone(),
        next_check: None,
        scan_throttle: config.scan_throttle,
        last_scan_ms: read_scan(inputs.throttle_file),
    };
    let blocked = |gate: BlockedBy, status: &mut DreamStatus| {
        status.blocked_by.get_or_insert(gate);
    };
    let stop = mode == CheckMode::Schedule;
    if !config.enabled {
        blocked(BlockedBy::Disabled, &mut status);
        if stop {
            return Ok(status);
        }
    }
    if inputs.budget.as_ref().is_some_and(|b| b.reached) {
        blocked(BlockedBy::Budget, &mut status);
        if stop {
            return Ok(status);
        }
    }
    if hours_since.is_some_and(|h| h < config.min_hours) {
        blocked(BlockedBy::Time, &mut status);
        if stop {
            return Ok(status);
        }
    }
    if status
        .last_scan_ms
        .is_some_and(|scan| now_ms - scan < config.scan_throttle.as_millis() as i64)
    {
        blocked(BlockedBy::Throttle, &mut status);
        if stop {
            return Ok(status);
        }
    }
    status.sessions_since = sessions_touched_since(
        inputs.transcripts_dir,
        last_ms.unwrap_or(0),
        inputs.current_session,
    )?
    .len();
    if stop {
        record_scan(inputs.throttle_file, inputs.now)?;
    }
    if status.sessions_since < config.min_sessions {
        blocked(BlockedBy::Sessions, &mut status);
        if stop {
            return Ok(status);
        }
    }
    if status.lock.is_held(inputs.now) {
        blocked(BlockedBy::Lock, &mut status);
    }
    status.due = status.blocked_by.is_none();
    Ok(status)
}

/// The sessions whose transcript (`<uuid>.jsonl`, directly in `transcripts_dir`, not `agent-*`)
/// changed after `since_ms`, but `exclude`. One `stat` per entry (the dirent's metadata), no
/// file opened: this runs over thousands of transcripts. A missing dir has none.
pub fn sessions_touched_since(
    transcripts_dir: &Path,
    since_ms: i64,
    exclude: Option<&str>,
) -> Result<Vec<String>> {
    let entries = match fs::read_dir(transcripts_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(transcripts_dir, e)),
    };
    let mut sessions = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if !is_uuid(id) || exclude.is_some_and(|x| x.eq_ignore_ascii_case(id)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_file() && meta.modified().is_ok_and(|m| epoch_ms(m) > since_ms) {
            sessions.push(id.to_owned());
        }
    }
    sessions.sort();
    Ok(sessions)
}

/// 8-4-4-4-12 hex digits, any case.
fn is_uuid(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

fn read_scan(path: &Path) -> Option<i64> {
    disk::read_text(path).ok()?.trim().parse().ok()
}

/// Records that sessions were counted at `now`.
pub fn record_scan(path: &Path, now: SystemTime) -> Result<()> {
    disk::atomic_write(path, epoch_ms(now).to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use std::fs::{File, FileTimes};
    use std::path::PathBuf;
    use std::time::UNIX_EPOCH;

    use super::*;

    const NOW: u64 = 1_800_000_000;
    const UUID: [&str; 6] = [
        "11111111-1111-1111-1111-111111111111",
        "22222222-2222-2222-2222-222222222222",
        "33333333-3333-3333-3333-333333333333",
        "44444444-4444-4444-4444-444444444444",
        "55555555-5555-5555-5555-555555555555",
        "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
    ];

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    struct Project {
        _temp: tempfile::TempDir,
        memory: PathBuf,
        transcripts: PathBuf,
        throttle: PathBuf,
    }

    fn project() -> Project {
        let temp = tempfile::tempdir().expect("temp");
        let transcripts = temp.path().join("projects/-p");
        let memory = transcripts.join("memory");
        fs::create_dir_all(&memory).expect("mkdir");
        let throttle = temp.path().join("engram/dream/-p/last-scan");
        Project {
            _temp: temp,
            memory,
            transcripts,
            throttle,
        }
    }

    fn touch(path: &Path, secs: u64) {
        if !path.exists() {
            fs::write(path, "{}\n").expect("write");
        }
        File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_times(FileTimes::new().set_modified(at(secs))))
            .expect("mtime");
    }

    fn inputs<'a>(p: &'a Project, enabled: bool) -> GateInputs<'a> {
        GateInputs {
            project: "-p",
            memory_dir: &p.memory,
            transcripts_dir: &p.transcripts,
            config: GateConfig {
                enabled,
                ..GateConfig::default()
            },
            now: at(NOW),
            current_session: Some(UUID[4]),
            throttle_file: &p.throttle,
            budget: None,
        }
    }

    fn budget(tokens_today: u64, daily_tokens: u64) -> BudgetStatus {
        BudgetStatus {
            day: "2030-03-14".into(),
            tokens_today,
            daily_tokens: Some(daily_tokens),
            reached: tokens_today >= daily_tokens,
        }
    }

    #[test]
    fn a_reached_budget_closes_the_gate_after_enabled_and_the_scheduler_counts_nothing() {
        let p = project();
        for id in &UUID[..5] {
            touch(&p.transcripts.join(format!("{id}.jsonl")), NOW - 60);
        }
        let mut under = inputs(&p, true);
        under.current_session = None;
        under.budget = Some(budget(999, 1000));
        let status = check(under.clone(), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, None, "under the budget: due");
        assert_eq!(status.budget, Some(budget(999, 1000)));

        let mut over = under.clone();
        over.budget = Some(budget(1000, 1000));
        let status = check(over.clone(), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Budget));
        assert!(!status.due);
        assert_eq!(
            status.sessions_since, 5,
            "inspect still fills in every number"
        );
        assert_eq!(
            BlockedBy::Budget.describe(&status),
            "daily token budget reached (1,000 of 1,000 tokens today); an offline dream can run"
        );
        assert_eq!(
            serde_json::to_value(&status).expect("json")["blockedBy"],
            "budget"
        );

        let status = check(over, CheckMode::Schedule).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Budget));
        assert!(
            !p.throttle.exists(),
            "the scheduler stops before counting sessions: no scan recorded"
        );
        let mut off = inputs(&p, false);
        off.budget = Some(budget(5000, 1000));
        assert_eq!(
            check(off, CheckMode::Inspect).expect("check").blocked_by,
            Some(BlockedBy::Disabled),
            "a dream that is off says so first"
        );
    }

    #[test]
    fn sessions_are_uuid_transcripts_newer_than_the_lock_but_the_current_one() {
        let p = project();
        for (i, id) in UUID.iter().enumerate() {
            touch(
                &p.transcripts.join(format!("{id}.jsonl")),
                NOW - 100 + i as u64,
            );
        }
        touch(&p.transcripts.join("agent-1234.jsonl"), NOW);
        touch(&p.transcripts.join("notes.jsonl"), NOW);
        touch(
            &p.transcripts
                .join(format!("{}.jsonl", "99999999-9999-9999-9999-999999999999")),
            NOW - 5000,
        );
        fs::create_dir_all(
            p.transcripts
                .join(format!("{}.jsonl", "88888888-8888-8888-8888-888888888888")),
        )
        .expect("dir");
        let found =
            sessions_touched_since(&p.transcripts, ((NOW - 1000) * 1000) as i64, Some(UUID[4]))
                .expect("scan");
        assert_eq!(
            found,
            vec![UUID[0], UUID[1], UUID[2], UUID[3], UUID[5]],
            "uuid names only (an uppercase one too), newer than the lock, not the current one"
        );
        assert!(
            sessions_touched_since(&p.transcripts.join("missing"), 0, None)
                .expect("missing")
                .is_empty()
        );
    }

    #[test]
    fn every_gate_blocks_in_order() {
        let p = project();
        let status = check(inputs(&p, false), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Disabled));
        assert_eq!(status.hours_since, None, "no lock: never consolidated");

        // Consolidated 3 h ago.
        fs::write(p.memory.join(lock::LOCK_FILE), "").expect("lock");
        touch(&p.memory.join(lock::LOCK_FILE), NOW - 3 * 3600);
        let status = check(inputs(&p, true), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Time));
        assert!((status.hours_since.expect("hours") - 3.0).abs() < 1e-9);

        // 25 h ago, 2 sessions since.
        touch(&p.memory.join(lock::LOCK_FILE), NOW - 25 * 3600);
        for id in &UUID[..2] {
            touch(&p.transcripts.join(format!("{id}.jsonl")), NOW - 60);
        }
        let status = check(inputs(&p, true), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Sessions));
        assert_eq!(status.sessions_since, 2);
        assert!(!p.throttle.exists(), "inspecting writes nothing");

        // The scheduler counts, records the scan, and is then throttled for 10 minutes.
        let status = check(inputs(&p, true), CheckMode::Schedule).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Sessions));
        assert!(p.throttle.exists());
        let status = check(inputs(&p, true), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Throttle));
        assert_eq!(status.sessions_since, 2, "inspect still counts");
        let mut later = inputs(&p, true);
        later.now = at(NOW + 11 * 60);
        assert_eq!(
            check(later, CheckMode::Inspect).expect("check").blocked_by,
            Some(BlockedBy::Sessions)
        );

        // Enough sessions, but a live process holds a fresh lock.
        for id in &UUID[..4] {
            touch(&p.transcripts.join(format!("{id}.jsonl")), NOW - 60);
        }
        touch(&p.transcripts.join(format!("{}.jsonl", UUID[5])), NOW - 60);
        let mut later = inputs(&p, true);
        later.now = at(NOW + 11 * 60);
        let status = check(later.clone(), CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, None);
        assert!(status.due);
        assert_eq!(status.sessions_since, 5, "the current session is excluded");

        // The sessions are newer than this lock too.
        for id in UUID.iter().take(4).chain([&UUID[5]]) {
            touch(&p.transcripts.join(format!("{id}.jsonl")), NOW + 630);
        }
        let mut holder = crate::testing::child::live();
        fs::write(p.memory.join(lock::LOCK_FILE), holder.id().to_string()).expect("lock");
        touch(&p.memory.join(lock::LOCK_FILE), NOW + 10 * 60);
        let mut held = inputs(&p, true);
        held.now = at(NOW + 11 * 60);
        held.config.min_hours = 0.0;
        let status = check(held, CheckMode::Inspect).expect("check");
        assert_eq!(status.blocked_by, Some(BlockedBy::Lock));
        assert!(!status.due);
        holder.kill().expect("kill");
        holder.wait().expect("wait");
        let json = serde_json::to_value(&status).expect("json");
        for key in [
            "project",
            "memoryDir",
            "enabled",
            "hoursSince",
            "minHours",
            "sessionsSince",
            "minSessions",
            "lock",
            "blockedBy",
            "due",
        ] {
            assert!(json.get(key).is_some(), "{key} missing: {json}");
        }
        for key in ["path", "exists", "pid", "alive", "mtime"] {
            assert!(
                json["lock"].get(key).is_some(),
                "lock.{key} missing: {json}"
            );
        }
        assert_eq!(json["blockedBy"], "lock");
    }
}
