//! `engram recall`, `engram hook user-prompt-submit` and `engram hooks …` end to end: the real
//! binary, real files in temp dirs (copies of the real `stockerly` memory dir), a hand-made
//! environment, and — for the model paths — the scripted model server on loopback speaking the
//! providers' wire formats. The last test drives the real Claude Code CLI when it is installed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::{
    claude_binary, exit_code, files, output_with_stdin, stderr, stdout, turn_request, Sandbox,
};
use memory_engine::testing::fixtures::{copy_tree, real_memory};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

/// A HOME with a Claude config dir, an Engram data dir and one project, `stockerly`; nothing
/// from the real machine.
pub(crate) fn sandbox() -> Sandbox {
    Sandbox::in_project("stockerly").with_engram_home()
}

/// Fills the project's memory dir (as the binary resolves it) with a copy of the real
/// `stockerly` memory.
pub(crate) fn project_memory(s: &Sandbox) -> PathBuf {
    let dir = s.memory_dir();
    copy_tree(&real_memory("stockerly"), &dir);
    dir
}

/// The JSON a `UserPromptSubmit` hook gets on stdin.
pub(crate) fn hook_input(s: &Sandbox, session: &str, prompt: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": s.claude().join("projects/x").join(format!("{session}.jsonl")),
        "cwd": s.project(),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        "prompt_id": "p-1",
    })
    .to_string()
}

fn json_out(out: &Output) -> Value {
    assert_eq!(exit_code(out), 0, "failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn engram_binary() -> PathBuf {
    fs::canonicalize(env!("CARGO_BIN_EXE_engram")).expect("binary path")
}

// ---------------------------------------------------------------------------------------------
// recall

#[test]
fn recall_offline_returns_the_contract_shape_and_honours_limit_and_exclude() {
    let s = sandbox();
    project_memory(&s);
    let query = "Fix the hardcoded USD currency bug before we invite beta friends";
    let results = json_out(&s.run(&["recall", query, "--json"]));
    let first = &results[0];
    assert_eq!(first["file"], "project_decision.md");
    for key in ["file", "type", "description", "age", "caveat", "content"] {
        assert!(first.get(key).is_some(), "missing {key} in {first}");
    }
    assert_eq!(first["type"], "project");
    assert_eq!(first["age"], "today");
    assert_eq!(first["caveat"], Value::Null);
    assert!(first["content"]
        .as_str()
        .expect("content")
        .contains("P0 absoluto"));
    assert!(first["score"].as_f64().expect("score") > 0.0);
    assert!(first["reason"]
        .as_str()
        .expect("reason")
        .contains("currency"));

    let limited = json_out(&s.run(&["recall", query, "--limit", "1", "--json"]));
    assert_eq!(files(&limited), ["project_decision.md"]);
    let excluded = json_out(&s.run(&[
        "recall",
        query,
        "--exclude",
        "project_decision.md",
        "--json",
    ]));
    assert!(!files(&excluded).contains(&"project_decision.md"));

    let report = json_out(&s.run(&["recall", query, "--json", "--report"]));
    assert_eq!(report["provider"], "offline");
    assert_eq!(report["considered"], 7);
    assert_eq!(report["usage"]["calls"], 0);

    let human = s.run(&["recall", query]);
    assert_eq!(exit_code(&human), 0, "{}", stderr(&human));
    let text = stdout(&human);
    assert!(
        text.starts_with("1. project_decision.md  [project]  today"),
        "{text}"
    );
    assert!(text.contains("offline"), "{text}");
    assert!(
        !text.contains("Gate:"),
        "the why only with --report: {text}"
    );

    // --report without --json says why in words: who chose, the gate's rule, each verdict.
    let why = stdout(&s.run(&["recall", query, "--report", "--limit", "1"]));
    assert!(
        why.contains("\nProvider: offline — no provider is configured"),
        "{why}"
    );
    assert!(
        why.contains("\nGate: the prompt reads as set in the project (it says \"we\")"),
        "{why}"
    );
    assert!(
        why.contains("\nRecalled:\n  project_decision.md  shares 8 of the prompt's 8 words"),
        "{why}"
    );
    assert!(
        why.contains("\n  project_vision.md  over the limit of 1: shares"),
        "{why}"
    );
    assert!(why.contains("The prompt hook would inject"), "{why}");
    // And why a prompt nothing relates to got nothing.
    let silent = stdout(&s.run(&[
        "recall",
        "what does set -euo pipefail do in a bash script?",
        "--report",
    ]));
    assert!(
        silent.starts_with("No memories recalled: nothing relevant."),
        "{silent}"
    );
    assert!(
        silent.contains("reads as a general question (\"what …\")"),
        "{silent}"
    );
    assert!(
        silent.contains(
            "\nPassed over:\n  project_working_method.md  not about this prompt: \
                         shares 1 of the prompt's 5 words"
        ),
        "{silent}"
    );
    assert!(!silent.contains("would inject"), "{silent}");

    let bad = s.run(&["recall", query, "--provider", "gpt"]);
    assert_eq!(exit_code(&bad), 2);
}

#[test]
fn recall_with_a_model_validates_its_selection_and_offers_no_excluded_file() {
    let s = sandbox();
    let memory = project_memory(&s);
    let old = std::time::SystemTime::now() - Duration::from_secs(12 * 86_400);
    fs::File::options()
        .write(true)
        .open(memory.join("project_vision.md"))
        .expect("open")
        .set_modified(old)
        .expect("age the file");
    let selection = || {
        Reply::json(wire::anthropic_tools(
            &[(
                "toolu_1",
                "select_memories",
                json!({"selected_memories": ["project_vision.md", "made_up.md", "user_adrian.md"]}),
            )],
            (700, 20, 0, 0),
        ))
    };
    let server = ScriptedServer::queue(vec![selection(), selection()]);
    let recall = |extra: &[&str]| {
        let mut args = vec![
            "recall",
            "who is the closed beta for?",
            "--provider",
            "anthropic",
            "--model",
            "claude-test",
            "--exclude",
            "user_adrian.md",
            "--report",
        ];
        args.extend_from_slice(extra);
        s.command(&args)
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .output()
            .expect("run")
    };
    let out = recall(&["--json"]);
    let report = json_out(&out);
    assert_eq!(files(&report["results"]), ["project_vision.md"]);
    assert_eq!(report["rejected"], json!(["made_up.md", "user_adrian.md"]));
    assert_eq!(report["usage"]["inputTokens"], 700);
    let caveat = report["results"][0]["caveat"]
        .as_str()
        .expect("stale caveat");
    assert!(
        caveat.starts_with("This memory is 12 days old."),
        "{caveat}"
    );

    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-test"));
    let body = sent.json();
    assert_eq!(body["model"], "claude-test");
    let prompt = body["messages"][0]["content"][0]["text"]
        .as_str()
        .expect("prompt");
    assert!(
        !prompt.contains("user_adrian.md"),
        "excluded file offered: {prompt}"
    );
    assert!(prompt.contains("project_vision.md"));

    // In words: a model chose, so there is no gate to quote, and the left-out file is named.
    let why = stdout(&recall(&[]));
    assert!(why.contains("\nProvider: anthropic"), "{why}");
    assert!(
        why.contains("\nGate: none: the model chose, and gives no reasons for the rest\n"),
        "{why}"
    );
    assert!(why.contains("\n  project_vision.md  "), "{why}");
    assert!(why.contains("\nLeft out: user_adrian.md"), "{why}");
}

#[test]
fn recall_with_an_openai_compatible_server_and_without_an_anthropic_key() {
    let s = sandbox();
    project_memory(&s);
    let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text(
        r#"{"selected_memories":["project_expert_panel_v2.md"]}"#,
        300,
        10,
        0,
    ))]);
    let out = s
        .command(&[
            "recall",
            "which expert for a migration?",
            "--provider",
            "openai",
            "--model",
            "qwen",
            "--json",
        ])
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .output()
        .expect("run");
    assert_eq!(files(&json_out(&out)), ["project_expert_panel_v2.md"]);
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");

    let out = s.run(&["recall", "anything at all", "--provider", "anthropic"]);
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("ANTHROPIC_API_KEY"),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// hook user-prompt-submit

#[test]
fn the_prompt_hook_prints_additional_context_once_per_session_within_budget() {
    let s = sandbox();
    let memory = project_memory(&s);
    let payload = hook_input(
        &s,
        "7f1c2a9e-0000-4000-8000-000000000001",
        "Should we just rewrite Stockerly from scratch?",
    );
    let (out, took) = output_with_stdin(s.command(&["hook", "user-prompt-submit"]), &payload);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert_eq!(stderr(&out), "");
    let printed = stdout(&out);
    assert_eq!(printed.lines().count(), 1, "one JSON line: {printed}");
    let v: Value = serde_json::from_str(&printed).expect("JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    let decision = memory.join("project_decision.md");
    assert!(
        context.contains(&format!("Memory (saved today): {}:", decision.display())),
        "{context}"
    );
    assert!(
        context.contains("Corregir Stockerly. NO rewrite."),
        "{context}"
    );

    let surfaced = s
        .engram_home()
        .join("sessions/7f1c2a9e-0000-4000-8000-000000000001/surfaced.json");
    let log: Value =
        serde_json::from_str(&fs::read_to_string(&surfaced).expect("session log")).expect("json");
    assert!(log["files"]
        .as_array()
        .expect("files")
        .contains(&json!(decision.to_string_lossy())));

    // The same prompt again in the same session: the decision memory is not shown twice.
    let (again, _) = output_with_stdin(s.command(&["hook", "user-prompt-submit"]), &payload);
    assert_eq!(exit_code(&again), 0);
    assert!(
        !stdout(&again).contains("project_decision.md"),
        "{}",
        stdout(&again)
    );
    // A new session sees it again.
    let other = hook_input(
        &s,
        "7f1c2a9e-0000-4000-8000-000000000002",
        "Should we just rewrite Stockerly from scratch?",
    );
    let (fresh, _) = output_with_stdin(s.command(&["hook", "user-prompt-submit"]), &other);
    assert!(stdout(&fresh).contains("project_decision.md"));
    // A single word is not a query.
    let (word, _) = output_with_stdin(
        s.command(&["hook", "user-prompt-submit"]),
        &hook_input(&s, "s3", "continue"),
    );
    assert_eq!((exit_code(&word), stdout(&word).as_str()), (0, ""));
}

/// With the local model installed and no provider configured, the hook process recalls with it:
/// "Be honest: is this plan any good?" (a prompt set in the project: "this plan") gets the
/// memory asking for brutal honesty, which shares none of its words, and an ordinary question
/// gets nothing — the issue's own examples, through the real binary.
#[test]
fn the_prompt_hook_recalls_with_the_installed_model_by_default() {
    let Some(models) = memory_engine::testing::fixtures::test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let s = sandbox();
    let memory = s.memory_dir();
    copy_tree(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/recall-set/tidy-cli"),
        &memory,
    );
    // As after "Fetch" in Settings, every memory is embedded once first, so the hook embeds only
    // the prompt: a first embedding of a whole dir does not fit in a hook's 2 s.
    let mut embed = s.command(&["models", "embed"]);
    embed.env("ENGRAM_MODELS_DIR", &models);
    let out = embed.output().expect("models embed");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let hook = |session: &str, prompt: &str| {
        // What it recalls is checked here, not how fast (`make bench` times the hook): this
        // debug build, beside other tests, loads the model in about a second of the 2 s.
        let mut command = s.command(&[
            "hook",
            "user-prompt-submit",
            "--verbose",
            "--budget-ms",
            "30000",
        ]);
        command.env("ENGRAM_MODELS_DIR", &models);
        let (out, _) = output_with_stdin(command, &hook_input(&s, session, prompt));
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    };
    let (printed, said) = hook("local-1", "Be honest: is this plan any good?");
    let v: Value = serde_json::from_str(&printed).unwrap_or_else(|e| panic!("{e}: {said}"));
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        context.contains(
            &memory
                .join("feedback_brutal_honesty.md")
                .display()
                .to_string()
        ),
        "{context}"
    );
    let (printed, said) = hook(
        "local-2",
        "Explain the difference between a Kubernetes Deployment and a StatefulSet",
    );
    assert_eq!(printed, "", "{said}");
}

#[cfg(unix)] // `engram hook serve` is Unix-only (platforms row 1); stopped with `kill`
#[test]
fn the_prompt_hook_gets_the_same_answer_from_a_running_server_and_without_one() {
    let s = sandbox();
    let memory = project_memory(&s);
    let prompt = "Should we just rewrite Stockerly from scratch?";
    let direct = {
        let (out, _) = output_with_stdin(
            s.command(&["hook", "user-prompt-submit", "--verbose"]),
            &hook_input(&s, "direct-1", prompt),
        );
        assert_eq!(exit_code(&out), 0);
        assert!(
            !stderr(&out).contains("answered by Engram"),
            "{}",
            stderr(&out)
        );
        stdout(&out)
    };
    assert!(direct.contains("project_decision.md"), "{direct}");

    // A server process, as the app runs one.
    let (mut server, socket) = start_hook_server(&s, s.command(&["hook", "serve"]));
    let ask = |session: &str| {
        let (out, _) = output_with_stdin(
            s.command(&["hook", "user-prompt-submit", "--verbose"]),
            &hook_input(&s, session, prompt),
        );
        assert_eq!(exit_code(&out), 0);
        (stdout(&out), stderr(&out))
    };
    let (served, why) = ask("served-1");
    assert!(
        why.contains(&format!("answered by Engram (pid {})", server.id())),
        "{why}"
    );
    // The same context, the session's paths aside (each session is recorded on its own).
    assert_eq!(served, direct);
    let log = s.engram_home().join("sessions/served-1/surfaced.json");
    wait_until_recorded(&log, "project_decision.md");

    // A memory written after the server read the dir is seen on the next prompt.
    fs::write(
        memory.join("project_rewrite_ban.md"),
        "---\nname: rewrite ban\ndescription: Never rewrite Stockerly from scratch; refactor in place\ntype: project\n---\n\nNo rewrite.\n",
    )
    .expect("write");
    let deadline = Instant::now() + Duration::from_secs(10);
    for attempt in 2.. {
        let (served, _) = ask(&format!("served-{attempt}"));
        if served.contains("project_rewrite_ban.md") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new memory was never recalled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The server stops on SIGTERM and takes its socket with it; the hook recalls directly again.
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let status = server.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists());
    let (after, why) = ask("direct-2");
    assert!(!why.contains("answered by Engram"), "{why}");
    assert!(after.contains("project_rewrite_ban.md"), "{after}");
}

/// Starts `serve` (`engram hook serve`) and waits until it listens on the sandbox's hook socket.
#[cfg(unix)]
fn start_hook_server(s: &Sandbox, mut serve: Command) -> (std::process::Child, PathBuf) {
    let server = serve
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let socket = s.engram_home().join("run/hook.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the server never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    (server, socket)
}

/// Waits until the session log `log` names `file`: the hook server records what its reply
/// printed just after the hook took it, so the hook may have exited a moment before.
#[cfg(unix)]
fn wait_until_recorded(log: &Path, file: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !fs::read_to_string(log).is_ok_and(|text| text.contains(file)) {
        assert!(
            Instant::now() < deadline,
            "{file} never recorded as shown in {}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server answering after the hook gave up (a slow model) must not record that answer's
/// memories as shown: the hook printed nothing, and the session's next prompt may still get them.
#[cfg(unix)] // `engram hook serve` is Unix-only (platforms row 1); stopped with `kill`
#[test]
fn a_reply_the_hook_gave_up_waiting_for_is_not_recorded_as_shown() {
    let s = sandbox();
    project_memory(&s);
    let model_took = Duration::from_secs(3);
    let model = ScriptedServer::handler(move |_, n| {
        if n == 0 {
            std::thread::sleep(model_took);
        }
        Reply::json(wire::anthropic_tools(
            &[(
                "t",
                "select_memories",
                json!({"selected_memories": ["feedback_anti_patterns.md"]}),
            )],
            (500, 9, 0, 0),
        ))
    });
    fs::create_dir_all(s.engram_home()).expect("mkdir");
    fs::write(
        s.engram_home().join("config.toml"),
        format!(
            "[llm]\nprovider = \"anthropic\"\n\n[llm.anthropic]\nbase_url = \"{}\"\nmodel = \
             \"claude-test\"\n",
            model.url()
        ),
    )
    .expect("config");
    let mut serve = s.command(&["hook", "serve"]);
    serve.env("ANTHROPIC_API_KEY", "sk-test");
    let (mut server, _) = start_hook_server(&s, serve);
    let ask = |budget_ms: &str| {
        let mut command = s.command(&[
            "hook",
            "user-prompt-submit",
            "--verbose",
            "--budget-ms",
            budget_ms,
        ]);
        command.env("ANTHROPIC_API_KEY", "sk-test");
        let (out, _) = output_with_stdin(
            command,
            &hook_input(&s, "late-1", "let's add a new feature"),
        );
        assert_eq!(exit_code(&out), 0);
        (stdout(&out), stderr(&out))
    };
    let shown = s.engram_home().join("sessions/late-1/surfaced.json");

    // The hook gives up after 1 s; the model answers the server 2 s later.
    let gave_up_at = Instant::now();
    let (printed, why) = ask("1000");
    assert_eq!(printed, "", "{why}");
    assert!(
        why.contains("no answer in the time given"),
        "the server was asked: {why}"
    );
    std::thread::sleep(
        (gave_up_at + model_took + Duration::from_secs(1))
            .saturating_duration_since(Instant::now()),
    );
    assert_eq!(model.requests().len(), 1, "the server asked the model");
    assert!(
        !shown.exists(),
        "recorded as shown though never printed: {}",
        fs::read_to_string(&shown).unwrap_or_default()
    );

    // The next prompt of the session gets it, and now it counts as shown.
    let (printed, why) = ask("5000");
    assert!(
        why.contains(&format!("answered by Engram (pid {})", server.id())),
        "{why}"
    );
    assert!(printed.contains("feedback_anti_patterns.md"), "{printed}");
    wait_until_recorded(&shown, "feedback_anti_patterns.md");

    let _ = Command::new("kill").arg(server.id().to_string()).status();
    assert!(server.wait().expect("wait").success());
}

#[test]
fn the_prompt_hook_prints_nothing_and_exits_zero_on_bad_input() {
    let s = sandbox();
    project_memory(&s);
    let not_a_dir = hook_input(&s, "s", "a prompt of several words")
        .replace(&*s.project().to_string_lossy(), "/nonexistent/place");
    for stdin in [
        "",
        "{",
        "not json at all",
        "[]",
        r#"{"prompt": "missing cwd here"}"#,
        r#"{"cwd": "/tmp", "prompt": "wrong event", "hook_event_name": "Stop"}"#,
        not_a_dir.as_str(),
    ] {
        let (out, took) = output_with_stdin(s.command(&["hook", "user-prompt-submit"]), stdin);
        assert_eq!(exit_code(&out), 0, "{stdin:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{stdin:?}");
        assert_eq!(stderr(&out), "", "{stdin:?}");
        assert!(took < Duration::from_secs(2), "{stdin:?} took {took:?}");
    }
    // A broken config is an error like any other: nothing printed, exit 0.
    fs::create_dir_all(s.engram_home()).expect("mkdir");
    fs::write(s.engram_home().join("config.toml"), "[llm\nprovider = 3").expect("write");
    let (out, _) = output_with_stdin(
        s.command(&["hook", "user-prompt-submit", "--verbose"]),
        &hook_input(&s, "s", "rewrite from scratch?"),
    );
    assert_eq!((exit_code(&out), stdout(&out).as_str()), (0, ""));
    assert!(
        stderr(&out).contains("config.toml"),
        "--verbose says why: {}",
        stderr(&out)
    );
}

#[test]
fn a_50_mb_hook_payload_is_refused_at_its_cap_and_the_hook_still_exits_zero() {
    let s = sandbox();
    project_memory(&s);
    let huge = hook_input(&s, "s", &"word ".repeat(10 * 1024 * 1024));
    assert!(huge.len() > 50_000_000);
    let (out, _) = output_with_stdin(
        s.command(&["hook", "user-prompt-submit", "--verbose"]),
        &huge,
    );
    assert_eq!((exit_code(&out), stdout(&out).as_str()), (0, ""));
    assert!(
        stderr(&out).contains("over 4194304 bytes"),
        "--verbose says why: {}",
        stderr(&out)
    );
}

#[test]
fn a_hung_model_costs_the_hook_its_budget_and_nothing_more() {
    let s = sandbox();
    project_memory(&s);
    let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(30))]);
    fs::create_dir_all(s.engram_home()).expect("mkdir");
    fs::write(
        s.engram_home().join("config.toml"),
        format!(
            "[llm]\nprovider = \"anthropic\"\n\n[llm.anthropic]\nbase_url = \"{}\"\nmodel = \"claude-test\"\n",
            server.url()
        ),
    )
    .expect("config");
    let payload = hook_input(&s, "hang-1", "Should we rewrite from scratch?");

    // The default budget: 2 s.
    let mut command = s.command(&["hook", "user-prompt-submit"]);
    command.env("ANTHROPIC_API_KEY", "sk-test");
    let (out, took) = output_with_stdin(command, &payload);
    assert_eq!(
        (
            exit_code(&out),
            stdout(&out).as_str(),
            stderr(&out).as_str()
        ),
        (0, "", "")
    );
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_millis(3500),
        "default budget: took {took:?}"
    );
    assert_eq!(server.requests().len(), 1, "the model was asked");

    // A budget from the command line.
    let mut command = s.command(&["hook", "user-prompt-submit", "--budget-ms", "500"]);
    command.env("ANTHROPIC_API_KEY", "sk-test");
    let (out, took) = output_with_stdin(command, &payload);
    assert_eq!((exit_code(&out), stdout(&out).as_str()), (0, ""));
    assert!(
        took < Duration::from_millis(1500),
        "--budget-ms 500: took {took:?}"
    );

    // A budget from config.toml.
    let config = fs::read_to_string(s.engram_home().join("config.toml")).expect("read");
    fs::write(
        s.engram_home().join("config.toml"),
        format!("{config}\n[hooks]\nbudget_ms = 700\n"),
    )
    .expect("config");
    let mut command = s.command(&["hook", "user-prompt-submit"]);
    command.env("ANTHROPIC_API_KEY", "sk-test");
    let (out, took) = output_with_stdin(command, &payload);
    assert_eq!((exit_code(&out), stdout(&out).as_str()), (0, ""));
    assert!(
        took < Duration::from_millis(1700),
        "budget_ms = 700: took {took:?}"
    );
    assert!(
        !s.engram_home()
            .join("sessions/hang-1/surfaced.json")
            .exists(),
        "nothing shown, nothing recorded"
    );
}

#[test]
fn the_prompt_hook_uses_a_model_when_told_to() {
    let s = sandbox();
    project_memory(&s);
    let server = ScriptedServer::queue(vec![Reply::json(wire::anthropic_tools(
        &[(
            "t",
            "select_memories",
            json!({"selected_memories": ["feedback_anti_patterns.md"]}),
        )],
        (500, 9, 0, 0),
    ))]);
    let mut command = s.command(&["hook", "user-prompt-submit", "--provider", "anthropic"]);
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-test");
    let (out, _) = output_with_stdin(
        command,
        &hook_input(&s, "m-1", "let's add a big new feature"),
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(context.contains("feedback_anti_patterns.md:"), "{context}");
    let prompt = server.requests()[0].json()["messages"][0]["content"][0]["text"]
        .as_str()
        .expect("prompt")
        .to_owned();
    assert!(
        prompt.starts_with("Query: let's add a big new feature"),
        "{prompt}"
    );
}

// ---------------------------------------------------------------------------------------------
// hooks install | uninstall | status

const UNRELATED_SETTINGS: &str = r#"{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "env": {"FOO": "bar", "EMOJI": "☕ \u00e9"},
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "/usr/local/bin/check-bash"}]
            }
        ]
    },
    "cleanupPeriodDays": 30,
    "number": 1.50
}
"#;

fn status(s: &Sandbox) -> Value {
    json_out(&s.run(&["hooks", "status", "--json"]))
}

#[test]
fn install_twice_then_uninstall_gives_back_the_original_bytes() {
    let s = sandbox();
    fs::write(s.settings(), UNRELATED_SETTINGS).expect("seed settings");
    let expected_command = format!("{} hook user-prompt-submit", engram_binary().display());

    let before = status(&s);
    assert_eq!(before["installed"], false);
    assert_eq!(before["expectedCommand"], expected_command.as_str());
    assert_eq!(
        before["settingsFile"],
        s.settings().to_string_lossy().as_ref()
    );

    let installed = json_out(&s.run(&["hooks", "install", "--json"]));
    assert_eq!(installed["action"], "installed");
    let backup = PathBuf::from(installed["backup"].as_str().expect("backup"));
    assert!(
        backup.starts_with(s.engram_home()),
        "backups live in Engram's data dir"
    );
    assert_eq!(
        fs::read_to_string(&backup).expect("backup"),
        UNRELATED_SETTINGS
    );
    let after_install = fs::read_to_string(s.settings()).expect("settings");

    // Everything else is byte for byte what it was: the only difference is one inserted span.
    let prefix = UNRELATED_SETTINGS
        .bytes()
        .zip(after_install.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = UNRELATED_SETTINGS
        .bytes()
        .rev()
        .zip(after_install.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(UNRELATED_SETTINGS.len() - prefix);
    assert_eq!(
        prefix + suffix,
        UNRELATED_SETTINGS.len(),
        "only an insertion: {after_install}"
    );
    let inserted = &after_install[prefix..after_install.len() - suffix];
    assert!(inserted.contains("\"UserPromptSubmit\": ["), "{inserted}");
    assert!(inserted.contains(&expected_command), "{inserted}");
    assert!(
        inserted.starts_with(
            ",\n        \"UserPromptSubmit\": [\n            {\n                \"hooks\": ["
        ),
        "the document's 4-space indentation is followed: {inserted:?}"
    );
    let v: Value = serde_json::from_str(&after_install).expect("still JSON");
    assert_eq!(
        v["hooks"]["UserPromptSubmit"],
        json!([{"hooks": [{"type": "command", "command": expected_command}]}])
    );
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    let stop_command = expected_command.replace(" hook user-prompt-submit", " hook stop");
    assert_eq!(
        v["hooks"]["Stop"],
        json!([{"hooks": [{"type": "command", "command": stop_command}]}]),
        "the Stop hook sits next to the prompt hook"
    );
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "$schema",
            "model",
            "env",
            "permissions",
            "hooks",
            "cleanupPeriodDays",
            "number"
        ],
        "key order kept"
    );

    let status_after = status(&s);
    assert_eq!(status_after["installed"], true);
    assert_eq!(status_after["upToDate"], true);
    assert_eq!(status_after["command"], expected_command.as_str());
    let events: Vec<(&str, bool)> = status_after["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| (h["event"].as_str().expect("event"), h["upToDate"] == true))
        .collect();
    assert_eq!(events, [("UserPromptSubmit", true), ("Stop", true)]);

    let again = json_out(&s.run(&["hooks", "install", "--json"]));
    assert_eq!(again["action"], "unchanged");
    assert_eq!(again["backup"], Value::Null);
    assert_eq!(
        fs::read_to_string(s.settings()).expect("settings"),
        after_install,
        "install twice = once"
    );

    let human = s.run(&["hooks", "status"]);
    assert!(
        stdout(&human).starts_with("installed  UserPromptSubmit hook in"),
        "{}",
        stdout(&human)
    );

    let removed = json_out(&s.run(&["hooks", "uninstall", "--json"]));
    assert_eq!(removed["action"], "removed");
    assert_eq!(
        fs::read_to_string(s.settings()).expect("settings"),
        UNRELATED_SETTINGS
    );
    assert_eq!(status(&s)["installed"], false);
    let nothing = json_out(&s.run(&["hooks", "uninstall", "--json"]));
    assert_eq!(nothing["action"], "unchanged");
    assert_eq!(
        fs::read_to_string(s.settings()).expect("settings"),
        UNRELATED_SETTINGS
    );
}

#[test]
fn install_joins_an_existing_prompt_hook_list_and_uninstall_leaves_it_alone() {
    let s = sandbox();
    let original = "{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"~/bin/prompt-guard\"\n          }\n        ]\n      }\n    ]\n  }\n}";
    fs::write(s.settings(), original).expect("seed");
    json_out(&s.run(&["hooks", "install", "--json"]));
    let v: Value =
        serde_json::from_str(&fs::read_to_string(s.settings()).expect("read")).expect("json");
    let groups = v["hooks"]["UserPromptSubmit"].as_array().expect("list");
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["hooks"][0]["command"], "~/bin/prompt-guard");
    json_out(&s.run(&["hooks", "uninstall", "--json"]));
    assert_eq!(fs::read_to_string(s.settings()).expect("read"), original);
}

#[test]
fn install_creates_settings_under_the_claude_dir_flag_and_refuses_broken_json() {
    let s = sandbox();
    let other = s.root().join("other-claude");
    let out = s.run(&["hooks", "install", "--claude-dir", &other.to_string_lossy()]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Installed Engram's UserPromptSubmit and Stop hooks"),
        "{}",
        stdout(&out)
    );
    let v: Value =
        serde_json::from_str(&fs::read_to_string(other.join("settings.json")).expect("created"))
            .expect("json");
    assert!(v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .expect("command")
        .ends_with(" hook user-prompt-submit"));
    assert!(
        !s.settings().exists(),
        "the default Claude dir was not touched"
    );

    fs::write(s.settings(), "{\"model\": \"opus\",}").expect("seed");
    let out = s.run(&["hooks", "install"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("settings.json:1"), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(s.settings()).expect("read"),
        "{\"model\": \"opus\",}"
    );
}

// ---------------------------------------------------------------------------------------------
// The real Claude Code CLI

/// Installs Engram's hook into a temp Claude home, runs one real `claude -p` turn against the
/// scripted model, and checks that the memories the hook printed reached the model's request.
#[test]
fn the_real_claude_code_passes_the_hooks_context_to_the_model() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    project_memory(&s);
    json_out(&s.run(&["hooks", "install", "--json"]));
    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    let session = "3b0c1e52-6f7a-4c8e-9d2b-5a4f3e2d1c0b";
    let prompt = "Should we rewrite Stockerly from scratch?";
    s.claude_turn(&claude, &server.url(), prompt, &["--session-id", session]);
    let requests = server.requests();
    let turn = turn_request(&requests, prompt);
    assert!(
        turn.body
            .contains("UserPromptSubmit hook additional context"),
        "Claude Code did not pass the hook's context: {}",
        &turn.body[..turn.body.len().min(4000)]
    );
    assert!(
        turn.body.contains("project_decision.md"),
        "the recalled memory reached the model"
    );
    assert!(turn.body.contains("Corregir Stockerly. NO rewrite."));
    assert!(s
        .engram_home()
        .join("sessions")
        .join(session)
        .join("surfaced.json")
        .is_file());
}

#[test]
fn the_stop_hook_returns_at_once_printing_nothing_and_extracts_in_the_background() {
    let s = sandbox();
    let project = s.project();
    let transcripts = s
        .home()
        .join(".claude/projects")
        .join(memory_engine::paths::sanitize_path(
            &fs::canonicalize(&project).expect("real").to_string_lossy(),
        ));
    fs::create_dir_all(&transcripts).expect("dir");
    let transcript = transcripts.join("bbbbbbbb-0000-0000-0000-000000000002.jsonl");
    let entry = json!({"type": "user", "uuid": "u1", "parentUuid": null, "cwd": fs::canonicalize(&project).expect("real"),
        "sessionId": "bbbbbbbb-0000-0000-0000-000000000002", "timestamp": "2026-11-20T10:00:00Z",
        "message": {"role": "user", "content": "Please remember that releases are cut on Thursdays."}});
    fs::write(&transcript, format!("{entry}\n")).expect("transcript");
    let payload = json!({"session_id": "bbbbbbbb-0000-0000-0000-000000000002", "transcript_path": transcript,
        "cwd": project, "hook_event_name": "Stop", "stop_hook_active": false});
    let out = s.run_with_stdin(&["hook", "stop"], &payload.to_string());
    assert_eq!(exit_code(&out), 0);
    assert_eq!(stdout(&out), "", "a Stop hook prints nothing (no decision)");
    assert_eq!(stderr(&out), "");
    let log = s.engram_home().join("extract/runs.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !log.is_file() {
        assert!(std::time::Instant::now() < deadline, "the worker never ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let index = fs::read_to_string(s.memory_dir().join("MEMORY.md")).expect("index");
    assert!(index.contains("Thursdays"), "{index}");

    // Garbage in: still exit 0 and silence.
    for bad in ["", "not json", "{\"transcript_path\": \"/etc/passwd\"}"] {
        let out = s.run_with_stdin(&["hook", "stop"], bad);
        assert_eq!(exit_code(&out), 0, "{bad}");
        assert_eq!(stdout(&out), "", "{bad}");
    }
}

#[test]
fn a_settings_file_with_a_bom_round_trips_and_one_with_comments_is_never_clobbered() {
    let s = sandbox();
    let with_bom = "\u{feff}{\n  \"model\": \"opus\"\n}\n";
    fs::write(s.settings(), with_bom).expect("seed");
    assert_eq!(exit_code(&s.run(&["hooks", "install"])), 0);
    let installed = fs::read_to_string(s.settings()).expect("read");
    assert!(installed.starts_with('\u{feff}'), "the BOM is kept");
    assert!(installed.contains("hook stop"));
    assert_eq!(exit_code(&s.run(&["hooks", "uninstall"])), 0);
    assert_eq!(
        fs::read_to_string(s.settings()).expect("read"),
        with_bom,
        "byte for byte"
    );

    let with_comments = "{\n  // my model\n  \"model\": \"opus\"\n}\n";
    fs::write(s.settings(), with_comments).expect("seed");
    let out = s.run(&["hooks", "install"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("settings.json:2"), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(s.settings()).expect("read"),
        with_comments,
        "not clobbered"
    );
}

/// The prompt hook runs as this binary once per prompt: it loads no D-Bus library at start (the
/// keyring's Secret Service is reached through zbus, in Rust, and only for a remote provider's
/// key), so its ELF dynamic section names no libdbus.
#[cfg(target_os = "linux")] // reads the ELF dynamic section
#[test]
fn the_engram_binary_the_hook_runs_as_links_no_dbus_library() {
    let binary = fs::read(engram_binary()).expect("the engram binary");
    assert_eq!(&binary[..4], b"\x7fELF", "an ELF binary");
    for library in [&b"libdbus-1.so"[..], b"libsecret-1.so"] {
        assert!(
            !binary.windows(library.len()).any(|w| w == library),
            "links {}",
            String::from_utf8_lossy(library)
        );
    }
}

/// Offline and local, the prompt hook never talks to D-Bus (no keyring lookup: those providers
/// take no key). The session bus here is a socket that counts who connects; a provider that
/// needs a key and finds none in the environment does ask it — so the count can tell.
#[cfg(unix)] // the session bus is a Unix socket
#[test]
fn the_offline_and_local_prompt_hook_never_connects_to_d_bus() {
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let s = sandbox();
    project_memory(&s);
    let socket = s.root().join("bus.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    let connections = Arc::new(AtomicUsize::new(0));
    {
        let connections = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                connections.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
    }
    let hook = |provider: &str| {
        let mut command = s.command(&["hook", "user-prompt-submit", "--provider", provider]);
        command
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", socket.display()),
            )
            .env_remove("ANTHROPIC_API_KEY")
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
        let (out, _) = output_with_stdin(
            command,
            &hook_input(
                &s,
                &format!("bus-{provider}"),
                "Should we rewrite Stockerly?",
            ),
        );
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    assert!(hook("offline").contains("additionalContext"));
    assert!(hook("local").contains("additionalContext"));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "offline and local: no D-Bus"
    );
    hook("anthropic");
    let deadline = Instant::now() + Duration::from_secs(5);
    while connections.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "a provider with no key in the environment asks the keyring"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
