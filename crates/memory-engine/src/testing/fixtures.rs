//! Files for tests of this crate and of the CLI: where the shared real-world Claude Code fixtures
//! are, writable copies of them, and a memory dir in a temp dir with an engine around it.
//!
//! The real fixtures (`shared/fixtures/real`) are read-only and never modified: a test that
//! writes works on a copy made by [`copy_tree`].

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::actor::Actor;
use crate::clock::FixedClock;
use crate::engine::Engine;
use crate::environment::Environment;
use crate::memdir::MemoryDir;

/// The real files: `memory/stockerly`, `memory/claude-code-2.1.330` (memory dirs) and
/// `claude-home` (a Claude config dir with the Demo project's transcripts).
pub const REAL_FIXTURES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/real");

/// A real memory dir by name (`stockerly`, `claude-code-2.1.330`), to read; copy it to write.
pub fn real_memory(name: &str) -> PathBuf {
    Path::new(REAL_FIXTURES).join("memory").join(name)
}

/// The real local embedding model's models dir: `ENGRAM_TEST_MODELS` (set by `make test`, so
/// there a missing model fails), else `None` and the caller skips.
pub fn test_models_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("ENGRAM_TEST_MODELS")?);
    assert!(
        dir.join(crate::embed::LOCAL_MODEL)
            .join("model.safetensors")
            .is_file(),
        "ENGRAM_TEST_MODELS={} has no {}: run scripts/setup.sh --test",
        dir.display(),
        crate::embed::LOCAL_MODEL
    );
    Some(dir)
}

/// Copies the tree at `from` into `to` (created, with its parents). Every copy is writable, even
/// from the read-only fixtures, and gets the copy time as its mtime.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("mkdir {}: {e}", to.display()));
    let entries = fs::read_dir(from).unwrap_or_else(|e| panic!("read dir {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("read dir {}: {e}", from.display()));
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&source, &target);
        } else {
            // Not `fs::copy`: it would carry the fixtures' read-only mode over.
            let bytes =
                fs::read(&source).unwrap_or_else(|e| panic!("read {}: {e}", source.display()));
            fs::write(&target, bytes).unwrap_or_else(|e| panic!("write {}: {e}", target.display()));
        }
    }
}

/// Writes `text` to `path`, creating its directories.
pub fn write_file(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Marks `folder` trusted in Claude Code's global config, as accepting its trust dialog does
/// (`projects[<real path>].hasTrustDialogAccepted`), keeping what the file held.
pub fn trust_workspace(engine: &Engine, folder: &Path) {
    let config = engine.claude_global_config_path();
    let mut value: serde_json::Value = fs::read_to_string(&config)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let folder = fs::canonicalize(folder).expect("the folder exists");
    value["projects"][folder.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] =
        serde_json::Value::Bool(true);
    write_file(&config, &value.to_string());
}

/// When a [`TempMemoryDir`]'s clock starts: 2026-11-18T11:06:40.123Z.
pub const FIXED_NOW_MS: u64 = 1_795_000_000_123;

/// A memory dir in its own temp dir, and an engine on a fixed clock whose Engram home is
/// `<temp>/engram` — so history, backups and settings a test causes stay in the temp dir.
pub struct TempMemoryDir {
    pub temp: tempfile::TempDir,
    /// The memory dir, canonical (symlink-free), so it compares equal to what the engine and the
    /// watcher resolve.
    pub root: PathBuf,
    /// Starts at [`FIXED_NOW_MS`]; `set` or `advance` it to move the engine's time.
    pub clock: FixedClock,
    pub engine: Engine,
    /// The memory dir at `root`, through `engine`.
    pub dir: MemoryDir,
}

impl TempMemoryDir {
    /// An empty memory dir at `<temp>/<rel>` (e.g. `memory`, or `projects/-home-u-app/memory` for
    /// the layout of a Claude config dir).
    pub fn new(rel: &str) -> TempMemoryDir {
        let temp = tempfile::tempdir().expect("temp dir");
        let root = temp.path().join(rel);
        fs::create_dir_all(&root).expect("memory dir");
        let root = root.canonicalize().expect("canonical memory dir");
        let clock = FixedClock::new(SystemTime::UNIX_EPOCH + Duration::from_millis(FIXED_NOW_MS));
        let engine = Engine::builder(Environment::empty())
            .clock(Arc::new(clock.clone()))
            .engram_home(temp.path().join("engram"))
            .build();
        TempMemoryDir {
            dir: engine.memory_dir(&root),
            temp,
            root,
            clock,
            engine,
        }
    }

    /// A copy of the real memory dir `name` (see [`real_memory`]) at `<temp>/<rel>`.
    pub fn real(rel: &str, name: &str) -> TempMemoryDir {
        let fixture = TempMemoryDir::new(rel);
        copy_tree(&real_memory(name), &fixture.root);
        fixture
    }

    /// `file` (relative to the memory dir) as a path.
    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// Writes `file` (relative to the memory dir), creating its directories.
    pub fn write(&self, file: &str, text: &str) {
        write_file(&self.path(file), text);
    }

    /// `file`'s text; `None` when it does not exist (or is not UTF-8).
    pub fn read(&self, file: &str) -> Option<String> {
        fs::read_to_string(self.path(file)).ok()
    }

    /// Who made each recorded version of `file`, newest first.
    /// An empty memory dir where Claude Code keeps a project's
    /// (`projects/-home-u-app/memory`).
    pub fn project() -> TempMemoryDir {
        TempMemoryDir::new("projects/-home-u-app/memory")
    }

    /// Records `content` (`None`: deleted) of `file` in history as `actor`.
    pub fn record(
        &self,
        file: &str,
        content: Option<&str>,
        actor: Actor,
    ) -> Option<crate::history::Version> {
        self.engine
            .record_version(&self.root, file, content, actor)
            .expect("record")
    }

    pub fn actors(&self, file: &str) -> Vec<Actor> {
        self.engine
            .history(&self.root, Some(file))
            .expect("history")
            .iter()
            .map(|v| v.actor)
            .collect()
    }
}

/// The vocabulary of the bench corpus (`bench/src/main.rs`) and of the engine's synthetic notes.
/// Notes drawn from one small vocabulary all look alike — the
/// hard case for the duplicate rule, which must tell near-duplicates from notes sharing words.
pub const VOCABULARY: [&str; 24] = [
    "deploy",
    "tests",
    "database",
    "review",
    "release",
    "cache",
    "schema",
    "latency",
    "budget",
    "migration",
    "frontend",
    "tokens",
    "backup",
    "incident",
    "pricing",
    "search",
    "queue",
    "auth",
    "invoice",
    "metrics",
    "mobile",
    "retry",
    "locale",
    "export",
];

/// A xorshift generator: the same pseudo-random text on every run.
pub struct Xorshift(pub u64);

impl Xorshift {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` words of [`VOCABULARY`], separated by spaces.
    pub fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| VOCABULARY[self.below(VOCABULARY.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}
