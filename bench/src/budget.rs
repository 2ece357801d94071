//! The daily token budget at work: extractions after turn after turn of one session, each with
//! the scripted model on loopback (Anthropic's wire format, two calls and 1,420 tokens per
//! extraction), under `[budget] daily_tokens = 10,000`. Prints, run by run, who extracted, the
//! day's tokens and the calls sent, then when the work switched to offline, how far the day went
//! over (the run that crossed it: a call that starts under the budget may finish over it), the
//! calls refused, and a forced model dream skipped for the budget. Then what the check costs:
//! the first read of a day's log of 10,000 calls, each later check (only what was appended
//! since), and logging one call.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use memory_engine::config::LlmOverrides;
use memory_engine::dream::{DreamOptions, GateCheck};
use memory_engine::extract::ExtractOptions;
use memory_engine::llm::usage::format_tokens;
use memory_engine::llm::{Caller, CancellationToken, ModelJob, ProviderKind, Usage};
use memory_engine::testing::{wire, Reply, ScriptedServer};
use memory_engine::{Engine, Environment};
use serde_json::json;

const DAILY_TOKENS: u64 = 10_000;
const RUNS: usize = 12;
const SESSION: &str = "bbbbbbbb-0000-4000-8000-000000000001";

pub fn budget_behaviour(corpus: &Path) -> Result<(), String> {
    let root = corpus.join("budget");
    let _ = fs::remove_dir_all(&root);
    let cwd = root.join("work/app");
    fs::create_dir_all(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    let cwd = fs::canonicalize(&cwd).map_err(|e| e.to_string())?;
    // First turn: the model writes a memory (1,000 tokens); second: it says it is done (420).
    let server = ScriptedServer::handler(|request, n| {
        let turns = request.json()["messages"]
            .as_array()
            .map_or(0, |messages| messages.len());
        if turns <= 1 {
            Reply::json(wire::anthropic_tools(
                &[(
                    "w1",
                    "write",
                    json!({"path": format!("project_fact_{n}.md"),
                        "content": format!("---\nname: Fact {n}\ndescription: fact {n}\ntype: project\n---\nFact {n}.\n")}),
                )],
                (900, 100, 0, 0),
            ))
        } else {
            Reply::json(wire::anthropic_text("Saved.", (400, 20, 0, 0)))
        }
    });
    let engine = Engine::builder(Environment::empty().with("ANTHROPIC_API_KEY", "bench"))
        .claude_home(root.join("claude"))
        .engram_home(root.join("engram"))
        .build();
    fs::create_dir_all(engine.engram_home()).map_err(|e| e.to_string())?;
    fs::write(
        engine.config_path(),
        format!(
            "[llm]\nprovider = \"anthropic\"\n[llm.anthropic]\nbase_url = \"{}\"\n[budget]\ndaily_tokens = {DAILY_TOKENS}\n",
            server.url()
        ),
    )
    .map_err(|e| e.to_string())?;
    let transcript = engine
        .transcripts_dir(&cwd)
        .join(format!("{SESSION}.jsonl"));
    fs::create_dir_all(transcript.parent().unwrap_or(&root)).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let cancel = CancellationToken::new();

    println!();
    println!(
        "budget   daily_tokens = {}; an extraction = 2 model calls, 1,420 tokens (scripted model on loopback)",
        format_tokens(DAILY_TOKENS)
    );
    println!(
        "{:>6}  {:<9} {:>12} {:>11}  note",
        "run", "extractor", "tokens today", "calls sent"
    );
    let mut parent: Option<String> = None;
    let (mut by_model, mut switched_at, mut refused, mut without_asking) = (0, None, 0, 0);
    for run in 1..=RUNS {
        let uuid = format!("u{run}");
        let line = json!({"type": "user", "uuid": uuid, "parentUuid": parent, "cwd": cwd,
            "sessionId": SESSION, "timestamp": "2026-11-21T09:00:00Z",
            "message": {"role": "user", "content": format!("Remember that fact number {run} matters.")}});
        let mut text = fs::read_to_string(&transcript).unwrap_or_default();
        text.push_str(&format!("{line}\n"));
        fs::write(&transcript, text).map_err(|e| e.to_string())?;
        parent = Some(uuid);

        let sent_before = server.requests().len();
        let outcome = runtime
            .block_on(engine.extract_session(&transcript, &ExtractOptions::default(), &cancel))
            .map_err(|e| format!("extraction {run}: {e}"))?;
        let sent = server.requests().len();
        let today = engine.budget_status().map_err(|e| e.to_string())?;
        let note = match (outcome.extractor.as_str(), sent > sent_before) {
            ("model", _) => {
                by_model += 1;
                String::new()
            }
            (_, true) => {
                refused += 1;
                switched_at.get_or_insert(run);
                format!(
                    "{} (a call refused mid-run)",
                    outcome.reason.unwrap_or_default()
                )
            }
            (_, false) => {
                without_asking += 1;
                switched_at.get_or_insert(run);
                "offline without asking the model".to_owned()
            }
        };
        let line = format!(
            "{:>6}  {:<9} {:>12} {:>11}  {note}",
            run,
            outcome.extractor,
            format_tokens(today.tokens_today),
            sent
        );
        println!("{}", line.trim_end());
    }
    let today = engine.budget_status().map_err(|e| e.to_string())?;
    println!(
        "budget   {RUNS} extractions: {by_model} by the model, offline from run {} ({refused} fell back mid-run, {without_asking} never asked); spent {} of {} tokens ({} over: the run that crossed it); {} calls sent, {refused} refused",
        switched_at.map_or_else(|| "-".to_owned(), |r| r.to_string()),
        format_tokens(today.tokens_today),
        format_tokens(DAILY_TOKENS),
        format_tokens(today.tokens_today.saturating_sub(DAILY_TOKENS)),
        server.requests().len(),
    );

    let target = engine
        .dream_target_for_cwd(&cwd)
        .map_err(|e| e.to_string())?;
    let forced = DreamOptions {
        gates: GateCheck::Skip,
        ..DreamOptions::default()
    };
    let dream = runtime
        .block_on(engine.run_dream(&target, &forced, &cancel, |_| {}))
        .map_err(|e| e.to_string())?;
    println!(
        "budget   dream --force: {} (blockedBy {}): {}",
        format!("{:?}", dream.status).to_lowercase(),
        dream
            .blocked_by
            .map_or_else(|| "none".to_owned(), |b| format!("{b:?}").to_lowercase()),
        dream.summary
    );
    let offline = DreamOptions {
        gates: GateCheck::Skip,
        llm: LlmOverrides {
            provider: Some(ProviderKind::Offline),
            ..LlmOverrides::default()
        },
        ..DreamOptions::default()
    };
    let dream = runtime
        .block_on(engine.run_dream(&target, &offline, &cancel, |_| {}))
        .map_err(|e| e.to_string())?;
    println!(
        "budget   dream --force --provider offline: {}, {} model calls",
        format!("{:?}", dream.status).to_lowercase(),
        dream.tokens.calls
    );
    check_cost(&root)
}

/// What holding every call to the budget costs: the first read of a day's log of 10,000 calls,
/// a later check (only what was appended since), and logging one call.
fn check_cost(root: &Path) -> Result<(), String> {
    const CALLS: usize = 10_000;
    let engine = Engine::builder(Environment::empty())
        .engram_home(root.join("engram-check"))
        .build();
    let caller = Caller::new(ModelJob::Recall, "-bench-project");
    let usage = Usage {
        input_tokens: 900,
        output_tokens: 30,
        calls: 1,
        ..Usage::default()
    };
    let mut log_times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        engine
            .record_usage(&caller, ProviderKind::Anthropic, "claude-haiku-4-5", &usage)
            .map_err(|e| e.to_string())?;
        log_times.push(started.elapsed());
    }
    // A fresh process would read the whole day's log once: another data dir path is the same
    // as a fresh process for the per-file tally, so copy the log there.
    let fresh = Engine::builder(Environment::empty())
        .engram_home(root.join("engram-check-fresh"))
        .build();
    fs::create_dir_all(fresh.usage_dir()).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(engine.usage_dir()).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        fs::copy(entry.path(), fresh.usage_dir().join(entry.file_name()))
            .map_err(|e| e.to_string())?;
    }
    let started = Instant::now();
    let first = fresh.budget_status().map_err(|e| e.to_string())?;
    let first_read = started.elapsed();
    let expected = CALLS as u64 * 930;
    if first.tokens_today != expected {
        return Err(format!(
            "the budget check summed {} tokens, not {expected}",
            first.tokens_today
        ));
    }
    let mut checks: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            let _ = std::hint::black_box(fresh.budget_status());
            started.elapsed()
        })
        .collect();
    let check = crate::median(&mut checks);
    let log = crate::median(&mut log_times);
    println!(
        "budget   today's total: {} for the first read of a day of {} calls, then {} a look (config.toml read too; only what was appended is read); logging a call {}",
        crate::format_duration(first_read),
        format_tokens(CALLS as u64),
        micros(check),
        micros(log)
    );
    Ok(())
}

/// Short spans in microseconds: the per-call costs are far under a millisecond.
fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}
