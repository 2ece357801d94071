//! OpenAI-compatible chat completions (`POST {base}/chat/completions`, non-streaming): OpenAI
//! itself and the local servers that copy its API — Ollama (`http://localhost:11434/v1`),
//! llama.cpp's `llama-server`, LM Studio, vLLM.
//!
//! Translation from the provider-neutral shape:
//! - the system prompt becomes a leading `system` message (these servers cache prefixes on their
//!   own; there is no cache mark to send);
//! - assistant `tool_use` blocks become `tool_calls` (arguments as a JSON string), each
//!   `tool_result` a `tool` message; a result that is an error is prefixed `Error: `, since the
//!   format has no error flag;
//! - structured output is `response_format: {type: "json_schema", json_schema: {name, schema,
//!   strict: true}}`;
//! - usage: `prompt_tokens − cached_tokens` input, `cached_tokens` cache reads, `completion_tokens`
//!   output, so the counts mean what the Anthropic client's mean.
//!
//! `max_tokens` is sent (not `max_completion_tokens`): every local server reads it, and so do
//! OpenAI's chat models.

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::endpoint::{answer_json, answer_model, Endpoint};
use super::{
    clip, BoxFuture, Client, ClientOptions, ContentBlock, Message, ProviderKind, Request, Response,
    Role, StopReason, Usage,
};
use crate::error::Result;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

#[derive(Debug)]
pub struct OpenAiClient {
    endpoint: Endpoint,
}

impl OpenAiClient {
    /// A client for `options`. The key is optional: local servers take none.
    pub fn new(options: ClientOptions) -> Result<OpenAiClient> {
        Ok(OpenAiClient {
            endpoint: Endpoint::new(options, "chat/completions")?,
        })
    }

    async fn send(&self, request: &Request, cancel: &CancellationToken) -> Result<Response> {
        let options = &self.endpoint.options;
        let body = request_body(&options.model, request);
        self.endpoint
            .post("openai", &body, bearer(options), parse_response, cancel)
            .await
    }
}

impl Client for OpenAiClient {
    fn provider(&self) -> ProviderKind {
        ProviderKind::OpenAi
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

/// Adds the key, when there is one, as `Authorization: Bearer` (local servers take none).
fn bearer(
    options: &ClientOptions,
) -> impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder + '_ {
    let key = options.api_key.as_deref().filter(|k| !k.is_empty());
    move |builder| match key {
        Some(key) => builder.bearer_auth(key),
        None => builder,
    }
}

/// The model `[llm.openai]` embeds with when `[llm] embeddings = "openai"` names none.
pub const DEFAULT_EMBEDDING_MODEL: &str = "text-embedding-3-small";
/// Texts per `/embeddings` request: OpenAI takes up to 2,048 inputs, local servers fewer
/// comfortably, and a smaller batch reports progress more often.
pub const EMBEDDING_BATCH: usize = 64;

/// An OpenAI-compatible embeddings endpoint (`POST {base}/embeddings`): OpenAI itself, Ollama,
/// LM Studio, llama.cpp's `llama-server --embeddings`, vLLM.
#[derive(Debug)]
pub struct OpenAiEmbeddings {
    endpoint: Endpoint,
}

impl OpenAiEmbeddings {
    /// A client for `options` (`model` is the embedding model). The key is optional.
    pub fn new(options: ClientOptions) -> Result<OpenAiEmbeddings> {
        Ok(OpenAiEmbeddings {
            endpoint: Endpoint::new(options, "embeddings")?,
        })
    }

    pub fn options(&self) -> &ClientOptions {
        &self.endpoint.options
    }

    /// One vector per text, in order, as the server computed them (not normalised), and what
    /// the call cost.
    pub async fn embed(&self, texts: &[&str], cancel: &CancellationToken) -> Result<Embedded> {
        let options = &self.endpoint.options;
        let body = json!({ "model": options.model, "input": texts });
        let embedded = self
            .endpoint
            .post(
                "openai embeddings",
                &body,
                bearer(options),
                parse_embeddings,
                cancel,
            )
            .await?;
        if embedded.vectors.len() != texts.len() {
            return Err(crate::error::Error::Llm(format!(
                "openai embeddings ({}): {} vectors for {} texts",
                options.base_url,
                embedded.vectors.len(),
                texts.len()
            )));
        }
        Ok(embedded)
    }
}

/// An `/embeddings` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    /// In input order.
    pub vectors: Vec<Vec<f32>>,
    /// `usage.prompt_tokens` as input tokens (0 when the server does not say), one call.
    pub usage: Usage,
    /// The model that answered, as the server names it (empty when it does not say).
    pub model: String,
}

/// An `/embeddings` answer (`{"data": [{"index", "embedding": [f32…]}…], "model",
/// "usage": {"prompt_tokens"}}`), its vectors in input order whatever order `data` lists them in.
pub fn parse_embeddings(body: &[u8]) -> std::result::Result<Embedded, String> {
    let answer = answer_json(body)?;
    let data = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!(
                "no `data` list in the answer: {}",
                clip(&answer.to_string(), 200)
            )
        })?;
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; data.len()];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| i as usize);
        let embedding = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format!("item {position} of `data` has no `embedding` list (a base64 answer?)")
            })?;
        let vector = embedding
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| format!("item {position} of `data` holds a non-number"))?;
        match vectors.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            _ => {
                return Err(format!(
                    "item {position} of `data` has a bad or repeated index {index}"
                ))
            }
        }
    }
    Ok(Embedded {
        vectors: vectors.into_iter().flatten().collect(),
        usage: Usage {
            input_tokens: answer
                .pointer("/usage/prompt_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            calls: 1,
            ..Usage::default()
        },
        model: answer_model(&answer),
    })
}

/// The JSON body of a chat-completions request.
pub fn request_body(model: &str, request: &Request) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        push_messages(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(structured) = &request.structured {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": structured.name,
                "description": structured.description,
                "schema": structured.schema,
                "strict": true,
            }}),
        );
    }
    Value::Object(body)
}

fn push_messages(out: &mut Vec<Value>, message: &Message) {
    match message.role {
        Role::Assistant => {
            let text: String = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(json!({
                        "id": id, "type": "function",
                        "function": {"name": name, "arguments": input.to_string()}})),
                    _ => None,
                })
                .collect();
            let mut value = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                value["tool_calls"] = Value::Array(calls);
            }
            out.push(value);
        }
        Role::User => {
            let mut text = String::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text { text: t } => text.push_str(t),
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let content = if *is_error {
                            format!("Error: {content}")
                        } else {
                            content.clone()
                        };
                        out.push(
                            json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}),
                        );
                    }
                    ContentBlock::ToolUse { .. } => {}
                }
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
    }
}

/// Reads a chat-completions response; the error is a message for [`Error::Llm`].
pub fn parse_response(body: &[u8]) -> std::result::Result<Response, String> {
    let value = answer_json(body)?;
    if let Some(message) = value.pointer("/error/message").and_then(Value::as_str) {
        return Err(format!("the server answered with an error: {message}"));
    }
    let choice = value.pointer("/choices/0").ok_or_else(|| {
        format!(
            "unexpected answer, no choices: {}",
            clip(&value.to_string(), 200)
        )
    })?;
    let message = choice
        .get("message")
        .ok_or_else(|| "unexpected answer, a choice without a message".to_owned())?;
    let mut content = Vec::new();
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        if !text.is_empty() {
            content.push(ContentBlock::Text {
                text: text.to_owned(),
            });
        }
    }
    for (i, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or_else(|| "a tool call without a function name".to_owned())?;
        // Some local servers omit ids; the agent needs one to answer the call.
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_{i}"), str::to_owned);
        let arguments = call.pointer("/function/arguments");
        let input = match arguments {
            Some(Value::String(raw)) => {
                serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
            }
            Some(other) => other.clone(),
            None => json!({}),
        };
        content.push(ContentBlock::ToolUse {
            id,
            name: name.to_owned(),
            input,
        });
    }
    let stop_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | None => StopReason::EndTurn,
        Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    };
    let count = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("/usage/prompt_tokens_details/cached_tokens");
    Ok(Response {
        content,
        stop_reason,
        usage: Usage {
            input_tokens: count("/usage/prompt_tokens").saturating_sub(cached),
            output_tokens: count("/usage/completion_tokens"),
            cache_read_tokens: cached,
            cache_creation_tokens: 0,
            calls: 1,
        },
        model: answer_model(&value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::StructuredOutput;

    #[test]
    fn translates_a_tool_round_trip() {
        let mut request = Request::new(100);
        request.system = Some("sys".into());
        request.messages.push(Message::user("go"));
        request.messages.push(Message::assistant(vec![
            ContentBlock::Text {
                text: "reading".into(),
            },
            ContentBlock::ToolUse {
                id: "c1".into(),
                name: "read".into(),
                input: json!({"path": "a.md"}),
            },
        ]));
        request.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "c1".into(),
                content: "outside the memory dir".into(),
                is_error: true,
            }],
        });
        let body = request_body("llama3", &request);
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(
            messages[2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a.md"}"#
        );
        assert_eq!(messages[3]["role"], "tool");
        assert_eq!(messages[3]["content"], "Error: outside the memory dir");
    }

    #[test]
    fn structured_output_uses_a_strict_json_schema() {
        let mut request = Request::new(256);
        request.structured = Some(StructuredOutput {
            name: "select_memories".into(),
            description: "d".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body("m", &request);
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    }

    #[test]
    fn an_embeddings_answer_gives_its_vectors_in_input_order_and_what_it_cost() {
        let body = br#"{"object":"list","model":"text-embedding-3-small",
            "data":[{"index":1,"embedding":[0.0,1.0]},{"index":0,"embedding":[1.0,0.0]}],
            "usage":{"prompt_tokens":12,"total_tokens":12}}"#;
        let answer = parse_embeddings(body).expect("answer");
        assert_eq!(answer.vectors, [vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert_eq!(answer.model, "text-embedding-3-small");
        assert_eq!(answer.usage.input_tokens, 12);
        assert_eq!(answer.usage.output_tokens, 0);
        assert_eq!(answer.usage.calls, 1);
        // A local server may not say what it cost: the call still counts.
        let bare = parse_embeddings(br#"{"data":[{"index":0,"embedding":[1.0]}]}"#).expect("bare");
        assert_eq!((bare.usage.input_tokens, bare.usage.calls), (0, 1));
        assert_eq!(bare.model, "");
    }

    #[test]
    fn parses_tool_calls_and_cached_usage() {
        let body = br#"{"model":"qwen","choices":[{"index":0,"finish_reason":"tool_calls",
            "message":{"role":"assistant","content":null,"tool_calls":[
              {"id":"call_9","type":"function","function":{"name":"glob","arguments":"{\"pattern\":\"*.md\"}"}},
              {"type":"function","function":{"name":"read","arguments":"not json"}}]}}],
            "usage":{"prompt_tokens":120,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":100}}}"#;
        let response = parse_response(body).expect("parse");
        let calls = response.tool_uses();
        assert_eq!(calls[0], ("call_9", "glob", &json!({"pattern": "*.md"})));
        assert_eq!(calls[1].0, "call_1", "a missing id is made up");
        assert_eq!(
            calls[1].2,
            &json!("not json"),
            "bad arguments reach the agent as text"
        );
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.usage.input_tokens, 20);
        assert_eq!(response.usage.cache_read_tokens, 100);
        assert_eq!(response.usage.output_tokens, 9);
    }

    #[test]
    fn malformed_answers_are_named() {
        assert!(parse_response(b"<html>")
            .expect_err("html")
            .contains("malformed JSON"));
        assert!(parse_response(br#"{"choices":[]}"#)
            .expect_err("empty")
            .contains("no choices"));
    }
}
