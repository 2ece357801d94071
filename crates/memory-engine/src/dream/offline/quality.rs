//! The labeled near-duplicate set (`bench/dream-set/pairs.toml`): pairs of memories, each labeled
//! duplicate or not, written apart from any dir the dream is scored on. [`measure_pairs`] runs
//! the dream's own decision ([`super::likeness`]) on every pair and scores it; `make bench`
//! prints the figures offline and with the local model, and the engine's tests hold them above
//! their floors.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use super::likeness::{stems, vector_text, verdict, Rarity, Verdict};
use crate::embed::{cosine, Embedder};

/// Where the set lives in the repository.
pub const DREAM_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/dream-set");

/// One side of a pair: `name | description | type | body`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSide {
    pub name: String,
    pub description: String,
    pub memory_type: String,
    pub body: String,
}

/// One labeled pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabeledPair {
    pub kind: String,
    pub duplicate: bool,
    pub a: PairSide,
    pub b: PairSide,
}

#[derive(Deserialize)]
struct RawPair {
    kind: String,
    duplicate: bool,
    a: String,
    b: String,
}

#[derive(Deserialize)]
struct PairsFile {
    pair: Vec<RawPair>,
}

fn side(text: &str) -> Option<PairSide> {
    let mut parts = text.splitn(4, " | ");
    Some(PairSide {
        name: parts.next()?.trim().to_owned(),
        description: parts.next()?.trim().to_owned(),
        memory_type: parts.next()?.trim().to_owned(),
        body: parts.next()?.trim().to_owned(),
    })
}

/// The set's pairs; an error names the file and what is wrong.
pub fn load_pairs(root: &Path) -> Result<Vec<LabeledPair>, String> {
    let path = root.join("pairs.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: PairsFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    file.pair
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let broken = || {
                format!(
                    "{}: pair {} is not `name | description | type | body`",
                    path.display(),
                    i + 1
                )
            };
            Ok(LabeledPair {
                kind: raw.kind,
                duplicate: raw.duplicate,
                a: side(&raw.a).ok_or_else(broken)?,
                b: side(&raw.b).ok_or_else(broken)?,
            })
        })
        .collect()
}

/// How the dream's decision does on the set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairScores {
    pub pairs: usize,
    /// Duplicates merged, distinct pairs merged, duplicates left apart.
    pub true_merges: usize,
    pub false_merges: usize,
    pub missed: usize,
    /// `update` pairs (the second a later state of the first) found as updates, of how many.
    pub updates_found: usize,
    pub updates: usize,
    /// One line per wrong decision, for a person to read.
    pub wrong: Vec<String>,
}

impl PairScores {
    pub fn precision(&self) -> f64 {
        ratio(self.true_merges, self.true_merges + self.false_merges)
    }

    pub fn recall(&self) -> f64 {
        ratio(self.true_merges, self.true_merges + self.missed)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Runs the dream's decision on every pair of the set at `root` (the second of each pair taken
/// as the newer), with `embedder`'s vectors when given, and scores it.
pub fn measure_pairs(root: &Path, embedder: Option<&dyn Embedder>) -> Result<PairScores, String> {
    let pairs = load_pairs(root)?;
    let text = |s: &PairSide| vector_text(&s.name, &s.description, &s.body);
    let texts: Vec<String> = pairs
        .iter()
        .flat_map(|p| [text(&p.a), text(&p.b)])
        .collect();
    let all: Vec<BTreeSet<String>> = texts.iter().map(|t| stems(t)).collect();
    let rarity = Rarity::new(&all);
    let vectors = match embedder {
        Some(embedder) => {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            Some(embedder.embed(&refs).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let mut scores = PairScores {
        pairs: pairs.len(),
        ..PairScores::default()
    };
    for (i, pair) in pairs.iter().enumerate() {
        let vector = vectors.as_ref().map(|v| cosine(&v[2 * i], &v[2 * i + 1]));
        let likeness = rarity.likeness(&all[2 * i], &all[2 * i + 1], vector);
        let decided = verdict(&likeness, &texts[2 * i], &texts[2 * i + 1]);
        let merged = decided == Verdict::Duplicate;
        match (pair.duplicate, merged) {
            (true, true) => scores.true_merges += 1,
            (false, true) => scores.false_merges += 1,
            (true, false) => scores.missed += 1,
            (false, false) => {}
        }
        if pair.kind == "update" {
            scores.updates += 1;
            scores.updates_found += usize::from(matches!(decided, Verdict::Update { .. }));
        }
        if pair.duplicate != merged
            || (pair.kind == "update" && !matches!(decided, Verdict::Update { .. }))
        {
            scores.wrong.push(format!(
                "[{}] {} / {}: {} → {decided:?}",
                pair.kind,
                pair.a.name,
                pair.b.name,
                likeness.describe()
            ));
        }
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Embeddings;

    /// The floors `make bench` reports against: merges must be right ([`PairScores::precision`]
    /// ≥ 0.95), offline and with the local model.
    const MIN_PRECISION: f64 = 0.95;

    #[test]
    fn the_set_has_sixty_pairs_or_more_of_both_labels() {
        let pairs = load_pairs(Path::new(DREAM_SET)).expect("pairs");
        let duplicates = pairs.iter().filter(|p| p.duplicate).count();
        assert!(pairs.len() >= 60, "{} pairs", pairs.len());
        assert!(
            duplicates >= 30 && pairs.len() - duplicates >= 30,
            "{duplicates} duplicates"
        );
    }

    #[test]
    fn offline_merges_are_right_on_the_labeled_pairs() {
        let scores = measure_pairs(Path::new(DREAM_SET), None).expect("measure");
        println!("{scores:#?}");
        assert!(
            scores.precision() >= MIN_PRECISION && scores.recall() >= 0.4,
            "precision {:.2}, recall {:.2}: {:#?}",
            scores.precision(),
            scores.recall(),
            scores.wrong
        );
        assert!(
            scores.updates_found * 2 >= scores.updates,
            "{:#?}",
            scores.wrong
        );
    }

    #[test]
    fn with_the_local_model_merges_are_right_and_most_duplicates_found() {
        let Some(models) = crate::testing::fixtures::test_models_dir() else {
            eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
            return;
        };
        let home = tempfile::tempdir().expect("home");
        let embeddings = Embeddings::new(models, home.path(), String::new());
        let scores = measure_pairs(Path::new(DREAM_SET), Some(&embeddings)).expect("measure");
        println!("{scores:#?}");
        assert!(
            scores.precision() >= MIN_PRECISION && scores.recall() >= 0.85,
            "precision {:.2}, recall {:.2}: {:#?}",
            scores.precision(),
            scores.recall(),
            scores.wrong
        );
    }
}
