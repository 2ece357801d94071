//! Writers racing on one memory dir, as real processes: two `engram remember` at once, and a
//! person (or Claude Code) editing `MEMORY.md` while `remember` runs. Every write by either side
//! must be on disk afterwards: the index is a shared file, merged, never overwritten.

use std::fs;
use std::process::{Child, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::support::{exit_code, stderr, Sandbox};

fn remember(s: &Sandbox, dir: &str, name: &str) -> Child {
    let file = format!("project_{name}.md");
    s.command(&[
        "remember",
        "--type",
        "project",
        "--name",
        name,
        "--description",
        &format!("about {name}"),
        "--file",
        &file,
        "--body",
        "a fact",
        "--memory-dir",
        dir,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start engram remember")
}

fn wait_ok(child: Child) {
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(0),
        "remember failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn two_remember_processes_started_together_both_keep_their_index_line() {
    let s = Sandbox::in_project("race").with_engram_home();
    for round in 0..50 {
        let mem = s.root().join(format!("mem{round}"));
        fs::create_dir_all(&mem).expect("mkdir");
        fs::write(mem.join("MEMORY.md"), "# Memory\n\n").expect("seed index");
        let dir = mem.to_string_lossy().into_owned();
        let (a, b) = (remember(&s, &dir, "alpha"), remember(&s, &dir, "beta"));
        wait_ok(a);
        wait_ok(b);
        let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
        for file in ["project_alpha.md", "project_beta.md"] {
            assert!(
                index.contains(&format!("({file})")),
                "round {round}: the index lost {file}:\n{index}"
            );
            assert!(mem.join(file).is_file(), "round {round}: {file} missing");
        }
    }
}

#[test]
fn a_line_written_by_hand_while_remember_runs_is_kept() {
    let s = Sandbox::in_project("hand").with_engram_home();
    for round in 0..20 {
        let mem = s.root().join(format!("mem{round}"));
        fs::create_dir_all(&mem).expect("mkdir");
        fs::write(mem.join("MEMORY.md"), "# Memory\n\n").expect("seed index");
        let dir = mem.to_string_lossy().into_owned();
        let child = remember(&s, &dir, "engram");
        // Claude Code edits the index 0–30 ms after remember starts, as a person would.
        thread::sleep(Duration::from_millis(round * 3 / 2));
        let hand = "- [By hand](by_hand.md) \u{2014} written meanwhile\n";
        let mut index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
        index.push_str(hand);
        let temp = mem.join(".MEMORY.md.hand.tmp");
        fs::write(&temp, &index).expect("write temp");
        fs::rename(&temp, mem.join("MEMORY.md")).expect("rename");
        wait_ok(child);
        let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
        assert!(
            index.contains("(by_hand.md)"),
            "round {round}: the hand-written line was lost:\n{index}"
        );
        // Remember's own line is not asserted: the hand above reads, then renames without any
        // lock, so it may itself overwrite a line that landed in between — what Engram
        // guarantees is that it never does that to others.
        assert!(mem.join("project_engram.md").is_file(), "round {round}");
    }
}

#[cfg(unix)]
#[test]
fn a_remember_whose_topic_file_cannot_land_leaves_the_index_alone() {
    let s = Sandbox::in_project("failed").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mkdir");
    fs::write(mem.join("MEMORY.md"), "# Memory\n\n").expect("seed index");
    // A parent that is a dangling symlink: the topic file cannot be written.
    std::os::unix::fs::symlink(s.root().join("nowhere"), mem.join("sub")).expect("symlink");
    let out = s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "Lost",
        "--description",
        "never lands",
        "--file",
        "sub/project_lost.md",
        "--body",
        "x",
        "--memory-dir",
        &mem.to_string_lossy(),
    ]);
    assert_ne!(exit_code(&out), 0, "the write failed: {}", stderr(&out));
    assert_eq!(
        fs::read_to_string(mem.join("MEMORY.md")).expect("index"),
        "# Memory\n\n",
        "no line may point at a file that does not exist"
    );
}

#[test]
fn remember_refuses_file_names_an_index_link_cannot_carry_and_lint_fix_stays_idempotent() {
    let s = Sandbox::in_project("names").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mkdir");
    fs::write(mem.join("MEMORY.md"), "# Memory\n\n").expect("seed index");
    let dir = mem.to_string_lossy().into_owned();
    for name in [
        "my notes.md",
        "a(b).md",
        "#k.md",
        "x<y>.md",
        "line\nbreak.md",
        "cr\rx.md",
        "[t].md",
    ] {
        let out = s.run(&[
            "remember",
            "--type",
            "project",
            "--name",
            "N",
            "--description",
            "d",
            "--file",
            name,
            "--body",
            "b",
            "--memory-dir",
            &dir,
        ]);
        assert_eq!(
            exit_code(&out),
            2,
            "{name:?} must be refused: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("index link"),
            "{name:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        fs::read_to_string(mem.join("MEMORY.md")).expect("index"),
        "# Memory\n\n",
        "nothing was written"
    );
    let files: Vec<_> = fs::read_dir(&mem).expect("list").flatten().collect();
    assert_eq!(files.len(), 1, "only MEMORY.md");

    // A safe name, then lint --fix twice: the second finds nothing to do.
    let out = s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "N",
        "--description",
        "d",
        "--file",
        "notes-2026_v1.md",
        "--body",
        "b",
        "--memory-dir",
        &dir,
    ]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    s.run(&["lint", "--fix", "--memory-dir", &dir]);
    let once = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
    s.run(&["lint", "--fix", "--memory-dir", &dir]);
    assert_eq!(
        fs::read_to_string(mem.join("MEMORY.md")).expect("index"),
        once
    );
}

#[cfg(unix)]
#[test]
fn engram_log_never_appends_through_a_symlink_leading_out_of_the_memory_dir() {
    let s = Sandbox::in_project("logs").with_engram_home();
    let outside = s.root().join("outside");
    fs::create_dir_all(&outside).expect("outside");
    for (name, link_logs) in [("dir", true), ("file", false)] {
        let mem = s.root().join(format!("mem-{name}"));
        fs::create_dir_all(&mem).expect("mkdir");
        let dir = mem.to_string_lossy().into_owned();
        // Where today's log would go, found by writing one in a scratch dir first.
        if link_logs {
            std::os::unix::fs::symlink(&outside, mem.join("logs")).expect("symlink logs/");
        } else {
            let scratch = s.root().join("scratch");
            let out = s.run(&["log", "probe", "--memory-dir", &scratch.to_string_lossy()]);
            assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
            let day = walk(&scratch.join("logs"));
            let rel = day.strip_prefix(&scratch).expect("inside").to_path_buf();
            fs::create_dir_all(mem.join(&rel).parent().expect("parent")).expect("mkdir");
            std::os::unix::fs::symlink(outside.join("victim.md"), mem.join(&rel))
                .expect("symlink day");
            fs::write(outside.join("victim.md"), "untouched\n").expect("victim");
        }
        let out = s.run(&["log", "shipped", "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{name}: refused: {}", stderr(&out));
        assert!(stderr(&out).contains("outside"), "{name}: {}", stderr(&out));
    }
    assert_eq!(
        fs::read_to_string(outside.join("victim.md")).expect("victim"),
        "untouched\n"
    );
    assert!(
        fs::read_dir(&outside).expect("list").count() == 1,
        "nothing created outside"
    );
}

/// The one file under `dir` (a day's log).
fn walk(dir: &std::path::Path) -> std::path::PathBuf {
    let mut at = dir.to_path_buf();
    while at.is_dir() {
        at = fs::read_dir(&at)
            .expect("list")
            .flatten()
            .next()
            .expect("one entry")
            .path();
    }
    at
}

#[test]
fn an_index_description_cannot_hide_other_entries_and_lint_names_a_comment() {
    let s = Sandbox::in_project("comments").with_engram_home();
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy().into_owned();
    for (name, description) in [("a", "<!-- hide"), ("b", "between"), ("c", "end -->")] {
        let out = s.run(&[
            "remember",
            "--type",
            "project",
            "--name",
            name,
            "--description",
            description,
            "--file",
            &format!("project_{name}.md"),
            "--body",
            "x",
            "--memory-dir",
            &dir,
        ]);
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    }
    let index = s.json(&["index", "--memory-dir", &dir]);
    assert_eq!(
        index["entries"].as_array().map(Vec::len),
        Some(3),
        "{index}"
    );
    // A hand-written comment marker is named.
    let text = fs::read_to_string(mem.join("MEMORY.md")).expect("index") + "<!-- hidden -->\n";
    fs::write(mem.join("MEMORY.md"), text).expect("write");
    let report = s.json_with_code(&["lint", "--memory-dir", &dir], 0);
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "index-comment"),
        "{report}"
    );
}

#[test]
fn lint_names_what_it_cannot_read_instead_of_saying_nothing() {
    let s = Sandbox::in_project("unreadable").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mkdir");
    let dir = mem.to_string_lossy().into_owned();
    fs::write(
        mem.join("MEMORY.md"),
        b"- [A](a.md) \xe2\x80 broken\n".as_slice(),
    )
    .expect("index");
    fs::write(
        mem.join("a.md"),
        b"---\nname: A\ndescription: a\ntype: user\n---\n\xff\n".as_slice(),
    )
    .expect("topic");
    let report = s.json_with_code(&["lint", "--memory-dir", &dir], 1);
    let unreadable: Vec<(String, Value)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "unreadable")
        .map(|f| {
            (
                f["file"].as_str().unwrap_or_default().to_owned(),
                f["line"].clone(),
            )
        })
        .collect();
    assert_eq!(
        unreadable,
        vec![
            ("MEMORY.md".to_owned(), Value::from(1)),
            ("a.md".to_owned(), Value::from(6))
        ],
        "{report}"
    );
}

#[test]
fn an_explicit_memory_dir_that_does_not_exist_is_named_as_missing() {
    let s = Sandbox::in_project("typo").with_engram_home();
    let missing = s.root().join("no-such-dir");
    let dir = missing.to_string_lossy().into_owned();
    for command in [
        &["scan"][..],
        &["index"],
        &["lint"],
        &["history"],
        &["show", "a.md"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--memory-dir", dir.as_str()]);
        let out = s.run(&args);
        assert_eq!(exit_code(&out), 2, "{command:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("no-such-dir: not found"),
            "{command:?}: {}",
            stderr(&out)
        );
    }
    assert!(!missing.exists(), "reading creates nothing");
}

#[cfg(unix)]
#[test]
fn show_names_a_symlink_loop_as_a_loop() {
    let s = Sandbox::in_project("loop").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mkdir");
    std::os::unix::fs::symlink(mem.join("b.md"), mem.join("a.md")).expect("a -> b");
    std::os::unix::fs::symlink(mem.join("a.md"), mem.join("b.md")).expect("b -> a");
    let out = s.run(&["show", "a.md", "--memory-dir", &mem.to_string_lossy()]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("loop"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("outside"), "{}", stderr(&out));
}

#[test]
fn remember_refuses_a_secret_in_team_memory_and_warns_about_one_elsewhere() {
    let s = Sandbox::in_project("secrets").with_engram_home();
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy().into_owned();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let out = s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "CI",
        "--description",
        "ci token",
        "--file",
        "team/ci.md",
        "--body",
        &format!("use {token}"),
        "--memory-dir",
        &dir,
    ]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("team memory is shared"),
        "{}",
        stderr(&out)
    );
    assert!(!mem.join("team/ci.md").exists(), "nothing written");

    let key = format!("sk-ant-api03-{}AA", &"aB3_x-Yz".repeat(12)[..93]);
    let out = s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "Key",
        "--description",
        &format!("key {key}"),
        "--file",
        "project_key.md",
        "--body",
        "b",
        "--memory-dir",
        &dir,
        "--json",
    ]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("MEMORY.md"),
        "the warning says where it ends up: {}",
        stderr(&out)
    );
    let v: Value = serde_json::from_str(&crate::support::stdout(&out)).expect("json");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{v}");
}

#[test]
fn remember_refuses_team_keys_in_the_forms_formats_9_rejects() {
    let s = Sandbox::in_project("team-keys").with_engram_home();
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy().into_owned();
    for key in [
        "team/..%2fescape.md",
        "team/%2e%2e/escape.md",
        "team/\u{ff0e}\u{ff0e}/escape.md",
        "team/a\u{ff0f}b.md",
        "team/bell\u{7}.md",
    ] {
        let out = s.run(&[
            "remember",
            "--type",
            "project",
            "--name",
            "T",
            "--description",
            "d",
            "--file",
            key,
            "--body",
            "b",
            "--memory-dir",
            &dir,
        ]);
        assert_eq!(exit_code(&out), 2, "{key:?}: {}", stderr(&out));
    }
    assert!(
        !mem.join("team").exists() || fs::read_dir(mem.join("team")).expect("list").count() == 0
    );
    let out = s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "T",
        "--description",
        "d",
        "--file",
        "team/déploiement.md",
        "--body",
        "b",
        "--memory-dir",
        &dir,
    ]);
    assert_eq!(
        exit_code(&out),
        0,
        "a non-ASCII name is fine: {}",
        stderr(&out)
    );
}

#[test]
fn temp_files_a_killed_write_left_are_reported_and_removed_by_lint_fix() {
    let s = Sandbox::in_project("temps").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(mem.join("team")).expect("mkdir");
    let dir = mem.to_string_lossy().into_owned();
    // A writer that is gone (PIDs above the kernel's maximum never run) and one that is alive.
    fs::write(mem.join(".user_x.md.engram-999999999-3.tmp"), "half").expect("stray");
    fs::write(mem.join("team/.t.md.engram-999999998-0.tmp"), "half").expect("stray");
    let live = format!(".busy.md.engram-{}-1.tmp", std::process::id());
    fs::write(mem.join(&live), "being written").expect("live");
    let report = s.json_with_code(&["lint", "--memory-dir", &dir], 0);
    let stray: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "stray-temp-file")
        .map(|f| f["file"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        stray,
        vec![
            ".user_x.md.engram-999999999-3.tmp",
            "team/.t.md.engram-999999998-0.tmp"
        ]
    );
    let fixed = s.json(&["lint", "--fix", "--memory-dir", &dir]);
    assert_eq!(
        fixed["removedTempFiles"].as_array().map(Vec::len),
        Some(2),
        "{fixed}"
    );
    assert!(!mem.join(".user_x.md.engram-999999999-3.tmp").exists());
    assert!(
        mem.join(&live).exists(),
        "a live writer's temp file is left alone"
    );
}
