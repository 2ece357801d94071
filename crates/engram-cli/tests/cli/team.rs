//! `engram team check`, `engram team` sync through a bare git remote on disk (teammates as
//! separate sandboxes: their own HOME and Engram data), and `engram secrets scan`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{exit_code, stderr, Sandbox};

/// A bare git repo at `<root>/team.git`: the team's remote.
fn bare_remote(root: &Path) -> PathBuf {
    let remote = root.join("team.git");
    let ok = Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&remote)
        .status()
        .expect("git");
    assert!(ok.success());
    remote
}

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

/// The paths on the remote's `main`.
fn remote_files(remote: &Path) -> Vec<String> {
    git(remote, &["ls-tree", "-r", "--name-only", "main"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// One teammate: a sandbox of their own, a memory dir at `<root>/mem` with `team/`, the
/// team remote set.
struct Mate {
    sandbox: Sandbox,
    memory: PathBuf,
}

impl Mate {
    fn new(name: &str, remote: &Path) -> Mate {
        let sandbox = Sandbox::in_project(name).with_engram_home();
        let memory = sandbox.root().join("mem");
        fs::create_dir_all(memory.join("team")).expect("team");
        let mate = Mate { sandbox, memory };
        mate.json(&["team", "remote", "set", &remote.to_string_lossy()]);
        mate
    }

    fn write(&self, key: &str, text: &str) {
        let path = self.memory.join("team").join(key);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(path, text).expect("write");
    }

    fn read(&self, key: &str) -> Option<String> {
        fs::read_to_string(self.memory.join("team").join(key)).ok()
    }

    /// `engram ARGS --memory-dir <mem> --json`, which must exit 0.
    fn json(&self, args: &[&str]) -> Value {
        let dir = self.memory.to_string_lossy().into_owned();
        self.sandbox
            .json(&[args, &["--memory-dir", dir.as_str()]].concat())
    }

    /// The `file`s a pull or push report skipped, with why.
    fn skipped(report: &Value) -> Vec<(String, String)> {
        report["skipped"]
            .as_array()
            .expect("skipped")
            .iter()
            .map(|s| {
                (
                    s["file"].as_str().expect("file").to_owned(),
                    s["reason"].as_str().expect("reason").to_owned(),
                )
            })
            .collect()
    }
}

#[test]
fn team_check_exits_2_naming_the_rule_and_0_for_a_safe_key() {
    let s = Sandbox::in_project("team").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let dir = memory.to_string_lossy().into_owned();
    for (key, rule) in [
        ("%252e%252e%252fx.md", "url-encoded-traversal"),
        ("\u{FF0E}\u{FF0E}/x.md", "nfkc-traversal"),
        ("../x.md", "outside-team"),
        ("a\\b.md", "backslash"),
        ("/etc/passwd", "absolute"),
    ] {
        let out = s.run(&["team", "check", key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key}");
        assert!(stderr(&out).contains(rule), "{key}: {}", stderr(&out));
    }
    let ok = s.run(&["team", "check", "notes/deploy.md", "--memory-dir", &dir]);
    assert_eq!(exit_code(&ok), 0, "{}", stderr(&ok));
}

/// Issue #20 item 12: keys that reach `../` only through NFKC and URL-decoding together,
/// overlong UTF-8, and names no file could have were accepted with exit 0.
#[test]
fn team_check_refuses_combined_decodings_overlong_utf8_and_names_no_file_could_have() {
    let s = Sandbox::in_project("team").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let dir = memory.to_string_lossy().into_owned();
    let long_name = format!("{}.md", "n".repeat(252));
    for (key, rule) in [
        (
            "\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF46}x.md"
                .to_owned(),
            "url-encoded-traversal",
        ),
        (
            "%ef%bc%8e%ef%bc%8e%ef%bc%8fx.md".to_owned(),
            "url-encoded-traversal",
        ),
        ("%c0%ae%c0%ae%c0%afx.md".to_owned(), "bad-encoding"),
        (format!("{long_name}.md"), "too-long"),
        (format!("{}x.md", "notes/".repeat(700)), "too-long"),
        ("notes/".to_owned(), "not-a-file-name"),
    ] {
        let out = s.run(&["team", "check", &key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key:.60}: {}", stderr(&out));
        assert!(stderr(&out).contains(rule), "{key:.60}: {}", stderr(&out));
    }
    let ok = s.run(&["team", "check", &long_name, "--memory-dir", &dir]);
    assert_eq!(
        exit_code(&ok),
        0,
        "a 255-byte name is a file: {}",
        stderr(&ok)
    );
}

#[test]
fn secrets_scan_reports_file_line_and_rule_and_never_modifies() {
    let s = Sandbox::in_project("secrets").with_engram_home();
    let dir = s.root().join("scan");
    fs::create_dir_all(dir.join("sub")).expect("dir");
    let leaky = "notes\nkey: sk-ant-api03-Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7Xk9pQ2vL7mZ3wR8tY4nB6AA\n";
    fs::write(dir.join("sub/leak.jsonl"), leaky).expect("leak");
    fs::write(dir.join("clean.md"), "nothing here\n").expect("clean");
    let found = s.json_with_code(&["secrets", "scan", &dir.to_string_lossy()], 1);
    let rows = found.as_array().expect("array");
    assert_eq!(rows.len(), 1, "{found}");
    assert_eq!(rows[0]["line"], 2);
    assert!(rows[0]["file"]
        .as_str()
        .expect("file")
        .ends_with("sub/leak.jsonl"));
    assert!(
        rows[0]["rule"]
            .as_str()
            .expect("rule")
            .contains("anthropic"),
        "{found}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("sub/leak.jsonl")).expect("read"),
        leaky
    );
}

#[test]
fn team_sync_through_a_bare_repo_reports_status_in_the_documented_shape() {
    let s = Sandbox::in_project("sync").with_engram_home();
    let remote = s.root().join("team.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .expect("git");
    assert!(ok.success());
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    fs::write(
        memory.join("team/deploy.md"),
        "---\nname: Deploy\n---\nFly.io\n",
    )
    .expect("file");
    let dir = memory.to_string_lossy().into_owned();
    s.json(&[
        "team",
        "remote",
        "set",
        &remote.to_string_lossy(),
        "--memory-dir",
        &dir,
    ]);
    let before = s.json(&["team", "status", "--memory-dir", &dir]);
    crate::support::assert_has_keys(&before, &["remote", "ahead", "behind", "conflicts"]);
    assert_eq!(before["ahead"], 1);
    let pushed = s.json(&["team", "push", "--memory-dir", &dir]);
    assert_eq!(pushed["files"], serde_json::json!(["deploy.md"]));
    let after = s.json(&["team", "status", "--memory-dir", &dir]);
    assert_eq!(
        (
            after["ahead"].as_u64(),
            after["behind"].as_u64(),
            after["conflicts"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
}

/// Issue #20 item 1: after a pull staged a conflict, `team push` sent the local version over
/// the teammate's. A file whose conflict waits for review is skipped and named, the remote keeps
/// theirs; once the person decides, push works as usual.
#[test]
fn push_skips_a_file_whose_conflict_waits_for_review_until_it_is_decided() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare_remote(tmp.path());
    let (ada, bo) = (Mate::new("ada", &remote), Mate::new("bo", &remote));
    let version = |who: &str| format!("---\nname: Deploy\n---\nFly.io, says {who}\n");
    let on_remote = || git(&remote, &["show", "main:deploy.md"]);
    ada.write("deploy.md", &version("ada 1"));
    ada.json(&["team", "push"]);
    bo.json(&["team", "pull"]);

    // Bo changes it and pushes; Ada changed it too: her pull stages the conflict.
    let conflict = |theirs: &str, mine: Option<&str>| -> String {
        bo.write("deploy.md", &version(theirs));
        bo.json(&["team", "push"]);
        match mine {
            Some(mine) => ada.write("deploy.md", &version(mine)),
            None => fs::remove_file(ada.memory.join("team/deploy.md")).expect("delete"),
        }
        let pulled = ada.json(&["team", "pull"]);
        pulled["conflicts"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("a staged conflict: {pulled}"))
            .to_owned()
    };
    let id = conflict("bo 1", Some("ada 2"));
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(pushed["files"], serde_json::json!([]), "{pushed}");
    assert_eq!(
        Mate::skipped(&pushed),
        [(
            "deploy.md".to_owned(),
            format!(
                "a conflict with a teammate's change waits for review (engram changes show \
                 {id}): not pushed"
            )
        )]
    );
    assert_eq!(on_remote(), version("bo 1"), "the teammate's version stays");
    let status = ada.json(&["team", "status"]);
    assert_eq!(
        (status["ahead"].as_u64(), status["conflicts"].as_u64()),
        (Some(0), Some(1)),
        "a held file is a conflict, not something a push would send: {status}"
    );
    bo.json(&["team", "pull"]);
    assert_eq!(bo.read("deploy.md"), Some(version("bo 1")));
    assert_eq!(
        ada.read("deploy.md"),
        Some(version("ada 2")),
        "hers kept too"
    );

    // Rejecting theirs keeps hers: now it is pushed.
    ada.json(&["changes", "reject", &id]);
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(
        pushed["files"],
        serde_json::json!(["deploy.md"]),
        "{pushed}"
    );
    assert_eq!(on_remote(), version("ada 2"));
    let status = ada.json(&["team", "status"]);
    assert_eq!(
        (status["ahead"].as_u64(), status["conflicts"].as_u64()),
        (Some(0), Some(0)),
        "{status}"
    );

    // Accepting theirs: nothing of hers to push, nothing skipped.
    bo.json(&["team", "pull"]);
    let id = conflict("bo 2", Some("ada 3"));
    ada.json(&["changes", "apply", &id]);
    assert_eq!(ada.read("deploy.md"), Some(version("bo 2")));
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(
        (pushed["files"].clone(), Mate::skipped(&pushed)),
        (serde_json::json!([]), vec![]),
        "{pushed}"
    );
    assert_eq!(on_remote(), version("bo 2"));

    // Deleted here while the teammate edited it: the push does not delete theirs either.
    bo.json(&["team", "pull"]);
    let id = conflict("bo 3", None);
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(Mate::skipped(&pushed).len(), 1, "{pushed}");
    assert!(Mate::skipped(&pushed)[0].1.contains(&id), "{pushed}");
    assert_eq!(on_remote(), version("bo 3"), "not deleted on the remote");
}

/// Issue #20 item 2: `remember --memory-dir <memory>/team --file AKIA….md` was accepted and a
/// folder named `ghp_…/` was pushed: a secret in a path is refused on write, never pushed, and
/// warned about in private memory.
#[test]
fn a_secret_in_a_file_or_folder_name_never_reaches_the_team_remote() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare_remote(tmp.path());
    let ada = Mate::new("ada", &remote);
    let aws = "AKIA".to_string() + "Z7QWERTYUIOP3XMB";
    let pat = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let file = format!("{aws}.md");
    let remember = |memory_dir: &Path, file: &str| {
        ada.sandbox.run(&[
            "remember",
            "--type",
            "reference",
            "--name",
            "AWS account",
            "--description",
            "which account deploys",
            "--file",
            file,
            "--body",
            "the deploy account",
            "--memory-dir",
            &memory_dir.to_string_lossy(),
        ])
    };
    // Into the team folder itself, and into team/ of the memory dir: refused, nothing written.
    for (dir, key) in [
        (ada.memory.join("team"), file.clone()),
        (ada.memory.clone(), format!("team/{file}")),
    ] {
        let out = remember(&dir, &key);
        assert_eq!(exit_code(&out), 2, "{key}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("path looks like a credential (aws-access-token)"),
            "{}",
            stderr(&out)
        );
    }
    // The team folder as the memory dir is team memory for what is inside a file too.
    let out = ada.sandbox.run(&[
        "remember",
        "--type",
        "reference",
        "--name",
        "CI",
        "--description",
        "the CI token",
        "--body",
        &format!("token {pat}"),
        "--memory-dir",
        &ada.memory.join("team").to_string_lossy(),
    ]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("team memory is shared"),
        "{}",
        stderr(&out)
    );
    assert!(!ada.memory.join("team").join(&file).exists());
    assert!(!ada.memory.join("team/MEMORY.md").exists(), "no index line");
    // In private memory: written, with a warning naming the rule.
    let out = remember(&ada.memory, &file);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("path looks like a credential (aws-access-token)"),
        "{}",
        stderr(&out)
    );

    // Written by hand into team/: a folder named after a token, and a file.
    ada.write(&format!("{pat}/notes.md"), "---\nname: Notes\n---\nplain\n");
    ada.write(&file, "---\nname: AWS\n---\nplain\n");
    ada.write("deploy.md", "---\nname: Deploy\n---\nFly.io\n");
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(
        pushed["files"],
        serde_json::json!(["deploy.md"]),
        "{pushed}"
    );
    let mut skipped = Mate::skipped(&pushed);
    skipped.sort();
    assert_eq!(
        skipped,
        [
            (
                file.clone(),
                "its path matches secret rule aws-access-token: not pushed".to_owned()
            ),
            (
                format!("{pat}/notes.md"),
                "its path matches secret rule github-pat: not pushed".to_owned()
            ),
        ]
    );
    assert_eq!(
        remote_files(&remote),
        ["deploy.md"],
        "only the clean file left"
    );
}

/// Issue #20 item 11 and the symlink/dot-file finding: a submodule on the remote made every
/// pull fail, a symlink arrived as a file holding its target and `.gitattributes` was copied
/// into team/. Each is named and left alone; the rest syncs, and a push keeps the remote's
/// entries as they are.
#[cfg(unix)]
#[test]
fn a_remotes_submodule_symlink_dot_files_and_non_utf8_file_are_named_and_the_rest_syncs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare_remote(tmp.path());
    // A teammate with plain git: none of Engram's checks.
    let raw = tmp.path().join("raw");
    fs::create_dir_all(raw.join("notes")).expect("raw");
    git(&raw, &["init", "-q", "-b", "main"]);
    fs::write(raw.join("ok.md"), "---\nname: Ok\n---\nfine\n").expect("ok");
    std::os::unix::fs::symlink("/etc/passwd", raw.join("link.md")).expect("symlink");
    fs::write(raw.join(".gitattributes"), "*.md diff=markdown\n").expect("attributes");
    fs::write(raw.join("notes/.hidden.md"), "hidden\n").expect("hidden");
    fs::write(raw.join("latin1.md"), b"caf\xe9\n").expect("latin-1");
    git(&raw, &["add", "."]);
    let sub = "1111111111111111111111111111111111111111";
    git(
        &raw,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sub},vendor"),
        ],
    );
    fs::write(
        raw.join(".gitmodules"),
        "[submodule \"vendor\"]\n\tpath = vendor\n\turl = ../elsewhere.git\n",
    )
    .expect("gitmodules");
    git(&raw, &["add", ".gitmodules"]);
    git(
        &raw,
        &[
            "-c",
            "user.name=r",
            "-c",
            "user.email=r@r",
            "commit",
            "-q",
            "-m",
            "raw",
        ],
    );
    git(&raw, &["push", "-q", &remote.to_string_lossy(), "main"]);
    let entries_before = git(&remote, &["ls-tree", "-r", "main"]);

    let ada = Mate::new("ada", &remote);
    let pulled = ada.json(&["team", "pull"]);
    assert_eq!(
        pulled["files"],
        serde_json::json!(["team/ok.md"]),
        "{pulled}"
    );
    let mut skipped: Vec<String> = Mate::skipped(&pulled)
        .into_iter()
        .map(|(file, reason)| format!("{file}: {reason}"))
        .collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            ".gitattributes: a dot-file (git or tool settings such as .gitattributes): not synced",
            ".gitmodules: a dot-file (git or tool settings such as .gitattributes): not synced",
            "latin1.md: not UTF-8 text: not synced",
            "link.md: a symbolic link: not synced",
            "notes/.hidden.md: a dot-file (git or tool settings such as .gitattributes): not synced",
            "vendor: a submodule (a link to another repository): not synced",
        ]
    );
    let mut in_team: Vec<String> = fs::read_dir(ada.memory.join("team"))
        .expect("team")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    in_team.sort();
    assert_eq!(in_team, ["ok.md"], "only the text file arrives");
    let again = ada.json(&["team", "pull"]);
    assert_eq!(
        Mate::skipped(&again),
        [],
        "named once, when it changes: {again}"
    );

    // Her edit goes; the remote keeps everything that does not sync exactly as it was.
    ada.write("ok.md", "---\nname: Ok\n---\nbetter\n");
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(pushed["files"], serde_json::json!(["ok.md"]), "{pushed}");
    assert_eq!(Mate::skipped(&pushed), [], "{pushed}");
    // The remote keeps the submodule, the symlink, the dot-files and the Latin-1 file exactly.
    let entries_after = git(&remote, &["ls-tree", "-r", "main"]);
    let without_ok = |listing: &str| -> Vec<String> {
        listing
            .lines()
            .filter(|line| !line.ends_with("\tok.md"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(without_ok(&entries_after), without_ok(&entries_before));
    assert_eq!(
        git(&remote, &["show", "main:ok.md"]),
        "---\nname: Ok\n---\nbetter\n"
    );
    let status = ada.json(&["team", "status"]);
    assert_eq!(
        (status["ahead"].as_u64(), status["behind"].as_u64()),
        (Some(0), Some(0)),
        "{status}"
    );
}

/// Issue #20 item 11, the push side: one local file that is not UTF-8 made every push fail.
#[test]
fn a_local_file_that_is_not_utf8_is_named_and_the_rest_is_pushed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = bare_remote(tmp.path());
    let ada = Mate::new("ada", &remote);
    ada.write("deploy.md", "---\nname: Deploy\n---\nFly.io\n");
    fs::write(ada.memory.join("team/mine.md"), b"\xff\xfe notes\n").expect("binary");
    fs::write(ada.memory.join("team/.DS_Store"), b"\0\x01").expect("dot-file");
    fs::create_dir_all(ada.memory.join("team/.obsidian")).expect("dot-dir");
    fs::write(ada.memory.join("team/.obsidian/app.md"), "{}\n").expect("dot-dir file");
    let pushed = ada.json(&["team", "push"]);
    assert_eq!(
        pushed["files"],
        serde_json::json!(["deploy.md"]),
        "{pushed}"
    );
    let skipped = Mate::skipped(&pushed);
    assert_eq!(skipped.len(), 1, "{pushed}");
    assert_eq!(skipped[0].0, "mine.md");
    assert!(
        skipped[0].1.contains("not valid UTF-8") && skipped[0].1.ends_with("not pushed"),
        "{pushed}"
    );
    assert_eq!(
        remote_files(&remote),
        ["deploy.md"],
        "no dot-file, no binary"
    );
}

#[test]
fn secrets_redact_stages_a_reviewed_change_and_rules_lists_gitleaks_ids() {
    let s = Sandbox::in_project("redact").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let token = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let leaky =
        format!("---\nname: CI\ndescription: the CI\ntype: reference\n---\nmirror token {token}\n");
    fs::write(memory.join("team/ci.md"), &leaky).expect("ci");
    fs::write(memory.join("MEMORY.md"), "- [CI](team/ci.md) — the CI\n").expect("index");
    let dir = memory.to_string_lossy().into_owned();

    let set = s.json(&["secrets", "redact", "--memory-dir", &dir]);
    assert_eq!(set["source"], "redaction", "{set}");
    assert_eq!(set["files"].as_array().map(Vec::len), Some(1), "{set}");
    assert!(
        set["files"][0]["diff"]
            .as_str()
            .expect("diff")
            .contains("+mirror token [REDACTED:github-pat]"),
        "{set}"
    );
    assert_eq!(
        fs::read_to_string(memory.join("team/ci.md")).expect("read"),
        leaky
    );
    let id = set["id"].as_str().expect("id");
    let out = s.run(&["changes", "apply", id, "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(fs::read_to_string(memory.join("team/ci.md"))
        .expect("read")
        .ends_with("mirror token [REDACTED:github-pat]\n"));
    let none = s.run(&["secrets", "redact", "--memory-dir", &dir]);
    assert!(crate::support::stdout(&none).contains("nothing to redact"));
    s.json_with_code(&["secrets", "scan", &dir], 0);

    let rules = s.json(&["secrets", "rules"]);
    let rules = rules.as_array().expect("rules");
    assert_eq!(
        rules.len(),
        223,
        "gitleaks' 222 and Claude Code's login tokens"
    );
    assert!(rules.iter().all(|r| r.get("skipped").is_none()));
    for id in [
        "github-pat",
        "generic-api-key",
        "private-key",
        "anthropic-oauth-token",
    ] {
        assert!(rules.iter().any(|r| r["id"] == id), "{id}");
    }
}

/// A memory file that is not UTF-8 but holds a secret (`secrets scan` finds it) cannot be carried
/// by a change set, which is text: `secrets redact` names it, leaves its bytes as they are,
/// still stages the text files' redaction, and exits non-zero — never "nothing to redact".
#[test]
fn secrets_redact_names_a_file_it_cannot_redact_and_exits_non_zero() {
    let s = Sandbox::in_project("redact-bytes").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(&memory).expect("mem");
    let token = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let mut latin1 = b"---\nname: CI\n---\nCaf\xe9 mirror token ".to_vec();
    latin1.extend_from_slice(token.as_bytes());
    latin1.push(b'\n');
    fs::write(memory.join("latin1.md"), &latin1).expect("latin1");
    let dir = memory.to_string_lossy().into_owned();
    let scan = s.json_with_code(&["secrets", "scan", &dir], 1);
    assert!(
        scan.to_string().contains("latin1.md"),
        "the scan finds it: {scan}"
    );

    // Only that file: nothing can be staged, and the person is told why.
    let out = s.run(&["secrets", "redact", "--memory-dir", &dir]);
    assert_ne!(exit_code(&out), 0, "{}", crate::support::stdout(&out));
    assert!(
        !crate::support::stdout(&out).contains("no secrets"),
        "{}",
        crate::support::stdout(&out)
    );
    assert!(
        stderr(&out).contains("latin1.md") && stderr(&out).contains("not UTF-8"),
        "{}",
        stderr(&out)
    );

    // Beside a text file with a secret: that one is staged, the other still named.
    fs::write(
        memory.join("notes.md"),
        format!("---\nname: Notes\n---\ntoken {token}\n"),
    )
    .expect("notes");
    let out = s.run(&["secrets", "redact", "--memory-dir", &dir, "--json"]);
    assert_ne!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("latin1.md"), "{}", stderr(&out));
    let set: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the set as JSON");
    let files: Vec<&str> = set["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file"))
        .collect();
    assert_eq!(files, ["notes.md"], "{set}");
    assert_eq!(
        fs::read(memory.join("latin1.md")).expect("latin1"),
        latin1,
        "its bytes are left as they are"
    );
}
