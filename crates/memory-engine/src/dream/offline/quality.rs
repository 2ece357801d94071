//! How well the dream does, on the set in `bench/dream-set/`:
//!
//! - the labeled near-duplicate pairs (`pairs.toml`): pairs of memories, each labeled duplicate
//!   or not, written apart from any dir the dream is scored on. [`measure_pairs`] runs the
//!   dream's own decision ([`super::likeness`]) on every pair and scores it;
//! - the messy dir (`messy/`, `messy.toml`): [`score_messy_dir`] dreams a copy, stages the dream,
//!   accepts it whole and checks the eleven criteria (dead pointers, orphans, exact duplicates,
//!   long index lines, protected files kept, near-duplicates merged, the contradiction resolved
//!   or flagged, relative dates absolute, the index within its caps, frontmatter repaired, the
//!   secret redacted) and that no fact was lost.
//!
//! `make bench` prints both, offline and with the local model; the engine's tests hold them above
//! their floors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, NaiveDate};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::likeness::{change_statements, stems, vector_text, verdict, Rarity, Verdict};
use crate::clock::FixedClock;
use crate::config::{DreamPolicy, LlmOverrides};
use crate::dream::{DreamOptions, GateCheck};
use crate::embed::{cosine, Embedder};
use crate::engine::Engine;
use crate::environment::Environment;
use crate::llm::ProviderKind;

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

/// The messy dir's definition (`bench/dream-set/messy.toml`).
#[derive(Debug, Clone, Deserialize)]
pub struct MessySpec {
    /// When the dream runs (RFC 3339).
    pub now: String,
    /// The day every file not in `written` was last written.
    pub default_written: String,
    #[serde(default)]
    pub written: BTreeMap<String, String>,
    pub criteria: MessyCriteria,
    pub facts: MessyFacts,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MessyCriteria {
    pub dead_pointers: Vec<String>,
    pub orphans: Vec<String>,
    pub exact_duplicates: Vec<Vec<String>>,
    pub protected: Vec<String>,
    pub relative_dates: Vec<String>,
    pub frontmatter: Vec<String>,
    pub secret: String,
    pub near_duplicates: Vec<NearDuplicateGroup>,
    pub contradiction: Contradiction,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NearDuplicateGroup {
    pub files: Vec<String>,
    pub facts: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Contradiction {
    pub older: String,
    pub newer: String,
    pub stale: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MessyFacts {
    pub kept: Vec<String>,
}

/// One criterion, met or not, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    pub name: &'static str,
    pub met: bool,
    pub detail: String,
}

/// A dream of the messy dir, staged and accepted whole, scored.
#[derive(Debug, Clone)]
pub struct MessyScore {
    pub criteria: Vec<Criterion>,
    /// Facts of `[facts]` still somewhere in the dir, and those lost.
    pub facts_kept: usize,
    pub facts_lost: Vec<String>,
    /// The dream's summary.
    pub summary: String,
    /// Files a second dream, right after, would change (none: the dream finished the job), and
    /// its summary.
    pub again: usize,
    pub again_summary: String,
}

impl MessyScore {
    pub fn met(&self) -> usize {
        self.criteria.iter().filter(|c| c.met).count()
    }
}

/// Reads `messy.toml` beside the messy dir.
pub fn load_messy_spec(root: &Path) -> Result<MessySpec, String> {
    let path = root.join("messy.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Copies the messy dir of the set at `root` into a fresh project under `scratch`, dreams it with
/// `provider` (`offline` or `local`; `models` the local model's dir) at the spec's `now`, stages
/// the dream, accepts the whole change set, and scores the result.
pub async fn score_messy_dir(
    root: &Path,
    scratch: &Path,
    provider: ProviderKind,
    models: Option<&Path>,
) -> Result<MessyScore, String> {
    let spec = load_messy_spec(root)?;
    let now = DateTime::parse_from_rfc3339(&spec.now).map_err(|e| format!("now: {e}"))?;
    let _ = std::fs::remove_dir_all(scratch);
    let claude = scratch.join(".claude");
    let project = "-home-u-ledgerly";
    let memory = claude.join("projects").join(project).join("memory");
    copy_with_dates(&root.join("messy"), &memory, &spec)?;
    let mut env = Environment::empty().with("HOME", scratch.to_string_lossy());
    if let Some(models) = models {
        env = env.with("ENGRAM_MODELS_DIR", models.to_string_lossy());
    }
    let clock = FixedClock::new(SystemTime::from(now));
    let engine = Engine::builder(env)
        .claude_home(&claude)
        .engram_home(scratch.join("engram"))
        .clock(std::sync::Arc::new(clock))
        .build();
    let target = engine.dream_target(project).map_err(|e| e.to_string())?;
    let options = DreamOptions {
        gates: GateCheck::Skip,
        policy: Some(DreamPolicy::Review),
        llm: LlmOverrides {
            provider: Some(provider),
            ..LlmOverrides::default()
        },
        current_session: None,
    };
    let outcome = engine
        .run_dream(&target, &options, &CancellationToken::new(), |_| {})
        .await
        .map_err(|e| e.to_string())?;
    if let Some(id) = &outcome.change_set {
        let applied = engine
            .apply_staged(id, &[], true, Some(&target.memory_dir))
            .map_err(|e| e.to_string())?;
        if let Some(f) = applied.files.iter().find(|f| f.error.is_some()) {
            return Err(format!("{}: {:?}", f.change.file, f.error));
        }
    }
    let after = read_dir_texts(&memory)?;
    let mut scored = score(&spec, &after, &outcome.summary);
    let again = engine
        .run_dream(&target, &options, &CancellationToken::new(), |_| {})
        .await
        .map_err(|e| e.to_string())?;
    scored.again = match &again.change_set {
        Some(id) => engine
            .staged_change_set(id)
            .map_err(|e| e.to_string())?
            .files
            .len(),
        None => 0,
    };
    scored.again_summary = again.summary;
    Ok(scored)
}

/// Every file of the copy given its mtime from the spec.
fn copy_with_dates(from: &Path, to: &Path, spec: &MessySpec) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let target = to.join(&name);
        std::fs::copy(entry.path(), &target).map_err(|e| format!("{name}: {e}"))?;
        let day = spec.written.get(&name).unwrap_or(&spec.default_written);
        let noon = NaiveDate::parse_from_str(day, "%Y-%m-%d")
            .map_err(|e| format!("{name}: {day}: {e}"))?
            .and_hms_opt(12, 0, 0)
            .map(|t| SystemTime::from(t.and_utc()))
            .ok_or_else(|| format!("{name}: {day}"))?;
        std::fs::File::options()
            .write(true)
            .open(&target)
            .and_then(|f| f.set_times(std::fs::FileTimes::new().set_modified(noon)))
            .map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// Every file of `dir` (recursively) by its relative path.
fn read_dir_texts(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut texts = BTreeMap::new();
    for rel in crate::disk::memory_files(dir).map_err(|e| e.to_string())? {
        let text = crate::disk::read_text(&dir.join(&rel)).map_err(|e| e.to_string())?;
        texts.insert(rel, text);
    }
    if let Ok(index) = crate::disk::read_text(&dir.join(crate::index::INDEX_FILE)) {
        texts.insert(crate::index::INDEX_FILE.to_owned(), index);
    }
    Ok(texts)
}

/// The criteria of `spec` on the dir's files `after` the dream.
fn score(spec: &MessySpec, after: &BTreeMap<String, String>, summary: &str) -> MessyScore {
    use crate::index::{self, INDEX_FILE, MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES};
    let c = &spec.criteria;
    let exists = |f: &str| after.contains_key(f);
    let index_text = after.get(INDEX_FILE).cloned().unwrap_or_default();
    let listings: Vec<(&str, &str)> = std::iter::once((INDEX_FILE, index_text.as_str()))
        .chain(
            index::parse_entries(&index_text)
                .into_iter()
                .filter_map(|e| after.get_key_value(e.file.as_str()))
                .filter(|(f, t)| index::is_topic_index(f, t))
                .map(|(f, t)| (f.as_str(), t.as_str())),
        )
        .collect();
    let listed: BTreeSet<String> = listings
        .iter()
        .flat_map(|(_, t)| index::parse_entries(t))
        .map(|e| e.file)
        .collect();
    let everything: String = after
        .values()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n");
    let mut criteria = Vec::new();
    let mut add = |name: &'static str, met: bool, detail: String| {
        criteria.push(Criterion { name, met, detail });
    };

    let dangling: Vec<&String> = listed.iter().filter(|f| !exists(f)).collect();
    add(
        "dead pointers",
        dangling.is_empty() && c.dead_pointers.iter().all(|d| !listed.contains(d)),
        format!("lines to missing files: {dangling:?}"),
    );
    let unreachable: Vec<&String> = after
        .keys()
        .filter(|f| *f != INDEX_FILE && !listed.contains(*f))
        .collect();
    add(
        "orphans",
        unreachable.is_empty(),
        format!("not reachable from {INDEX_FILE}: {unreachable:?}"),
    );
    let left: Vec<usize> = c
        .exact_duplicates
        .iter()
        .map(|g| g.iter().filter(|f| exists(f)).count())
        .collect();
    add(
        "exact duplicates",
        left.iter().all(|&n| n == 1),
        format!("files left per group: {left:?}"),
    );
    let long: Vec<usize> = index_text
        .lines()
        .map(|l| l.chars().count())
        .filter(|&n| n > MAX_ENTRY_CHARS)
        .collect();
    add(
        "long index lines",
        long.is_empty(),
        format!("lines over {MAX_ENTRY_CHARS} characters: {long:?}"),
    );
    let gone: Vec<&String> = c.protected.iter().filter(|f| !exists(f)).collect();
    add(
        "protected files kept",
        gone.is_empty(),
        format!("protected files gone: {gone:?}"),
    );
    let mut split = Vec::new();
    for group in &c.near_duplicates {
        let remaining: Vec<&String> = group.files.iter().filter(|f| exists(f)).collect();
        let missing: Vec<&String> = match remaining.as_slice() {
            [one] => group
                .facts
                .iter()
                .filter(|fact| !after[one.as_str()].contains(fact.as_str()))
                .collect(),
            _ => Vec::new(),
        };
        if remaining.len() != 1 || !missing.is_empty() {
            split.push(format!("{remaining:?} (facts missing: {missing:?})"));
        }
    }
    add(
        "near-duplicates merged",
        split.is_empty(),
        format!("groups not merged into one file with every fact: {split:?}"),
    );
    let stale = &c.contradiction.stale;
    let stated: Vec<String> = after
        .iter()
        .filter(|(f, _)| *f != INDEX_FILE)
        .flat_map(|(f, t)| {
            crate::dream::offline::likeness::sentences(&frontmatter_free(t))
                .into_iter()
                .filter(|s| s.contains(stale.as_str()))
                .filter(|s| !s.contains("Until ") && change_statements(s).is_empty())
                .map(|s| format!("{f}: {s}"))
                .collect::<Vec<_>>()
        })
        .collect();
    let indexed = index_text.lines().any(|l| l.contains(stale.as_str()));
    let flagged = summary.contains("possibly-contradictory")
        && (summary.contains(&c.contradiction.older) || summary.contains(&c.contradiction.newer));
    add(
        "contradiction resolved or flagged",
        (stated.is_empty() && !indexed) || flagged,
        format!("still stated as current: {stated:?}; in the index: {indexed}; flagged: {flagged}"),
    );
    let dated: Vec<&String> = c
        .relative_dates
        .iter()
        .filter(|phrase| {
            let pattern = format!(r"(?i)\b{}\b", regex::escape(phrase));
            regex::Regex::new(&pattern).is_ok_and(|re| re.is_match(&everything))
        })
        .collect();
    add(
        "relative dates absolute",
        dated.is_empty(),
        format!("phrases left: {dated:?}"),
    );
    let loaded = index::load_index_text(&index_text);
    add(
        "index within caps",
        loaded.lines <= MAX_INDEX_LINES && loaded.bytes <= MAX_INDEX_BYTES,
        format!("{} lines, {} units", loaded.lines, loaded.bytes),
    );
    let unreadable: Vec<&String> = c
        .frontmatter
        .iter()
        .filter(|f| {
            after.get(f.as_str()).is_none_or(|t| {
                let fm = crate::frontmatter::parse_document(t).frontmatter;
                fm.status.is_unusable() || fm.name.is_none() || fm.description.is_none()
            })
        })
        .collect();
    add(
        "frontmatter repaired",
        unreadable.is_empty(),
        format!("still unreadable: {unreadable:?}"),
    );
    let holding: Vec<&String> = after
        .iter()
        .filter(|(_, t)| t.contains(c.secret.as_str()))
        .map(|(f, _)| f)
        .collect();
    add(
        "secret redacted",
        holding.is_empty(),
        format!("files holding it: {holding:?}"),
    );
    let facts_lost: Vec<String> = spec
        .facts
        .kept
        .iter()
        .filter(|fact| !everything.contains(fact.as_str()))
        .cloned()
        .collect();
    MessyScore {
        criteria,
        facts_kept: spec.facts.kept.len() - facts_lost.len(),
        facts_lost,
        summary: summary.to_owned(),
        again: 0,
        again_summary: String::new(),
    }
}

fn frontmatter_free(text: &str) -> String {
    crate::frontmatter::parse_document(text).body
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

    fn messy(provider: ProviderKind, models: Option<&Path>) -> MessyScore {
        let scratch = tempfile::tempdir().expect("scratch");
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let score = runtime
            .block_on(score_messy_dir(
                Path::new(DREAM_SET),
                &scratch.path().join("home"),
                provider,
                models,
            ))
            .expect("score");
        for c in &score.criteria {
            println!(
                "{} {}: {}",
                if c.met { "met" } else { "NOT" },
                c.name,
                c.detail
            );
        }
        println!("facts lost: {:?}\n{}", score.facts_lost, score.summary);
        println!("again: {} files\n{}", score.again, score.again_summary);
        score
    }

    #[test]
    fn offline_the_messy_dir_meets_its_criteria_and_loses_no_fact() {
        let score = messy(ProviderKind::Offline, None);
        assert!(score.facts_lost.is_empty(), "{:?}", score.facts_lost);
        assert_eq!(score.again, 0, "{}", score.again_summary);
        assert!(score.met() >= 10, "{:#?}", score.criteria);
    }

    #[test]
    fn with_the_local_model_the_messy_dir_meets_every_criterion() {
        let Some(models) = crate::testing::fixtures::test_models_dir() else {
            eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
            return;
        };
        let score = messy(ProviderKind::Local, Some(&models));
        assert!(score.facts_lost.is_empty(), "{:?}", score.facts_lost);
        assert_eq!(score.again, 0, "{}", score.again_summary);
        assert_eq!(score.met(), score.criteria.len(), "{:#?}", score.criteria);
    }
}
