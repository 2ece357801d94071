//! The local selector: the lexical ranking and the local model's similarity, combined. Each
//! memory is embedded as its name and description ([`memory_text`]), cached per text; the prompt
//! is embedded once per recall.
//!
//! A memory's score is its cosine similarity to the prompt plus a share of its lexical score
//! (relative to the best lexical match), so an exact shared term still lifts a memory the model
//! finds only near. A memory is unrelated when neither signal says otherwise: similarity under
//! [`MIN_SIMILARITY`] and no lexical match of its own.

use super::lexical::Ranked;
use crate::embed::cosine;
use crate::engine::Engine;
use crate::error::Result;
use crate::scan::MemoryHeader;

/// Similarity at which the model alone makes a memory relevant. all-MiniLM-L6-v2 puts
/// unrelated sentences around 0–0.15; on the labeled set (`make bench`) 0.2 keeps every prompt
/// nothing relates to silent, 0.15 lets two of six inject.
pub(super) const MIN_SIMILARITY: f64 = 0.2;
/// How much of the lexical score (0..=1 of the best) joins the similarity.
const LEXICAL_SHARE: f64 = 0.3;
/// Body characters embedded for a memory without a description.
const BODY_CHARS: usize = 300;

/// What the model reads for a memory: its name and description — one sentence saying what it
/// is, which the model compares best (adding the body measured worse on the labeled set) — or,
/// without a description, the start of its body.
pub(super) fn memory_text(header: &MemoryHeader, body: &str) -> String {
    let name = header.name.as_deref().unwrap_or(&header.file);
    match header
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    {
        Some(description) => format!("{name}: {description}"),
        None => {
            let mut end = body.len().min(BODY_CHARS);
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            format!("{name}: {}", &body[..end])
        }
    }
}

/// Every candidate ranked by similarity and lexical score combined, best first. Blocking.
pub(super) fn rank(
    engine: &Engine,
    candidates: &[MemoryHeader],
    bodies: &[String],
    query: &str,
    lexical: &[Ranked],
) -> Result<Vec<Ranked>> {
    let texts: Vec<String> = candidates
        .iter()
        .zip(bodies)
        .map(|(h, body)| memory_text(h, body))
        .collect();
    let mut all: Vec<&str> = texts.iter().map(String::as_str).collect();
    all.push(query);
    let vectors = engine.embeddings().embed(&all)?;
    let (query_vector, memory_vectors) = vectors.split_last().expect("the query is embedded");
    let best_lexical = lexical
        .iter()
        .filter(|r| !r.unrelated)
        .map(|r| r.score)
        .fold(0.0, f64::max);
    let mut lexical_of: Vec<Option<&Ranked>> = vec![None; candidates.len()];
    for ranked in lexical {
        lexical_of[ranked.index] = Some(ranked);
    }
    let mut ranked: Vec<Ranked> = memory_vectors
        .iter()
        .enumerate()
        .map(|(index, vector)| {
            let similarity = f64::from(cosine(query_vector, vector));
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
