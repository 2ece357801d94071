//! How two memories relate, as the dream decides it: the same memory saved twice (merge them),
//! a newer one saying the older's state changed (keep the older as history), or distinct.
//!
//! Two measures, calibrated on the labeled pair set (`bench/dream-set/pairs.toml`, see
//! [`super::quality`]):
//!
//! - **vectors** (when the dream has them, provider `local`): the cosine of the sentence vectors
//!   of each memory's whole text — name, description and body, as people write duplicates; the
//!   name and description alone put restatements as low as 0.34;
//! - **facts**: the share of the smaller memory's words, weighted by rarity among the memories
//!   compared, that the other states too — names, numbers, places and tools count most.
//!
//! A pair is a duplicate when its vectors are at least [`DUPLICATE_VECTOR`] alike and the facts
//! confirm it ([`DUPLICATE_FACTS_CONFIRM`]), or — with or without vectors — when the facts alone
//! reach [`DUPLICATE_FACTS`]. On the set: every pair of distinct memories is under 0.53 in
//! vectors and under 0.54 in facts; the duplicates missed say the thing in wholly other words
//! (under 0.6 in vectors, or under 0.3 in facts).
//! A pair where one says something changed (`moved from`, `replaced`, `no longer`, …) is never a
//! duplicate: it is an update, for the contradiction rule.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::bm25;

/// Vectors (whole text) from which two memories may be one saved twice.
pub const DUPLICATE_VECTOR: f32 = 0.6;
/// Facts (balanced, see [`Likeness::balanced`]) that confirm a pair the vectors found: below it
/// they share too few rare words — two memories about money in one project (0.68 alike in
/// vectors, 0.21 in facts: "amounts are integer cents" / "tax is rounded half to even per line")
/// are not one memory, nor is the second of them like the first once it has grown by a merge.
pub const DUPLICATE_FACTS_CONFIRM: f32 = 0.3;
/// Facts that make a duplicate on their own (offline, without vectors, this is the rule).
pub const DUPLICATE_FACTS: f32 = 0.6;
/// Vectors from which two memories are about the same subject (an update and its older state
/// are 0.55–0.79 on the set; distinct memories of one project mostly under 0.45).
pub const SUBJECT_VECTOR: f32 = 0.45;
/// Facts from which two memories are about the same subject.
pub const SUBJECT_FACTS: f32 = 0.25;

/// The text a memory is embedded as: everything it says, name and description first (the model
/// reads the first 256 tokens).
pub fn vector_text(name: &str, description: &str, body: &str) -> String {
    format!("{name}: {description}\n{body}")
}

/// The distinct word stems of a text (stop words out).
pub fn stems(text: &str) -> BTreeSet<String> {
    bm25::tokens(text).into_iter().collect()
}

/// How rare each stem is among the memories compared: `ln(1 + n / df)`.
#[derive(Debug, Clone, Default)]
pub struct Rarity {
    documents: usize,
    frequency: BTreeMap<String, usize>,
}

impl Rarity {
    pub fn new<'a>(memories: impl IntoIterator<Item = &'a BTreeSet<String>>) -> Rarity {
        let mut rarity = Rarity::default();
        for stems in memories {
            rarity.documents += 1;
            for stem in stems {
                *rarity.frequency.entry(stem.clone()).or_default() += 1;
            }
        }
        rarity
    }

    fn weight(&self, stem: &str) -> f32 {
        let df = self.frequency.get(stem).copied().unwrap_or(1).max(1);
        (1.0 + self.documents.max(2) as f32 / df as f32).ln()
    }

    /// The two memories' likeness in facts, with `vector` their vectors' cosine when known.
    pub fn likeness(
        &self,
        a: &BTreeSet<String>,
        b: &BTreeSet<String>,
        vector: Option<f32>,
    ) -> Likeness {
        let total = |s: &BTreeSet<String>| s.iter().map(|t| self.weight(t)).sum::<f32>();
        let shared: f32 = a.intersection(b).map(|t| self.weight(t)).sum();
        let (wa, wb) = (total(a), total(b));
        let share = |whole: f32| if whole <= 0.0 { 0.0 } else { shared / whole };
        Likeness {
            vector,
            facts: share(wa.min(wb)),
            balanced: share((wa + wb) / 2.0),
        }
    }
}

/// The two measures of one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Likeness {
    /// Cosine of the whole texts' vectors, when the dream has vectors.
    pub vector: Option<f32>,
    /// The share of the smaller memory's weighted words the other states too (0–1): 1 when one
    /// says nothing the other does not.
    pub facts: f32,
    /// The shared weight over both memories' (their mean): low when one is much larger — a
    /// memory that grew by merges is not like every small one whose common words it holds.
    pub balanced: f32,
}

impl Likeness {
    /// Alike enough to be one memory saved twice (see the module docs).
    pub fn duplicate(&self) -> bool {
        self.facts >= DUPLICATE_FACTS
            || self
                .vector
                .is_some_and(|v| v >= DUPLICATE_VECTOR && self.balanced >= DUPLICATE_FACTS_CONFIRM)
    }

    /// About the same subject, though maybe not the same facts.
    pub fn same_subject(&self) -> bool {
        self.facts >= SUBJECT_FACTS || self.vector.is_some_and(|v| v >= SUBJECT_VECTOR)
    }

    /// One way to describe it, for a reason.
    pub fn describe(&self) -> String {
        let facts = format!(
            "shared facts {:.2} (balanced {:.2})",
            self.facts, self.balanced
        );
        match self.vector {
            Some(v) => format!("similarity {v:.2}, {facts}"),
            None => facts,
        }
    }
}

/// A sentence saying that an earlier state changed, and the old state when it names it
/// ("moved the API from Heroku to Fly.io": `Heroku`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeStatement {
    pub sentence: String,
    pub old: Option<String>,
    /// The new state when it names it ("to Fly.io": `Fly.io`): not evidence of the old.
    pub new: Option<String>,
}

static FROM_TO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:moved|moving|migrated|migrating|switched|switching|upgraded|downgraded|changed|transferred|went|converted|ported|rewritten|rewrote)\b[^;\n]*?\bfrom\s+(?P<old>(?:[^.;:,\n]|\.\S)+?)\s+(?:to|onto|over\s+to|for)\s+(?P<new>(?:[^.;:,\n]|\.\S)+)",
    )
    .expect("a valid regex")
});
static REPLACED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\breplaced\s+(?P<old>(?:[^.;:,\n]|\.\S)+?)\s+(?:with|by)\s+(?P<new>(?:[^.;:,\n]|\.\S)+)|(?P<old2>\b[\w.@/-]+(?:\s+[\w.@/-]+){0,3}?)\s+(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:replaced|superseded)\s+by\s+(?P<new2>[^.;:,\n]+)|\btook\s+over\b[^.;\n]*?\bfrom\s+(?P<old3>[^.;:,\n]+)",
    )
    .expect("a valid regex")
});
/// Something that is gone: it is the old state.
static GONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?P<old>\b[\w.@/-]+(?:\s+[\w.@/-]+){0,3}?)\s+(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:now\s+)?(?:deleted|removed|retired|decommissioned|shut\s+down|dropped|sunset|turned\s+off|deprecated|gone)\b",
    )
    .expect("a valid regex")
});
/// Something that is no longer done: what follows is the old state.
static NO_LONGER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:no\s+longer|not\s+any\s?more|stopped|has\s+stopped|ceased\s+to)\s+(?P<old>(?:[^.;:,\n]|\.\S)+)",
    )
    .expect("a valid regex")
});
/// A change that names no old state ("moved to Fly.io", "now runs on …"): what it replaced is
/// not plain, only that something changed.
static CHANGED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:(?:moved|migrated|switched|upgraded)\s+(?:\w+\s+){0,4}?to\b|now\s+(?:runs?|lives?|uses?|is|are|goes|go|points?)\b)",
    )
    .expect("a valid regex")
});

/// Every sentence of `text` that says something changed.
pub fn change_statements(text: &str) -> Vec<ChangeStatement> {
    let mut found = Vec::new();
    for sentence in sentences(text) {
        let trimmed = |m: Option<regex::Match<'_>>| m.map(|m| clean_state(m.as_str()));
        if let Some(caps) = FROM_TO.captures(sentence) {
            found.push(ChangeStatement {
                sentence: sentence.to_owned(),
                old: trimmed(caps.name("old")),
                new: trimmed(caps.name("new")),
            });
        } else if let Some(caps) = REPLACED.captures(sentence) {
            let old = ["old", "old2", "old3"].iter().find_map(|g| caps.name(g));
            let new = ["new", "new2"].iter().find_map(|g| caps.name(g));
            found.push(ChangeStatement {
                sentence: sentence.to_owned(),
                old: trimmed(old),
                new: trimmed(new),
            });
        } else if let Some(caps) = GONE.captures(sentence) {
            found.push(ChangeStatement {
                sentence: sentence.to_owned(),
                old: trimmed(caps.name("old")),
                new: None,
            });
        } else if let Some(caps) = NO_LONGER.captures(sentence) {
            found.push(ChangeStatement {
                sentence: sentence.to_owned(),
                old: trimmed(caps.name("old")),
                new: None,
            });
        } else if CHANGED.is_match(sentence) {
            found.push(ChangeStatement {
                sentence: sentence.to_owned(),
                old: None,
                new: None,
            });
        }
    }
    found
}

/// A state as named in a sentence, without articles or a trailing time ("the Gmail inbox in
/// May" → "Gmail inbox").
fn clean_state(text: &str) -> String {
    static TRAILING_TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\s+(?:(?:in|on|since|by|during|from)\s+(?:january|february|march|april|may|june|july|august|september|october|november|december|\d{4}(?:-\d\d){0,2})(?:\s+\d{4})?|(?:last|this|next)\s+(?:week|month|year|quarter))$",
        )
        .expect("a valid regex")
    });
    let text = text.trim();
    let text = TRAILING_TIME.replace(text, "");
    let text = text
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_end_matches(|c: char| !c.is_alphanumeric());
    let lower = text.to_lowercase();
    let article = ["the ", "a ", "an ", "our ", "their ", "its "]
        .iter()
        .find(|a| lower.starts_with(**a))
        .map_or(0, |a| a.len());
    text[article..].to_owned()
}

/// The stems of the old state a change statement names that the older memory's `older` stems
/// hold (the new state's left out); none when it names no old state.
pub fn superseded_stems(change: &ChangeStatement, older: &BTreeSet<String>) -> BTreeSet<String> {
    let Some(old) = &change.old else {
        return BTreeSet::new();
    };
    let new: BTreeSet<String> = change.new.as_deref().map(stems).unwrap_or_default();
    stems(old)
        .into_iter()
        .filter(|s| older.contains(s) && !new.contains(s))
        .collect()
}

/// The sentences of `text`: cut at `.`, `!`, `?` followed by a space or line end, and at lines.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
            if ends {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// What the dream makes of a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// One memory saved twice: merge.
    Duplicate,
    /// The newer says the older's state changed: these sentences of the older are no longer so
    /// (it becomes history).
    Update {
        stale: Vec<String>,
    },
    /// On one subject, one says something changed, but not plainly what the other says: for a
    /// person.
    PossiblyContradictory,
    Distinct,
}

/// The verdict on `older` and `newer` (their texts) given their likeness.
pub fn verdict(likeness: &Likeness, older: &str, newer: &str) -> Verdict {
    if !likeness.same_subject() {
        return Verdict::Distinct;
    }
    let changes = change_statements(newer);
    let older_changes = change_statements(older);
    // What the older memory states as so: its sentences that tell no change.
    let assertions: Vec<&str> = sentences(older)
        .into_iter()
        .filter(|s| change_statements(s).is_empty())
        .collect();
    let mut stale: Vec<String> = Vec::new();
    for sentence in &assertions {
        let said = stems(sentence);
        let superseded = changes
            .iter()
            .any(|change| !superseded_stems(change, &said).is_empty());
        let redated = sentences(newer)
            .iter()
            .any(|newer| restated_with_other_dates(sentence, newer));
        if superseded || redated {
            stale.push((*sentence).to_owned());
        }
    }
    if !stale.is_empty() {
        return Verdict::Update { stale };
    }
    // A change both tell is no contradiction between them.
    let told = |change: &ChangeStatement, others: &[ChangeStatement]| {
        others.iter().any(|other| {
            (change.old.is_some() && change.old == other.old)
                || jaccard(&stems(&change.sentence), &stems(&other.sentence)) >= 0.5
        })
    };
    let changed = changes.iter().any(|c| !told(c, &older_changes))
        || older_changes.iter().any(|c| !told(c, &changes));
    let alike = likeness.duplicate() || likeness.vector.is_some_and(|v| v >= DUPLICATE_VECTOR);
    // A change that reaches into the other's words (three or more), between memories sharing
    // their facts, though it does not plainly name what the other says.
    let reaches = |changes: &[ChangeStatement], other: &str| {
        let other = stems(other);
        changes
            .iter()
            .any(|c| stems(&c.sentence).intersection(&other).count() >= 3)
    };
    let reaching = likeness.facts >= SUBJECT_FACTS
        && (reaches(&changes, older) || reaches(&older_changes, newer));
    match (changed, alike) {
        (true, _) if alike || reaching => Verdict::PossiblyContradictory,
        (false, true) if likeness.duplicate() => Verdict::Duplicate,
        _ => Verdict::Distinct,
    }
}

/// Whether `newer` says what `older` says with other dates or numbers ("the freeze starts
/// 2026-03-01" / "the freeze starts 2026-04-15"): a later date for the same thing.
pub fn restated_with_other_dates(older: &str, newer: &str) -> bool {
    static NUMBER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d[\d:./-]*\d|\d").expect("a valid regex"));
    let numbers =
        |s: &str| -> Vec<String> { NUMBER.find_iter(s).map(|m| m.as_str().to_owned()).collect() };
    let (old_numbers, new_numbers) = (numbers(older), numbers(newer));
    if old_numbers.is_empty() || new_numbers.is_empty() || old_numbers == new_numbers {
        return false;
    }
    let words = |s: &str| stems(&NUMBER.replace_all(s, " "));
    let (a, b) = (words(older), words(newer));
    a.union(&b).count() >= 2 && jaccard(&a, &b) >= 0.75
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f32 / union as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_alike_need_facts_shared_in_both_memories_to_be_one() {
        // Two memories about money in one project (the messy dir's local run): alike in vectors,
        // the smaller's words mostly in the larger, but few rare words shared over both.
        let money = Likeness {
            vector: Some(0.68),
            facts: 0.45,
            balanced: 0.21,
        };
        assert!(!money.duplicate(), "{}", money.describe());
        // One release rule written twice in other words.
        let release = Likeness {
            vector: Some(0.71),
            facts: 0.53,
            balanced: 0.49,
        };
        assert!(release.duplicate(), "{}", release.describe());
    }

    #[test]
    fn change_statements_name_the_old_state_when_the_sentence_does() {
        let olds: Vec<Option<String>> = [
            "In June we moved the API from Heroku to Fly.io.",
            "We upgraded from Python 3.10 to 3.12 in May.",
            "Support replaced the Gmail shared inbox with Zendesk.",
            "Since March Tomas took over releases from Priya.",
            "The Heroku app was deleted.",
            "The API moved to Fly.io.",
            "We no longer deploy on Fridays.",
            "The CLI no longer needs a VPN.",
            "Releases ship every other Tuesday.",
        ]
        .iter()
        .map(|s| change_statements(s).first().and_then(|c| c.old.clone()))
        .collect();
        assert_eq!(
            olds,
            [
                Some("Heroku".to_owned()),
                Some("Python 3.10".to_owned()),
                Some("Gmail shared inbox".to_owned()),
                Some("Priya".to_owned()),
                Some("Heroku app".to_owned()),
                None,
                Some("deploy on Fridays".to_owned()),
                Some("needs a VPN".to_owned()),
                None,
            ]
        );
        assert!(change_statements("Releases ship every other Tuesday.").is_empty());
        // "Instead of" says how a thing is done, not that it changed: never an update.
        assert!(
            change_statements("Add a new migration instead of editing an applied one.").is_empty()
        );
        assert!(
            change_statements("A VIES outage queues the check instead of failing the save.")
                .is_empty()
        );
    }

    #[test]
    fn an_update_names_what_the_older_memory_said_that_is_no_longer_so() {
        let older = "The API runs on Heroku, app acme-api. Deploy with git push heroku main.";
        let newer = "The API moved to Fly.io in June; the Heroku app was deleted.";
        let likeness = Likeness {
            vector: None,
            facts: 0.4,
            balanced: 0.4,
        };
        let verdict = verdict(&likeness, older, newer);
        assert_eq!(
            verdict,
            Verdict::Update {
                stale: vec![
                    "The API runs on Heroku, app acme-api.".to_owned(),
                    "Deploy with git push heroku main.".to_owned()
                ]
            }
        );
        // Both telling the move: the same memory saved twice.
        assert_eq!(
            super::verdict(
                &Likeness {
                    vector: None,
                    facts: 0.9,
                    balanced: 0.9
                },
                newer,
                newer
            ),
            Verdict::Duplicate
        );
        // One tells a change the other does not plainly state: for a person.
        assert_eq!(
            super::verdict(
                &Likeness {
                    vector: None,
                    facts: 0.9,
                    balanced: 0.9
                },
                "The API is served from one region.",
                "The API no longer needs a VPN."
            ),
            Verdict::PossiblyContradictory
        );
        assert!(restated_with_other_dates(
            "The freeze starts 2026-03-01.",
            "The freeze starts 2026-04-15."
        ));
        assert!(!restated_with_other_dates(
            "The freeze starts 2026-03-01.",
            "Releases resume 2026-04-15."
        ));
    }
}
