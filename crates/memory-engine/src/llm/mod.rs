//! Language-model providers behind one object-safe trait, [`Client`].
//!
//! - [`anthropic::AnthropicClient`]: the Messages API (tool use, structured output through a forced
//!   tool call, prompt caching on the system prompt).
//! - [`openai::OpenAiClient`]: OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp's
//!   server, LM Studio, vLLM), with tools and `response_format: json_schema`.
//! - offline: no client at all ([`ProviderKind::Offline`]); callers fall back to what needs no
//!   model (lexical recall). With no provider configured it is the default unless the local
//!   embedding model is installed (then `local`, no network either), so a fresh machine never
//!   calls a paid API ([`Engine::provider_in_force`](crate::engine::Engine::provider_in_force)).
//!
//! Every call has a per-attempt timeout, retries 408/409/429/5xx and connection failures with
//! exponential backoff (honouring `retry-after` / `retry-after-ms`), races a
//! [`CancellationToken`], and reports the tokens it used ([`Usage`]), which jobs sum. Every
//! client Engram hands out ([`Engine::llm_client_for`](crate::Engine::llm_client_for)) logs each
//! call's tokens for its job and project and holds it to the daily budget ([`usage`]).
//!
//! Requests and responses use one provider-neutral shape ([`Request`], [`Message`],
//! [`ContentBlock`], [`Response`]) modelled on the Messages API, which each client translates to
//! and from its wire format.

pub mod anthropic;
pub mod embeddings;
mod endpoint;
pub mod keys;
#[cfg(test)]
mod loopback_tests;
pub mod openai;
pub mod probe;
pub mod retry;
pub mod settings;
pub mod setup;
pub mod usage;

use std::fmt;
use std::future::Future;
use std::ops::AddAssign;
use std::pin::Pin;
use std::time::Duration;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use retry::RetryPolicy;
/// Re-exported so adapters can cancel jobs without depending on `tokio-util` themselves.
pub use tokio_util::sync::CancellationToken;

pub use crate::config::ProviderKind;
pub use settings::{LlmSettings, ModelClient};
pub use usage::{BudgetStatus, Caller, ModelJob};

/// A boxed future, so [`Client`] stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message, in the Messages API's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    pub fn assistant(content: Vec<ContentBlock>) -> Message {
        Message {
            role: Role::Assistant,
            content,
        }
    }
}

/// A tool the model may call; `input_schema` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Asks for the answer as one JSON value matching `schema` (an object schema).
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredOutput {
    /// A short identifier (`[a-zA-Z0-9_-]`), used as the forced tool's or the schema's name.
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// One model call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Sent with `cache_control` where the provider supports it: it is the stable prefix.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// When set, the answer is a JSON value read with [`Response::structured`]. Not combined
    /// with `tools`.
    pub structured: Option<StructuredOutput>,
}

impl Request {
    pub fn new(max_tokens: u32) -> Request {
        Request {
            system: None,
            messages: Vec::new(),
            tools: Vec::new(),
            max_tokens,
            structured: None,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Other(String),
}

/// Tokens one call (or, summed, one job) used. `input_tokens` excludes cached input, as the
/// Messages API counts it; the OpenAI client subtracts `cached_tokens` to match.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub input_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub output_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_read_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_creation_tokens: u64,
    /// Model calls that answered (retried attempts that failed are not counted).
    pub calls: u32,
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
        self.calls += other.calls;
    }
}

impl Usage {
    /// Every token billed in any way.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// The model that answered, as the server names it.
    pub model: String,
}

impl Response {
    /// All text blocks, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tool calls, in order: `(id, name, input)`.
    pub fn tool_uses(&self) -> Vec<(&str, &str, &Value)> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, name, input } => {
                    Some((id.as_str(), name.as_str(), input))
                }
                _ => None,
            })
            .collect()
    }

    /// The structured answer asked for with [`Request::structured`] named `name`: the forced
    /// tool call's input, else the text parsed as JSON (a fenced or embedded object is accepted,
    /// as small local models wrap their JSON in prose).
    pub fn structured(&self, name: &str) -> Result<Value> {
        if let Some((_, _, input)) = self.tool_uses().into_iter().find(|(_, n, _)| *n == name) {
            return Ok(input.clone());
        }
        let text = self.text();
        parse_json_answer(&text).ok_or_else(|| {
            Error::Llm(format!(
                "the model's answer is not the JSON asked for: {}",
                clip(&text, 200)
            ))
        })
    }
}

/// The first JSON object in `text`: the whole text, else the span from the first `{` to the last
/// `}`.
fn parse_json_answer(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    let start = trimmed.find('{')?;
    let end = trimmed.rfind('}')?;
    (start < end)
        .then(|| serde_json::from_str(&trimmed[start..=end]).ok())
        .flatten()
}

/// `text` cut to `max` characters with an ellipsis, for error messages.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…")
}

/// A model provider. Object-safe: jobs hold an `Arc<dyn Client>`.
pub trait Client: Send + Sync + fmt::Debug {
    fn provider(&self) -> ProviderKind;
    /// The model asked for in every request.
    fn model(&self) -> &str;
    /// Sends one request: retried on transient failures, each attempt bounded by the client's
    /// timeout, abandoned with [`Error::Cancelled`] as soon as `cancel` fires.
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Response>>;
}

/// How a client talks to its server. Its `Debug` form never shows the key.
#[derive(Clone, PartialEq)]
pub struct ClientOptions {
    /// Base URL: `https://api.anthropic.com` (the client appends `/v1/messages`), or an
    /// OpenAI-compatible root ending in `/v1` (the client appends `/chat/completions`).
    pub base_url: String,
    pub model: String,
    /// Sent as `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI-compatible).
    pub api_key: Option<String>,
    /// Bound on one attempt, from sending to the last byte of the answer.
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &redacted(self.api_key.as_deref()))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

/// What `Debug` shows of a secret: whether there is one, never its value (debug output ends up
/// in logs and bug reports).
pub(crate) fn redacted(secret: Option<&str>) -> Option<&'static str> {
    secret.map(|_| "<redacted>")
}

/// Builds the HTTP client shared by the providers. Loopback servers (Ollama, llama.cpp, tests)
/// are reached directly; anything else goes through the system proxy, if one is configured.
pub(crate) fn http_client(base_url: &str) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("engram/", env!("CARGO_PKG_VERSION")));
    if is_loopback(base_url) {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| Error::Llm(format!("cannot set up an HTTP client: {e}")))
}

fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `base` + `/` + `path`, without doubling the slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_output_never_shows_the_api_key() {
        let options = super::ClientOptions {
            base_url: "https://api.anthropic.com".to_owned(),
            model: "claude-sonnet-4-5".to_owned(),
            api_key: Some("sk-ant-secret-value".to_owned()),
            timeout: std::time::Duration::from_secs(5),
            retry: super::RetryPolicy::default(),
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("sk-ant-secret-value"), "{shown}");
        assert!(
            shown.contains("<redacted>") && shown.contains("claude-sonnet-4-5"),
            "{shown}"
        );

        let test = super::probe::ConnectionTest {
            api_key: Some("sk-typed-secret".to_owned()),
            ..Default::default()
        };
        let shown = format!("{test:?}");
        assert!(!shown.contains("sk-typed-secret"), "{shown}");
    }

    use super::*;

    #[test]
    fn usage_sums_every_counter() {
        let mut total = Usage::default();
        total += Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 100,
            cache_creation_tokens: 7,
            calls: 1,
        };
        total += Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_creation_tokens: 4,
            calls: 1,
        };
        assert_eq!(
            total,
            Usage {
                input_tokens: 11,
                output_tokens: 7,
                cache_read_tokens: 103,
                cache_creation_tokens: 11,
                calls: 2
            }
        );
        assert_eq!(total.total_tokens(), 132);
    }

    #[test]
    fn structured_answers_come_from_the_forced_tool_or_the_text() {
        let response = |content| Response {
            content,
            stop_reason: StopReason::EndTurn,
            usage: Usage::default(),
            model: "m".into(),
        };
        let tool = response(vec![ContentBlock::ToolUse {
            id: "t1".into(),
            name: "pick".into(),
            input: serde_json::json!({"selected_memories": ["a.md"]}),
        }]);
        assert_eq!(
            tool.structured("pick").expect("tool input")["selected_memories"][0],
            "a.md"
        );
        let fenced = response(vec![ContentBlock::Text {
            text: "Sure:\n```json\n{\"selected_memories\": []}\n```".into(),
        }]);
        assert!(
            fenced.structured("pick").expect("embedded JSON")["selected_memories"]
                .as_array()
                .expect("array")
                .is_empty()
        );
        let prose = response(vec![ContentBlock::Text {
            text: "I cannot help".into(),
        }]);
        let err = prose.structured("pick").expect_err("no JSON");
        assert!(err.to_string().contains("I cannot help"), "{err}");
    }

    #[test]
    fn providers_parse_and_print() {
        for p in ProviderKind::ALL {
            assert_eq!(p.as_str().parse::<ProviderKind>().expect("parse"), p);
        }
        assert!("gpt".parse::<ProviderKind>().is_err());
        assert_eq!(
            serde_json::to_value(ProviderKind::OpenAi).expect("json"),
            "openai"
        );
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://127.0.0.1:8080"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:1/"));
        assert!(!is_loopback("https://api.anthropic.com"));
        assert_eq!(join_url("http://h/v1/", "/chat"), "http://h/v1/chat");
    }
}
