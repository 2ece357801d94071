//! `engram stranded`: memory no Claude Code session will load any more — a dir keyed on an old
//! worktree path, a moved project's, agent memory under a sub-directory — with its files and where
//! that memory lives now; `--json` prints `[{"kind", "dir", "files", "live", "project"}]`.
//! `engram stranded merge DIR [--into DIR]` stages merging it into the live store, for
//! `engram changes` (nothing lands until accepted; the stranded store is kept).

use std::path::PathBuf;

use memory_engine::stranded::{StrandedKind, StrandedStore};
use memory_engine::{Error, Result};

use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<StrandedCommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum StrandedCommand {
    /// Stage merging a stranded store into the live one
    Merge {
        /// The stranded dir (as `engram stranded` lists it)
        dir: PathBuf,
        /// The memory dir to merge into [default: where that memory lives now]
        #[arg(long, value_name = "DIR")]
        into: Option<PathBuf>,
    },
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let stores = context.engine.stranded_stores()?;
    let Some(StrandedCommand::Merge { dir, into }) = args.command else {
        if context.json() {
            output::print_json(&stores)?;
        } else if stores.is_empty() {
            output::print("no stranded memory\n");
        } else {
            let mut text = String::new();
            for store in &stores {
                text.push_str(&describe(store));
            }
            text.push_str(
                "merge one into the memory in use (staged for review): engram stranded merge DIR \
                 [--into DIR]\n",
            );
            output::print(&text);
        }
        return Ok(Status::Success);
    };
    let store = stores.iter().find(|s| s.dir == dir).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{}: not a stranded store (see `engram stranded`)",
            dir.display()
        ))
    })?;
    let into = into.or_else(|| store.live.clone()).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{}: where its memory lives now is unknown; give --into DIR",
            dir.display()
        ))
    })?;
    // Filed under the project whose live dir it is, as Claude Code resolves it, so that
    // `engram changes apply` derives that dir again; a moved project's goes by its new folder.
    let project = match store.project.as_ref().filter(|_| store.live.is_some()) {
        Some(cwd) => context.engine.resolve_memory_dir(cwd)?.project_name(),
        None => super::staged_project_name(&into),
    };
    match context.engine.stage_stranded_merge(&dir, &into, &project)? {
        Some(set) if context.json() => output::print_json(&set)?,
        Some(set) => output::print(&format!(
            "{}\nreview it: engram changes show {}\n",
            set.summary, set.id
        )),
        None => output::print("nothing to merge: the live store has it all\n"),
    }
    Ok(Status::Success)
}

/// One stranded store as a line: what it is, where, how many files, and where its memory
/// lives now (or why that is unknown).
fn describe(store: &StrandedStore) -> String {
    let kind = match store.kind {
        StrandedKind::OldWorktreeKey => "old worktree key",
        StrandedKind::MovedProject => "moved project",
        StrandedKind::AgentMemoryInSubdirectory => "agent memory in a sub-directory",
    };
    let files = match store.files.len() {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    let now = match (&store.live, &store.project) {
        (Some(live), _) => format!(" → now {}", live.display()),
        (None, Some(project)) => format!(
            "; {} is gone, and where it went is unknown: give --into DIR",
            project.display()
        ),
        (None, None) => String::new(),
    };
    format!("{kind}: {} ({files}){now}\n", store.dir.display())
}
