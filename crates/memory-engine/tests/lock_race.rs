//! Races on Claude Code's consolidation lock with real OS processes: this test binary runs itself
//! as the racers (`lock_race_child`, a no-op unless `LOCK_RACE_DIR` is set).
//!
//! - 100 processes take `.consolidate-lock` of one memory dir at the same moment (all wait at a
//!   barrier file first), 20 rounds: exactly one winner each round.
//! - `kill -9` of the holder: the next acquire succeeds once its PID is dead.
//!
//! Unix only: the racers' dirs are laid out with symlinks (`docs/platforms.md`, row 7).
#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use memory_engine::dream::lock::{try_acquire, Acquire};

const RACERS: usize = 100;
const ROUNDS: usize = 20;

fn wait_for(path: &Path, limit: Duration) -> bool {
    let started = Instant::now();
    while !path.exists() {
        if started.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// The racer: announces itself, waits for `go`, tries once, prints the outcome; a winner holds
/// the lock until `release` appears (or is killed).
#[test]
fn lock_race_child() {
    let Some(dir) = std::env::var_os("LOCK_RACE_DIR").map(PathBuf::from) else {
        return;
    };
    let memory = dir.join("memory");
    let engram_lock = dir.join("engram-home").join("dream.lock");
    fs::write(dir.join(format!("ready-{}", std::process::id())), "").expect("ready");
    assert!(wait_for(&dir.join("go"), Duration::from_secs(60)), "no go");
    match try_acquire(&memory, SystemTime::now(), std::process::id(), &engram_lock)
        .expect("acquire")
    {
        Acquire::Acquired(lock) => {
            println!("LOCK-RACE WON {}", std::process::id());
            wait_for(&dir.join("release"), Duration::from_secs(120));
            lock.complete(SystemTime::now()).expect("complete");
        }
        Acquire::Held(_) => println!("LOCK-RACE LOST {}", std::process::id()),
    }
}

/// A racer whose output goes to `dir/out-<n>` (a file, not a pipe: the parent reads it while the
/// winner still holds the lock, and a closed pipe would make the harness fail).
fn racer(dir: &Path, n: usize) -> Child {
    let out = fs::File::create(dir.join(format!("out-{n}"))).expect("output file");
    Command::new(std::env::current_exe().expect("exe"))
        .args([
            "lock_race_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LOCK_RACE_DIR", dir)
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn racer")
}

/// What racer `n` printed so far: `Some(true)` won, `Some(false)` lost, `None` not yet.
fn outcome(dir: &Path, n: usize) -> Option<bool> {
    let text = fs::read_to_string(dir.join(format!("out-{n}"))).ok()?;
    // libtest prints the test's name first, on the same line.
    if text.contains("LOCK-RACE WON") {
        Some(true)
    } else if text.contains("LOCK-RACE LOST") {
        Some(false)
    } else {
        None
    }
}

/// Waits until every racer reported; returns how many won.
fn winners(dir: &Path, racers: usize) -> usize {
    let started = Instant::now();
    loop {
        let outcomes: Vec<Option<bool>> = (0..racers).map(|n| outcome(dir, n)).collect();
        if outcomes.iter().all(Option::is_some) {
            return outcomes.iter().filter(|o| **o == Some(true)).count();
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "racers did not all report: {outcomes:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ready_count(dir: &Path) -> usize {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("ready-"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_hundred_processes_at_once_exactly_one_wins_each_of_twenty_rounds() {
    let tmp = tempfile::tempdir().expect("tmp");
    let memory = tmp.path().join("memory");
    fs::create_dir_all(&memory).expect("memory");
    fs::create_dir_all(tmp.path().join("engram-home")).expect("engram home");
    for round in 0..ROUNDS {
        let dir = tmp.path().join(format!("round-{round}"));
        fs::create_dir_all(&dir).expect("round dir");
        // Every round races on the same memory dir and the same Engram data dir.
        std::os::unix::fs::symlink(&memory, dir.join("memory")).expect("link memory");
        std::os::unix::fs::symlink(tmp.path().join("engram-home"), dir.join("engram-home"))
            .expect("link home");
        let racers: Vec<Child> = (0..RACERS).map(|n| racer(&dir, n)).collect();
        let started = Instant::now();
        while ready_count(&dir) < RACERS {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "racers did not start"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        fs::write(dir.join("go"), "").expect("go");
        let won = winners(&dir, RACERS);
        fs::write(dir.join("release"), "").expect("release");
        for mut child in racers {
            assert!(child.wait().expect("wait").success(), "a racer failed");
        }
        assert_eq!(won, 1, "round {round}: exactly one winner");
    }
    println!("lock race: {ROUNDS} rounds × {RACERS} processes, one winner each");
}

#[test]
fn after_kill_9_of_the_holder_the_next_acquire_succeeds() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().to_path_buf();
    fs::create_dir_all(dir.join("memory")).expect("memory");
    let mut holder = racer(&dir, 0);
    assert!(wait_for(
        &dir.join(format!("ready-{}", holder.id())),
        Duration::from_secs(60)
    ));
    fs::write(dir.join("go"), "").expect("go");
    assert_eq!(winners(&dir, 1), 1);
    let engram_lock = dir.join("engram-home").join("dream.lock");
    let me = std::process::id();
    assert!(
        matches!(
            try_acquire(&dir.join("memory"), SystemTime::now(), me, &engram_lock).expect("try"),
            Acquire::Held(_)
        ),
        "held while the holder lives"
    );
    holder.kill().expect("kill -9");
    holder.wait().expect("reap");
    match try_acquire(&dir.join("memory"), SystemTime::now(), me, &engram_lock).expect("try") {
        Acquire::Acquired(lock) => lock.rollback().expect("rollback"),
        Acquire::Held(info) => panic!("still held after the holder died: {info:?}"),
    }
}
