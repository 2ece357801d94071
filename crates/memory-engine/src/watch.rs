//! Live updates from a memory dir: a recursive file watcher whose raw events are debounced into
//! batches of typed [`MemoryDirEvent`]s, one per file per batch, with Engram's own writes filtered
//! out (echo suppression) and every external change recorded in history as `external`.
//!
//! Contract:
//! - Events are derived from state, not from the platform's event kinds: the watcher remembers
//!   the content hash of every memory file and, after a burst of raw events has been quiet for
//!   the debounce interval (or has lasted `max_delay`), compares the touched files against it.
//!   So an atomic write (temp + rename) is one `modified`, a touch that changes nothing is no
//!   event, and a removed directory is one `removed` per file it held.
//! - Only memory files count: `*.md` at any depth, no hidden component (which also leaves out
//!   `disk::atomic_write`'s temp files and `.consolidate-lock`).
//! - Echo suppression: every writer inside Engram calls [`Engine::note_own_write`] with the path
//!   and the content it is about to write (`None` for a delete) right before writing. When the
//!   watcher then finds that exact content at that path, it consumes the note and emits nothing:
//!   the writer has already recorded the version with its own actor. Notes expire after
//!   [`ECHO_TTL`] so a note whose write was overtaken cannot hide a later external change forever.
//! - [`MemoryDirWatch`] stops on drop: no callback runs after `drop` returns (unless the callback
//!   itself drops the handle, which then only signals the thread).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use serde::Serialize;

use crate::actor::Actor;
use crate::disk::{content_hash, is_memory_file_key, memory_files};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::history::PendingVersion;
use crate::staging::ObservedChange;

impl Engine {
    /// Tells the watcher that Engram itself is about to write `content` to `path` (`None`: delete
    /// it), so the change is not reported back as external. Call right before writing.
    pub fn note_own_write(&self, path: &Path, content: Option<&[u8]>) {
        self.echo_registry().note(path, content);
    }
}

/// What happened to a memory file.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryDirEventKind {
    Created,
    Modified,
    Removed,
}

/// One changed memory file in a batch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDirEvent {
    /// Relative to the memory dir, `/`-separated.
    pub file: String,
    pub kind: MemoryDirEventKind,
    /// SHA-256 of the new content; `None` when removed.
    pub content_hash: Option<String>,
    /// The history version recorded for the change, when history is recorded and the change was
    /// new to it.
    pub version: Option<String>,
}

/// Tuning of [`Engine::watch_memory_dir`].
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Quiet time that ends a burst.
    pub debounce: Duration,
    /// Longest a burst is held back, so a file rewritten continuously still shows up.
    pub max_delay: Duration,
    /// Record external changes in history (and bring history up to date when watching starts).
    pub record_history: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(200),
            max_delay: Duration::from_secs(2),
            record_history: true,
        }
    }
}

/// A running watch; dropping it stops the watcher and waits for its thread.
pub struct MemoryDirWatch {
    root: PathBuf,
    watcher: Option<RecommendedWatcher>,
    control: mpsc::Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl MemoryDirWatch {
    /// The watched dir, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl std::fmt::Debug for MemoryDirWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryDirWatch")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Drop for MemoryDirWatch {
    fn drop(&mut self) {
        drop(self.watcher.take());
        // A send error means the thread is already gone.
        let _ = self.control.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            if thread.thread().id() != thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

enum Message {
    Raw(notify::Result<notify::Event>),
    Stop,
}

impl Engine {
    /// Watches `memory_dir` recursively and calls `on_batch` (on the watcher's own thread) with
    /// each non-empty batch of changes. With `record_history`, history is first brought up to date
    /// ([`Engine::baseline_history`]) and each external change is recorded as `external`.
    /// The dir must exist.
    pub fn watch_memory_dir<F>(
        &self,
        memory_dir: &Path,
        options: WatchOptions,
        on_batch: F,
    ) -> Result<MemoryDirWatch>
    where
        F: FnMut(Vec<MemoryDirEvent>) + Send + 'static,
    {
        let root =
            crate::platform::fs::canonicalize(memory_dir).map_err(|e| Error::io(memory_dir, e))?;

        // Watch first, then take stock: a change landing in between is both in the stock and
        // queued as an event, never in neither.
        let (sender, receiver) = mpsc::channel();
        let raw = sender.clone();
        let mut watcher = notify::recommended_watcher(move |event| {
            // The receiver is gone only while the watch is being dropped.
            let _ = raw.send(Message::Raw(event));
        })
        .map_err(|e| notify_error(&root, e))?;
        watcher
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|e| notify_error(&root, e))?;
        let known = if options.record_history {
            // Compare against what history holds, so that whatever the disk does from the
            // baseline on is both reported and recorded.
            self.baseline(&root)?.1
        } else {
            snapshot(&root)?
        };

        let state = WatchState {
            engine: self.clone(),
            root: root.clone(),
            options,
            known,
        };
        let thread = thread::Builder::new()
            .name("engram-watch".to_owned())
            .spawn(move || state.run(receiver, on_batch))
            .map_err(|e| Error::io(&root, e))?;
        Ok(MemoryDirWatch {
            root,
            watcher: Some(watcher),
            control: sender,
            thread: Some(thread),
        })
    }
}

fn notify_error(root: &Path, error: notify::Error) -> Error {
    match error.kind {
        notify::ErrorKind::Io(source) => Error::io(root, source),
        _ => Error::Io {
            path: root.to_path_buf(),
            source: std::io::Error::other(error.to_string()),
        },
    }
}

/// Content hash of every memory file under `root`, by key. Files that vanish or cannot be read
/// during the walk are left out (the next event about them sets things right).
fn snapshot(root: &Path) -> Result<BTreeMap<String, String>> {
    let mut known = BTreeMap::new();
    for key in memory_files(root)? {
        if let Ok(bytes) = std::fs::read(root.join(&key)) {
            known.insert(key, content_hash(&bytes));
        }
    }
    Ok(known)
}

/// The watcher thread's state.
struct WatchState {
    engine: Engine,
    root: PathBuf,
    options: WatchOptions,
    /// Last seen content hash of each existing memory file.
    known: BTreeMap<String, String>,
}

/// Raw events gathered during one burst.
#[derive(Default)]
struct Burst {
    /// Touched paths, relative to the root.
    paths: BTreeSet<PathBuf>,
    /// The platform lost events (queue overflow) or reported an error: compare everything.
    rescan: bool,
}

impl Burst {
    fn add(&mut self, root: &Path, raw: notify::Result<notify::Event>) {
        match raw {
            Ok(event) => {
                if event.need_rescan() {
                    self.rescan = true;
                }
                for path in event.paths {
                    match path.strip_prefix(root) {
                        Ok(relative) => {
                            self.paths.insert(relative.to_path_buf());
                        }
                        // An event outside the root (platform quirk): compare everything.
                        Err(_) => self.rescan = true,
                    }
                }
            }
            Err(_) => self.rescan = true,
        }
    }
}

impl WatchState {
    fn run<F>(mut self, receiver: mpsc::Receiver<Message>, mut on_batch: F)
    where
        F: FnMut(Vec<MemoryDirEvent>),
    {
        loop {
            let mut burst = Burst::default();
            match receiver.recv() {
                Ok(Message::Raw(raw)) => burst.add(&self.root, raw),
                Ok(Message::Stop) | Err(_) => return,
            }
            let started = Instant::now();
            let mut last = started;
            loop {
                let deadline = (last + self.options.debounce).min(started + self.options.max_delay);
                let Some(wait) = deadline.checked_duration_since(Instant::now()) else {
                    break;
                };
                match receiver.recv_timeout(wait) {
                    Ok(Message::Raw(raw)) => {
                        burst.add(&self.root, raw);
                        last = Instant::now();
                    }
                    Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                    Err(RecvTimeoutError::Timeout) => break,
                }
            }
            let events = self.settle(burst);
            if !events.is_empty() {
                on_batch(events);
            }
        }
    }

    /// Compares the files a burst touched with what the watcher knew, and turns the differences
    /// that are not echoes into events (recording them in history).
    fn settle(&mut self, burst: Burst) -> Vec<MemoryDirEvent> {
        let mut candidates: BTreeSet<String> = BTreeSet::new();
        if burst.rescan {
            candidates.extend(self.known.keys().cloned());
            candidates.extend(memory_files(&self.root).unwrap_or_default());
        } else {
            for relative in &burst.paths {
                let Some(key) = relative_key(relative) else {
                    continue;
                };
                let absolute = self.root.join(relative);
                // A directory (created, moved in or out, removed): compare everything under it.
                let prefix = format!("{key}/");
                if absolute.is_dir() || self.known.keys().any(|k| k.starts_with(&prefix)) {
                    candidates.extend(
                        self.known
                            .keys()
                            .filter(|k| k.starts_with(&prefix))
                            .cloned(),
                    );
                    if absolute.is_dir() {
                        candidates.extend(
                            memory_files(&absolute)
                                .unwrap_or_default()
                                .into_iter()
                                .map(|k| format!("{prefix}{k}")),
                        );
                    }
                }
                if is_memory_file_key(&key) {
                    candidates.insert(key);
                }
            }
        }

        let mut changes = Vec::new();
        for key in candidates {
            let path = self.root.join(&key);
            let bytes = std::fs::read(&path).ok().filter(|_| path.is_file());
            let hash = bytes.as_deref().map(content_hash);
            let previous = self.known.get(&key).cloned();
            let kind = match (&previous, &hash) {
                (None, None) => continue,
                (Some(previous), Some(hash)) if previous == hash => continue,
                (None, Some(_)) => MemoryDirEventKind::Created,
                (Some(_), Some(_)) => MemoryDirEventKind::Modified,
                (Some(_), None) => MemoryDirEventKind::Removed,
            };
            match &hash {
                Some(hash) => self.known.insert(key.clone(), hash.clone()),
                None => self.known.remove(&key),
            };
            if self.engine.echo_registry().take(&path, hash.as_deref()) {
                continue;
            }
            changes.push(Observed {
                file: key,
                kind,
                hash,
                previous,
                content: bytes,
            });
        }

        let versions = if self.options.record_history {
            self.record(&changes)
        } else {
            vec![None; changes.len()]
        };
        changes
            .into_iter()
            .zip(versions)
            .map(|(observed, version)| MemoryDirEvent {
                file: observed.file,
                kind: observed.kind,
                content_hash: observed.hash,
                version,
            })
            .collect()
    }

    /// Records external changes; returns the new version id per change. History being unusable
    /// must not stop live updates, so a failure only leaves the events without versions.
    ///
    /// While another process (Claude Code) holds the memory dir's consolidation lock, what
    /// changes is its dream: recorded as `claude-dream`, and gathered into one record per dream
    /// (a staged change set, already applied) that the person can review and undo as a unit.
    fn record(&self, changes: &[Observed]) -> Vec<Option<String>> {
        let foreign_dream = self.foreign_dream();
        let record_id = foreign_dream
            .as_deref()
            .and_then(|key| self.engine.claude_dream_record(&self.root, key).ok());
        let actor = if record_id.is_some() {
            Actor::ClaudeDream
        } else {
            Actor::External
        };
        let mut slots = vec![None; changes.len()];
        let mut pending = Vec::new();
        let mut indices = Vec::new();
        for (i, observed) in changes.iter().enumerate() {
            let content = match &observed.content {
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => Some(text),
                    // Not text, so not a memory Claude Code can read: nothing to keep.
                    Err(_) => continue,
                },
                None => None,
            };
            pending.push(PendingVersion {
                file: &observed.file,
                content,
                actor,
                summary: None,
            });
            indices.push(i);
        }
        if let Ok(versions) =
            self.engine
                .record_versions_of(&self.root, &pending, record_id.as_deref())
        {
            for (&i, version) in indices.iter().zip(versions) {
                slots[i] = version.map(|v| v.version);
            }
        }
        if let Some(id) = &record_id {
            let observed: Vec<ObservedChange> = indices
                .iter()
                .map(|&i| {
                    let change = &changes[i];
                    ObservedChange {
                        file: change.file.clone(),
                        before: change
                            .previous
                            .as_deref()
                            .and_then(|hash| self.engine.blob_text(hash).ok()),
                        after: change
                            .content
                            .as_deref()
                            .and_then(|bytes| std::str::from_utf8(bytes).ok())
                            .map(str::to_owned),
                        version: slots[i].clone(),
                    }
                })
                .collect();
            let _ = self.engine.add_to_claude_dream(id, observed);
        }
        slots
    }

    /// The key of the dream another process runs on this dir now (its lock's holder and start),
    /// or `None`: no lock held, or held by an Engram dream (which records its own changes).
    fn foreign_dream(&self) -> Option<String> {
        let lock = crate::dream::lock::inspect(&self.root).ok()?;
        if !lock.is_held(self.engine.clock().now()) {
            return None;
        }
        let pid = lock.pid?;
        if pid == std::process::id() || self.engine.is_engram_dream(pid) {
            return None;
        }
        Some(format!("{pid}-{}", lock.mtime_ms.unwrap_or(0)))
    }
}

/// A change the watcher found in a memory file, before it becomes an event.
struct Observed {
    file: String,
    kind: MemoryDirEventKind,
    hash: Option<String>,
    /// The hash the watcher knew before this change.
    previous: Option<String>,
    /// `None` when removed.
    content: Option<Vec<u8>>,
}

/// A relative path as a `/`-separated key; `None` if it is not plain UTF-8 components.
fn relative_key(relative: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            _ => return None,
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

impl crate::memdir::MemoryDir {
    /// Watches this memory dir for the app's live view: debounced batches of typed events, own
    /// writes left out, external changes recorded in history as `external` (history is first
    /// brought up to date). A dir that does not exist yet — a project Claude Code has not written
    /// a memory for — is created empty first (as Claude Code itself does before its first write),
    /// so the first memory is seen arriving.
    pub fn watch<F>(&self, options: WatchOptions, on_batch: F) -> Result<MemoryDirWatch>
    where
        F: FnMut(Vec<MemoryDirEvent>) + Send + 'static,
    {
        crate::disk::create_dir_all(self.root()).map_err(|e| Error::io(self.root(), e))?;
        self.engine()
            .watch_memory_dir(self.root(), options, on_batch)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::mpsc::Receiver;

    use super::*;
    use crate::changeset::ChangeSet;
    use crate::testing::fixtures::TempMemoryDir;

    /// Generous: the machine is shared and busy; tests only wait this long when they fail.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// Watches the fixture's memory dir; the receiver gets each batch of events.
    fn watch(
        fx: &TempMemoryDir,
        options: WatchOptions,
    ) -> (MemoryDirWatch, Receiver<Vec<MemoryDirEvent>>) {
        let (sender, receiver) = mpsc::channel();
        let watch = fx
            .engine
            .watch_memory_dir(&fx.root, options, move |batch| {
                let _ = sender.send(batch);
            })
            .expect("watch");
        (watch, receiver)
    }

    /// Collects batches until one holds an event for `file`; returns every event seen so far.
    fn events_until(receiver: &Receiver<Vec<MemoryDirEvent>>, file: &str) -> Vec<MemoryDirEvent> {
        events_until_matching(receiver, |e| e.file == file)
    }

    /// Collects batches until an event satisfies `wanted`; returns every event seen so far.
    fn events_until_matching(
        receiver: &Receiver<Vec<MemoryDirEvent>>,
        wanted: impl Fn(&MemoryDirEvent) -> bool,
    ) -> Vec<MemoryDirEvent> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        while !seen.iter().any(&wanted) {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("no such event in {PATIENCE:?}; saw {seen:?}"));
            match receiver.recv_timeout(left) {
                Ok(batch) => seen.extend(batch),
                Err(e) => panic!("no such event: {e}; saw {seen:?}"),
            }
        }
        seen
    }

    #[test]
    fn an_external_write_is_reported_and_recorded_as_external() {
        let fx = TempMemoryDir::new("memory");
        fs::write(fx.root.join("existing.md"), "before\n").expect("seed");
        let (_watch, receiver) = watch(&fx, WatchOptions::default());
        fs::write(fx.root.join("existing.md"), "after\n").expect("modify");
        fs::create_dir_all(fx.root.join("team")).expect("mkdir");
        fs::write(fx.root.join("team/new.md"), "new\n").expect("create");

        let mut seen = events_until(&receiver, "existing.md");
        if !seen.iter().any(|e| e.file == "team/new.md") {
            seen.extend(events_until(&receiver, "team/new.md"));
        }
        let existing = seen
            .iter()
            .find(|e| e.file == "existing.md")
            .expect("existing");
        assert_eq!(existing.kind, MemoryDirEventKind::Modified);
        assert_eq!(existing.content_hash, Some(content_hash(b"after\n")));
        let created = seen.iter().find(|e| e.file == "team/new.md").expect("new");
        assert_eq!(created.kind, MemoryDirEventKind::Created);

        let history = fx
            .engine
            .history(&fx.root, Some("existing.md"))
            .expect("history");
        let summary: Vec<(Actor, &str)> = history
            .iter()
            .map(|v| (v.actor, v.summary.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (Actor::External, "+1 \u{2212}1 lines"),
                (Actor::External, "created"),
            ],
            "the baseline taken when watching started, then the change"
        );
        assert_eq!(
            existing.version.as_deref(),
            Some(history[0].version.as_str())
        );
    }

    #[test]
    fn engram_s_own_writes_are_not_echoed_back() {
        let fx = TempMemoryDir::new("memory");
        fs::write(fx.root.join("a.md"), "one\n").expect("seed");
        let (_watch, receiver) = watch(&fx, WatchOptions::default());

        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "two\n".to_owned(), "r")
            .expect("stage");
        set.stage_write("b.md", "new\n".to_owned(), "r")
            .expect("stage");
        fx.engine
            .apply_change_set(&set, Actor::Dream)
            .expect("apply");
        // Events arrive in order, so once this one is seen the echoes would have been too.
        fs::write(fx.root.join("sentinel.md"), "external\n").expect("sentinel");

        let seen = events_until(&receiver, "sentinel.md");
        let files: Vec<&str> = seen.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            vec!["sentinel.md"],
            "own writes were reported: {seen:?}"
        );
        assert_eq!(
            fx.actors("a.md"),
            vec![Actor::Dream, Actor::External],
            "no external duplicate"
        );
    }

    #[test]
    fn a_daily_log_line_written_by_engram_is_its_own_write_not_an_external_change() {
        let fx = TempMemoryDir::new("memory");
        let (_watch, receiver) = watch(&fx, WatchOptions::default());
        let dir = fx.engine.memory_dir(&fx.root);
        let log = dir.append_log("first").expect("log");
        dir.append_log("second").expect("log again");
        fs::write(fx.root.join("sentinel.md"), "external\n").expect("sentinel");

        let seen = events_until(&receiver, "sentinel.md");
        let files: Vec<&str> = seen.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(files, vec!["sentinel.md"], "the log was reported: {seen:?}");
        let rel = log
            .strip_prefix(&fx.root)
            .expect("inside")
            .to_str()
            .expect("utf-8")
            .to_owned();
        assert_eq!(
            fx.actors(&rel),
            vec![Actor::User, Actor::User],
            "each append is recorded as the user's, none as external"
        );
    }

    #[test]
    fn claude_code_s_own_dream_is_recorded_as_one_batch_and_undone_as_one() {
        let fx = TempMemoryDir::new("projects/-home-u-app/memory");
        fx.write(
            "MEMORY.md",
            "- [A](a.md) \u{2014} a\n- [B](b.md) \u{2014} b\n",
        );
        fx.write("a.md", "alpha, yesterday\n");
        fx.write("b.md", "beta\n");
        let before = (fx.read("MEMORY.md"), fx.read("a.md"), fx.read("b.md"));
        let (_watch, receiver) = watch(&fx, WatchOptions::default());

        // Claude Code takes the lock (its PID, mtime now) and rewrites two files, deletes one.
        let mut claude = crate::testing::child::live();
        let lock = fx.root.join(crate::dream::lock::LOCK_FILE);
        fs::write(&lock, claude.id().to_string()).expect("lock");
        fs::File::options()
            .write(true)
            .open(&lock)
            .and_then(|f| {
                f.set_times(fs::FileTimes::new().set_modified(crate::clock::Clock::now(&fx.clock)))
            })
            .expect("mtime");
        fs::write(fx.root.join("a.md"), "alpha, on 2026-11-17\n").expect("rewrite");
        fs::remove_file(fx.root.join("b.md")).expect("delete");
        fs::write(fx.root.join("MEMORY.md"), "- [A](a.md) \u{2014} a\n").expect("index");
        events_until_matching(&receiver, |e| e.file == "MEMORY.md");
        claude.kill().expect("kill");
        claude.wait().expect("wait");

        assert_eq!(
            fx.actors("a.md")[0],
            Actor::ClaudeDream,
            "{:?}",
            fx.actors("a.md")
        );
        let record = fx
            .engine
            .staged_change_sets()
            .expect("sets")
            .into_iter()
            .find(|s| s.source == crate::staging::ChangeSource::ClaudeDream)
            .expect("a record of Claude's dream");
        let mut files: Vec<&str> = record
            .files
            .iter()
            .map(|f| f.change.file.as_str())
            .collect();
        files.sort();
        assert_eq!(files, vec!["MEMORY.md", "a.md", "b.md"]);
        assert!(
            fx.engine.history(&fx.root, Some("a.md")).expect("history")[0]
                .change_set
                .as_deref()
                .is_some_and(|id| id == record.id)
        );

        fx.engine
            .undo_staged(&record.id, Some(&fx.root))
            .expect("undo Claude's dream");
        assert_eq!(
            (fx.read("MEMORY.md"), fx.read("a.md"), fx.read("b.md")),
            before
        );
    }

    #[test]
    fn an_external_change_right_after_an_own_write_is_still_reported() {
        let fx = TempMemoryDir::new("memory");
        let (_watch, receiver) = watch(&fx, WatchOptions::default());
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "engram\n".to_owned(), "r")
            .expect("stage");
        fx.engine
            .apply_change_set(&set, Actor::User)
            .expect("apply");
        fs::write(fx.root.join("a.md"), "claude\n").expect("overwrite");

        // A slow writer may be caught half-way (fs::write truncates first), so wait for the
        // final content rather than taking the first event.
        let claude = Some(content_hash(b"claude\n"));
        let seen =
            events_until_matching(&receiver, |e| e.file == "a.md" && e.content_hash == claude);
        let history = fx.engine.history(&fx.root, Some("a.md")).expect("history");
        assert_eq!(history[0].actor, Actor::External, "{seen:?}");
        assert_eq!(history[0].hash, claude);
    }

    #[test]
    fn a_burst_of_writes_is_one_event_per_file() {
        let fx = TempMemoryDir::new("memory");
        let options = WatchOptions {
            debounce: Duration::from_millis(300),
            ..WatchOptions::default()
        };
        let (_watch, receiver) = watch(&fx, options);
        for i in 0..20 {
            fs::write(fx.root.join("busy.md"), format!("revision {i}\n")).expect("write");
            fs::write(fx.root.join("other.md"), format!("other {i}\n")).expect("write");
        }
        fs::write(fx.root.join(".a.md.engram-1-0.tmp"), "temp").expect("temp");
        fs::write(fx.root.join("notes.txt"), "not memory").expect("txt");

        let mut seen = events_until(&receiver, "busy.md");
        if !seen.iter().any(|e| e.file == "other.md") {
            seen.extend(events_until(&receiver, "other.md"));
        }
        fs::write(fx.root.join("sentinel.md"), "end\n").expect("sentinel");
        seen.extend(events_until(&receiver, "sentinel.md"));
        let busy: Vec<&MemoryDirEvent> = seen.iter().filter(|e| e.file == "busy.md").collect();
        assert_eq!(busy.len(), 1, "coalesced: {seen:?}");
        assert_eq!(busy[0].kind, MemoryDirEventKind::Created);
        assert_eq!(busy[0].content_hash, Some(content_hash(b"revision 19\n")));
        assert_eq!(seen.iter().filter(|e| e.file == "other.md").count(), 1);
        assert!(
            seen.iter()
                .all(|e| e.file.ends_with(".md") && !e.file.starts_with('.')),
            "temp and non-memory files are ignored: {seen:?}"
        );
    }

    #[test]
    fn removing_a_directory_reports_each_file_it_held() {
        let fx = TempMemoryDir::new("memory");
        fs::create_dir_all(fx.root.join("team/sub")).expect("mkdir");
        fs::write(fx.root.join("team/a.md"), "a\n").expect("seed");
        fs::write(fx.root.join("team/sub/b.md"), "b\n").expect("seed");
        let (_watch, receiver) = watch(&fx, WatchOptions::default());
        fs::remove_dir_all(fx.root.join("team")).expect("remove");

        let mut seen = events_until(&receiver, "team/a.md");
        if !seen.iter().any(|e| e.file == "team/sub/b.md") {
            seen.extend(events_until(&receiver, "team/sub/b.md"));
        }
        assert!(
            seen.iter()
                .all(|e| e.kind == MemoryDirEventKind::Removed && e.content_hash.is_none()),
            "{seen:?}"
        );
        let latest = fx
            .engine
            .history(&fx.root, Some("team/sub/b.md"))
            .expect("history");
        assert_eq!(latest[0].summary, "deleted");
    }

    #[test]
    fn dropping_the_handle_stops_the_watcher() {
        let fx = TempMemoryDir::new("memory");
        let (watch, receiver) = watch(&fx, WatchOptions::default());
        drop(watch);
        fs::write(fx.root.join("late.md"), "after the drop\n").expect("write");
        // The callback (and with it the sender) is gone once drop returns: the channel reports
        // disconnection instead of a batch.
        assert_eq!(
            receiver.recv_timeout(PATIENCE),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn watching_a_missing_dir_is_not_found() {
        let fx = TempMemoryDir::new("memory");
        let err = fx
            .engine
            .watch_memory_dir(&fx.root.join("nope"), WatchOptions::default(), |_| {})
            .expect_err("missing");
        assert_eq!(err.kind(), crate::error::ErrorKind::NotFound);
    }

    #[test]
    fn a_memory_dir_not_created_yet_is_watched_from_its_first_memory() {
        let fx = TempMemoryDir::new("memory");
        let dir = fx.engine.memory_dir(fx.root.join("projects/-new/memory"));
        let (sender, receiver) = mpsc::channel();
        let _watch = dir
            .watch(WatchOptions::default(), move |batch| {
                let _ = sender.send(batch);
            })
            .expect("watch a dir that does not exist yet");
        fs::write(dir.root().join("first.md"), "first\n").expect("Claude writes");
        let seen = events_until(&receiver, "first.md");
        let event = seen.iter().find(|e| e.file == "first.md").expect("event");
        assert_eq!(event.kind, MemoryDirEventKind::Created);
        let version = fx
            .engine
            .find_version(event.version.as_deref().expect("recorded"))
            .expect("version");
        assert_eq!(version.actor, Actor::External);
        assert_eq!(dir.history(None).expect("history").len(), 1);
    }
}
