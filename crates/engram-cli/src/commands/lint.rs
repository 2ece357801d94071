//! `engram lint`: problems in a memory dir, grouped by file with `file:line` locations. Exits 1
//! when any finding is an error, so it can gate a commit or CI.
//!
//! `--fix` plans the safe fixes (`memory_engine::fix`: dangling index lines, orphan files,
//! over-long index lines) as one change set, prints its diff, applies it as the user (recorded in
//! history) and lints again; `--dry-run` only prints the diff. The exit code follows the findings
//! that remain.

use std::collections::BTreeMap;

use memory_engine::{ApplyReport, FixPlan, LintReport, MemoryDir, Result, Severity};
use serde::Serialize;

use super::{Context, Status};
use crate::output::{self, plural, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fix what has a safe automatic fix (dangling index lines, orphan files, over-long index
    /// lines): print the diff, apply it, then lint again
    #[arg(long)]
    pub fix: bool,
    /// With --fix: print the diff without writing anything
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
}

/// `lint --fix --json`: what was planned, what was written, and the findings left.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct FixOutput<'a> {
    dry_run: bool,
    plan: &'a FixPlan,
    /// `null` on a dry run or when there was nothing to fix.
    applied: Option<&'a ApplyReport>,
    /// The lint report after the fix (before it, on a dry run).
    report: &'a LintReport,
    /// Temp files of interrupted writes removed (none on a dry run).
    removed_temp_files: &'a [String],
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let memory_dir = context.existing_memory_dir()?;
    if args.fix {
        return fix(context, &memory_dir, args.dry_run);
    }
    let report = memory_dir.lint()?;
    show_report(context, &memory_dir, &report)
}

fn fix(context: &Context, memory_dir: &MemoryDir, dry_run: bool) -> Result<Status> {
    let plan = memory_dir.plan_all_fixes()?;
    let applied = if dry_run || plan.changes.is_empty() {
        None
    } else {
        let applied = memory_dir.apply_fix(&plan.changes)?;
        applied.first_failure()?;
        Some(applied)
    };
    let removed = if dry_run {
        Vec::new()
    } else {
        memory_dir.remove_stray_temp_files()?
    };
    let report = memory_dir.lint()?;
    if context.json() {
        output::print_json(&FixOutput {
            dry_run,
            plan: &plan,
            applied: applied.as_ref(),
            report: &report,
            removed_temp_files: &removed,
        })?;
        return Ok(status_of(&report));
    }

    let style = Style::detect();
    let mut text = String::new();
    for change in &plan.changes.changes {
        text.push_str(&style.paint(Color::Dim, &format!("# {}\n", change.reason)));
        for line in change.diff.lines() {
            let color = if line.starts_with("+++") || line.starts_with("---") {
                Color::Bold
            } else if line.starts_with('+') {
                Color::Green
            } else if line.starts_with('-') {
                Color::Red
            } else if line.starts_with("@@") {
                Color::Cyan
            } else {
                Color::Dim
            };
            text.push_str(&style.paint(color, line));
            text.push('\n');
        }
    }
    let fixed = plural(plan.fixed.len(), "finding");
    let files = plural(plan.changes.len(), "file");
    text.push_str(&match (plan.fixed.is_empty(), dry_run) {
        (true, _) => "nothing to fix automatically\n".to_owned(),
        (false, true) => format!(
            "{} {fixed} in {files} {}\n",
            style.paint(Color::Yellow, "would fix"),
            style.paint(Color::Dim, "(dry run: nothing written)")
        ),
        (false, false) => format!(
            "{} {fixed} in {files}\n",
            style.paint(Color::Green, "fixed")
        ),
    });
    for file in &removed {
        text.push_str(&format!(
            "{} {file} (left by an interrupted write)\n",
            style.paint(Color::Green, "removed")
        ));
    }
    for skipped in &plan.skipped {
        let location = match skipped.target.line {
            Some(line) => format!("{}:{line}", skipped.target.file),
            None => skipped.target.file.clone(),
        };
        text.push_str(&style.paint(
            Color::Dim,
            &format!(
                "skipped {location} [{}]: {}\n",
                skipped.target.rule, skipped.reason
            ),
        ));
    }
    text.push('\n');
    output::print(&text);
    show_report(context, memory_dir, &report)
}

fn status_of(report: &LintReport) -> Status {
    if report.has_errors() {
        Status::Findings
    } else {
        Status::Success
    }
}

fn show_report(context: &Context, memory_dir: &MemoryDir, report: &LintReport) -> Result<Status> {
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let status = if errors > 0 {
        Status::Findings
    } else {
        Status::Success
    };
    if context.json() {
        output::print_json(report)?;
        return Ok(status);
    }

    let style = Style::detect();
    if report.findings.is_empty() {
        output::print(&format!(
            "{} {}\n",
            style.paint(Color::Green, "no problems in"),
            memory_dir.root().display()
        ));
        return Ok(status);
    }
    let mut by_file: BTreeMap<&str, Vec<_>> = BTreeMap::new();
    for finding in &report.findings {
        by_file
            .entry(finding.file.as_str())
            .or_default()
            .push(finding);
    }
    let mut text = String::new();
    for (file, mut findings) in by_file {
        findings.sort_by_key(|f| f.line);
        text.push_str(&style.paint(Color::Bold, file));
        text.push('\n');
        for finding in findings {
            let location = match finding.line {
                Some(line) => format!("{file}:{line}"),
                None => file.to_string(),
            };
            let severity = match finding.severity {
                Severity::Error => style.paint(Color::Red, "error  "),
                Severity::Warning => style.paint(Color::Yellow, "warning"),
            };
            text.push_str(&format!(
                "  {severity}  {}  {}  {}\n",
                style.paint(Color::Dim, &location),
                finding.message,
                style.paint(Color::Dim, &format!("[{}]", finding.rule)),
            ));
        }
    }
    let warnings = report.findings.len() - errors;
    text.push_str(&format!(
        "\n{}, {}\n",
        style.paint(
            if errors > 0 { Color::Red } else { Color::Dim },
            &plural(errors, "error")
        ),
        plural(warnings, "warning"),
    ));
    output::print(&text);
    Ok(status)
}
