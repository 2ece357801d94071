//! Compatibility with the real Claude Code CLI (2.1.330, installed by `scripts/setup.sh --test`),
//! run offline against a scripted model server on loopback (`../shared/RECIPE.md`):
//!
//! - Claude Code and Engram agree on where a project's memory dir is;
//! - a memory Engram writes reaches the model's request the way Claude Code loads it;
//! - a memory Claude Code writes (its two-step protocol, through its own `Write` tool, stamped
//!   with its metadata) is read by Engram: listed, typed, indexed, lint-clean.
//!
//! `make test` sets `ENGRAM_TEST_CLAUDE`, so there a missing binary fails; elsewhere the tests are
//! skipped when no `claude` is found.

use std::fs;
use std::process::Command;

use crate::support::{claude_binary, exit_code, stderr, turn_request, Sandbox};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

/// A HOME with an empty Claude config dir, Engram's data dir and a project (a git repo, as most
/// are) — nothing from the real machine.
fn sandbox() -> Sandbox {
    let s = Sandbox::in_project("ledger").with_engram_home();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(s.project())
        .env("HOME", s.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git init");
    assert!(git.success());
    s
}

/// `engram ARGS --json`, parsed; exit code 1 (lint found errors) is not a failure here.
fn engram(s: &Sandbox, args: &[&str]) -> Value {
    let out = s.run(&[args, &["--json"]].concat());
    assert!(
        matches!(exit_code(&out), 0 | 1),
        "engram {args:?}: {}",
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("engram --json")
}

#[test]
fn a_memory_engram_writes_reaches_claude_codes_model_request() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let remembered = engram(
        &s,
        &[
            "remember",
            "--type",
            "feedback",
            "--name",
            "Ledger rounding",
            "--description",
            "Round money with banker's rounding, never floats",
            "--body",
            "Use Decimal with ROUND_HALF_EVEN.\n**Why:** float drift broke the March close.\n",
        ],
    );
    assert_eq!(remembered["action"], "created");

    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    let prompt = "How should I round the totals?";
    s.claude_turn(&claude, &server.url(), prompt, &[]);
    let requests = server.requests();
    let turn = turn_request(&requests, prompt);
    assert!(
        turn.body
            .contains("[Ledger rounding](feedback_ledger_rounding.md) — Round money with banker's rounding, never floats"),
        "Claude Code did not load Engram's MEMORY.md line into the request: {}",
        &turn.body[..turn.body.len().min(4000)]
    );
    // Claude Code reads the memory dir Engram resolved, not another one.
    let memory_dir = s.memory_dir();
    assert!(
        turn.body.contains(memory_dir.to_str().expect("utf-8 path")),
        "the request names the memory dir {}",
        memory_dir.display()
    );
}

#[test]
fn a_memory_claude_code_writes_is_read_by_engram() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let memory_dir = s.memory_dir();
    let topic = memory_dir.join("project_close_deadline.md");
    let index = memory_dir.join("MEMORY.md");
    let topic_text = "---\nname: Close deadline\ndescription: The books close on the 3rd business day; freeze merges the day before\ntype: project\n---\n\nMerge freeze on the 2nd business day of each month.\n";
    let index_text =
        "- [Close deadline](project_close_deadline.md) — books close 3rd business day\n";
    // The model's script: the two steps of the write protocol through Claude Code's own Write
    // tool, then a closing text. Each answer depends on how many tool results came back so far.
    let (topic_input, index_input) = (
        json!({"file_path": topic, "content": topic_text}),
        json!({"file_path": index, "content": index_text}),
    );
    let server = ScriptedServer::handler(move |request, _| -> Reply {
        if !request.body.contains("Remember that the books close") {
            return wire::anthropic_stream_text("ok");
        }
        match request.body.matches("\"tool_result\"").count() {
            0 => wire::anthropic_stream_tool_use("toolu_01", "Write", &topic_input),
            1 => wire::anthropic_stream_tool_use("toolu_02", "Write", &index_input),
            _ => wire::anthropic_stream_text("Saved to memory."),
        }
    });
    s.claude_turn(
        &claude,
        &server.url(),
        "Remember that the books close on the 3rd business day.",
        &[],
    );
    assert!(
        topic.is_file(),
        "Claude Code wrote the topic file where Engram resolves the memory dir ({})",
        memory_dir.display()
    );

    // 2.1.330 stamps what its Write tool saves: the type moves under `metadata:` with
    // `node_type`, `originSessionId` and `modified`, and the name becomes a kebab slug.
    let written = fs::read_to_string(&topic).expect("read topic");
    assert!(
        written.contains("metadata:\n  node_type: memory\n  type: project\n  originSessionId: "),
        "Claude Code stamped the file: {written}"
    );
    let written_name = written
        .lines()
        .find_map(|l| l.strip_prefix("name: "))
        .expect("a name line");
    let scanned = engram(&s, &["scan"]);
    let entry = scanned
        .as_array()
        .expect("scan array")
        .iter()
        .find(|m| m["file"] == "project_close_deadline.md")
        .unwrap_or_else(|| panic!("scan lists Claude Code's memory: {scanned}"));
    assert_eq!(entry["type"], "project");
    assert_eq!(entry["name"], written_name);
    let shown = engram(&s, &["show", "project_close_deadline.md"]);
    assert_eq!(
        shown["body"].as_str().map(str::trim),
        Some("Merge freeze on the 2nd business day of each month.")
    );
    let loaded = engram(&s, &["index"]);
    assert_eq!(loaded["entries"][0]["file"], "project_close_deadline.md");
    let lint = engram(&s, &["lint"]);
    assert_eq!(
        lint["findings"],
        json!([]),
        "Claude Code's memory is lint-clean"
    );

    // The session Claude Code recorded is counted for the project.
    let projects = engram(&s, &["projects"]);
    let project = projects
        .as_array()
        .expect("projects array")
        .iter()
        .find(|p| p["memoryDir"] == memory_dir.to_str().expect("utf-8"))
        .unwrap_or_else(|| panic!("projects lists the project: {projects}"));
    assert_eq!(project["memoryFiles"], 1);
    assert_eq!(project["sessions"], 1);
}
