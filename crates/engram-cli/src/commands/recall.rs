//! `engram recall QUERY`: the memories recall would put in front of the model for QUERY, with the
//! provider in force (given, configured, else local when the local model is installed, else
//! offline). `--json` prints `[{"file", "type", "description", "age", "caveat", "content", …}]`;
//! `--json --report` the whole report (what was left out and the relevance gate's verdict on
//! each, what the model proposed that was rejected, tokens used, `provider` and
//! `providerReason`); `--report` alone puts the same in words after the memories, as the app's
//! Recall tab does.

use memory_engine::config::LlmOverrides;
use memory_engine::llm::{CancellationToken, ProviderKind};
use memory_engine::recall::{PassedOverWhy, RecallReport, RecallRequest};
use memory_engine::{Error, Result};

use super::{Context, Status};
use crate::output::{self, type_color, type_label, Color, Style};

/// Lines of each memory shown to a person (JSON has the whole recalled text).
const SHOWN_LINES: usize = 12;

/// Provider flags shared by `recall` and `hook`.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmArgs {
    /// Who selects the memories [default: `[llm] provider` in config.toml, else local when the
    /// local model is installed, else offline]
    #[arg(long, value_name = "PROVIDER", value_parser = ["offline", "local", "anthropic", "openai"])]
    pub provider: Option<String>,
    /// The model to ask [default: the provider's model in config.toml, else its default]
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

impl LlmArgs {
    pub fn overrides(&self) -> Result<LlmOverrides> {
        Ok(LlmOverrides {
            provider: self
                .provider
                .as_deref()
                .map(str::parse::<ProviderKind>)
                .transpose()?,
            model: self.model.clone(),
            ..LlmOverrides::default()
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The prompt to recall memories for
    pub query: String,
    /// Return at most N memories
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub limit: usize,
    /// Never return FILE (relative to the memory dir); repeatable
    #[arg(long = "exclude", value_name = "FILE")]
    pub exclude: Vec<String>,
    /// Leave out what the prompt hook already showed in Claude Code session ID
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Also say why: the provider in force, the relevance gate's rule and its verdict on every
    /// match, recalled or passed over (with --json, the whole report instead of the results)
    #[arg(long)]
    pub report: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    if args.limit == 0 {
        return Err(Error::InvalidInput("--limit must be at least 1".to_owned()));
    }
    let engine = &context.engine;
    let memory_dir = context.existing_memory_dir()?;
    let setup = engine.recall_setup(&args.llm.overrides()?, memory_dir.root())?;
    let request = RecallRequest {
        query: args.query,
        limit: args.limit,
        exclude: args.exclude,
        session: args.session,
    };
    let runtime = runtime()?;
    let report = runtime.block_on(engine.recall_as(
        memory_dir.root(),
        &request,
        &setup,
        &CancellationToken::new(),
    ))?;
    // What cannot be read cannot be recalled: say so rather than recall around it silently.
    for unreadable in &report.unreadable {
        output::warning_line(&format!("{unreadable} (not considered)"));
    }
    if let Some(degraded) = &report.degraded {
        output::warning_line(degraded);
    }
    if context.json() {
        if args.report {
            output::print_json(&report)?;
        } else {
            output::print_json(&report.results)?;
        }
        return Ok(Status::Success);
    }
    let style = Style::detect();
    output::print(&render(&report, style));
    if args.report {
        output::print(&render_why(&report, args.limit, style));
    }
    Ok(Status::Success)
}

/// A runtime for one engine job on this thread (file work goes to its blocking pool).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::InvalidInput(format!("cannot start the async runtime: {e}")))
}

/// The report in words, for `--report`: who chose and why, the gate's rule, and its verdict on
/// each memory it saw — so "nothing relevant" can be checked, not taken on trust.
fn render_why(report: &RecallReport, limit: usize, style: Style) -> String {
    let mut text = String::from("\n");
    let provider = match &report.provider_reason {
        Some(reason) => format!("{} — {reason}", report.provider),
        None => report.provider.to_string(),
    };
    text.push_str(&format!(
        "{} {provider}\n",
        style.paint(Color::Bold, "Provider:")
    ));
    match (&report.gate, &report.skipped) {
        (Some(gate), _) => {
            text.push_str(&format!("{} {gate}\n", style.paint(Color::Bold, "Gate:")));
        }
        // Skipped: nothing was ranked, and the first line said why.
        (None, Some(_)) => {}
        (None, None) => text.push_str(&format!(
            "{} none: the model chose, and gives no reasons for the rest\n",
            style.paint(Color::Bold, "Gate:")
        )),
    }
    if !report.results.is_empty() {
        text.push_str(&format!("{}\n", style.paint(Color::Bold, "Recalled:")));
        for result in &report.results {
            let verdict = result.verdict.as_deref().unwrap_or(&result.reason);
            text.push_str(&format!("  {}  {verdict}\n", result.file));
        }
    }
    if !report.passed_over.is_empty() {
        text.push_str(&format!("{}\n", style.paint(Color::Bold, "Passed over:")));
        for passed in &report.passed_over {
            let why = match passed.why {
                PassedOverWhy::Unrelated => "not about this prompt".to_owned(),
                PassedOverWhy::BelowFloor => "too weak next to the best match".to_owned(),
                PassedOverWhy::OverLimit => format!("over the limit of {limit}"),
            };
            text.push_str(&format!(
                "  {}  {}: {}\n",
                passed.file,
                style.paint(Color::Yellow, &why),
                passed.verdict
            ));
        }
    }
    if !report.excluded.is_empty() {
        text.push_str(&format!(
            "{} {} (excluded, or shown earlier this session)\n",
            style.paint(Color::Bold, "Left out:"),
            report.excluded.join(", ")
        ));
    }
    if !report.results.is_empty() {
        text.push_str(&style.paint(
            Color::Dim,
            &format!(
                "The prompt hook would inject {} characters (about {} tokens).",
                output::thousands(report.injected_chars),
                output::thousands(usize::try_from(report.injected_tokens).unwrap_or(usize::MAX))
            ),
        ));
        text.push('\n');
    }
    text
}

fn render(report: &RecallReport, style: Style) -> String {
    let mut text = String::new();
    let model = report
        .model
        .as_deref()
        .map_or(String::new(), |m| format!(" ({m})"));
    let tokens = if report.usage.calls > 0 {
        format!(
            ", {} in / {} out tokens",
            report.usage.input_tokens + report.usage.cache_read_tokens,
            report.usage.output_tokens
        )
    } else {
        String::new()
    };
    let summary = format!(
        "{} of {} memories · {}{model}{tokens} · {} ms",
        report.results.len(),
        report.considered,
        report.provider,
        report.elapsed_ms
    );
    if report.results.is_empty() {
        let why = report.skipped.as_deref().unwrap_or("nothing relevant");
        text.push_str(&format!("No memories recalled: {why}.\n"));
        text.push_str(&style.paint(Color::Dim, &summary));
        text.push('\n');
        return text;
    }
    for (i, result) in report.results.iter().enumerate() {
        text.push_str(&format!(
            "{}  {}  {}  {}\n",
            style.paint(Color::Bold, &format!("{}. {}", i + 1, result.file)),
            style.paint(
                type_color(result.memory_type),
                &format!("[{}]", type_label(result.memory_type))
            ),
            style.paint(Color::Dim, &result.age),
            style.paint(Color::Dim, &result.reason),
        ));
        if let Some(description) = &result.description {
            text.push_str(&format!("   {description}\n"));
        }
        if let Some(caveat) = &result.caveat {
            text.push_str(&format!("   {}\n", style.paint(Color::Yellow, caveat)));
        }
        if let Some(cut) = result.truncated {
            let cut = match cut {
                memory_engine::recall::Truncation::Lines => "cut at 200 lines",
                memory_engine::recall::Truncation::Bytes => "cut at 4,096 bytes",
            };
            text.push_str(&format!("   {}\n", style.paint(Color::Dim, cut)));
        }
        text.push('\n');
        let bar = style.paint(Color::Dim, "│");
        let lines: Vec<&str> = result.content.trim_end().lines().collect();
        for line in lines.iter().take(SHOWN_LINES) {
            text.push_str(&format!("   {bar} {line}\n"));
        }
        if lines.len() > SHOWN_LINES {
            text.push_str(&format!(
                "   {}\n",
                style.paint(
                    Color::Dim,
                    &format!(
                        "… {} more lines (--json has them all)",
                        lines.len() - SHOWN_LINES
                    )
                )
            ));
        }
        text.push('\n');
    }
    if !report.rejected.is_empty() {
        text.push_str(&style.paint(
            Color::Yellow,
            &format!(
                "The model also named files not in the memory dir (ignored): {}\n",
                report.rejected.join(", ")
            ),
        ));
    }
    text.push_str(&style.paint(Color::Dim, &summary));
    text.push('\n');
    text
}
