//! A demo Claude home, so the app has something real to show on a machine where Claude Code has
//! never run: genuine memory dirs and transcripts (a committed copy of the real-world fixtures,
//! see `demo/README.md`), embedded in the binary and laid out on demand.
//!
//! Layout (a Claude config home):
//! ```text
//! <dest>/
//!   .engram-demo                                 marker: this home is Engram's demo
//!   projects/-path-to-Demo/<uuid>.jsonl ×2       real transcripts (cwd /path/to/Demo)
//!   projects/-path-to-Demo/memory/…              written by Claude Code 2.1.330 (2 orphans)
//!   projects/-home-demo-stockerly/memory/…       a real sectioned index + 7 topic files
//! ```
//! Building is idempotent and never destructive: a file already there is left as it is (the
//! user's edits to the demo survive a restart), a missing one is written. Fresh files get
//! modification times spread over the past weeks, so staleness labels and caveats show as they
//! would on a real machine.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::disk;
use crate::engine::Engine;
use crate::error::{IoResultExt, Result};

/// The marker file at the root of a demo home.
pub const DEMO_MARKER: &str = ".engram-demo";

/// One embedded file: where it goes under the home, its content, and how many days old it is
/// made to look when first written.
struct DemoFile {
    path: &'static str,
    content: &'static str,
    age_days: u64,
}

macro_rules! demo_file {
    ($path:literal, $age:expr) => {
        DemoFile {
            path: $path,
            content: include_str!(concat!("../demo/", $path)),
            age_days: $age,
        }
    };
}

const DEMO_FILES: &[DemoFile] = &[
    demo_file!(
        "projects/-path-to-Demo/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        3
    ),
    demo_file!(
        "projects/-path-to-Demo/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        1
    ),
    demo_file!("projects/-path-to-Demo/memory/MEMORY.md", 1),
    demo_file!("projects/-path-to-Demo/memory/deploy-freeze.md", 1),
    demo_file!("projects/-path-to-Demo/memory/hook-test.md", 0),
    demo_file!("projects/-path-to-Demo/memory/prefers-tabs-default.md", 3),
    demo_file!("projects/-home-demo-stockerly/memory/MEMORY.md", 6),
    demo_file!("projects/-home-demo-stockerly/memory/user_adrian.md", 41),
    demo_file!("projects/-home-demo-stockerly/memory/project_vision.md", 12),
    demo_file!(
        "projects/-home-demo-stockerly/memory/project_decision.md",
        9
    ),
    demo_file!(
        "projects/-home-demo-stockerly/memory/project_working_method.md",
        6
    ),
    demo_file!(
        "projects/-home-demo-stockerly/memory/project_expert_panel_v2.md",
        20
    ),
    demo_file!(
        "projects/-home-demo-stockerly/memory/feedback_brutal_honesty.md",
        41
    ),
    demo_file!(
        "projects/-home-demo-stockerly/memory/feedback_anti_patterns.md",
        2
    ),
];

impl Engine {
    /// Where the app keeps its demo home: `<engram home>/demo-home`.
    pub fn demo_home_dir(&self) -> PathBuf {
        self.engram_home().join("demo-home")
    }

    /// [`Engine::build_demo_home`] at [`Engine::demo_home_dir`].
    pub fn ensure_demo_home(&self) -> Result<PathBuf> {
        self.build_demo_home(&self.demo_home_dir())
    }

    /// Lays out the demo Claude home at `dest` (creating it) and returns `dest`. Files already
    /// there are kept as they are; missing ones are written (atomically) with their demo age.
    pub fn build_demo_home(&self, dest: &Path) -> Result<PathBuf> {
        crate::disk::create_dir_all(dest).at(dest)?;
        let now = self.clock().now();
        for file in DEMO_FILES {
            let path = dest.join(file.path);
            if fs::symlink_metadata(&path).is_ok() {
                continue;
            }
            disk::atomic_write(&path, file.content.as_bytes())?;
            let modified = now
                .checked_sub(Duration::from_secs(file.age_days * 86_400))
                .unwrap_or(SystemTime::UNIX_EPOCH);
            fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(modified))
                .at(&path)?;
        }
        let marker = dest.join(DEMO_MARKER);
        if !marker.exists() {
            disk::atomic_write(
                &marker,
                b"Engram's demo Claude home, built from real Claude Code files. Safe to delete.\n",
            )?;
        }
        Ok(dest.to_path_buf())
    }
}

/// Whether `claude_home` is a demo home laid out by [`Engine::build_demo_home`].
pub fn is_demo_home(claude_home: &Path) -> bool {
    claude_home.join(DEMO_MARKER).is_file()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::environment::Environment;
    use crate::lint::ORPHAN_FILE;
    use crate::testing::fixtures::REAL_FIXTURES;
    use crate::FixedClock;

    const NOW: u64 = 1_800_000_000;

    fn engine(temp: &Path) -> Engine {
        Engine::builder(Environment::empty())
            .clock(Arc::new(FixedClock::new(
                SystemTime::UNIX_EPOCH + Duration::from_secs(NOW),
            )))
            .engram_home(temp.join("engram"))
            .build()
    }

    #[test]
    fn the_embedded_files_are_the_real_fixtures_byte_for_byte() {
        for file in DEMO_FILES {
            let fixture = match file.path.split_once("/memory/") {
                Some(("projects/-path-to-Demo", name)) => {
                    format!("memory/claude-code-2.1.330/{name}")
                }
                Some(("projects/-home-demo-stockerly", name)) => format!("memory/stockerly/{name}"),
                _ => format!("claude-home/{}", file.path),
            };
            let real =
                fs::read_to_string(Path::new(REAL_FIXTURES).join(&fixture)).expect("fixture");
            assert!(real == file.content, "{} differs from {fixture}", file.path);
        }
    }

    #[test]
    fn the_demo_home_is_a_claude_home_the_engine_reads_like_any_other() {
        let temp = tempfile::tempdir().expect("temp");
        let home = engine(temp.path()).ensure_demo_home().expect("build");
        assert_eq!(home, temp.path().join("engram/demo-home"));
        assert!(is_demo_home(&home));

        let viewer = Engine::builder(Environment::empty())
            .claude_home(&home)
            .clock(Arc::new(FixedClock::new(
                SystemTime::UNIX_EPOCH + Duration::from_secs(NOW),
            )))
            .build();
        let projects = viewer.list_projects().expect("projects");
        let names: Vec<(&str, usize, usize)> = projects
            .iter()
            .map(|p| (p.name.as_str(), p.memory_files, p.sessions))
            .collect();
        assert_eq!(
            names,
            [("-path-to-Demo", 3, 2), ("-home-demo-stockerly", 7, 0)],
            "most recently active first"
        );
        assert_eq!(
            projects[0].path.as_deref(),
            Some(Path::new("/path/to/Demo"))
        );

        let demo = viewer.memory_dir(&projects[0].memory_dir);
        let headers = demo.scan(None).expect("scan");
        let ages: Vec<(&str, &str)> = headers
            .iter()
            .map(|h| (h.file.as_str(), h.age.as_str()))
            .collect();
        assert_eq!(
            ages,
            [
                ("hook-test.md", "today"),
                ("deploy-freeze.md", "yesterday"),
                ("prefers-tabs-default.md", "3 days ago"),
            ]
        );
        let orphans = demo.lint().expect("lint").by_rule(ORPHAN_FILE).count();
        assert_eq!(orphans, 2, "something for the fix view to show");
    }

    #[test]
    fn building_again_keeps_the_user_s_edits_and_restores_what_is_missing() {
        let temp = tempfile::tempdir().expect("temp");
        let engine = engine(temp.path());
        let home = engine.ensure_demo_home().expect("build");
        let edited = home.join("projects/-path-to-Demo/memory/deploy-freeze.md");
        let removed = home.join("projects/-home-demo-stockerly/memory/user_adrian.md");
        fs::write(&edited, "my edit\n").expect("edit");
        fs::remove_file(&removed).expect("remove");

        engine.ensure_demo_home().expect("build again");
        assert_eq!(fs::read_to_string(&edited).expect("read"), "my edit\n");
        assert!(fs::read_to_string(&removed)
            .expect("restored")
            .contains("name: Adrian profile"));
    }
}
