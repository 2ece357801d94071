//! End to end, the Sessions tab: the real `engram-app` binary in a real WebKit window driven
//! through WebDriver, over a Claude home holding a genuine Claude Code transcript and a synthetic
//! one (a compaction, thinking, a tool call, hostile markup in a prompt). The conversation is
//! read on screen — markup shown as text, never run — thinking appears only when asked, and
//! "Extract memories from this session" stages the stated fact, reviewed and accepted on screen,
//! then checked on disk.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_sessions -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: sessions-list, sessions,
//! sessions-thinking, sessions-summary, sessions-search, sessions-review.

#![cfg(unix)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use support::*;

const PROJECT: &str = "-home-ada-shop";
const SESSION: &str = "7e1d2c3b-4a5f-4e6d-8c7b-9a0b1c2d3e4f";
const GENUINE: &str = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";

fn home(root: &Path) -> (PathBuf, PathBuf) {
    let home = root.join("claude-home");
    let project = home.join("projects").join(PROJECT);
    let memory = project.join("memory");
    fs::create_dir_all(&memory).expect("memory dir");
    fs::write(memory.join("MEMORY.md"), "# Memory\n").expect("index");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/real/claude-home/projects/-path-to-Demo")
            .join(format!("{GENUINE}.jsonl")),
        project.join(format!("{GENUINE}.jsonl")),
    )
    .expect("a genuine transcript");
    let base = |uuid: &str, parent: Option<&str>, kind: &str| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
            "cwd": "/home/ada/shop", "timestamp": "2026-11-23T09:00:00.000Z", "isSidechain": false})
    };
    let mut lines = Vec::new();
    let mut u1 = base("u1", None, "user");
    u1["message"] = json!({"role": "user", "content": "Set up the deploy <script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"});
    lines.push(u1);
    let mut a1 = base("a1", Some("u1"), "assistant");
    a1["message"] = json!({"id": "m1", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "The deploy target is not known yet."},
        {"type": "text", "text": "Which platform do you deploy to?"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/home/ada/shop/fly.toml"}}]});
    lines.push(a1);
    let mut boundary = base("cb", None, "system");
    boundary["subtype"] = json!("compact_boundary");
    boundary["logicalParentUuid"] = json!("a1");
    boundary["content"] = json!("Conversation compacted");
    boundary["compactMetadata"] = json!({"trigger": "auto", "preTokens": 152000});
    lines.push(boundary);
    let mut u2 = base("u2", Some("cb"), "user");
    u2["message"] =
        json!({"role": "user", "content": "Remember that we deploy with Fly.io, never Heroku."});
    lines.push(u2);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(project.join(format!("{SESSION}.jsonl")), text).expect("transcript");
    (home, memory)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn a_session_is_read_on_screen_and_its_stated_fact_extracted_and_accepted() {
    let work = tempfile::tempdir().expect("temp dir");
    let (home, memory) = home(work.path());
    let driver = TauriDriver::start(work.path());
    let client = driver.session(&home).await;

    click(&client, &format!("tr[data-project='{PROJECT}'] td.project")).await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Sessions",
    )
    .await;
    wait_for(&client, "[data-testid='sessions-panel'] .list").await;
    screenshot(&client, "sessions-list.png").await;
    // The genuine transcript is listed under its summary title.
    wait_for(&client, &format!("[data-session='{GENUINE}']")).await;
    let genuine = client
        .execute(
            &format!("return document.querySelector(\"[data-session='{GENUINE}']\")?.textContent ?? 'none';"),
            vec![],
        )
        .await
        .expect("execute");
    assert!(
        genuine
            .as_str()
            .is_some_and(|t| t.contains("Empty Repo Setup: CLAUDE.md Foundation Created")),
        "the genuine transcript is listed under its summary title: {genuine}"
    );
    click(&client, &format!("[data-session='{SESSION}']")).await;
    wait_until_text(
        &client,
        "[data-testid='transcript']",
        "Which platform do you deploy to?",
    )
    .await;
    wait_until_text(
        &client,
        "[data-testid='compaction']",
        "Compacted (auto) at 152,000 tokens",
    )
    .await;
    // Markup in a prompt is text on screen: shown, never run.
    wait_until_text(
        &client,
        "[data-testid='transcript']",
        "<script>window.pwned = 1</script>",
    )
    .await;
    let pwned = client
        .execute("return typeof window.pwned;", vec![])
        .await
        .expect("execute");
    assert_eq!(
        pwned,
        json!("undefined"),
        "the transcript's markup did not run"
    );
    assert!(
        client
            .find_all(fantoccini::Locator::Css("[data-testid='thinking']"))
            .await
            .expect("find")
            .is_empty(),
        "thinking is hidden by default"
    );
    screenshot(&client, "sessions.png").await;
    click(&client, ".thinking-toggle input").await;
    wait_until_text(
        &client,
        "[data-testid='thinking']",
        "The deploy target is not known yet.",
    )
    .await;
    screenshot(&client, "sessions-thinking.png").await;

    // The session's summary: none yet; written on request (offline here), on screen and on disk.
    click(&client, "[data-testid='summary-tab']").await;
    wait_until_text(&client, "[data-testid='session-summary']", "No summary yet").await;
    click(&client, "[data-testid='write-summary']").await;
    wait_until_text(
        &client,
        "[data-testid='session-summary'] pre",
        "# Session Title",
    )
    .await;
    screenshot(&client, "sessions-summary.png").await;
    let summary = home
        .join("projects")
        .join(PROJECT)
        .join(SESSION)
        .join("session-memory/summary.md");
    let written = fs::read_to_string(&summary).expect("summary.md");
    assert!(
        written.contains("Remember that we deploy with Fly.io"),
        "{written}"
    );
    click_text(
        &client,
        "[role='radiogroup'][aria-label='Show'] button",
        "Conversation",
    )
    .await;
    wait_for(&client, "[data-testid='transcript']").await;

    // Search as you type: a word from the other session's prompt finds it; a hit opens it.
    replace_text(&client, "[data-testid='session-search']", "Heroku").await;
    wait_for(&client, &format!("[data-session-hit='{SESSION}']")).await;
    screenshot(&client, "sessions-search.png").await;
    click(&client, &format!("[data-session-hit='{SESSION}']")).await;
    wait_for(&client, ".message.focused").await;

    // Extract: the stated fact is proposed, reviewed and accepted on screen, then on disk.
    click_text(&client, "button", "Extract memories from this session").await;
    wait_for(
        &client,
        "[data-testid='review-panel'][data-status='pending']",
    )
    .await;
    wait_until_text(
        &client,
        "[data-testid='review-panel']",
        "project_we_deploy_with_fly_io.md",
    )
    .await;
    screenshot(&client, "sessions-review.png").await;
    assert!(
        !memory.join("project_we_deploy_with_fly_io.md").exists(),
        "nothing lands before it is accepted"
    );
    click(&client, "[data-testid='accept-all']").await;
    wait_for(
        &client,
        "[data-testid='review-panel'][data-status='applied']",
    )
    .await;
    let topic = fs::read_to_string(memory.join("project_we_deploy_with_fly_io.md")).expect("topic");
    assert!(
        topic.contains("We deploy with Fly.io, never Heroku"),
        "{topic}"
    );
    let index = fs::read_to_string(memory.join("MEMORY.md")).expect("index");
    assert!(
        index.contains("(project_we_deploy_with_fly_io.md)"),
        "{index}"
    );
}
