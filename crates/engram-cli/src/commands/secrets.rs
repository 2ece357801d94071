//! `engram secrets scan [PATH]`: every secret the rules find in PATH (a file, or every text file
//! under a directory; default: the project's memory dir) — transcripts included, read only.
//! `--json` prints `[{"file", "line", "rule"}]`. Exit 1 when anything was found.

use std::path::{Path, PathBuf};

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

#[derive(serde::Serialize)]
struct Finding {
    file: PathBuf,
    line: usize,
    rule: &'static str,
}

/// Files under `root` (itself if a file), symlinks not followed, sorted.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            out.push(path);
        } else if meta.is_dir() {
            stack.extend(
                std::fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    out.sort();
    out
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
    let mut findings = Vec::new();
    for file in files_under(&root) {
        // Binary files are not text a secret rule can read; they are skipped, not fatal.
        let Ok(bytes) = std::fs::read(&file) else {
            output::warning_line(&format!("{}: unreadable, skipped", file.display()));
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        for found in memory_engine::secrets::scan_secrets(&text) {
            findings.push(Finding {
                file: file.clone(),
                line: found.line,
                rule: found.rule,
            });
        }
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
