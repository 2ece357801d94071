//! Crash safety: `engram remember` into a large memory dir is killed with SIGKILL at random
//! points, 200 times. After every kill: each file is entirely old or entirely new (never torn or
//! empty), the index lost no line and points at no file that is gone, history stays readable, a
//! temp file the kill left is reported and removed by `lint --fix` (never a `*.md` Claude Code
//! would load), and running the same command again succeeds.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{exit_code, stderr, Sandbox};
use memory_engine::testing::fixtures::Xorshift;

const KILLS: usize = 200;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).expect("read"),
            )
        })
        .collect()
}

fn topic(i: usize) -> String {
    format!("---\nname: Note {i}\ndescription: note number {i}\ntype: project\n---\nBody of note {i}.\n")
}

#[test]
fn two_hundred_sigkills_of_remember_leave_every_file_whole() {
    let s = Sandbox::in_project("crash").with_engram_home();
    let dir = s.root().join("big");
    fs::create_dir_all(&dir).expect("dir");
    let mut index = String::new();
    for i in 0..2_000 {
        fs::write(dir.join(format!("project_note_{i}.md")), topic(i)).expect("topic");
        index.push_str(&format!(
            "- [Note {i}](project_note_{i}.md) — note number {i}\n"
        ));
    }
    fs::write(dir.join("MEMORY.md"), &index).expect("index");
    let memory_dir = dir.to_string_lossy().into_owned();
    let remember = |n: usize| {
        let name = format!("Crash {n}");
        let description = format!("written while being killed {n}");
        s.command(&[
            "remember",
            "--type",
            "project",
            "--name",
            &name,
            "--description",
            &description,
            "--body",
            "survived",
            "--memory-dir",
            &memory_dir,
        ])
    };
    // How long one takes, unkilled: kills land anywhere in it.
    let started = Instant::now();
    assert_eq!(exit_code(&remember(0).output().expect("run")), 0);
    let typical = started.elapsed();
    let mut rng = Xorshift(0x5eed_c0ffee);
    let (mut killed_mid_run, mut finished) = (0, 0);
    for n in 1..=KILLS {
        let before = files(&dir);
        let mut child = remember(n)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let delay = Duration::from_micros(rng.next_u64() % (typical.as_micros() as u64).max(1));
        std::thread::sleep(delay);
        match child.try_wait().expect("wait") {
            Some(_) => finished += 1,
            None => {
                child.kill().expect("SIGKILL");
                killed_mid_run += 1;
            }
        }
        child.wait().expect("reap");
        let after = files(&dir);
        let new_file = format!("project_crash_{n}.md");
        for (name, bytes) in &after {
            if name.contains(".engram-") {
                continue; // a temp file: checked below
            }
            assert!(!bytes.is_empty(), "kill {n}: {name} is empty");
            match before.get(name) {
                Some(old) if old == bytes => {}
                Some(_) if name == "MEMORY.md" => {
                    let text = String::from_utf8(bytes.clone()).expect("utf-8 index");
                    let old = String::from_utf8(before["MEMORY.md"].clone()).expect("utf-8");
                    assert!(
                        text.starts_with(old.trim_end()),
                        "kill {n}: the index lost or tore a line"
                    );
                    assert!(
                        text.contains(&format!("]({new_file})")),
                        "kill {n}: an index change that is not the new line"
                    );
                    assert!(
                        after.contains_key(&new_file),
                        "kill {n}: the index points at a file that did not land"
                    );
                }
                Some(_) => panic!("kill {n}: {name} changed"),
                None => {
                    assert_eq!(name, &new_file, "kill {n}: an unexpected file {name}");
                    let text = String::from_utf8(bytes.clone()).expect("utf-8 topic");
                    assert!(
                        text.starts_with("---\n") && text.ends_with("survived\n"),
                        "kill {n}: torn topic {text:?}"
                    );
                }
            }
        }
        assert!(
            before
                .keys()
                .all(|k| k.contains(".engram-") || after.contains_key(k)),
            "kill {n}: a file vanished"
        );
        // Temp files a kill left: reported, then removed by lint --fix; never a `*.md` name.
        let temps: Vec<&String> = after.keys().filter(|k| k.contains(".engram-")).collect();
        for temp in &temps {
            assert!(
                !temp.ends_with(".md"),
                "kill {n}: a temp file Claude Code would load: {temp}"
            );
        }
        if !temps.is_empty() {
            let fixed = s.run(&["lint", "--fix", "--memory-dir", &memory_dir]);
            assert!(
                matches!(exit_code(&fixed), 0 | 1),
                "kill {n}: {}",
                stderr(&fixed)
            );
            assert!(
                files(&dir).keys().all(|k| !k.contains(".engram-")),
                "kill {n}: lint --fix left a temp file"
            );
        }
        // Running it again recovers: the memory and its line are there.
        let again = remember(n).output().expect("run again");
        assert_eq!(exit_code(&again), 0, "kill {n}: {}", stderr(&again));
        assert!(fs::read_to_string(dir.join("MEMORY.md"))
            .expect("index")
            .contains(&format!("]({new_file})")));
    }
    let history = s.run(&["history", "--memory-dir", &memory_dir, "--json"]);
    assert_eq!(
        exit_code(&history),
        0,
        "history stays readable: {}",
        stderr(&history)
    );
    let index = fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert_eq!(index.lines().count(), 2_000 + KILLS + 1, "every line, once");
    eprintln!("crash sweep: {KILLS} runs, {killed_mid_run} killed mid-run, {finished} finished first (one unkilled run: {typical:?})");
    // The kill points are spread over a run's measured length; on a loaded machine fewer land
    // mid-run, but a sweep where kills rarely do would prove little.
    assert!(
        killed_mid_run >= KILLS / 4,
        "kills landed mid-run: {killed_mid_run}"
    );
}
