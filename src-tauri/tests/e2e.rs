//! End to end: the real `engram-app` binary in a real WebKit window, driven through WebDriver
//! (`tauri-driver` in front of Debian's `WebKitWebDriver`), reading a Claude home built from the
//! real fixtures in a temp dir. What it asserts is what a user sees on screen.
//!
//! Ignored by a plain `cargo test`: it needs a display, a D-Bus session, `tauri-driver` and
//! `WebKitWebDriver`, and `ui/dist` built. `make test` runs it as
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features custom-protocol --test e2e -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: projects, memory view, index, editor,
//! conflict, history, demo banner.

#![cfg(unix)]

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::key::Key;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// Claude Code files captured from real sessions (read only; copied before use).
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/real");

/// How long the UI may take to show what the test waits for: a cold WebKit start under Xvfb
/// on a loaded two-core machine takes a few seconds.
const UI_TIMEOUT: Duration = Duration::from_secs(30);

/// One app at a time: the app is single-instance (a second launch on the same D-Bus session
/// hands over to the first and exits), so the tests of this file take turns.
static ONE_APP_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn projects_view_shows_every_project_with_its_memory() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());

    // A home holding the real transcripts of `/path/to/Demo` plus a real memory dir.
    let home = work.path().join("claude-home");
    copy_tree(&Path::new(FIXTURES).join("claude-home"), &home);
    copy_tree(
        &Path::new(FIXTURES).join("memory/stockerly"),
        &home.join("projects/-path-to-Demo/memory"),
    );
    let memories = fs::read_dir(home.join("projects/-path-to-Demo/memory"))
        .expect("memory dir")
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".md") && name != "MEMORY.md"
        })
        .count();
    assert_eq!(memories, 7, "the stockerly fixture holds 7 topic files");

    let client = driver.session(&home).await;
    let row = wait_for(&client, "tr[data-project='-path-to-Demo']").await;
    // Taken before the assertions, so a failure leaves a picture of what was on screen.
    screenshot(&client, "projects.png").await;
    let row_text = row.text().await.expect("row text");
    assert!(
        row_text.contains("/path/to/Demo") && row_text.contains("Demo"),
        "the row names the project and the path from its transcripts: {row_text:?}"
    );
    let memory_cell = row
        .find(Locator::Css("[data-column='memories']"))
        .await
        .expect("a memories cell");
    assert_eq!(
        memory_cell.text().await.expect("cell text").trim(),
        memories.to_string(),
        "MEMORY.md is the index and must not be counted as a memory"
    );
    let shown_home = wait_for(&client, "[data-testid='claude-home']").await;
    assert_eq!(
        shown_home.text().await.expect("home text").trim(),
        home.display().to_string(),
        "the app reads the home given with --claude-dir, and says so"
    );
    client.close().await.expect("end the session");

    // A project whose index is over Claude Code's 200-line budget: the view strikes out exactly
    // the lines Claude Code never loads.
    let big = home.join("projects/-work-big/memory");
    fs::create_dir_all(&big).expect("big memory dir");
    let mut index = String::from("# Index\n");
    for n in 1..=229 {
        index.push_str(&format!("- [Note {n}](note_{n}.md) — note number {n}\n"));
        fs::write(
            big.join(format!("note_{n}.md")),
            format!("---\nname: Note {n}\ndescription: note number {n}\ntype: reference\n---\nBody {n}.\n"),
        )
        .expect("note");
    }
    fs::write(big.join("MEMORY.md"), &index).expect("big index");
    let client = driver.session(&home).await;
    click(&client, "tr[data-project='-work-big'] td.project").await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Index",
    )
    .await;
    wait_for(&client, "[data-testid='index-warning']").await;
    let struck = client
        .find_all(Locator::Css("[data-testid='index-panel'] .cut-line"))
        .await
        .expect("struck lines");
    assert_eq!(struck.len(), 30, "230 lines, 200 loaded: 30 struck out");
    let first_struck = struck[0].attr("data-line").await.expect("attr");
    assert_eq!(first_struck.as_deref(), Some("201"));
    client
        .execute(
            "document.querySelector('[data-line=\"196\"]').scrollIntoView({block: 'start'})",
            Vec::new(),
        )
        .await
        .expect("scroll to the cut");
    screenshot(&client, "index-over-budget.png").await;
    client.close().await.expect("end the session");

    // An empty home: the view explains what to do instead of showing an empty table.
    let empty = work.path().join("empty-home");
    fs::create_dir_all(&empty).expect("empty home");
    let client = driver.session(&empty).await;
    let notice = wait_for(&client, "main h2").await;
    assert_eq!(
        notice.text().await.expect("heading").trim(),
        "No projects yet"
    );
    let body = client
        .find(Locator::Css("main"))
        .await
        .expect("main")
        .text()
        .await
        .expect("main text");
    assert!(
        body.contains("--claude-dir") && body.contains("CLAUDE_CONFIG_DIR"),
        "the empty state tells how to point Engram elsewhere: {body:?}"
    );
    screenshot(&client, "projects-empty.png").await;
    client.close().await.expect("end the session");
}

/// The stockerly fixture memory dir in the demo project of a home built from the real fixtures.
fn fixture_home(work: &Path) -> (PathBuf, PathBuf) {
    let home = work.join("claude-home");
    copy_tree(&Path::new(FIXTURES).join("claude-home"), &home);
    let memory = home.join("projects/-path-to-Demo/memory");
    copy_tree(&Path::new(FIXTURES).join("memory/stockerly"), &memory);
    (home, memory)
}

const EDITED: &str = "feedback_brutal_honesty.md";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn a_memory_is_edited_watched_protected_from_overwrites_and_reverted() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let (home, memory_dir) = fixture_home(work.path());
    let file = memory_dir.join(EDITED);
    let original = fs::read_to_string(&file).expect("fixture memory");
    let client = driver.session(&home).await;

    // Open the project, then one memory: its rendered body shows.
    // A table row is not a click target for WebDriver; its cell is.
    click(&client, "tr[data-project='-path-to-Demo'] td.project").await;
    wait_for(&client, "[data-testid='memory-pane']").await;
    click(&client, &format!("[data-file='{EDITED}']")).await;
    let rendered = wait_for(
        &client,
        &format!("[data-testid='memory-pane'][data-file='{EDITED}'] [data-testid='rendered']"),
    )
    .await;
    assert!(
        rendered
            .text()
            .await
            .expect("text")
            .contains("Brutal honesty in EVERY interaction"),
        "the body is shown rendered"
    );
    screenshot(&client, "memory-view.png").await;

    // The Index tab of the project.
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Index",
    )
    .await;
    wait_for(&client, "[data-testid='index-panel']").await;
    screenshot(&client, "index.png").await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Memories",
    )
    .await;
    wait_for(
        &client,
        &format!("[data-testid='memory-pane'][data-file='{EDITED}']"),
    )
    .await;

    // Edit description and body, save with Ctrl+S: the file and its index line follow.
    click_text(
        &client,
        "[role='tablist'][aria-label='View'] button",
        "Edit",
    )
    .await;
    wait_for(&client, "[data-testid='editor']").await;
    replace_text(
        &client,
        "input[name='description']",
        "Say what is wrong plainly, including my own mistakes",
    )
    .await;
    replace_text(
        &client,
        "textarea[name='body']",
        "**Rule:** Be blunt.\n\nNo softening.",
    )
    .await;
    screenshot(&client, "editor.png").await;
    click_text(&client, "[data-testid='editor'] footer button", "Save").await;
    wait_for(&client, "[data-testid='rendered']").await;
    let saved = wait_until(|| {
        let text = fs::read_to_string(&file).unwrap_or_default();
        text.contains("No softening.").then_some(text)
    })
    .await;
    assert!(
        saved.contains("description: Say what is wrong plainly, including my own mistakes"),
        "the description was written: {saved}"
    );
    assert!(
        saved.contains("name: Brutal honesty mandate"),
        "other fields kept: {saved}"
    );
    let index = fs::read_to_string(memory_dir.join("MEMORY.md")).expect("index");
    assert!(
        index.contains(&format!(
            "- [Brutal honesty mandate]({EDITED}) — Say what is wrong plainly, including my own mistakes"
        )),
        "the index line follows the description: {index}"
    );

    // A memory written from outside shows up in the list by itself.
    let started = Instant::now();
    fs::write(
        memory_dir.join("project_from_outside.md"),
        "---\nname: Written outside\ndescription: Claude Code wrote this while Engram was open\ntype: project\n---\nHello.\n",
    )
    .expect("outside write");
    wait_for(&client, "[data-file='project_from_outside.md']").await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "an outside change must appear promptly, took {took:?}"
    );

    // A conflicting outside edit while the editor is open: saving must not overwrite it.
    click(&client, &format!("[data-file='{EDITED}']")).await;
    wait_for(
        &client,
        &format!("[data-testid='memory-pane'][data-file='{EDITED}'] [data-testid='rendered']"),
    )
    .await;
    click_text(
        &client,
        "[role='tablist'][aria-label='View'] button",
        "Edit",
    )
    .await;
    wait_for(&client, "[data-testid='editor']").await;
    replace_text(&client, "textarea[name='body']", "My edit, made in Engram.").await;
    let theirs = saved.replace("No softening.", "Claude Code changed this line.");
    fs::write(&file, &theirs).expect("outside edit");
    wait_for(&client, "[data-testid='changed-on-disk']").await;
    click_text(&client, "[data-testid='editor'] footer button", "Save").await;
    let conflict = wait_for(&client, "[data-testid='conflict']").await;
    let shown = conflict.text().await.expect("conflict text");
    assert!(
        shown.contains("Claude Code changed this line.")
            && shown.contains("My edit, made in Engram."),
        "both versions are shown: {shown}"
    );
    assert_eq!(
        fs::read_to_string(&file).expect("file"),
        theirs,
        "the outside edit must not be overwritten by the save"
    );
    screenshot(&client, "conflict.png").await;
    click_text(
        &client,
        "[data-testid='conflict'] footer button",
        "Keep mine",
    )
    .await;
    wait_for(&client, "[data-testid='rendered']").await;
    let kept = wait_until(|| {
        let text = fs::read_to_string(&file).unwrap_or_default();
        text.contains("My edit, made in Engram.").then_some(text)
    })
    .await;
    assert!(
        !kept.contains("Claude Code changed this line."),
        "mine replaced theirs: {kept}"
    );

    // History: revert to the first version, which puts the original file back.
    click_text(
        &client,
        "[role='tablist'][aria-label='View'] button",
        "History",
    )
    .await;
    wait_for(&client, "[data-testid='history'] [data-version]").await;
    let versions = client
        .find_all(Locator::Css("[data-testid='history'] [data-version]"))
        .await
        .expect("versions");
    assert!(
        versions.len() >= 4,
        "original, save, outside edit, keep mine: {}",
        versions.len()
    );
    let oldest = versions.last().expect("an oldest version");
    oldest.click().await.expect("select the oldest version");
    wait_for(&client, "[data-testid='history'] [data-kind='added']").await;
    screenshot(&client, "history.png").await;
    click_text(
        &client,
        "[data-testid='history'] button",
        "Revert to this version",
    )
    .await;
    click_text(&client, "[role='dialog'] button", "Revert").await;
    wait_until(|| (fs::read_to_string(&file).ok()? == original).then_some(())).await;
    client.close().await.expect("end the session");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn without_a_claude_home_the_demo_opens_and_says_so() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let missing = work.path().join("no-claude-here");
    let client = driver.session(&missing).await;

    let banner = wait_for(&client, "[data-testid='demo-banner']").await;
    let text = banner.text().await.expect("banner text");
    assert!(
        text.contains("You're exploring a demo") && text.contains(&missing.display().to_string()),
        "the banner names the missing home: {text}"
    );
    wait_for(&client, "tr[data-project]").await;
    screenshot(&client, "demo.png").await;
    assert!(!missing.exists(), "the missing home is not created");
    client.close().await.expect("end the session");
    drop(driver);

    // The desktop prefers dark: so does the window, with no setting in Engram.
    let dark = TauriDriver::start_with(work.path(), &[("GTK_THEME", "Adwaita:dark")]);
    let client = dark.session(&missing).await;
    wait_for(&client, "tr[data-project]").await;
    let prefers_dark = client
        .execute(
            "return window.matchMedia('(prefers-color-scheme: dark)').matches",
            Vec::new(),
        )
        .await
        .expect("media query");
    assert_eq!(
        prefers_dark,
        json!(true),
        "the window follows the desktop's dark theme"
    );
    screenshot(&client, "demo-dark.png").await;
    client.close().await.expect("end the session");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn twenty_thousand_memories_stay_smooth() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let home = work.path().join("claude-home");
    let memory = home.join("projects/-work-huge/memory");
    fs::create_dir_all(&memory).expect("memory dir");
    const COUNT: usize = 20_000;
    for n in 0..COUNT {
        fs::write(
            memory.join(format!("reference_note_{n:05}.md")),
            format!("---\nname: Note {n:05}\ndescription: reference note number {n}\ntype: reference\n---\nBody {n}.\n"),
        )
        .expect("note");
    }
    let client = driver.session(&home).await;
    click(&client, "tr[data-project='-work-huge'] td.project").await;
    let started = Instant::now();
    wait_for(
        &client,
        "[role='listbox'][aria-label='Memories'] [data-file]",
    )
    .await;
    let listed = started.elapsed();
    let count = wait_for(&client, "[role='tablist'][aria-label='Project'] .count")
        .await
        .text()
        .await
        .expect("count");
    assert_eq!(
        count.trim(),
        COUNT.to_string(),
        "every memory is listed, not Claude Code's 200"
    );

    // Let the background work of opening a project settle first (history baseline, lint):
    // "Live" shows once the watcher runs.
    let watching = Instant::now();
    client
        .wait()
        .at_most(Duration::from_secs(240))
        .for_element(Locator::Css(".live.on"))
        .await
        .expect("the watcher starts");
    eprintln!("20,000 memories: live after {:?} more", watching.elapsed());

    // Time frames at rest, then while scrolling 300 px a frame (a fast wheel), then while
    // jumping through the whole list in 60 frames (dragging the scrollbar).
    let frames = client
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
            const list = document.querySelector("[role='listbox'][aria-label='Memories']");
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
            async function median(steps, move) {
              const times = [];
              let last = await frame();
              for (let step = 1; step <= steps; step++) {
                move(step);
                const now = await frame();
                times.push(now - last);
                last = now;
              }
              times.sort((a, b) => a - b);
              return times[times.length >> 1];
            }
            (async () => {
              const result = {};
              result.rest = await median(30, () => {});
              result.wheel = await median(60, () => (list.scrollTop += 300));
              result.jump = await median(60, (step) =>
                (list.scrollTop = (list.scrollHeight - list.clientHeight) * (step / 60)));
              await frame();
              result.rows = list.querySelectorAll("[data-file]").length;
              result.last = Math.max(...[...list.querySelectorAll("[data-index]")]
                .map((row) => Number(row.dataset.index)));
              // The floor: the same rows, 300 of them, as a plain static list of the same
              // size scrolled natively: no virtualisation, no framework.
              const box = list.getBoundingClientRect();
              const plain = document.createElement("div");
              plain.style.cssText = `position:fixed;left:${box.left}px;top:${box.top}px;` +
                `width:${box.width}px;height:${box.height}px;overflow-y:auto;background:var(--bg)`;
              plain.innerHTML = list.querySelector("[data-index]").parentElement.outerHTML.repeat(300);
              document.body.append(plain);
              result.floor = await median(60, () => (plain.scrollTop += 300));
              plain.remove();
              done(result);
            })();"#,
            Vec::new(),
        )
        .await
        .expect("scroll run");
    let rows = frames["rows"].as_u64().unwrap_or(u64::MAX);
    assert!(rows < 100, "only the rows in view are in the DOM: {rows}");
    assert_eq!(
        frames["last"],
        json!(COUNT - 1),
        "the last memory is reachable at the bottom"
    );
    let median = |name: &str| frames[name].as_f64().unwrap_or(f64::MAX);
    let (rest, wheel, jump, floor) = (
        median("rest"),
        median("wheel"),
        median("jump"),
        median("floor"),
    );
    eprintln!(
        "20,000 memories: listed in {listed:?}; median frame at rest {rest:.1} ms, wheel \
         {wheel:.1} ms, jumping {jump:.1} ms; 300 static rows scrolled natively {floor:.1} ms"
    );
    // Under Xvfb WebKit paints in software, so what a scroll costs here is set by painting, not
    // by the list: the bar is the same rows scrolled natively, with a frame budget for the
    // framework's work on top.
    assert!(
        wheel <= floor * 1.5 + 16.0,
        "scrolling 20,000 memories must cost about what scrolling 300 plain rows costs: \
         {wheel:.1} ms a frame against {floor:.1} ms"
    );
    screenshot(&client, "many-memories.png").await;
    client.close().await.expect("end the session");
}

/// A running `tauri-driver` on free ports, in its own process group and on its own D-Bus session
/// bus. The app is single-instance per bus (a second launch hands over to the first and exits),
/// so an app left behind by a failed test must not capture the next test's launch; and on drop
/// the whole group — dbus-run-session, tauri-driver, WebKitWebDriver and the app — gets SIGTERM.
/// (SIGKILL would orphan WebKitWebDriver, whose inherited output then keeps the harness waiting.)
struct TauriDriver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl TauriDriver {
    fn start(work: &Path) -> TauriDriver {
        TauriDriver::start_with(work, &[])
    }

    /// A driver whose apps also get `env` (a desktop setting such as the GTK theme).
    fn start_with(work: &Path, env: &[(&str, &str)]) -> TauriDriver {
        let (port, native_port) = (free_port(), free_port());
        let log = work.join("tauri-driver.log");
        let output = fs::File::create(&log).expect("driver log");
        // The app inherits this environment through tauri-driver and WebKitWebDriver: Engram's
        // own data (history, remembered window, the demo home) stays in the test's temp dir.
        let child = Command::new("dbus-run-session")
            .arg("--")
            .arg(tauri_driver_binary())
            .env("ENGRAM_HOME", work.join("engram-home"))
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

    fn log_text(&self) -> String {
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
        assert!(
            Instant::now() < deadline,
            "no {css} with text {text:?} within {UI_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
/// two frames have been painted since (WebKit's screenshot is the last painted frame, which can
/// trail the DOM the assertions just read).
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
    // CARGO_TARGET_TMPDIR is `<target dir>/tmp`; screenshots go next to it.
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
