//! The Anthropic Messages API (`POST {base}/v1/messages`, non-streaming).
//!
//! - The system prompt is sent as one text block marked `cache_control: ephemeral`: it is the
//!   stable prefix of every call of a job (agent turns, recall prompts), so later calls read it
//!   from the cache. Below the API's minimum cacheable length the mark is simply ignored.
//! - Structured output is a forced tool call (`tool_choice: {type: "tool"}`) whose input schema is
//!   the wanted schema: it works on every Claude model and on Anthropic-compatible servers.
//! - Usage maps `input_tokens`, `output_tokens`, `cache_read_input_tokens` and
//!   `cache_creation_input_tokens` one to one.

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::endpoint::{answer_json, answer_model, Endpoint};
use super::retry::RetryPolicy;
use super::{
    clip, BoxFuture, Client, ClientOptions, ContentBlock, Message, ProviderKind, Request, Response,
    Role, StopReason, Usage,
};
use crate::error::{Error, Result};

/// The API version every request declares.
pub const API_VERSION: &str = "2023-06-01";
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// Small, fast and cheap: recall's selector runs on every prompt.
pub const DEFAULT_MODEL: &str = "claude-haiku-4-5";

#[derive(Debug)]
pub struct AnthropicClient {
    endpoint: Endpoint,
}

impl AnthropicClient {
    /// A client for `options`; fails without an API key, naming where one can come from.
    pub fn new(options: ClientOptions) -> Result<AnthropicClient> {
        if options.api_key.as_deref().is_none_or(str::is_empty) {
            return Err(Error::Llm(format!(
                "no Anthropic API key: set ANTHROPIC_API_KEY or save a key in the OS keyring \
                 (service `{}`, user `anthropic`)",
                super::keys::KEYRING_SERVICE
            )));
        }
        Ok(AnthropicClient {
            endpoint: Endpoint::new(options, "v1/messages")?,
        })
    }

    async fn send(&self, request: &Request, cancel: &CancellationToken) -> Result<Response> {
        let options = &self.endpoint.options;
        let body = request_body(&options.model, request);
        let key = options.api_key.as_deref().unwrap_or_default();
        let authorize = |builder: reqwest::RequestBuilder| {
            builder
                .header("x-api-key", key)
                .header("anthropic-version", API_VERSION)
        };
        self.endpoint
            .post("anthropic", &body, authorize, parse_response, cancel)
            .await
    }

    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.endpoint.options.retry
    }
}

impl Client for AnthropicClient {
    fn provider(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.endpoint.options.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Response>> {
        Box::pin(self.send(request, cancel))
    }
}

/// The JSON body of a Messages API request.
pub fn request_body(model: &str, request: &Request) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    if let Some(system) = &request.system {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(message_json).collect()),
    );
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    if let Some(structured) = &request.structured {
        tools.push(json!({
            "name": structured.name,
            "description": structured.description,
            "input_schema": structured.schema,
        }));
        body.insert(
            "tool_choice".into(),
            json!({"type": "tool", "name": structured.name}),
        );
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                block
            }
        })
        .collect();
    json!({"role": role, "content": content})
}

/// Reads a Messages API response; the error is a message for [`Error::Llm`].
pub fn parse_response(body: &[u8]) -> std::result::Result<Response, String> {
    let value = answer_json(body)?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let message = value
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        return Err(format!("the server answered with an error: {message}"));
    }
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!(
                "unexpected answer, no `content` array: {}",
                clip(&value.to_string(), 200)
            )
        })?;
    let mut content = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => content.push(ContentBlock::Text {
                text: block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
            Some("tool_use") => {
                let field = |name: &str| {
                    block
                        .get(name)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| format!("a tool_use block without `{name}`"))
                };
                content.push(ContentBlock::ToolUse {
                    id: field("id")?,
                    name: field("name")?,
                    input: block.get("input").cloned().unwrap_or(json!({})),
                });
            }
            // Thinking and other block kinds carry nothing a job acts on.
            _ => {}
        }
    }
    let stop_reason = match value.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn") | Some("stop_sequence") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    };
    let count = |name: &str| {
        value
            .pointer(&format!("/usage/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(Response {
        content,
        stop_reason,
        usage: Usage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cache_read_tokens: count("cache_read_input_tokens"),
            cache_creation_tokens: count("cache_creation_input_tokens"),
            calls: 1,
        },
        model: answer_model(&value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{StructuredOutput, ToolSpec};

    #[test]
    fn request_marks_the_system_prompt_for_caching_and_forces_structured_output() {
        let mut request = Request::new(256);
        request.system = Some("You select memories.".into());
        request.messages.push(Message::user("which?"));
        request.structured = Some(StructuredOutput {
            name: "select_memories".into(),
            description: "d".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body("claude-haiku-4-5", &request);
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["tool_choice"]["name"], "select_memories");
        assert_eq!(body["tools"][0]["name"], "select_memories");
        assert_eq!(body["max_tokens"], 256);
        assert_eq!(body["messages"][0]["content"][0]["text"], "which?");
    }

    #[test]
    fn tool_results_carry_is_error_only_when_set() {
        let mut request = Request::new(10);
        request.tools.push(ToolSpec {
            name: "read".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        });
        request.messages.push(Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "a".into(),
                    content: "ok".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "b".into(),
                    content: "denied".into(),
                    is_error: true,
                },
            ],
        });
        let body = request_body("m", &request);
        let blocks = &body["messages"][0]["content"];
        assert!(blocks[0].get("is_error").is_none());
        assert_eq!(blocks[1]["is_error"], true);
        assert!(body.get("tool_choice").is_none());
    }

    #[test]
    fn parses_text_tool_use_and_usage() {
        let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
            "content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Let me look."},
                {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.md"}}],
            "stop_reason":"tool_use",
            "usage":{"input_tokens":12,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":3}}"#;
        let response = parse_response(body).expect("parse");
        assert_eq!(response.text(), "Let me look.");
        assert_eq!(response.tool_uses()[0].1, "read");
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                cache_read_tokens: 100,
                cache_creation_tokens: 3,
                calls: 1
            }
        );
    }

    #[test]
    fn malformed_answers_are_named() {
        let err = parse_response(b"{\"content\": [").expect_err("truncated");
        assert!(err.starts_with("malformed JSON in the answer"), "{err}");
        let err = parse_response(br#"{"type":"error","error":{"message":"bad key"}}"#)
            .expect_err("error object");
        assert!(err.contains("bad key"), "{err}");
        let err = parse_response(br#"{"id":"x"}"#).expect_err("no content");
        assert!(err.contains("no `content`"), "{err}");
    }

    #[test]
    fn a_client_needs_a_key() {
        let err = AnthropicClient::new(ClientOptions {
            base_url: DEFAULT_BASE_URL.into(),
            model: DEFAULT_MODEL.into(),
            api_key: None,
            timeout: std::time::Duration::from_secs(1),
            retry: RetryPolicy::default(),
        })
        .expect_err("no key");
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    }
}
