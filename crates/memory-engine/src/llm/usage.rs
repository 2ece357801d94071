//! Every model call's tokens, and the daily budget they are held to.
//!
//! Contract:
//! - **The log.** One JSON line per answered call in `<engram home>/usage/YYYY-MM-DD.jsonl`,
//!   named by the call's *local* date: `time` (ISO, UTC), `project`, `job`, `provider`, `model`
//!   and the four token counts. Append-only; each line is written whole, in one write, under an
//!   exclusive lock on the file; the dir is 0700 and the file 0600 (which projects a person works
//!   on, and when, is nobody else's business). A line that cannot be read (a crash mid-write,
//!   an edit by hand) is skipped and reported, never fatal.
//! - **No call site can forget it.** [`Engine::llm_client_for`] is the only way to a model
//!   client, and it hands out [`Metered`] clients, built for one [`Caller`] (the job and the
//!   project): the wrapper checks the budget before and logs after every `complete`. A server's
//!   sentence vectors (`[llm] embeddings = "openai"`) are reached the same way, through
//!   [`Engine::embedder_in`] and [`super::embeddings::MeteredEmbeddings`], logged under the job
//!   that wanted them. A log that cannot be written fails the call (naming the file): spending
//!   that is not counted would slip past the budget.
//! - **The budget**, `[budget] daily_tokens` (absent: none). When today's total (input, output,
//!   cache creation and cache read tokens of every job and project) is at or over it, every
//!   metered call is refused with [`Error::BudgetReached`]. The jobs look first
//!   ([`ModelClient::over_budget`]) so they can do without: a dream is skipped
//!   (`blockedBy: "budget"`, even forced), extraction and session memory run offline and say so,
//!   recall ranks locally or offline and says so; a server's vectors are refused too (recall
//!   then ranks lexically and says so, a dream and extraction find near-duplicates by their words
//!   only). A call that starts under the budget may finish over it: what a call spends is only
//!   known when it answers, and a job's calls are checked one by one. The connection test is
//!   logged but not held to the budget (a person checking settings is not model work).
//! - **Reading.** [`Engine::usage_report`] sums the log per day, project, job, provider and model;
//!   [`Engine::budget_status`] is today's total against the budget — kept per process and
//!   brought up to date by reading only what was appended since the last look, so checking it
//!   before every call costs a `stat` and a few lines.
//!
//! [`ModelClient::over_budget`]: super::ModelClient::over_budget

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use chrono::{Days, Local, NaiveDate};
use serde::{Deserialize, Serialize};

use super::{BoxFuture, CancellationToken, Client, ProviderKind, Request, Response, Usage};
use crate::config::Config;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};

/// The share of the budget at which the app notifies, once a day.
pub const NOTICE_PERCENT: u64 = 80;

/// What Engram asked a model to do.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ModelJob {
    /// Choosing the memories a prompt gets.
    Recall,
    Dream,
    Extract,
    SessionMemory,
    /// Proposing the merge of an agent's updated team snapshot.
    Merge,
    /// Settings' "Test connection".
    ConnectionTest,
}

impl ModelJob {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelJob::Recall => "recall",
            ModelJob::Dream => "dream",
            ModelJob::Extract => "extract",
            ModelJob::SessionMemory => "sessionMemory",
            ModelJob::Merge => "merge",
            ModelJob::ConnectionTest => "connectionTest",
        }
    }

    /// Whether calls of this job stop when the budget is reached.
    fn held_to_budget(self) -> bool {
        self != ModelJob::ConnectionTest
    }
}

/// Who is calling: the job, and the project it works for (the project's folder name under
/// `<claude home>/projects/`; empty when the call is for no project).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub job: ModelJob,
    pub project: String,
}

impl Caller {
    pub fn new(job: ModelJob, project: impl Into<String>) -> Caller {
        Caller {
            job,
            project: project.into(),
        }
    }
}

/// One answered call, as a line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub time: String,
    pub project: String,
    /// A [`ModelJob`] name; read as text so a log written by a newer Engram still adds up.
    pub job: String,
    pub provider: String,
    pub model: String,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
}

impl UsageRecord {
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens
    }
}

/// The calls of one day, project, job, provider and model, summed (`engram usage --json`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The local date, `YYYY-MM-DD`.
    pub day: String,
    pub project: String,
    pub job: String,
    pub provider: String,
    pub model: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub input_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub output_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_creation_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_read_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub calls: u64,
    /// The four counts summed: what the budget counts.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total_tokens: u64,
}

/// Today's spending against the budget.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetStatus {
    /// The local date, `YYYY-MM-DD`.
    pub day: String,
    /// Every token of every model call today.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tokens_today: u64,
    /// `[budget] daily_tokens`; `None`: no budget.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub daily_tokens: Option<u64>,
    /// Whether model work stops for the rest of the day.
    pub reached: bool,
}

impl BudgetStatus {
    fn new(day: NaiveDate, tokens_today: u64, daily_tokens: Option<u64>) -> BudgetStatus {
        BudgetStatus {
            day: day.format("%Y-%m-%d").to_string(),
            tokens_today,
            daily_tokens,
            reached: daily_tokens.is_some_and(|limit| tokens_today >= limit),
        }
    }

    /// The error a refused call returns.
    pub fn error(&self) -> Error {
        Error::BudgetReached {
            spent: self.tokens_today,
            limit: self.daily_tokens.unwrap_or(0),
        }
    }

    /// Why model work fell back, for reports: "daily token budget reached (12,345 of 10,000
    /// tokens today)".
    pub fn reason(&self) -> String {
        budget_reason(self.tokens_today, self.daily_tokens.unwrap_or(0))
    }

    /// Today's share of the budget, in percent (`None` without a budget).
    pub fn percent(&self) -> Option<u64> {
        self.daily_tokens
            .map(|limit| (self.tokens_today.saturating_mul(100)) / limit.max(1))
    }
}

/// What [`Engine::usage_report`] read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Newest day first; within a day by project, job, provider and model.
    pub rows: Vec<UsageRow>,
    /// Lines that could not be read, as `file:line: why`.
    pub skipped: Vec<String>,
    pub budget: BudgetStatus,
}

/// Why model work fell back: "daily token budget reached (12,345 of 10,000 tokens today)".
pub fn budget_reason(spent: u64, limit: u64) -> String {
    format!(
        "daily token budget reached ({} of {} tokens today)",
        format_tokens(spent),
        format_tokens(limit)
    )
}

/// `12345` → `12,345`.
pub fn format_tokens(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Each usage file's total as this process last read it, by path: how far it was read and what
/// it summed. Keyed by the file, so it is right for every engine of the process whatever its
/// data dir; it holds one entry per file read (a day's file, per data dir).
fn tallies() -> &'static Mutex<HashMap<PathBuf, Counted>> {
    static TALLIES: OnceLock<Mutex<HashMap<PathBuf, Counted>>> = OnceLock::new();
    TALLIES.get_or_init(Mutex::default)
}

#[derive(Debug)]
struct Counted {
    /// The file's identity, so one replaced under the same name is read again from the start.
    identity: (u64, u64),
    /// Bytes read so far: always the end of a whole line.
    offset: u64,
    tokens: u64,
}

fn identity(meta: &fs::Metadata) -> (u64, u64) {
    crate::platform::fs::file_identity(meta)
}

impl Engine {
    /// `<engram home>/usage`.
    pub fn usage_dir(&self) -> PathBuf {
        self.engram_home().join("usage")
    }

    /// The log of the local date `day`.
    fn usage_file(&self, day: NaiveDate) -> PathBuf {
        self.usage_dir()
            .join(format!("{}.jsonl", day.format("%Y-%m-%d")))
    }

    /// The local date now, by the engine's clock.
    fn today(&self) -> NaiveDate {
        chrono::DateTime::<Local>::from(self.clock().now()).date_naive()
    }

    /// Appends one answered call to today's log (see the module contract).
    pub fn record_usage(
        &self,
        caller: &Caller,
        provider: ProviderKind,
        model: &str,
        usage: &Usage,
    ) -> Result<()> {
        use fs4::fs_std::FileExt;
        let now = self.clock().now();
        let record = UsageRecord {
            time: crate::staleness::iso_time(now),
            project: caller.project.clone(),
            job: caller.job.as_str().to_owned(),
            provider: provider.as_str().to_owned(),
            model: model.to_owned(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_tokens: usage.cache_creation_tokens,
            cache_read_tokens: usage.cache_read_tokens,
        };
        let mut line = serde_json::to_string(&record)
            .map_err(|e| Error::InvalidInput(format!("cannot encode a usage record: {e}")))?;
        line.push('\n');
        let dir = self.usage_dir();
        create_private_dir(&dir)?;
        let path = self.usage_file(chrono::DateTime::<Local>::from(now).date_naive());
        let mut file = open_append(&path)?;
        file.lock_exclusive().at(&path)?;
        // One write of a whole line at the end (O_APPEND), under the lock: readers see whole
        // lines or none of one, and two processes never interleave.
        let written = file.write_all(line.as_bytes()).at(&path);
        let _ = FileExt::unlock(&file);
        written
    }

    /// [`Error::BudgetReached`] when today's tokens are at or over `daily_tokens` (`None`: no
    /// budget). Blocking: reads what was appended to today's log since the last look.
    pub(crate) fn refuse_over_budget(&self, daily_tokens: Option<u64>) -> Result<()> {
        if daily_tokens.is_none() {
            return Ok(());
        }
        let today = self.today();
        let status = BudgetStatus::new(today, self.tokens_on(today)?, daily_tokens);
        if status.reached {
            return Err(status.error());
        }
        Ok(())
    }

    /// Today's tokens against `config`'s budget.
    pub fn budget_in(&self, config: &Config) -> Result<BudgetStatus> {
        let today = self.today();
        let tokens = self.tokens_on(today)?;
        Ok(BudgetStatus::new(today, tokens, config.budget.daily_tokens))
    }

    /// Today's tokens against the budget in `config.toml`.
    pub fn budget_status(&self) -> Result<BudgetStatus> {
        self.budget_in(&self.load_config()?)
    }

    /// Sets (`Some`) or removes (`None`) the daily budget in `config.toml`; returns today's
    /// status under it. A budget of 0 tokens is refused: "no model work" is the offline
    /// provider.
    pub fn set_daily_budget(&self, daily_tokens: Option<u64>) -> Result<BudgetStatus> {
        if daily_tokens == Some(0) {
            return Err(Error::InvalidInput(
                "a daily budget of 0 tokens allows no model call: choose the offline provider \
                 instead, or a budget above 0"
                    .to_owned(),
            ));
        }
        let mut config = self.load_config()?;
        config.budget.daily_tokens = daily_tokens;
        self.save_config(&config)?;
        self.budget_in(&config)
    }

    /// Once a local day, when today's tokens first reach [`NOTICE_PERCENT`] % of the budget:
    /// the status to tell the person about (the app's notification), remembered in
    /// `<engram home>/usage/notified` so it is told once a day however many processes look.
    /// `None` otherwise.
    pub fn budget_notice_due(&self) -> Result<Option<BudgetStatus>> {
        let status = self.budget_status()?;
        if status.percent().is_none_or(|p| p < NOTICE_PERCENT) {
            return Ok(None);
        }
        let marker = self.usage_dir().join("notified");
        let last = disk::read_text(&marker).ok();
        if last.as_deref().map(str::trim) == Some(status.day.as_str()) {
            return Ok(None);
        }
        create_private_dir(&self.usage_dir())?;
        disk::atomic_write(&marker, status.day.as_bytes())?;
        Ok(Some(status))
    }

    /// The tokens logged on the local date `day` (what this process read of the file before is not read again; see [`tallies`]).
    fn tokens_on(&self, day: NaiveDate) -> Result<u64> {
        let path = self.usage_file(day);
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let mut tallies = tallies().lock().unwrap_or_else(PoisonError::into_inner);
        let counted = tallies.entry(path.clone()).or_insert(Counted {
            identity: identity(&meta),
            offset: 0,
            tokens: 0,
        });
        if counted.identity != identity(&meta) || counted.offset > meta.len() {
            *counted = Counted {
                identity: identity(&meta),
                offset: 0,
                tokens: 0,
            };
        }
        if counted.offset < meta.len() {
            let mut file = fs::File::open(&path).at(&path)?;
            file.seek(SeekFrom::Start(counted.offset)).at(&path)?;
            let mut added = Vec::new();
            file.read_to_end(&mut added).at(&path)?;
            // A line still being written is left for the next look.
            let whole = added.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            for line in added[..whole].split(|&b| b == b'\n') {
                if let Ok(record) = serde_json::from_slice::<UsageRecord>(line) {
                    counted.tokens += record.total_tokens();
                }
            }
            counted.offset += whole as u64;
        }
        Ok(counted.tokens)
    }

    /// The log of the last `days` local days (today included), summed per day, project, job,
    /// provider and model, newest day first; today's budget status beside it.
    pub fn usage_report(&self, days: u32) -> Result<UsageReport> {
        let today = self.today();
        type Key = (String, String, String, String, String);
        let mut sums: BTreeMap<Key, UsageRow> = BTreeMap::new();
        let mut skipped = Vec::new();
        // The files there are, not every date asked for: `--days 100000` costs one listing.
        let oldest = today
            .checked_sub_days(Days::new(u64::from(days.max(1) - 1)))
            .unwrap_or(NaiveDate::MIN);
        let dir = self.usage_dir();
        let mut logged: Vec<NaiveDate> = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .flatten()
                .filter_map(|entry| {
                    let name = entry.file_name();
                    let day = name.to_str()?.strip_suffix(".jsonl")?;
                    NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()
                })
                .filter(|day| (oldest..=today).contains(day))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        logged.sort_unstable();
        for day in logged {
            let path = self.usage_file(day);
            let text = match fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&path, e)),
            };
            let day = day.format("%Y-%m-%d").to_string();
            for (number, line) in text.split(|&b| b == b'\n').enumerate() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let record = match serde_json::from_slice::<UsageRecord>(line) {
                    Ok(record) => record,
                    Err(e) => {
                        skipped.push(format!("{}:{}: {e}", path.display(), number + 1));
                        continue;
                    }
                };
                let key = (
                    day.clone(),
                    record.project.clone(),
                    record.job.clone(),
                    record.provider.clone(),
                    record.model.clone(),
                );
                let row = sums.entry(key).or_insert_with(|| UsageRow {
                    day: day.clone(),
                    project: record.project.clone(),
                    job: record.job.clone(),
                    provider: record.provider.clone(),
                    model: record.model.clone(),
                    input_tokens: 0,
                    output_tokens: 0,
                    cache_creation_tokens: 0,
                    cache_read_tokens: 0,
                    calls: 0,
                    total_tokens: 0,
                });
                row.input_tokens += record.input_tokens;
                row.output_tokens += record.output_tokens;
                row.cache_creation_tokens += record.cache_creation_tokens;
                row.cache_read_tokens += record.cache_read_tokens;
                row.total_tokens += record.total_tokens();
                row.calls += 1;
            }
        }
        let mut rows: Vec<UsageRow> = sums.into_values().collect();
        // Newest day first; the map already orders the rest.
        rows.sort_by(|a, b| b.day.cmp(&a.day));
        Ok(UsageReport {
            rows,
            skipped,
            budget: self.budget_status()?,
        })
    }

    /// `client` wrapped so every call is checked against the budget and logged for `caller`;
    /// `daily_tokens` is the budget (`None`: none).
    pub(crate) fn metered(
        &self,
        client: Arc<dyn Client>,
        caller: Caller,
        daily_tokens: Option<u64>,
    ) -> Arc<dyn Client> {
        Arc::new(Metered {
            inner: client,
            engine: self.clone(),
            daily_tokens: daily_tokens.filter(|_| caller.job.held_to_budget()),
            caller,
        })
    }
}

fn create_private_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).at(dir)?;
    crate::platform::fs::set_mode(dir, 0o700).at(dir)
}

/// Opens `path` for appending, created 0600 (never wider, whatever the umask).
fn open_append(path: &Path) -> Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.create(true).append(true);
    crate::platform::fs::create_mode(&mut options, 0o600);
    options.open(path).at(path)
}

/// A client whose every call is held to the daily budget and logged (see the module contract).
#[derive(Debug)]
pub struct Metered {
    inner: Arc<dyn Client>,
    engine: Engine,
    caller: Caller,
    daily_tokens: Option<u64>,
}

impl Metered {
    async fn complete_metered(
        &self,
        request: &Request,
        cancel: &CancellationToken,
    ) -> Result<Response> {
        if self.daily_tokens.is_some() {
            let engine = self.engine.clone();
            let daily_tokens = self.daily_tokens;
            blocking(move || engine.refuse_over_budget(daily_tokens)).await?;
        }
        let response = self.inner.complete(request, cancel).await?;
        let engine = self.engine.clone();
        let caller = self.caller.clone();
        let provider = self.inner.provider();
        // The model that answered, as the server names it: that is what is billed.
        let model = if response.model.is_empty() {
            self.inner.model().to_owned()
        } else {
            response.model.clone()
        };
        let usage = response.usage;
        blocking(move || engine.record_usage(&caller, provider, &model, &usage)).await?;
        Ok(response)
    }
}

impl Client for Metered {
    fn provider(&self) -> ProviderKind {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Response>> {
        Box::pin(self.complete_metered(request, cancel))
    }
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::InvalidInput(format!("usage log worker failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::clock::FixedClock;
    use crate::environment::Environment;
    use crate::llm::{ContentBlock, StopReason};

    /// Noon, local time, on 2030-03-14: far from midnight whatever the machine's zone.
    fn noon() -> SystemTime {
        let local = NaiveDate::from_ymd_opt(2030, 3, 14)
            .and_then(|d| d.and_hms_opt(12, 0, 0))
            .and_then(|t| t.and_local_timezone(Local).single())
            .expect("a local noon");
        SystemTime::from(local)
    }

    fn engine(home: &Path, clock: &FixedClock) -> Engine {
        Engine::builder(Environment::empty())
            .engram_home(home)
            .clock(Arc::new(clock.clone()))
            .build()
    }

    fn usage(input: u64, output: u64, creation: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_tokens: creation,
            cache_read_tokens: read,
            calls: 1,
        }
    }

    /// A model that answers every call with `usage`, counting the calls it got.
    #[derive(Debug)]
    struct Answering {
        usage: Usage,
        calls: std::sync::atomic::AtomicUsize,
    }

    impl Client for Answering {
        fn provider(&self) -> ProviderKind {
            ProviderKind::Anthropic
        }
        fn model(&self) -> &str {
            "claude-asked"
        }
        fn complete<'a>(
            &'a self,
            _request: &'a Request,
            _cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<Response>> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let usage = self.usage;
            Box::pin(async move {
                Ok(Response {
                    content: vec![ContentBlock::Text { text: "ok".into() }],
                    stop_reason: StopReason::EndTurn,
                    usage,
                    model: "claude-answered-20300101".into(),
                })
            })
        }
    }

    #[test]
    fn each_call_is_one_private_line_named_by_the_local_date() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(noon());
        let engine = engine(dir.path(), &clock);
        let caller = Caller::new(ModelJob::Extract, "-home-u-app");
        engine
            .record_usage(
                &caller,
                ProviderKind::Anthropic,
                "m1",
                &usage(10, 5, 3, 100),
            )
            .expect("record");
        engine
            .record_usage(&caller, ProviderKind::OpenAi, "m2", &usage(1, 2, 0, 0))
            .expect("record");
        let path = engine.usage_dir().join("2030-03-14.jsonl");
        let text = fs::read_to_string(&path).expect("the day's log");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["project"], "-home-u-app");
        assert_eq!(lines[0]["job"], "extract");
        assert_eq!(lines[0]["provider"], "anthropic");
        assert_eq!(lines[0]["model"], "m1");
        assert_eq!(lines[0]["inputTokens"], 10);
        assert_eq!(lines[0]["outputTokens"], 5);
        assert_eq!(lines[0]["cacheCreationTokens"], 3);
        assert_eq!(lines[0]["cacheReadTokens"], 100);
        assert_eq!(
            lines[0]["time"],
            crate::staleness::iso_time(noon()),
            "time is the call's, in UTC"
        );
        assert_eq!(lines[1]["provider"], "openai");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600, "the log is private");
            assert_eq!(mode(&engine.usage_dir()), 0o700);
        }
        clock.advance(Duration::from_secs(24 * 3600));
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "m1", &usage(1, 1, 0, 0))
            .expect("record");
        assert!(
            engine.usage_dir().join("2030-03-15.jsonl").is_file(),
            "the next day has its own file"
        );
    }

    #[test]
    fn usage_sums_per_day_project_job_provider_and_model_newest_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(noon());
        let engine = engine(dir.path(), &clock);
        let extract = Caller::new(ModelJob::Extract, "a");
        let dream = Caller::new(ModelJob::Dream, "a");
        let other = Caller::new(ModelJob::Extract, "b");
        let day = Duration::from_secs(24 * 3600);
        clock.set(noon() - day * 8);
        engine
            .record_usage(
                &extract,
                ProviderKind::Anthropic,
                "m",
                &usage(1000, 0, 0, 0),
            )
            .expect("record");
        clock.set(noon() - day);
        engine
            .record_usage(&extract, ProviderKind::Anthropic, "m", &usage(1, 1, 1, 1))
            .expect("record");
        clock.set(noon());
        for _ in 0..3 {
            engine
                .record_usage(&extract, ProviderKind::Anthropic, "m", &usage(10, 2, 1, 5))
                .expect("record");
        }
        engine
            .record_usage(&dream, ProviderKind::Anthropic, "m", &usage(7, 0, 0, 0))
            .expect("record");
        engine
            .record_usage(&other, ProviderKind::Anthropic, "m", &usage(1, 0, 0, 0))
            .expect("record");
        // A torn line (a crash mid-write) and a hand edit are skipped, not fatal.
        let today_file = engine.usage_dir().join("2030-03-14.jsonl");
        let mut file = open_append(&today_file).expect("open");
        file.write_all(b"not json\n").expect("write");

        let report = engine.usage_report(7).expect("report");
        let summary: Vec<(&str, &str, &str, u64, u64)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.day.as_str(),
                    r.project.as_str(),
                    r.job.as_str(),
                    r.calls,
                    r.total_tokens,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("2030-03-14", "a", "dream", 1, 7),
                ("2030-03-14", "a", "extract", 3, 54),
                ("2030-03-14", "b", "extract", 1, 1),
                ("2030-03-13", "a", "extract", 1, 4),
            ],
            "8 days ago is outside 7 days"
        );
        let row = &report.rows[1];
        assert_eq!(
            (
                row.input_tokens,
                row.output_tokens,
                row.cache_creation_tokens,
                row.cache_read_tokens
            ),
            (30, 6, 3, 15)
        );
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
        assert!(
            report.skipped[0].contains("2030-03-14.jsonl:6"),
            "names file and line: {:?}",
            report.skipped
        );
        assert_eq!(report.budget.tokens_today, 62);
        assert_eq!(engine.usage_report(9).expect("report").rows.len(), 5);
        fs::write(engine.usage_dir().join("notes.jsonl"), "{}\n").expect("a stray file");
        assert_eq!(
            engine
                .usage_report(u32::MAX)
                .expect("every day there is")
                .rows
                .len(),
            5,
            "only dated logs are read"
        );
    }

    #[test]
    fn todays_total_follows_appends_and_a_replaced_file_and_ignores_a_half_written_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(noon());
        let engine = engine(dir.path(), &clock);
        let caller = Caller::new(ModelJob::Recall, "p");
        assert_eq!(engine.budget_status().expect("status").tokens_today, 0);
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "m", &usage(100, 0, 0, 0))
            .expect("record");
        assert_eq!(engine.budget_status().expect("status").tokens_today, 100);
        // Another process appends; this one has already read the file once.
        let other = self::engine(dir.path(), &clock);
        other
            .record_usage(&caller, ProviderKind::Anthropic, "m", &usage(0, 50, 0, 0))
            .expect("record");
        let path = engine.usage_dir().join("2030-03-14.jsonl");
        let mut file = open_append(&path).expect("open");
        file.write_all(br#"{"time":"t","project":"p","job":"recall","provider":"anthropic","model":"m","inputTokens":1000"#)
            .expect("a line still being written");
        assert_eq!(
            engine.budget_status().expect("status").tokens_today,
            150,
            "the unfinished line is not counted yet"
        );
        file.write_all(b"}\n").expect("finish the line");
        assert_eq!(engine.budget_status().expect("status").tokens_today, 1150);
        // Replaced by a shorter file (restored from a backup, edited by hand): read afresh.
        disk::atomic_write(
            &path,
            br#"{"time":"t","project":"p","job":"recall","provider":"anthropic","model":"m","inputTokens":3}
"#,
        )
        .expect("replace");
        assert_eq!(engine.budget_status().expect("status").tokens_today, 3);
        clock.advance(Duration::from_secs(24 * 3600));
        assert_eq!(
            engine.budget_status().expect("status").tokens_today,
            0,
            "a new day starts at zero"
        );
    }

    #[tokio::test]
    async fn a_metered_client_logs_every_answer_and_refuses_calls_once_the_budget_is_reached() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(noon());
        let engine = engine(dir.path(), &clock);
        let model = Arc::new(Answering {
            usage: usage(300, 100, 50, 150),
            calls: Default::default(),
        });
        let client = engine.metered(
            Arc::clone(&model) as Arc<dyn Client>,
            Caller::new(ModelJob::Dream, "-p"),
            Some(1000),
        );
        let cancel = CancellationToken::new();
        let request = Request::new(16);
        client
            .complete(&request, &cancel)
            .await
            .expect("600 of 1000");
        client
            .complete(&request, &cancel)
            .await
            .expect("started under the budget: may end over it (1200 of 1000)");
        let refused = client
            .complete(&request, &cancel)
            .await
            .expect_err("the budget is reached");
        assert!(
            matches!(
                refused,
                Error::BudgetReached {
                    spent: 1200,
                    limit: 1000
                }
            ),
            "{refused:?}"
        );
        assert_eq!(refused.kind(), crate::ErrorKind::Budget);
        assert!(
            refused.to_string().contains("1200 of 1000 tokens"),
            "{refused}"
        );
        assert_eq!(
            model.calls.load(std::sync::atomic::Ordering::SeqCst),
            2,
            "a refused call never reaches the model"
        );
        let report = engine.usage_report(1).expect("report");
        assert_eq!(report.rows.len(), 1);
        assert_eq!(report.rows[0].job, "dream");
        assert_eq!(report.rows[0].project, "-p");
        assert_eq!(
            report.rows[0].model, "claude-answered-20300101",
            "the model that answered is the one billed"
        );
        assert_eq!(report.rows[0].calls, 2);

        // The budget counts every job: a recall is refused too, the connection test is not.
        let recall = engine.metered(
            Arc::clone(&model) as Arc<dyn Client>,
            Caller::new(ModelJob::Recall, "-q"),
            Some(1000),
        );
        assert!(recall.complete(&request, &cancel).await.is_err());
        let test = engine.metered(
            Arc::clone(&model) as Arc<dyn Client>,
            Caller::new(ModelJob::ConnectionTest, ""),
            Some(1000),
        );
        test.complete(&request, &cancel)
            .await
            .expect("a connection test is a person checking settings");
        assert_eq!(engine.usage_report(1).expect("report").rows.len(), 2);

        clock.advance(Duration::from_secs(24 * 3600));
        client
            .complete(&request, &cancel)
            .await
            .expect("tomorrow the budget starts again");
    }

    #[test]
    fn the_notice_comes_once_a_day_at_eighty_percent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = FixedClock::new(noon());
        let engine = engine(dir.path(), &clock);
        assert_eq!(engine.budget_notice_due().expect("no budget"), None);
        let status = engine.set_daily_budget(Some(1000)).expect("set");
        assert_eq!(status.daily_tokens, Some(1000));
        assert!(engine.set_daily_budget(Some(0)).is_err(), "0 is refused");
        let caller = Caller::new(ModelJob::Extract, "p");
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "m", &usage(799, 0, 0, 0))
            .expect("record");
        assert_eq!(engine.budget_notice_due().expect("79.9 %"), None);
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "m", &usage(1, 0, 0, 0))
            .expect("record");
        let notice = engine.budget_notice_due().expect("80 %").expect("a notice");
        assert_eq!(notice.percent(), Some(80));
        assert!(!notice.reached);
        let again = self::engine(dir.path(), &clock);
        assert_eq!(
            again.budget_notice_due().expect("again"),
            None,
            "once a day, whichever process looks"
        );
        clock.advance(Duration::from_secs(24 * 3600));
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "m", &usage(900, 0, 0, 0))
            .expect("record");
        assert!(
            engine.budget_notice_due().expect("next day").is_some(),
            "a new day, a new notice"
        );
        assert_eq!(
            engine.set_daily_budget(None).expect("unset").daily_tokens,
            None
        );
        assert_eq!(
            engine.load_config().expect("config").budget.daily_tokens,
            None
        );
    }

    #[test]
    fn tokens_read_with_thousands_separators() {
        assert_eq!(format_tokens(0), "0");
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(12_345), "12,345");
        assert_eq!(format_tokens(100_000), "100,000");
        assert_eq!(format_tokens(1_234_567), "1,234,567");
    }
}
