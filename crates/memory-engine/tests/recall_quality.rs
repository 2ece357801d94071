//! Recall quality on the labeled sets (`bench/recall-set/`, the held-out `bench/recall-heldout/`)
//! and silence on ordinary questions no memory answers (`bench/recall-questions.toml`; see
//! `recall::quality`): the figures `make bench` prints, held above the floors the product
//! promises, so a ranking or gate change that loses memories — or injects them into prompts
//! nothing relates to — fails here rather than in a user's prompt.

use std::path::Path;

use memory_engine::config::LlmOverrides;
use memory_engine::embed::cosine;
use memory_engine::llm::{CancellationToken, ProviderKind};
use memory_engine::recall::quality::{
    self as recall_set, Measured, Silence, FRESH_SET, HELDOUT_SET, RECALL_SET,
};
use memory_engine::recall::{Bars, RecallReport, RecallRequest, RecallResult, Selector};
use memory_engine::testing::fixtures::{self, TempMemoryDir};
use memory_engine::testing::{Reply, ScriptedServer};
use memory_engine::{Engine, Environment};
use serde_json::{json, Value};

fn report(name: &str, measured: &Measured) -> String {
    let mut text = format!("{name}: {:?}\n", measured.overall);
    for (kind, quality) in &measured.by_kind {
        text.push_str(&format!("  {kind}: {quality:?}\n"));
    }
    for miss in &measured.misses {
        text.push_str(&format!("  miss {miss}\n"));
    }
    text
}

fn silence_report(name: &str, silence: &Silence) -> String {
    let mut text = format!(
        "{name}: {} of {} (question, dir) pairs injected\n",
        silence.injected, silence.pairs
    );
    for injection in &silence.injections {
        text.push_str(&format!("  {injection}\n"));
    }
    text
}

/// The result for `file` in `report`; a test failure listing what was recalled if it is not
/// there.
fn recalled<'a>(report: &'a RecallReport, file: &str) -> &'a RecallResult {
    report
        .results
        .iter()
        .find(|r| r.file == file)
        .unwrap_or_else(|| panic!("{:?} finds no {file}: {report:#?}", report.query))
}

/// Offline recall for `query` in the tuning set's memory dir `dir`.
async fn offline_recall(engine: &Engine, dir: &str, query: &str) -> RecallReport {
    engine
        .recall(
            &Path::new(RECALL_SET).join(dir),
            &RecallRequest {
                query: query.into(),
                ..RecallRequest::default()
            },
            &Selector::Lexical,
            &CancellationToken::new(),
        )
        .await
        .expect("recall")
}

/// Asks each half of the questions in its set's dirs: the tuning half in `bench/recall-set`,
/// the held-out half in `bench/recall-heldout`.
async fn silences(engine: &Engine, selector: &Selector) -> [(String, Silence); 2] {
    let mut out = Vec::new();
    for (half, set) in [("tune", RECALL_SET), ("heldout", HELDOUT_SET)] {
        let silence = recall_set::silence(
            engine,
            Path::new(set),
            &recall_set::questions(half),
            selector,
            &Bars::CHOSEN,
        )
        .await;
        out.push((half.to_owned(), silence));
    }
    out.try_into().expect("two halves")
}

#[tokio::test]
async fn lexical_recall_finds_most_memories_and_stays_quiet_when_nothing_relates() {
    let fx = TempMemoryDir::new("recall-quality");
    let measured = recall_set::measure(&fx.engine, Path::new(RECALL_SET), &Selector::Lexical).await;
    let text = report("lexical", &measured);
    println!("{text}");
    assert!(measured.overall.prompts >= 60, "{text}");
    // A prompt one memory shows to be about the dir brings its weaker matches along (each
    // memory held to the bars alone: 0.62)...
    assert!(measured.overall.recall_at_5 >= 0.64, "{text}");
    // ...but not a weak match next to a strong one: with a quarter of the best as the floor,
    // 2.09 memories a prompt.
    assert!(measured.overall.injected_per_prompt <= 1.8, "{text}");
    assert!(measured.overall.precision >= 0.4, "{text}");
    assert!(measured.overall.none >= 6, "{text}");
    assert_eq!(
        measured.overall.none_silent, measured.overall.none,
        "{text}"
    );
    assert!(measured.by_kind["keyword"].recall_at_5 >= 0.95, "{text}");
    // A pasted log does not drown the question around it.
    assert!(measured.by_kind["long"].recall_at_5 >= 0.66, "{text}");

    let heldout = recall_set::measure(&fx.engine, Path::new(HELDOUT_SET), &Selector::Lexical).await;
    let text = report("lexical, held out", &heldout);
    println!("{text}");
    assert!(heldout.overall.prompts >= 60, "{text}");
    assert!(heldout.overall.recall_at_5 >= 0.66, "{text}");
    assert!(heldout.by_kind["keyword"].recall_at_5 >= 0.85, "{text}");
    assert!(
        heldout.overall.none_silent * 6 >= heldout.overall.none * 5,
        "{text}"
    );

    // A request set in the project finds its memory by the one word it shares with it, which
    // a general question could not.
    let tokio = offline_recall(
        &fx.engine,
        "tidy-cli",
        "Let's use tokio to read files concurrently",
    )
    .await;
    let found = recalled(&tokio, "project_async.md");
    assert!(
        found
            .verdict
            .as_deref()
            .is_some_and(|v| v.starts_with("shares 1 of")
                && v.ends_with("meets 15 % (the prompt is set in the project)")),
        "{:?}",
        found.verdict
    );
    // The memory meant shares one word carrying 14 %, under the bars; the one about Stripe,
    // sharing two, shows the prompt is about the dir and brings it along.
    let types = offline_recall(
        &fx.engine,
        "shopfront",
        "Type this JSON response from the payment API, it has no types",
    )
    .await;
    let no_any = recalled(&types, "feedback_no_any.md");
    assert_eq!(
        no_any.verdict.as_deref(),
        Some(
            "shares 1 of the prompt's 5 words (14 % of its weight); brought along: \
             project_stripe_webhooks.md meets the bars, so the prompt is about this dir"
        )
    );
    assert_eq!(
        tokio.gate.as_deref(),
        Some(
            "the prompt reads as set in the project (it says \"let's\"): it is about this dir \
             when a memory shares words covering 15 % of its weight; then every memory sharing \
             its words is related"
        )
    );
}

/// Ordinary programming questions share words with any memory dir ("script", "test", "change",
/// "strict"); one shared word must not inject a memory. Before the relevance gate, 47 % of the
/// tuning (question, dir) pairs injected offline ("what does set -euo pipefail do in a bash
/// script?" got `feedback_no_notebooks.md` for the word "script").
#[tokio::test]
async fn ordinary_questions_inject_nothing_offline() {
    let fx = TempMemoryDir::new("recall-silence");
    for (half, silence) in silences(&fx.engine, &Selector::Lexical).await {
        let text = silence_report(&format!("offline, {half}"), &silence);
        println!("{text}");
        assert!(silence.pairs >= 200, "{text}");
        assert!(silence.rate() <= 0.15, "{text}");
    }
    let pipefail = offline_recall(
        &fx.engine,
        "datapipe",
        "What does set -euo pipefail do in a bash script?",
    )
    .await;
    assert!(pipefail.results.is_empty(), "{:?}", pipefail.results);
    let script = pipefail
        .passed_over
        .iter()
        .find(|p| p.file == "feedback_no_notebooks.md")
        .expect("the word `script` matched");
    // "script" is ordinary English: in a general question it weighs less than its IDF.
    assert_eq!(
        script.verdict,
        "shares 1 of the prompt's 5 words (13 % of its weight); needs 2 words and 20 %, or 40 % \
         alone"
    );
    assert!(
        pipefail.gate.as_deref().is_some_and(|g| g
            .starts_with("the prompt reads as a general question (\"what …\")")
            && g.contains("2 of the prompt's words")),
        "{:?}",
        pipefail.gate
    );
}

/// An engine whose models dir is the real model's (`None`: not installed here, skip).
fn engine_with_model(fx: &TempMemoryDir) -> Option<Engine> {
    let Some(models) = fixtures::test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return None;
    };
    Some(
        Engine::builder(Environment::empty().with("ENGRAM_MODELS_DIR", models.to_string_lossy()))
            .engram_home(fx.temp.path().join("engram"))
            .build(),
    )
}

#[test]
fn the_local_model_computes_what_the_reference_implementation_does() {
    let fx = TempMemoryDir::new("reference");
    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    // A plain NumPy BERT over the same safetensors and tokenizer (mean pooling over the real
    // tokens, L2-normalised) gives these first five values and this similarity.
    let vectors = engine
        .embeddings()
        .embed(&[
            "Be honest: is this plan any good?",
            "The user wants brutal honesty, no sugar-coating",
        ])
        .expect("embed");
    let reference = [
        -0.047_746_27,
        0.111_323_71,
        0.077_289_87,
        -0.001_567_85,
        0.001_629_56,
    ];
    for (got, want) in vectors[0].iter().zip(reference) {
        assert!((got - want).abs() < 1e-4, "{:?}", &vectors[0][..5]);
    }
    assert_eq!(vectors[0].len(), 384);
    let norm: f32 = vectors[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
    assert!((cosine(&vectors[0], &vectors[1]) - 0.138_52).abs() < 1e-3);
}

#[tokio::test]
async fn local_recall_finds_paraphrases_and_embeds_each_memory_once() {
    let fx = TempMemoryDir::new("recall-quality-local");
    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    let local = Selector::Semantic(engine.embeddings().clone());
    let measured = recall_set::measure(&engine, Path::new(RECALL_SET), &local).await;
    let text = report("local", &measured);
    println!("{text}");
    // 0.88 with one bar for every prompt, blind to its form.
    assert!(measured.overall.recall_at_5 >= 0.92, "{text}");
    // 3.62 memories a prompt with a quarter of the best as the floor.
    assert!(measured.overall.injected_per_prompt <= 3.4, "{text}");
    assert!(measured.by_kind["paraphrase"].recall_at_5 >= 0.7, "{text}");
    assert!(measured.by_kind["keyword"].recall_at_5 >= 0.95, "{text}");
    assert_eq!(
        measured.overall.none_silent, measured.overall.none,
        "{text}"
    );
    let heldout = recall_set::measure(&engine, Path::new(HELDOUT_SET), &local).await;
    let text = report("local, held out", &heldout);
    println!("{text}");
    assert!(heldout.overall.recall_at_5 >= 0.85, "{text}");
    assert!(
        heldout.overall.none_silent * 6 >= heldout.overall.none * 5,
        "{text}"
    );

    // Every memory and prompt was embedded once, and is cached on disk in Engram's data dir.
    let cached = engine.embeddings().cache().expect("cache").len();
    let memories: usize = ["shopfront", "datapipe", "tidy-cli"]
        .iter()
        .map(|dir| {
            std::fs::read_dir(Path::new(RECALL_SET).join(dir))
                .expect("dir")
                .filter(|e| {
                    let name = e.as_ref().expect("entry").file_name();
                    name != "MEMORY.md"
                })
                .count()
        })
        .sum();
    let heldout_memories: usize = recall_set::dirs(Path::new(HELDOUT_SET))
        .iter()
        .map(|dir| std::fs::read_dir(dir).expect("dir").count() - 1)
        .sum();
    let prompts = recall_set::load(Path::new(RECALL_SET)).len()
        + recall_set::load(Path::new(HELDOUT_SET)).len();
    // Plus the 40 unrelated texts that calibrate the model's similarity.
    assert_eq!(cached, memories + heldout_memories + prompts + 40);
    let file = fx
        .temp
        .path()
        .join("engram/embeddings/all-MiniLM-L6-v2.bin");
    assert_eq!(
        std::fs::metadata(&file).expect("cache file").len() as usize,
        13 + cached * (32 + 4 * 384)
    );
    // A second engine (another process) reads the cache and computes nothing new.
    let again = engine_with_model(&fx).expect("model");
    let local_again = Selector::Semantic(again.embeddings().clone());
    let measured_again = recall_set::measure(&again, Path::new(RECALL_SET), &local_again).await;
    assert_eq!(measured_again.overall, measured.overall);
    assert_eq!(again.embeddings().cache().expect("cache").len(), cached);
}

/// The local gate: a prompt passes on a memory standing out from the prompt's own similarity to
/// ordinary requests on other subjects. Before it, any memory at similarity 0.2 (or sharing one
/// word) was related, and 60 % of the tuning (question, dir) pairs injected.
#[tokio::test]
async fn ordinary_questions_inject_nothing_with_the_local_model() {
    let fx = TempMemoryDir::new("recall-silence-local");
    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    let local = Selector::Semantic(engine.embeddings().clone());
    for (half, silence) in silences(&engine, &local).await {
        let text = silence_report(&format!("local, {half}"), &silence);
        println!("{text}");
        assert!(silence.rate() <= 0.15, "{text}");
    }
    let report = engine
        .recall(
            &Path::new(RECALL_SET).join("datapipe"),
            &RecallRequest {
                query: "Write a quick function that parses these rows into dicts".into(),
                ..RecallRequest::default()
            },
            &local,
            &CancellationToken::new(),
        )
        .await
        .expect("recall");
    let hints = recalled(&report, "feedback_type_hints.md");
    let verdict = hints.verdict.as_deref().expect("verdict");
    assert!(
        verdict.starts_with("similarity ") && verdict.contains("σ over unrelated text; needs 1.5σ"),
        "{verdict}"
    );
    let gate = report.gate.as_deref().expect("gate");
    assert!(gate.contains("all-MiniLM-L6-v2"), "{gate}");
    assert!(
        gate.contains("above the prompt's own similarity to ordinary requests"),
        "{gate}"
    );
}

/// The set written apart from the gate (`bench/recall-fresh`): six projects' memories as Claude
/// Code writes them, prompts as developers type them, and nothing-relevant prompts on the
/// projects' own languages and tools, the hardest to keep quiet.
#[tokio::test]
async fn the_set_written_apart_from_the_gate_keeps_its_recall_and_its_silence() {
    let fx = TempMemoryDir::new("recall-fresh");
    let offline = recall_set::measure(&fx.engine, Path::new(FRESH_SET), &Selector::Lexical).await;
    let text = report("lexical, fresh", &offline);
    println!("{text}");
    assert!(offline.overall.prompts >= 230, "{text}");
    assert!(offline.overall.recall_at_5 >= 0.8, "{text}");
    assert!(offline.overall.none >= 12, "{text}");
    // At most one nothing-relevant prompt in six injects.
    assert!(
        offline.overall.none_silent * 6 >= offline.overall.none * 5,
        "{text}"
    );

    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    let local = Selector::Semantic(engine.embeddings().clone());
    let measured = recall_set::measure(&engine, Path::new(FRESH_SET), &local).await;
    let text = report("local, fresh", &measured);
    println!("{text}");
    assert!(measured.overall.recall_at_5 >= 0.85, "{text}");
    // At most one in six too. 2 of 12 inject: "numpy: fastest way to get the indices of the
    // top-k values …", read as set in the project (it says "the", and opens with no question
    // word), and "In TypeScript, when should I reach for `unknown` instead of `any`?", 6σ near
    // the rule that docs' TypeScript samples type-check. 5 with the model's word alone at the
    // general bar, 3 with the complaint "rubocop keeps telling me …" read as set in the project.
    assert!(
        measured.overall.none_silent * 6 >= measured.overall.none * 5,
        "{text}"
    );
}

/// A prompt is measured from its own similarity to ordinary requests: "can I pull in lodash
/// for this helper?" is near the memory saying to ask before adding a dependency, and near
/// nothing ordinary. Measured from the model's mean for unrelated text instead, it stayed under
/// the bar that keeps ordinary questions quiet (as "where should I send someone stuck getting
/// started?" did for the Discord memory).
#[tokio::test]
async fn a_prompt_near_a_memory_and_far_from_ordinary_requests_finds_it_locally() {
    let fx = TempMemoryDir::new("recall-own-baseline");
    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    let local = Selector::Semantic(engine.embeddings().clone());
    for (dir, query, file) in [
        (
            "shopfront",
            "Can I pull in lodash for this helper?",
            "feedback_ask_before_deps.md",
        ),
        (
            "tidy-cli",
            "Someone is stuck getting started, where should I send them to ask?",
            "reference_discord.md",
        ),
    ] {
        let report = engine
            .recall(
                &Path::new(RECALL_SET).join(dir),
                &RecallRequest {
                    query: query.into(),
                    ..RecallRequest::default()
                },
                &local,
                &CancellationToken::new(),
            )
            .await
            .expect("recall");
        let found = recalled(&report, file);
        let verdict = found.verdict.as_deref().expect("verdict");
        assert!(
            verdict.contains("σ over unrelated text; needs 1.5σ"),
            "{verdict}"
        );
    }
}

/// The issue's own example of what the installed model is for: "Be honest: is this plan any
/// good?" shares no word with the memory about brutal honesty (similarity 0.18, 2.5σ). Read as
/// a general question it would need 4.375σ and get nothing; it says "this plan", so it is set
/// in the project, where the strongest memory needs 2.375σ — as offline, a prompt pointing at
/// the asker's own work needs less evidence than an ordinary question. With the model installed
/// and nothing configured, local is the provider, so the hook finds it.
#[tokio::test]
async fn a_prompt_set_in_the_project_finds_a_memory_only_the_model_relates_to_it() {
    let fx = TempMemoryDir::new("recall-project-form-local");
    let Some(engine) = engine_with_model(&fx) else {
        return;
    };
    let dir = Path::new(RECALL_SET).join("tidy-cli");
    let setup = engine
        .recall_setup(&LlmOverrides::default(), &dir)
        .expect("setup");
    assert_eq!(
        setup.provider_reason,
        "the local model is installed and no provider is configured"
    );
    let recall = |query: &str| {
        let request = RecallRequest {
            query: query.into(),
            ..RecallRequest::default()
        };
        let engine = engine.clone();
        let dir = dir.clone();
        let setup = setup.clone();
        async move {
            engine
                .recall_as(&dir, &request, &setup, &CancellationToken::new())
                .await
                .expect("recall")
        }
    };
    let report = recall("Be honest: is this plan any good?").await;
    assert_eq!(report.provider, ProviderKind::Local);
    let files: Vec<&str> = report.results.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(
        files.first(),
        Some(&"feedback_brutal_honesty.md"),
        "{report:#?}"
    );
    let gate = report.gate.as_deref().expect("gate");
    assert!(
        gate.starts_with(
            "the prompt reads as set in the project (it says \"this\"): its strongest memory \
             must stand 2.375σ"
        ),
        "{gate}"
    );
    // The same words asked as a general question need the general bar, and stay quiet.
    let report = recall("Is a plan any good?").await;
    assert!(report.results.is_empty(), "{report:#?}");
    assert!(
        report
            .gate
            .as_deref()
            .is_some_and(|g| g.starts_with("the prompt reads as a general question")),
        "{:?}",
        report.gate
    );
}

#[tokio::test]
async fn without_the_model_local_recall_ranks_lexically_and_says_so() {
    let fx = TempMemoryDir::new("no-model");
    let dir = Path::new(RECALL_SET).join("tidy-cli");
    let request = RecallRequest {
        query: "Cut the 1.4.0 release with cargo-release".into(),
        ..RecallRequest::default()
    };
    let report = fx
        .engine
        .recall(
            &dir,
            &request,
            &Selector::Semantic(fx.engine.embeddings().clone()),
            &CancellationToken::new(),
        )
        .await
        .expect("recall");
    assert_eq!(report.provider, ProviderKind::Local);
    let degraded = report.degraded.as_deref().expect("degraded");
    assert!(
        degraded.contains("engram models fetch") && degraded.ends_with("ranked lexically"),
        "{degraded}"
    );
    assert_eq!(report.results[0].file, "project_release_process.md");
    assert!(report.results[0].reason.starts_with("matched: "));
}

/// `[llm] embeddings = "openai"`: the vectors come from an OpenAI-compatible `/v1/embeddings`
/// server. The one on loopback here serves all-MiniLM-L6-v2 (as Ollama or LM Studio would serve
/// a model), scaled and listed out of order as a server may: recall must match the local model's
/// exactly, send the configured model and key, and cache what it was given.
#[tokio::test]
async fn an_openai_compatible_embeddings_server_is_a_source_of_vectors() {
    let fx = TempMemoryDir::new("recall-quality-openai-embeddings");
    let Some(model_engine) = engine_with_model(&fx) else {
        return;
    };
    let model = std::sync::Arc::clone(model_engine.embeddings());
    let server = ScriptedServer::handler(move |request, _| {
        let body = request.json();
        let inputs: Vec<String> = body["input"]
            .as_array()
            .expect("input list")
            .iter()
            .map(|t| t.as_str().expect("text").to_owned())
            .collect();
        let texts: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let vectors = model
            .local_model()
            .expect("model")
            .embed(&texts)
            .expect("embed");
        let data: Vec<Value> = vectors
            .iter()
            .enumerate()
            .rev()
            .map(|(index, v)| {
                let scaled: Vec<f32> = v.iter().map(|x| x * 3.0).collect();
                json!({"object": "embedding", "index": index, "embedding": scaled})
            })
            .collect();
        Reply::json(json!({
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 8, "total_tokens": 8},
        }))
    });
    let home = fx.temp.path().join("engram-openai");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[llm]\nprovider = \"local\"\nembeddings = \"openai\"\n\n[llm.openai]\nbase_url = \"{}/v1\"\nembedding_model = \"all-minilm\"\n",
            server.url()
        ),
    )
    .expect("config");
    let engine_at = |home: &Path| {
        Engine::builder(Environment::empty().with("OPENAI_API_KEY", "sk-embed"))
            .engram_home(home)
            .build()
    };
    let engine = engine_at(&home);
    let selector = engine
        .recall_selector(&LlmOverrides::default(), Path::new(RECALL_SET))
        .expect("selector");
    assert!(matches!(selector, Selector::Semantic(_)));
    let measured = recall_set::measure(&engine, Path::new(RECALL_SET), &selector).await;
    let local = Selector::Semantic(model_engine.embeddings().clone());
    let expected = recall_set::measure(&model_engine, Path::new(RECALL_SET), &local).await;
    assert_eq!(
        measured.overall,
        expected.overall,
        "{}",
        report("openai", &measured)
    );

    let requests = server.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(request.header("authorization"), Some("Bearer sk-embed"));
        assert_eq!(request.json()["model"], "all-minilm");
        assert!(request.json()["input"].as_array().expect("input").len() <= 64);
    }
    // Cached in Engram's data dir: another process asks the server nothing.
    let again = engine_at(&home);
    let selector = again
        .recall_selector(&LlmOverrides::default(), Path::new(RECALL_SET))
        .expect("selector");
    let measured_again = recall_set::measure(&again, Path::new(RECALL_SET), &selector).await;
    assert_eq!(measured_again.overall, measured.overall);
    assert_eq!(server.requests().len(), requests.len());
}

#[tokio::test]
async fn an_unreachable_embeddings_server_degrades_to_lexical_recall_and_says_why() {
    let fx = TempMemoryDir::new("openai-embeddings-down");
    let server = ScriptedServer::queue(vec![Reply::status(
        500,
        "{\"error\":{\"message\":\"model not found\"}}",
    )]);
    std::fs::create_dir_all(fx.engine.engram_home()).expect("home");
    std::fs::write(
        fx.engine.config_path(),
        format!(
            "[llm]\nprovider = \"local\"\nembeddings = \"openai\"\nmax_retries = 0\n\n[llm.openai]\nbase_url = \"{}/v1\"\n",
            server.url()
        ),
    )
    .expect("config");
    let dir = Path::new(RECALL_SET).join("tidy-cli");
    let selector = fx
        .engine
        .recall_selector(&LlmOverrides::default(), &dir)
        .expect("selector");
    let request = RecallRequest {
        query: "Cut the 1.4.0 release with cargo-release".into(),
        ..RecallRequest::default()
    };
    let report = fx
        .engine
        .recall(&dir, &request, &selector, &CancellationToken::new())
        .await
        .expect("recall");
    let degraded = report.degraded.as_deref().expect("degraded");
    assert!(
        degraded.contains("openai embeddings") && degraded.contains("500"),
        "{degraded}"
    );
    assert_eq!(report.results[0].file, "project_release_process.md");
    assert_eq!(
        server.requests()[0].json()["model"],
        "text-embedding-3-small"
    );
}
