//! Faults of the machine, not of the files: a full disk and files the user cannot read.
//!
//! - **A full disk**: the memory dir is a small tmpfs, filled, mounted in a private mount
//!   namespace (`unshare --map-root-user --mount`, so no root is needed and nothing outside the
//!   test sees it). `remember`, an applied dream and `log` are run there: each reports ENOSPC
//!   naming the file, nothing is half-written (every file entirely old), no index line points at
//!   a file that did not land, and no temp file is left behind.
//! - **Unreadable files**: every command is run as an unprivileged user (`setpriv` to `nobody`
//!   when the tests run as root, who can read anything) over a memory dir holding a file and, in
//!   a second dir, an index it cannot read: each names what it could not read and goes on with
//!   the rest, or refuses naming it — never silently.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::{exit_code, is_root, stderr, stdout, Sandbox};

/// A shell script run in a private user and mount namespace, where `mount` works without root.
fn in_private_mounts(script: &str) -> Output {
    let out = Command::new("unshare")
        .args(["--map-root-user", "--mount", "sh", "-euc", script])
        .output()
        .expect("unshare (util-linux)");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("unshare failed"),
        "user namespaces are needed for the full-disk test: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const TOPIC: &str =
    "---\nname: Kept\ndescription: a memory already there\ntype: project\n---\nStill here.\n";

#[test]
fn a_full_disk_is_reported_naming_the_file_and_nothing_is_half_written() {
    let s = Sandbox::in_project("full-disk").with_engram_home();
    let seed = s.root().join("seed");
    fs::create_dir_all(&seed).expect("seed");
    fs::write(seed.join("project_kept.md"), TOPIC).expect("topic");
    fs::write(
        seed.join("project_dated.md"),
        "---\nname: Dated\ndescription: a dated memory\ntype: project\n---\nDeployed yesterday.\n",
    )
    .expect("dated");
    let index = "- [Kept](project_kept.md) — a memory already there\n- [Dated](project_dated.md) — a dated memory\n";
    fs::write(seed.join("MEMORY.md"), index).expect("index");
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mount point");
    let engram = env!("CARGO_BIN_EXE_engram");
    let report = s.root().join("report");
    fs::create_dir_all(&report).expect("report dir");
    let big_body = s.root().join("big-body");
    fs::write(&big_body, "x".repeat(64 * 1024)).expect("body");
    // Inside the namespace: mount a 256 KiB tmpfs on the memory dir, copy the memory in, fill
    // what is left, then run each writer; each one's exit code, stderr and the files after it go
    // to `report/` (outside the tmpfs) for the checks below.
    let script = format!(
        r#"
        mount -t tmpfs -o size=256k tmpfs '{mem}'
        cp -a '{seed}/.' '{mem}/'
        dd if=/dev/zero of='{mem}/.filler' bs=1k count=1024 2>/dev/null || true
        export HOME='{home}' ENGRAM_HOME='{engram_home}' NO_COLOR=1
        run() {{ name=$1; shift; set +e; "$@" >'{report}/'$name.out 2>'{report}/'$name.err; echo $? >'{report}/'$name.code; set -e
                 ls -a '{mem}' >'{report}/'$name.ls; cat '{mem}/MEMORY.md' >'{report}/'$name.index; }}
        run remember '{engram}' remember --type project --name 'Big one' --description 'too big for the disk' --body "$(cat '{big_body}')" --memory-dir '{mem}'
        run dream '{engram}' dream run --force --apply --provider offline --memory-dir '{mem}'
        run log '{engram}' log "$(cat '{big_body}')" --memory-dir '{mem}'
        cp '{mem}/project_kept.md' '{report}/kept.after'; cp '{mem}/project_dated.md' '{report}/dated.after'
        "#,
        mem = mem.display(),
        seed = seed.display(),
        home = s.home().display(),
        engram_home = s.engram_home().display(),
        report = report.display(),
        big_body = big_body.display(),
    );
    let out = in_private_mounts(&script);
    assert!(
        out.status.success(),
        "the namespace script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |name: &str| fs::read_to_string(report.join(name)).unwrap_or_default();
    for writer in ["remember", "dream", "log"] {
        let code = read(&format!("{writer}.code"));
        let err = read(&format!("{writer}.err"));
        let listing = read(&format!("{writer}.ls"));
        assert!(
            listing.lines().all(|name| !name.contains(".engram-")),
            "{writer}: a temp file was left: {listing}"
        );
        assert_eq!(
            read(&format!("{writer}.index")),
            index,
            "{writer}: the index changed on a full disk"
        );
        match writer {
            // The dream had one change to make (a relative date) and no room to make it.
            "remember" | "dream" | "log" => {
                assert_eq!(code.trim(), "2", "{writer}: exit {code}, {err}");
                assert!(
                    err.contains("No space left on device"),
                    "{writer}: the error says why: {err}"
                );
                assert!(
                    err.contains(&mem.display().to_string()),
                    "{writer}: names the file: {err}"
                );
            }
            _ => unreachable!(),
        }
        assert!(
            !listing.lines().any(|name| name == "project_big_one.md"),
            "{writer}: a half-written memory"
        );
    }
    assert_eq!(read("kept.after"), TOPIC, "an existing memory is untouched");
    assert!(
        read("dated.after").contains("Deployed yesterday."),
        "old or new, never torn"
    );
}

/// Runs `engram ARGS` as `nobody` when the tests run as root (root reads anything), else as
/// the current user.
fn as_unprivileged(s: &Sandbox, args: &[&str]) -> Output {
    let engram = env!("CARGO_BIN_EXE_engram");
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", engram]);
        c
    } else {
        Command::new(engram)
    };
    command
        .args(args)
        .env_clear()
        .env("HOME", s.home())
        .env("ENGRAM_HOME", s.engram_home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("NO_COLOR", "1")
        .output()
        .expect("run engram")
}

/// `path` and everything under it owned by `nobody` (as root), so `nobody` can use it.
fn hand_over(path: &Path) {
    if is_root() {
        let ok = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(path)
            .status()
            .expect("chown");
        assert!(ok.success());
    }
}

#[test]
fn unreadable_files_are_named_and_everything_else_goes_on() {
    let s = Sandbox::in_project("unreadable-files").with_engram_home();
    // The sandbox's temp root is private to its owner; `nobody` must be able to walk into it.
    fs::set_permissions(s.root(), fs::Permissions::from_mode(0o755)).expect("chmod root");
    let mem = s.root().join("mem");
    fs::create_dir_all(&mem).expect("mem");
    fs::write(mem.join("project_kept.md"), TOPIC).expect("topic");
    fs::write(
        mem.join("project_secret.md"),
        "---\nname: Locked\ndescription: unreadable\ntype: project\n---\nlocked\n",
    )
    .expect("locked");
    fs::write(
        mem.join("MEMORY.md"),
        "- [Kept](project_kept.md) — a memory already there\n- [Locked](project_secret.md) — unreadable\n",
    )
    .expect("index");
    // A second dir whose index cannot be read.
    let locked_index = s.root().join("locked-index");
    fs::create_dir_all(&locked_index).expect("dir");
    fs::write(locked_index.join("project_kept.md"), TOPIC).expect("topic");
    fs::write(
        locked_index.join("MEMORY.md"),
        "- [Kept](project_kept.md) — kept\n",
    )
    .expect("index");
    for dir in [s.home(), s.engram_home(), mem.clone(), locked_index.clone()] {
        fs::create_dir_all(&dir).expect("dir");
        hand_over(&dir);
    }
    fs::set_permissions(
        mem.join("project_secret.md"),
        fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    fs::set_permissions(
        locked_index.join("MEMORY.md"),
        fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    let dir = mem.to_string_lossy().into_owned();
    let locked = "project_secret.md";

    // Read commands name the file and show the rest.
    for (args, want_code) in [
        (vec!["lint", "--memory-dir", &dir], 1),
        (vec!["scan", "--memory-dir", &dir], 0),
        (vec!["recall", "kept memory", "--memory-dir", &dir], 0),
        (vec!["secrets", "scan", &dir], 2),
        (vec!["show", locked, "--memory-dir", &dir], 2),
        (
            vec![
                "dream",
                "run",
                "--force",
                "--stage",
                "--provider",
                "offline",
                "--memory-dir",
                &dir,
            ],
            0,
        ),
    ] {
        let out = as_unprivileged(&s, &args);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(exit_code(&out), want_code, "{args:?}: {said}");
        assert!(
            said.contains(locked),
            "{args:?} does not name {locked}: {said}"
        );
        assert!(
            said.contains("Permission denied"),
            "{args:?} does not say why: {said}"
        );
    }
    let scan = as_unprivileged(&s, &["scan", "--memory-dir", &dir]);
    assert!(
        stdout(&scan).contains("project_kept.md"),
        "the rest is listed"
    );

    // A write that needs the unreadable index refuses, naming it, and writes nothing.
    let locked_dir = locked_index.to_string_lossy().into_owned();
    let out = as_unprivileged(
        &s,
        &[
            "remember",
            "--type",
            "project",
            "--name",
            "New",
            "--description",
            "new",
            "--body",
            "new",
            "--memory-dir",
            &locked_dir,
        ],
    );
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("MEMORY.md") && stderr(&out).contains("Permission denied"));
    assert!(
        !locked_index.join("project_new.md").exists(),
        "nothing written"
    );
    let lint = as_unprivileged(&s, &["lint", "--memory-dir", &locked_dir]);
    assert_eq!(exit_code(&lint), 1);
    assert!(stdout(&lint).contains("MEMORY.md"), "{}", stdout(&lint));
    assert!(
        !stdout(&lint).contains("orphan"),
        "an unreadable index is one error, not every file an orphan: {}",
        stdout(&lint)
    );
}
