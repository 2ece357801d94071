//! What the end-to-end tests share: a `tauri-driver` per test, in its own process group and on
//! its own D-Bus session bus, and WebDriver helpers that wait, click, type and take screenshots
//! the way a user's actions and eyes would.

#![allow(dead_code)] // each test file uses its own subset

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// Claude Code files captured from real sessions (read only; copied before use). Not every test
/// file starts from them (e2e_dreams builds its own messy home).
#[allow(unused_imports)]
pub use memory_engine::testing::fixtures::{copy_tree, REAL_FIXTURES as FIXTURES};

/// How long the UI may take to show what the test waits for: a cold WebKit start under Xvfb
/// on a loaded two-core machine takes a few seconds.
pub const UI_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `tauri-driver` on free ports, in its own process group and on its own D-Bus session
/// bus, one that starts no desktop service on demand (see `session-bus.conf`). The app is
/// single-instance per bus (a second launch hands over to the first and exits),
/// so an app left behind by a failed test must not capture the next test's launch; and on drop
/// the whole group — dbus-run-session, tauri-driver, WebKitWebDriver and the app — gets SIGTERM.
/// (SIGKILL would orphan WebKitWebDriver, whose inherited output then keeps the harness waiting.)
pub struct TauriDriver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl TauriDriver {
    pub fn start(work: &Path) -> TauriDriver {
        TauriDriver::start_with(work, &[])
    }

    /// A driver whose apps also get `env` (a desktop setting such as the GTK theme). Their
    /// Engram home has the first run marked over, as after a user's first start, so the setup
    /// dialog does not cover the screens under test.
    pub fn start_with(work: &Path, env: &[(&str, &str)]) -> TauriDriver {
        let engram_home = work.join("engram-home");
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&engram_home)
            .expect("engram home");
        fs::write(engram_home.join("app-state.json"), r#"{"onboarded": true}"#)
            .expect("first run over");
        TauriDriver::start_first_run(work, env)
    }

    /// A driver whose apps start with no Engram data at all: the first run shows.
    pub fn start_first_run(work: &Path, env: &[(&str, &str)]) -> TauriDriver {
        let (port, native_port) = (free_port(), free_port());
        let log = work.join("tauri-driver.log");
        let output = fs::File::create(&log).expect("driver log");
        // The app inherits this environment through tauri-driver and WebKitWebDriver: Engram's
        // own data (history, remembered window, the demo home) stays in the test's temp dir.
        let child = Command::new("dbus-run-session")
            .arg(concat!(
                "--config-file=",
                env!("CARGO_MANIFEST_DIR"),
                "/tests/support/session-bus.conf"
            ))
            .arg("--")
            .arg(tauri_driver_binary())
            .env("ENGRAM_HOME", work.join("engram-home"))
            // That bus has no accessibility bus to start; GTK need not look for one.
            .env("NO_AT_BRIDGE", "1")
            // No provider key or base URL of the machine running the tests may reach the app.
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_BASE_URL")
            .envs(env.iter().copied())
            .args(["--port", &port.to_string()])
            .args(["--native-port", &native_port.to_string()])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("log handle"))
            .stderr(output)
            .spawn()
            .expect("dbus-run-session and tauri-driver start (cargo install tauri-driver --locked --version 2.1.0)");
        let driver = TauriDriver { child, port, log };
        // tauri-driver listens at once and starts WebKitWebDriver beside it, which on a loaded
        // machine listens a moment later: a session asked for before then fails ("webdriver
        // server did not respond"). Both must listen.
        let deadline = Instant::now() + Duration::from_secs(15);
        for (listener, port) in [("tauri-driver", port), ("WebKitWebDriver", native_port)] {
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "{listener} did not listen on {port}: {}",
                    driver.log_text()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        driver
    }

    /// A WebDriver session on a fresh app process reading `claude_home`.
    pub async fn session(&self, claude_home: &Path) -> Client {
        self.session_through(
            Path::new(env!("CARGO_BIN_EXE_engram-app")),
            &[],
            claude_home,
        )
        .await
    }

    /// A WebDriver session on a fresh app process reading `claude_home`, started through
    /// `launcher` (a program that runs its arguments: `launcher [launcher_args…] engram-app
    /// --claude-dir DIR`), to start the app in an environment a test arranges.
    pub async fn session_through(
        &self,
        launcher: &Path,
        launcher_args: &[&str],
        claude_home: &Path,
    ) -> Client {
        let app = env!("CARGO_BIN_EXE_engram-app");
        let mut args: Vec<serde_json::Value> = launcher_args.iter().map(|a| json!(a)).collect();
        if launcher != Path::new(app) {
            args.push(json!(app));
        }
        args.extend([json!("--claude-dir"), json!(claude_home)]);
        let capabilities = json!({
            "browserName": "wry",
            "tauri:options": { "application": launcher, "args": args },
        });
        let serde_json::Value::Object(capabilities) = capabilities else {
            unreachable!("a JSON object literal")
        };
        let url = format!("http://127.0.0.1:{}", self.port);
        let mut builder = ClientBuilder::native();
        builder.capabilities(capabilities);
        let connect = builder.connect(&url);
        match tokio::time::timeout(UI_TIMEOUT, connect).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => panic!("WebDriver session: {e}\n{}", self.log_text()),
            Err(_) => panic!(
                "no WebDriver session within {UI_TIMEOUT:?}\n{}",
                self.log_text()
            ),
        }
    }

    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for TauriDriver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// `$TAURI_DRIVER`, else `tauri-driver` from PATH, else from `~/.cargo/bin` (where
/// `cargo install` puts it, which is not always on PATH under `make`).
pub fn tauri_driver_binary() -> PathBuf {
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
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free local port")
        .port()
}

pub async fn wait_for(client: &Client, css: &str) -> Element {
    client
        .wait()
        .at_most(UI_TIMEOUT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} did not appear within {UI_TIMEOUT:?}: {e}"))
}

pub async fn click(client: &Client, css: &str) {
    wait_for(client, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

/// Clicks the first element matching `css` whose text contains `text`.
pub async fn click_text(client: &Client, css: &str, text: &str) {
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
pub async fn wait_until_text(client: &Client, css: &str, text: &str) {
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
pub async fn scroll_into_view(client: &Client, css: &str) {
    client
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'end'})",
            vec![json!(css)],
        )
        .await
        .unwrap_or_else(|e| panic!("scroll to {css}: {e}"));
}

/// Replaces a field's text by typing, as a user would: select all, then type.
pub async fn replace_text(client: &Client, css: &str, text: &str) {
    let field = wait_for(client, css).await;
    field.click().await.expect("focus the field");
    let select_all = format!("{}a", char::from(Key::Control));
    field.send_keys(&select_all).await.expect("select all");
    field
        .send_keys(&char::from(Key::Backspace).to_string())
        .await
        .expect("clear");
    // WebDriver types a line break as the Enter key, not as "\n".
    let keys: String = text
        .chars()
        .map(|c| if c == '\n' { char::from(Key::Enter) } else { c })
        .collect();
    field.send_keys(&keys).await.expect("type");
    let value = field
        .prop("value")
        .await
        .expect("value")
        .unwrap_or_default();
    assert_eq!(value, text, "{css} holds what was typed");
}

/// Polls `check` until it returns `Some` (files written by the app land asynchronously).
pub async fn wait_until<T>(mut check: impl FnMut() -> Option<T>) -> T {
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
/// two frames have been painted since (WebKit's screenshot is the last painted frame, which can
/// trail the DOM the assertions just read).
pub async fn screenshot(client: &Client, name: &str) {
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
    // CARGO_TARGET_TMPDIR is `<target dir>/tmp`; screenshots go next to it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("e2e-screenshots");
    fs::create_dir_all(&dir).expect("screenshot dir");
    fs::write(dir.join(name), png).expect("write screenshot");
}

/// The ids of the `engram-app` processes using `engram_home` (this test's own apps only).
pub fn app_processes(engram_home: &Path) -> Vec<u32> {
    let wanted = format!("ENGRAM_HOME={}", engram_home.display());
    let binary = fs::canonicalize(env!("CARGO_BIN_EXE_engram-app")).expect("the app binary");
    let mut pids: Vec<u32> = fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == binary)
                && process_env(*pid)
                    .iter()
                    .any(|(k, v)| format!("{k}={v}") == wanted)
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// The environment a process started with.
pub fn process_env(pid: u32) -> Vec<(String, String)> {
    fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .filter_map(|pair| {
            let pair = String::from_utf8_lossy(pair);
            let (key, value) = pair.split_once('=')?;
            Some((key.to_owned(), value.to_owned()))
        })
        .collect()
}
