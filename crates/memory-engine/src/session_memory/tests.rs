use super::*;
use crate::environment::Environment;
use crate::testing::{wire, Reply, ScriptedServer};
use crate::transcript::{MessageUsage, ToolResult, ToolUse};
use serde_json::json;

fn message(uuid: &str, role: &str, text: &str) -> Message {
    Message {
        uuid: uuid.into(),
        role: role.into(),
        text: text.into(),
        ..Message::default()
    }
}

fn with_usage(mut m: Message, context: u32) -> Message {
    m.usage = Some(MessageUsage {
        input_tokens: context,
        ..MessageUsage::default()
    });
    m
}

fn tool_call(uuid: &str, id: &str) -> Message {
    let mut m = message(uuid, "assistant", "");
    m.tool_uses.push(ToolUse {
        id: id.into(),
        name: "Bash".into(),
        input: json!({"command": "cargo test"}),
    });
    m
}

fn tool_result(uuid: &str, id: &str, text: &str) -> Message {
    let mut m = message(uuid, "user", "");
    m.tool_results.push(ToolResult {
        tool_use_id: id.into(),
        text: text.into(),
        is_error: true,
    });
    m
}

#[test]
fn the_template_has_every_section_and_breaking_one_is_caught() {
    let text = template();
    assert!(check_structure(&text).is_ok());
    assert_eq!(sections(&text).len(), 10);
    assert!(text.starts_with("# Session Title\n_A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler_\n"));
    let broken = text.replace(
        "_What did the user ask to build? Any design decisions or other explanatory context_",
        "_changed_",
    );
    assert!(check_structure(&broken)
        .expect_err("broken")
        .contains("Task specification"));
    let reordered = text.replacen("# Worklog", "# Worklog2", 1);
    assert!(check_structure(&reordered).is_err());
}

#[test]
fn thresholds_init_at_10k_then_5k_more_with_tool_calls_or_a_quiet_turn() {
    let small = vec![with_usage(message("a", "assistant", "hi"), 9_000)];
    assert_eq!(due(&small, None), None);
    let big = vec![with_usage(message("a", "assistant", "hi"), 10_000)];
    assert_eq!(due(&big, None), Some(Due::Init));
    let state = SummaryState {
        last_uuid: Some("a".into()),
        tokens: 10_000,
    };
    // 4,999 new tokens: not yet, whatever else happened.
    let mut more = big.clone();
    more.push(with_usage(message("b", "assistant", "quiet"), 14_999));
    assert_eq!(due(&more, Some(&state)), None);
    // 5,000 new tokens and the last turn made no tool call: due.
    more.push(with_usage(message("c", "assistant", "quiet"), 15_000));
    assert_eq!(due(&more, Some(&state)), Some(Due::Update));
    // 5,000 new tokens, the last turn called a tool, only 2 calls since: not yet; 3: due.
    let mut busy = big.clone();
    busy.push(tool_call("t1", "1"));
    busy.push(with_usage(tool_call("t2", "2"), 15_000));
    assert_eq!(due(&busy, Some(&state)), None);
    busy.push(with_usage(tool_call("t3", "3"), 15_500));
    assert_eq!(due(&busy, Some(&state)), Some(Due::Update));
}

#[test]
fn compaction_keeps_enough_and_never_orphans_a_tool_result() {
    let long = "word ".repeat(4_000); // ~5,000 tokens each
    let mut messages = vec![
        message("m0", "user", &long),
        message("m1", "assistant", &long),
    ];
    messages.push(tool_call("m2", "tool-1"));
    messages.push(tool_result("m3", "tool-1", "failed"));
    for i in 4..10 {
        messages.push(message(
            &format!("m{i}"),
            if i % 2 == 0 { "user" } else { "assistant" },
            "short text",
        ));
    }
    // Summarised through m2: keeping from m3 would orphan its result; m2 comes along, then the
    // expansion reaches the long messages for the 10,000-token minimum.
    let start = compaction_start(&messages, Some(2));
    assert!(start <= 2, "tool_use kept with its result: {start}");
    let kept: usize = messages[start..]
        .iter()
        .map(Message::estimated_tokens)
        .sum();
    assert!(kept >= COMPACT_MIN_TOKENS || start == 0, "{kept}");
    // The 40,000-token ceiling stops the expansion.
    let huge = "word ".repeat(40_000);
    let capped = vec![
        message("h0", "user", &huge),
        message("h1", "assistant", "a"),
        message("h2", "user", "b"),
    ];
    assert_eq!(compaction_start(&capped, Some(0)), 1);
    assert_eq!(
        compaction_start(&capped, None),
        0,
        "nothing marked: keep all"
    );
}

#[test]
fn truncation_for_compaction_cuts_each_section_to_its_budget() {
    let mut text = template();
    text = text.replace(
        "_What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps._\n",
        &format!("_What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps._\n{}\n", "x".repeat(20_000)),
    );
    let cut = truncate_for_compaction(&text);
    assert!(cut.contains("[... section truncated for length ...]"));
    assert!(cut.len() < text.len());
    assert!(
        check_structure(&cut).is_ok(),
        "headers and descriptions survive"
    );
}

fn engine(root: &std::path::Path) -> Engine {
    Engine::builder(Environment::empty().with("HOME", root.to_string_lossy()))
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build()
}

fn genuine(root: &std::path::Path) -> PathBuf {
    let dir = root.join(".claude/projects/-path-to-Demo");
    std::fs::create_dir_all(&dir).expect("dir");
    let name = "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let path = dir.join(name);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/real/claude-home/projects/-path-to-Demo")
            .join(name),
        &path,
    )
    .expect("copy");
    path
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn offline_summary_of_a_genuine_session_is_private_and_keeps_the_template() {
    let tmp = tempfile::tempdir().expect("tmp");
    let engine = engine(tmp.path());
    let transcript = genuine(tmp.path());
    let offline = LlmOverrides {
        provider: Some(crate::config::ProviderKind::Offline),
        ..LlmOverrides::default()
    };
    let view = runtime()
        .block_on(engine.update_session_memory(
            &transcript,
            &offline,
            true,
            &CancellationToken::new(),
        ))
        .expect("update")
        .expect("forced");
    assert_eq!(view.updated_by.as_deref(), Some("offline"));
    let text = view.content.expect("written");
    assert!(check_structure(&text).is_ok(), "{text}");
    assert!(
        text.contains("Empty Repo Setup: CLAUDE.md Foundation Created"),
        "title from the session"
    );
    assert!(
        text.contains("/orchestrator") || text.contains("TODO"),
        "{text}"
    );
    assert!(view.sections.iter().all(|s| !s.over_budget));
    let path = summary_path(&transcript);
    assert!(path.ends_with("fe5e1c67-53e7-4862-81ae-d0e013e3270b/session-memory/summary.md"));
    // Private modes exist on Unix only (Windows relies on the profile's ACL: platforms row 3).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("dir")), 0o700);
    }
    assert!(!engine
        .engram_home()
        .join("session-memory")
        .join("x")
        .exists());
    assert!(
        engine.summary_state(&view.session_id).is_some(),
        "state in Engram's data dir"
    );
}

#[test]
fn a_model_update_may_edit_only_summary_md() {
    let tmp = tempfile::tempdir().expect("tmp");
    let engine = engine(tmp.path());
    let transcript = genuine(tmp.path());
    let dir = summary_path(&transcript)
        .parent()
        .expect("dir")
        .to_path_buf();
    let server = ScriptedServer::queue(vec![
        Reply::json(wire::anthropic_tools(
            &[
                (
                    "w1",
                    "write",
                    json!({"path": "../../evil.md", "content": "x"}),
                ),
                (
                    "w2",
                    "edit",
                    json!({"path": "other.md", "old_string": "a", "new_string": "b"}),
                ),
                ("r1", "read", json!({"path": "summary.md"})),
                (
                    "e1",
                    "edit",
                    json!({"path": "summary.md", "old_string": "_A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler_\n",
                        "new_string": "_A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler_\nScaffold a Next.js TODO app\n"}),
                ),
            ],
            (1000, 100, 0, 0),
        )),
        Reply::json(wire::anthropic_text("Updated.", (1100, 10, 0, 0))),
    ]);
    std::fs::create_dir_all(engine.engram_home()).expect("home");
    std::fs::write(
        engine.config_path(),
        format!(
            "[llm]\nprovider = \"anthropic\"\n\n[llm.anthropic]\nbase_url = \"{}\"\n",
            server.url()
        ),
    )
    .expect("config");
    let engine = Engine::builder(
        Environment::empty()
            .with("HOME", tmp.path().to_string_lossy())
            .with("ANTHROPIC_API_KEY", "k"),
    )
    .claude_home(tmp.path().join(".claude"))
    .engram_home(tmp.path().join("engram"))
    .build();
    let view = runtime()
        .block_on(engine.update_session_memory(
            &transcript,
            &LlmOverrides::default(),
            true,
            &CancellationToken::new(),
        ))
        .expect("update")
        .expect("forced");
    assert_eq!(view.updated_by.as_deref(), Some("model"));
    assert!(view
        .content
        .expect("content")
        .contains("Scaffold a Next.js TODO app"));
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["summary.md"], "nothing else was written");
    assert!(!tmp.path().join(".claude/projects/evil.md").exists());
    let request = &server.requests()[0];
    let body: serde_json::Value = serde_json::from_str(&request.body).expect("json");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(tools, ["edit"], "the only tool offered");
    let results = server.requests()[1].body.clone();
    assert_eq!(
        results
            .matches("the only tool here is `edit` on summary.md")
            .count(),
        3,
        "write, other file, read: denied"
    );
}

#[test]
fn over_the_daily_budget_the_summary_is_written_offline_and_says_why() {
    let tmp = tempfile::tempdir().expect("tmp");
    let transcript = genuine(tmp.path());
    // The first call spends 1,500 of a 1,000-token budget; the run's second call is refused.
    let server = ScriptedServer::queue(vec![
        Reply::json(wire::anthropic_tools(
            &[("r1", "read", json!({"path": "summary.md"}))],
            (1000, 500, 0, 0),
        )),
        Reply::json(wire::anthropic_text("Updated.", (10, 10, 0, 0))),
    ]);
    let engine = Engine::builder(
        Environment::empty()
            .with("HOME", tmp.path().to_string_lossy())
            .with("ANTHROPIC_API_KEY", "k"),
    )
    .claude_home(tmp.path().join(".claude"))
    .engram_home(tmp.path().join("engram"))
    .build();
    std::fs::create_dir_all(engine.engram_home()).expect("home");
    std::fs::write(
        engine.config_path(),
        format!(
            "[llm]\nprovider = \"anthropic\"\n\n[llm.anthropic]\nbase_url = \"{}\"\n\n[budget]\ndaily_tokens = 1000\n",
            server.url()
        ),
    )
    .expect("config");
    let update = || {
        runtime()
            .block_on(engine.update_session_memory(
                &transcript,
                &LlmOverrides::default(),
                true,
                &CancellationToken::new(),
            ))
            .expect("update")
            .expect("forced")
    };
    let view = update();
    assert_eq!(
        server.requests().len(),
        1,
        "the second call of the run was refused"
    );
    assert_eq!(view.updated_by.as_deref(), Some("offline"));
    assert_eq!(
        view.reason.as_deref(),
        Some("daily token budget reached (1,500 of 1,000 tokens today)")
    );
    assert!(check_structure(&view.content.expect("written")).is_ok());
    let report = engine.usage_report(1).expect("usage");
    assert_eq!(report.rows.len(), 1, "{:?}", report.rows);
    assert_eq!(report.rows[0].job, "sessionMemory");
    assert_eq!(report.rows[0].project, "-path-to-Demo");
    assert_eq!(report.rows[0].total_tokens, 1500);

    // Already over: the model is not asked at all.
    let view = update();
    assert_eq!(
        server.requests().len(),
        1,
        "no call once the budget is reached"
    );
    assert_eq!(view.updated_by.as_deref(), Some("offline"));
    assert!(view.reason.is_some());
}
