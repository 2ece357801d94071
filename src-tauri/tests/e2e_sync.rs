//! End to end, Settings → Sync: the real `engram-app` binary in a real WebKit window driven
//! through WebDriver. This machine and another one (a second Claude home and Engram data dir,
//! driven through the engine) share one person's memory through a bare git remote on disk; both
//! change `deploy.md`. Pull in Settings stages the conflict, Review opens it, Accept takes the
//! other machine's version — then the disk and the status are checked.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_sync -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: sync-conflict, sync-review, sync-accepted.

#![cfg(unix)]

mod support;

use std::fs;
use std::path::Path;

use memory_engine::{Engine, Environment};

use support::*;

const PROJECT: &str = "-home-ada-shop";
const DEPLOY: &str = "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nFly.io\n";

fn engine(home: &Path, claude_home: &Path, engram_home: &Path) -> Engine {
    // Sync finds git on the engine's own PATH (platform::git), as the app's does.
    let env = Environment::empty()
        .with("HOME", home.to_string_lossy())
        .with("PATH", std::env::var("PATH").unwrap_or_default());
    Engine::builder(env)
        .claude_home(claude_home)
        .engram_home(engram_home)
        .build()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn a_pull_with_a_conflict_is_reviewed_and_accepted_from_settings() {
    let work = tempfile::tempdir().expect("temp dir");
    let remote = work.path().join("memory.git");
    assert!(std::process::Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&remote)
        .status()
        .expect("git")
        .success());
    let remote_spec = remote.to_string_lossy().into_owned();

    // The other machine has the project's memory and pushes it.
    let other_home = work.path().join("other");
    let other_memory = other_home
        .join(".claude/projects")
        .join(PROJECT)
        .join("memory");
    fs::create_dir_all(&other_memory).expect("other memory");
    fs::write(other_memory.join("deploy.md"), DEPLOY).expect("deploy");
    let other = engine(
        &other_home,
        &other_home.join(".claude"),
        &other_home.join("engram"),
    );
    other.set_sync_remote(&remote_spec).expect("remote");
    other.sync_push().expect("first push");

    // This machine (the app's homes) pulls it, then both change it.
    let home = work.path().join("claude-home");
    let memory = home.join("projects").join(PROJECT).join("memory");
    fs::create_dir_all(&memory).expect("memory");
    let here = engine(work.path(), &home, &work.path().join("engram-home"));
    here.set_sync_remote(&remote_spec).expect("remote");
    here.sync_pull().expect("first pull");
    assert_eq!(
        fs::read_to_string(memory.join("deploy.md")).ok().as_deref(),
        Some(DEPLOY)
    );
    let ours = DEPLOY.replace("Fly.io", "Fly.io, from the laptop");
    let theirs = DEPLOY.replace("Fly.io", "Fly.io, from the desktop");
    fs::write(memory.join("deploy.md"), &ours).expect("ours");
    fs::write(other_memory.join("deploy.md"), &theirs).expect("theirs");
    other.sync_push().expect("second push");

    let driver = TauriDriver::start(work.path());
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;
    click(&client, "[data-testid='nav-settings']").await;
    wait_for(&client, "[data-testid='sync-settings']").await;
    scroll_into_view(&client, "[data-testid='sync-settings']").await;
    wait_for(&client, "[data-testid='sync-section'][aria-busy='false']").await;
    screenshot(&client, "sync-settings.png").await;
    wait_until_text(&client, "[data-testid='sync-status']", "1 in conflict").await;
    click(&client, "[data-testid='sync-pull']").await;
    wait_until_text(
        &client,
        "[data-testid='sync-report']",
        "1 file changed here and on another machine",
    )
    .await;
    screenshot(&client, "sync-conflict.png").await;
    assert_eq!(
        fs::read_to_string(memory.join("deploy.md")).ok().as_deref(),
        Some(ours.as_str()),
        "nothing changes before review"
    );

    click(&client, "[data-testid='sync-review']").await;
    let review = "[data-testid='review-file'][data-file='deploy.md']";
    wait_until_text(&client, review, "from the desktop").await;
    screenshot(&client, "sync-review.png").await;
    click(&client, &format!("{review} [data-testid='file-accept']")).await;
    wait_for(
        &client,
        ".files [data-file='deploy.md'][data-status='applied']",
    )
    .await;
    assert_eq!(
        fs::read_to_string(memory.join("deploy.md")).ok().as_deref(),
        Some(theirs.as_str()),
        "accepted: the other machine's version"
    );
    click_text(&client, ".crumb", "Settings").await;
    wait_until_text(&client, "[data-testid='sync-status']", "0 in conflict").await;
    screenshot(&client, "sync-accepted.png").await;
}
