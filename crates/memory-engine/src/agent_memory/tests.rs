use super::*;
use crate::environment::Environment;
use crate::staging::FileStatus;

struct Setup {
    _tmp: tempfile::TempDir,
    engine: Engine,
    cwd: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().expect("tmp");
    let cwd = tmp.path().join("repo");
    fs::create_dir_all(&cwd).expect("repo");
    let engine = Engine::builder(Environment::empty().with("HOME", tmp.path().to_string_lossy()))
        .claude_home(tmp.path().join(".claude"))
        .engram_home(tmp.path().join("engram"))
        .build();
    Setup {
        _tmp: tmp,
        engine,
        cwd,
    }
}

impl Setup {
    fn snapshot(&self, updated_at: &str, files: &[(&str, &str)]) {
        let dir = self
            .cwd
            .join(".claude/agent-memory-snapshots/code-reviewer");
        fs::create_dir_all(&dir).expect("snapshot dir");
        for (name, text) in files {
            fs::write(dir.join(name), text).expect("snapshot file");
        }
        fs::write(
            dir.join(SNAPSHOT_FILE),
            format!("{{\"updatedAt\":\"{updated_at}\"}}"),
        )
        .expect("meta");
    }

    fn dir(&self) -> PathBuf {
        self.engine
            .agent_memory_dir("code-reviewer", AgentScope::Project, &self.cwd)
            .expect("dir")
    }

    /// Makes the project one Claude Code lists (a session's transcript names its working dir),
    /// as every project that has agent memory is; returns its name.
    fn listed(&self) -> String {
        let name = crate::paths::sanitize_path(&self.cwd.to_string_lossy());
        let dir = self.engine.claude_home().join("projects").join(&name);
        fs::create_dir_all(&dir).expect("transcripts");
        let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
            "cwd": self.cwd, "sessionId": "s", "message": {"role": "user", "content": "hi"}});
        fs::write(
            dir.join("11111111-1111-4111-8111-111111111111.jsonl"),
            format!("{line}\n"),
        )
        .expect("transcript");
        name
    }

    fn action(&self) -> SnapshotAction {
        snapshot_decision(
            &self
                .cwd
                .join(".claude/agent-memory-snapshots/code-reviewer"),
            &self.dir(),
        )
        .0
    }
}

const STYLE: &str = "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe terse.\n";
const INDEX: &str = "- [Style](style.md) — review style\n";

#[test]
fn decisions_follow_claude_code() {
    let s = setup();
    assert_eq!(s.action(), SnapshotAction::None, "no snapshot");
    s.snapshot(
        "2026-11-01T00:00:00Z",
        &[("style.md", STYLE), ("MEMORY.md", INDEX)],
    );
    assert_eq!(s.action(), SnapshotAction::Initialize, "no local *.md");
    s.engine
        .initialize_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("initialize");
    assert_eq!(
        fs::read_to_string(s.dir().join("style.md")).expect("copied"),
        STYLE
    );
    assert!(
        !s.dir().join(SNAPSHOT_FILE).exists(),
        "snapshot.json is not copied"
    );
    assert_eq!(s.action(), SnapshotAction::None, "synced");
    s.snapshot("2026-11-02T00:00:00Z", &[]);
    assert_eq!(s.action(), SnapshotAction::PromptUpdate, "newer snapshot");
    fs::write(s.dir().join(SYNC_MARKER), "{oops").expect("marker");
    assert_eq!(
        s.action(),
        SnapshotAction::PromptUpdate,
        "marker unreadable"
    );
    let listed = s
        .engine
        .list_agent_memories(std::slice::from_ref(&s.cwd))
        .expect("list");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].snapshot, SnapshotAction::PromptUpdate);
    assert_eq!(listed[0].files, 1);
}

#[test]
fn a_merge_adds_takes_keeps_and_shows_both_changed_files_for_review() {
    let s = setup();
    s.snapshot(
        "2026-11-01T00:00:00Z",
        &[
            ("style.md", STYLE),
            ("tests.md", "---\nname: Tests\n---\nRun all.\n"),
            ("MEMORY.md", INDEX),
        ],
    );
    s.engine
        .initialize_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("initialize");
    // Locally: the style memory and the index changed; a local-only file was added.
    let ours_style = STYLE.replace("Be terse.", "Be terse, cite lines.");
    fs::write(s.dir().join("style.md"), &ours_style).expect("edit");
    fs::write(s.dir().join("local.md"), "---\nname: Local\n---\nmine\n").expect("local");
    s.engine
        .baseline_history(&s.dir())
        .expect("history sees the edits");
    // The team's new snapshot: style changed too, tests changed, a new file appears.
    let theirs_style = STYLE.replace("Be terse.", "Be kind and terse.");
    s.snapshot(
        "2026-11-05T00:00:00Z",
        &[
            ("style.md", &theirs_style),
            ("tests.md", "---\nname: Tests\n---\nRun all, twice.\n"),
            ("new.md", "---\nname: New\n---\nnew\n"),
            ("MEMORY.md", INDEX),
        ],
    );
    let project = s.listed();
    let staged = s
        .engine
        .stage_snapshot_merge("code-reviewer", AgentScope::Project, &s.cwd, &project)
        .expect("stage")
        .expect("a set");
    let files: Vec<(&str, &str)> = staged
        .files
        .iter()
        .map(|f| (f.change.file.as_str(), f.change.reason.as_str()))
        .collect();
    assert!(
        files.contains(&("new.md", "only in the snapshot: added")),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .any(|(f, r)| *f == "tests.md" && r.starts_with("only the snapshot changed")),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .any(|(f, r)| *f == "style.md" && r.starts_with("both changed")),
        "{files:?}"
    );
    assert!(
        !files
            .iter()
            .any(|(f, _)| *f == "local.md" || *f == "MEMORY.md"),
        "{files:?}"
    );
    let style = staged
        .files
        .iter()
        .find(|f| f.change.file == "style.md")
        .expect("style");
    assert_eq!(
        style.change.before.as_deref(),
        Some(ours_style.as_str()),
        "ours is shown"
    );
    // Nothing lands before the review; the marker waits too.
    assert_eq!(
        fs::read_to_string(s.dir().join("style.md")).expect("style"),
        ours_style
    );
    assert_eq!(s.action(), SnapshotAction::PromptUpdate);
    // Accept the new file and the clean update, reject the conflict: decided → marker written.
    s.engine
        .apply_staged(
            &staged.id,
            &["new.md".to_owned(), "tests.md".to_owned()],
            true,
            None,
        )
        .expect("accept");
    assert_eq!(
        s.action(),
        SnapshotAction::PromptUpdate,
        "style.md still waits"
    );
    let done = s
        .engine
        .reject_staged(&staged.id, &["style.md".to_owned()], None)
        .expect("reject");
    assert!(done.files.iter().all(|f| f.status != FileStatus::Pending));
    assert_eq!(
        s.action(),
        SnapshotAction::None,
        "marker written once decided"
    );
    assert_eq!(
        fs::read_to_string(s.dir().join("style.md")).expect("kept"),
        ours_style,
        "nothing lost"
    );
    assert!(s.dir().join("local.md").exists());
    assert!(fs::read_to_string(s.dir().join("tests.md"))
        .expect("taken")
        .contains("twice"));
}

#[test]
fn replace_deletes_local_markdown_first_and_publish_refuses_secrets() {
    let s = setup();
    s.snapshot("2026-11-01T00:00:00Z", &[("style.md", STYLE)]);
    fs::create_dir_all(s.dir()).expect("dir");
    fs::write(s.dir().join("old.md"), "---\nname: Old\n---\nold\n").expect("old");
    s.engine
        .replace_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("replace");
    assert!(!s.dir().join("old.md").exists());
    assert_eq!(s.action(), SnapshotAction::None);

    fs::write(
        s.dir().join("token.md"),
        "---\nname: Token\n---\nghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
    )
    .expect("secret");
    let report = s
        .engine
        .publish_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("publish");
    assert_eq!(report.published, ["style.md"]);
    assert_eq!(report.refused.len(), 1);
    assert_eq!(report.refused[0].file, "token.md");
    let snapshot = s.cwd.join(".claude/agent-memory-snapshots/code-reviewer");
    assert!(
        !snapshot.join("token.md").exists(),
        "a secret never reaches the shared snapshot"
    );
    assert_eq!(s.action(), SnapshotAction::None, "published = synced");
    assert!(snapshot_updated_at(&snapshot).is_some());
}

/// Issue #20 item 2: a file named after a token is as shared as one holding it.
#[test]
fn publish_refuses_a_file_whose_name_is_a_secret() {
    let s = setup();
    fs::create_dir_all(s.dir()).expect("dir");
    fs::write(s.dir().join("style.md"), STYLE).expect("style");
    let named = format!("{}.md", "AKIA".to_string() + "Z7QWERTYUIOP3XMB");
    fs::write(
        s.dir().join(&named),
        "---\nname: Account\n---\nplain text\n",
    )
    .expect("named");
    let report = s
        .engine
        .publish_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("publish");
    assert_eq!(report.published, ["style.md"]);
    assert_eq!(report.refused.len(), 1, "{report:?}");
    let refused = &report.refused[0];
    assert_eq!(
        (
            refused.file.as_str(),
            refused.rule.as_str(),
            refused.in_name
        ),
        (named.as_str(), "aws-access-token", true)
    );
    let snapshot = s.cwd.join(".claude/agent-memory-snapshots/code-reviewer");
    assert!(
        !snapshot.join(&named).exists(),
        "never in the shared snapshot"
    );
}

/// The app opens an agent memory dir by its store name, with the commands it uses for a
/// project's memory; only the dirs of listed agents of seen projects can be named.
#[test]
fn store_names_open_agent_memory_dirs_and_nothing_else() {
    let s = setup();
    let name = crate::paths::sanitize_path(&s.cwd.to_string_lossy());
    let transcripts = s.engine.claude_home().join("projects").join(&name);
    fs::create_dir_all(&transcripts).expect("transcripts");
    let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null, "cwd": s.cwd,
        "sessionId": "s", "message": {"role": "user", "content": "hi"}});
    fs::write(
        transcripts.join("11111111-1111-4111-8111-111111111111.jsonl"),
        format!("{line}\n"),
    )
    .expect("transcript");
    fs::create_dir_all(s.dir()).expect("project agent dir");
    fs::write(s.dir().join("style.md"), STYLE).expect("style");
    let user_dir = s.engine.memory_base().join("agent-memory/plugin-helper");
    fs::create_dir_all(&user_dir).expect("user agent dir");

    let listed = s.engine.list_agent_memories(&[]).expect("list");
    assert_eq!(listed.len(), 2, "{listed:?}");
    for agent in &listed {
        assert_eq!(
            s.engine
                .memory_store_dir_checked(&agent.store)
                .expect("opens"),
            agent.dir,
            "{}",
            agent.store
        );
    }
    let project = listed
        .iter()
        .find(|a| a.scope == AgentScope::Project)
        .expect("project agent");
    assert_eq!(
        project.store,
        format!("agent:project:code-reviewer:{}", s.cwd.display())
    );
    // A project's folder name still names its memory dir.
    assert_eq!(
        s.engine.memory_store_dir_checked(&name).expect("project"),
        s.engine
            .claude_home()
            .join("projects")
            .join(&name)
            .join("memory")
    );
    let elsewhere = s.cwd.parent().expect("parent").join("elsewhere");
    for hostile in [
        "agent:project:../escape:".to_string() + &s.cwd.to_string_lossy(),
        format!("agent:project:a/b:{}", s.cwd.display()),
        format!("agent:project:..:{}", s.cwd.display()),
        format!("agent:project:code-reviewer:{}", elsewhere.display()),
        format!("agent:local:code-reviewer:{}/../repo", s.cwd.display()),
        "agent:project:code-reviewer:".to_string(),
        "agent:user:code-reviewer:/tmp".to_string(),
        "agent:team:code-reviewer:".to_string(),
        "agent:user:plugin:helper:".to_string(),
        "agent:user".to_string(),
        "agent:".to_string(),
        "../x".to_string(),
        "a/b".to_string(),
    ] {
        assert!(
            s.engine.memory_store_dir_checked(&hostile).is_err(),
            "{hostile} was accepted"
        );
    }
}

/// With a model, a file both sides changed is proposed merged (from both versions and the common
/// one, over the Messages API's wire format); still staged, still reviewed. An answer that is
/// not a memory file keeps the snapshot's version.
#[tokio::test]
async fn a_model_proposes_merges_of_files_both_sides_changed_still_for_review() {
    use crate::llm::anthropic::AnthropicClient;
    use crate::llm::{ClientOptions, RetryPolicy};
    use crate::testing::{wire, Reply, ScriptedServer};

    let s = setup();
    let notes = "---\nname: Notes\ndescription: misc\ntype: project\n---\nOld.\n";
    s.snapshot(
        "2026-11-01T00:00:00Z",
        &[
            ("style.md", STYLE),
            ("notes.md", notes),
            ("MEMORY.md", INDEX),
        ],
    );
    s.engine
        .initialize_agent_memory("code-reviewer", AgentScope::Project, &s.cwd)
        .expect("initialize");
    let ours_style = STYLE.replace("Be terse.", "Be terse, cite lines.");
    fs::write(s.dir().join("style.md"), &ours_style).expect("edit");
    fs::write(s.dir().join("notes.md"), notes.replace("Old.", "Mine.")).expect("edit");
    s.engine.baseline_history(&s.dir()).expect("history");
    let theirs_style = STYLE.replace("Be terse.", "Be kind and terse.");
    s.snapshot(
        "2026-11-05T00:00:00Z",
        &[
            ("style.md", &theirs_style),
            ("notes.md", &notes.replace("Old.", "Theirs.")),
            ("MEMORY.md", INDEX),
        ],
    );
    let merged_style =
        "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe kind and terse, cite lines.\n";
    let server = ScriptedServer::handler(move |request, _| {
        let body = request.json();
        let prompt = body["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let merged = if prompt.starts_with("File: style.md") {
            merged_style.to_owned()
        } else {
            "I could not merge these.".to_owned()
        };
        Reply::json(wire::anthropic_tools(
            &[(
                "toolu_m",
                "merged_memory_file",
                serde_json::json!({ "merged": merged }),
            )],
            (400, 60, 0, 0),
        ))
    });
    let client = AnthropicClient::new(ClientOptions {
        base_url: server.url(),
        model: "claude-scripted".into(),
        api_key: Some("k".into()),
        timeout: std::time::Duration::from_secs(5),
        retry: RetryPolicy::default(),
    })
    .expect("client");
    let (staged, proposals) = s
        .engine
        .stage_snapshot_merge_proposed(
            "code-reviewer",
            AgentScope::Project,
            &s.cwd,
            "repo",
            &client,
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("stage");
    let staged = staged.expect("a set");
    assert_eq!((proposals.merged, proposals.refused), (1, 1));
    assert_eq!(proposals.usage.calls, 2);
    assert!(
        staged.summary.ends_with("(1 merged by claude-scripted)"),
        "{}",
        staged.summary
    );

    // The model saw all three versions of style.md.
    let requests = server.requests();
    let style_request = requests
        .iter()
        .map(|r| r.json())
        .find(|b| {
            b["messages"][0]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("File: style.md"))
        })
        .expect("style asked");
    let prompt = style_request["messages"][0]["content"][0]["text"]
        .as_str()
        .expect("text");
    for side in ["Be terse.", "Be kind and terse.", "Be terse, cite lines."] {
        assert!(prompt.contains(side), "{side} missing from {prompt}");
    }

    let file = |name: &str| {
        staged
            .files
            .iter()
            .find(|f| f.change.file == name)
            .expect("staged file")
            .change
            .clone()
    };
    let style = file("style.md");
    assert_eq!(style.after.as_deref(), Some(merged_style));
    assert_eq!(style.before.as_deref(), Some(ours_style.as_str()));
    assert!(
        style.reason.contains("claude-scripted proposes this merge"),
        "{}",
        style.reason
    );
    let kept = file("notes.md");
    assert!(kept.after.as_deref().is_some_and(|a| a.contains("Theirs.")));
    assert!(
        kept.reason.contains("was not a memory file"),
        "{}",
        kept.reason
    );
    // Proposed, not written.
    assert_eq!(
        fs::read_to_string(s.dir().join("style.md")).expect("style"),
        ours_style
    );
    s.engine
        .apply_staged(&staged.id, &["style.md".to_owned()], true, Some(&s.dir()))
        .expect("accept");
    assert_eq!(
        fs::read_to_string(s.dir().join("style.md")).expect("style"),
        merged_style
    );
}
