//! "Test connection": one tiny request to a provider, with the settings being edited (not yet
//! saved) and a short timeout, reporting what answered, how fast and at what cost — or what
//! went wrong and what to do about it.
//!
//! A failure to connect is the answer to the question asked, so it is data
//! ([`ConnectionCheck::ok`] false, with the error and a hint), not an `Err`. `Err` is kept for
//! input that cannot be tested at all (the offline provider, a malformed base URL, an unreadable
//! `config.toml`) and for cancellation.
//!
//! The hint is chosen from the error's text. Those texts are this crate's own (the clients and
//! [`super::retry`] write them: `HTTP 401: …`, `no answer within …`), so the match is on a
//! format the tests below pin down, not on a third party's wording.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::settings::client_for;
use super::setup::{normalize_base_url, normalize_model};
use super::usage::{Caller, ModelJob};
use super::{clip, keys, ProviderKind, Request, RetryPolicy, Usage};
use crate::config::LlmOverrides;
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The longest a test waits for an answer (less when `config.toml` sets a shorter timeout).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
/// Enough for "ok" from any model; keeps the test's cost to a few tokens.
pub const PROBE_MAX_TOKENS: u32 = 16;
const PROBE_PROMPT: &str = "This is a connection test. Reply with the single word: ok";

/// The settings to test: as on the screen, blank meaning the default. Its `Debug` form never
/// shows the key.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionTest {
    pub provider: ProviderKind,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// A key typed but not stored yet; `None` uses the environment's, else the keyring's.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for ConnectionTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionTest")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &super::redacted(self.api_key.as_deref()))
            .finish()
    }
}

/// Where the key used by a test came from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum KeySource {
    /// Typed on the screen, not stored.
    Typed,
    Env,
    Keyring,
    None,
}

/// The outcome of a connection test.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionCheck {
    pub provider: ProviderKind,
    /// The model asked for.
    pub model: String,
    pub base_url: String,
    pub key_source: KeySource,
    pub ok: bool,
    /// From sending the request to the end of the answer (or the failure).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub latency_ms: u64,
    /// The model that answered, as the server names it.
    pub answered_model: Option<String>,
    /// The start of the model's answer.
    pub reply: Option<String>,
    pub usage: Usage,
    /// What went wrong, naming the provider and URL.
    pub error: Option<String>,
    /// What to do next, when the error says enough to tell.
    pub hint: Option<String>,
}

impl Engine {
    /// Sends one tiny request with `test`'s settings (over `config.toml`'s timeout and the
    /// environment's defaults), without retries, bounded by [`PROBE_TIMEOUT`].
    pub async fn test_connection(
        &self,
        test: &ConnectionTest,
        cancel: &CancellationToken,
    ) -> Result<ConnectionCheck> {
        if !test.provider.is_remote() {
            return Err(offline_has_nothing_to_test());
        }
        let overrides = LlmOverrides {
            provider: Some(test.provider),
            model: normalize_model(test.model.as_deref())?,
            base_url: normalize_base_url(test.base_url.as_deref())?,
            timeout: None,
        };
        let typed = test
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_owned);
        // `config.toml` and the keyring (D-Bus) are read off the async threads.
        let engine = self.clone();
        let provider = test.provider;
        let (settings, key, key_source) = tokio::task::spawn_blocking(move || {
            let settings = engine.llm_settings_for(&overrides)?;
            let (key, source) = match typed {
                Some(key) => (Some(key), KeySource::Typed),
                None => find_key(&engine, provider),
            };
            Ok::<_, Error>((settings, key, source))
        })
        .await
        .map_err(|e| Error::InvalidInput(format!("connection test worker failed: {e}")))??;

        let timeout = Duration::from_millis(settings.timeout_ms).min(PROBE_TIMEOUT);
        let mut check = ConnectionCheck {
            provider,
            model: settings.model.clone(),
            base_url: settings.base_url.clone(),
            key_source,
            ok: false,
            latency_ms: 0,
            answered_model: None,
            reply: None,
            usage: Usage::default(),
            error: None,
            hint: None,
        };
        // One attempt: a test that quietly retried would hide a flaky server and keep the user
        // waiting.
        let no_retry = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        let client = match client_for(&settings, key, timeout, no_retry) {
            // Logged like every call; never held to the budget (see `usage`).
            Ok(Some(client)) => {
                self.metered(client, Caller::new(ModelJob::ConnectionTest, ""), None)
            }
            // Offline was refused above; a provider without a client has nothing to test.
            Ok(None) => return Err(offline_has_nothing_to_test()),
            Err(e) => return Ok(failed(check, &e)),
        };
        let mut request = Request::new(PROBE_MAX_TOKENS);
        request.messages.push(super::Message::user(PROBE_PROMPT));
        let started = Instant::now();
        let outcome = client.complete(&request, cancel).await;
        check.latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match outcome {
            Ok(response) => {
                check.ok = true;
                check.usage = response.usage;
                let text = response.text();
                check.reply = Some(clip(text.trim(), 200)).filter(|t| !t.is_empty());
                check.answered_model = Some(response.model).filter(|m| !m.is_empty());
                Ok(check)
            }
            Err(Error::Cancelled) => Err(Error::Cancelled),
            Err(e) => Ok(failed(check, &e)),
        }
    }
}

/// The key for `provider` and where it came from: the environment, then the keyring.
fn find_key(engine: &Engine, provider: ProviderKind) -> (Option<String>, KeySource) {
    if let Some(key) = keys::env_var(provider).and_then(|var| engine.env().get(var)) {
        return (Some(key.to_owned()), KeySource::Env);
    }
    match keys::keyring_get(provider) {
        Ok(Some(key)) => (Some(key), KeySource::Keyring),
        _ => (None, KeySource::None),
    }
}

fn failed(mut check: ConnectionCheck, error: &Error) -> ConnectionCheck {
    let message = error.to_string();
    check.hint = hint(check.provider, check.key_source, &message);
    check.error = Some(message);
    check
}

/// What to do next about a failed test, from the error's text.
fn hint(provider: ProviderKind, key_source: KeySource, message: &str) -> Option<String> {
    let env_var = keys::env_var(provider).unwrap_or("the provider's API key variable");
    let status = http_status(message);
    let text = match status {
        _ if message.contains("no Anthropic API key") => format!(
            "Paste an API key and store it in the keyring, or set {env_var} in the environment \
             Engram starts from."
        ),
        Some(401 | 403) if key_source == KeySource::None => format!(
            "The server wants an API key: paste one and store it in the keyring, or set {env_var}."
        ),
        Some(401 | 403) => {
            let from = match key_source {
                KeySource::Env => format!("from {env_var}"),
                KeySource::Keyring => "stored in the keyring".to_owned(),
                _ => "typed".to_owned(),
            };
            format!(
                "The server refused the key ({from}): check that it is current and belongs to \
                 this provider."
            )
        }
        Some(404) => "Nothing answers at this address: check the base URL (OpenAI-compatible \
                      servers usually end in /v1) and the model name."
            .to_owned(),
        Some(400 | 422) => {
            "The server refused the request: check the model name (the server's list of models \
             shows the exact spelling)."
                .to_owned()
        }
        Some(429) => {
            "Rate limited or out of credit: wait a minute, or check the account's plan and \
                      balance."
                .to_owned()
        }
        Some(500..=599) => {
            "The server failed on its side: try again later, or check the server's log.".to_owned()
        }
        Some(_) => return None,
        None if message.contains("no answer within") => {
            "No answer in time: check that the server is running and the model is loaded \
             (a local model's first answer can take a while)."
                .to_owned()
        }
        None if message.contains("error sending request")
            || message.contains("onnect")
            || message.contains("dns") =>
        {
            "Could not reach the server: check the base URL and that the server is running."
                .to_owned()
        }
        None if message.contains("malformed JSON in the answer")
            || message.contains("unexpected answer") =>
        {
            "Something answered, but not in this provider's format: check that the provider \
             matches the server (Anthropic or OpenAI-compatible) and the base URL."
                .to_owned()
        }
        None => return None,
    };
    Some(text)
}

/// The status in an `HTTP 404: …` error written by [`super::retry`].
fn http_status(message: &str) -> Option<u16> {
    let at = message.find("HTTP ")?;
    let digits: String = message[at + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|_| digits.len() == 3)
}

fn offline_has_nothing_to_test() -> Error {
    Error::InvalidInput(
        "the offline provider makes no connection: there is nothing to test".to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use super::*;
    use crate::environment::Environment;
    use crate::testing::{wire, Reply, ScriptedServer};

    fn engine(dir: &std::path::Path, env: Environment) -> Engine {
        Engine::builder(env).engram_home(dir).build()
    }

    fn test_of(provider: ProviderKind, base_url: &str, key: Option<&str>) -> ConnectionTest {
        ConnectionTest {
            provider,
            model: Some("scripted-model".into()),
            base_url: Some(base_url.into()),
            api_key: key.map(str::to_owned),
        }
    }

    async fn run(engine: &Engine, test: &ConnectionTest) -> ConnectionCheck {
        engine
            .test_connection(test, &CancellationToken::new())
            .await
            .expect("a test runs")
    }

    #[tokio::test]
    async fn openai_compatible_success_reports_model_latency_and_tokens() {
        let _keyring = crate::testing::keyring_store::TestKeyring::install();
        let dir = tempfile::tempdir().expect("tempdir");
        let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text("ok", 21, 1, 0))]);
        let check = run(
            &engine(dir.path(), Environment::empty()),
            &test_of(ProviderKind::OpenAi, &format!("{}/v1/", server.url()), None),
        )
        .await;
        assert!(check.ok, "{check:?}");
        assert_eq!(check.reply.as_deref(), Some("ok"));
        assert_eq!(check.usage.input_tokens, 21);
        assert_eq!(check.usage.output_tokens, 1);
        assert!(check.answered_model.is_some());
        assert_eq!(check.base_url, format!("{}/v1", server.url()));
        assert_eq!((check.error, check.hint), (None, None));
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].path, "/v1/chat/completions");
        let body = requests[0].json();
        assert_eq!(
            body["model"], "scripted-model",
            "the screen's model, unsaved"
        );
        assert!(
            body["max_tokens"].as_u64().is_some_and(|n| n <= 16)
                || body["max_completion_tokens"]
                    .as_u64()
                    .is_some_and(|n| n <= 16),
            "{body}"
        );
        assert_eq!(
            requests[0].header("authorization"),
            None,
            "no key: no header"
        );
        assert!(
            !dir.path().join("config.toml").exists(),
            "a test saves nothing"
        );
    }

    #[tokio::test]
    async fn anthropic_uses_the_typed_key_and_reports_its_source() {
        let dir = tempfile::tempdir().expect("tempdir");
        let server =
            ScriptedServer::queue(vec![Reply::json(wire::anthropic_text("ok", (12, 1, 0, 0)))]);
        let env = Environment::empty().with("ANTHROPIC_API_KEY", "sk-ant-env");
        let check = run(
            &engine(dir.path(), env),
            &test_of(
                ProviderKind::Anthropic,
                &server.url(),
                Some(" sk-ant-typed "),
            ),
        )
        .await;
        assert!(check.ok, "{check:?}");
        assert_eq!(check.key_source, KeySource::Typed);
        assert_eq!(
            server.requests()[0].header("x-api-key"),
            Some("sk-ant-typed"),
            "the typed key wins over the environment's, trimmed"
        );
        assert_eq!(check.usage.input_tokens, 12);
    }

    #[tokio::test]
    async fn failures_are_data_with_a_next_step() {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = Environment::empty().with("OPENAI_API_KEY", "sk-env");
        let engine = engine(dir.path(), env);
        let refused = ScriptedServer::queue(vec![Reply::status(
            401,
            json!({"error": {"message": "Incorrect API key provided"}}).to_string(),
        )]);
        let check = run(
            &engine,
            &test_of(ProviderKind::OpenAi, &format!("{}/v1", refused.url()), None),
        )
        .await;
        assert!(!check.ok);
        assert_eq!(check.key_source, KeySource::Env);
        let error = check.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("HTTP 401") && error.contains("Incorrect API key provided"),
            "{error}"
        );
        let hint = check.hint.as_deref().unwrap_or_default();
        assert!(
            hint.contains("refused the key (from OPENAI_API_KEY)"),
            "{hint}"
        );

        let overloaded = ScriptedServer::queue(vec![Reply::status(503, "{}")]);
        let check = run(
            &engine,
            &test_of(
                ProviderKind::OpenAi,
                &format!("{}/v1", overloaded.url()),
                None,
            ),
        )
        .await;
        assert_eq!(overloaded.requests().len(), 1, "a test does not retry");
        assert!(check.hint.is_some_and(|h| h.contains("failed on its side")));

        let missing = ScriptedServer::queue(vec![Reply::status(404, "not found")]);
        let check = run(
            &engine,
            &test_of(ProviderKind::OpenAi, &missing.url(), None),
        )
        .await;
        assert!(check.hint.is_some_and(|h| h.contains("check the base URL")));

        // Nobody listens: the port of a server that is gone.
        let gone = ScriptedServer::queue(vec![Reply::status(200, "{}")]);
        let url = gone.url();
        drop(gone);
        let check = run(&engine, &test_of(ProviderKind::OpenAi, &url, None)).await;
        assert!(!check.ok);
        assert!(
            check
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("Could not reach")),
            "{check:?}"
        );

        let wrong_format = ScriptedServer::queue(vec![Reply::json(json!({"hello": "world"}))]);
        let check = run(
            &engine,
            &test_of(ProviderKind::OpenAi, &wrong_format.url(), None),
        )
        .await;
        assert!(!check.ok);
        assert!(
            check
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("not in this provider's format")),
            "{check:?}"
        );
    }

    #[tokio::test]
    async fn anthropic_without_a_key_says_where_to_put_one() {
        let _keyring = crate::testing::keyring_store::TestKeyring::install();
        let dir = tempfile::tempdir().expect("tempdir");
        let server =
            ScriptedServer::queue(vec![Reply::json(wire::anthropic_text("ok", (1, 1, 0, 0)))]);
        let check = run(
            &engine(dir.path(), Environment::empty()),
            &test_of(ProviderKind::Anthropic, &server.url(), None),
        )
        .await;
        assert_eq!(check.key_source, KeySource::None);
        assert!(!check.ok);
        assert!(server.requests().is_empty(), "nothing sent without a key");
        let hint = check.hint.as_deref().unwrap_or_default();
        assert!(
            hint.contains("ANTHROPIC_API_KEY") && hint.contains("keyring"),
            "{hint}"
        );
    }

    #[tokio::test]
    async fn a_key_stored_in_the_keyring_is_used() {
        let keyring = crate::testing::keyring_store::TestKeyring::install();
        keys::keyring_set(ProviderKind::OpenAi, "sk-stored").expect("stored");
        let dir = tempfile::tempdir().expect("tempdir");
        let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text("ok", 5, 1, 0))]);
        let check = run(
            &engine(dir.path(), Environment::empty()),
            &test_of(ProviderKind::OpenAi, &server.url(), None),
        )
        .await;
        drop(keyring);
        assert!(check.ok, "{check:?}");
        assert_eq!(check.key_source, KeySource::Keyring);
        assert_eq!(
            server.requests()[0].header("authorization"),
            Some("Bearer sk-stored")
        );
    }

    #[tokio::test]
    async fn a_slow_server_is_cut_off_by_the_configured_timeout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        fs::write(engine.config_path(), "[llm]\ntimeout_ms = 300\n").expect("config");
        let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(5))]);
        let started = Instant::now();
        let check = run(&engine, &test_of(ProviderKind::OpenAi, &server.url(), None)).await;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(!check.ok);
        assert!(
            check
                .hint
                .as_deref()
                .is_some_and(|h| h.contains("No answer in time")),
            "{check:?}"
        );
    }

    #[tokio::test]
    async fn untestable_input_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        let cancel = CancellationToken::new();
        let offline = engine
            .test_connection(&ConnectionTest::default(), &cancel)
            .await
            .expect_err("offline");
        assert_eq!(offline.kind(), crate::ErrorKind::InvalidInput);
        let bad = engine
            .test_connection(
                &test_of(ProviderKind::OpenAi, "localhost:1234", None),
                &cancel,
            )
            .await
            .expect_err("not a URL");
        assert!(bad.to_string().contains("localhost:1234"), "{bad}");
        let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(5))]);
        cancel.cancel();
        let cancelled = engine
            .test_connection(&test_of(ProviderKind::OpenAi, &server.url(), None), &cancel)
            .await
            .expect_err("cancelled");
        assert_eq!(cancelled.kind(), crate::ErrorKind::Cancelled);
    }

    #[test]
    fn statuses_are_read_from_the_retry_modules_errors() {
        assert_eq!(
            http_status("openai (http://h/v1): HTTP 401: bad key"),
            Some(401)
        );
        assert_eq!(http_status("anthropic (x): HTTP 5: odd"), None);
        assert_eq!(http_status("no status here"), None);
    }
}
