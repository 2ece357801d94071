//! `engram sync`: one person's memory on two machines — two sandboxes, each its own HOME,
//! Claude home and Engram data dir, with one repository checked out at a different path on each
//! (its origin in ssh form on one, https on the other) — through a bare git remote on disk.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{exit_code, stderr, Sandbox};

/// `git ARGS` in `dir`, which must succeed; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A bare repo at `<root>/memory.git`: the person's own sync remote.
fn bare_remote(root: &Path) -> PathBuf {
    let remote = root.join("memory.git");
    git(
        root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &remote.to_string_lossy(),
        ],
    );
    remote
}

/// The paths on the remote's `main`.
fn remote_files(remote: &Path) -> Vec<String> {
    git(remote, &["ls-tree", "-r", "--name-only", "main"])
        .lines()
        .map(str::to_owned)
        .collect()
}

const APP: &str = "projects/github.com+me+app";
const DEPLOY: &str = "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nFly.io\n";
const TESTING: &str =
    "---\nname: Testing\ndescription: how we test\ntype: feedback\n---\nreal database\n";

/// One machine: a sandbox whose project (`work/<dir>`) is a checkout of `me/app` with `origin`
/// set, which Claude Code lists; the sync remote set.
struct Machine {
    sandbox: Sandbox,
    memory: PathBuf,
}

impl Machine {
    fn new(dir: &str, origin: &str, remote: &Path) -> Machine {
        let sandbox = Sandbox::in_project(dir).with_engram_home();
        git(&sandbox.project(), &["init", "-q"]);
        git(&sandbox.project(), &["remote", "add", "origin", origin]);
        sandbox.list_project();
        let memory = sandbox.memory_dir();
        fs::create_dir_all(&memory).expect("memory dir");
        let machine = Machine { sandbox, memory };
        machine.json(&["sync", "remote", "set", &remote.to_string_lossy()]);
        machine
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.memory.join(file);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(path, text).expect("write");
    }

    fn read(&self, file: &str) -> Option<String> {
        fs::read_to_string(self.memory.join(file)).ok()
    }

    /// `engram ARGS --json`, which must exit 0.
    fn json(&self, args: &[&str]) -> Value {
        self.sandbox.json(args)
    }

    /// `engram ARGS`, which must fail with exit 2; its stderr.
    fn refused(&self, args: &[&str]) -> String {
        let out = self.sandbox.run(args);
        assert_eq!(exit_code(&out), 2, "engram {args:?}: {}", stderr(&out));
        stderr(&out)
    }
}

/// Two machines with one repository at different paths, and the remote.
fn two_machines() -> (tempfile::TempDir, PathBuf, Machine, Machine) {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare_remote(tmp.path());
    let laptop = Machine::new("app", "git@github.com:me/app.git", &remote);
    let desktop = Machine::new("src-app", "https://user@github.com/me/app", &remote);
    assert_ne!(laptop.memory, desktop.memory);
    (tmp, remote, laptop, desktop)
}

fn files(report: &Value) -> Vec<&str> {
    report["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f.as_str().expect("file"))
        .collect()
}

#[test]
fn memory_makes_the_round_trip_between_two_machines_keyed_on_the_origin_not_the_path() {
    let (_tmp, remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.write("MEMORY.md", "- [Deploy](deploy.md) — how we deploy\n");
    laptop.write("logs/2026/11/2026-11-27.md", "- deployed\n");
    laptop.write("team/shared.md", DEPLOY);
    laptop.write(".consolidate-lock", "123");
    let agent = laptop
        .sandbox
        .claude()
        .join("agent-memory/reviewer/style.md");
    fs::create_dir_all(agent.parent().expect("parent")).expect("agent dir");
    fs::write(&agent, "tabs\n").expect("agent memory");

    let status = laptop.json(&["sync", "status"]);
    assert_eq!(status["remote"], remote.to_string_lossy().as_ref());
    assert_eq!(status["ahead"], 4, "{status}");
    let app = status["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["identity"] == "github.com/me/app")
        .unwrap_or_else(|| panic!("{status}"));
    assert_eq!(app["memoryDir"], laptop.memory.to_string_lossy().as_ref());
    assert_eq!(app["state"], "local-only");

    let pushed = laptop.json(&["sync", "push"]);
    assert_eq!(files(&pushed).len(), 4, "{pushed}");
    let on_remote = remote_files(&remote);
    for file in [
        "manifest.json",
        &format!("{APP}/deploy.md"),
        &format!("{APP}/MEMORY.md"),
        &format!("{APP}/logs/2026/11/2026-11-27.md"),
        "agent-memory/reviewer/style.md",
    ] {
        assert!(on_remote.iter().any(|f| f == file), "{file}: {on_remote:?}");
    }
    assert!(
        !on_remote
            .iter()
            .any(|f| f.contains("team/") || f.contains(".consolidate-lock")),
        "team memory and dot-files never sync: {on_remote:?}"
    );
    let manifest = git(&remote, &["show", "main:manifest.json"]);
    assert!(
        manifest.contains("\"identity\": \"github.com/me/app\""),
        "{manifest}"
    );

    assert_eq!(desktop.json(&["sync", "status"])["behind"], 4);
    let pulled = desktop.json(&["sync", "pull"]);
    assert_eq!(files(&pulled).len(), 4, "{pulled}");
    assert_eq!(desktop.read("deploy.md").as_deref(), Some(DEPLOY));
    assert_eq!(
        desktop.read("logs/2026/11/2026-11-27.md").as_deref(),
        Some("- deployed\n")
    );
    assert_eq!(
        fs::read_to_string(
            desktop
                .sandbox
                .claude()
                .join("agent-memory/reviewer/style.md")
        )
        .ok(),
        Some("tabs\n".to_owned())
    );
    assert_eq!(desktop.read("team/shared.md"), None);
    let history = desktop.sandbox.json(&[
        "history",
        "deploy.md",
        "--memory-dir",
        &desktop.memory.to_string_lossy(),
    ]);
    assert_eq!(history[0]["actor"], "sync", "{history}");

    // The desktop edits, pushes; the laptop gets it; both end in sync.
    desktop.write(
        "deploy.md",
        &DEPLOY.replace("Fly.io", "Fly.io, two regions"),
    );
    desktop.json(&["sync", "push"]);
    laptop.json(&["sync", "pull"]);
    assert!(laptop
        .read("deploy.md")
        .expect("deploy")
        .contains("two regions"));
    for machine in [&laptop, &desktop] {
        let status = machine.json(&["sync", "status"]);
        assert_eq!(
            (status["ahead"].as_u64(), status["behind"].as_u64()),
            (Some(0), Some(0)),
            "{status}"
        );
        assert_eq!(status["conflicts"], 0);
    }
}

#[test]
fn a_project_only_the_other_machine_has_is_listed_and_kept() {
    let (_tmp, remote, laptop, desktop) = two_machines();
    // A second project on the laptop only: no origin, identity by its path under the home.
    let other = laptop.sandbox.home().join("code/notes");
    fs::create_dir_all(&other).expect("notes dir");
    let key = memory_engine::paths::sanitize_path(&other.to_string_lossy());
    let transcripts = laptop.sandbox.claude().join("projects").join(&key);
    fs::create_dir_all(&transcripts).expect("transcripts");
    let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
        "cwd": other, "sessionId": "s", "message": {"role": "user", "content": "hi"}});
    fs::write(
        transcripts.join("11111111-1111-4111-8111-111111111112.jsonl"),
        format!("{line}\n"),
    )
    .expect("transcript");
    let notes_memory = transcripts.join("memory");
    fs::create_dir_all(&notes_memory).expect("notes memory");
    fs::write(notes_memory.join("idea.md"), TESTING).expect("idea");
    laptop.write("deploy.md", DEPLOY);
    laptop.json(&["sync", "push"]);
    assert!(remote_files(&remote).contains(&"projects/~+code+notes/idea.md".to_owned()));

    desktop.json(&["sync", "pull"]);
    let status = desktop.json(&["sync", "status"]);
    let notes = status["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["identity"] == "~/code/notes")
        .unwrap_or_else(|| panic!("{status}"));
    assert_eq!(notes["state"], "not-on-this-machine");
    assert_eq!(notes["memoryDir"], Value::Null);
    // The desktop's push keeps what it has not seen.
    desktop.write("testing.md", TESTING);
    desktop.json(&["sync", "push"]);
    assert!(remote_files(&remote).contains(&"projects/~+code+notes/idea.md".to_owned()));

    // Mapped by hand on the desktop, the project there gets the laptop's notes.
    let here = desktop.sandbox.root().join("elsewhere/notes");
    fs::create_dir_all(&here).expect("elsewhere");
    let mapped = desktop.json(&["sync", "map", "~/code/notes", &here.to_string_lossy()]);
    assert_eq!(mapped["identity"], "~/code/notes");
    let pulled = desktop.json(&["sync", "pull"]);
    assert_eq!(
        files(&pulled),
        ["projects/~+code+notes/idea.md"],
        "{pulled}"
    );
    let memory = PathBuf::from(mapped["memoryDir"].as_str().expect("memoryDir"));
    assert_eq!(
        fs::read_to_string(memory.join("idea.md")).ok().as_deref(),
        Some(TESTING)
    );
}

#[test]
fn a_file_changed_on_both_machines_waits_for_review_and_the_index_merges_entry_by_entry() {
    let (_tmp, _remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.write("MEMORY.md", "- [Deploy](deploy.md) — how we deploy\n");
    laptop.json(&["sync", "push"]);
    desktop.json(&["sync", "pull"]);

    laptop.write("deploy.md", &DEPLOY.replace("Fly.io", "Fly.io (laptop)"));
    laptop.write("testing.md", TESTING);
    laptop.write(
        "MEMORY.md",
        "- [Deploy](deploy.md) — how we deploy\n- [Testing](testing.md) — how we test\n",
    );
    laptop.json(&["sync", "push"]);
    let desktop_deploy = DEPLOY.replace("Fly.io", "Fly.io (desktop)");
    desktop.write("deploy.md", &desktop_deploy);
    desktop.write("ci.md", TESTING);
    desktop.write(
        "MEMORY.md",
        "- [Deploy](deploy.md) — how we deploy\n- [CI](ci.md) — the CI\n",
    );
    assert_eq!(
        desktop.json(&["sync", "status"])["conflicts"],
        2,
        "deploy.md and MEMORY.md"
    );

    let pulled = desktop.json(&["sync", "pull"]);
    let sets = pulled["conflicts"].as_array().expect("conflicts");
    assert_eq!(sets.len(), 1, "{pulled}");
    assert_eq!(sets[0]["source"], "sync");
    assert_eq!(sets[0]["files"][0]["file"], "deploy.md");
    assert_eq!(
        sets[0]["files"].as_array().map(Vec::len),
        Some(1),
        "{pulled}"
    );
    assert_eq!(
        desktop.read("deploy.md"),
        Some(desktop_deploy.clone()),
        "untouched until accepted"
    );
    let index = desktop.read("MEMORY.md").expect("index");
    assert!(
        index.contains("(testing.md)") && index.contains("(ci.md)"),
        "{index}"
    );
    assert_eq!(desktop.read("testing.md").as_deref(), Some(TESTING));

    // Unreviewed, it is not pushed; the rest is.
    let pushed = desktop.json(&["sync", "push"]);
    let skipped = pushed["skipped"].to_string();
    assert!(
        skipped.contains("deploy.md") && skipped.contains("waits for review"),
        "{pushed}"
    );
    laptop.json(&["sync", "pull"]);
    assert!(laptop
        .read("deploy.md")
        .expect("deploy")
        .contains("(laptop)"));
    assert!(laptop.read("MEMORY.md").expect("index").contains("(ci.md)"));

    // Accepted, theirs lands, and the next push carries it.
    let id = sets[0]["id"].as_str().expect("id");
    desktop.json(&["changes", "apply", id]);
    assert!(desktop
        .read("deploy.md")
        .expect("deploy")
        .contains("(laptop)"));
}

#[test]
fn a_deletion_lands_only_where_the_file_is_unchanged_and_history_brings_it_back() {
    let (_tmp, _remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.write("testing.md", TESTING);
    laptop.json(&["sync", "push"]);
    desktop.json(&["sync", "pull"]);

    fs::remove_file(laptop.memory.join("deploy.md")).expect("rm");
    fs::remove_file(laptop.memory.join("testing.md")).expect("rm");
    laptop.json(&["sync", "push"]);
    let edited = TESTING.replace("real database", "real database, always");
    desktop.write("testing.md", &edited);
    let pulled = desktop.json(&["sync", "pull"]);
    assert_eq!(files(&pulled), [format!("{APP}/deploy.md")], "{pulled}");
    assert_eq!(desktop.read("deploy.md"), None, "unchanged here: deleted");
    assert_eq!(
        desktop.read("testing.md"),
        Some(edited),
        "changed here: kept"
    );
    let sets = pulled["conflicts"].as_array().expect("conflicts");
    assert_eq!(sets[0]["files"][0]["file"], "testing.md", "{pulled}");

    let dir = desktop.memory.to_string_lossy().into_owned();
    let history = desktop
        .sandbox
        .json(&["history", "deploy.md", "--memory-dir", &dir]);
    assert_eq!(history[0]["actor"], "sync", "{history}");
    let before = history[1]["version"]
        .as_str()
        .expect("the version before")
        .to_owned();
    desktop
        .sandbox
        .json(&["revert", &before, "--memory-dir", &dir]);
    assert_eq!(desktop.read("deploy.md").as_deref(), Some(DEPLOY));
}

/// Platforms row 13: a local file whose name Windows cannot hold (made by hand on Linux) is
/// not pushed into the sync repository, named with the rule; the rest is.
#[test]
fn a_file_windows_cannot_hold_is_not_pushed_and_is_named() {
    let (_tmp, remote, laptop, _desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.write("aux.md", DEPLOY);
    let pushed = laptop.json(&["sync", "push"]);
    assert_eq!(files(&pushed), [format!("{APP}/deploy.md")], "{pushed}");
    assert_eq!(
        pushed["skipped"][0]["file"],
        format!("{APP}/aux.md"),
        "{pushed}"
    );
    assert!(
        pushed["skipped"][0]["reason"]
            .as_str()
            .expect("reason")
            .contains("Windows device name"),
        "{pushed}"
    );
    assert!(!remote_files(&remote).iter().any(|f| f.ends_with("aux.md")));
    assert!(laptop.read("aux.md").is_some(), "the local file is kept");
}

/// Platforms row 12: memory the laptop pushed as `Deploy.md` meets a `deploy.md` the desktop
/// wrote itself. On macOS and Windows they are one file, so the pull reports a case conflict
/// and writes neither over the other, and the desktop's push does not put a second spelling on
/// the remote (which keeps the laptop's file).
#[test]
fn a_file_differing_only_in_case_is_a_reported_conflict_both_ways() {
    let (_tmp, remote, laptop, desktop) = two_machines();
    laptop.write("Deploy.md", DEPLOY);
    laptop.json(&["sync", "push"]);
    let ours = "---\nname: deploy\ndescription: desktop notes\ntype: project\n---\nk8s\n";
    desktop.write("deploy.md", ours);
    let pulled = desktop.json(&["sync", "pull"]);
    let reason = skip_reason(&pulled, &format!("{APP}/Deploy.md"));
    assert!(
        reason.contains("case conflict") && reason.contains(&format!("\"{APP}/deploy.md\"")),
        "{reason}"
    );
    assert_eq!(desktop.read("deploy.md").as_deref(), Some(ours));
    assert_eq!(
        desktop.read("Deploy.md"),
        None,
        "no second spelling written"
    );

    let pushed = desktop.json(&["sync", "push"]);
    let reason = skip_reason(&pushed, &format!("{APP}/deploy.md"));
    assert!(reason.contains("case conflict"), "{pushed}");
    let on_remote = remote_files(&remote);
    assert!(
        on_remote.iter().any(|f| f.ends_with("/Deploy.md"))
            && !on_remote.iter().any(|f| f.ends_with("/deploy.md")),
        "{on_remote:?}"
    );
}

/// "Café.md" typed with a composed "é" on one machine and with "e" + a combining accent on the
/// other (as older macOS names are): one file on a Mac, so the same conflict as a case twin.
#[test]
fn a_file_differing_only_in_how_an_accent_is_encoded_is_a_reported_conflict() {
    let composed = "Caf\u{e9}.md";
    let decomposed = "Cafe\u{301}.md";
    let (_tmp, _remote, laptop, desktop) = two_machines();
    laptop.write(composed, DEPLOY);
    let pushed = laptop.json(&["sync", "push"]);
    assert_eq!(files(&pushed), [format!("{APP}/{composed}")], "{pushed}");
    let ours = "---\nname: cafe\ndescription: desktop notes\ntype: project\n---\nespresso\n";
    desktop.write(decomposed, ours);
    let pulled = desktop.json(&["sync", "pull"]);
    let reason = skip_reason(&pulled, &format!("{APP}/{composed}"));
    // Quoted, the combining accent shows as `\u{301}`: the two names tell apart on screen.
    assert!(
        reason.contains("differs only in how an accent is encoded (Unicode normalisation)")
            && reason.contains(&format!("{:?}", format!("{APP}/{decomposed}"))),
        "{reason}"
    );
    assert_eq!(desktop.read(decomposed).as_deref(), Some(ours));
    assert_eq!(desktop.read(composed), None, "no second spelling written");
    // And the push holds the local spelling back, naming it.
    let pushed = desktop.json(&["sync", "push"]);
    skip_reason(&pushed, &format!("{APP}/{decomposed}"));
}

#[test]
fn a_secret_is_never_pushed_and_the_file_is_named() {
    let (_tmp, remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.write(
        "ci.md",
        "ci token ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
    );
    let pushed = laptop.json(&["sync", "push"]);
    assert_eq!(files(&pushed), [format!("{APP}/deploy.md")], "{pushed}");
    assert_eq!(
        pushed["skipped"][0]["file"],
        format!("{APP}/ci.md"),
        "{pushed}"
    );
    assert!(
        pushed["skipped"][0]["reason"]
            .as_str()
            .expect("reason")
            .contains("secret"),
        "{pushed}"
    );
    assert!(!remote_files(&remote).iter().any(|f| f.ends_with("ci.md")));
    assert!(
        !git(&remote, &["log", "-p", "--all"]).contains("ghp_"),
        "the secret is nowhere in the remote's history"
    );
    desktop.json(&["sync", "pull"]);
    assert_eq!(desktop.read("ci.md"), None);
}

/// Why a pull or push `report` skipped `file` (it must have).
fn skip_reason<'a>(report: &'a Value, file: &str) -> &'a str {
    report["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .find(|s| s["file"] == file)
        .unwrap_or_else(|| panic!("{file} not named in: {report}"))["reason"]
        .as_str()
        .expect("reason")
}

/// A clone of `remote` to change it by hand, not through Engram.
fn clone_by_hand(tmp: &Path, remote: &Path) -> PathBuf {
    let scratch = tmp.join("scratch");
    git(
        tmp,
        &[
            "clone",
            "-q",
            &remote.to_string_lossy(),
            &scratch.to_string_lossy(),
        ],
    );
    scratch
}

/// Commits everything in `scratch`, as someone who is not Engram.
fn commit_all(scratch: &Path, message: &str) {
    git(scratch, &["add", "-A"]);
    git(
        scratch,
        &[
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

/// A commit made on the remote by hand: `write` gets the project's folder in a fresh clone, and
/// what it writes is committed and pushed to `main`.
fn commit_by_hand(tmp: &Path, remote: &Path, write: impl FnOnce(&Path)) {
    let scratch = clone_by_hand(tmp, remote);
    write(&scratch.join(APP));
    commit_all(&scratch, "by hand");
    git(&scratch, &["push", "-q", "origin", "HEAD:main"]);
}

/// The incoming side: a secret that reached the remote without Engram (committed by hand, or by
/// a machine with an older build) is never written into a memory dir on pull, and is named.
#[test]
fn a_secret_committed_to_the_remote_by_hand_is_never_written_on_pull() {
    let (tmp, remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.json(&["sync", "push"]);
    commit_by_hand(tmp.path(), &remote, |app| {
        fs::write(
            app.join("ci.md"),
            "ci token ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
        )
        .expect("ci.md");
    });

    let pulled = desktop.json(&["sync", "pull"]);
    assert_eq!(files(&pulled), [format!("{APP}/deploy.md")], "{pulled}");
    let reason = skip_reason(&pulled, &format!("{APP}/ci.md"));
    assert!(
        reason.contains("github-pat") && reason.ends_with("not written"),
        "{reason}"
    );
    assert_eq!(desktop.read("ci.md"), None);
    assert_eq!(desktop.read("deploy.md").as_deref(), Some(DEPLOY));
}

#[test]
fn a_remote_rewritten_by_a_force_push_is_refused_and_named_and_nothing_changes() {
    let (tmp, remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.json(&["sync", "push"]);
    desktop.json(&["sync", "pull"]);
    let synced = git(&remote, &["rev-parse", "main"]).trim().to_owned();

    // Someone rewrites the remote's history: a new root commit, force-pushed.
    let scratch = clone_by_hand(tmp.path(), &remote);
    git(&scratch, &["checkout", "-q", "--orphan", "rewritten"]);
    git(&scratch, &["rm", "-rqf", "."]);
    fs::write(scratch.join("README.md"), "other\n").expect("readme");
    commit_all(&scratch, "rewrite");
    git(
        &scratch,
        &["push", "-q", "--force", "origin", "rewritten:main"],
    );

    desktop.write("deploy.md", &DEPLOY.replace("Fly.io", "Render"));
    let before = desktop.read("deploy.md");
    for verb in ["pull", "push", "status"] {
        let err = desktop.refused(&["sync", verb]);
        assert!(
            err.contains("rewritten") && err.contains(&synced),
            "{verb}: {err}"
        );
        assert!(err.contains("nothing changed"), "{err}");
    }
    assert_eq!(desktop.read("deploy.md"), before);
    assert_eq!(
        git(&remote, &["ls-tree", "-r", "--name-only", "main"]).trim(),
        "README.md",
        "the remote is not pushed over"
    );
}

#[test]
fn an_unreadable_remote_is_a_clear_error_and_nothing_changes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("no-such-remote.git");
    let laptop = Machine::new("app", "git@github.com:me/app.git", &missing);
    laptop.write("deploy.md", DEPLOY);
    for verb in ["pull", "push", "status"] {
        let err = laptop.refused(&["sync", verb]);
        assert!(
            err.contains("cannot be read") && err.contains(&*missing.to_string_lossy()),
            "{verb}: {err}"
        );
    }
    assert_eq!(laptop.read("deploy.md").as_deref(), Some(DEPLOY));
    assert!(!missing.exists());
    // No remote at all says how to set one.
    let fresh = Sandbox::in_project("x").with_engram_home();
    let out = fresh.run(&["sync", "pull"]);
    assert_eq!(exit_code(&out), 2);
    assert!(
        stderr(&out).contains("engram sync remote set"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)] // a symlink out of the memory dir
#[test]
fn a_remote_path_that_would_leave_the_memory_dir_is_refused_and_named() {
    let (tmp, remote, laptop, desktop) = two_machines();
    laptop.write("deploy.md", DEPLOY);
    laptop.json(&["sync", "push"]);
    // A hostile commit: an encoded `../`, and a path through a folder that is a symlink here.
    commit_by_hand(tmp.path(), &remote, |app| {
        fs::write(app.join("%2e%2e%2foutside.md"), "escaped\n").expect("encoded");
        fs::create_dir_all(app.join("evil")).expect("evil");
        fs::write(app.join("evil/x.md"), "through a symlink\n").expect("evil file");
    });
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, desktop.memory.join("evil")).expect("symlink");

    let pulled = desktop.json(&["sync", "pull"]);
    assert_eq!(files(&pulled), [format!("{APP}/deploy.md")], "{pulled}");
    let skipped = pulled["skipped"].to_string();
    assert!(skipped.contains("url-encoded-traversal"), "{pulled}");
    assert!(skipped.contains("symlink-outside-team"), "{pulled}");
    assert!(!desktop
        .memory
        .parent()
        .expect("parent")
        .join("outside.md")
        .exists());
    assert_eq!(
        fs::read_dir(&outside).expect("outside").count(),
        0,
        "nothing written outside"
    );
}
