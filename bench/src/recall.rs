//! Recall quality on the labeled sets (`bench/recall-set/`, tuned on; `bench/recall-heldout/` and
//! `bench/recall-fresh/`, never tuned on): recall@5, MRR, memories injected a prompt and the
//! share of them labeled relevant, how many of the prompts nothing relates to inject nothing, and
//! how many ordinary questions no memory answers (`bench/recall-questions.toml`: its tuning half
//! asked in the first set's dirs, its held-out half in the second's, its fresh half in the
//! third's) inject anything — per provider: `offline` (lexical), and `local` (hybrid with the
//! real local model) when the model is installed. Then the relevance gate's trade-off: recall@5
//! against questions wrongly injected with no gate at all and for neighbouring settings of its
//! bars, the chosen one among them, with the memories each injects a prompt.

use std::path::Path;

use memory_engine::recall::quality::{self as recall_set, FRESH_SET, HELDOUT_SET, RECALL_SET};
use memory_engine::recall::{Bars, Selector};
use memory_engine::Engine;

/// The sets: (name, labeled set, questions' half). Only the first is tuned on.
const SETS: [(&str, &str, &str); 3] = [
    ("tuning", RECALL_SET, "tune"),
    ("held out", HELDOUT_SET, "heldout"),
    ("fresh", FRESH_SET, "fresh"),
];

/// Recall@5, memories a prompt and the questions injected for one provider, gate setting and
/// half.
struct Point {
    recall_at_5: f64,
    injected_per_prompt: f64,
    injected: usize,
    pairs: usize,
    /// The labeled prompts nothing in their dir relates to, and how many of them got nothing.
    none: usize,
    none_silent: usize,
}

fn point(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    selector: &Selector,
    bars: &Bars,
    (set, half): (&str, &str),
) -> Point {
    let measured = runtime.block_on(recall_set::measure_gated(
        engine,
        Path::new(set),
        selector,
        bars,
    ));
    let silence = runtime.block_on(recall_set::silence(
        engine,
        Path::new(set),
        &recall_set::questions(half),
        selector,
        bars,
    ));
    Point {
        recall_at_5: measured.overall.recall_at_5,
        injected_per_prompt: measured.overall.injected_per_prompt,
        injected: silence.injected,
        pairs: silence.pairs,
        none: measured.overall.none,
        none_silent: measured.overall.none_silent,
    }
}

/// "23/210 (11.0 %)".
fn injected(injected: usize, pairs: usize) -> String {
    format!(
        "{injected}/{pairs} ({:.1} %)",
        100.0 * injected as f64 / pairs.max(1) as f64
    )
}

pub fn recall_quality(engine: &Engine, selectors: &[(&str, Selector)]) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    println!();
    println!(
        "{:<9} {:<9} {:<11} {:>7} {:>9} {:>6} {:>9} {:>9}  {:>12}  {:>20}",
        "recall",
        "set",
        "prompts",
        "n",
        "recall@5",
        "MRR",
        "a prompt",
        "relevant",
        "none: silent",
        "questions injected"
    );
    for (name, selector) in selectors {
        for (set_name, set, half) in SETS {
            let measured = runtime.block_on(recall_set::measure(engine, Path::new(set), selector));
            let silence = runtime.block_on(recall_set::silence(
                engine,
                Path::new(set),
                &recall_set::questions(half),
                selector,
                &Bars::CHOSEN,
            ));
            let overall = &measured.overall;
            println!(
                "{:<9} {:<9} {:<11} {:>7} {:>9.2} {:>6.2} {:>9.2} {:>9.2}  {:>9}/{:<2}  {:>20}",
                name,
                set_name,
                "all",
                overall.prompts,
                overall.recall_at_5,
                overall.mrr,
                overall.injected_per_prompt,
                overall.precision,
                overall.none_silent,
                overall.none,
                injected(silence.injected, silence.pairs)
            );
            for (kind, quality) in &measured.by_kind {
                if kind == "none" {
                    continue;
                }
                println!(
                    "{:<9} {:<9} {:<11} {:>7} {:>9.2} {:>6.2} {:>9.2} {:>9.2}",
                    name,
                    set_name,
                    kind,
                    quality.prompts,
                    quality.recall_at_5,
                    quality.mrr,
                    quality.injected_per_prompt,
                    quality.precision
                );
            }
            if !silence.by_style.is_empty() {
                let styles: Vec<String> = silence
                    .by_style
                    .iter()
                    .map(|(style, (pairs, injected))| {
                        format!("{style} {:.0} %", 100.0 * *injected as f64 / *pairs as f64)
                    })
                    .collect();
                println!(
                    "{:<9} {:<9} questions injecting by phrasing: {}",
                    name,
                    set_name,
                    styles.join(", ")
                );
            }
            if std::env::var_os("ENGRAM_BENCH_MISSES").is_some() {
                for miss in &measured.misses {
                    println!("    miss {miss}");
                }
                for injection in &silence.injections {
                    println!("    injected {injection}");
                }
            }
        }
    }

    // The gate's trade-off: each provider's own bars moved around the chosen ones.
    let chosen = Bars::CHOSEN;
    // The anchor of each table: no gate at all, only the floor deciding which memories a prompt
    // gets — the recall the gate gives up. Offline every memory sharing a word is related;
    // locally every memory, whatever its strength (the lexical bars stay as chosen there: a
    // lexical match meeting them adds its share to the local score, so moving them would rank
    // differently, not just gate less).
    let label = "no gate (the floor only)".to_owned();
    let offline_no_gate = Bars {
        min_words: 1,
        min_coverage: 0.0,
        alone_coverage: 0.0,
        english_rarity: false,
        project_coverage: 0.0,
        ..chosen
    };
    let local_no_gate = Bars {
        prompt: f64::NEG_INFINITY,
        project_prompt: f64::NEG_INFINITY,
        model_alone: f64::NEG_INFINITY,
        memory: f64::NEG_INFINITY,
        ..chosen
    };
    // Offline: first blind to the prompt's form (every prompt held to the general question's
    // bars, each memory on its own, as before the form was read), then the form read with the
    // bar for prompts set in the project moved.
    let mut offline_settings: Vec<(String, Bars)> = vec![(label.clone(), offline_no_gate)];
    offline_settings.extend(
        [(1, 0.15), (2, 0.15), (2, 0.2), (2, 0.25), (2, 0.3)]
            .into_iter()
            .map(|(min_words, min_coverage)| {
                let bars = Bars {
                    min_words,
                    min_coverage,
                    // One word never counts on its own below the two-word bar's coverage.
                    alone_coverage: if min_words == 1 {
                        min_coverage
                    } else {
                        chosen.alone_coverage
                    },
                    english_rarity: false,
                    project_coverage: f64::INFINITY,
                    code_names: false,
                    bring_along: false,
                    ..chosen
                };
                let before = if min_words == 1 { " (first)" } else { "" };
                let words = if min_words == 1 { "word" } else { "words" };
                (
                    format!(
                        "form blind: {min_words} {words}, {:.0} %{before}",
                        min_coverage * 100.0
                    ),
                    bars,
                )
            }),
    );
    for project_coverage in [0.05, 0.1, 0.15, 0.2] {
        offline_settings.push((
            format!(
                "general 2 words, 20 %; project {:.0} %",
                project_coverage * 100.0
            ),
            Bars {
                project_coverage,
                ..chosen
            },
        ));
    }
    offline_settings.push((
        "chosen, code names not read (before)".to_owned(),
        Bars {
            code_names: false,
            ..chosen
        },
    ));
    offline_settings.push((
        "chosen, words by IDF alone (before)".to_owned(),
        Bars {
            english_rarity: false,
            ..chosen
        },
    ));
    // The relative floor around each provider's chosen one: what a higher floor saves in
    // memories a prompt, and what it costs in recall.
    offline_settings.push((
        "chosen, but each memory held to the bars".to_owned(),
        Bars {
            bring_along: false,
            lexical_floor: 0.4,
            ..chosen
        },
    ));
    for lexical_floor in [0.25, 0.3, 0.4, 0.45] {
        offline_settings.push((
            format!(
                "chosen, but floor {:.0} % of the best",
                lexical_floor * 100.0
            ),
            Bars {
                lexical_floor,
                ..chosen
            },
        ));
    }
    // Local: the first pass's gate (the model's mean, 3σ per unit of shared coverage), the
    // known share on the model's mean, the prompt's own baseline blind to the prompt's form
    // (one bar for every prompt), then the form read with each of its two bars moved.
    let form_blind = |prompt| Bars {
        prompt,
        project_prompt: prompt,
        model_alone: prompt,
        ..chosen
    };
    let mut local_settings: Vec<(String, Bars)> = vec![
        (label, local_no_gate),
        (
            "model mean 4.5σ, +3σ/coverage (first)".to_owned(),
            Bars {
                lexical_agreement: 3.0,
                prompt_baseline: false,
                ..form_blind(4.5)
            },
        ),
        (
            "model mean 4.5σ, +1.5σ × known share".to_owned(),
            Bars {
                in_domain: 1.5,
                prompt_baseline: false,
                ..form_blind(4.5)
            },
        ),
        (
            "own baseline 4.25σ, +1.5σ × known share".to_owned(),
            Bars {
                in_domain: 1.5,
                ..form_blind(4.25)
            },
        ),
    ];
    for prompt in [3.25, 3.5, 3.75] {
        let before = if prompt == 3.5 { " (before)" } else { "" };
        local_settings.push((
            format!("form blind: own baseline {prompt}σ{before}"),
            form_blind(prompt),
        ));
    }
    for prompt in [3.875, 4.125, 4.625] {
        let before = if prompt == 3.875 { " (before)" } else { "" };
        local_settings.push((
            format!(
                "general {prompt}σ; project {}σ{before}",
                chosen.project_prompt
            ),
            Bars { prompt, ..chosen },
        ));
    }
    for project_prompt in [2.125, 2.375, 2.625, 3.0] {
        local_settings.push((
            format!("general {}σ; project {project_prompt}σ", chosen.prompt),
            Bars {
                project_prompt,
                ..chosen
            },
        ));
    }
    // A general question the lexical side does not agree with (no memory meets its bars): the
    // strength its strongest memory needs on the model's word alone. At the general bar, the
    // lexical side is not asked; never, it is always asked.
    for model_alone in [chosen.prompt, 4.75, 5.0, f64::INFINITY] {
        let label = if model_alone == chosen.prompt {
            "model alone at the general bar".to_owned()
        } else if model_alone.is_infinite() {
            "model alone never".to_owned()
        } else {
            format!("model alone at {model_alone}σ")
        };
        local_settings.push((
            label,
            Bars {
                model_alone,
                ..chosen
            },
        ));
    }
    for semantic_floor in [0.25, 0.35, 0.4] {
        local_settings.push((
            format!(
                "chosen, but floor {:.0} % of the best",
                semantic_floor * 100.0
            ),
            Bars {
                semantic_floor,
                ..chosen
            },
        ));
    }
    println!();
    println!(
        "relevance gate: recall@5 and memories a prompt against ordinary questions wrongly \
         injected and the labeled prompts nothing relates to kept silent (* = chosen)"
    );
    let mut header = format!("{:<9} {:<41}", "recall", "gate");
    for (set_name, _, _) in SETS {
        header.push_str(&format!(
            " {:>9} {:>9} {:>20} {:>7}  ",
            set_name, "a prompt", "injected", "silent"
        ));
    }
    println!("{}", header.trim_end());
    for (name, selector) in selectors {
        let settings = if matches!(selector, Selector::Semantic(_)) {
            &local_settings
        } else {
            &offline_settings
        };
        for (label, bars) in settings {
            let mark = if *bars == chosen { "*" } else { " " };
            let mut line = format!("{name:<9} {mark}{label:<40}");
            for (_, set, half) in SETS {
                let at = point(&runtime, engine, selector, bars, (set, half));
                line.push_str(&format!(
                    " {:>9.2} {:>9.2} {:>20} {:>7}  ",
                    at.recall_at_5,
                    at.injected_per_prompt,
                    injected(at.injected, at.pairs),
                    format!("{}/{}", at.none_silent, at.none)
                ));
            }
            println!("{}", line.trim_end());
        }
    }
    Ok(())
}

/// Recall at 10,000 memories, in-process and through the prompt hook, each with its floor in the
/// same run: a cold recall (walk, stat, read, rank) against a warm one (the corpus kept in memory,
/// as the app keeps it), and the hook process recalling itself against the hook asking a running
/// server — with `engram --version` (start a process of the same binary, exit) as the hook floor.
pub fn recall_latency(corpus: &Path) -> Result<(), String> {
    use std::time::{Duration, Instant};

    use memory_engine::llm::CancellationToken;
    use memory_engine::recall::RecallRequest;

    const SIZE: usize = 10_000;
    const ROUNDS: usize = 25;
    let home = corpus.join("recall-latency-home");
    let project = home.join(".claude/projects/-home-u-app");
    let memory = project.join("memory");
    crate::generate_corpus(&memory, SIZE).map_err(|e| format!("{}: {e}", memory.display()))?;
    let memory = memory.canonicalize().map_err(|e| e.to_string())?;
    let engine = Engine::builder(memory_engine::Environment::from_process())
        .claude_home(home.join(".claude"))
        .engram_home(home.join("engram"))
        .build();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let request = RecallRequest {
        query: "deploy the cache when the parser touches the index".into(),
        ..RecallRequest::default()
    };
    let recall_once = |engine: &Engine| -> Result<Duration, String> {
        let started = Instant::now();
        runtime
            .block_on(engine.recall(
                &memory,
                &request,
                &Selector::Lexical,
                &CancellationToken::new(),
            ))
            .map_err(|e| e.to_string())?;
        Ok(started.elapsed())
    };
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    let warm_engine = Engine::builder(memory_engine::Environment::from_process())
        .claude_home(home.join(".claude"))
        .engram_home(home.join("engram"))
        .build();
    warm_engine
        .warm_corpora()
        .keep(&memory)
        .map_err(|e| e.to_string())?;
    recall_once(&warm_engine)?;
    for _ in 0..ROUNDS {
        cold.push(recall_once(&engine)?);
        warm.push(recall_once(&warm_engine)?);
    }
    let (cold, warm) = (crate::median(&mut cold), crate::median(&mut warm));
    println!();
    println!(
        "{:>7}  {:<22} {:>10} {:>10} {:>7}",
        "files", "recall (lexical)", "p50", "floor", "ratio"
    );
    println!(
        "{:>7}  {:<22} {:>10} {:>10} {:>7}",
        SIZE,
        "cold (CLI)",
        crate::format_duration(cold),
        "",
        ""
    );
    println!(
        "{:>7}  {:<22} {:>10} {:>10} {:>7}   ({:.0}× faster than cold)",
        SIZE,
        "warm corpus (app)",
        crate::format_duration(warm),
        "",
        "",
        cold.as_secs_f64() / warm.as_secs_f64()
    );

    let Some(engram) = crate::built_binary("engram", "prompt hook")? else {
        return Ok(());
    };
    let payload = serde_json::json!({
        "session_id": "bench", "cwd": "/home/u/app", "hook_event_name": "UserPromptSubmit",
        "prompt": request.query,
    })
    .to_string();
    let run = |args: &[&str], stdin: Option<&str>| crate::time_engram(&engram, &home, args, stdin);
    // No session memory between runs: every run recalls the same.
    let _ = std::fs::remove_dir_all(home.join("engram/sessions"));
    let hook = ["hook", "user-prompt-submit"];
    let (mut floor, mut direct, mut served) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        floor.push(run(&["--version"], None)?);
        direct.push(run(&hook, Some(&payload.replace("bench", "direct")))?);
    }
    // The server, as the app runs it, answering from its warm corpus.
    let server_engine = warm_engine.clone();
    let cancel = CancellationToken::new();
    let server = runtime.spawn({
        let cancel = cancel.clone();
        async move { server_engine.serve_prompt_hook(cancel).await }
    });
    let socket = warm_engine.hook_socket_path();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        if Instant::now() > deadline {
            return Err("the hook server never listened".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    run(&hook, Some(&payload))?;
    for round in 0..ROUNDS {
        served.push(run(
            &hook,
            Some(&payload.replace("bench", &format!("s{round}"))),
        )?);
    }
    cancel.cancel();
    let _ = runtime.block_on(server);
    let _ = std::fs::remove_dir_all(home.join("engram/sessions"));
    let (floor, direct, served) = (
        crate::median(&mut floor),
        crate::median(&mut direct),
        crate::median(&mut served),
    );
    println!(
        "{:>7}  {:<22} {:>10} {:>10} {:>6.1}×   (floor: engram --version)",
        SIZE,
        "hook, app answering",
        crate::format_duration(served),
        crate::format_duration(floor),
        served.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "{:>7}  {:<22} {:>10} {:>10} {:>6.1}×",
        SIZE,
        "hook, no app",
        crate::format_duration(direct),
        crate::format_duration(floor),
        direct.as_secs_f64() / floor.as_secs_f64()
    );
    Ok(())
}

/// The local model over a whole dir of 10,000 memories: the one-time embedding (`engram models
/// embed`, the app's Embed all memories) and the run after it, which finds every vector cached;
/// then local recall's p50 on that dir with the corpus warm.
pub fn embedding_throughput(corpus: &Path) -> Result<(), String> {
    use std::time::{Duration, Instant};

    use memory_engine::corpus::embed_dir;
    use memory_engine::llm::CancellationToken;
    use memory_engine::recall::RecallRequest;

    const SIZE: usize = 10_000;
    const ROUNDS: usize = 25;
    let memory = corpus.join("recall-latency-home/.claude/projects/-home-u-app/memory");
    crate::generate_corpus(&memory, SIZE).map_err(|e| format!("{}: {e}", memory.display()))?;
    let home = corpus.join("embed-home");
    let _ = std::fs::remove_dir_all(&home);
    let engine = Engine::builder(memory_engine::Environment::from_process())
        .engram_home(&home)
        .build();
    if let Err(e) = engine.embeddings().local_model() {
        println!("embedding not measured: {e}");
        return Ok(());
    }
    let embedder = engine.embeddings().clone();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let first =
        embed_dir(&memory, embedder.as_ref(), &cancel, &|_| {}).map_err(|e| e.to_string())?;
    let first_time = started.elapsed();
    let started = Instant::now();
    let again =
        embed_dir(&memory, embedder.as_ref(), &cancel, &|_| {}).map_err(|e| e.to_string())?;
    let again_time = started.elapsed();

    engine
        .warm_corpora()
        .keep(&memory.canonicalize().map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let selector = Selector::Semantic(embedder);
    let request = RecallRequest {
        query: "deploy the cache when the parser touches the index".into(),
        ..RecallRequest::default()
    };
    let mut times: Vec<Duration> = Vec::new();
    for round in 0..=ROUNDS {
        let started = Instant::now();
        runtime
            .block_on(engine.recall(&memory, &request, &selector, &cancel))
            .map_err(|e| e.to_string())?;
        if round > 0 {
            times.push(started.elapsed());
        }
    }
    println!();
    println!(
        "{:>7}  {:<34} {:>10} {:>14}",
        "files", "local model (all-MiniLM-L6-v2)", "time", "memories/s"
    );
    println!(
        "{:>7}  {:<34} {:>10} {:>14.0}",
        first.files,
        format!("embed all, first ({} computed)", first.embedded),
        crate::format_duration(first_time),
        first.embedded as f64 / first_time.as_secs_f64()
    );
    println!(
        "{:>7}  {:<34} {:>10} {:>14}",
        again.files,
        format!("embed all, again ({} cached)", again.cached),
        crate::format_duration(again_time),
        ""
    );
    println!(
        "{:>7}  {:<34} {:>10} {:>14}",
        SIZE,
        "recall (local), warm corpus p50",
        crate::format_duration(crate::median(&mut times)),
        ""
    );
    Ok(())
}
