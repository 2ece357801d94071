//! The offline selector: the corpus's BM25F index (name ×2, file name ×1.5, description ×1, body
//! ×0.5 — the words a memory shows only in its text still count, less than the words that say
//! what it is), the relevance gate's lexical verdict ([`gate::LexicalEvidence`], asked of it by
//! the prompt's form), then the shared cut in [`choose`].

use super::gate::{self, Bars, LexicalEvidence};
use super::prompt_form::PromptForm;
use super::{PassedOver, PassedOverWhy, Selected};
use crate::corpus::Corpus;
use crate::scan::MemoryHeader;

/// One candidate's standing, best first.
pub(super) struct Ranked {
    pub index: usize,
    pub score: f64,
    pub reason: String,
    /// What it shares with the prompt word for word (`None`: nothing).
    pub lexical: Option<LexicalEvidence>,
    /// Below the gate: never chosen, reported as unrelated.
    pub unrelated: bool,
    /// The gate's verdict in words.
    pub verdict: String,
}

/// The offered files of `corpus` sharing a word with `query` (a prompt of `form`), best first,
/// each with the offline gate's verdict.
pub(super) fn rank(
    corpus: &Corpus,
    query: &str,
    form: &PromptForm,
    offered: &[bool],
    bars: &Bars,
) -> Vec<Ranked> {
    corpus
        .lexical
        .search(query)
        .into_iter()
        .filter(|hit| offered[hit.doc])
        .map(|hit| {
            let evidence = LexicalEvidence {
                words: hit.matched.len(),
                prompt_words: hit.query_terms,
                coverage: hit.coverage,
                general_question: form.general,
            };
            Ranked {
                index: hit.doc,
                score: hit.score,
                reason: format!("matched: {}", hit.matched.join(", ")),
                lexical: Some(evidence),
                unrelated: !evidence.passes(bars),
                verdict: evidence.verdict(bars),
            }
        })
        .collect()
}

/// Takes up to `limit` of `ranked` (best first): never one the gate found unrelated, nor one
/// scoring under `floor` of the best related score ([`Bars::lexical_floor`] or
/// [`Bars::semantic_floor`]); every other match is passed over, with why.
pub(super) fn choose(
    candidates: &[MemoryHeader],
    ranked: Vec<Ranked>,
    limit: usize,
    floor: f64,
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
        } else if ranked.score < best * floor {
            PassedOverWhy::BelowFloor
        } else if selected.len() >= limit {
            PassedOverWhy::OverLimit
        } else {
            selected.push(Selected {
                index: ranked.index,
                score: Some(score),
                reason: ranked.reason,
                verdict: Some(ranked.verdict),
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
            verdict: ranked.verdict,
        });
    }
    (selected, passed_over)
}

/// The gate's rule for offline recall, for a prompt of `form`, in words.
pub(super) fn rule(bars: &Bars, form: &PromptForm) -> String {
    gate::lexical_rule(bars, form)
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    fn header(file: &str) -> MemoryHeader {
        MemoryHeader {
            file: file.to_owned(),
            name: None,
            description: None,
            memory_type: None,
            mtime: SystemTime::UNIX_EPOCH,
            age: "today".to_owned(),
            days: 0,
        }
    }

    fn ranked(index: usize, score: f64, unrelated: bool) -> Ranked {
        Ranked {
            index,
            score,
            reason: "matched: deploy".to_owned(),
            lexical: None,
            unrelated,
            verdict: String::new(),
        }
    }

    #[test]
    fn a_match_far_under_the_best_related_one_is_passed_over_as_too_weak() {
        let candidates: Vec<MemoryHeader> = ["strong.md", "near.md", "weak.md", "unrelated.md"]
            .into_iter()
            .map(header)
            .collect();
        // The unrelated match scores highest, but the floor is measured from the best related.
        let ranking = vec![
            ranked(3, 20.0, true),
            ranked(0, 10.0, false),
            ranked(1, 4.1, false),
            ranked(2, 3.9, false),
        ];
        let (selected, passed_over) = choose(&candidates, ranking, 5, 0.4);
        let chosen: Vec<&str> = selected
            .iter()
            .map(|s| candidates[s.index].file.as_str())
            .collect();
        assert_eq!(chosen, ["strong.md", "near.md"]);
        let why: Vec<(&str, PassedOverWhy)> = passed_over
            .iter()
            .map(|p| (p.file.as_str(), p.why))
            .collect();
        assert_eq!(
            why,
            [
                ("unrelated.md", PassedOverWhy::Unrelated),
                ("weak.md", PassedOverWhy::BelowFloor)
            ]
        );
    }
}
