//! `engram changes list | show | apply | reject | undo`: the change sets dreams (and, later,
//! extraction and snapshot merges) staged for review. `list --json` prints `[{"id", "source",
//! "project", "createdAt", "status", "files": [{"file", "kind", "reason", "status",
//! "protected"}]}]`; `show ID --json` the whole set, diffs included. Applying from here is the
//! person's approval, so protected changes (deleting or rewriting a user or feedback memory) are
//! applied too; `apply` exits 1 when a file it was asked to apply is left in conflict or failed
//! (the set is printed all the same). A set is applied, undone or rejected only in the memory dir derived from its
//! project — or, for one staged with `--memory-dir`, in the dir named again with `--memory-dir`.

use memory_engine::changeset::ChangeKind;
use memory_engine::staging::{FileStatus, StagedChangeSet};
use memory_engine::Result;
use serde::Serialize;

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ChangesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ChangesCommand {
    /// Every staged change set, newest first.
    List,
    /// One change set with its diffs.
    Show {
        /// The change set, as `engram changes list` names it (e.g. c0a1b2c3d)
        id: String,
    },
    /// Apply the waiting files of a change set (all, or those named with --file).
    Apply {
        id: String,
        /// Only this file (relative to the memory dir); repeatable
        #[arg(long = "file", value_name = "FILE")]
        files: Vec<String>,
    },
    /// Reject the waiting files of a change set (all, or those named with --file).
    Reject {
        id: String,
        /// Only this file (relative to the memory dir); repeatable
        #[arg(long = "file", value_name = "FILE")]
        files: Vec<String>,
    },
    /// Undo every applied file of a change set in one step.
    Undo { id: String },
}

/// A file as `list --json` shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedFile<'a> {
    file: &'a str,
    kind: ChangeKind,
    reason: &'a str,
    status: FileStatus,
    protected: bool,
}

/// A change set as `list --json` shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed<'a> {
    id: &'a str,
    source: memory_engine::staging::ChangeSource,
    project: &'a str,
    created_at: &'a str,
    status: memory_engine::staging::SetStatus,
    files: Vec<ListedFile<'a>>,
}

fn listed(set: &StagedChangeSet) -> Listed<'_> {
    Listed {
        id: &set.id,
        source: set.source,
        project: &set.project,
        created_at: &set.created_at,
        status: set.status,
        files: set
            .files
            .iter()
            .map(|f| ListedFile {
                file: &f.change.file,
                kind: f.change.kind,
                reason: &f.change.reason,
                status: f.status,
                protected: f.change.protected,
            })
            .collect(),
    }
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    // A set staged for a dir given by hand is applied to that dir only when it is named again.
    let named = context.named_memory_dir();
    let mut status = Status::Success;
    let set = match args.command {
        ChangesCommand::List => {
            let sets = engine.staged_change_sets()?;
            if context.json() {
                output::print_json(&sets.iter().map(listed).collect::<Vec<_>>())?;
            } else {
                print_list(&sets);
            }
            return Ok(Status::Success);
        }
        ChangesCommand::Show { id } => engine.staged_change_set(&id)?,
        ChangesCommand::Apply { id, files } => {
            let set = engine.apply_staged(&id, &files, true, named.as_deref())?;
            // A file that could not land (a conflict, a failed write) makes the apply fail, so a
            // script does not take it for done; the set still shows which and why.
            if set.unlanded(&files).next().is_some() {
                status = Status::Failed;
            }
            set
        }
        ChangesCommand::Reject { id, files } => {
            engine.reject_staged(&id, &files, named.as_deref())?
        }
        ChangesCommand::Undo { id } => engine.undo_staged(&id, named.as_deref())?,
    };
    if context.json() {
        output::print_json(&set)?;
    } else {
        print_set(&set);
    }
    Ok(status)
}

fn print_list(sets: &[StagedChangeSet]) {
    if sets.is_empty() {
        output::print("no change sets\n");
        return;
    }
    let style = Style::detect();
    let mut table = Table::new(&[
        ("ID", Align::Left),
        ("SOURCE", Align::Left),
        ("PROJECT", Align::Left),
        ("STATUS", Align::Left),
        ("FILES", Align::Right),
        ("CREATED", Align::Left),
    ]);
    for set in sets {
        table.row(vec![
            Cell::new(set.id.clone()),
            Cell::new(format!("{:?}", set.source).to_lowercase()),
            Cell::new(set.project.clone()),
            Cell::new(format!("{:?}", set.status).to_lowercase()),
            Cell::new(set.files.len().to_string()),
            Cell::colored(set.created_at.clone(), Color::Dim),
        ]);
    }
    output::print(&table.render(style));
}

fn print_set(set: &StagedChangeSet) {
    let style = Style::detect();
    output::print(&format!(
        "{} {} {} — {}\n{}\n\n",
        style.paint(Color::Green, &set.id),
        format!("{:?}", set.source).to_lowercase(),
        set.project,
        format!("{:?}", set.status).to_lowercase(),
        set.summary
    ));
    for file in &set.files {
        let mut marks = format!("{:?}", file.status).to_lowercase();
        if file.change.protected {
            marks.push_str(", protected");
        }
        output::print(&format!(
            "{} {} ({}) — {}\n",
            style.paint(
                Color::Cyan,
                &format!("{:?}", file.change.kind).to_lowercase()
            ),
            file.change.file,
            marks,
            file.change.reason
        ));
        if let Some(error) = &file.error {
            output::print(&format!("  {}\n", style.paint(Color::Yellow, error)));
        }
        output::print(&file.change.diff);
        output::print("\n");
    }
}
