//! `engram agents`: agent memory scopes and team snapshots, on real files.

use std::fs;

use crate::support::{assert_has_keys, Sandbox};

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
