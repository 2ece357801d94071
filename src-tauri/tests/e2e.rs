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

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::json;

use support::*;

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

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn the_window_size_and_the_last_project_are_remembered() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let (home, _) = fixture_home(work.path());

    let client = driver.session(&home).await;
    click(&client, "tr[data-project='-path-to-Demo'] td.project").await;
    wait_for(
        &client,
        "[role='listbox'][aria-label='Memories'] [data-file]",
    )
    .await;
    client
        .set_window_size(1000, 640)
        .await
        .expect("resize the window");
    let resized = client.get_window_size().await.expect("window size");
    // Written once the resizing stops, not only on a clean close: the app may end without one.
    let prefs = work.path().join("engram-home/app-state.json");
    wait_until(|| {
        let saved: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&prefs).ok()?).ok()?;
        (saved["window"] == json!({"width": resized.0, "height": resized.1})).then_some(())
    })
    .await;
    client.close_window().await.expect("close the window");
    let _ = client.close().await;

    let client = driver.session(&home).await;
    wait_for(
        &client,
        "[role='listbox'][aria-label='Memories'] [data-file]",
    )
    .await;
    let heading = wait_for(&client, "#project-title")
        .await
        .text()
        .await
        .expect("title");
    assert_eq!(
        heading.trim(),
        "Demo",
        "the app reopens at the last project"
    );
    assert_eq!(
        client.get_window_size().await.expect("window size"),
        resized,
        "the app reopens at the size it was closed at"
    );
    client.close().await.expect("end the session");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn a_second_launch_hands_over_to_the_running_app_and_exits() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let (home, _) = fixture_home(work.path());
    let client = driver.session(&home).await;
    wait_for(&client, "tr[data-project='-path-to-Demo']").await;

    // Launched as the user would, in the same desktop session as the running app: its
    // environment (display, X authority, session bus, Engram home).
    let engram_home = work.path().join("engram-home");
    let first = app_processes(&engram_home);
    assert_eq!(first.len(), 1, "one app runs: {first:?}");
    let session_env = process_env(first[0]);
    let mut second = std::process::Command::new(env!("CARGO_BIN_EXE_engram-app"))
        .arg("--claude-dir")
        .arg(&home)
        .env_clear()
        .envs(session_env)
        .stdout(std::process::Stdio::null())
        .stderr(fs::File::create(work.path().join("second.log")).expect("log file"))
        .spawn()
        .expect("a second launch");
    let status = wait_until(|| second.try_wait().ok().flatten()).await;
    assert!(
        status.success(),
        "the second launch exits cleanly: {status}\n{}",
        fs::read_to_string(work.path().join("second.log")).unwrap_or_default()
    );
    assert_eq!(
        app_processes(&engram_home),
        first,
        "the first app is still the one running"
    );
    // And it still answers.
    wait_for(&client, "tr[data-project='-path-to-Demo']").await;
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
        "20,000",
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
    // Figures, not assertions: the machines running this are shared and noisy, so a frame-time
    // bar would fail at random. What makes scrolling cheap is asserted above (only the rows in
    // view exist); the frame times are read from this line and reported.
    screenshot(&client, "many-memories.png").await;
    client.close().await.expect("end the session");
}

/// A memory written by a model or a teammate is shown, never run: a `<script>`, an `onerror`
/// handler, raw HTML, `javascript:` and `data:` links in its body render as text or lose their
/// target — in the real window, where running them would matter.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: run through `make test`"]
async fn markdown_with_scripts_and_dangerous_links_is_shown_never_run() {
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let work = tempfile::tempdir().expect("temp dir");
    let driver = TauriDriver::start(work.path());
    let (home, memory_dir) = fixture_home(work.path());
    let hostile = "project_hostile.md";
    fs::write(
        memory_dir.join(hostile),
        "---\nname: Hostile\ndescription: markup that must not run\ntype: project\n---\n\
         Deploy notes <script>window.pwned = 1</script>\n\n\
         <img src=x onerror=\"window.pwned = 2\">\n\n\
         <iframe src=\"javascript:window.pwned = 3\"></iframe>\n\n\
         [the runbook](javascript:window.pwned=4) and [a data link](data:text/html,<script>window.pwned=5</script>)\n\n\
         <a href=\"javascript:window.pwned=6\">raw link</a>\n",
    )
    .expect("hostile memory");
    let client = driver.session(&home).await;
    click(&client, "tr[data-project='-path-to-Demo'] td.project").await;
    wait_for(&client, "[data-testid='memory-pane']").await;
    click(&client, &format!("[data-file='{hostile}']")).await;
    let pane =
        format!("[data-testid='memory-pane'][data-file='{hostile}'] [data-testid='rendered']");
    wait_until_text(&client, &pane, "<script>window.pwned = 1</script>").await;
    wait_until_text(&client, &pane, "<img src=x onerror=").await;
    // Every link left in the body has a harmless target; clicking them runs nothing.
    let links = client
        .find_all(fantoccini::Locator::Css(&format!("{pane} a")))
        .await
        .expect("links");
    for link in &links {
        let href = link.attr("href").await.expect("href").unwrap_or_default();
        let lower = href.to_ascii_lowercase();
        assert!(
            !lower.starts_with("javascript:") && !lower.starts_with("data:"),
            "a dangerous link survived: {href}"
        );
        let _ = link.click().await;
    }
    for selector in ["script", "iframe", "img"] {
        assert!(
            client
                .find_all(fantoccini::Locator::Css(&format!("{pane} {selector}")))
                .await
                .expect("find")
                .is_empty(),
            "a <{selector}> element was created from the memory"
        );
    }
    screenshot(&client, "hostile-markdown.png").await;
    let pwned = client
        .execute("return typeof window.pwned;", vec![])
        .await
        .expect("execute");
    assert_eq!(
        pwned,
        serde_json::json!("undefined"),
        "markup from a memory ran"
    );
}
