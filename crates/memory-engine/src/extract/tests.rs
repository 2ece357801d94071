use super::*;
use crate::environment::Environment;
use serde_json::json;
use std::io::Write;

struct Home {
    _tmp: tempfile::TempDir,
    engine: Engine,
    cwd: PathBuf,
    transcript: PathBuf,
}

fn home() -> Home {
    home_in(Environment::empty())
}

fn home_in(env: Environment) -> Home {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().to_path_buf();
    let cwd = root.join("app");
    fs::create_dir_all(&cwd).expect("cwd");
    let engine = Engine::builder(env.with("HOME", root.to_string_lossy()))
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build();
    let transcript = engine
        .transcripts_dir(&cwd)
        .join("aaaaaaaa-0000-0000-0000-000000000001.jsonl");
    fs::create_dir_all(transcript.parent().expect("dir")).expect("projects");
    Home {
        _tmp: tmp,
        engine,
        cwd,
        transcript,
    }
}

impl Home {
    fn append(&self, entries: &[serde_json::Value]) {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
            .expect("open");
        for entry in entries {
            let mut line = serde_json::to_vec(entry).expect("json");
            line.push(b'\n');
            file.write_all(&line).expect("append");
        }
    }

    fn user(&self, uuid: &str, parent: Option<&str>, text: &str) -> serde_json::Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "aaaaaaaa-0000-0000-0000-000000000001",
            "cwd": self.cwd, "timestamp": "2026-11-20T10:00:00Z", "message": {"role": "user", "content": text}})
    }

    fn assistant(&self, uuid: &str, parent: &str, content: serde_json::Value) -> serde_json::Value {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "aaaaaaaa-0000-0000-0000-000000000001",
            "cwd": self.cwd, "message": {"id": format!("m-{uuid}"), "role": "assistant", "content": content}})
    }

    fn memory_dir(&self) -> PathBuf {
        self.engine
            .resolve_memory_dir(&self.cwd)
            .expect("resolve")
            .memory_dir
    }

    fn extract(&self) -> ExtractOutcome {
        self.extract_as(crate::config::ProviderKind::Offline)
    }

    fn extract_as(&self, provider: crate::config::ProviderKind) -> ExtractOutcome {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime
            .block_on(self.engine.extract_session(
                &self.transcript,
                &ExtractOptions {
                    policy: None,
                    llm: LlmOverrides {
                        provider: Some(provider),
                        ..LlmOverrides::default()
                    },
                    from_start: false,
                    after_turn: false,
                },
                &CancellationToken::new(),
            ))
            .expect("extract")
    }
}

#[test]
fn a_stated_fact_becomes_a_topic_file_and_its_index_line_and_the_cursor_moves_on() {
    let h = home();
    h.append(&[
        h.user(
            "u1",
            None,
            "Remember that we deploy with Fly.io, never Heroku.",
        ),
        h.assistant("a1", "u1", json!([{"type": "text", "text": "Noted."}])),
    ]);
    let outcome = h.extract();
    assert_eq!(outcome.status, ExtractStatus::Extracted, "{outcome:?}");
    let set = outcome.change_set.expect("a change set");
    assert_eq!(set.source, ChangeSource::Extract);
    let dir = h.memory_dir();
    let index = fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    let topic = fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n != "MEMORY.md")
        .expect("topic file");
    assert!(topic.starts_with("project_"), "{topic}");
    assert!(index.contains(&format!("]({topic})")), "{index}");
    let text = fs::read_to_string(dir.join(&topic)).expect("topic");
    assert!(text.contains("Fly.io, never Heroku"), "{text}");
    assert!(text.contains("type: project"), "{text}");

    // Nothing new since: nothing to do.
    assert_eq!(h.extract().status, ExtractStatus::UpToDate);
    // A close statement later is merged into the same file, not a near-duplicate.
    h.append(&[h.user(
        "u2",
        Some("a1"),
        "Remember that Fly.io deploys go to staging first.",
    )]);
    let again = h.extract();
    assert_eq!(again.status, ExtractStatus::Extracted, "{again:?}");
    let files = fs::read_dir(&dir).expect("dir").count();
    assert_eq!(files, 2, "merged, not duplicated");
    let merged = fs::read_to_string(dir.join(&topic)).expect("topic");
    assert!(merged.contains("staging first"), "{merged}");
}

/// A fact extracted into a full index is saved, and the outcome and its change set say which
/// index lines Claude Code no longer loads; into an index with room, nothing is said.
#[test]
fn an_extraction_into_a_full_index_says_which_lines_claude_code_no_longer_loads() {
    let h = home();
    let dir = h.memory_dir();
    fs::create_dir_all(&dir).expect("dir");
    let full: String = (1..=200)
        .map(|i| format!("- [Note {i}](note_{i}.md) — note number {i}\n"))
        .collect();
    fs::write(dir.join("MEMORY.md"), &full).expect("index");
    h.append(&[h.user(
        "u1",
        None,
        "Remember that we deploy with Fly.io, never Heroku.",
    )]);
    let outcome = h.extract();
    assert_eq!(outcome.status, ExtractStatus::Extracted, "{outcome:?}");
    assert_eq!(
        outcome.warnings,
        vec![
            "MEMORY.md is 201 lines, past the 200 Claude Code loads: its last line, line 201, \
             is not seen at the start of a session (`engram dream` moves old entries into topic \
             files)"
                .to_owned()
        ],
        "{outcome:?}"
    );
    let summary = &outcome.change_set.expect("a change set").summary;
    assert!(
        summary.ends_with("; MEMORY.md is 201 lines, past the 200 Claude Code loads"),
        "{summary}"
    );

    // Room made: the next fact says nothing.
    fs::write(dir.join("MEMORY.md"), "").expect("index");
    h.append(&[h.user(
        "u2",
        Some("u1"),
        "Remember that the staging database is refreshed every Monday.",
    )]);
    let roomy = h.extract();
    assert_eq!(roomy.status, ExtractStatus::Extracted, "{roomy:?}");
    assert!(roomy.warnings.is_empty(), "{:?}", roomy.warnings);
}

/// With sentence vectors (provider `local`, the real model: similarity 0.78), a statement worded
/// unlike the memory it restates — one word in common — joins that memory instead of becoming a near-duplicate;
/// offline, it cannot be told and becomes a memory of its own.
#[test]
fn with_the_local_model_a_restated_rule_joins_the_memory_it_means() {
    let Some(models) = crate::testing::fixtures::test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let existing = "---\nname: Real database\ndescription: Integration tests must hit a real database, not mocks\ntype: feedback\n---\n\nIntegration tests must hit a real database, not mocks.\n";
    let run = |provider| {
        let h = home_in(Environment::empty().with("ENGRAM_MODELS_DIR", models.to_string_lossy()));
        let dir = h.memory_dir();
        fs::create_dir_all(&dir).expect("dir");
        fs::write(dir.join("feedback_real_database.md"), existing).expect("memory");
        fs::write(
            dir.join("MEMORY.md"),
            "- [Real database](feedback_real_database.md) — no mocks\n",
        )
        .expect("index");
        h.append(&[h.user("u1", None, "Don't use a fake DB in the test suite.")]);
        let outcome = h.extract_as(provider);
        assert_eq!(outcome.status, ExtractStatus::Extracted, "{outcome:?}");
        let mut files: Vec<String> = fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let set = outcome.change_set.expect("a change set");
        let memory = set
            .files
            .iter()
            .find(|f| f.change.file == "feedback_real_database.md")
            .and_then(|f| f.change.after.clone());
        (files, set.files.len(), memory)
    };
    // A feedback memory rewritten waits for review: the change is staged, not applied.
    let (files, changes, memory) = run(crate::config::ProviderKind::Local);
    assert_eq!(
        files,
        ["MEMORY.md", "feedback_real_database.md"],
        "joined, not a new file"
    );
    assert_eq!(changes, 1);
    let memory = memory.expect("the memory rewritten");
    assert!(
        memory.contains("- Don't use a fake DB in the test suite"),
        "{memory}"
    );
    let (_, changes, memory) = run(crate::config::ProviderKind::Offline);
    assert_eq!(memory, None, "offline: a memory of its own");
    assert_eq!(changes, 2, "a new topic file and its index line");
}

#[test]
fn a_turn_where_the_main_agent_wrote_memory_itself_is_skipped() {
    let h = home();
    let target = h.memory_dir().join("feedback_tabs.md");
    h.append(&[
        h.user(
            "u1",
            None,
            "Remember that I always want tabs, never spaces.",
        ),
        h.assistant(
            "a1",
            "u1",
            json!([{"type": "tool_use", "id": "t1", "name": "Write",
            "input": {"file_path": target, "content": "---\nname: tabs\n---\n"}}]),
        ),
    ]);
    let outcome = h.extract();
    assert_eq!(outcome.status, ExtractStatus::Skipped, "{outcome:?}");
    assert!(outcome.reason.expect("reason").contains("main agent"));
    assert!(!h.memory_dir().exists(), "nothing written");
    assert_eq!(
        h.extract().status,
        ExtractStatus::UpToDate,
        "cursor advanced"
    );
}

#[test]
fn messages_without_prose_are_skipped() {
    let h = home();
    h.append(&[
        h.user("u1", None, "```\nnever_call(x);\n```"),
        h.assistant("a1", "u1", json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}])),
        json!({"type": "user", "uuid": "r1", "parentUuid": "a1", "cwd": h.cwd, "sessionId": "aaaaaaaa-0000-0000-0000-000000000001",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Remember that this is tool output"}]}}),
    ]);
    let outcome = h.extract();
    assert_eq!(outcome.status, ExtractStatus::Skipped, "{outcome:?}");
    assert!(outcome.reason.expect("reason").contains("no prose"));
}

#[test]
fn rewriting_an_existing_feedback_memory_waits_for_review() {
    let h = home();
    let dir = h.memory_dir();
    fs::create_dir_all(&dir).expect("dir");
    fs::write(
        dir.join("feedback_db_mocks.md"),
        "---\nname: Database mocks\ndescription: Never mock the database in integration tests\ntype: feedback\n---\nUse the real database.\n",
    )
    .expect("seed");
    fs::write(
        dir.join("MEMORY.md"),
        "- [Database mocks](feedback_db_mocks.md) — never mock the database\n",
    )
    .expect("index");
    h.append(&[h.user(
        "u1",
        None,
        "Don't mock the database in integration tests, ever.",
    )]);
    let outcome = h.extract();
    let set = outcome.change_set.expect("set");
    let waiting: Vec<&str> = set
        .files
        .iter()
        .filter(|f| f.status == crate::staging::FileStatus::Pending)
        .map(|f| f.change.file.as_str())
        .collect();
    assert_eq!(waiting, ["feedback_db_mocks.md"], "{set:?}");
    assert_eq!(
        fs::read_to_string(dir.join("feedback_db_mocks.md")).expect("read"),
        "---\nname: Database mocks\ndescription: Never mock the database in integration tests\ntype: feedback\n---\nUse the real database.\n",
        "the protected rewrite has not landed"
    );
}

#[test]
fn one_extraction_per_session_at_a_time_and_a_review_policy_stages_everything() {
    let h = home();
    h.append(&[h.user("u1", None, "Remember that releases are cut on Thursdays.")]);
    {
        let _held = h
            .engine
            .lock_session_extract("aaaaaaaa-0000-0000-0000-000000000001")
            .expect("lock");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let err = runtime
            .block_on(h.engine.extract_session(
                &h.transcript,
                &ExtractOptions::default(),
                &CancellationToken::new(),
            ))
            .expect_err("busy");
        assert!(is_busy(&err), "{err}");
    }
    let project = h
        .transcript
        .parent()
        .and_then(Path::file_name)
        .expect("project")
        .to_string_lossy()
        .into_owned();
    fs::create_dir_all(h.engine.engram_home()).expect("home");
    fs::write(
        h.engine.config_path(),
        format!("[extract.projects.\"{project}\"]\npolicy = \"review\"\n"),
    )
    .expect("config");
    let outcome = h.extract();
    let set = outcome.change_set.expect("set");
    assert!(set
        .files
        .iter()
        .all(|f| f.status == crate::staging::FileStatus::Pending));
    assert!(
        !h.memory_dir().join("MEMORY.md").exists(),
        "staged, not applied"
    );
}

#[test]
fn over_the_daily_budget_the_rules_extract_and_the_outcome_says_why() {
    use crate::testing::{wire, Reply, ScriptedServer};
    // The model's first call writes a file and spends 1,500 of a 1,000-token budget: its second
    // call is refused, nothing of its run is kept, and the rules extract instead.
    let server = ScriptedServer::queue(vec![
        Reply::json(wire::anthropic_tools(
            &[(
                "w1",
                "write",
                json!({"path": "project_model.md", "content": "---\nname: m\ndescription: d\ntype: project\n---\nby the model\n"}),
            )],
            (1000, 500, 0, 0),
        )),
        Reply::json(wire::anthropic_text("Done.", (10, 10, 0, 0))),
    ]);
    let h = home_in(Environment::empty().with("ANTHROPIC_API_KEY", "k"));
    fs::create_dir_all(h.engine.engram_home()).expect("home");
    fs::write(
        h.engine.config_path(),
        format!(
            "[llm]\nprovider = \"anthropic\"\n[llm.anthropic]\nbase_url = \"{}\"\n[budget]\ndaily_tokens = 1000\n",
            server.url()
        ),
    )
    .expect("config");
    h.append(&[h.user("u1", None, "Remember that we deploy with Fly.io.")]);
    let outcome = h.extract_as(crate::config::ProviderKind::Anthropic);
    assert_eq!(
        server.requests().len(),
        1,
        "the run's second call was refused"
    );
    assert_eq!(outcome.extractor, "offline", "{outcome:?}");
    assert_eq!(
        outcome.reason.as_deref(),
        Some("daily token budget reached (1,500 of 1,000 tokens today)")
    );
    assert_eq!(outcome.status, ExtractStatus::Extracted, "{outcome:?}");
    let dir = h.memory_dir();
    assert!(
        !dir.join("project_model.md").exists(),
        "the model's half-done run is dropped"
    );
    let index = fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert!(index.contains("Fly.io"), "{index}");
    let report = h.engine.usage_report(1).expect("usage");
    let project = h
        .transcript
        .parent()
        .and_then(Path::file_name)
        .expect("project")
        .to_string_lossy()
        .into_owned();
    assert_eq!(report.rows.len(), 1, "{:?}", report.rows);
    assert_eq!(
        (report.rows[0].job.as_str(), report.rows[0].project.as_str()),
        ("extract", project.as_str())
    );

    // Already over: the model is not asked; the rules run and say why.
    h.append(&[h.user(
        "u2",
        Some("u1"),
        "Remember that staging deploys come first.",
    )]);
    let outcome = h.extract_as(crate::config::ProviderKind::Anthropic);
    assert_eq!(
        server.requests().len(),
        1,
        "no call once the budget is reached"
    );
    assert_eq!(outcome.extractor, "offline");
    assert!(outcome
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with("daily token budget reached")));
}
