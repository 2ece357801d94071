//! The labeled extraction set (`bench/extract-set/`): user turns as people type them, each
//! labeled with whether the offline extractor should keep something from it (a fact, a
//! preference, a rule, a role — with a phrase the memory must contain) or nothing (chatter, a
//! reminder meant for the person, a question about the past, a request about "this"/"the
//! following" and pasted material, a hypothetical, a one-off task, thanks, code).
//!
//! It comes in two halves that share no turn: `tune.toml`, which the extractor's rules were
//! tuned on, and `heldout.toml`, other turns in other phrasings, the reported figure.
//!
//! [`measure`] runs the offline extractor on every turn of one half and scores it:
//! - a *hit* is a should-save turn with a memory that contains its phrase;
//! - precision = hits / turns that produced any memory (a memory from a should-not turn, or one
//!   missing the phrase, counts against it);
//! - recall = hits / should-save turns.
//!
//! `make bench` prints both halves; the engine's tests hold them above their floors.

use std::path::Path;

use serde::Deserialize;

use crate::error::{IoResultExt, Result};

/// Where the set lives in the repository.
pub const EXTRACT_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/extract-set");
/// The half the rules were tuned on.
pub const TUNE: &str = "tune.toml";
/// The half they never saw: the reported figure.
pub const HELDOUT: &str = "heldout.toml";

/// One labeled user turn.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabeledTurn {
    pub text: String,
    /// Whether something should be kept from it.
    pub save: bool,
    /// For a turn to save: text the memory must contain (case-insensitive).
    #[serde(default)]
    pub phrase: Option<String>,
    /// Why, in one word (`fact`, `rule`, `pasted`, `reminder`, …), for the report.
    pub kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnsFile {
    turn: Vec<LabeledTurn>,
}

/// The turns of the half at `path`.
pub fn load(path: &Path) -> Result<Vec<LabeledTurn>> {
    let text = std::fs::read_to_string(path).at(path)?;
    let file: TurnsFile =
        toml::from_str(&text).map_err(|e| crate::config::toml_error(path, &text, &e))?;
    Ok(file.turn)
}

/// How the extractor did on one half of the set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quality {
    pub turns: usize,
    pub should_save: usize,
    /// Turns that produced at least one memory.
    pub saved: usize,
    /// Should-save turns with a memory holding their phrase.
    pub hits: usize,
    pub precision: f64,
    pub recall: f64,
}

/// The figures and one line per wrong turn, for a person to read.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub quality: Quality,
    pub misses: Vec<String>,
}

/// Runs the offline extractor on every turn of the half at `path` and scores it.
pub fn measure(path: &Path) -> Result<Measured> {
    let mut quality = Quality::default();
    let mut misses = Vec::new();
    for turn in load(path)? {
        let memories: Vec<String> = super::offline_statements(&turn.text)
            .into_iter()
            .map(|s| s.text)
            .collect();
        quality.turns += 1;
        quality.should_save += usize::from(turn.save);
        quality.saved += usize::from(!memories.is_empty());
        let phrase = turn.phrase.as_deref().unwrap_or("").to_lowercase();
        let hit = turn.save
            && memories
                .iter()
                .any(|memory| memory.to_lowercase().contains(&phrase));
        quality.hits += usize::from(hit);
        let first_line = turn.text.lines().next().unwrap_or("");
        if turn.save && !hit {
            misses.push(format!(
                "missed ({}) {first_line:?} → {memories:?}",
                turn.kind
            ));
        } else if !turn.save && !memories.is_empty() {
            misses.push(format!(
                "kept ({}) {first_line:?} → {memories:?}",
                turn.kind
            ));
        }
    }
    let ratio = |part: usize, whole: usize| {
        if whole == 0 {
            1.0
        } else {
            part as f64 / whole as f64
        }
    };
    quality.precision = ratio(quality.hits, quality.saved);
    quality.recall = ratio(quality.hits, quality.should_save);
    Ok(Measured { quality, misses })
}
