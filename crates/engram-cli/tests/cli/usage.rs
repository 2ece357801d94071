//! Token usage and the daily budget end to end: real `engram` processes calling the scripted
//! model on loopback (the Anthropic wire format), the usage log they leave in the data dir,
//! `engram usage`, and what model work does once `[budget] daily_tokens` is reached.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

use crate::support::{assert_has_keys, exit_code, keys, stderr, stdout, Sandbox};

const SESSION: &str = "dddddddd-0000-0000-0000-000000000004";

/// A session in the sandbox project whose user said `prompt`; returns the project's name (the
/// transcripts folder under `~/.claude/projects/`).
fn session(s: &Sandbox, prompt: &str) -> String {
    let cwd = fs::canonicalize(s.project()).expect("real project");
    let project = memory_engine::paths::sanitize_path(&cwd.to_string_lossy());
    let dir = s.home().join(".claude/projects").join(&project);
    fs::create_dir_all(&dir).expect("projects");
    let entries = [
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "cwd": cwd, "sessionId": SESSION,
            "timestamp": "2026-11-21T09:00:00Z", "message": {"role": "user", "content": prompt}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "cwd": cwd, "sessionId": SESSION,
            "timestamp": "2026-11-21T09:00:05Z", "message": {"id": "m1", "role": "assistant",
            "content": [{"type": "text", "text": "Understood."}]}}),
    ];
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    fs::write(dir.join(format!("{SESSION}.jsonl")), text).expect("transcript");
    project
}

fn with_model(mut command: Command, server: &ScriptedServer) -> Command {
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key");
    command
}

/// Runs `command`, expects exit 0, parses stdout as JSON.
fn json_of(mut command: Command) -> Value {
    let out = command.output().expect("run engram");
    assert_eq!(exit_code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("stdout is JSON")
}

fn usage_files(s: &Sandbox) -> Vec<PathBuf> {
    fs::read_dir(s.engram_home().join("usage"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn model_calls_are_logged_per_job_and_project_and_usage_sums_them() {
    let s = Sandbox::in_project("usage").with_engram_home();
    let project = session(&s, "Remember that we deploy with Fly.io, never Heroku.");
    let topic = "---\nname: Deploys\ndescription: We deploy with Fly.io, never Heroku\ntype: project\n---\nDeploy with Fly.io.\n";
    let extraction = ScriptedServer::queue(vec![
        Reply::json(wire::anthropic_tools(
            &[
                (
                    "w1",
                    "write",
                    json!({"path": "project_deploys.md", "content": topic}),
                ),
                (
                    "w2",
                    "write",
                    json!({"path": "MEMORY.md", "content": "- [Deploys](project_deploys.md) — Fly.io, never Heroku\n"}),
                ),
            ],
            // input, output, cache read, cache creation
            (1000, 200, 300, 50),
        )),
        Reply::json(wire::anthropic_text("Saved.", (1100, 20, 0, 0))),
    ]);
    let outcome = json_of(with_model(
        s.command(&["extract", SESSION, "--provider", "anthropic", "--json"]),
        &extraction,
    ));
    assert_eq!(outcome["extractor"], "model", "{outcome}");
    assert_eq!(outcome["reason"], Value::Null);

    let recall = ScriptedServer::queue(vec![Reply::json(wire::anthropic_tools(
        &[(
            "toolu_1",
            "select_memories",
            json!({"selected_memories": ["project_deploys.md"]}),
        )],
        (400, 10, 0, 0),
    ))]);
    let recalled = json_of(with_model(
        s.command(&[
            "recall",
            "how do we deploy",
            "--provider",
            "anthropic",
            "--json",
        ]),
        &recall,
    ));
    assert_eq!(recalled[0]["file"], "project_deploys.md", "{recalled}");

    let rows = s.json(&["usage"]);
    let rows = rows.as_array().expect("an array of rows");
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in rows {
        assert_has_keys(
            row,
            &[
                "day",
                "project",
                "job",
                "provider",
                "model",
                "inputTokens",
                "outputTokens",
                "cacheCreationTokens",
                "cacheReadTokens",
                "calls",
            ],
        );
        assert_eq!(row["project"], project.as_str(), "{row}");
        assert_eq!(row["provider"], "anthropic");
        assert_eq!(row["model"], "claude-scripted", "the model that answered");
        assert_eq!(
            row["day"].as_str().map(str::len),
            Some(10),
            "YYYY-MM-DD: {row}"
        );
    }
    let job = |name: &str| {
        rows.iter()
            .find(|r| r["job"] == name)
            .unwrap_or_else(|| panic!("a {name} row in {rows:?}"))
    };
    let extract = job("extract");
    assert_eq!(extract["calls"], 2);
    assert_eq!(extract["inputTokens"], 2100);
    assert_eq!(extract["outputTokens"], 220);
    assert_eq!(extract["cacheReadTokens"], 300);
    assert_eq!(extract["cacheCreationTokens"], 50);
    let recall_row = job("recall");
    assert_eq!(recall_row["calls"], 1);
    assert_eq!(recall_row["inputTokens"], 400);

    let files = usage_files(&s);
    assert_eq!(files.len(), 1, "one file a day: {files:?}");
    // Private modes exist on Unix only (platforms row 3).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&files[0]).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the log is private");
    }
    let lines = fs::read_to_string(&files[0]).expect("log");
    assert_eq!(lines.lines().count(), 3, "one line per call: {lines}");

    let text = s.run(&["usage", "--days", "1"]);
    assert_eq!(exit_code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(
        text.contains("extract") && text.contains("recall") && text.contains("2,670"),
        "a table with the extract row's total: {text}"
    );
    assert!(
        text.contains("Today: 3,080 tokens (no daily budget"),
        "{text}"
    );
    let bad = s.run(&["usage", "--days", "0"]);
    assert_eq!(exit_code(&bad), 2, "{}", stderr(&bad));
}

#[test]
fn over_the_daily_budget_a_forced_model_dream_is_skipped_and_extraction_and_recall_do_without() {
    let s = Sandbox::in_project("budget").with_engram_home();
    session(&s, "Remember that releases are cut on Thursdays.");
    fs::create_dir_all(s.engram_home()).expect("data dir");
    fs::write(
        s.engram_home().join("config.toml"),
        "[llm]\nprovider = \"anthropic\"\n\n[budget]\ndaily_tokens = 1000\n",
    )
    .expect("config");
    // The extraction's first call spends 1,500 tokens: its second is refused, the rules take
    // over, and every later model call of the day is refused before it is sent.
    let server = ScriptedServer::queue(vec![
        Reply::json(wire::anthropic_tools(
            &[("r1", "read", json!({"path": "MEMORY.md"}))],
            (1200, 300, 0, 0),
        )),
        Reply::json(wire::anthropic_text("Done.", (10, 10, 0, 0))),
    ]);
    let outcome = json_of(with_model(
        s.command(&["extract", SESSION, "--json"]),
        &server,
    ));
    assert_eq!(
        server.requests().len(),
        1,
        "the run's second call was refused"
    );
    assert_eq!(outcome["extractor"], "offline", "{outcome}");
    assert_eq!(
        outcome["reason"], "daily token budget reached (1,500 of 1,000 tokens today)",
        "{outcome}"
    );
    let files: Vec<&str> = outcome["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["file"].as_str())
        .collect();
    assert!(
        files
            .iter()
            .any(|f| f.ends_with(".md") && *f != "MEMORY.md"),
        "the rules extracted the stated fact: {outcome}"
    );

    s.json(&["dream", "set", "--enabled", "true"]);
    let status = with_model(s.command(&["dream", "status", "--json"]), &server)
        .output()
        .expect("status");
    let status: Value = serde_json::from_str(&stdout(&status)).expect("json");
    assert_eq!(status["blockedBy"], "budget", "{status}");
    assert_eq!(status["budget"]["tokensToday"], 1500);
    assert_eq!(status["budget"]["dailyTokens"], 1000);

    let out = with_model(s.command(&["dream", "run", "--force", "--json"]), &server)
        .output()
        .expect("dream");
    assert_eq!(
        exit_code(&out),
        0,
        "a skip is not a failure: {}",
        stderr(&out)
    );
    let dream: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(dream["status"], "skipped", "{dream}");
    assert_eq!(
        dream["blockedBy"], "budget",
        "--force skips the gates, never the budget"
    );
    assert!(
        dream["summary"]
            .as_str()
            .is_some_and(|s| s.contains("--provider offline")),
        "{dream}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "the dream asked the model nothing"
    );
    let offline = json_of(with_model(
        s.command(&["dream", "run", "--force", "--provider", "offline", "--json"]),
        &server,
    ));
    assert_eq!(
        offline["status"], "completed",
        "the offline dream runs: {offline}"
    );

    let report = json_of(with_model(
        s.command(&["recall", "when are releases cut", "--json", "--report"]),
        &server,
    ));
    assert_eq!(report["provider"], "offline", "{report}");
    assert!(
        report["degraded"]
            .as_str()
            .is_some_and(|d| d.starts_with("daily token budget reached")),
        "recall --report says why: {report}"
    );
    assert_eq!(server.requests().len(), 1, "recall asked the model nothing");

    let rows = s.json(&["usage"]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "only the call that was made: {rows:?}");
    assert_eq!(rows[0]["job"], "extract");
    let text = stdout(&s.run(&["usage"]));
    assert!(
        text.contains("Today: 1,500 of 1,000 tokens (150 %): the daily budget is reached"),
        "{text}"
    );
    assert_eq!(
        keys(&rows[0]).len(),
        11,
        "the ten asked-for keys and totalTokens"
    );
}

/// `ENGRAM_KEYRING=never` (what the hooks set for themselves on macOS, where a keyring read
/// would ask the person) keeps a process from the keyring: with no key in the environment,
/// extraction and recall do without the model and say why, and a model dream is refused with a
/// clear error rather than quietly run offline.
#[test]
fn a_process_that_does_not_read_the_keyring_does_without_the_model_and_says_why() {
    let s = Sandbox::in_project("nokeyring").with_engram_home();
    session(&s, "Remember that releases are cut on Thursdays.");
    fs::create_dir_all(s.engram_home()).expect("data dir");
    fs::write(
        s.engram_home().join("config.toml"),
        "[llm]\nprovider = \"anthropic\"\n",
    )
    .expect("config");
    let server = ScriptedServer::queue(vec![Reply::json(wire::anthropic_text(
        "Done.",
        (10, 10, 0, 0),
    ))]);
    let without_keyring = |args: &[&str]| {
        let mut command = s.command(args);
        command
            .env("ENGRAM_KEYRING", "never")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env_remove("ANTHROPIC_API_KEY");
        command
    };
    let why = "no anthropic key in ANTHROPIC_API_KEY, and this process does not read the OS \
               keyring (ENGRAM_KEYRING=never)";

    let outcome = json_of(without_keyring(&["extract", SESSION, "--json"]));
    assert_eq!(outcome["extractor"], "offline", "{outcome}");
    assert_eq!(outcome["reason"], why, "{outcome}");

    let report = json_of(without_keyring(&[
        "recall",
        "when are releases cut",
        "--json",
        "--report",
    ]));
    assert_eq!(report["provider"], "offline", "{report}");
    assert_eq!(
        report["degraded"],
        format!("{why}; ranked offline"),
        "{report}"
    );
    assert!(
        !report["results"].as_array().expect("results").is_empty(),
        "still recalls the extracted fact: {report}"
    );

    s.json(&["dream", "set", "--enabled", "true"]);
    let out = without_keyring(&["dream", "run", "--force", "--json"])
        .output()
        .expect("dream");
    assert_ne!(exit_code(&out), 0, "{}", stdout(&out));
    assert!(
        stderr(&out).contains(why) && stderr(&out).contains("--provider offline"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "the model was never asked");
}

/// `[llm] embeddings = "openai"`: a server's sentence vectors may be billed, so recall's
/// requests for them are logged under the recall job and the dir's project, and refused once
/// the daily budget is reached (recall then ranks lexically and says so). Vectors already in the
/// cache cost nothing and are not logged.
#[test]
fn a_servers_sentence_vectors_are_logged_for_recall_and_held_to_the_budget() {
    let s = Sandbox::in_project("usage-embeddings").with_engram_home();
    let dir = s.memory_dir();
    fs::create_dir_all(&dir).expect("memory dir");
    for (file, name, description) in [
        (
            "project_releases.md",
            "Releases",
            "Releases are cut on Thursdays with cargo-release",
        ),
        (
            "feedback_tests.md",
            "Tests",
            "Integration tests must hit a real database",
        ),
    ] {
        fs::write(
            dir.join(file),
            format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n{description}.\n"),
        )
        .expect("memory");
    }
    // Each text's vector is its length and its count of the letter e: enough to rank by.
    let server = ScriptedServer::handler(|request, _| {
        let body = request.json();
        let inputs = body["input"].as_array().expect("input list");
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let text = text.as_str().expect("text");
                let vector = [text.len() as f64, text.matches('e').count() as f64 + 1.0];
                json!({"object": "embedding", "index": index, "embedding": vector})
            })
            .collect();
        Reply::json(json!({
            "object": "list",
            "data": data,
            "model": "text-embedding-3-small-answered",
            "usage": {"prompt_tokens": 7 * inputs.len(), "total_tokens": 7 * inputs.len()},
        }))
    });
    let config = |budget: &str| {
        format!(
            "[llm]\nprovider = \"local\"\nembeddings = \"openai\"\nmax_retries = 0\n\n[llm.openai]\nbase_url = \"{}/v1\"\n{budget}",
            server.url()
        )
    };
    fs::create_dir_all(s.engram_home()).expect("data dir");
    fs::write(s.engram_home().join("config.toml"), config("")).expect("config");
    let recall = |query: &str| {
        let mut command = s.command(&["recall", query, "--json", "--report"]);
        command.env("OPENAI_API_KEY", "sk-embed");
        json_of(command)
    };

    let report = recall("when are releases cut");
    assert_eq!(report["provider"], "local", "{report}");
    assert!(report["degraded"].is_null(), "{report}");
    let asked: usize = server
        .requests()
        .iter()
        .map(|r| r.json()["input"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(
        asked, 43,
        "two memories, the prompt and the gate's 40 unrelated texts"
    );
    let rows = s.json(&["usage"]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let cwd = fs::canonicalize(s.project()).expect("real project");
    assert_eq!(
        rows[0]["project"],
        memory_engine::paths::sanitize_path(&cwd.to_string_lossy())
    );
    assert_eq!(rows[0]["job"], "recall");
    assert_eq!(rows[0]["provider"], "openai");
    assert_eq!(rows[0]["model"], "text-embedding-3-small-answered");
    assert_eq!(rows[0]["inputTokens"], 7 * 43);
    assert_eq!(rows[0]["outputTokens"], 0);
    assert_eq!(rows[0]["calls"], server.requests().len());

    // The same prompt again: every vector is cached, nothing is asked or logged.
    let sent = server.requests().len();
    recall("when are releases cut");
    assert_eq!(server.requests().len(), sent);
    assert_eq!(s.json(&["usage"])[0]["inputTokens"], 7 * 43);

    // Over the budget, a new prompt's vector is not asked for: recall ranks by words.
    fs::write(
        s.engram_home().join("config.toml"),
        config("\n[budget]\ndaily_tokens = 300\n"),
    )
    .expect("config");
    let report = recall("which database do the integration tests hit");
    assert_eq!(server.requests().len(), sent, "nothing was sent");
    let degraded = report["degraded"].as_str().expect("degraded");
    assert!(
        degraded.starts_with("the daily token budget is reached: 301 of 300 tokens used today")
            && degraded.ends_with("ranked lexically"),
        "{degraded}"
    );
    assert_eq!(
        report["results"][0]["file"], "feedback_tests.md",
        "{report}"
    );
}
