//! The semantic selector: the lexical ranking and sentence-vector similarity, combined. Each
//! memory is embedded as its name and description ([`crate::corpus::embedding_text`]), cached per
//! text and kept with the corpus; the prompt is embedded once per recall (cached too).
//!
//! A memory's score is its cosine similarity to the prompt plus a share of its lexical score
//! (relative to the best lexical match), so an exact shared term still lifts a memory the model
//! finds only near. A memory is unrelated when neither signal says otherwise: similarity under
//! [`MIN_SIMILARITY`] and no lexical match of its own.

use super::lexical::Ranked;
use crate::corpus::Corpus;
use crate::embed::{cosine, Embedder};
use crate::error::Result;

/// Similarity at which the model alone makes a memory relevant. all-MiniLM-L6-v2 puts
/// unrelated sentences around 0–0.15; on the labeled set (`make bench`) 0.2 keeps every prompt
/// nothing relates to silent, 0.15 lets two of six inject.
pub(super) const MIN_SIMILARITY: f64 = 0.2;
/// How much of the lexical score (0..=1 of the best) joins the similarity.
const LEXICAL_SHARE: f64 = 0.3;
/// Every offered file of `corpus` ranked by similarity and lexical score combined, best first.
/// Blocking; an error when the local model cannot be used.
pub(super) fn rank(
    embedder: &dyn Embedder,
    corpus: &Corpus,
    query: &str,
    lexical: &[Ranked],
    offered: &[bool],
) -> Result<Vec<Ranked>> {
    let memory_vectors = corpus.vectors(embedder)?;
    let query_vector = embedder
        .embed(&[query])?
        .pop()
        .expect("one vector per text");
    let best_lexical = lexical
        .iter()
        .filter(|r| !r.unrelated)
        .map(|r| r.score)
        .fold(0.0, f64::max);
    let mut lexical_of: Vec<Option<&Ranked>> = vec![None; corpus.headers.len()];
    for ranked in lexical {
        lexical_of[ranked.index] = Some(ranked);
    }
    let mut ranked: Vec<Ranked> = memory_vectors
        .iter()
        .enumerate()
        .filter(|(index, _)| offered[*index])
        .map(|(index, vector)| {
            let similarity = f64::from(cosine(&query_vector, vector));
            let lexical = lexical_of[index].filter(|r| !r.unrelated);
            let lexical_share = match lexical {
                Some(r) if best_lexical > 0.0 => r.score / best_lexical,
                _ => 0.0,
            };
            let mut reason = format!("similarity {similarity:.2}");
            if let Some(r) = lexical_of[index] {
                reason = format!("{reason}; {}", r.reason);
            }
            Ranked {
                index,
                score: similarity + LEXICAL_SHARE * lexical_share,
                reason,
                unrelated: similarity < MIN_SIMILARITY && lexical.is_none(),
            }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    Ok(ranked)
}
