//! The labeled recall set (`bench/recall-set/`): three memory dirs written like real projects'
//! (a web shop, a data pipeline, a Rust CLI), and 75 natural prompts, each labeled with the
//! memories relevant to it and its kind — `keyword` (shares a word with the memory),
//! `paraphrase` (says the same thing in other words), `inference` (needs a small step), `long`
//! (a question around a pasted log or stack trace) or `none` (nothing in the dir is relevant, so
//! nothing should be injected; one of them around a pasted traceback).
//!
//! A second set written apart from it, `bench/recall-heldout/` (a mobile app, a platform team, a
//! clinic booking app), is never tuned on: it says how the numbers hold on memories and prompts
//! nobody looked at while choosing the relevance gate's bars. A third, `bench/recall-fresh/` (six
//! projects), was written later by writers who saw neither the sets nor the gate, with memories
//! as Claude Code writes them (**Why:** and **How to apply:** lines) and nothing-relevant prompts
//! on the projects' own languages and tools. And `bench/recall-questions.toml` holds ordinary
//! programming questions no memory answers, split into a `tune`, a `heldout` and a `fresh` half
//! (natural phrasings, for `bench/recall-fresh`): every one asked in every dir of the matching
//! set should inject nothing.
//!
//! [`measure`] runs recall on every prompt and scores it: recall@5 (the share of a prompt's
//! relevant memories among its results, averaged over prompts with any), MRR (one over the rank
//! of the first relevant result), how many memories a prompt got and how many of those are
//! labeled relevant to it (the labels name the memories a prompt is about, so a memory that
//! helps a little counts as unrelated), and how many `none` prompts injected nothing; [`silence`]
//! counts the questions that injected. `make bench` prints these per provider and gate setting;
//! the engine's tests hold them above their floors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Bars, RecallRequest, Selector};
use crate::engine::Engine;

/// Where the set lives in the repository.
pub const RECALL_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/recall-set");
/// The held-out set.
pub const HELDOUT_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/recall-heldout");
/// The second held-out set, written apart from both and from the gate.
pub const FRESH_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/recall-fresh");
/// The ordinary questions no memory answers.
pub const QUESTIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/recall-questions.toml"
);

/// One question no memory answers.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    pub topic: String,
    /// `tune`, `heldout` or `fresh`.
    pub half: String,
    pub text: String,
    /// How it is phrased, for the fresh ones: `plain`, `label`, `leading`, `comparison`,
    /// `fragment`, `trouble`, `imperative` or `pasted`; `yesno` for the tuning and held-out ones
    /// asking yes or no.
    #[serde(default)]
    pub style: String,
}

#[derive(Deserialize)]
struct QuestionsFile {
    question: Vec<Question>,
}

/// The questions of `half` (`tune` or `heldout`).
pub fn questions(half: &str) -> Vec<Question> {
    let text =
        std::fs::read_to_string(QUESTIONS).unwrap_or_else(|e| panic!("read {QUESTIONS}: {e}"));
    toml::from_str::<QuestionsFile>(&text)
        .unwrap_or_else(|e| panic!("{QUESTIONS}: {e}"))
        .question
        .into_iter()
        .filter(|q| q.half == half)
        .collect()
}

/// The memory dirs of a set (its folders).
pub fn dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// How many (question, dir) pairs injected something, of how many.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Silence {
    pub pairs: usize,
    pub injected: usize,
    /// `question → files`, for a person to read.
    pub injections: Vec<String>,
    /// Per phrasing of the questions that say theirs: (pairs, injected).
    pub by_style: BTreeMap<String, (usize, usize)>,
}

impl Silence {
    /// The share of pairs that injected, in 0..=1.
    pub fn rate(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.injected as f64 / self.pairs as f64
        }
    }
}

/// Asks every question in every memory dir of `root` and counts what injected.
pub async fn silence(
    engine: &Engine,
    root: &Path,
    questions: &[Question],
    selector: &Selector,
    bars: &Bars,
) -> Silence {
    let mut silence = Silence::default();
    for dir in dirs(root) {
        for question in questions {
            let request = RecallRequest {
                query: question.text.clone(),
                ..RecallRequest::default()
            };
            let report = engine
                .recall_gated(&dir, &request, selector, bars, &CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("recall {:?}: {e}", question.text));
            silence.pairs += 1;
            let injected = !report.results.is_empty();
            if !question.style.is_empty() {
                let style = silence.by_style.entry(question.style.clone()).or_default();
                style.0 += 1;
                style.1 += usize::from(injected);
            }
            if injected {
                silence.injected += 1;
                let files: Vec<&str> = report.results.iter().map(|r| r.file.as_str()).collect();
                silence.injections.push(format!(
                    "[{}] {:?} → {files:?}",
                    dir.file_name().unwrap_or_default().to_string_lossy(),
                    question.text
                ));
            }
        }
    }
    silence
}

/// One labeled prompt.
#[derive(Debug, Clone, Deserialize)]
pub struct LabeledPrompt {
    /// The memory dir, a folder of the set.
    pub dir: String,
    pub text: String,
    pub kind: String,
    /// Files of the dir relevant to the prompt (empty for `none`).
    pub relevant: Vec<String>,
}

#[derive(Deserialize)]
struct PromptsFile {
    prompt: Vec<LabeledPrompt>,
}

/// The set's prompts.
pub fn load(root: &Path) -> Vec<LabeledPrompt> {
    let path = root.join("prompts.toml");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    toml::from_str::<PromptsFile>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .prompt
}

/// Recall quality over the set (or over one kind of its prompts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quality {
    /// Prompts with relevant memories.
    pub prompts: usize,
    pub recall_at_5: f64,
    pub mrr: f64,
    /// Memories injected per prompt with relevant memories.
    pub injected_per_prompt: f64,
    /// The share of the memories injected into those prompts that are labeled relevant to them.
    pub precision: f64,
    /// `none` prompts, and how many of them injected nothing.
    pub none: usize,
    pub none_silent: usize,
}

/// Quality overall and per kind, and one line per prompt that missed, for a person to read.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub overall: Quality,
    pub by_kind: BTreeMap<String, Quality>,
    pub misses: Vec<String>,
}

#[derive(Default)]
struct Sums {
    prompts: usize,
    recall: f64,
    reciprocal_rank: f64,
    injected: usize,
    injected_relevant: usize,
    none: usize,
    none_silent: usize,
}

impl Sums {
    fn add(&mut self, prompt: &LabeledPrompt, results: &[String]) {
        if prompt.relevant.is_empty() {
            self.none += 1;
            self.none_silent += usize::from(results.is_empty());
            return;
        }
        self.prompts += 1;
        let top: Vec<&String> = results.iter().take(5).collect();
        let found = prompt.relevant.iter().filter(|r| top.contains(r)).count();
        self.recall += found as f64 / prompt.relevant.len() as f64;
        self.injected += results.len();
        self.injected_relevant += results
            .iter()
            .filter(|r| prompt.relevant.contains(r))
            .count();
        if let Some(rank) = results.iter().position(|r| prompt.relevant.contains(r)) {
            self.reciprocal_rank += 1.0 / (rank + 1) as f64;
        }
    }

    fn quality(&self) -> Quality {
        let per = |sum: f64| {
            if self.prompts == 0 {
                0.0
            } else {
                sum / self.prompts as f64
            }
        };
        Quality {
            prompts: self.prompts,
            recall_at_5: per(self.recall),
            mrr: per(self.reciprocal_rank),
            injected_per_prompt: per(self.injected as f64),
            precision: if self.injected == 0 {
                0.0
            } else {
                self.injected_relevant as f64 / self.injected as f64
            },
            none: self.none,
            none_silent: self.none_silent,
        }
    }
}

/// Runs recall with `selector` on every prompt of the set at `root` and scores the results.
pub async fn measure(engine: &Engine, root: &Path, selector: &Selector) -> Measured {
    measure_gated(engine, root, selector, &Bars::CHOSEN).await
}

/// [`measure`] with the relevance gate's bars at `bars`.
pub async fn measure_gated(
    engine: &Engine,
    root: &Path,
    selector: &Selector,
    bars: &Bars,
) -> Measured {
    let mut overall = Sums::default();
    let mut by_kind: BTreeMap<String, Sums> = BTreeMap::new();
    let mut misses = Vec::new();
    for prompt in load(root) {
        let dir: PathBuf = root.join(&prompt.dir);
        let request = RecallRequest {
            query: prompt.text.clone(),
            ..RecallRequest::default()
        };
        let report = engine
            .recall_gated(&dir, &request, selector, bars, &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("recall {:?}: {e}", prompt.text));
        let results: Vec<String> = report.results.into_iter().map(|r| r.file).collect();
        overall.add(&prompt, &results);
        by_kind
            .entry(prompt.kind.clone())
            .or_default()
            .add(&prompt, &results);
        let missed = if prompt.relevant.is_empty() {
            !results.is_empty()
        } else {
            !prompt.relevant.iter().all(|r| results.contains(r))
        };
        if missed {
            misses.push(format!(
                "[{}] {:?} wants {:?}, got {:?}",
                prompt.kind, prompt.text, prompt.relevant, results
            ));
        }
    }
    Measured {
        overall: overall.quality(),
        by_kind: by_kind.into_iter().map(|(k, s)| (k, s.quality())).collect(),
        misses,
    }
}
