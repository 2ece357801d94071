//! Personal sync's auto push against a real bare git repo on disk.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::auto::AutoPush;
use crate::engine::Engine;
use crate::environment::Environment;

fn remote_files(remote: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(remote)
        .args(["ls-tree", "-r", "--name-only", "main"])
        .output()
        .expect("git");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn auto_push_sends_a_change_once_it_settles_and_only_when_turned_on() {
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = tmp.path().join("remote.git");
    assert!(Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&remote)
        .status()
        .expect("git")
        .success());
    let home = tmp.path().join("home");
    let engine = Engine::builder(
        Environment::empty()
            .with("HOME", home.to_string_lossy())
            // Sync finds git on the engine's own PATH (platform::git).
            .with("PATH", std::env::var("PATH").unwrap_or_default()),
    )
    .claude_home(home.join(".claude"))
    .engram_home(tmp.path().join("engram"))
    .build();
    let memory = home.join(".claude/projects/-p/memory");
    fs::create_dir_all(&memory).expect("memory");
    fs::write(memory.join("a.md"), "a\n").expect("a");
    engine
        .set_sync_remote(&remote.to_string_lossy())
        .expect("remote");
    let mut state = AutoPush::default();

    // Off: changes are never pushed.
    assert!(engine
        .sync_auto_push_step(&mut state)
        .expect("step")
        .is_none());
    fs::write(memory.join("b.md"), "b\n").expect("b");
    for _ in 0..3 {
        assert!(engine
            .sync_auto_push_step(&mut state)
            .expect("step")
            .is_none());
    }
    assert_eq!(remote_files(&remote), "");

    // On: what was there when it was turned on is the baseline; the next change is pushed once
    // it stayed the same for a tick.
    engine.set_sync_auto(true).expect("auto");
    assert!(engine
        .sync_auto_push_step(&mut state)
        .expect("step")
        .is_none());
    fs::write(memory.join("c.md"), "c\n").expect("c");
    assert!(
        engine
            .sync_auto_push_step(&mut state)
            .expect("step")
            .is_none(),
        "still settling"
    );
    let pushed = engine
        .sync_auto_push_step(&mut state)
        .expect("step")
        .expect("pushed");
    assert!(
        pushed.files.contains(&"projects/-p/c.md".to_owned()),
        "{pushed:?}"
    );
    assert!(remote_files(&remote).contains("projects/-p/c.md"));
    assert!(engine
        .sync_auto_push_step(&mut state)
        .expect("step")
        .is_none());
}
