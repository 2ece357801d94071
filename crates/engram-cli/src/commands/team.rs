//! `engram team check KEY`: whether a team memory key (a relative path a teammate or the remote
//! sent) is safe under `FORMATS.md` §9 for this project's `team/`: exit 0 when it is; exit 2 with
//! the rule that refused it on stderr.

use memory_engine::team::validate_key;
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
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let TeamCommand::Check { key } = args.command;
    let team = context.memory_dir()?.root().join("team");
    // The checks resolve symlinks against the real team/: it must exist to be checked against.
    std::fs::create_dir_all(&team).map_err(|e| memory_engine::Error::io(&team, e))?;
    let path = validate_key(&team, &key)?;
    if context.json() {
        output::print_json(&serde_json::json!({"key": key, "safe": true, "path": path}))?;
    } else {
        output::print(&format!("safe: {}\n", path.display()));
    }
    Ok(Status::Success)
}
