//! Engram's own settings, `config.toml` in [`Engine::engram_home`]: which LLM provider jobs use,
//! each provider's model and base URL, request limits, and the prompt hook's time budget.
//!
//! ```toml
//! [llm]
//! provider = "anthropic"        # offline | local | anthropic | openai; unset: local when the
//!                               # local model is installed, else offline
//! timeout_ms = 30000
//! max_retries = 2
//! embeddings = "local"          # local (default): the in-process model | openai: [llm.openai]'s
//!                               # /v1/embeddings — the vectors of local recall, dreams, extraction
//!
//! [llm.anthropic]
//! model = "claude-haiku-4-5"
//! base_url = "https://api.anthropic.com"
//!
//! [llm.openai]
//! model = "qwen2.5:7b"
//! base_url = "http://localhost:11434/v1"
//! embedding_model = "nomic-embed-text"   # for embeddings = "openai"
//!
//! [hooks]
//! budget_ms = 2000
//!
//! [budget]
//! daily_tokens = 200000         # every model call's tokens, per local day (absent: no budget)
//! ```
//!
//! API keys never live here (see [`crate::llm::keys`]): a file holding a key-like entry
//! (`api_key`, `key`, `token`, `secret`…) under `[llm]` is refused with an error naming the file,
//! rather than silently used or dropped. Sections and keys this module does not know (other
//! parts of Engram own them) are kept as they are when the file is saved; comments and layout are
//! not (the file is rewritten from its values).
//!
//! Precedence of each effective value: the command line (`--provider`, `--model`), then
//! `config.toml`, then the environment (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, as the official
//! SDKs read them), then the built-in default.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};

pub const CONFIG_FILE: &str = "config.toml";
/// The prompt hook's default time budget.
pub const DEFAULT_HOOK_BUDGET: Duration = Duration::from_secs(2);
/// A model call's default per-attempt timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Which provider answers model calls.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// No model: lexical recall, rule-based jobs. The default when no provider is configured and
    /// the local model is not installed ([`Engine::provider_in_force`]).
    #[default]
    Offline,
    /// No remote model: recall ranks with the local embedding model (all-MiniLM-L6-v2, in
    /// process) and the lexical score; other jobs are rule-based, as offline.
    Local,
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Offline,
        ProviderKind::Local,
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
    ];

    /// Whether the provider is a model behind an API (with a base URL, a model name and a key).
    pub fn is_remote(self) -> bool {
        matches!(self, ProviderKind::Anthropic | ProviderKind::OpenAi)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Offline => "offline",
            ProviderKind::Local => "local",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<ProviderKind> {
        ProviderKind::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown provider `{s}` (expected offline, local, anthropic or openai)"
                ))
            })
    }
}

/// The whole of `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(default, skip_serializing_if = "LlmConfig::is_empty")]
    pub llm: LlmConfig,
    #[serde(default, skip_serializing_if = "HooksConfig::is_empty")]
    pub hooks: HooksConfig,
    #[serde(default, skip_serializing_if = "DreamConfig::is_empty")]
    pub dream: DreamConfig,
    #[serde(default, skip_serializing_if = "ExtractConfig::is_empty")]
    pub extract: ExtractConfig,
    #[serde(default, skip_serializing_if = "TeamConfig::is_empty")]
    pub team: TeamConfig,
    #[serde(default, skip_serializing_if = "SyncConfig::is_empty")]
    pub sync: SyncConfig,
    #[serde(default, skip_serializing_if = "BudgetConfig::is_empty")]
    pub budget: BudgetConfig,
    /// Sections owned by other parts of Engram, kept verbatim.
    #[serde(flatten)]
    pub other: toml::Table,
}

/// `[dream]`: consolidation. Every value is optional; `None` is the default (FORMATS.md §8).
///
/// ```toml
/// [dream]
/// min_hours = 24
/// min_sessions = 5
/// token_budget = 200000   # a model dream that spends more ends failed, nothing applied
/// background = true       # false: the tray's scheduler is paused
/// check_every = "5m"      # how often the app's scheduler looks for a due project (≥ 1 s)
/// scan_throttle = "10m"   # sessions are counted at most this often per project
/// [dream.projects."-home-u-app"]
/// enabled = true          # else Claude Code's autoDreamEnabled (trusted settings), else off
/// policy = "review"       # review: everything waits | auto: applied, protected changes wait
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DreamConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_hours: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_sessions: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_every: Option<HumanDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_throttle: Option<HumanDuration>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub projects: std::collections::BTreeMap<String, ProjectDreamConfig>,
}

/// How often the app's scheduler looks for a due project, by default.
pub const DEFAULT_CHECK_EVERY: Duration = Duration::from_secs(5 * 60);
/// How often sessions are counted per project, by default (Claude Code's throttle).
pub const DEFAULT_SCAN_THROTTLE: Duration = Duration::from_secs(10 * 60);

impl DreamConfig {
    fn is_empty(&self) -> bool {
        *self == DreamConfig::default()
    }

    /// How often the scheduler looks for a due project.
    pub fn check_every(&self) -> Duration {
        self.check_every.map_or(DEFAULT_CHECK_EVERY, |d| d.0)
    }

    /// How often a project's sessions are counted.
    pub fn scan_throttle(&self) -> Duration {
        self.scan_throttle.map_or(DEFAULT_SCAN_THROTTLE, |d| d.0)
    }
}

/// A duration as people write it in `config.toml`: `"5m"`, `"90s"`, `"1h 30m"` (humantime's
/// forms), at least one second — a scheduler ticking faster would only burn CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl HumanDuration {
    pub const MIN: Duration = Duration::from_secs(1);
}

impl FromStr for HumanDuration {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<HumanDuration, String> {
        let duration = humantime::parse_duration(text.trim())
            .map_err(|e| format!("`{text}` is not a duration such as \"5m\" or \"90s\": {e}"))?;
        if duration < HumanDuration::MIN {
            return Err(format!("`{text}` is under the minimum of 1s"));
        }
        Ok(HumanDuration(duration))
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&humantime::format_duration(self.0).to_string())
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// `[extract]`: memory extraction after each turn.
///
/// ```toml
/// [extract.projects."-home-u-app"]
/// policy = "review"   # review: every extracted change waits | auto (default): applied at once,
///                     # protected changes (rewriting a user or feedback memory) wait
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtractConfig {
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub projects: std::collections::BTreeMap<String, ProjectExtractConfig>,
}

impl ExtractConfig {
    fn is_empty(&self) -> bool {
        *self == ExtractConfig::default()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectExtractConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<DreamPolicy>,
}

/// `[team]`: team memory sync through git, per project.
///
/// ```toml
/// [team.projects."-home-u-app"]
/// remote = "git@github.com:acme/team-memory.git"   # or a path; a branch with `#branch`
/// branch = "main"
/// background_push = false   # nothing is pushed in the background unless this is on
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamConfig {
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub projects: std::collections::BTreeMap<String, ProjectTeamConfig>,
}

impl TeamConfig {
    fn is_empty(&self) -> bool {
        *self == TeamConfig::default()
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectTeamConfig {
    pub remote: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background_push: bool,
}

/// `[sync]`: personal sync — one person's memory on every machine through their own git remote
/// (`docs/sync.md`).
///
/// ```toml
/// [sync]
/// remote = "git@github.com:me/claude-memory.git"   # or a path; a branch with `#branch`
/// branch = "main"
/// auto = false   # true: the app pushes (debounced) after changes are applied; the CLI never does
/// git = "/opt/homebrew/bin/git"   # the git program for personal and team sync (else ENGRAM_GIT,
///                                 # else PATH and the OS's install places: platform::git)
/// [sync.map]
/// "-home-u-app" = "github.com/me/app"   # a project's identity, set by hand (`engram sync map`)
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncConfig {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub remote: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
    /// The git program sync runs, when the one found on `PATH` or in the OS's install places is
    /// not the one to use (`ENGRAM_GIT` wins over it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    /// Project folder name → identity, for projects whose identity was attached by hand.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub map: std::collections::BTreeMap<String, String>,
}

impl SyncConfig {
    fn is_empty(&self) -> bool {
        *self == SyncConfig::default()
    }
}

/// One project's dream settings, by its folder name under `<claude home>/projects/`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectDreamConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<DreamPolicy>,
}

/// What happens to a dream's changes.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DreamPolicy {
    /// Everything waits for the person.
    #[default]
    Review,
    /// Applied at once, except protected changes (deleting or rewriting a `user` or `feedback`
    /// memory), which always wait.
    Auto,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmConfig {
    /// `None`: offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Where sentence vectors come from; `None`: the local model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingSource>,
    #[serde(default, skip_serializing_if = "ProviderConfig::is_empty")]
    pub anthropic: ProviderConfig,
    #[serde(default, skip_serializing_if = "ProviderConfig::is_empty")]
    pub openai: ProviderConfig,
}

impl LlmConfig {
    fn is_empty(&self) -> bool {
        *self == LlmConfig::default()
    }
}

/// One provider's settings. No key: see [`crate::llm::keys`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model `/embeddings` is asked with (OpenAI-compatible servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_model: Option<String>,
}

impl ProviderConfig {
    fn is_empty(&self) -> bool {
        *self == ProviderConfig::default()
    }
}

/// Where sentence vectors (semantic recall, near-duplicates) come from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingSource {
    /// all-MiniLM-L6-v2, in process.
    #[default]
    Local,
    /// `[llm.openai]`'s base URL, `POST /embeddings` with its `embedding_model`.
    #[serde(rename = "openai")]
    OpenAi,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HooksConfig {
    /// The prompt hook's hard time budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<u64>,
}

impl HooksConfig {
    fn is_empty(&self) -> bool {
        self.budget_ms.is_none()
    }

    pub fn budget(&self) -> Duration {
        self.budget_ms
            .map_or(DEFAULT_HOOK_BUDGET, Duration::from_millis)
    }
}

/// `[budget]`: what model work may spend (see [`crate::llm::usage`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetConfig {
    /// Tokens (input + output + cache creation + cache read) all model calls may use per local
    /// day; once today's total reaches it, model work stops until tomorrow. `None`: no budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_tokens: Option<u64>,
}

impl BudgetConfig {
    fn is_empty(&self) -> bool {
        self.daily_tokens.is_none()
    }
}

impl Config {
    /// The provider section of `provider` (`None` for offline).
    pub fn provider(&self, provider: ProviderKind) -> Option<&ProviderConfig> {
        match provider {
            ProviderKind::Anthropic => Some(&self.llm.anthropic),
            ProviderKind::OpenAi => Some(&self.llm.openai),
            ProviderKind::Offline | ProviderKind::Local => None,
        }
    }

    pub fn provider_mut(&mut self, provider: ProviderKind) -> Option<&mut ProviderConfig> {
        match provider {
            ProviderKind::Anthropic => Some(&mut self.llm.anthropic),
            ProviderKind::OpenAi => Some(&mut self.llm.openai),
            ProviderKind::Offline | ProviderKind::Local => None,
        }
    }
}

/// Choices made for one run (command-line flags), over the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmOverrides {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub timeout: Option<Duration>,
}

/// Key-like names refused under `[llm]`.
const SECRET_KEYS: [&str; 6] = ["api_key", "apikey", "key", "token", "secret", "password"];

impl Engine {
    /// `<engram home>/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.engram_home().join(CONFIG_FILE)
    }

    /// Reads `config.toml`; a missing file is the default configuration.
    pub fn load_config(&self) -> Result<Config> {
        let path = self.config_path();
        let text = match disk::read_text(&path) {
            Ok(text) => text,
            Err(Error::NotFound(_)) => return Ok(Config::default()),
            Err(e) => return Err(e),
        };
        let table: toml::Table = toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))?;
        if let Some(found) = find_secret(&table) {
            return Err(Error::parse(
                &path,
                None,
                format!(
                    "`{found}`: API keys are never read from {CONFIG_FILE}; remove it and set \
                     ANTHROPIC_API_KEY / OPENAI_API_KEY or store the key in the OS keyring"
                ),
            ));
        }
        // Deserialized from the text again (not from the table) so errors keep their line.
        toml::from_str(&text).map_err(|e| toml_error(&path, &text, &e))
    }

    /// Writes `config.toml` atomically.
    pub fn save_config(&self, config: &Config) -> Result<()> {
        let path = self.config_path();
        let text = toml::to_string_pretty(config).map_err(|e| {
            Error::InvalidInput(format!("{}: cannot serialize: {e}", path.display()))
        })?;
        disk::atomic_write(&path, text.as_bytes())
    }
}

fn find_secret(table: &toml::Table) -> Option<String> {
    fn walk(prefix: &str, table: &toml::Table) -> Option<String> {
        for (key, value) in table {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            if SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
                return Some(path);
            }
            if let toml::Value::Table(inner) = value {
                if let Some(found) = walk(&path, inner) {
                    return Some(found);
                }
            }
        }
        None
    }
    table
        .get("llm")
        .and_then(toml::Value::as_table)
        .and_then(|llm| walk("llm", llm))
}

/// A TOML error as the engine's parse error, naming the file and the line.
pub(crate) fn toml_error(path: &std::path::Path, text: &str, e: &toml::de::Error) -> Error {
    let line = e
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    Error::parse(path, line, e.message().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;
    use std::fs;

    fn engine(home: &std::path::Path, env: Environment) -> Engine {
        Engine::builder(env).engram_home(home).build()
    }

    #[test]
    fn durations_read_as_people_write_them_at_least_a_second_and_errors_name_the_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        assert_eq!(
            engine.load_config().expect("none").dream.check_every(),
            DEFAULT_CHECK_EVERY
        );
        fs::write(
            engine.config_path(),
            "[dream]\ncheck_every = \"1m 30s\"\nscan_throttle = \"3s\"\n",
        )
        .expect("seed");
        let config = engine.load_config().expect("load");
        assert_eq!(config.dream.check_every(), Duration::from_secs(90));
        assert_eq!(config.dream.scan_throttle(), Duration::from_secs(3));
        engine.save_config(&config).expect("save");
        assert_eq!(engine.load_config().expect("again"), config, "round trip");
        for (bad, why) in [("500ms", "under the minimum"), ("soon", "not a duration")] {
            fs::write(
                engine.config_path(),
                format!("[dream]\ncheck_every = \"{bad}\"\n"),
            )
            .expect("seed");
            let error = engine.load_config().expect_err(bad).to_string();
            assert!(
                error.contains("config.toml:2") && error.contains(why),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn save_then_load_round_trips_and_keeps_other_sections() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        fs::write(
            engine.config_path(),
            "[dream]\nmin_hours = 24\n\n[llm]\nprovider = \"openai\"\n",
        )
        .expect("seed");
        let mut config = engine.load_config().expect("load");
        assert_eq!(config.llm.provider, Some(ProviderKind::OpenAi));
        config.llm.openai.model = Some("qwen2.5:7b".into());
        config.llm.openai.base_url = Some("http://localhost:11434/v1".into());
        config.hooks.budget_ms = Some(1500);
        engine.save_config(&config).expect("save");
        let text = fs::read_to_string(engine.config_path()).expect("read");
        assert!(
            text.contains("[dream]") && text.contains("min_hours = 24"),
            "{text}"
        );
        assert!(text.contains("[llm.openai]"), "{text}");
        let again = engine.load_config().expect("reload");
        assert_eq!(again, config);
        assert_eq!(again.hooks.budget(), Duration::from_millis(1500));
    }

    #[test]
    fn a_key_in_the_file_is_refused_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        fs::write(
            engine.config_path(),
            "[llm.anthropic]\napi_key = \"sk-ant-oops\"\n",
        )
        .expect("seed");
        let err = engine.load_config().expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains("config.toml") && text.contains("llm.anthropic.api_key"),
            "{text}"
        );
        assert!(!text.contains("sk-ant-oops"), "never echo the key: {text}");
    }

    #[test]
    fn malformed_toml_names_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        fs::write(engine.config_path(), "[llm]\nprovider = \"gpt\"\n").expect("seed");
        let err = engine.load_config().expect_err("unknown provider");
        assert_eq!(err.kind(), crate::ErrorKind::Parse);
        assert!(err.to_string().contains("config.toml:2"), "{err}");
    }
}
