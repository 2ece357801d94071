//! Compatibility with the real Claude Code CLI (2.1.330, installed by `scripts/setup.sh --test`),
//! run offline against a scripted model server on loopback (`../shared/RECIPE.md`):
//!
//! - Claude Code and Engram agree on where a project's memory dir is;
//! - a memory Engram writes reaches the model's request the way Claude Code loads it;
//! - a memory Claude Code writes (its two-step protocol, through its own `Write` tool, stamped
//!   with its metadata) is read by Engram: listed, typed, indexed, lint-clean;
//! - agent memory Engram initialised from a team's snapshot is what Claude Code loads for that
//!   agent (`--agent`, the agent's `memory: project`).
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

/// Waits (up to a minute: the worker is a detached process on a shared machine) for the Stop
/// hook's worker to record `runs` runs in `<engram home>/extract/runs.jsonl`; returns them.
fn wait_for_extract_runs(s: &Sandbox, runs: usize) -> Vec<Value> {
    let log = s.engram_home().join("extract").join("runs.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let lines: Vec<Value> = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if lines.len() >= runs {
            return lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the Stop hook's worker recorded {} of {runs} runs in {}",
            lines.len(),
            log.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_stop_hook_extracts_a_stated_fact_and_the_next_session_loads_it() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let installed = engram(&s, &["hooks", "install"]);
    assert_eq!(installed["action"], "installed");
    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    s.claude_turn(
        &claude,
        &server.url(),
        "Remember that we deploy with Fly.io, never Heroku.",
        &[],
    );
    let runs = wait_for_extract_runs(&s, 1);
    let extract = &runs[0]["extract"]["Ok"];
    assert_eq!(extract["status"], "extracted", "{}", runs[0]);
    assert_eq!(extract["extractor"], "offline");
    assert_eq!(
        extract["warnings"],
        json!([]),
        "an index with room: nothing to say"
    );

    let memory_dir = s.memory_dir();
    let index = fs::read_to_string(memory_dir.join("MEMORY.md")).expect("an index");
    let line = index
        .lines()
        .find(|l| l.contains("Fly.io"))
        .unwrap_or_else(|| panic!("an index line for the fact: {index}"));
    let topic = line
        .split("](")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("a link");
    let text = fs::read_to_string(memory_dir.join(topic)).expect("the topic file");
    assert!(
        text.contains("We deploy with Fly.io, never Heroku"),
        "{text}"
    );
    assert!(text.contains("type: project"), "{text}");

    // The next session's request to the model carries the new index line.
    let prompt = "Which platform do we ship on?";
    s.claude_turn(&claude, &server.url(), prompt, &[]);
    let requests = server.requests();
    assert!(
        turn_request(&requests, prompt).body.contains(line.trim()),
        "the next session loads {line:?}"
    );
    // The history names the extractor as the writer.
    let history = engram(&s, &["history", topic]);
    assert_eq!(history[0]["actor"], "extract", "{history}");

    // The transcripts 2.1.330 wrote read whole: both sessions listed, every line understood,
    // the prompt and the model's reply on the chain.
    let sessions = engram(&s, &["sessions"]);
    let listed = sessions.as_array().expect("sessions");
    assert_eq!(listed.len(), 2, "{sessions}");
    let first = listed
        .iter()
        .find(|row| row["firstPrompt"] == "Remember that we deploy with Fly.io, never Heroku.")
        .unwrap_or_else(|| panic!("the first session is listed by its prompt: {sessions}"));
    let transcript = engram(&s, &["transcript", first["id"].as_str().expect("id")]);
    assert_eq!(
        transcript["skippedLines"],
        json!([]),
        "{}",
        transcript["skippedLines"]
    );
    let messages = transcript["messages"].as_array().expect("messages");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && m["text"] == "Noted."),
        "{transcript}"
    );
    assert!(messages.iter().any(|m| m["role"] == "user"
        && m["text"] == "Remember that we deploy with Fly.io, never Heroku."));
}

#[test]
fn the_stop_hook_skips_a_turn_where_claude_code_wrote_memory_itself() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    engram(&s, &["hooks", "install"]);
    let memory_dir = s.memory_dir();
    let topic = memory_dir.join("feedback_tabs.md");
    let topic_text = "---\nname: Tabs\ndescription: Indent with tabs, never spaces\ntype: feedback\n---\n\nTabs.\n";
    let input = json!({"file_path": topic, "content": topic_text});
    let server = ScriptedServer::handler(move |request, _| -> Reply {
        if !request.body.contains("Remember that I always indent") {
            return wire::anthropic_stream_text("ok");
        }
        match request.body.matches("\"tool_result\"").count() {
            0 => wire::anthropic_stream_tool_use("toolu_01", "Write", &input),
            _ => wire::anthropic_stream_text("Saved."),
        }
    });
    s.claude_turn(
        &claude,
        &server.url(),
        "Remember that I always indent with tabs, never spaces.",
        &[],
    );
    let runs = wait_for_extract_runs(&s, 1);
    let extract = &runs[0]["extract"]["Ok"];
    assert_eq!(extract["status"], "skipped", "{}", runs[0]);
    assert!(
        extract["reason"]
            .as_str()
            .is_some_and(|r| r.contains("main agent")),
        "{}",
        runs[0]
    );
    let files: Vec<String> = fs::read_dir(&memory_dir)
        .expect("memory dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        ["feedback_tabs.md"],
        "Engram added nothing of its own"
    );
}

/// An index over the caps: the warning Claude Code puts in its request, naming what it cut, is
/// the one `engram index` shows (`LoadedIndex::warning`), word for word.
#[test]
fn an_index_over_its_caps_is_cut_and_warned_about_as_claude_code_does() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let dir = s.memory_dir();
    fs::create_dir_all(&dir).expect("memory dir");
    let index: Vec<String> = (1..=230)
        .map(|i| {
            format!(
                "- [Fact {i}](fact_{i}.md) \u{2014} the release checklist item number {i} that \
                 someone wrote out at length, well past eighty characters"
            )
        })
        .collect();
    fs::write(dir.join("MEMORY.md"), index.join("\n")).expect("index");
    let shown = engram(&s, &["index"]);
    let warning = shown["warning"].as_str().expect("a warning");
    assert!(
        warning.contains("of 230 lines were cut off, starting at line"),
        "{warning}"
    );

    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    let prompt = "What is on the release checklist?";
    s.claude_turn(&claude, &server.url(), prompt, &[]);
    let requests = server.requests();
    let sent = turn_request(&requests, prompt).json().to_string();
    let sent: String = serde_json::from_str::<Value>(&sent)
        .expect("json")
        .pointer("/messages")
        .map(|m| m.to_string())
        .unwrap_or_default();
    let at = sent
        .find("> WARNING: MEMORY.md")
        .expect("Claude Code warns");
    let claude_warning: String = serde_json::from_str(&format!(
        "\"{}\"",
        &sent[at..at + sent[at..].find("topic files.").expect("its end") + "topic files.".len()]
    ))
    .expect("unescaped");
    assert_eq!(claude_warning, warning);
}

/// In a workspace the person trusted, the real Claude Code 2.1.330 takes `autoMemoryDirectory`
/// from the project's committed `.claude/settings.json` (`FORMATS.md` §1 says never); Engram
/// resolves the same dir. (In `-p` mode Claude Code trusts every workspace; Engram goes by the
/// trust recorded in `.claude.json`, which is what interactive sessions use.)
#[test]
fn a_trusted_projects_memory_dir_setting_is_where_both_put_memory() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let project_settings = s.project().join(".claude/settings.json");
    fs::create_dir_all(project_settings.parent().expect("dir")).expect("mkdir");
    fs::write(
        &project_settings,
        r#"{"autoMemoryDirectory": "~/team-memory"}"#,
    )
    .expect("write");
    let trusted_dir = s.home().join("team-memory");
    assert_ne!(
        s.memory_dir(),
        trusted_dir,
        "nobody trusted the workspace yet"
    );
    s.trust_project();
    assert_eq!(s.memory_dir(), trusted_dir);

    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    let prompt = "Where do memories go?";
    s.claude_turn(&claude, &server.url(), prompt, &[]);
    let requests = server.requests();
    assert!(
        turn_request(&requests, prompt)
            .body
            .contains(&format!("{}/", trusted_dir.display())),
        "Claude Code uses {}",
        trusted_dir.display()
    );
    assert!(trusted_dir.is_dir(), "Claude Code created it");
}

/// With auto memory off in the user's settings, the real Claude Code neither loads nor creates a
/// memory dir, and still runs the Stop hook: Engram's worker extracts nothing either.
#[test]
fn with_auto_memory_off_the_stop_hook_leaves_no_memory_behind() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    engram(&s, &["hooks", "install"]);
    let mut settings: Value =
        serde_json::from_str(&fs::read_to_string(s.settings()).expect("settings")).expect("json");
    settings["autoMemoryEnabled"] = json!(false);
    fs::write(s.settings(), settings.to_string()).expect("settings");
    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Noted."));
    let prompt = "Remember that we deploy with Fly.io, never Heroku.";
    s.claude_turn(&claude, &server.url(), prompt, &[]);
    let memory_dir = s.memory_dir();
    let requests = server.requests();
    assert!(
        !turn_request(&requests, prompt)
            .body
            .contains(memory_dir.to_str().expect("utf-8 path")),
        "Claude Code has memory off"
    );
    let runs = wait_for_extract_runs(&s, 1);
    let extract = &runs[0]["extract"]["Ok"];
    assert_eq!(extract["status"], "skipped", "{}", runs[0]);
    assert!(
        !memory_dir.exists(),
        "no memory dir: {}",
        memory_dir.display()
    );
}

#[test]
fn agent_memory_engram_initialises_from_a_snapshot_reaches_the_agents_model_request() {
    let Some(claude) = claude_binary() else {
        eprintln!("skipped: no `claude` binary (set ENGRAM_TEST_CLAUDE or put it on PATH)");
        return;
    };
    let s = sandbox();
    let project = s.project();
    // A project agent with project-scoped memory, and the team's committed snapshot of it.
    fs::create_dir_all(project.join(".claude/agents")).expect("agents");
    fs::write(
        project.join(".claude/agents/code-reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews diffs for the ledger\nmemory: project\n---\nYou review code changes.\n",
    )
    .expect("agent");
    let snapshot = project.join(".claude/agent-memory-snapshots/code-reviewer");
    fs::create_dir_all(&snapshot).expect("snapshot");
    fs::write(
        snapshot.join("snapshot.json"),
        "{\"updatedAt\": \"2026-11-01T09:00:00.000Z\"}\n",
    )
    .expect("snapshot.json");
    fs::write(
        snapshot.join("MEMORY.md"),
        "- [Money types](money_types.md) — Amounts are Decimal in cents, never floats\n",
    )
    .expect("index");
    fs::write(
        snapshot.join("money_types.md"),
        "---\nname: Money types\ndescription: Amounts are Decimal in cents, never floats\ntype: project\n---\nFlag any float in a money path.\n",
    )
    .expect("topic");

    let agents = engram(&s, &["agents"]);
    let row = agents
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["agentType"] == "code-reviewer" && r["scope"] == "project")
        .unwrap_or_else(|| panic!("the project agent is listed: {agents}"))
        .clone();
    assert_eq!(row["snapshot"], "initialize", "{row}");
    engram(&s, &["agents", "sync", "code-reviewer", "--initialize"]);
    let local = project.join(".claude/agent-memory/code-reviewer");
    assert!(local.join("money_types.md").is_file());
    assert!(local.join(".snapshot-synced.json").is_file());

    let server = ScriptedServer::handler(|_, _| wire::anthropic_stream_text("Reviewed."));
    let prompt = "Review the change to totals.py";
    let out = s.claude_turn(
        &claude,
        &server.url(),
        prompt,
        &["--agent", "code-reviewer"],
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let requests = server.requests();
    let turn = turn_request(&requests, prompt);
    assert!(
        turn.body
            .contains("[Money types](money_types.md) — Amounts are Decimal in cents, never floats"),
        "Claude Code did not load the agent memory Engram initialised: {}",
        &turn.body[..turn.body.len().min(6000)]
    );
    assert!(
        turn.body.contains(local.to_str().expect("utf-8 path")),
        "the request names the agent memory dir {}",
        local.display()
    );
}
