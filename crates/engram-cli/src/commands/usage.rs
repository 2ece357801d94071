//! `engram usage [--days N]`: the tokens every model call used, per day, project, job, provider
//! and model, from the log in Engram's data dir; and today's total against the daily budget.

use memory_engine::llm::usage::format_tokens;
use memory_engine::{Error, Result};

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many days to show, today included
    #[arg(long, default_value_t = 7, value_name = "N")]
    pub days: u32,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    if args.days == 0 {
        return Err(Error::InvalidInput("--days must be at least 1".to_owned()));
    }
    let report = context.engine.usage_report(args.days)?;
    for skipped in &report.skipped {
        output::warning_line(&format!("{skipped} (not counted)"));
    }
    if context.json() {
        output::print_json(&report.rows)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    if report.rows.is_empty() {
        output::print(&format!(
            "no model calls in the last {}\n",
            output::plural(args.days as usize, "day")
        ));
    } else {
        let mut table = Table::new(&[
            ("DAY", Align::Left),
            ("PROJECT", Align::Left),
            ("JOB", Align::Left),
            ("PROVIDER", Align::Left),
            ("MODEL", Align::Left),
            ("CALLS", Align::Right),
            ("INPUT", Align::Right),
            ("OUTPUT", Align::Right),
            ("CACHE WRITE", Align::Right),
            ("CACHE READ", Align::Right),
            ("TOTAL", Align::Right),
        ]);
        for row in &report.rows {
            let project = if row.project.is_empty() {
                Cell::colored("-", Color::Dim)
            } else {
                Cell::new(row.project.clone())
            };
            table.row(vec![
                Cell::colored(row.day.clone(), Color::Dim),
                project,
                Cell::new(row.job.clone()),
                Cell::new(row.provider.clone()),
                Cell::colored(row.model.clone(), Color::Dim),
                Cell::new(row.calls.to_string()),
                Cell::new(format_tokens(row.input_tokens)),
                Cell::new(format_tokens(row.output_tokens)),
                Cell::new(format_tokens(row.cache_creation_tokens)),
                Cell::new(format_tokens(row.cache_read_tokens)),
                Cell::colored(format_tokens(row.total_tokens), Color::Bold),
            ]);
        }
        output::print(&table.render(style));
    }
    let budget = &report.budget;
    let today = format_tokens(budget.tokens_today);
    let line = match (budget.daily_tokens, budget.percent()) {
        (Some(limit), Some(percent)) if budget.reached => style.paint(
            Color::Red,
            &format!(
                "Today: {today} of {} tokens ({percent} %): the daily budget is reached; model \
                 work waits until tomorrow",
                format_tokens(limit)
            ),
        ),
        (Some(limit), Some(percent)) => format!(
            "Today: {today} of {} tokens ({percent} %)",
            format_tokens(limit)
        ),
        _ => {
            format!("Today: {today} tokens (no daily budget: [budget] daily_tokens in config.toml)")
        }
    };
    output::print(&format!("{line}\n"));
    Ok(Status::Success)
}
