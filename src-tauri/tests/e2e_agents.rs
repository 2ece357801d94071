//! End to end, the Agents view: the real `engram-app` binary in a real WebKit window driven
//! through WebDriver. A project's `code-reviewer` agent memory, synced from an earlier team
//! snapshot, meets a newer snapshot that changed two files it also changed: the banner opens the
//! merge in the review screen, one file is accepted and one rejected — then the disk and the
//! `.snapshot-synced.json` marker are checked.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_agents -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: agents, agents-merge.

#![cfg(unix)]

mod support;

use std::fs;

use serde_json::json;

use support::*;

const STYLE_OURS: &str =
    "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe terse, cite lines.\n";
const STYLE_THEIRS: &str =
    "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe kind and terse.\n";
const TESTS_OURS: &str =
    "---\nname: Tests\ndescription: how to test\ntype: project\n---\nRun the unit tests.\n";
const TESTS_THEIRS: &str =
    "---\nname: Tests\ndescription: how to test\ntype: project\n---\nRun all the tests, twice.\n";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn an_updated_snapshot_is_merged_file_by_file_from_the_banner() {
    let work = tempfile::tempdir().expect("temp dir");
    let repo = fs::canonicalize(work.path()).expect("real").join("repo");
    let home = work.path().join("claude-home");
    // Claude Code has seen the project: a transcript names its working dir.
    let project = home
        .join("projects")
        .join(memory_engine::paths::sanitize_path(&repo.to_string_lossy()));
    fs::create_dir_all(&project).expect("project");
    let line = json!({"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s1", "cwd": repo,
        "timestamp": "2026-11-22T10:00:00.000Z", "message": {"role": "user", "content": "review the PR"}});
    fs::write(
        project.join("0b8a5c1e-6f0e-4a43-9a36-1c1f3f8f5a01.jsonl"),
        format!("{line}\n"),
    )
    .expect("transcript");
    // The agent's memory, synced from the snapshot of Nov 1 and edited since.
    let agent = repo.join(".claude/agent-memory/code-reviewer");
    fs::create_dir_all(&agent).expect("agent");
    fs::write(
        agent.join("MEMORY.md"),
        "- [Style](style.md) — review style\n- [Tests](tests.md) — how to test\n",
    )
    .expect("index");
    fs::write(agent.join("style.md"), STYLE_OURS).expect("style");
    fs::write(agent.join("tests.md"), TESTS_OURS).expect("tests");
    fs::write(
        agent.join(".snapshot-synced.json"),
        r#"{"syncedFrom":"2026-11-01T00:00:00.000Z"}"#,
    )
    .expect("marker");
    // The team's newer snapshot.
    let snapshot = repo.join(".claude/agent-memory-snapshots/code-reviewer");
    fs::create_dir_all(&snapshot).expect("snapshot");
    fs::write(
        snapshot.join("snapshot.json"),
        r#"{"updatedAt":"2026-11-05T09:00:00.000Z"}"#,
    )
    .expect("meta");
    fs::write(snapshot.join("style.md"), STYLE_THEIRS).expect("style");
    fs::write(snapshot.join("tests.md"), TESTS_THEIRS).expect("tests");
    fs::write(
        snapshot.join("MEMORY.md"),
        "- [Style](style.md) — review style\n- [Tests](tests.md) — how to test\n",
    )
    .expect("index");

    let driver = TauriDriver::start(work.path());
    let client = driver.session(&home).await;
    click(&client, "[data-testid='nav-agents']").await;
    wait_until_text(&client, "[data-testid='snapshot-banner']", "code-reviewer").await;
    wait_until_text(
        &client,
        "tr[data-agent='code-reviewer'] [data-testid='snapshot-state']",
        "Team snapshot updated",
    )
    .await;
    screenshot(&client, "agents.png").await;

    click(&client, "[data-testid='review-merge']").await;
    wait_for(
        &client,
        "[data-testid='review-panel'][data-status='pending']",
    )
    .await;
    wait_for(&client, ".files [data-file='style.md']").await;
    screenshot(&client, "agents-merge.png").await;
    assert_eq!(
        fs::read_to_string(agent.join("style.md")).expect("style"),
        STYLE_OURS,
        "nothing overwritten before review"
    );

    // Take the team's tests memory; keep our style memory.
    click(&client, ".files [data-file='tests.md']").await;
    click(
        &client,
        "[data-testid='review-file'][data-file='tests.md'] [data-testid='file-accept']",
    )
    .await;
    wait_for(
        &client,
        ".files [data-file='tests.md'][data-status='applied']",
    )
    .await;
    let marker = agent.join(".snapshot-synced.json");
    assert!(
        fs::read_to_string(&marker)
            .expect("marker")
            .contains("2026-11-01"),
        "the marker waits until every file is decided"
    );
    click(&client, ".files [data-file='style.md']").await;
    click(
        &client,
        "[data-testid='review-file'][data-file='style.md'] [data-testid='file-reject']",
    )
    .await;
    wait_for(
        &client,
        ".files [data-file='style.md'][data-status='rejected']",
    )
    .await;

    assert_eq!(
        fs::read_to_string(agent.join("tests.md")).expect("tests"),
        TESTS_THEIRS
    );
    assert_eq!(
        fs::read_to_string(agent.join("style.md")).expect("style"),
        STYLE_OURS
    );
    let synced: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&marker).expect("marker")).expect("json");
    assert_eq!(synced["syncedFrom"], "2026-11-05T09:00:00.000Z");

    // Back in the list, the banner is gone.
    click_text(&client, ".crumb", "Agents").await;
    wait_until_text(&client, "tr[data-agent='code-reviewer']", "synced").await;
    assert!(client
        .find_all(fantoccini::Locator::Css("[data-testid='snapshot-banner']"))
        .await
        .expect("find")
        .is_empty());

    // The agent's memory opens like a project's: its files, the editor, its index.
    click(
        &client,
        "tr[data-agent='code-reviewer'] [data-testid='open-agent']",
    )
    .await;
    wait_until_text(
        &client,
        "[data-testid='agent-scope']",
        "project agent memory",
    )
    .await;
    click(&client, "[data-file='style.md']").await;
    wait_for(&client, "[data-testid='memory-pane'][data-file='style.md']").await;
    click_text(
        &client,
        "[role='tablist'][aria-label='View'] button",
        "Edit",
    )
    .await;
    wait_for(&client, "[data-testid='editor']").await;
    replace_text(
        &client,
        "textarea[name='body']",
        "Be terse, cite lines, suggest a fix.",
    )
    .await;
    click_text(&client, "[data-testid='editor'] footer button", "Save").await;
    let saved = wait_until(|| {
        let text = fs::read_to_string(agent.join("style.md")).unwrap_or_default();
        text.contains("suggest a fix").then_some(text)
    })
    .await;
    assert!(saved.contains("name: Style"), "{saved}");
    screenshot(&client, "agent-memory.png").await;
    let tabs = client
        .find_all(fantoccini::Locator::Css(
            "[role='tablist'][aria-label='Project'] button",
        ))
        .await
        .expect("tabs");
    assert_eq!(tabs.len(), 3, "memories, index and recall only");
    click_text(&client, ".crumb", "Agents").await;
    wait_for(&client, "[data-testid='agents-view']").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn team_memory_is_pushed_to_a_git_remote_from_the_team_tab_without_its_secret() {
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("claude-home");
    let memory = home.join("projects").join("-home-ada-shop").join("memory");
    fs::create_dir_all(memory.join("team")).expect("team");
    fs::write(
        memory.join("MEMORY.md"),
        "- [Deploy](team/deploy.md) — how we deploy\n",
    )
    .expect("index");
    fs::write(
        memory.join("team/deploy.md"),
        "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nFly.io, staging first.\n",
    )
    .expect("deploy");
    fs::write(
        memory.join("team/ci.md"),
        "---\nname: CI\ndescription: the CI token\ntype: reference\n---\ntoken ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
    )
    .expect("secret");
    let remote = work.path().join("team.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .expect("git");
    assert!(ok.success());

    let driver = TauriDriver::start(work.path());
    let client = driver.session(&home).await;
    click(&client, "tr[data-project='-home-ada-shop'] td.project").await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Team",
    )
    .await;
    wait_until_text(&client, "[data-testid='team-panel']", "Not synced").await;
    wait_until_text(&client, "[data-testid='team-secrets']", "ci.md:6").await;
    replace_text(
        &client,
        "[data-testid='team-remote']",
        &remote.to_string_lossy(),
    )
    .await;
    click_text(&client, "[data-testid='team-panel'] button", "Save").await;
    wait_until_text(&client, "[data-testid='team-status']", "2 to push").await;
    click(&client, "[data-testid='team-push']").await;
    wait_until_text(&client, "[data-testid='team-report']", "Pushed 1 file.").await;
    wait_until_text(&client, "[data-testid='team-report']", "Skipped ci.md").await;
    screenshot(&client, "team.png").await;
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(&remote)
        .args(["ls-tree", "-r", "--name-only", "main"])
        .output()
        .expect("git ls-tree");
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout),
        "deploy.md\n",
        "the secret never left"
    );

    // Redact it: a reviewed change; once accepted, the file pushes.
    click(&client, "[data-testid='team-redact']").await;
    click(&client, ".files [data-file='team/ci.md']").await;
    let review = "[data-testid='review-file'][data-file='team/ci.md']";
    wait_until_text(&client, review, "[REDACTED:github-pat]").await;
    assert!(
        fs::read_to_string(memory.join("team/ci.md"))
            .expect("ci")
            .contains("ghp_"),
        "nothing changes before review"
    );
    screenshot(&client, "team-redact.png").await;
    click(&client, &format!("{review} [data-testid='file-accept']")).await;
    wait_for(
        &client,
        ".files [data-file='team/ci.md'][data-status='applied']",
    )
    .await;
    assert!(fs::read_to_string(memory.join("team/ci.md"))
        .expect("ci")
        .ends_with("token [REDACTED:github-pat]\n"));
    click_text(&client, ".crumb", "Team").await;
    wait_for(&client, "[data-testid='team-panel'][aria-busy='false']").await;
    wait_until_text(&client, "[data-testid='team-status']", "1 to push").await;
    click(&client, "[data-testid='team-push']").await;
    wait_until_text(&client, "[data-testid='team-status']", "0 to push").await;
    screenshot(&client, "team-pushed.png").await;
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(&remote)
        .args(["ls-tree", "-r", "--name-only", "main"])
        .output()
        .expect("git ls-tree");
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout),
        "ci.md\ndeploy.md\n"
    );
}
