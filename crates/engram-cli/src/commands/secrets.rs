//! `engram secrets scan [PATH]`: every secret the rules find in PATH (a file, or every text file
//! under a directory; default: the project's memory dir) — transcripts included, read only.
//! `--json` prints `[{"file", "line", "rule"}]`. Exit 1 when anything was found.

use std::path::PathBuf;

use memory_engine::Result;

use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: SecretsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SecretsCommand {
    /// Scan a file or a directory tree for secrets
    Scan {
        /// A file or directory [default: the project's memory dir]
        path: Option<PathBuf>,
    },
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let SecretsCommand::Scan { path } = args.command;
    let root = match path {
        Some(path) => path,
        None => context.existing_memory_dir()?.root().to_path_buf(),
    };
    if !root.exists() {
        return Err(memory_engine::Error::NotFound(root));
    }
    let (findings, unreadable) = memory_engine::secrets::scan_tree(&root);
    for file in unreadable {
        output::warning_line(&format!("{}: unreadable, skipped", file.display()));
    }
    if context.json() {
        output::print_json(&findings)?;
    } else if findings.is_empty() {
        output::print("no secrets found\n");
    } else {
        let text: String = findings
            .iter()
            .map(|f| format!("{}:{}: {}\n", f.file.display(), f.line, f.rule))
            .collect();
        output::print(&text);
    }
    Ok(if findings.is_empty() {
        Status::Success
    } else {
        Status::Findings
    })
}
