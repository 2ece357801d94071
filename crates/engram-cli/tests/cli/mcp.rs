//! `engram mcp` spoken to as an MCP client speaks to it — JSON-RPC lines over the real process's
//! stdin and stdout — for every tool and every error path, and `engram mcp install` checked
//! against what the real Claude Code 2.1.330 writes and connects to.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::support::{assert_has_keys, claude_binary, exit_code, stderr, stdout, Sandbox};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

/// How long a reply may take before the test calls the server hung: a guard against a hang
/// taking the suite with it, not a measurement.
const HANG: Duration = Duration::from_secs(120);

/// A running `engram mcp` and the client end of its stdio.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts `engram mcp ARGS` in the sandbox's project and completes the handshake.
    fn start(s: &Sandbox, args: &[&str]) -> Client {
        let mut client = Client::spawn(s.command(&[&["mcp"], args].concat()));
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "engram-test", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    fn spawn(mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn engram mcp");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("open stdin");
        writeln!(stdin, "{line}").expect("write to engram mcp");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns the response with its id (notifications in between are
    /// skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.response(id)
    }

    fn response(&mut self, id: u64) -> Value {
        loop {
            let line = match self.lines.recv_timeout(HANG) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("engram mcp gave no answer to request {id}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engram mcp closed stdout before answering {id}")
                }
            };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `tools/call`: the call's result (a tool error is a result too).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "{tool}: protocol error {response}"
        );
        let result = response["result"].clone();
        let text = text_of(&result);
        assert!(
            text.len() <= 64 * 1024,
            "{tool}: {} bytes of text, past the 64 KiB bound",
            text.len()
        );
        if let Some(structured) = result.get("structuredContent") {
            assert!(
                structured.to_string().len() <= 64 * 1024,
                "{tool}: structured content past the 64 KiB bound"
            );
        }
        result
    }

    /// A call that must succeed: its structured content.
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        assert!(!text_of(&result).is_empty(), "{tool}: plain text too");
        result["structuredContent"].clone()
    }

    /// A call that must fail as a tool error: its text.
    fn tool_error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"], true,
            "{tool} {arguments} must fail: {result}"
        );
        assert!(result.get("structuredContent").is_none(), "{result}");
        text_of(&result)
    }

    /// Closes stdin; the server must exit 0.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "engram mcp exited with {status}");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn sandbox() -> Sandbox {
    Sandbox::in_project("ledger").with_engram_home()
}

/// `engram remember` in the sandbox's project.
fn remember(s: &Sandbox, memory_type: &str, name: &str, description: &str, body: &str) -> Value {
    s.json(&[
        "remember",
        "--type",
        memory_type,
        "--name",
        name,
        "--description",
        description,
        "--body",
        body,
    ])
}

/// Sets a file's mtime `days` days back.
fn age(path: &Path, days: u64) {
    let file = fs::File::options().write(true).open(path).expect("open");
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(days * 86_400))
        .expect("set mtime");
}

#[test]
fn the_handshake_speaks_2025_06_18_and_every_tool_has_both_schemas() {
    let s = sandbox();
    let mut client = Client::start(&s, &[]);
    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "memory_search",
            "memory_recall",
            "memory_read",
            "memory_remember",
            "session_search",
            "session_read"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 40),
            "{tool}"
        );
    }
    client.finish();

    // A client asking for a newer revision is answered with the one Engram speaks.
    let mut newer = Client::spawn(s.command(&["mcp"]));
    let init = newer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "newer", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "engram");
    newer.finish();
}

#[test]
fn memory_search_finds_this_project_and_with_all_projects_every_project() {
    let s = sandbox();
    remember(
        &s,
        "feedback",
        "Retry policy",
        "Retries back off exponentially, five at most",
        "We decided on exponential backoff for retries.",
    );
    // Another project's memory, reached only with allProjects.
    let other = s.claude().join("projects/-elsewhere/memory");
    fs::create_dir_all(&other).expect("other project");
    fs::write(
        other.join("project_retries.md"),
        "---\nname: Queue retries\ndescription: The queue retries twice\ntype: project\n---\nRetries: two.\n",
    )
    .expect("seed");

    let mut client = Client::start(&s, &[]);
    let found = client.ok("memory_search", json!({"query": "retries"}));
    assert_eq!(found["scope"], "project");
    let hits = found["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 1, "this project only: {found}");
    assert_has_keys(
        &hits[0],
        &["file", "name", "description", "type", "project", "snippet"],
    );
    assert_eq!(hits[0]["file"], "feedback_retry_policy.md");
    assert_eq!(hits[0]["type"], "feedback");
    assert_eq!(found["nextPage"], Value::Null);

    let everywhere = client.ok(
        "memory_search",
        json!({"query": "retries", "allProjects": true}),
    );
    let projects: Vec<&str> = everywhere["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["project"].as_str().expect("project"))
        .collect();
    assert!(
        projects.contains(&"-elsewhere") && projects.len() == 2,
        "{everywhere}"
    );

    // A hit in another project is read through its `project`.
    let read = client.ok(
        "memory_read",
        json!({"file": "project_retries.md", "project": "-elsewhere"}),
    );
    assert_eq!(read["body"], "Retries: two.\n");
    let none = client.ok("memory_search", json!({"query": "kubernetes"}));
    assert_eq!(none["hits"], json!([]));
    let empty = client.tool_error("memory_search", json!({"query": "  "}));
    assert!(empty.contains("empty search"), "{empty}");
    client.finish();
}

#[test]
fn memory_recall_is_what_the_prompt_hook_injects_with_the_staleness_caveat() {
    let s = sandbox();
    let saved = remember(
        &s,
        "project",
        "Deploy freeze",
        "No deploys on Fridays after noon",
        "Deploys freeze Friday noon until Monday.",
    );
    let file = s.memory_dir().join(saved["file"].as_str().expect("file"));
    age(&file, 10);
    let prompt = "can we deploy on friday afternoon?";

    // The prompt hook, for the same prompt in the same project.
    let payload = json!({"session_id": "s1", "cwd": s.project(), "prompt": prompt,
                         "hook_event_name": "UserPromptSubmit"});
    let hook = s.run_with_stdin(&["hook", "user-prompt-submit"], &payload.to_string());
    let hooked: Value = serde_json::from_slice(&hook.stdout).expect("hook JSON");
    let injected = hooked["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("the hook injects")
        .to_owned();

    let mut client = Client::start(&s, &[]);
    let result = client.call("memory_recall", json!({"prompt": prompt}));
    let recalled = result["structuredContent"].clone();
    assert_eq!(
        recalled["context"],
        injected.as_str(),
        "the hook's very text"
    );
    assert_eq!(text_of(&result), injected, "and the model reads the same");
    let memory = &recalled["memories"][0];
    assert_has_keys(
        memory,
        &["file", "type", "description", "age", "caveat", "content"],
    );
    assert_eq!(memory["age"], "10 days ago");
    assert!(
        memory["caveat"]
            .as_str()
            .is_some_and(|c| c.starts_with("This memory is 10 days old.")),
        "{memory}"
    );
    assert!(injected.contains("This memory is 10 days old."));

    // The same gate: one word recalls nothing, an unrelated prompt nothing.
    let word = client.ok("memory_recall", json!({"prompt": "deploy"}));
    assert_eq!(word["memories"], json!([]));
    assert!(
        word["skipped"]
            .as_str()
            .is_some_and(|w| w.contains("single-word")),
        "{word}"
    );
    let unrelated = client.ok(
        "memory_recall",
        json!({"prompt": "how do I center a div in css"}),
    );
    assert_eq!(unrelated["memories"], json!([]));
    let bad = client.tool_error(
        "memory_recall",
        json!({"prompt": "deploy friday", "limit": 9}),
    );
    assert!(bad.contains("limit"), "{bad}");
    client.finish();
}

#[cfg(unix)]
#[test]
fn memory_read_is_confined_to_the_memory_dir_and_reads_agent_memory_by_store_name() {
    let s = sandbox();
    let saved = remember(
        &s,
        "user",
        "Role",
        "Senior Rust engineer",
        "Writes Rust daily.",
    );
    let memory_dir = s.memory_dir();
    let outside = s.root().join("outside");
    fs::create_dir_all(&outside).expect("outside");
    fs::write(outside.join("secret.md"), "---\nname: x\n---\nnot yours\n").expect("seed");
    std::os::unix::fs::symlink(outside.join("secret.md"), memory_dir.join("link.md"))
        .expect("link");
    std::os::unix::fs::symlink(&outside, memory_dir.join("out")).expect("link");
    // A user-scope agent memory, addressed by its store name.
    let agent = s.claude().join("agent-memory/reviewer");
    fs::create_dir_all(&agent).expect("agent dir");
    fs::write(
        agent.join("style.md"),
        "---\nname: Style\ndescription: Review style\ntype: feedback\n---\nBe terse.\n",
    )
    .expect("seed");

    let mut client = Client::start(&s, &[]);
    let read = client.ok("memory_read", json!({"file": saved["file"]}));
    assert_eq!(read["name"], "Role");
    assert_eq!(read["body"], "Writes Rust daily.\n");
    assert_eq!(read["caveat"], Value::Null, "saved today");
    let agent_read = client.ok(
        "memory_read",
        json!({"file": "style.md", "project": "agent:user:reviewer:"}),
    );
    assert_eq!(agent_read["body"], "Be terse.\n");

    for (file, project) in [
        ("../outside/secret.md", Value::Null),
        ("/etc/passwd.md", Value::Null),
        ("link.md", Value::Null),
        ("out/secret.md", Value::Null),
        ("secret.md", json!("../../outside")),
        ("secret.md", json!("agent:user:../../../outside:")),
    ] {
        let error = client.tool_error("memory_read", json!({"file": file, "project": project}));
        assert!(
            error.contains("outside") || error.contains("denied") || error.contains("names no"),
            "{file} in {project}: {error}"
        );
        assert!(
            !error.contains("not yours"),
            "nothing of the file leaks: {error}"
        );
    }
    let missing = client.tool_error("memory_read", json!({"file": "nope.md"}));
    assert!(missing.contains("nope.md"), "{missing}");
    client.finish();
}

#[test]
fn memory_remember_saves_through_the_engine_with_history_secrets_and_review() {
    let s = sandbox();
    let mut client = Client::start(&s, &[]);
    let saved = client.ok(
        "memory_remember",
        json!({"name": "Retry policy", "description": "Retries back off exponentially",
               "type": "feedback", "body": "Back off exponentially; five tries at most."}),
    );
    assert_eq!(saved["action"], "created");
    assert_eq!(saved["status"], "applied");
    assert_eq!(saved["file"], "feedback_retry_policy.md");
    let memory_dir = s.memory_dir();
    let index = fs::read_to_string(memory_dir.join("MEMORY.md")).expect("index");
    assert!(
        index.contains("[Retry policy](feedback_retry_policy.md) — Retries back off exponentially"),
        "{index}"
    );
    let history = s.json(&["history", "feedback_retry_policy.md"]);
    assert_eq!(history[0]["actor"], "mcp", "{history}");

    // Secrets: refused in team memory (nothing written), a warning elsewhere.
    let key = "AKIAIOSFODNN7EXAMPLQ";
    let refused = client.tool_error(
        "memory_remember",
        json!({"name": "Deploy keys", "description": "CI keys", "type": "reference",
               "file": "team/deploy_keys.md", "body": format!("aws_access_key_id = {key}")}),
    );
    assert!(
        refused.contains("team memory") && refused.contains("credential"),
        "{refused}"
    );
    assert!(
        !memory_dir.join("team/deploy_keys.md").exists(),
        "nothing written"
    );
    let warned = client.ok(
        "memory_remember",
        json!({"name": "My keys", "description": "Where my CI keys are", "type": "reference",
               "body": format!("aws_access_key_id = {key}")}),
    );
    assert_eq!(warned["status"], "applied");
    assert!(
        warned["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("credential")),
        "{warned}"
    );

    // Paths out of the memory dir are refused.
    for file in ["../evil.md", "/tmp/evil.md", "a/../../evil.md"] {
        let error = client.tool_error(
            "memory_remember",
            json!({"name": "Evil", "description": "d", "type": "user", "file": file, "body": "x"}),
        );
        assert!(
            error.contains("outside") || error.contains("denied"),
            "{file}: {error}"
        );
    }
    assert!(!s
        .memory_dir()
        .parent()
        .expect("parent")
        .join("evil.md")
        .exists());

    // Rewriting a feedback memory waits for the user's review; the file stays as it was.
    let before = fs::read_to_string(memory_dir.join("feedback_retry_policy.md")).expect("file");
    let staged = client.ok(
        "memory_remember",
        json!({"name": "Retry policy", "description": "Retries never back off",
               "type": "feedback", "body": "Retry at once."}),
    );
    assert_eq!(staged["status"], "staged", "{staged}");
    assert_eq!(staged["waiting"], json!(["feedback_retry_policy.md"]));
    // The model is told what the memory said: it may have meant another memory.
    assert_eq!(
        staged["replacedDescription"], "Retries back off exponentially",
        "{staged}"
    );
    assert_eq!(saved["replacedDescription"], Value::Null);
    assert_eq!(
        fs::read_to_string(memory_dir.join("feedback_retry_policy.md")).expect("file"),
        before
    );
    let sets = s.json(&["changes", "list"]);
    let set = sets
        .as_array()
        .expect("sets")
        .iter()
        .find(|set| set["id"] == staged["changeSet"])
        .expect("the staged set is listed");
    assert_eq!(set["source"], "mcp");
    assert_eq!(set["status"], "pending");

    let bad = client.tool_error(
        "memory_remember",
        json!({"name": "x", "description": "d", "type": "opinion"}),
    );
    assert!(
        bad.contains("invalid arguments") && bad.contains("opinion"),
        "{bad}"
    );
    client.finish();

    // A project that reviews everything gets new memories staged too.
    let project = s.json(&["where"])["transcriptsDir"]
        .as_str()
        .map(|d| {
            Path::new(d)
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned()
        })
        .expect("project");
    fs::create_dir_all(s.engram_home()).expect("home");
    fs::write(
        s.engram_home().join("config.toml"),
        format!("[extract.projects.\"{project}\"]\npolicy = \"review\"\n"),
    )
    .expect("config");
    let mut client = Client::start(&s, &[]);
    let reviewed = client.ok(
        "memory_remember",
        json!({"name": "Timezone", "description": "The user works in CET", "type": "user", "body": "CET."}),
    );
    assert_eq!(reviewed["status"], "staged");
    assert!(!memory_dir.join("user_timezone.md").exists());
    client.finish();
}

/// One transcript line.
fn entry(
    session: &str,
    cwd: &Path,
    uuid: &str,
    parent: Option<&str>,
    role: &str,
    text: &str,
) -> String {
    json!({
        "type": role, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
        "sessionId": session, "cwd": cwd, "version": "2.1.330",
        "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {"role": role, "content": text},
    })
    .to_string()
}

/// Writes a transcript of `messages` (alternating user / assistant) for the project.
fn transcript(s: &Sandbox, session: &str, messages: &[String]) -> PathBuf {
    let dir = PathBuf::from(s.json(&["where"])["transcriptsDir"].as_str().expect("dir"));
    fs::create_dir_all(&dir).expect("transcripts dir");
    let mut lines = String::new();
    let mut parent: Option<String> = None;
    for (i, text) in messages.iter().enumerate() {
        let uuid = format!("00000000-0000-4000-8000-{i:012}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        lines.push_str(&entry(
            session,
            &s.project(),
            &uuid,
            parent.as_deref(),
            role,
            text,
        ));
        lines.push('\n');
        parent = Some(uuid);
    }
    let path = dir.join(format!("{session}.jsonl"));
    fs::write(&path, lines).expect("transcript");
    path
}

#[test]
fn session_search_and_session_read_page_through_transcripts_and_refuse_unknown_ones() {
    let s = sandbox();
    let session = "11111111-2222-4333-8444-555555555555";
    let mut messages = vec![
        "The migration fails with error E1045 on the orders table".to_owned(),
        "E1045 means a lock timeout; run the migration outside the deploy window.".to_owned(),
    ];
    messages.extend((0..60).map(|i| format!("message number {i}")));
    transcript(&s, session, &messages);

    let mut client = Client::start(&s, &[]);
    let found = client.ok("session_search", json!({"query": "migration E1045"}));
    let hits = found["hits"].as_array().expect("hits");
    assert!(!hits.is_empty(), "{found}");
    assert_has_keys(
        &hits[0],
        &[
            "sessionId",
            "project",
            "uuid",
            "role",
            "timestamp",
            "snippet",
        ],
    );
    assert_eq!(hits[0]["sessionId"], session);

    let mut read = Vec::new();
    let mut page = json!(0);
    let mut pages = 0;
    while !page.is_null() {
        let answer = client.ok("session_read", json!({"sessionId": session, "page": page}));
        assert_eq!(answer["total"], 62);
        read.extend(
            answer["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .cloned(),
        );
        page = answer["nextPage"].clone();
        pages += 1;
    }
    assert!(pages >= 2, "62 messages take more than one page");
    assert_eq!(read.len(), 62, "every message once");
    assert_eq!(read[0]["text"], messages[0].as_str());
    assert_eq!(read[61]["text"], "message number 59");

    for id in [
        "99999999-0000-4000-8000-000000000000",
        "../../etc/passwd",
        "/etc/passwd.jsonl",
        "",
    ] {
        let error = client.tool_error("session_read", json!({"sessionId": id}));
        assert!(error.contains("session"), "{id:?}: {error}");
    }
    let past = client.tool_error("session_read", json!({"sessionId": session, "page": 500}));
    assert!(past.contains("past the end"), "{past}");
    client.finish();
}

#[test]
fn huge_memories_transcripts_and_result_lists_come_back_bounded_and_paged() {
    let s = sandbox();
    // A 1 MB memory: read in pages that together are its body.
    let body: String = (0..20_000)
        .map(|i| format!("line {i:05} of a very long memory\n"))
        .collect();
    let body_file = s.root().join("huge.md");
    fs::write(&body_file, &body).expect("body");
    let saved = s.json(&[
        "remember",
        "--type",
        "project",
        "--name",
        "Huge notes",
        "--description",
        "A very long memory",
        "--body-file",
        body_file.to_str().expect("utf-8"),
    ]);
    // 60 memories matching one word: search pages.
    for i in 0..60 {
        remember(
            &s,
            "reference",
            &format!("Widget {i}"),
            &format!("widget number {i}"),
            "widget",
        );
    }
    // A transcript whose one message is 3 MB.
    let session = "22222222-2222-4333-8444-555555555555";
    transcript(
        &s,
        session,
        &["x".repeat(3_000_000), "short answer".to_owned()],
    );

    let mut client = Client::start(&s, &[]);
    let mut read = String::new();
    let mut page = json!(0);
    while !page.is_null() {
        let answer = client.ok("memory_read", json!({"file": saved["file"], "page": page}));
        read.push_str(answer["body"].as_str().expect("body"));
        page = answer["nextPage"].clone();
    }
    assert_eq!(read, body, "the pages add up to the body");

    let mut files = std::collections::BTreeSet::new();
    let mut page = json!(0);
    while !page.is_null() {
        let answer = client.ok("memory_search", json!({"query": "widget", "page": page}));
        let hits = answer["hits"].as_array().expect("hits");
        assert!(hits.len() <= 20, "at most 20 a page");
        for hit in hits {
            assert!(
                files.insert(hit["file"].as_str().expect("file").to_owned()),
                "no hit twice"
            );
        }
        page = answer["nextPage"].clone();
    }
    assert_eq!(files.len(), 60);

    let answer = client.ok("session_read", json!({"sessionId": session}));
    let first = &answer["messages"][0];
    assert_eq!(first["text"].as_str().expect("text").chars().count(), 8192);
    assert_eq!(first["textOmitted"], 3_000_000 - 8192);
    assert_eq!(answer["messages"][1]["text"], "short answer");
    client.finish();
}

#[test]
fn bad_input_is_answered_and_the_server_keeps_going() {
    let s = sandbox();
    let mut client = Client::start(&s, &[]);
    let unknown = client.request(
        "tools/call",
        json!({"name": "memory_delete_everything", "arguments": {}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let wrong_type = client.tool_error("memory_search", json!({"query": 42}));
    assert!(wrong_type.contains("invalid arguments"), "{wrong_type}");
    let missing = client.tool_error("session_read", json!({}));
    assert!(missing.contains("sessionId"), "{missing}");
    // A line that is not JSON at all, then a normal call: still answered.
    client.send("this is not json {");
    let after = client.ok("memory_search", json!({"query": "anything"}));
    assert_eq!(after["hits"], json!([]));
    client.finish();
}

/// A HOME, Claude config dir and project for the install tests, with Claude Code's own
/// `.claude.json` keys already there.
fn install_sandbox() -> Sandbox {
    let s = sandbox();
    fs::write(
        s.home().join(".claude.json"),
        "{\n  \"numStartups\": 3,\n  \"theme\": \"dark\",\n  \"projects\": {\n    \"/x\": {\n      \"allowedTools\": []\n    }\n  }\n}",
    )
    .expect("seed");
    s
}

#[test]
fn install_writes_the_entry_claude_mcp_add_writes_keeps_every_other_byte_and_uninstalls_it() {
    let s = install_sandbox();
    let original = fs::read_to_string(s.home().join(".claude.json")).expect("seed");
    let engram = fs::canonicalize(env!("CARGO_BIN_EXE_engram")).expect("engram");
    let installed = s.json(&["mcp", "install"]);
    assert_eq!(installed["action"], "installed");
    assert_eq!(
        installed["file"],
        s.home().join(".claude.json").display().to_string()
    );
    let text = fs::read_to_string(s.home().join(".claude.json")).expect("written");
    let value: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        value["mcpServers"]["engram"],
        json!({"type": "stdio", "command": engram, "args": ["mcp"], "env": {}})
    );
    let body_end = original.rfind("\n}").expect("closing brace");
    assert!(
        text.starts_with(&original[..body_end]) && text.ends_with("\n}"),
        "every other byte kept:\n{text}"
    );
    assert!(installed["backup"]
        .as_str()
        .is_some_and(|b| b.starts_with(&*s.engram_home().to_string_lossy())));
    assert_eq!(
        s.json(&["mcp", "install"])["action"],
        "unchanged",
        "installing twice is once"
    );
    let status = s.json(&["mcp", "status"]);
    assert_eq!(status[0]["installed"], true);
    assert_eq!(status[0]["upToDate"], true);
    assert_eq!(status[1]["scope"], "project");
    assert_eq!(status[1]["installed"], false);

    let removed = s.json(&["mcp", "uninstall"]);
    assert_eq!(removed["action"], "removed");
    let after: Value =
        serde_json::from_str(&fs::read_to_string(s.home().join(".claude.json")).expect("read"))
            .expect("JSON");
    let mut expected: Value = serde_json::from_str(&original).expect("JSON");
    expected["mcpServers"] = json!({});
    assert_eq!(
        after, expected,
        "only Engram's entry went, as `claude mcp remove` leaves it"
    );
    assert_eq!(s.json(&["mcp", "uninstall"])["action"], "unchanged");

    // Project scope: `.mcp.json` in the project root.
    assert_eq!(
        s.json(&["mcp", "install", "--scope", "project"])["action"],
        "installed"
    );
    let project: Value =
        serde_json::from_str(&fs::read_to_string(s.project().join(".mcp.json")).expect("written"))
            .expect("JSON");
    assert_eq!(project["mcpServers"]["engram"]["args"], json!(["mcp"]));

    // Another program registered as `engram` is left alone, and named.
    fs::write(
        s.home().join(".claude.json"),
        "{\"mcpServers\": {\"engram\": {\"type\": \"stdio\", \"command\": \"/usr/bin/go-engram\", \"args\": [\"serve\"]}}}",
    )
    .expect("seed");
    for args in [&["mcp", "install"][..], &["mcp", "uninstall"][..]] {
        let out = s.run(args);
        assert_eq!(exit_code(&out), 2, "{args:?}");
        assert!(stderr(&out).contains("go-engram"), "{}", stderr(&out));
    }
    assert!(fs::read_to_string(s.home().join(".claude.json"))
        .expect("read")
        .contains("go-engram"));
    // A broken file is named with its line, not rewritten.
    fs::write(s.home().join(".claude.json"), "{\n  \"a\": 1,\n  oops\n}").expect("seed");
    let out = s.run(&["mcp", "install"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains(".claude.json:3"), "{}", stderr(&out));
}

/// `claude ARGS` offline in the sandbox's project (`config_dir`: `CLAUDE_CONFIG_DIR`).
fn claude(
    s: &Sandbox,
    claude: &Path,
    args: &[&str],
    config_dir: Option<&Path>,
) -> std::process::Output {
    let mut command = Command::new(claude);
    command
        .args(args)
        .current_dir(s.project())
        .env_clear()
        .env("HOME", s.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("ENGRAM_HOME", s.engram_home())
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .stdin(Stdio::null());
    if let Some(dir) = config_dir {
        command.env("CLAUDE_CONFIG_DIR", dir);
    }
    command.output().expect("run claude")
}

#[test]
fn claude_mcp_list_shows_engram_connected_and_its_own_add_writes_the_same_entry() {
    let Some(claude_bin) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = install_sandbox();
    let engram = fs::canonicalize(env!("CARGO_BIN_EXE_engram")).expect("engram");
    let before = fs::read_to_string(s.home().join(".claude.json")).expect("seed");

    // What Claude Code itself writes for `claude mcp add --scope user engram -- ENGRAM mcp`.
    let engram_str = engram.to_str().expect("utf-8");
    let added = claude(
        &s,
        &claude_bin,
        &[
            "mcp", "add", "--scope", "user", "engram", "--", engram_str, "mcp",
        ],
        None,
    );
    assert_eq!(exit_code(&added), 0, "{}", stderr(&added));
    let theirs: Value =
        serde_json::from_str(&fs::read_to_string(s.home().join(".claude.json")).expect("read"))
            .expect("JSON");
    fs::write(s.home().join(".claude.json"), &before).expect("reset");
    s.json(&["mcp", "install"]);
    let ours: Value =
        serde_json::from_str(&fs::read_to_string(s.home().join(".claude.json")).expect("read"))
            .expect("JSON");
    assert_eq!(
        ours["mcpServers"], theirs["mcpServers"],
        "the entry `claude mcp add` writes"
    );

    let listed = claude(&s, &claude_bin, &["mcp", "list"], None);
    let out = stdout(&listed);
    assert!(
        out.lines()
            .any(|l| l.starts_with("engram:") && l.contains("Connected")),
        "claude mcp list: {out}{}",
        stderr(&listed)
    );

    // With CLAUDE_CONFIG_DIR, both look inside it.
    let mut install = s.command(&["mcp", "install", "--json"]);
    install.env("CLAUDE_CONFIG_DIR", s.claude());
    let out = install.output().expect("install");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(s.claude().join(".claude.json").is_file());
    let listed = claude(&s, &claude_bin, &["mcp", "list"], Some(&s.claude()));
    assert!(
        stdout(&listed)
            .lines()
            .any(|l| l.starts_with("engram:") && l.contains("Connected")),
        "{}",
        stdout(&listed)
    );
}

#[test]
fn a_claude_code_session_calls_memory_search_and_gets_the_memory_back() {
    let Some(claude_bin) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    remember(
        &s,
        "feedback",
        "Retry policy",
        "Retries back off exponentially (BACKOFF-MARK-7), five at most",
        "We settled on exponential backoff, at most five tries.",
    );
    let mut install = s.command(&["mcp", "install", "--json"]);
    install.env("CLAUDE_CONFIG_DIR", s.claude());
    assert_eq!(exit_code(&install.output().expect("install")), 0);

    let prompt = "What did we decide about retries?";
    let server = ScriptedServer::handler(move |request, _| -> Reply {
        if !request.body.contains(prompt) {
            return wire::anthropic_stream_text("ok");
        }
        if request.body.contains("\"tool_result\"") {
            return wire::anthropic_stream_text("Exponential backoff, five tries.");
        }
        wire::anthropic_stream_tool_use(
            "toolu_mcp1",
            "mcp__engram__memory_search",
            &json!({"query": "retries"}),
        )
    });
    // As a user allows it (`permissions.allow` in settings, or the flag): MCP tools ask first.
    s.claude_turn(
        &claude_bin,
        &server.url(),
        prompt,
        &["--allowedTools", "mcp__engram__memory_search"],
    );
    let requests = server.requests();
    let answered = requests
        .iter()
        .filter(|r| r.path.starts_with("/v1/messages"))
        .find(|r| r.body.contains("toolu_mcp1") && r.body.contains("\"tool_result\""))
        .unwrap_or_else(|| {
            panic!(
                "no request carried the tool result: {:#?}",
                requests.iter().map(|r| &r.path).collect::<Vec<_>>()
            )
        });
    let body: Value = serde_json::from_str(&answered.body).expect("request JSON");
    let result = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == "toolu_mcp1")
        .expect("the tool result block");
    // Claude Code 2.1.330 hands the model the structured content (the hits), as JSON.
    let text = result.to_string();
    assert!(
        text.contains("BACKOFF-MARK-7") && text.contains("feedback_retry_policy.md"),
        "the memory reached the model: {text}"
    );
    assert_ne!(result["is_error"], true, "{text}");
}
