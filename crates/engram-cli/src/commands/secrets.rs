//! `engram secrets scan [PATH]`: every secret the rules find in PATH (a file, or every file under a
//! directory; default: the project's memory dir) — transcripts included, read only. `--json`
//! prints `[{"file", "line", "rule"}]`. Exit 1 when anything was found; exit 2 when nothing was
//! found but some file could not be read (the scan is incomplete, and each such file is named).
//!
//! `engram secrets redact`: stages a change set replacing each secret in the memory dir with
//! `[REDACTED:<rule>]`, for review (`engram changes`); a file it cannot redact (not UTF-8 text,
//! unreadable) is named, left as it is, and makes it exit 2. `engram secrets rules`: the rules in use
//! (gitleaks' and Engram's), and any that could not be used.

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
    /// Scan a file or a directory tree for secrets (nothing is modified)
    Scan {
        /// A file or directory [default: the project's memory dir]
        path: Option<PathBuf>,
    },
    /// Propose replacing every secret in the memory dir with [REDACTED:<rule>], for review
    Redact,
    /// List the detection rules: gitleaks' own, and Engram's additions
    Rules,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleRow<'a> {
    id: &'a str,
    origin: memory_engine::secrets::RuleOrigin,
    description: &'a str,
    keywords: &'a [String],
    /// Why the rule cannot be used; absent when it is in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    match args.command {
        SecretsCommand::Scan { path } => scan(context, path),
        SecretsCommand::Redact => redact(context),
        SecretsCommand::Rules => rules(context),
    }
}

fn scan(context: &Context, path: Option<PathBuf>) -> Result<Status> {
    let root = match path {
        Some(path) => path,
        None => context.existing_memory_dir()?.root().to_path_buf(),
    };
    if !root.exists() {
        return Err(memory_engine::Error::NotFound(root));
    }
    let (findings, unreadable) = memory_engine::secrets::scan_tree(&root);
    for (file, why) in &unreadable {
        output::warning_line(&format!(
            "{}: cannot be read ({why}), skipped",
            file.display()
        ));
    }
    if context.json() {
        output::print_json(&findings)?;
    } else if findings.is_empty() && unreadable.is_empty() {
        output::print("no secrets found\n");
    } else if findings.is_empty() {
        output::print("no secrets found in the files that could be read\n");
    } else {
        let text: String = findings
            .iter()
            .map(|f| format!("{}:{}: {}\n", f.file.display(), f.line, f.rule))
            .collect();
        output::print(&text);
    }
    // A scan that could not read everything cannot say "clean": a script gating a push on it
    // must not pass.
    if !unreadable.is_empty() && findings.is_empty() {
        return Err(memory_engine::Error::InvalidInput(format!(
            "{} file(s) could not be read: the scan is incomplete",
            unreadable.len()
        )));
    }
    Ok(if findings.is_empty() {
        Status::Success
    } else {
        Status::Findings
    })
}

fn redact(context: &Context) -> Result<Status> {
    let dir = context.existing_memory_dir()?;
    let root = dir.root();
    let project = context.staged_project()?;
    let redaction = context.engine.stage_redaction(root, &project, None)?;
    for file in &redaction.not_redacted {
        output::warning_line(&format!("{}: {}", file.file, file.reason));
    }
    match &redaction.staged {
        Some(set) if context.json() => output::print_json(set)?,
        Some(set) => output::print(&format!(
            "{}\nreview it: engram changes show {}\n",
            set.summary, set.id
        )),
        None if context.json() => output::print_json(&serde_json::Value::Null)?,
        None if redaction.not_redacted.is_empty() => {
            output::print("no secrets found: nothing to redact\n")
        }
        None => {}
    }
    // Secrets left in place must not read as done: a script gating a push on this must stop.
    if !redaction.not_redacted.is_empty() {
        return Err(memory_engine::Error::InvalidInput(format!(
            "{} not redacted (named above): the redaction is incomplete",
            output::plural(redaction.not_redacted.len(), "file")
        )));
    }
    Ok(Status::Success)
}

fn rules(context: &Context) -> Result<Status> {
    use memory_engine::secrets::{all_rules, skipped_rules, GITLEAKS_VERSION};
    let skipped = skipped_rules();
    let rows: Vec<RuleRow<'_>> = all_rules()
        .iter()
        .map(|rule| RuleRow {
            id: &rule.id,
            origin: rule.origin,
            description: &rule.description,
            keywords: rule.keywords(),
            skipped: skipped
                .iter()
                .find(|(id, _)| *id == rule.id)
                .map(|(_, why)| why.clone()),
        })
        .collect();
    if context.json() {
        output::print_json(&rows)?;
        return Ok(Status::Success);
    }
    let mut text = format!(
        "{} rules: gitleaks {GITLEAKS_VERSION} and Engram's own\n",
        rows.len()
    );
    for row in &rows {
        let origin = match row.origin {
            memory_engine::secrets::RuleOrigin::Gitleaks => "gitleaks",
            memory_engine::secrets::RuleOrigin::Engram => "engram",
        };
        text.push_str(&format!("{:<44} {origin}\n", row.id));
    }
    for (id, why) in &skipped {
        text.push_str(&format!("skipped: {id}: {why}\n"));
    }
    output::print(&text);
    Ok(Status::Success)
}
