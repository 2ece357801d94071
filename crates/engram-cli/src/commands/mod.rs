//! The subcommands, one module each, and what they share: the global flags and the [`Context`]
//! that turns them into an engine and a memory dir.

pub mod agents;
pub mod changes;
pub mod dream;
pub mod extract;
pub mod forget;
pub mod generate;
pub mod history;
pub mod hook;
pub mod hooks;
pub mod index;
pub mod lint;
pub mod log;
pub mod mcp;
pub mod models;
pub mod projects;
pub mod recall;
pub mod remember;
pub mod revert;
pub mod scan;
pub mod search;
pub mod secrets;
pub mod session_memory;
pub mod sessions;
pub mod show;
pub mod stranded;
pub mod sync;
pub mod team;
pub mod transcript;
pub mod usage;
pub mod r#where;

use std::path::{Path, PathBuf};

use memory_engine::environment::default_managed_settings_sources;
use memory_engine::paths::normalize_lexically;
use memory_engine::{Engine, Environment, Error, MemoryDir, MemoryDirResolution, Result};

use crate::output;

/// Flags every subcommand accepts (before or after its name).
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Claude Code's config dir [default: $CLAUDE_CONFIG_DIR, else ~/.claude]
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    pub claude_dir: Option<PathBuf>,
    /// The project whose memory to use, resolved as Claude Code resolves it [default: the
    /// current directory]
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        help_heading = "Global options"
    )]
    pub project: Option<PathBuf>,
    /// Use this memory dir directly instead of resolving one from the project
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    pub memory_dir: Option<PathBuf>,
    /// Print machine-readable JSON (camelCase keys)
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
}

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    /// The command ran, and what it checked has errors (`lint`): exit code 1.
    Findings,
    /// The job it ran failed (a dream): exit code 1.
    Failed,
    /// The job it ran was killed (SIGINT/SIGTERM): exit code 130.
    Killed,
}

/// The engine plus the global flags, shared by every command.
pub struct Context {
    pub engine: Engine,
    pub global: GlobalArgs,
}

impl Context {
    pub fn new(global: GlobalArgs, env: Environment) -> Context {
        let sources = default_managed_settings_sources(&env);
        let mut builder = Engine::builder(env).managed_sources(sources);
        if let Some(dir) = &global.claude_dir {
            builder = builder.claude_home(absolute(dir));
        }
        Context {
            engine: builder.build(),
            global,
        }
    }

    pub fn json(&self) -> bool {
        self.global.json
    }

    /// The project directory: `--project` (made absolute), else the current directory.
    pub fn project(&self) -> Result<PathBuf> {
        match &self.global.project {
            Some(path) => Ok(absolute(path)),
            None => std::env::current_dir().map_err(|e| Error::io(".", e)),
        }
    }

    /// Resolves the project's memory dir as Claude Code would, reporting settings files that
    /// had to be skipped on stderr.
    pub fn resolution(&self) -> Result<MemoryDirResolution> {
        let resolution = self.engine.resolve_memory_dir(&self.project()?)?;
        for warning in &resolution.warnings {
            output::warning_line(warning);
        }
        Ok(resolution)
    }

    /// The memory dir to read: like [`Context::memory_dir`], but an explicit `--memory-dir`
    /// that does not exist is named as missing (a typo must not read as "no memories"). A
    /// project's own memory dir may not exist yet: Claude Code creates it at its first write.
    pub fn existing_memory_dir(&self) -> Result<MemoryDir> {
        let dir = self.memory_dir()?;
        if self.global.memory_dir.is_some() && !dir.root().is_dir() {
            return Err(Error::NotFound(dir.root().to_path_buf()));
        }
        Ok(dir)
    }

    /// The project's directory name under `<claude dir>/projects/`, where Claude Code keeps its
    /// transcripts (keyed on the working directory, `FORMATS.md` §1).
    pub fn transcripts_project(&self) -> Result<String> {
        let dir = self.engine.transcripts_dir(&self.project()?);
        Ok(dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default())
    }

    /// The project a change set staged for the memory dir to work on is filed under, so that it
    /// can be applied later: the project's own name (as dreams name it, wherever its settings
    /// put its memory), or for `--memory-dir` the folder holding that dir.
    pub fn staged_project(&self) -> Result<String> {
        match self.named_memory_dir() {
            Some(dir) => Ok(staged_project_name(&dir)),
            None => Ok(self
                .engine
                .resolve_memory_dir(&self.project()?)?
                .project_name()),
        }
    }

    /// The memory dir given with `--memory-dir` (made absolute), if any.
    pub fn named_memory_dir(&self) -> Option<PathBuf> {
        self.global.memory_dir.as_deref().map(absolute)
    }

    /// The memory dir to work on: `--memory-dir`, else the project's resolved one.
    pub fn memory_dir(&self) -> Result<MemoryDir> {
        let root = match &self.global.memory_dir {
            Some(dir) => absolute(dir),
            None => self.resolution()?.memory_dir,
        };
        Ok(self.engine.memory_dir(root))
    }
}

/// The project name a change set staged for `memory_dir` is filed under in `engram changes`: the
/// folder holding it (`<base>/projects/<name>/memory`).
pub fn staged_project_name(memory_dir: &Path) -> String {
    memory_dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `path` joined onto the current directory when relative, with `.` and `..` resolved lexically
/// (as a shell would show it; symlinks are left for the engine to resolve where it matters).
fn absolute(path: &Path) -> PathBuf {
    let joined = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    normalize_lexically(&joined)
}
