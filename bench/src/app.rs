//! The desktop app's cold start and idle memory, measured on the real release app: the time from
//! spawning it to its first painted frame (the window calls `ui_ready` two animation frames after
//! mounting; with `ENGRAM_READY_FILE` set the app creates that file then), and, after it has sat
//! idle, the resident memory of the app process and of its whole process tree (WebKit runs the
//! page in child processes; shared pages are counted in each, so the tree's sum overstates).
//!
//! Without a display, a private Xvfb server is started first (not timed). Each start gets a
//! session bus from `dbus-run-session` (timed: a few ms) and a fresh Engram data dir, reading a
//! copy of the real Claude home fixture.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memory_engine::testing::fixtures::{copy_tree, REAL_FIXTURES};

const STARTS: usize = 5;
const IDLE: Duration = Duration::from_secs(5);

pub fn app_start(corpus: &Path) -> Result<(), String> {
    let Some(app) = crate::built_binary("engram-app", "app start")? else {
        return Ok(());
    };
    let work = corpus.join("app-start");
    let _ = fs::remove_dir_all(&work);
    let claude = work.join("claude-home");
    copy_tree(&Path::new(REAL_FIXTURES).join("claude-home"), &claude);
    let display = Display::ensure()?;
    let mut times = Vec::new();
    let mut memory = None;
    for start in 0..STARTS {
        let ready = work.join(format!("ready-{start}"));
        let home = work.join(format!("engram-home-{start}"));
        let started = Instant::now();
        let mut child = ProcessGroup(
            Command::new("dbus-run-session")
                .arg("--")
                .arg(&app)
                .arg("--claude-dir")
                .arg(&claude)
                .env("DISPLAY", &display.name)
                .env("ENGRAM_HOME", &home)
                .env("ENGRAM_READY_FILE", &ready)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .map_err(|e| format!("dbus-run-session {}: {e}", app.display()))?,
        );
        while !ready.exists() {
            if started.elapsed() > Duration::from_secs(60) {
                return Err("the app never painted (no ready file after 60 s)".into());
            }
            if let Ok(Some(status)) = child.0.try_wait() {
                return Err(format!("the app exited before painting: {status}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        times.push(started.elapsed());
        if start == STARTS - 1 {
            std::thread::sleep(IDLE);
            let app_pid: u32 = fs::read_to_string(&ready)
                .map_err(|e| e.to_string())?
                .trim()
                .parse()
                .map_err(|e| format!("ready file: {e}"))?;
            let tree: u64 = descendants(child.0.id())
                .iter()
                .map(|&pid| status_kib(pid, "VmRSS"))
                .sum();
            memory = Some((
                status_kib(app_pid, "VmRSS"),
                status_kib(app_pid, "RssAnon"),
                status_kib(app_pid, "RssFile"),
                tree,
            ));
        }
        drop(child);
    }
    let p50 = crate::median(&mut times);
    println!();
    println!(
        "app cold start to first paint: p50 {} (min {}, max {}) over {STARTS} starts",
        crate::format_duration(p50),
        crate::format_duration(*times.iter().min().ok_or("no start")?),
        crate::format_duration(*times.iter().max().ok_or("no start")?)
    );
    if let Some((app_kib, anon_kib, file_kib, tree_kib)) = memory {
        println!(
            "app idle RSS after {} s: {} MiB (the app process: {} MiB its own memory, {} MiB mapped \
             files such as the WebKitGTK library); {} MiB summed over its process tree",
            IDLE.as_secs(),
            app_kib / 1024,
            anon_kib / 1024,
            file_kib / 1024,
            tree_kib / 1024
        );
    }
    let _ = fs::remove_dir_all(&work);
    Ok(())
}

/// Ends the whole group (dbus-run-session, the app, its WebKit processes) when dropped.
pub(crate) struct ProcessGroup(pub(crate) Child);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// A display for the app: `$DISPLAY`, else a private Xvfb started here (ended on drop).
pub(crate) struct Display {
    pub(crate) name: String,
    server: Option<Child>,
}

impl Display {
    pub(crate) fn ensure() -> Result<Display, String> {
        if let Ok(name) = std::env::var("DISPLAY") {
            return Ok(Display { name, server: None });
        }
        let number = 90 + std::process::id() % 100;
        let child = Command::new("Xvfb")
            .arg(format!(":{number}"))
            .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("no $DISPLAY and no Xvfb ({e}): scripts/setup.sh --test installs it")
            })?;
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            if Instant::now() > deadline {
                return Err("Xvfb did not start".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Display {
            name: format!(":{number}"),
            server: Some(child),
        })
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(child) = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `pid` and every process under it.
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // After the command's closing parenthesis: state, then the parent's pid.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse().ok());
            if let Some(parent) = parent {
                parents.push((child, parent));
            }
        }
    }
    let mut tree = vec![pid];
    let mut at = 0;
    while at < tree.len() {
        let parent = tree[at];
        tree.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        at += 1;
    }
    tree
}

/// A memory figure of `pid` from `/proc/<pid>/status` (`VmRSS`, `RssAnon`, …) in KiB (0 when
/// gone).
pub(crate) fn status_kib(pid: u32, field: &str) -> u64 {
    let prefix = format!("{field}:");
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
