//! The semantic selector: the lexical ranking and sentence-vector similarity, combined. Each
//! memory is embedded as its name, description and the start of its body
//! ([`crate::corpus::recall_text`]), cached per text and kept with the corpus; the prompt is
//! embedded once per recall (cached too).
//!
//! A memory's score is its cosine similarity to the prompt plus a share of its lexical score
//! (relative to the best lexical match the gate let through), so an exact shared term still
//! lifts a memory the model finds only near. Whether it is related at all is the gate's call
//! ([`gate::semantic_verdicts`]): its similarity measured from the prompt's own similarity to
//! ordinary requests, in the model's spread for unrelated text ([`gate::Calibration`]: 20 dot
//! products per prompt, the requests' vectors cached with the calibration), and, where the bars
//! count them, what it shares with the prompt word for word and how much of the prompt is words
//! the dir uses at all (one more pass over the prompt's words, each one lookup in the warm
//! corpus's vocabulary). Neither adds work per memory.

use super::gate::{self, Bars, Calibration};
use super::lexical::Ranked;
use super::prompt_form::PromptForm;
use crate::corpus::Corpus;
use crate::embed::{cosine, Embedder};
use crate::error::{Error, Result};

/// How much of the lexical score (0..=1 of the best) joins the similarity.
const LEXICAL_SHARE: f64 = 0.3;

/// Every offered file of `corpus` ranked by similarity and lexical score combined, best first,
/// with the gate's verdict, and the gate's rule for this model. Blocking; an error when the
/// model cannot be used.
pub(super) fn rank(
    embedder: &dyn Embedder,
    corpus: &Corpus,
    query: &str,
    form: &PromptForm,
    lexical: &[Ranked],
    offered: &[bool],
    bars: &Bars,
) -> Result<(Vec<Ranked>, String)> {
    let memory_vectors = corpus.vectors(embedder)?;
    let query_vector = embedder.embed(&[query])?.pop().ok_or_else(|| {
        Error::InvalidInput(format!("{}: no vector for the prompt", embedder.id()))
    })?;
    let calibration = Calibration::measure(embedder)?;
    let calibration = if bars.prompt_baseline {
        calibration.for_prompt(&query_vector)
    } else {
        calibration
    };
    let best_lexical = lexical
        .iter()
        .filter(|r| !r.unrelated)
        .map(|r| r.score)
        .fold(0.0, f64::max);
    let mut lexical_of: Vec<Option<&Ranked>> = vec![None; corpus.headers.len()];
    for ranked in lexical {
        lexical_of[ranked.index] = Some(ranked);
    }
    let candidates: Vec<(usize, f64)> = memory_vectors
        .iter()
        .enumerate()
        .filter(|(index, _)| offered[*index])
        .map(|(index, vector)| (index, f64::from(cosine(&query_vector, vector))))
        .collect();
    let evidence: Vec<(f64, Option<gate::LexicalEvidence>)> = candidates
        .iter()
        .map(|&(index, similarity)| (similarity, lexical_of[index].and_then(|r| r.lexical)))
        .collect();
    // The prompt's words are looked up only when they count.
    let known_share = if bars.in_domain > 0.0 {
        corpus.lexical.known_share(query)
    } else {
        0.0
    };
    // The lexical side agrees when a memory meets its bars (`lexical::rank`'s own verdicts).
    let lexical_agrees = lexical.iter().any(|r| !r.unrelated);
    let verdicts = gate::semantic_verdicts(
        &calibration,
        &evidence,
        known_share,
        form,
        lexical_agrees,
        bars,
    );
    let mut ranked: Vec<Ranked> = candidates
        .into_iter()
        .zip(verdicts)
        .map(|((index, similarity), (related, verdict))| {
            let lexical = lexical_of[index];
            let lexical_share = match lexical.filter(|r| !r.unrelated) {
                Some(r) if best_lexical > 0.0 => r.score / best_lexical,
                _ => 0.0,
            };
            let mut reason = format!("similarity {similarity:.2}");
            if let Some(r) = lexical {
                reason = format!("{reason}; {}", r.reason);
            }
            Ranked {
                index,
                score: similarity + LEXICAL_SHARE * lexical_share,
                reason,
                lexical: lexical.and_then(|r| r.lexical),
                unrelated: !related,
                verdict,
            }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    Ok((ranked, calibration.rule(bars, form, lexical_agrees)))
}
