//! End to end, the Settings screen and the Recall panel: the real `engram-app` binary in a real
//! WebKit window driven through WebDriver (`tauri-driver` in front of `WebKitWebDriver`), talking
//! to a scripted OpenAI-compatible model server on loopback, over a Claude home holding a copy of
//! the real `stockerly` memory dir.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_settings_recall -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: settings-offline, settings, recall,
//! recall-offline.
//!
//! The WebDriver helpers are copies of those in `e2e.rs` (a test file of its own, kept apart so
//! the two can change independently).

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::json;

/// Claude Code files captured from real sessions (read only; copied before use).
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/real");

/// How long the UI may take to show what the test waits for (a cold WebKit start under Xvfb on
/// a loaded two-core machine takes a few seconds).
const UI_TIMEOUT: Duration = Duration::from_secs(30);

const PROJECT: &str = "-home-adrian-stockerly";
const MODEL: &str = "scripted-model";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn settings_pick_and_test_a_model_and_recall_shows_what_would_be_injected() {
    let work = tempfile::tempdir().expect("temp dir");
    let engram_home = work.path().join("engram-home");
    let home = work.path().join("claude-home");
    copy_tree(
        &Path::new(FIXTURES).join("memory/stockerly"),
        &home.join("projects").join(PROJECT).join("memory"),
    );
    // An OpenAI-compatible server: the connection test gets "ok"; recall's selector (the
    // request asking for structured output) gets the memory a model would pick.
    let server = ScriptedServer::handler(|request, _| {
        if request.json().get("response_format").is_some() {
            Reply::json(wire::openai_text(
                r#"{"selected_memories": ["project_decision.md"]}"#,
                612,
                11,
                0,
            ))
        } else {
            Reply::json(wire::openai_text("ok", 21, 1, 0))
        }
    });
    let driver = TauriDriver::start(work.path(), &engram_home);
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;

    // Settings: a fresh install is offline.
    click(&client, "[data-testid='nav-settings']").await;
    let offline = wait_for(&client, "[data-provider='offline'] input").await;
    screenshot(&client, "settings-offline.png").await;
    assert_eq!(
        offline.prop("checked").await.expect("checked").as_deref(),
        Some("true"),
        "offline is the default provider"
    );
    let path = wait_for(&client, "[data-testid='config-path']").await;
    assert_eq!(
        path.text().await.expect("path").trim(),
        engram_home.join("config.toml").display().to_string(),
        "the screen names the file it saves to"
    );

    // Switch to an OpenAI-compatible server on loopback and test it before saving.
    click(&client, "[data-provider='openai']").await;
    replace_text(&client, "input[name='model']", MODEL).await;
    let base_url = format!("{}/v1", server.url());
    replace_text(&client, "input[name='base-url']", &base_url).await;
    wait_for(&client, "[data-testid='key-status']").await;
    click_text(
        &client,
        "[data-testid='llm-settings'] button",
        "Test connection",
    )
    .await;
    let result = wait_for(&client, "[data-testid='connection-result'][data-ok='true']").await;
    scroll_into_view(&client, "[data-testid='connection-result']").await;
    screenshot(&client, "settings.png").await;
    let shown = result.text().await.expect("result text");
    assert!(
        shown.contains("Connected to") && shown.contains("21 in · 1 out tokens"),
        "success shows the model and the tokens: {shown}"
    );
    let tested = server.requests();
    assert_eq!(tested.len(), 1, "one request per test");
    assert_eq!(tested[0].path, "/v1/chat/completions");
    assert_eq!(
        tested[0].json()["model"],
        MODEL,
        "the values on screen, unsaved"
    );
    assert!(
        !engram_home.join("config.toml").exists(),
        "testing saves nothing"
    );

    // Save: config.toml now names the provider, model and base URL, and no key.
    click_text(
        &client,
        "[data-testid='llm-settings'] footer button",
        "Save",
    )
    .await;
    wait_for(&client, "[data-testid='llm-settings'] .done").await;
    let config = wait_until(|| fs::read_to_string(engram_home.join("config.toml")).ok()).await;
    assert!(
        config.contains("provider = \"openai\"")
            && config.contains(MODEL)
            && config.contains(&base_url),
        "{config}"
    );

    // Recall in the project: the configured model picks the memory about the currency bug.
    // The sidebar's first section (its label's ellipsis styling hides it from WebDriver's text).
    click(
        &client,
        "nav[aria-label='Sections'] li:first-child > button.section",
    )
    .await;
    click(&client, &format!("tr[data-project='{PROJECT}'] td.project")).await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Recall",
    )
    .await;
    let prompt = wait_for(&client, "textarea[name='prompt']").await;
    wait_for(&client, "[aria-label='Who picks the memories'] label.on").await;
    prompt.click().await.expect("focus the prompt");
    prompt
        .send_keys(
            "The multi-currency bug: execute_trade still hardcodes USD. Fix it before the beta.",
        )
        .await
        .expect("type the prompt");
    let run = format!("{}{}", char::from(Key::Control), char::from(Key::Enter));
    prompt.send_keys(&run).await.expect("Ctrl+Enter");
    let top = wait_for(
        &client,
        ".results li:first-child[data-file='project_decision.md']",
    )
    .await;
    let summary = wait_for(&client, "[data-testid='recall-summary']").await;
    screenshot(&client, "recall.png").await;
    let summary = summary.text().await.expect("summary");
    assert!(
        summary.contains(MODEL) && summary.contains("612 in · 11 out tokens"),
        "the configured model chose, and its tokens are shown: {summary}"
    );
    assert!(
        top.text()
            .await
            .expect("result")
            .contains("selected by scripted-model"),
        "each result says why it was picked"
    );
    let selection = server.requests();
    let asked = &selection.last().expect("the selector's request").body;
    assert!(
        asked.contains("execute_trade still hardcodes USD")
            && asked.contains("project_decision.md"),
        "the selector sees the prompt and the manifest: {asked}"
    );

    // Offline needs no model and finds the same memory by its words.
    click_text(
        &client,
        "[aria-label='Who picks the memories'] label",
        "Offline",
    )
    .await;
    click_text(&client, "[data-testid='recall-panel'] button", "Run").await;
    wait_until_text(
        &client,
        "[data-testid='recall-summary']",
        "model tokens: offline",
    )
    .await;
    let top = wait_for(&client, ".results li:first-child").await;
    assert_eq!(
        top.attr("data-file").await.expect("attr").as_deref(),
        Some("project_decision.md")
    );
    let why = top.text().await.expect("result");
    assert!(
        why.contains("currency") && why.contains("tokens"),
        "the matched words and the cost are shown: {why}"
    );
    screenshot(&client, "recall-offline.png").await;
    assert_eq!(
        server.requests().len(),
        selection.len(),
        "offline asks no model"
    );
    client.close().await.expect("end the session");
}

/// A running `tauri-driver` on free ports, stopped with SIGTERM on drop: SIGKILL would orphan
/// its `WebKitWebDriver`, whose inherited output then keeps the test harness waiting.
struct TauriDriver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl TauriDriver {
    fn start(work: &Path, engram_home: &Path) -> TauriDriver {
        let (port, native_port) = (free_port(), free_port());
        let log = work.join("tauri-driver.log");
        let output = fs::File::create(&log).expect("driver log");
        // The app inherits this environment through tauri-driver and WebKitWebDriver: Engram's
        // own data stays in the test's temp dir, and no provider key or base URL of the
        // machine running the test leaks into what the screen shows.
        let child = Command::new(tauri_driver_binary())
            .env("ENGRAM_HOME", engram_home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_BASE_URL")
            .args(["--port", &port.to_string()])
            .args(["--native-port", &native_port.to_string()])
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("log handle"))
            .stderr(output)
            .spawn()
            .expect("tauri-driver starts (cargo install tauri-driver --locked --version 2.1.0)");
        let driver = TauriDriver { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "tauri-driver did not listen on {port}: {}",
                driver.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        driver
    }

    /// A WebDriver session on a fresh app process reading `claude_home`.
    async fn session(&self, claude_home: &Path) -> Client {
        let capabilities = json!({
            "browserName": "wry",
            "tauri:options": {
                "application": env!("CARGO_BIN_EXE_engram-app"),
                "args": ["--claude-dir", claude_home],
            },
        });
        let serde_json::Value::Object(capabilities) = capabilities else {
            unreachable!("a JSON object literal")
        };
        ClientBuilder::native()
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .unwrap_or_else(|e| panic!("WebDriver session: {e}\n{}", self.log_text()))
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for TauriDriver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `$TAURI_DRIVER`, else `tauri-driver` from PATH, else from `~/.cargo/bin`.
fn tauri_driver_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("TAURI_DRIVER") {
        return PathBuf::from(path);
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("tauri-driver"))
        .find(|candidate| candidate.is_file());
    on_path.unwrap_or_else(|| {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
            .unwrap_or_default();
        home.join("bin/tauri-driver")
    })
}

/// A port nobody listens on right now (the OS picks it; the listener is closed at once).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free local port")
        .port()
}

async fn wait_for(client: &Client, css: &str) -> Element {
    client
        .wait()
        .at_most(UI_TIMEOUT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} did not appear within {UI_TIMEOUT:?}: {e}"))
}

async fn click(client: &Client, css: &str) {
    wait_for(client, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

/// Clicks the first element matching `css` whose text contains `text`.
async fn click_text(client: &Client, css: &str, text: &str) {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        for element in client.find_all(Locator::Css(css)).await.unwrap_or_default() {
            if element.text().await.unwrap_or_default().contains(text) {
                element
                    .click()
                    .await
                    .unwrap_or_else(|e| panic!("click {css} {text:?}: {e}"));
                return;
            }
        }
        if Instant::now() >= deadline {
            let mut seen = Vec::new();
            for element in client.find_all(Locator::Css(css)).await.unwrap_or_default() {
                seen.push(element.text().await.unwrap_or_else(|e| format!("<{e}>")));
            }
            panic!("no {css} with text {text:?} within {UI_TIMEOUT:?}; found {seen:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the element matching `css` shows `text`.
async fn wait_until_text(client: &Client, css: &str, text: &str) {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        if let Ok(element) = client.find(Locator::Css(css)).await {
            if element.text().await.unwrap_or_default().contains(text) {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{css} did not show {text:?} within {UI_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Scrolls the element matching `css` to the bottom of its scroll container, so a screenshot
/// shows it with what is above it.
async fn scroll_into_view(client: &Client, css: &str) {
    client
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'end'})",
            vec![json!(css)],
        )
        .await
        .unwrap_or_else(|e| panic!("scroll to {css}: {e}"));
}

/// Replaces a field's text by typing, as a user would: select all, then type.
async fn replace_text(client: &Client, css: &str, text: &str) {
    let field = wait_for(client, css).await;
    field.click().await.expect("focus the field");
    let select_all = format!("{}a", char::from(Key::Control));
    field.send_keys(&select_all).await.expect("select all");
    field
        .send_keys(&char::from(Key::Backspace).to_string())
        .await
        .expect("clear");
    field.send_keys(text).await.expect("type");
    let value = field
        .prop("value")
        .await
        .expect("value")
        .unwrap_or_default();
    assert_eq!(value, text, "{css} holds what was typed");
}

/// Polls `check` until it returns `Some` (files written by the app land asynchronously).
async fn wait_until<T>(mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "condition not met within {UI_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Saves what the window shows to `<target>/e2e-screenshots/`, once the web fonts are in and
/// two frames have been painted since (WebKit's screenshot is the last painted frame).
async fn screenshot(client: &Client, name: &str) {
    let settled = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             document.fonts.ready.then(() =>
               requestAnimationFrame(() => requestAnimationFrame(() => done(true))));",
            Vec::new(),
        )
        .await;
    assert!(settled.is_ok(), "the page did not settle: {settled:?}");
    let png = client.screenshot().await.expect("screenshot");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("e2e-screenshots");
    fs::create_dir_all(&dir).expect("screenshot dir");
    fs::write(dir.join(name), png).expect("write screenshot");
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}
