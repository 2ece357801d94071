//! Personal sync (`docs/sync.md`): this person's memory — every project's memory dir and the
//! user scope's agent memory — on every machine through their own git remote:
//! - `engram sync remote set URL[#branch]`;
//! - `engram sync pull | push | status` through `git`; `status --json` prints `{"remote",
//!   "ahead", "behind", "conflicts", "projects": [{"identity", "memoryDir", "state"}]}`;
//! - `engram sync map IDENTITY PATH`: the project whose working dir is PATH is IDENTITY on the
//!   remote (for a project with no origin, or checked out under another name).
//!
//! Running `push` is the person's opt-in: the CLI never pushes by itself.

use std::path::PathBuf;

use memory_engine::sync::PersonalSyncReport;
use memory_engine::Result;

use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: SyncCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SyncCommand {
    /// Configure the git remote this person's memory syncs with
    Remote {
        #[command(subcommand)]
        command: RemoteCommand,
    },
    /// Bring changes from other machines in (a file changed on both sides is staged for review)
    Pull,
    /// Send this machine's memory to the remote (secrets refused, never forced)
    Push,
    /// Ahead / behind / conflicts against the remote, and each project's state
    Status,
    /// Attach an identity to the local project whose working dir is PATH
    Map { identity: String, path: PathBuf },
}

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// A repo URL or path; `URL#branch` for a branch of another repo
    Set { url: String },
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    let report = |report: &PersonalSyncReport, verb: &str| -> Result<Status> {
        if context.json() {
            output::print_json(report)?;
        } else {
            let mut text = format!("{verb} {}\n", output::plural(report.files.len(), "file"));
            for skipped in &report.skipped {
                text.push_str(&format!("  skipped {}: {}\n", skipped.file, skipped.reason));
            }
            for set in &report.conflicts {
                text.push_str(&format!(
                    "{} changed here and on another machine: engram changes show {}\n",
                    output::plural(set.files.len(), "file"),
                    set.id
                ));
            }
            output::print(&text);
        }
        Ok(Status::Success)
    };
    match args.command {
        SyncCommand::Remote {
            command: RemoteCommand::Set { url },
        } => {
            let saved = engine.set_sync_remote(&url)?;
            if context.json() {
                output::print_json(&serde_json::json!({
                    "remote": saved.remote, "branch": saved.branch, "auto": saved.auto
                }))?;
            } else {
                output::print(&format!("sync remote: {}\n", saved.remote));
            }
        }
        SyncCommand::Pull => return report(&engine.sync_pull()?, "pulled"),
        SyncCommand::Push => return report(&engine.sync_push()?, "pushed"),
        SyncCommand::Status => {
            let status = engine.sync_status()?;
            if context.json() {
                output::print_json(&status)?;
            } else {
                let mut text = format!(
                    "{}: {} ahead, {} behind, {} conflicts\n",
                    status.remote.as_deref().unwrap_or("no remote"),
                    status.ahead,
                    status.behind,
                    status.conflicts
                );
                for project in &status.projects {
                    text.push_str(&format!("  {} {}\n", project.state, project.identity));
                }
                output::print(&text);
            }
        }
        SyncCommand::Map { identity, path } => {
            let mapped = engine.map_sync_identity(&identity, &path)?;
            if context.json() {
                output::print_json(&mapped)?;
            } else {
                output::print(&format!(
                    "{} is {} on the sync remote\n",
                    mapped.memory_dir.display(),
                    mapped.identity
                ));
            }
        }
    }
    Ok(Status::Success)
}
