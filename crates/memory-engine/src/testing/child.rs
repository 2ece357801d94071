//! Real child processes for tests that need a live or a dead PID (lock holders, Claude Code's
//! dream), without `sleep` or `true`, which Windows lacks: the child is this very test binary,
//! running [`waits_for_stdin_to_close`] (ignored, so a plain test run skips it) or listing its
//! tests. Portable wherever the test binary runs (platforms row 23).

use std::process::{Child, Command, Stdio};

/// The test [`live`] runs, by its full path in this binary.
const WAITER: &str = "testing::child::waits_for_stdin_to_close";

/// A live child that runs until killed, or until the `Child` is dropped (its stdin closes).
pub(crate) fn live() -> Child {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", WAITER, "--ignored", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the test binary")
}

/// The PID of a child that has exited and been reaped: no process has it (until the OS reuses it).
pub(crate) fn dead_pid() -> u32 {
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .arg("--list")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the test binary");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

/// What [`live`] runs: blocks until its stdin closes.
#[test]
#[ignore = "the child process of testing::child::live, not a test of its own"]
fn waits_for_stdin_to_close() {
    std::io::copy(&mut std::io::stdin(), &mut std::io::sink()).expect("read stdin");
}

#[test]
fn a_live_child_runs_the_waiter_until_its_stdin_closes_or_it_is_killed() {
    // The filter names exactly the waiter, so the child is never an empty run that exits at once.
    let listed = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", WAITER, "--ignored", "--list"])
        .output()
        .expect("list");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains(&format!("{WAITER}: test")), "{listed}");

    let mut child = live();
    assert!(crate::platform::process::alive(child.id()));
    drop(child.stdin.take());
    assert!(
        child.wait().expect("wait").success(),
        "the waiter ran and passed"
    );

    let mut child = live();
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(!crate::platform::process::alive(dead_pid()));
}
