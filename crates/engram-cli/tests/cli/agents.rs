//! `engram agents`: agent memory scopes and team snapshots, on real files.

use std::fs;

use crate::support::{assert_has_keys, stdout, Sandbox};

fn snapshot(s: &Sandbox, updated_at: &str, files: &[(&str, &str)]) {
    let dir = s
        .project()
        .join(".claude/agent-memory-snapshots/code-reviewer");
    fs::create_dir_all(&dir).expect("snapshot");
    for (name, text) in files {
        fs::write(dir.join(name), text).expect("file");
    }
    fs::write(
        dir.join("snapshot.json"),
        format!("{{\"updatedAt\": \"{updated_at}\"}}"),
    )
    .expect("meta");
}

#[test]
fn list_initialize_merge_and_publish_through_the_cli() {
    let s = Sandbox::in_project("agents").with_engram_home();
    // Agent memory is in projects Claude Code has run in: their staged merges apply to it.
    s.list_project();
    let user = s.home().join(".claude/agent-memory/planner");
    fs::create_dir_all(&user).expect("user scope");
    fs::write(user.join("MEMORY.md"), "- [Plans](plans.md) — how I plan\n").expect("index");
    fs::write(
        user.join("plans.md"),
        "---\nname: Plans\ndescription: how I plan\ntype: user\n---\nSmall steps.\n",
    )
    .expect("topic");
    snapshot(
        &s,
        "2026-11-01T00:00:00Z",
        &[(
            "style.md",
            "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe terse.\n",
        )],
    );

    let listed = s.json(&["agents"]);
    let rows = listed.as_array().expect("array");
    assert_eq!(rows.len(), 2, "{listed}");
    for row in rows {
        assert_has_keys(
            row,
            &[
                "agentType",
                "scope",
                "dir",
                "files",
                "snapshot",
                "snapshotUpdatedAt",
                "syncedFrom",
            ],
        );
    }
    let reviewer = rows
        .iter()
        .find(|r| r["agentType"] == "code-reviewer")
        .expect("from the snapshot");
    assert_eq!(reviewer["scope"], "project");
    assert_eq!(reviewer["snapshot"], "initialize");
    let planner = rows
        .iter()
        .find(|r| r["agentType"] == "planner")
        .expect("user scope");
    assert_eq!(
        (planner["scope"].as_str(), planner["files"].as_u64()),
        (Some("user"), Some(1))
    );

    s.json(&["agents", "sync", "code-reviewer", "--initialize"]);
    let dir = s.project().join(".claude/agent-memory/code-reviewer");
    assert!(dir.join("style.md").is_file());
    snapshot(
        &s,
        "2026-11-03T00:00:00Z",
        &[(
            "style.md",
            "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe kind.\n",
        )],
    );
    let updated = s.json(&["agents"]);
    assert!(updated.to_string().contains("prompt-update"), "{updated}");
    let staged = s.json(&["agents", "sync", "code-reviewer", "--merge"]);
    assert_eq!(staged["source"], "snapshot");
    assert!(
        fs::read_to_string(dir.join("style.md"))
            .expect("style")
            .contains("Be terse."),
        "not overwritten"
    );
    let id = staged["id"].as_str().expect("id");
    s.json(&["changes", "apply", id]);
    assert!(fs::read_to_string(dir.join("style.md"))
        .expect("style")
        .contains("Be kind."));
    assert!(
        !s.json(&["agents"]).to_string().contains("prompt-update"),
        "marker written on accept"
    );

    let published = s.json(&["agents", "publish", "code-reviewer"]);
    assert_eq!(published["published"], serde_json::json!(["style.md"]));
}

#[test]
fn a_moved_projects_memory_is_listed_as_stranded_and_merged_back_after_review() {
    let s = Sandbox::in_project("stranded").with_engram_home();
    let gone = s.root().join("old-name");
    let dir = s
        .home()
        .join(".claude/projects")
        .join(memory_engine::paths::sanitize_path(&gone.to_string_lossy()));
    fs::create_dir_all(dir.join("memory")).expect("memory");
    let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null, "cwd": gone, "sessionId": "s",
        "message": {"role": "user", "content": "hi"}});
    fs::write(
        dir.join("22222222-2222-4222-8222-222222222222.jsonl"),
        format!("{line}\n"),
    )
    .expect("transcript");
    fs::write(dir.join("memory/project_billing.md"), "---\nname: Billing\ndescription: billing rules\ntype: project\n---\nInvoices on the 1st.\n").expect("file");
    let listed = s.json(&["stranded"]);
    let row = &listed.as_array().expect("array")[0];
    assert_has_keys(row, &["kind", "dir", "files", "live", "project"]);
    assert_eq!(row["kind"], "moved-project");
    assert_eq!(row["files"], serde_json::json!(["project_billing.md"]));
    let text = stdout(&s.run(&["stranded"]));
    assert!(
        text.starts_with(&format!(
            "moved project: {} (1 file); {} is gone, and where it went is unknown: give \
             --into DIR\n",
            row["dir"].as_str().expect("dir"),
            gone.display()
        )) && text.contains("engram stranded merge DIR"),
        "{text}"
    );
    let into = s.root().join("new-memory");
    fs::create_dir_all(&into).expect("into");
    let staged = s.json(&[
        "stranded",
        "merge",
        row["dir"].as_str().expect("dir"),
        "--into",
        &into.to_string_lossy(),
    ]);
    assert_eq!(staged["source"], "stranded");
    assert!(
        !into.join("project_billing.md").exists(),
        "staged, not applied"
    );
    // A dir named by hand is the person's to name again when applying.
    s.json(&[
        "changes",
        "apply",
        staged["id"].as_str().expect("id"),
        "--memory-dir",
        &into.to_string_lossy(),
    ]);
    assert!(into.join("project_billing.md").is_file());
}

#[test]
fn merge_with_propose_stages_the_models_merge_and_needs_a_model() {
    use memory_engine::testing::{wire, Reply, ScriptedServer};

    let s = Sandbox::in_project("agents-propose").with_engram_home();
    s.list_project();
    let style = |body: &str| {
        format!("---\nname: Style\ndescription: review style\ntype: feedback\n---\n{body}\n")
    };
    snapshot(
        &s,
        "2026-11-01T00:00:00Z",
        &[("style.md", &style("Be terse."))],
    );
    s.json(&["agents", "sync", "code-reviewer", "--initialize"]);
    let dir = s
        .project()
        .join(".claude/agent-memory-snapshots/../agent-memory/code-reviewer");
    fs::write(dir.join("style.md"), style("Be terse, cite lines.")).expect("ours");
    snapshot(
        &s,
        "2026-11-03T00:00:00Z",
        &[("style.md", &style("Be kind and terse."))],
    );

    let offline = s.run(&[
        "agents",
        "sync",
        "code-reviewer",
        "--merge",
        "--propose",
        "--provider",
        "offline",
    ]);
    assert_eq!(crate::support::exit_code(&offline), 2);
    assert!(crate::support::stderr(&offline).contains("--propose needs a model"));
    let without_merge = s.run(&[
        "agents",
        "sync",
        "code-reviewer",
        "--initialize",
        "--propose",
    ]);
    assert_eq!(
        crate::support::exit_code(&without_merge),
        2,
        "--propose requires --merge"
    );

    let merged = style("Be kind and terse, cite lines.");
    let answer = merged.clone();
    let server = ScriptedServer::handler(move |_, _| {
        Reply::json(wire::anthropic_tools(
            &[(
                "toolu_m",
                "merged_memory_file",
                serde_json::json!({ "merged": answer }),
            )],
            (300, 40, 0, 0),
        ))
    });
    let out = s
        .command(&[
            "agents",
            "sync",
            "code-reviewer",
            "--merge",
            "--propose",
            "--provider",
            "anthropic",
            "--model",
            "claude-test",
            "--json",
        ])
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .output()
        .expect("run");
    assert_eq!(
        crate::support::exit_code(&out),
        0,
        "{}",
        crate::support::stderr(&out)
    );
    let staged: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(staged["files"][0]["after"], merged.as_str(), "{staged}");
    assert!(staged["summary"]
        .as_str()
        .expect("summary")
        .contains("merged by claude-test"));
    assert_eq!(server.requests().len(), 1);
    assert!(
        fs::read_to_string(dir.join("style.md"))
            .expect("ours")
            .contains("cite lines.\n")
            && !fs::read_to_string(dir.join("style.md"))
                .expect("ours")
                .contains("kind"),
        "proposed, not written"
    );
    s.json(&["changes", "apply", staged["id"].as_str().expect("id")]);
    assert_eq!(
        fs::read_to_string(dir.join("style.md")).expect("merged"),
        merged
    );
}
