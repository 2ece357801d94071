//! `engram revert VERSION`: puts a file back to a recorded version. The revert is itself a new
//! version (by `user`), and whatever the file held just before is recorded first, so a revert
//! never loses content and can itself be reverted.

use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version to go back to, as `engram history` lists it (e.g. v000012)
    // Not `version`: that id belongs to the global `--version` flag.
    #[arg(value_name = "VERSION")]
    pub version_id: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let version = context.engine.revert(&args.version_id)?;
    if context.json() {
        output::print_json(&version)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    output::print(&format!(
        "{} {} to {} {}\n",
        style.paint(Color::Green, "reverted"),
        version.file,
        args.version_id,
        style.paint(Color::Dim, &format!("(now {})", version.version)),
    ));
    Ok(Status::Success)
}
