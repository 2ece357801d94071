//! Both provider clients against the scripted server on loopback, in each provider's real wire
//! format: tool-use turns, retries (429/5xx, `retry-after` honoured), errors that are not
//! retried, malformed answers, timeouts, cancellation, and token accounting.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::anthropic::AnthropicClient;
use super::openai::OpenAiClient;
use super::*;
use crate::testing::{wire, Reply, ScriptedServer};

fn options(server: &ScriptedServer, base_suffix: &str) -> ClientOptions {
    ClientOptions {
        base_url: format!("{}{base_suffix}", server.url()),
        model: "scripted-model".into(),
        api_key: Some("test-key".into()),
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            max_retry_after: Duration::from_secs(5),
        },
    }
}

fn anthropic(server: &ScriptedServer) -> AnthropicClient {
    AnthropicClient::new(options(server, "")).expect("client")
}

fn openai(server: &ScriptedServer) -> OpenAiClient {
    OpenAiClient::new(options(server, "/v1")).expect("client")
}

fn tool_request() -> Request {
    let mut request = Request::new(512);
    request.system = Some("You manage memories.".into());
    request.tools.push(ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    });
    request.messages.push(Message::user("Read the index."));
    request
}

#[tokio::test]
async fn anthropic_tool_use_turn_speaks_the_messages_api() {
    let server = ScriptedServer::queue(vec![Reply::json(wire::anthropic_tools(
        &[("toolu_1", "read", json!({"path": "MEMORY.md"}))],
        (100, 20, 300, 40),
    ))]);
    let client = anthropic(&server);
    let response = client
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect("answer");
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.tool_uses(),
        vec![("toolu_1", "read", &json!({"path": "MEMORY.md"}))]
    );
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 300,
            cache_creation_tokens: 40,
            calls: 1
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("test-key"));
    assert_eq!(
        sent.header("anthropic-version"),
        Some(anthropic::API_VERSION)
    );
    let body = sent.json();
    assert_eq!(body["model"], "scripted-model");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tools"][0]["name"], "read");
    assert_eq!(body["messages"][0]["role"], "user");
}

#[tokio::test]
async fn a_429_is_retried_after_the_servers_retry_after() {
    let server = ScriptedServer::queue(vec![
        Reply::status(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .with_header("retry-after", "1"),
        Reply::json(wire::anthropic_text("ok", (5, 1, 0, 0))),
    ]);
    let client = anthropic(&server);
    let started = Instant::now();
    let response = client
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect("second attempt succeeds");
    let waited = started.elapsed();
    assert_eq!(response.text(), "ok");
    assert_eq!(server.requests().len(), 2);
    assert!(
        waited >= Duration::from_millis(950),
        "retry-after: 1 must be honoured over the 10 ms backoff, waited {waited:?}"
    );
    assert_eq!(
        response.usage.calls, 1,
        "the refused attempt used no tokens"
    );
}

#[tokio::test]
async fn server_errors_are_retried_until_the_budget_runs_out() {
    let server = ScriptedServer::queue(vec![Reply::status(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )]);
    let err = anthropic(&server)
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect_err("always overloaded");
    assert_eq!(server.requests().len(), 3, "one attempt and two retries");
    let text = err.to_string();
    assert!(
        text.contains("HTTP 529")
            && text.contains("Overloaded")
            && text.contains("after 2 retries"),
        "{text}"
    );
    assert_eq!(err.kind(), crate::ErrorKind::Llm);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_say_what_the_server_said() {
    let server = ScriptedServer::queue(vec![Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )]);
    let err = anthropic(&server)
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect_err("bad key");
    assert_eq!(server.requests().len(), 1);
    assert!(
        err.to_string().contains("HTTP 401: invalid x-api-key"),
        "{err}"
    );
}

#[tokio::test]
async fn malformed_json_is_a_clear_error_not_a_retry() {
    for (client, path) in [
        (
            Box::new(|s: &ScriptedServer| Box::new(anthropic(s)) as Box<dyn Client>)
                as Box<dyn Fn(&ScriptedServer) -> Box<dyn Client>>,
            "/v1/messages",
        ),
        (
            Box::new(|s: &ScriptedServer| Box::new(openai(s)) as Box<dyn Client>),
            "/v1/chat/completions",
        ),
    ] {
        let server = ScriptedServer::queue(vec![Reply::status(200, r#"{"content": [{"type": "#)]);
        let err = client(&server)
            .complete(&tool_request(), &CancellationToken::new())
            .await
            .expect_err("truncated JSON");
        let text = err.to_string();
        assert!(text.contains("malformed JSON in the answer"), "{text}");
        assert!(text.contains(path), "the error names the endpoint: {text}");
        assert_eq!(server.requests().len(), 1, "a parse error is not retried");
    }
}

#[tokio::test]
async fn a_hung_server_is_given_up_on_within_the_timeout() {
    let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(20))]);
    let mut opts = options(&server, "");
    opts.timeout = Duration::from_millis(400);
    let client = AnthropicClient::new(opts).expect("client");
    let started = Instant::now();
    let err = client
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect_err("no answer");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(390) && waited < Duration::from_millis(1500),
        "gave up after {waited:?}"
    );
    assert!(err.to_string().contains("no answer within 400ms"), "{err}");
    assert_eq!(server.requests().len(), 1, "a timeout is not retried");
}

/// A token that a task cancels after `delay`.
fn cancelled_after(delay: Duration) -> CancellationToken {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        trigger.cancel();
    });
    cancel
}

#[tokio::test]
async fn cancelling_abandons_the_call_at_once() {
    let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(20))]);
    let client = openai(&server);
    let cancel = cancelled_after(Duration::from_millis(150));
    let started = Instant::now();
    let err = client
        .complete(&tool_request(), &cancel)
        .await
        .expect_err("cancelled");
    assert_eq!(err.kind(), crate::ErrorKind::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_during_a_backoff_stops_retrying() {
    let server = ScriptedServer::queue(vec![
        Reply::status(429, "{}").with_header("retry-after", "4")
    ]);
    let client = anthropic(&server);
    let cancel = cancelled_after(Duration::from_millis(300));
    let started = Instant::now();
    let err = client
        .complete(&tool_request(), &cancel)
        .await
        .expect_err("cancelled");
    assert_eq!(err.kind(), crate::ErrorKind::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn openai_tool_turns_round_trip_and_retry_after_ms_is_honoured() {
    let server = ScriptedServer::queue(vec![
        Reply::status(503, r#"{"error":{"message":"loading model"}}"#)
            .with_header("retry-after-ms", "300"),
        Reply::json(wire::openai_tools(
            &[("call_1", "read", json!({"path": "MEMORY.md"}))],
            50,
            8,
        )),
        Reply::json(wire::openai_text("Done.", 80, 4, 64)),
    ]);
    let client = openai(&server);
    let cancel = CancellationToken::new();
    let mut request = tool_request();
    let started = Instant::now();
    let first = client.complete(&request, &cancel).await.expect("tool call");
    assert!(
        started.elapsed() >= Duration::from_millis(290),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let (id, name, input) = first.tool_uses()[0];
    assert_eq!((id, name), ("call_1", "read"));
    request
        .messages
        .push(Message::assistant(first.content.clone()));
    request.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.to_owned(),
            content: format!("contents of {}", input["path"].as_str().unwrap_or("")),
            is_error: false,
        }],
    });
    let second = client.complete(&request, &cancel).await.expect("text");
    assert_eq!(second.text(), "Done.");

    let mut job = Usage::default();
    job += first.usage;
    job += second.usage;
    assert_eq!(
        job,
        Usage {
            input_tokens: 50 + (80 - 64),
            output_tokens: 12,
            cache_read_tokens: 64,
            cache_creation_tokens: 0,
            calls: 2
        }
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let last = &requests[2];
    assert_eq!(last.path, "/v1/chat/completions");
    assert_eq!(last.header("authorization"), Some("Bearer test-key"));
    let messages = last.json()["messages"].clone();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "contents of MEMORY.md"})
    );
}

#[tokio::test]
async fn openai_without_a_key_sends_no_authorization() {
    let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text("hi", 1, 1, 0))]);
    let mut opts = options(&server, "/v1");
    opts.api_key = None;
    OpenAiClient::new(opts)
        .expect("client")
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect("answer");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // Bind and drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let client = AnthropicClient::new(ClientOptions {
        base_url: format!("http://127.0.0.1:{port}"),
        ..options(&ScriptedServer::queue(vec![Reply::status(500, "")]), "")
    })
    .expect("client");
    let err = client
        .complete(&tool_request(), &CancellationToken::new())
        .await
        .expect_err("nobody listens");
    let text = err.to_string();
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(text.contains("after 2 retries"), "{text}");
}
