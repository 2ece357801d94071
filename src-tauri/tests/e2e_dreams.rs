//! End to end, the Dreams tab and the review screen: the real `engram-app` binary in a real WebKit
//! window driven through WebDriver, dreaming over a messy memory dir (an exact duplicate, a
//! relative date, a dangling `MEMORY.md` line, an orphan) with a scripted Anthropic model on
//! loopback. A slow dream is watched live and killed (the lock rolls back, nothing changes); a
//! fast one completes, is reviewed file by file on screen, and undone — each step checked on disk.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_dreams -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: dreams-start, dream-live, dreams,
//! review, review-side-by-side, projects-review-badge, review-dark.

#![cfg(unix)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fantoccini::{Client, Locator};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

use support::*;

const PROJECT: &str = "-home-ada-shop";
/// How long the slow model takes to answer each turn.
const SLOW_REPLY: Duration = Duration::from_millis(1500);

const DEPLOY: &str =
    "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nWe moved to Fly.io yesterday.\n";
const TABS: &str =
    "---\nname: Tabs\ndescription: tabs not spaces\ntype: feedback\n---\nUse tabs.\n";
const GONE_LINE: &str = "- [Gone](gone.md) \u{2014} missing\n";
const TABS_LINE: &str = "- [Tabs](feedback_tabs.md) \u{2014} tabs not spaces\n";

/// A Claude home with one project: its memory dir holds an exact duplicate topic file, a relative
/// date, a dangling index line and an orphan (a feedback memory no index line links to); two
/// sessions were recorded since (no lock: never consolidated). Returns the home and memory dir.
fn messy_home(root: &Path) -> (PathBuf, PathBuf) {
    let home = root.join("claude-home");
    let project = home.join("projects").join(PROJECT);
    let memory = project.join("memory");
    fs::create_dir_all(&memory).expect("memory dir");
    fs::write(
        memory.join("MEMORY.md"),
        format!(
            "# Memory\n\n- [Deploy](project_deploy.md) \u{2014} how we deploy\n{GONE_LINE}- [Adrian](user_adrian.md) \u{2014} who the user is\n"
        ),
    )
    .expect("index");
    fs::write(memory.join("project_deploy.md"), DEPLOY).expect("deploy");
    fs::write(memory.join("project_deploy_copy.md"), DEPLOY).expect("duplicate");
    fs::write(
        memory.join("user_adrian.md"),
        "---\nname: Adrian\ndescription: who the user is\ntype: user\n---\nSenior engineer, likes brutal honesty.\n",
    )
    .expect("user");
    fs::write(memory.join("feedback_tabs.md"), TABS).expect("orphan");
    for (session, prompt) in [
        (
            "0b8a5c1e-6f0e-4a43-9a36-1c1f3f8f5a01",
            "deploy the shop to fly",
        ),
        (
            "5d2e9b7a-3c4f-4e1b-8d6a-2e7b9c0d1f02",
            "use tabs in the new module",
        ),
    ] {
        let line = json!({
            "type": "user",
            "sessionId": session,
            "cwd": "/home/ada/shop",
            "timestamp": "2026-11-22T10:00:00.000Z",
            "message": {"role": "user", "content": prompt},
        });
        fs::write(
            project.join(format!("{session}.jsonl")),
            format!("{line}\n"),
        )
        .expect("transcript");
    }
    (home, memory)
}

/// Every file of the memory dir, hidden ones included, with its bytes.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .expect("list the memory dir")
        .flatten()
        .filter(|entry| entry.path().is_file())
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                fs::read(entry.path()).expect("read"),
            )
        })
        .collect();
    files.sort();
    files
}

/// The memory files only (`*.md`): what a dream may change.
fn memories_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_of(dir)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".md"))
        .collect()
}

/// One model turn: some text and the tools it calls.
fn turn(text: &str, calls: &[(&str, &str, Value)], tokens: wire::Tokens) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(calls.iter().map(
        |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
    ));
    wire::anthropic(content, "tool_use", tokens)
}

/// The scripted consolidation, by how far the conversation got (messages sent so far): read,
/// then stage the fixes, then — when fast — say it is done; when slow, keep looking (so the
/// dream is still running when the test kills it).
fn consolidation(messages: usize, fast: bool) -> Value {
    match messages {
        0 | 1 => turn(
            "Reading the index and the deploy notes first.",
            &[
                ("r1", "read", json!({"path": "MEMORY.md"})),
                ("r2", "read", json!({"path": "project_deploy.md"})),
            ],
            (1200, 40, 800, 0),
        ),
        2 | 3 => turn(
            "Dating the deploy move, dropping the duplicate, fixing the index and sharpening the tabs rule.",
            &[
                (
                    "w1",
                    "edit",
                    json!({"path": "project_deploy.md", "old_string": "yesterday", "new_string": "on 2026-11-22"}),
                ),
                ("w2", "delete", json!({"path": "project_deploy_copy.md"})),
                (
                    "w3",
                    "edit",
                    json!({"path": "MEMORY.md", "old_string": GONE_LINE, "new_string": TABS_LINE}),
                ),
                (
                    "w4",
                    "edit",
                    json!({"path": "feedback_tabs.md", "old_string": "Use tabs.", "new_string": "Use tabs, 4 wide."}),
                ),
            ],
            (1500, 160, 900, 0),
        ),
        _ if fast => wire::anthropic_text(
            "Consolidated: dated the deploy move, merged the duplicate, fixed the index.",
            (1600, 30, 900, 0),
        ),
        _ => turn(
            "Checking the sessions for anything else about deploys.",
            &[("g1", "grep", json!({"pattern": "deploy"}))],
            (1650, 20, 900, 0),
        ),
    }
}

async fn open_dreams_tab(client: &Client) {
    click(client, &format!("tr[data-project='{PROJECT}'] td.project")).await;
    click_text(
        client,
        "[role='tablist'][aria-label='Project'] button",
        "Dreams",
    )
    .await;
    wait_for(client, "[data-testid='gate-words']").await;
}

async fn text_of(client: &Client, css: &str) -> String {
    wait_for(client, css)
        .await
        .text()
        .await
        .unwrap_or_else(|e| panic!("text of {css}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn a_dream_is_watched_live_killed_and_a_completed_one_reviewed_and_undone() {
    let work = tempfile::tempdir().expect("temp dir");
    let (home, memory) = messy_home(work.path());
    let fast = Arc::new(AtomicBool::new(false));
    let server = ScriptedServer::handler({
        let fast = Arc::clone(&fast);
        move |request, _| {
            let fast = fast.load(Ordering::SeqCst);
            if !fast {
                std::thread::sleep(SLOW_REPLY);
            }
            let messages = request.json()["messages"].as_array().map_or(0, Vec::len);
            Reply::json(consolidation(messages, fast))
        }
    });
    let engram_home = work.path().join("engram-home");
    fs::create_dir_all(&engram_home).expect("engram home");
    fs::write(
        engram_home.join("config.toml"),
        format!(
            "[llm]\nprovider = \"anthropic\"\n\n[llm.anthropic]\nbase_url = \"{}\"\n",
            server.url()
        ),
    )
    .expect("config");
    let before = files_of(&memory);
    assert!(
        !memory.join(".consolidate-lock").exists(),
        "never consolidated: no lock"
    );

    let driver = TauriDriver::start_with(work.path(), &[("ANTHROPIC_API_KEY", "test-key")]);
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;
    assert!(
        client
            .find_all(Locator::Css("[data-testid='review-badge']"))
            .await
            .expect("badges")
            .is_empty(),
        "nothing waits for review yet"
    );

    // The Dreams tab: the gates in words.
    open_dreams_tab(&client).await;
    let model = wait_for(&client, "[data-testid='dream-gates'] .model").await;
    screenshot(&client, "dreams-start.png").await;
    assert_eq!(
        text_of(&client, "[data-testid='gate-words']").await,
        "never consolidated · 2 of 5 sessions · lock free"
    );
    let verdict = text_of(&client, "[data-testid='gate-verdict']").await;
    assert!(
        verdict.contains("Off: background dreams skip this project"),
        "dreams are off by default, and the first closed gate says so: {verdict}"
    );
    assert!(
        model.text().await.expect("model").contains("Anthropic"),
        "the dream's model is named before it runs"
    );

    // A slow dream, watched live: at least one turn, and the phase moves to updating at its
    // first staged write.
    click(&client, "[data-testid='dream-now']").await;
    wait_for(
        &client,
        "[data-testid='dream-live'][data-status='running'][data-phase='updating']",
    )
    .await;
    wait_for(&client, "[data-testid='dream-turn']").await;
    screenshot(&client, "dream-live.png").await;
    let live = text_of(&client, "[data-testid='dream-live']").await;
    assert!(
        live.contains("Reading the index and the deploy notes first.")
            && live.contains("2 tool calls")
            && live.contains("project_deploy.md")
            && live.contains("2,700")
            && live.contains("cache read"),
        "the live task shows the turns, the files touched and the tokens: {live}"
    );
    let lock =
        fs::read_to_string(memory.join(".consolidate-lock")).expect("the dream holds the lock");
    assert!(
        lock.trim().parse::<u32>().is_ok(),
        "Claude Code's lock holds the dreaming process's pid: {lock:?}"
    );
    assert_eq!(
        memories_of(&memory),
        memories_of_list(&before),
        "a running dream only stages"
    );

    // Kill: the run stops, nothing lands, the lock it took is gone again.
    click(&client, "[data-testid='dream-kill']").await;
    wait_for(&client, "[data-testid='dream-live'][data-status='killed']").await;
    assert!(
        !memory.join(".consolidate-lock").exists(),
        "killed with no lock before: the lock file is deleted"
    );
    assert_eq!(
        files_of(&memory),
        before,
        "a killed dream changes nothing in the memory dir"
    );
    let outcome = text_of(&client, "[data-testid='dream-outcome']").await;
    assert!(outcome.contains("Killed"), "{outcome}");

    // A dream that completes: the model now answers at once.
    fast.store(true, Ordering::SeqCst);
    click(&client, "[data-testid='dream-now']").await;
    wait_for(
        &client,
        "[data-testid='dream-live'][data-status='completed']",
    )
    .await;
    wait_for(
        &client,
        "[data-testid='past-dreams'] li[data-status='killed']",
    )
    .await;
    wait_for(
        &client,
        "[data-testid='past-dreams'] li[data-status='completed']",
    )
    .await;
    scroll_into_view(&client, "[data-testid='past-dreams']").await;
    screenshot(&client, "dreams.png").await;
    assert_eq!(
        memories_of(&memory),
        memories_of_list(&before),
        "under the review policy a completed dream only stages"
    );
    assert!(
        memory.join(".consolidate-lock").exists(),
        "a completed dream leaves the lock at its completion time, as Claude Code does"
    );

    // The review screen: every file, the protected one marked.
    click(&client, "[data-testid='dream-review']").await;
    wait_for(
        &client,
        "[data-testid='review-panel'] [data-testid='review-file']",
    )
    .await;
    let listed: Vec<String> = {
        let mut names = Vec::new();
        for entry in client
            .find_all(Locator::Css(
                "[data-testid='review-panel'] .files [data-file]",
            ))
            .await
            .expect("files")
        {
            names.push(
                entry
                    .attr("data-file")
                    .await
                    .expect("attr")
                    .unwrap_or_default(),
            );
        }
        names
    };
    assert_eq!(
        listed,
        [
            "project_deploy.md",
            "project_deploy_copy.md",
            "MEMORY.md",
            "feedback_tabs.md"
        ],
        "the set holds what the model wrote, in order"
    );
    wait_for(
        &client,
        ".files [data-file='feedback_tabs.md'] [aria-label='protected']",
    )
    .await;
    screenshot(&client, "review.png").await;

    // Accept the date fix, reject the duplicate's deletion.
    click(&client, ".files [data-file='project_deploy.md']").await;
    click(
        &client,
        "[data-testid='review-file'][data-file='project_deploy.md'] [data-testid='file-accept']",
    )
    .await;
    wait_for(
        &client,
        ".files [data-file='project_deploy.md'][data-status='applied']",
    )
    .await;
    let deploy = fs::read_to_string(memory.join("project_deploy.md")).expect("deploy");
    assert_eq!(
        deploy,
        DEPLOY.replace("yesterday", "on 2026-11-22"),
        "the accepted file is written as planned"
    );
    click(&client, ".files [data-file='project_deploy_copy.md']").await;
    click(
        &client,
        "[data-testid='review-file'][data-file='project_deploy_copy.md'] [data-testid='file-reject']",
    )
    .await;
    wait_for(
        &client,
        ".files [data-file='project_deploy_copy.md'][data-status='rejected']",
    )
    .await;
    assert_eq!(
        fs::read_to_string(memory.join("project_deploy_copy.md")).expect("duplicate kept"),
        DEPLOY,
        "the rejected delete left the file as it was"
    );
    for file in ["MEMORY.md", "feedback_tabs.md"] {
        assert_eq!(
            fs::read_to_string(memory.join(file)).expect("read"),
            before_text(&before, file),
            "{file} still waits: untouched"
        );
    }

    // The protected file, side by side.
    click(&client, ".files [data-file='feedback_tabs.md']").await;
    click(&client, "[data-testid='view-side']").await;
    wait_for(
        &client,
        "[data-testid='review-file'][data-file='feedback_tabs.md'] [data-testid='protected-tag']",
    )
    .await;
    wait_for(&client, "[data-testid='review-file'] [data-side='after']").await;
    screenshot(&client, "review-side-by-side.png").await;

    // Undo: the disk is back byte for byte.
    click(&client, "[data-testid='undo-set']").await;
    wait_for(
        &client,
        ".files [data-file='project_deploy.md'][data-status='undone']",
    )
    .await;
    assert_eq!(
        memories_of(&memory),
        memories_of_list(&before),
        "undo puts every memory file back byte for byte"
    );
    let status = text_of(&client, "[data-testid='set-status']").await;
    assert_eq!(
        status, "Waiting for review",
        "two files were never decided: the set still waits"
    );

    // The Projects view badges the project whose set still waits.
    click(
        &client,
        "nav[aria-label='Sections'] li:first-child > button.section",
    )
    .await;
    let badge = wait_for(
        &client,
        &format!("tr[data-project='{PROJECT}'] [data-testid='review-badge']"),
    )
    .await;
    screenshot(&client, "projects-review-badge.png").await;
    assert_eq!(
        badge.text().await.expect("badge").trim(),
        "1 change to review"
    );
    client.close().await.expect("end the session");
    drop(driver);

    // The review screen in the dark theme, reached from the badge.
    let dark = TauriDriver::start_with(
        work.path(),
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("GTK_THEME", "Adwaita:dark"),
        ],
    );
    let client = dark.session(&home).await;
    click(
        &client,
        "nav[aria-label='Sections'] li:first-child > button.section",
    )
    .await;
    click(
        &client,
        &format!("tr[data-project='{PROJECT}'] [data-testid='review-badge']"),
    )
    .await;
    click_text(&client, "[data-testid='sets-waiting'] button", "Review").await;
    click(&client, ".files [data-file='feedback_tabs.md']").await;
    wait_for(
        &client,
        "[data-testid='review-file'][data-file='feedback_tabs.md'] [data-testid='protected-tag']",
    )
    .await;
    screenshot(&client, "review-dark.png").await;
    client.close().await.expect("end the session");
    drop(server);
}

fn memories_of_list(files: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    files
        .iter()
        .filter(|(name, _)| name.ends_with(".md"))
        .cloned()
        .collect()
}

fn before_text(files: &[(String, Vec<u8>)], name: &str) -> String {
    files
        .iter()
        .find(|(file, _)| file == name)
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap_or_else(|| panic!("{name} was in the memory dir"))
}

/// The app left alone: dreams on for the project, six sessions since, `check_every = "3s"`. The
/// background scheduler dreams on its own (offline), and the Dreams tab shows that dream among
/// the past ones with its change set waiting — nobody clicked "Dream now".
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn the_background_scheduler_dreams_a_due_project_on_its_own() {
    let work = tempfile::tempdir().expect("temp dir");
    let (home, memory) = messy_home(work.path());
    let project = home.join("projects").join(PROJECT);
    for i in 0..4 {
        let session = format!("{i:08}-7c1d-4e2f-9a3b-5c6d7e8f9a0b");
        fs::write(
            project.join(format!("{session}.jsonl")),
            format!(
                "{}\n",
                json!({"type": "user", "sessionId": session, "cwd": "/home/ada/shop",
                       "message": {"role": "user", "content": "fix the checkout"}})
            ),
        )
        .expect("transcript");
    }
    let engram_home = work.path().join("engram-home");
    fs::create_dir_all(&engram_home).expect("engram home");
    fs::write(
        engram_home.join("config.toml"),
        format!(
            "[dream]\ncheck_every = \"3s\"\n\n[dream.projects.\"{PROJECT}\"]\nenabled = true\n"
        ),
    )
    .expect("config");
    assert!(!memory.join(".consolidate-lock").exists());

    let driver = TauriDriver::start(work.path());
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;
    open_dreams_tab(&client).await;
    let dreamt = "[data-testid='past-dreams'] li[data-status='completed']";
    wait_for(&client, dreamt).await;
    let waiting = text_of(&client, "[data-testid='sets-waiting']").await;
    assert!(!waiting.is_empty(), "its changes wait for review");
    assert!(
        memory.join(".consolidate-lock").is_file(),
        "the background dream took and completed Claude Code's lock"
    );
    let scheduler = text_of(&client, "[data-testid='scheduler-words']").await;
    assert!(
        scheduler.contains("Next background check"),
        "the running scheduler says when it looks next: {scheduler}"
    );
    screenshot(&client, "dreams-background.png").await;
    let _ = client.close().await;
}
