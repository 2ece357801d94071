//! The offline selector: the corpus's BM25F index (name ×2, file name ×1.5, description ×1, body
//! ×0.5 — the words a memory shows only in its text still count, less than the words that say
//! what it is), then the shared cut in [`choose`].

use super::{PassedOver, PassedOverWhy, Selected};
use crate::corpus::Corpus;
use crate::scan::MemoryHeader;

/// A memory that matches less than this share of the prompt's weight (IDF) is not about the
/// prompt: one incidental shared word in a long prompt does not make a memory relevant, and a
/// prompt nothing relates to injects nothing. Measured on the labeled set (`make bench`): 0.15
/// keeps every keyword match and silences every unrelated prompt; 0.2 starts losing
/// inferences.
pub(super) const MIN_COVERAGE: f64 = 0.15;
/// Matches scoring below this fraction of the best are noise next to it.
pub(super) const RELATIVE_FLOOR: f64 = 0.25;

/// One candidate's standing, best first.
pub(super) struct Ranked {
    pub index: usize,
    pub score: f64,
    pub reason: String,
    /// Below the selector's own bar of relevance: never chosen, reported as unrelated.
    pub unrelated: bool,
}

/// The offered files of `corpus` sharing a word with `query`, best first.
pub(super) fn rank(corpus: &Corpus, query: &str, offered: &[bool]) -> Vec<Ranked> {
    corpus
        .lexical
        .search(query)
        .into_iter()
        .filter(|hit| offered[hit.doc])
        .map(|hit| Ranked {
            index: hit.doc,
            score: hit.score,
            reason: format!("matched: {}", hit.matched.join(", ")),
            unrelated: hit.coverage < MIN_COVERAGE,
        })
        .collect()
}

/// Takes up to `limit` of `ranked` (best first): never one the selector found unrelated, nor one
/// under [`RELATIVE_FLOOR`] of the best related score; every other match is passed over, with why.
pub(super) fn choose(
    candidates: &[MemoryHeader],
    ranked: Vec<Ranked>,
    limit: usize,
) -> (Vec<Selected>, Vec<PassedOver>) {
    let best = ranked
        .iter()
        .filter(|r| !r.unrelated)
        .map(|r| r.score)
        .fold(0.0, f64::max);
    let mut selected = Vec::new();
    let mut passed_over = Vec::new();
    for ranked in ranked {
        let score = (ranked.score * 1000.0).round() / 1000.0;
        let why = if ranked.unrelated {
            PassedOverWhy::Unrelated
        } else if ranked.score < best * RELATIVE_FLOOR {
            PassedOverWhy::BelowFloor
        } else if selected.len() >= limit {
            PassedOverWhy::OverLimit
        } else {
            selected.push(Selected {
                index: ranked.index,
                score: Some(score),
                reason: ranked.reason,
            });
            continue;
        };
        let header = &candidates[ranked.index];
        passed_over.push(PassedOver {
            file: header.file.clone(),
            memory_type: header.memory_type,
            description: header.description.clone(),
            score,
            reason: ranked.reason,
            why,
        });
    }
    (selected, passed_over)
}
