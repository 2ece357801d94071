//! The labeled recall set (`bench/recall-set/`): three memory dirs written like real projects'
//! (a web shop, a data pipeline, a Rust CLI), and 75 natural prompts, each labeled with the
//! memories relevant to it and its kind — `keyword` (shares a word with the memory),
//! `paraphrase` (says the same thing in other words), `inference` (needs a small step), `long`
//! (a question around a pasted log or stack trace) or `none` (nothing in the dir is relevant, so
//! nothing should be injected; one of them around a pasted traceback).
//!
//! [`measure`] runs recall on every prompt and scores it: recall@5 (the share of a prompt's
//! relevant memories among its results, averaged over prompts with any), MRR (one over the rank
//! of the first relevant result) and how many `none` prompts injected nothing. `make bench`
//! prints these per provider; the engine's tests hold the lexical figures above their floors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{RecallRequest, Selector};
use crate::engine::Engine;

/// Where the set lives in the repository.
pub const RECALL_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/recall-set");

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
            none: self.none,
            none_silent: self.none_silent,
        }
    }
}

/// Runs recall with `selector` on every prompt of the set at `root` and scores the results.
pub async fn measure(engine: &Engine, root: &Path, selector: &Selector) -> Measured {
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
            .recall(&dir, &request, selector, &CancellationToken::new())
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
