//! Team memory (`<memory dir>/team/`):
//! - `engram team check KEY`: whether a key (a relative path a teammate or the remote sent) is
//!   safe under `FORMATS.md` §9: exit 0 when it is; exit 2 with the rule that refused it on stderr;
//! - `engram team remote set URL` (a repo URL or path, `URL#branch` for a branch of another repo);
//! - `engram team pull | push | status` through `git`; `status --json` prints `{"remote",
//!   "ahead", "behind", "conflicts"}`. Running `push` is the user's opt-in: nothing else pushes.

use memory_engine::team::check_key;
use memory_engine::Result;

use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: TeamCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum TeamCommand {
    /// Check a team memory key against every rule; exit 2 naming the rule that refuses it
    Check {
        /// The key: a path relative to the memory dir's team/
        key: String,
    },
    /// Configure the git remote team memory syncs with
    Remote {
        #[command(subcommand)]
        command: RemoteCommand,
    },
    /// Bring teammates' changes in (a file changed on both sides is staged for review)
    Pull,
    /// Send this project's team memory to the remote (keys checked, secrets refused)
    Push,
    /// Ahead / behind / conflicts against the remote
    Status,
}

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// A repo URL or path; `URL#branch` for a branch of another repo
    Set { url: String },
}

/// The project a memory dir belongs to, as config and staging name it: its folder under
/// `<memory base>/projects/`, else the sanitized path of an explicit `--memory-dir`.
fn project_of(root: &std::path::Path) -> String {
    match (root.file_name(), root.parent().and_then(|p| p.file_name())) {
        (Some(name), Some(project)) if name == "memory" => project.to_string_lossy().into_owned(),
        _ => memory_engine::paths::sanitize_path(&root.to_string_lossy()),
    }
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_dir = context.memory_dir()?;
    let root = memory_dir.root().to_path_buf();
    let project = project_of(&root);
    let engine = &context.engine;
    let report = |report: &memory_engine::team::sync::SyncReport, verb: &str| -> Result<Status> {
        if context.json() {
            output::print_json(report)?;
        } else {
            let mut text = format!("{verb} {}\n", output::plural(report.files.len(), "file"));
            for skipped in &report.skipped {
                text.push_str(&format!("  skipped {}: {}\n", skipped.file, skipped.reason));
            }
            if let Some(set) = &report.conflicts {
                text.push_str(&format!(
                    "{} conflicting with a teammate: engram changes show {}\n",
                    output::plural(set.files.len(), "file"),
                    set.id
                ));
            }
            output::print(&text);
        }
        Ok(Status::Success)
    };
    let key = match args.command {
        TeamCommand::Check { key } => key,
        TeamCommand::Remote {
            command: RemoteCommand::Set { url },
        } => {
            let saved = engine.set_team_remote(&project, &url)?;
            if context.json() {
                output::print_json(&saved)?;
            } else {
                output::print(&format!("team remote for {project}: {}\n", saved.remote));
            }
            return Ok(Status::Success);
        }
        TeamCommand::Pull => return report(&engine.team_pull(&project, &root)?, "pulled"),
        TeamCommand::Push => return report(&engine.team_push(&project, &root)?, "pushed"),
        TeamCommand::Status => {
            let status = engine.team_status(&project, &root)?;
            if context.json() {
                output::print_json(&status)?;
            } else {
                output::print(&format!(
                    "{}: {} ahead, {} behind, {} conflicts\n",
                    status.remote.as_deref().unwrap_or("no remote"),
                    status.ahead,
                    status.behind,
                    status.conflicts
                ));
            }
            return Ok(Status::Success);
        }
    };
    let team = root.join("team");
    // The checks resolve symlinks against the real team/: it must exist to be checked against.
    std::fs::create_dir_all(&team).map_err(|e| memory_engine::Error::io(&team, e))?;
    let path = check_key(&team, &key)?;
    if context.json() {
        output::print_json(&serde_json::json!({"key": key, "safe": true, "path": path}))?;
    } else {
        output::print(&format!("safe: {}\n", path.display()));
    }
    Ok(Status::Success)
}
