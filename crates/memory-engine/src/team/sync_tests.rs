//! Team sync against a real bare git repo on the local disk, two Engram homes acting as two
//! teammates.

use super::sync::*;
use crate::engine::Engine;
use crate::environment::Environment;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Mate {
    engine: Engine,
    memory: PathBuf,
}

impl Mate {
    fn new(root: &Path, name: &str, remote: &Path) -> Mate {
        let engine = Engine::builder(
            Environment::empty()
                .with("HOME", root.join(name).to_string_lossy())
                // Sync finds git on the engine's own PATH (platform::git).
                .with("PATH", std::env::var("PATH").unwrap_or_default()),
        )
        .claude_home(root.join(name).join(".claude"))
        .engram_home(root.join(name).join("engram"))
        .build();
        let memory = root.join(name).join("memory");
        fs::create_dir_all(memory.join("team")).expect("team dir");
        engine
            .set_team_remote("proj", &remote.to_string_lossy())
            .expect("remote");
        Mate { engine, memory }
    }

    fn write(&self, key: &str, text: &str) {
        let path = self.memory.join("team").join(key);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(path, text).expect("write");
    }

    fn read(&self, key: &str) -> Option<String> {
        fs::read_to_string(self.memory.join("team").join(key)).ok()
    }

    fn pull(&self) -> SyncReport {
        self.engine.team_pull("proj", &self.memory).expect("pull")
    }

    fn push(&self) -> SyncReport {
        self.engine.team_push("proj", &self.memory).expect("push")
    }

    fn status(&self) -> TeamStatus {
        self.engine
            .team_status("proj", &self.memory)
            .expect("status")
    }
}

fn bare(root: &Path) -> PathBuf {
    let remote = root.join("remote.git");
    let ok = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .expect("git");
    assert!(ok.success());
    remote
}

const DEPLOY: &str = "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nFly.io\n";

#[test]
fn edits_flow_both_ways_a_conflict_is_staged_and_a_secret_never_leaves() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare(tmp.path());
    let (ada, bo) = (
        Mate::new(tmp.path(), "ada", &remote),
        Mate::new(tmp.path(), "bo", &remote),
    );

    // Ada shares a memory; Bo gets it.
    ada.write("deploy.md", DEPLOY);
    ada.write(
        "token.md",
        "ci token ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
    );
    assert_eq!(ada.status().ahead, 2);
    let pushed = ada.push();
    assert_eq!(pushed.files, ["deploy.md"]);
    assert_eq!(pushed.skipped.len(), 1, "{pushed:?}");
    assert!(
        pushed.skipped[0].reason.contains("secret rule"),
        "{pushed:?}"
    );
    assert_eq!(bo.status().behind, 1);
    let pulled = bo.pull();
    assert_eq!(pulled.files, ["team/deploy.md"]);
    assert_eq!(bo.read("deploy.md").as_deref(), Some(DEPLOY));
    assert_eq!(
        bo.read("token.md"),
        None,
        "the secret never reached the remote"
    );
    let history = bo
        .engine
        .history(&bo.memory, Some("team/deploy.md"))
        .expect("history");
    assert_eq!(history[0].actor, crate::actor::Actor::Team);

    // A file the team has, now holding a secret here, is not pushed — and not deleted there.
    bo.write(
        "deploy.md",
        &format!("{DEPLOY}token ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n"),
    );
    let refused = bo.push();
    assert_eq!(refused.skipped.len(), 1, "{refused:?}");
    ada.pull();
    assert_eq!(
        ada.read("deploy.md").as_deref(),
        Some(DEPLOY),
        "the team's copy stays"
    );
    bo.write("deploy.md", DEPLOY);

    // Bo edits and pushes; Ada, unchanged locally, takes it.
    bo.write(
        "deploy.md",
        &DEPLOY.replace("Fly.io", "Fly.io, staging first"),
    );
    bo.push();
    ada.pull();
    assert!(ada
        .read("deploy.md")
        .expect("deploy")
        .contains("staging first"));

    // Both edit the same file: Bo pushes first; Ada's pull stages a conflict, keeps hers.
    bo.write("deploy.md", &DEPLOY.replace("Fly.io", "Render"));
    bo.push();
    let mine = DEPLOY.replace("Fly.io", "Fly.io in two regions");
    ada.write("deploy.md", &mine);
    let err = ada
        .engine
        .team_push("proj", &ada.memory)
        .expect_err("behind");
    assert!(err.to_string().contains("engram team pull"), "{err}");
    assert_eq!(ada.status().conflicts, 1);
    let pulled = ada.pull();
    let conflicts = pulled.conflicts.expect("a staged conflict");
    assert_eq!(conflicts.files.len(), 1);
    assert_eq!(
        conflicts.files[0].change.before.as_deref(),
        Some(mine.as_str()),
        "hers shown as before"
    );
    assert_eq!(
        ada.read("deploy.md").as_deref(),
        Some(mine.as_str()),
        "nothing lost before review"
    );
    // Reviewed: she takes theirs.
    ada.engine
        .apply_staged(&conflicts.id, &[], true, Some(&ada.memory))
        .expect("accept");
    assert!(ada.read("deploy.md").expect("deploy").contains("Render"));
}

/// A teammate's own clone of `remote` (plain git, none of Engram's checks), holding `files`,
/// committed and pushed to `main`.
fn push_raw(root: &Path, remote: &Path, files: &[(&str, &[u8])]) {
    let clone = root.join("raw");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&clone)
            .args(args)
            .status()
            .expect("git");
        assert!(ok.success(), "{args:?}");
    };
    fs::create_dir_all(&clone).expect("dir");
    git(&["init", "-q", "-b", "main"]);
    for (key, content) in files {
        let path = clone.join(key);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(path, content).expect("file");
    }
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=e",
        "-c",
        "user.email=e@e",
        "commit",
        "-q",
        "-m",
        "raw",
    ]);
    git(&["push", "-q", &remote.to_string_lossy(), "main"]);
}

/// Issue #20 item 2, the incoming side: a file under a folder named after a token is not written.
#[test]
fn a_secret_in_an_incoming_path_is_refused_on_pull() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare(tmp.path());
    let pat = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let leaky = format!("{pat}/notes.md");
    push_raw(
        tmp.path(),
        &remote,
        &[(leaky.as_str(), b"plain\n"), ("ok.md", b"fine\n")],
    );
    let mate = Mate::new(tmp.path(), "cy", &remote);
    let pulled = mate.pull();
    assert_eq!(pulled.files, ["team/ok.md"]);
    assert_eq!(pulled.skipped.len(), 1, "{pulled:?}");
    assert_eq!(pulled.skipped[0].file, leaky);
    assert_eq!(
        pulled.skipped[0].reason,
        "its path matches secret rule github-pat: not written"
    );
    assert!(!mate.memory.join("team").join(&pat).exists());
}

#[test]
fn a_hostile_key_from_the_remote_is_refused_on_pull() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare(tmp.path());
    // A teammate's clone pushes a file whose name NFKC-normalises to traversal.
    push_raw(
        tmp.path(),
        &remote,
        &[("\u{FF0E}\u{FF0E}\u{FF0F}x.md", b"x"), ("ok.md", b"fine\n")],
    );
    let mate = Mate::new(tmp.path(), "cy", &remote);
    let pulled = mate.pull();
    assert_eq!(pulled.files, ["team/ok.md"]);
    assert_eq!(pulled.skipped.len(), 1);
    assert!(
        pulled.skipped[0].reason.contains("nfkc-traversal"),
        "{pulled:?}"
    );
}

#[test]
fn a_missing_remote_setting_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let engine = Engine::builder(Environment::empty())
        .engram_home(tmp.path().join("engram"))
        .build();
    let err = engine.team_pull("proj", tmp.path()).expect_err("no remote");
    assert!(err.to_string().contains("engram team remote set"), "{err}");
    assert_eq!(
        parse_remote("../repo.git#team-memory").expect("spec"),
        ("../repo.git".into(), Some("team-memory".into()))
    );
    assert!(parse_remote("--upload-pack=evil").is_err());
}

/// `git ls-tree` of the remote's `main`: the keys it holds.
fn remote_keys(remote: &Path) -> Vec<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(remote)
        .args(["ls-tree", "-r", "--name-only", "main"])
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_teammates_file_differing_only_in_case_is_a_reported_conflict_never_an_overwrite() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare(tmp.path());
    let (ada, bo) = (
        Mate::new(tmp.path(), "ada", &remote),
        Mate::new(tmp.path(), "bo", &remote),
    );
    ada.write("Deploy.md", DEPLOY);
    ada.push();
    // Bo wrote his own `deploy.md` meanwhile: on a Mac the two are one file.
    let bos = "---\nname: deploy\ndescription: bo's notes\ntype: project\n---\nk8s\n";
    bo.write("deploy.md", bos);
    let report = bo.pull();
    let conflict = report
        .skipped
        .iter()
        .find(|s| s.file == "Deploy.md")
        .unwrap_or_else(|| panic!("the case conflict is reported: {report:?}"));
    assert!(
        conflict.reason.contains("\"deploy.md\""),
        "names Bo's file: {}",
        conflict.reason
    );
    assert_eq!(
        bo.read("deploy.md").as_deref(),
        Some(bos),
        "Bo's file untouched"
    );
    let names: Vec<_> = fs::read_dir(bo.memory.join("team"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["deploy.md"], "no second spelling written");

    // Bo's push does not add a second spelling either, and Ada's file stays on the remote.
    let report = bo.push();
    assert!(
        report.skipped.iter().any(|s| s.file == "deploy.md"
            && s.reason.contains("case conflict")
            && s.reason.contains("\"Deploy.md\"")),
        "{report:?}"
    );
    assert_eq!(remote_keys(&remote), ["Deploy.md"]);
}

#[test]
fn two_spellings_on_the_remote_are_both_reported_and_neither_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare(tmp.path());
    // Someone committed both spellings with plain git on a case-sensitive disk.
    let work = tmp.path().join("work");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&work)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .status()
            .expect("git");
        assert!(ok.success(), "git {args:?}");
    };
    fs::create_dir_all(&work).expect("work");
    git(&["init", "-q"]);
    fs::write(work.join("Deploy.md"), DEPLOY).expect("write");
    fs::write(work.join("deploy.md"), "lower\n").expect("write");
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "both"]);
    git(&[
        "push",
        "-q",
        &remote.to_string_lossy(),
        "HEAD:refs/heads/main",
    ]);

    let bo = Mate::new(tmp.path(), "bo", &remote);
    let report = bo.pull();
    for (file, twin) in [("Deploy.md", "deploy.md"), ("deploy.md", "Deploy.md")] {
        let skipped = report
            .skipped
            .iter()
            .find(|s| s.file == file)
            .unwrap_or_else(|| panic!("{file} reported: {report:?}"));
        assert!(
            skipped.reason.contains(&format!("{twin:?}")),
            "{}",
            skipped.reason
        );
    }
    assert_eq!(bo.read("Deploy.md"), None);
    assert_eq!(bo.read("deploy.md"), None);
    assert!(report.files.is_empty(), "{report:?}");
}
