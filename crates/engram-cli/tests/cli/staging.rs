//! `engram changes` over staged sets that are input, not trusted state: a set in Engram's data dir
//! edited to aim at another directory is refused and writes nothing there, whatever it asks.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{exit_code, stderr, stdout, Sandbox};

/// A project memory dir with a relative date to fix, dreamed offline and staged; returns the
/// memory dir and the staged set's id.
fn staged_dream(s: &Sandbox) -> (PathBuf, String) {
    let dir = s.memory_dir();
    fs::create_dir_all(&dir).expect("memory dir");
    fs::write(
        dir.join("MEMORY.md"),
        "- [Deploy](project_deploy.md) \u{2014} how we deploy\n",
    )
    .expect("index");
    fs::write(
        dir.join("project_deploy.md"),
        "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nWe moved to Fly.io yesterday.\n",
    )
    .expect("deploy");
    let outcome = s.json(&["dream", "run", "--force", "--stage"]);
    let id = outcome["changeSet"]
        .as_str()
        .expect("a change set")
        .to_owned();
    (dir, id)
}

fn staged_file(s: &Sandbox, id: &str) -> PathBuf {
    s.engram_home().join("staging").join(format!("{id}.json"))
}

/// One file of a staged set as its JSON holds it.
fn file(name: &str, kind: &str, before: Option<&str>, after: Option<&str>, status: &str) -> Value {
    json!({
        "file": name, "kind": kind, "before": before, "after": after, "reason": "r",
        "diff": "", "protected": false, "sessions": [], "status": status,
        "version": null, "error": null
    })
}

/// Rewrites set `id` as an attacker would: its memory dir is `target`, its files are `files`.
fn tamper(s: &Sandbox, id: &str, target: &Path, files: Vec<Value>) {
    let path = staged_file(s, id);
    let mut set: Value = serde_json::from_slice(&fs::read(&path).expect("set")).expect("json");
    set["memoryDir"] = json!(target);
    set["files"] = Value::Array(files);
    set["status"] = json!("pending");
    fs::write(&path, serde_json::to_vec_pretty(&set).expect("encode")).expect("tamper");
}

#[test]
fn a_staged_set_aimed_at_another_dir_is_refused_and_nothing_lands_there() {
    let s = Sandbox::in_project("tampered").with_engram_home();
    let (dir, id) = staged_dream(&s);
    let original = fs::read(staged_file(&s, &id)).expect("the set as staged");
    let outside = s.root().join("outside");
    fs::create_dir_all(&outside).expect("outside");
    fs::write(outside.join("victim.md"), "keep me\n").expect("victim");
    let ssh = s.home().join(".ssh");

    for target in [&outside, &ssh] {
        // Apply: a delete and an add, each confined to the tampered dir, both refused.
        tamper(
            &s,
            &id,
            target,
            vec![
                file("victim.md", "delete", Some("keep me\n"), None, "pending"),
                file(
                    "authorized_keys",
                    "add",
                    None,
                    Some("ssh-ed25519 AAAA evil\n"),
                    "pending",
                ),
            ],
        );
        let out = s.run(&["changes", "apply", &id]);
        assert_ne!(
            exit_code(&out),
            0,
            "applied into {}: {}",
            target.display(),
            stdout(&out)
        );
        assert!(
            stderr(&out).contains(&target.display().to_string()),
            "the refusal names the set's memory dir: {}",
            stderr(&out)
        );
        // Undo: a file marked applied whose undo would write the attacker's `before`.
        tamper(
            &s,
            &id,
            target,
            vec![file(
                "victim.md",
                "modify",
                Some("evil\n"),
                Some("keep me\n"),
                "applied",
            )],
        );
        let out = s.run(&["changes", "undo", &id]);
        assert_ne!(
            exit_code(&out),
            0,
            "undone in {}: {}",
            target.display(),
            stdout(&out)
        );
        // Reject: a snapshot marker aimed outside is never written.
        tamper(
            &s,
            &id,
            &dir,
            vec![file(
                "project_deploy.md",
                "modify",
                None,
                Some("x\n"),
                "pending",
            )],
        );
        let path = staged_file(&s, &id);
        let mut set: Value = serde_json::from_slice(&fs::read(&path).expect("set")).expect("json");
        set["marker"] =
            json!({"path": target.join("marker.json"), "syncedFrom": "x", "written": false});
        fs::write(&path, serde_json::to_vec(&set).expect("encode")).expect("marker");
        let out = s.run(&["changes", "reject", &id]);
        assert_ne!(exit_code(&out), 0, "marker written: {}", stdout(&out));
    }
    assert_eq!(
        fs::read_to_string(outside.join("victim.md"))
            .ok()
            .as_deref(),
        Some("keep me\n"),
        "nothing deleted or rewritten outside the memory dir"
    );
    assert_eq!(
        fs::read_dir(&outside).expect("outside").count(),
        1,
        "nothing added outside the memory dir"
    );
    assert!(!ssh.exists(), "~/.ssh was not created");

    // The set as staged still applies: its memory dir is the project's.
    fs::write(staged_file(&s, &id), original).expect("restore");
    let applied = s.json(&["changes", "apply", &id]);
    assert_eq!(applied["status"], "applied", "{applied}");
    assert!(!fs::read_to_string(dir.join("project_deploy.md"))
        .expect("deploy")
        .contains("yesterday"));
}

/// `changes apply` that leaves a selected file in conflict (or failed) exits 1, still printing
/// the set; applying only files that landed exits 0.
#[test]
fn an_apply_that_leaves_a_selected_file_in_conflict_exits_1_and_prints_the_set() {
    let s = Sandbox::in_project("apply-conflict").with_engram_home();
    let (dir, id) = staged_dream(&s);
    fs::write(dir.join("project_deploy.md"), "edited by hand\n").expect("edit");
    let out = s.run(&["changes", "apply", &id, "--json"]);
    assert_eq!(exit_code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let set: Value = serde_json::from_slice(&out.stdout).expect("the set is printed");
    let deploy = set["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["file"] == "project_deploy.md")
        .expect("deploy");
    assert_eq!(deploy["status"], "conflict", "{set}");
    assert_eq!(
        fs::read_to_string(dir.join("project_deploy.md")).expect("deploy"),
        "edited by hand\n"
    );
    let human = s.run(&["changes", "apply", &id]);
    assert_eq!(exit_code(&human), 1);
    assert!(stdout(&human).contains("conflict"), "{}", stdout(&human));

    // Rejecting the conflict and applying nothing else that fails: exit 0.
    s.json(&["changes", "reject", &id, "--file", "project_deploy.md"]);
    let out = s.run(&["changes", "apply", &id]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
}

/// Every file and dir under `dir` whose mode lets group or others in, as `path mode`.
#[cfg(unix)]
fn open_to_others(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut open = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = fs::symlink_metadata(&path).expect("stat");
        if meta.permissions().mode() & 0o077 != 0 {
            open.push(format!(
                "{} {:o}",
                path.display(),
                meta.permissions().mode() & 0o777
            ));
        }
        if meta.is_dir() {
            stack.extend(
                fs::read_dir(&path)
                    .expect("list")
                    .map(|e| e.expect("entry").path()),
            );
        }
    }
    open
}

/// Engram's data dir holds every version of every memory (and any secret in one): it is created
/// 0700 with its files 0600, as Claude Code keeps session memory, and an existing one of ours
/// that others could read is tightened on first use. Memory files keep the mode Claude Code
/// gives them.
#[cfg(unix)]
#[test]
fn the_data_dir_is_private_and_memory_files_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| fs::metadata(path).expect("stat").permissions().mode() & 0o777;

    // Created by Engram (the default place under HOME).
    let s = Sandbox::in_project("private-data");
    let (dir, id) = staged_dream(&s);
    s.json(&["changes", "apply", &id]);
    s.json(&[
        "remember",
        "--type",
        "project",
        "--name",
        "Fresh",
        "--description",
        "a new memory",
        "--file",
        "project_fresh.md",
        "--body",
        "a fact",
    ]);
    let data = s.engram_home();
    for sub in ["staging", "history"] {
        assert!(data.join(sub).is_dir(), "{sub} was written");
    }
    assert_eq!(mode(&data), 0o700);
    assert_eq!(
        open_to_others(&data),
        Vec::<String>::new(),
        "everything in it is private"
    );
    // What a plain write there gets under this umask: what Claude Code's own writes get.
    fs::write(dir.join("probe.txt"), "").expect("probe");
    assert_eq!(
        mode(&dir.join("project_fresh.md")),
        mode(&dir.join("probe.txt")),
        "a new memory file as Claude Code writes one"
    );

    // An existing data dir of ours, open to others: tightened; its files keep their mode.
    let s = Sandbox::in_project("private-existing");
    let data = s.engram_home();
    fs::create_dir_all(&data).expect("data dir");
    fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = data.join("config.toml");
    fs::write(&config, "").expect("config");
    fs::set_permissions(&config, fs::Permissions::from_mode(0o644)).expect("chmod");
    staged_dream(&s);
    assert_eq!(mode(&data), 0o700, "tightened");
    assert_eq!(mode(&config), 0o644, "an existing file is left as it was");
}
