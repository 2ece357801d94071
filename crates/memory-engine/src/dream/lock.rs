//! Claude Code's consolidation lock, `<memory dir>/.consolidate-lock`, byte- and
//! mtime-compatible (FORMATS.md §8): its mtime is the last consolidation time, its body the
//! holder's PID as decimal text.
//!
//! - Held only while its mtime is less than an hour old AND its PID is alive (`kill(pid, 0)`;
//!   EPERM is alive, PID ≤ 1 dead). Otherwise it is reclaimed: write our PID, read it back, and
//!   lose if another writer's PID is there.
//! - Success leaves the mtime at the completion time. Failure or a kill rolls back: no lock before
//!   → the file is deleted; else its body is emptied and its mtime and atime set back to the prior
//!   value, to the second, as Claude Code's `utimes` does.
//! - The lock is read as a regular file only, opened without blocking and read no further than
//!   [`MAX_BODY`] bytes: a FIFO in its place would otherwise hang every reader (`dream run`,
//!   `dream status`, the watcher) beyond the reach of signals, and a huge file would be read
//!   whole. A lock that is not a regular file is an error naming it; nothing replaces it.
//! - "Write, read back" alone lets two processes that reclaim at the same instant both win; Engram
//!   processes therefore also hold an advisory lock on a per-project file in Engram's data dir
//!   for as long as they hold `.consolidate-lock`, so two Engram dreams never overlap. (Claude
//!   Code does not take it; against Claude Code the PID protocol is what there is.)

use std::fs::{self, File, FileTimes};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fs4::fs_std::FileExt;
use serde::Serialize;

use crate::error::{Error, IoResultExt, Result};
use crate::staleness::iso_time;

pub const LOCK_FILE: &str = ".consolidate-lock";
/// The most of a lock's body read: a PID is a few bytes. (Claude Code's `parseInt` reads only the
/// leading digits too.)
pub const MAX_BODY: u64 = 64;
/// A holder older than this is presumed gone (PIDs get reused).
pub const HOLDER_STALE: Duration = Duration::from_secs(60 * 60);

/// What `.consolidate-lock` says now.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockInfo {
    pub path: PathBuf,
    pub exists: bool,
    /// The holder's PID, when the body holds one.
    pub pid: Option<u32>,
    /// Whether that PID is a live process.
    pub alive: bool,
    /// The last consolidation time (the file's mtime), ISO 8601 UTC.
    pub mtime: Option<String>,
    #[serde(skip)]
    pub mtime_ms: Option<i64>,
}

impl LockInfo {
    /// Held by someone: less than an hour old and its PID alive.
    pub fn is_held(&self, now: SystemTime) -> bool {
        let fresh = self
            .mtime_ms
            .is_some_and(|mtime| epoch_ms(now) - mtime < HOLDER_STALE.as_millis() as i64);
        self.exists && self.alive && fresh
    }
}

/// Reads the lock of `memory_dir`.
pub fn inspect(memory_dir: &Path) -> Result<LockInfo> {
    let path = memory_dir.join(LOCK_FILE);
    let Some((meta, body)) = read_lock(&path)? else {
        return Ok(LockInfo {
            path,
            exists: false,
            pid: None,
            alive: false,
            mtime: None,
            mtime_ms: None,
        });
    };
    let mtime = meta.modified().at(&path)?;
    let pid = parse_pid(&body);
    Ok(LockInfo {
        exists: true,
        alive: pid.is_some_and(pid_alive),
        pid,
        mtime: Some(iso_time(mtime)),
        mtime_ms: Some(epoch_ms(mtime)),
        path,
    })
}

/// What [`try_acquire`] got.
#[derive(Debug)]
pub enum Acquire {
    Acquired(ConsolidationLock),
    /// Someone holds it: a live process with a fresh lock, or another Engram process.
    Held(LockInfo),
}

/// The lock, held. Dropped without [`ConsolidationLock::complete`], it rolls back.
#[derive(Debug)]
pub struct ConsolidationLock {
    path: PathBuf,
    pid: u32,
    prior_mtime_ms: i64,
    done: bool,
    /// Held open for the lock's whole life: Engram processes take turns on it.
    _engram: File,
}

/// Takes the lock of `memory_dir` for process `pid` at `now`, unless someone holds it.
/// `engram_lock` is the advisory lock file of this memory dir in Engram's data dir — one per
/// memory dir, not per project folder: a repo's worktrees share one memory dir.
pub fn try_acquire(
    memory_dir: &Path,
    now: SystemTime,
    pid: u32,
    engram_lock: &Path,
) -> Result<Acquire> {
    try_acquire_recorded(memory_dir, now, pid, engram_lock, |_| Ok(()))
}

/// [`try_acquire`], calling `record` with the prior mtime (ms; 0: never) after the lock is
/// found free and before its body names `pid`. A process killed once the body names it has
/// already said what the mtime was, so whoever looks next can roll the lock back — with the
/// record written after the lock there was a window where a kill left a lock naming a dead
/// process and nothing saying what to roll back to. Only one Engram process is ever here for
/// `engram_lock`, so what `record` writes is not another Engram dream's.
pub fn try_acquire_recorded(
    memory_dir: &Path,
    now: SystemTime,
    pid: u32,
    engram_lock: &Path,
    record: impl FnOnce(i64) -> Result<()>,
) -> Result<Acquire> {
    if let Some(dir) = engram_lock.parent() {
        crate::disk::create_dir_all(dir).at(dir)?;
    }
    let engram = crate::disk::with_mode_for(
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
        engram_lock,
    )
    .open(engram_lock)
    .at(engram_lock)?;
    if !FileExt::try_lock_exclusive(&engram).at(engram_lock)? {
        return Ok(Acquire::Held(inspect(memory_dir)?));
    }
    let info = inspect(memory_dir)?;
    if info.is_held(now) && info.pid != Some(pid) {
        return Ok(Acquire::Held(info));
    }
    let prior_mtime_ms = info.mtime_ms.unwrap_or(0);
    record(prior_mtime_ms)?;
    let path = memory_dir.join(LOCK_FILE);
    // Atomically, so a Claude Code reading at this instant never sees an empty body.
    crate::disk::atomic_write(&path, pid.to_string().as_bytes())?;
    set_times(&path, now)?;
    // Another process may have reclaimed it at the same instant: the last writer wins.
    if read_lock(&path)?.and_then(|(_, body)| parse_pid(&body)) != Some(pid) {
        return Ok(Acquire::Held(inspect(memory_dir)?));
    }
    Ok(Acquire::Acquired(ConsolidationLock {
        path,
        pid,
        prior_mtime_ms,
        done: false,
        _engram: engram,
    }))
}

impl ConsolidationLock {
    /// The last consolidation before this one (ms since the epoch; 0: never).
    pub fn prior_mtime_ms(&self) -> i64 {
        self.prior_mtime_ms
    }

    /// The dream succeeded: the mtime becomes `now`, the last consolidation, and the body is
    /// emptied — no holder, as Claude Code reads an empty body — so the lock does not look held
    /// by a process that has simply lived on (the app) for the next hour.
    pub fn complete(mut self, now: SystemTime) -> Result<()> {
        self.done = true;
        if !self.still_ours()? {
            return Ok(());
        }
        crate::disk::atomic_write(&self.path, b"")?;
        set_times(&self.path, now)
    }

    /// The dream failed or was killed: back to how it was before.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        if !self.still_ours()? {
            return Ok(());
        }
        rollback_to_path(&self.path, self.prior_mtime_ms)
    }

    /// Whether the lock still names this process. A dream that ran past the hour may have had
    /// its lock reclaimed (by Claude Code, say): that holder's lock is not ours to touch.
    fn still_ours(&self) -> Result<bool> {
        match read_lock(&self.path)? {
            Some((_, body)) => Ok(parse_pid(&body) == Some(self.pid)),
            // Deleted meanwhile: completing or rolling back recreates what it should say.
            None => Ok(true),
        }
    }
}

impl Drop for ConsolidationLock {
    fn drop(&mut self) {
        if !self.done && self.still_ours().unwrap_or(false) {
            let _ = rollback_to_path(&self.path, self.prior_mtime_ms);
        }
    }
}

/// Rolls `memory_dir`'s lock back to `prior_mtime_ms` for a holder that cannot (it died).
pub fn rollback_to(memory_dir: &Path, prior_mtime_ms: i64) -> Result<()> {
    rollback_to_path(&memory_dir.join(LOCK_FILE), prior_mtime_ms)
}

fn rollback_to_path(path: &Path, prior_mtime_ms: i64) -> Result<()> {
    if prior_mtime_ms <= 0 {
        return match fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
            _ => Ok(()),
        };
    }
    // Replaced, never written through: whatever took the lock's name meanwhile (a FIFO, a
    // symlink) is not opened.
    crate::disk::atomic_write(path, b"")?;
    let seconds = u64::try_from(prior_mtime_ms / 1000).unwrap_or(0);
    set_times(path, UNIX_EPOCH + Duration::from_secs(seconds))
}

/// The lock at `path`, read as [`MAX_BODY`] bytes of a regular file (see the module docs);
/// `None` when there is none.
fn read_lock(path: &Path) -> Result<Option<(fs::Metadata, Vec<u8>)>> {
    crate::disk::read_head(path, MAX_BODY).map_err(|e| match e {
        Error::InvalidInput(why) => Error::InvalidInput(format!(
            "{why}: Claude Code's consolidation lock must be a regular file; no dream runs \
             until it is removed"
        )),
        other => other,
    })
}

fn set_times(path: &Path, at: SystemTime) -> Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    // The file just written: something else in its place now (a FIFO would block the open, a
    // symlink lead elsewhere) fails instead.
    crate::platform::fs::open_nonblocking(&mut options, true);
    let file = match options.open(path) {
        Ok(file) => file,
        // Deleted while held: the lock's mtime is the record of the consolidation.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::disk::atomic_write(path, b"")?;
            options.open(path).at(path)?
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    file.set_times(FileTimes::new().set_accessed(at).set_modified(at))
        .at(path)
}

/// The holder's PID as Claude Code reads it, `parseInt(body, 10)`: the leading digits after
/// whitespace, whatever follows them. 2.1.330 has a second form, `<pid>\n<last consolidation
/// ms>`, for the lock it keeps through its storage layer; either reads as the same PID here.
/// A body with no leading digits (empty after a rollback, a sign alone) names no holder.
fn parse_pid(body: &[u8]) -> Option<u32> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim_start();
    let text = text.strip_prefix('+').unwrap_or(text);
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    text[..digits].parse().ok()
}

pub use crate::environment::pid_alive;

/// Asks process `pid` to stop (SIGTERM): how `engram dream kill` reaches a dream running in
/// another Engram process, which then rolls its lock back itself.
pub fn terminate(pid: u32) -> Result<()> {
    crate::platform::process::terminate(pid)
}

/// Milliseconds since the epoch (0 before it).
pub fn epoch_ms(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::child::{dead_pid, live as sleeper};

    struct Dir {
        _temp: tempfile::TempDir,
        memory: PathBuf,
        engram_lock: PathBuf,
    }

    fn dir() -> Dir {
        let temp = tempfile::tempdir().expect("temp");
        let memory = temp.path().join("memory");
        fs::create_dir_all(&memory).expect("mkdir");
        let engram_lock = temp.path().join("engram/dream/p/engram.lock");
        Dir {
            _temp: temp,
            memory,
            engram_lock,
        }
    }

    /// A lock written as Claude Code writes it: the PID, then the mtime set.
    fn claude_lock(dir: &Path, pid: u32, mtime: SystemTime) {
        let path = dir.join(LOCK_FILE);
        fs::write(&path, pid.to_string()).expect("write");
        set_times(&path, mtime).expect("utimes");
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    const NOW: u64 = 1_800_000_000;

    /// The record a crash is recovered from is written before the lock names the process, so
    /// no instant exists where a kill leaves the lock ours and the prior mtime unknown.
    #[test]
    fn the_prior_mtime_is_recorded_before_the_lock_names_the_process() {
        let d = dir();
        claude_lock(&d.memory, dead_pid(), at(NOW - 7200));
        let mut seen = None;
        let taken = try_acquire_recorded(&d.memory, at(NOW), 4242, &d.engram_lock, |prior| {
            seen = Some((prior, inspect(&d.memory)?.pid));
            Ok(())
        })
        .expect("try");
        assert!(matches!(taken, Acquire::Acquired(_)));
        let (prior, holder_then) = seen.expect("recorded");
        assert_eq!(prior, ((NOW - 7200) * 1000) as i64);
        assert_ne!(holder_then, Some(4242), "recorded before the lock was ours");

        // A record that cannot be written leaves the lock as it was: nothing to recover from.
        let d = dir();
        claude_lock(&d.memory, dead_pid(), at(NOW - 7200));
        let before = fs::read(d.memory.join(LOCK_FILE)).expect("read");
        try_acquire_recorded(&d.memory, at(NOW), 4242, &d.engram_lock, |_| {
            Err(crate::Error::InvalidInput("disk full".into()))
        })
        .expect_err("the record failed");
        assert_eq!(fs::read(d.memory.join(LOCK_FILE)).expect("read"), before);
    }

    /// Claude Code reads the holder with `parseInt`: a body it writes in its other form
    /// (`<pid>\n<ms>`), or with trailing text, still names the PID, and a live holder blocks.
    #[test]
    fn the_holder_is_read_as_parse_int_reads_it() {
        for (body, pid) in [
            ("4242", Some(4242)),
            (" 4242\n", Some(4242)),
            ("4242\n1795000000123", Some(4242)),
            ("+4242", Some(4242)),
            ("4242abc", Some(4242)),
            ("", None),
            ("-4242", None),
            ("abc", None),
            ("99999999999", None),
        ] {
            assert_eq!(parse_pid(body.as_bytes()), pid, "{body:?}");
        }
        let d = dir();
        let mut holder = sleeper();
        let path = d.memory.join(LOCK_FILE);
        fs::write(&path, format!("{}\n{}", holder.id(), (NOW - 600) * 1000)).expect("write");
        set_times(&path, at(NOW - 600)).expect("utimes");
        assert!(matches!(
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try"),
            Acquire::Held(_)
        ));
        holder.kill().expect("kill");
        holder.wait().expect("wait");
    }

    #[test]
    fn a_live_foreign_pid_with_a_fresh_lock_blocks_and_is_read_as_claude_writes_it() {
        let d = dir();
        let mut holder = sleeper();
        claude_lock(&d.memory, holder.id(), at(NOW - 600));
        let info = inspect(&d.memory).expect("inspect");
        assert_eq!(info.pid, Some(holder.id()));
        assert!(info.alive && info.exists);
        assert_eq!(info.mtime_ms, Some(((NOW - 600) * 1000) as i64));
        match try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try") {
            Acquire::Held(info) => assert_eq!(info.pid, Some(holder.id())),
            Acquire::Acquired(_) => panic!("a live holder's fresh lock must block"),
        }
        assert_eq!(
            fs::read_to_string(d.memory.join(LOCK_FILE)).expect("read"),
            holder.id().to_string(),
            "untouched"
        );
        holder.kill().expect("kill");
        holder.wait().expect("wait");
    }

    #[test]
    fn a_lock_older_than_an_hour_or_held_by_a_dead_pid_is_reclaimed() {
        let d = dir();
        let mut holder = sleeper();
        claude_lock(&d.memory, holder.id(), at(NOW - 2 * 3600));
        let Acquire::Acquired(lock) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("a lock 2 h old is stale");
        };
        assert_eq!(lock.prior_mtime_ms(), ((NOW - 2 * 3600) * 1000) as i64);
        assert_eq!(
            fs::read_to_string(d.memory.join(LOCK_FILE)).expect("read"),
            "4242"
        );
        lock.rollback().expect("rollback");
        holder.kill().expect("kill");
        holder.wait().expect("wait");

        claude_lock(&d.memory, dead_pid(), at(NOW - 60));
        assert!(
            matches!(
                try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try"),
                Acquire::Acquired(_)
            ),
            "a dead holder's lock is reclaimed"
        );
    }

    #[test]
    fn rollback_restores_the_mtime_to_the_second_and_empties_the_body() {
        let d = dir();
        let prior = UNIX_EPOCH + Duration::from_millis(1_700_000_123_456);
        claude_lock(&d.memory, dead_pid(), prior);
        let Acquire::Acquired(lock) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("reclaimable");
        };
        lock.rollback().expect("rollback");
        let path = d.memory.join(LOCK_FILE);
        // Stat before reading: a read may move the atime on.
        let meta = fs::metadata(&path).expect("stat");
        assert_eq!(meta.modified().expect("mtime"), at(1_700_000_123));
        assert_eq!(meta.accessed().expect("atime"), at(1_700_000_123));
        assert_eq!(fs::read_to_string(&path).expect("read"), "");
    }

    #[test]
    fn rollback_without_a_prior_lock_deletes_it_and_a_drop_rolls_back() {
        let d = dir();
        let Acquire::Acquired(lock) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("free");
        };
        assert_eq!(lock.prior_mtime_ms(), 0);
        drop(lock);
        assert!(
            !d.memory.join(LOCK_FILE).exists(),
            "no lock before: deleted"
        );
    }

    #[test]
    fn success_leaves_the_mtime_at_completion() {
        let d = dir();
        let Acquire::Acquired(lock) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("free");
        };
        lock.complete(at(NOW + 90)).expect("complete");
        let info = inspect(&d.memory).expect("inspect");
        assert_eq!(info.mtime_ms, Some(((NOW + 90) * 1000) as i64));
        assert_eq!(info.pid, None, "no holder once done");
    }

    #[test]
    fn a_second_engram_holder_is_refused_while_the_first_holds_it() {
        let d = dir();
        let Acquire::Acquired(first) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("free");
        };
        // Same PID (one process, two attempts), so only the Engram lock can refuse it.
        assert!(matches!(
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try"),
            Acquire::Held(_)
        ));
        first.rollback().expect("rollback");
        // Released with the guard. Other tests of this process spawn children; one forked while
        // the lock was held keeps a copy of its descriptor (and so the lock) until it execs, a
        // moment later: allow that moment.
        let start = std::time::Instant::now();
        loop {
            match try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try") {
                Acquire::Acquired(_) => break,
                Acquire::Held(_) => {
                    assert!(start.elapsed() < Duration::from_secs(5), "never released");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }

    #[test]
    fn a_lock_reclaimed_by_someone_else_is_not_rolled_back_or_completed_by_us() {
        let d = dir();
        let Acquire::Acquired(lock) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("free");
        };
        // Past the hour, Claude Code reclaimed it.
        claude_lock(&d.memory, 777, at(NOW + 3700));
        lock.rollback().expect("rollback");
        let info = inspect(&d.memory).expect("inspect");
        assert_eq!(info.pid, Some(777), "their lock stays");
        assert_eq!(info.mtime_ms, Some(((NOW + 3700) * 1000) as i64));
    }

    /// A directory in the lock's place is named and left alone; a symlinked lock is read through
    /// (as Claude Code reads it) but never written through: taking it replaces the link.
    #[cfg(unix)]
    #[test]
    fn a_directory_lock_is_named_and_a_symlinked_one_is_never_written_through() {
        let d = dir();
        let lock = d.memory.join(LOCK_FILE);
        fs::create_dir(&lock).expect("a dir in its place");
        for err in [
            inspect(&d.memory).expect_err("a directory"),
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect_err("a directory"),
        ] {
            assert!(
                err.to_string().contains("not a regular file (a directory)"),
                "{err}"
            );
        }
        assert!(lock.is_dir(), "left alone");
        fs::remove_dir(&lock).expect("rmdir");

        let target = d.memory.join("elsewhere");
        fs::write(&target, dead_pid().to_string()).expect("target");
        let before = fs::read(&target).expect("read");
        std::os::unix::fs::symlink(&target, &lock).expect("symlink");
        assert!(inspect(&d.memory).expect("read through").pid.is_some());
        let Acquire::Acquired(held) =
            try_acquire(&d.memory, at(NOW), 4242, &d.engram_lock).expect("try")
        else {
            panic!("a dead holder's lock is reclaimed");
        };
        held.rollback().expect("rollback");
        assert_eq!(
            fs::read(&target).expect("read"),
            before,
            "the target is untouched"
        );
        assert!(fs::symlink_metadata(&lock).expect("stat").is_file());
    }

    #[test]
    fn pids_at_or_below_one_are_dead_and_this_process_is_alive() {
        assert!(!pid_alive(0));
        assert!(!pid_alive(1));
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(dead_pid()));
    }
}
