//! Steps 1 and 2 of the offline dream: exact duplicates removed, near-duplicates merged (see
//! the module docs of [`super`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use chrono::TimeZone;
use regex::Regex;

use super::dates::rewrite_relative_dates;
use super::index::IndexEdits;
use super::likeness::{stems, vector_text, verdict, Likeness, Rarity, Verdict, SUBJECT_VECTOR};
use super::markdown::{closes_fence, fence_marker, is_heading, is_list_item, list_marker_len};
use super::{names, plural, Planner};
use crate::embed::cosine;
use crate::error::Result;
use crate::frontmatter;
use crate::index::{self, IndexEntry};
use crate::lint::duplicates::{self, Candidate};
use crate::lint::Finding;
use crate::scan::SCAN_LINE_LIMIT;

/// The newest memories of one index compared by their vectors, pairwise (n² dot products).
const SEMANTIC_MAX_FILES: usize = 2000;

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 1.
    pub(super) fn remove_exact_duplicates(&mut self) -> Result<()> {
        let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (i, file) in self.files.iter().enumerate() {
            if file.topic_index {
                continue;
            }
            let Some(text) = self.set.read(&file.rel)? else {
                continue;
            };
            let body = index::one_line(&frontmatter::parse_document(&text).body);
            // Frontmatter-only memories say everything in their description: not duplicates.
            if !body.is_empty() {
                groups
                    .entry((file.index.clone(), body))
                    .or_default()
                    .push(i);
            }
        }
        let mut groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
        groups.sort();
        let mut edits = IndexEdits::default();
        for group in groups {
            let order = self.best_claim_first(&group)?;
            let survivor = order[0];
            let mut removed = Vec::new();
            for &other in &order[1..] {
                let reason = format!("exact duplicate of {}", self.files[survivor].rel);
                self.set.stage_delete(&self.files[other].rel, &reason)?;
                self.protect(other);
                let (from, to) = (&self.files[other].link, &self.files[survivor].link);
                let note = format!("move the entry of exact duplicate {from} to {to}");
                let listing = self.listing_files(&self.files[other].index);
                edits.repoint(&self.set, &listing, from, to, &note)?;
                removed.push(self.files[other].rel.clone());
            }
            let survivor = &self.files[survivor];
            self.notes.push(format!(
                "exact duplicates: removed {} (kept {})",
                names(&removed),
                survivor.rel
            ));
        }
        edits.stage(&mut self.set)
    }

    /// Copies of one text, the one with the best claim to stay first: the one its index links
    /// to, then the one whose index line has a hook, then a name that is not a copy's
    /// (`_copy`, ` (1)`, `-backup`, …), then the longer hook, then the newest, then path order.
    fn best_claim_first(&self, group: &[usize]) -> Result<Vec<usize>> {
        let mut claims = Vec::with_capacity(group.len());
        for &i in group {
            let file = &self.files[i];
            let raw = self.set.peek(&file.index)?.unwrap_or_default();
            let entry = index::parse_entries(&raw)
                .into_iter()
                .find(|e| e.file == file.link);
            let hook = entry
                .as_ref()
                .and_then(|e| e.hook.as_deref())
                .map_or(0, |h| h.trim().chars().count());
            let claim = (
                entry.is_some(),
                hook > 0,
                !is_copy_name(&crate::fix::file_stem(&file.rel)),
                hook,
                file.mtime,
                std::cmp::Reverse(file.rel.clone()),
            );
            claims.push((claim, i));
        }
        claims.sort_by(|a, b| b.0.cmp(&a.0));
        Ok(claims.into_iter().map(|(_, i)| i).collect())
    }

    /// Step 2, second half: near-duplicates merged (see the module docs of [`super`]).
    pub(super) fn merge_near_duplicates(&mut self) -> Result<()> {
        let mut edits = IndexEdits::default();
        for members in self.memories_by_index() {
            let mut candidates = Vec::with_capacity(members.len());
            for &i in &members {
                let text = self.set.read(&self.files[i].rel)?.unwrap_or_default();
                candidates.push(Candidate::new(
                    self.files[i].rel.clone(),
                    duplicate_key(&text),
                ));
            }
            let names: Vec<&str> = members
                .iter()
                .map(|&i| self.files[i].rel.as_str())
                .collect();
            let mut pairs: BTreeSet<(usize, usize)> = duplicates::find_duplicates(&candidates)
                .iter()
                .filter_map(|f| duplicate_pair(f, &names))
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            let comparison = self.compare(&members)?;
            let mut found = Vec::new();
            for (a, b) in comparison.candidate_pairs() {
                let likeness = comparison.likeness(a, b);
                let (older, newer) = self.older_newer(members[a], members[b]);
                let (older, newer) = (comparison.position(older), comparison.position(newer));
                match verdict(&likeness, comparison.text(older), comparison.text(newer)) {
                    Verdict::Duplicate if pairs.insert((a, b)) => found.push((a, b, likeness)),
                    // Told apart by the contradiction rule: never folded as if nothing changed.
                    Verdict::Update { .. } | Verdict::PossiblyContradictory => {
                        pairs.remove(&(a, b));
                    }
                    _ => {}
                }
            }
            for (a, b, likeness) in found {
                if pairs.contains(&(a, b)) {
                    self.notes.push(format!(
                        "alike: {} and {} ({})",
                        self.files[members[a]].rel,
                        self.files[members[b]].rel,
                        likeness.describe()
                    ));
                }
            }
            let pairs: Vec<(usize, usize)> = pairs.into_iter().collect();
            // A cluster holds only memories all on one subject: no chain of pairs folds two
            // memories that are merely each like a third.
            let together = |a: usize, b: usize| comparison.likeness(a, b).same_subject();
            for cluster in clusters(members.len(), &pairs, together) {
                let cluster: Vec<usize> = cluster.into_iter().map(|k| members[k]).collect();
                self.merge_cluster(&cluster, &mut edits)?;
            }
        }
        edits.stage(&mut self.set)
    }

    /// The live memories (topic indexes aside) of each index, in path order.
    pub(super) fn memories_by_index(&self) -> Vec<Vec<usize>> {
        let mut by_index: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for i in self.live_memories() {
            by_index
                .entry(self.files[i].index.clone())
                .or_default()
                .push(i);
        }
        by_index.into_values().collect()
    }

    /// `a` and `b`, the one written earlier first (the day its words were written, then its
    /// mtime, then its path).
    pub(super) fn older_newer(&mut self, a: usize, b: usize) -> (usize, usize) {
        let key = |planner: &mut Self, i: usize| {
            let written = planner.written_on(i).date;
            (
                written,
                planner.files[i].mtime,
                std::cmp::Reverse(planner.files[i].rel.clone()),
            )
        };
        if key(self, a) <= key(self, b) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// What the likeness rules need of `members` (files of one index): their texts as staged,
    /// and — when the dream has them — their vectors. An embedder that fails leaves the facts
    /// alone to decide, and the summary says so.
    pub(super) fn compare(&mut self, members: &[usize]) -> Result<Comparison> {
        let mut texts = Vec::with_capacity(members.len());
        for &i in members {
            let text = self.set.read(&self.files[i].rel)?.unwrap_or_default();
            let doc = frontmatter::parse_document_within(&text, Some(SCAN_LINE_LIMIT));
            let name = doc
                .frontmatter
                .name
                .unwrap_or_else(|| crate::fix::file_stem(&self.files[i].rel));
            texts.push(vector_text(
                &name,
                doc.frontmatter.description.as_deref().unwrap_or(""),
                &doc.body,
            ));
        }
        let stems: Vec<BTreeSet<String>> = texts.iter().map(|t| stems(t)).collect();
        let rarity = Rarity::new(&stems);
        let mut vectors = None;
        if let Some(embedder) = self.embedder {
            // The newest, when there are too many to compare pairwise.
            let mut newest: Vec<usize> = (0..members.len()).collect();
            newest.sort_by_key(|&k| std::cmp::Reverse(self.files[members[k]].mtime));
            newest.truncate(SEMANTIC_MAX_FILES);
            let refs: Vec<&str> = newest.iter().map(|&k| texts[k].as_str()).collect();
            match embedder.embed(&refs) {
                Ok(computed) => {
                    let mut all = vec![None; members.len()];
                    for (k, vector) in newest.into_iter().zip(computed) {
                        all[k] = Some(vector);
                    }
                    vectors = Some(all);
                }
                Err(e) => {
                    let note = format!("vectors not used, the facts alone decided: {e}");
                    if !self.notes.contains(&note) {
                        self.notes.push(note);
                    }
                }
            }
        }
        Ok(Comparison {
            members: members.to_vec(),
            texts,
            stems,
            rarity,
            vectors,
        })
    }

    /// Merges one cluster of near-duplicates into its newest file.
    fn merge_cluster(&mut self, members: &[usize], edits: &mut IndexEdits) -> Result<()> {
        let order = self.newest_first(members);
        let (survivor, others) = (order[0], &order[1..]);
        let others_named: Vec<String> = others.iter().map(|&i| self.files[i].rel.clone()).collect();
        let kept = self.fold_into(survivor, others, None, |kept| {
            format!(
                "merge near-duplicate {} into it ({kept} unique {} appended)",
                names(&others_named),
                plural(kept, "fact", "facts")
            )
        })?;
        let best = self.best_line(survivor, others, edits)?;
        for &other in others {
            let reason = format!(
                "near-duplicate of {}, merged into it",
                self.files[survivor].rel
            );
            self.set.stage_delete(&self.files[other].rel, &reason)?;
            self.protect(other);
            let (from, to) = (&self.files[other].link, &self.files[survivor].link);
            let note = format!("move the entry of merged {from} to {to}");
            let listing = self.listing_files(&self.files[other].index);
            edits.repoint(&self.set, &listing, from, to, &note)?;
        }
        if let Some((title, hook)) = best {
            let file = &self.files[survivor];
            let listing = self.listing_files(&file.index);
            let line = index::entry_line(&title, &file.link, &hook);
            let note = format!(
                "keep the best index line of the merged files for {}",
                file.link
            );
            edits.rewrite_entry(&self.set, &listing, &file.link, &line, &note)?;
        }
        self.notes.push(format!(
            "near-duplicates: merged {} into {} ({kept} unique {} kept)",
            names(&others_named),
            self.files[survivor].rel,
            plural(kept, "fact", "facts")
        ));
        Ok(())
    }

    /// The best index line of `survivor` and `others` when it is not the survivor's own: the
    /// one with the most to say (a hook, the longest), as `(title, hook)`.
    fn best_line(
        &self,
        survivor: usize,
        others: &[usize],
        edits: &mut IndexEdits,
    ) -> Result<Option<(String, String)>> {
        let listing = self.listing_files(&self.files[survivor].index);
        let mut lines: BTreeMap<String, IndexEntry> = BTreeMap::new();
        for file in &listing {
            for entry in index::parse_entries(edits.text(&self.set, file)?) {
                lines.entry(entry.file.clone()).or_insert(entry);
            }
        }
        let score = |i: usize| {
            lines.get(&self.files[i].link).map(|e| {
                let hook = e.hook.as_deref().unwrap_or("").trim().chars().count();
                (hook > 0, hook)
            })
        };
        let own = score(survivor);
        let best = others
            .iter()
            .filter_map(|&i| score(i).map(|s| (s, i)))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        Ok(match best {
            Some((s, i)) if own.is_none_or(|own| s > own) => {
                let entry = &lines[&self.files[i].link];
                Some((entry.title.clone(), entry.hook.clone().unwrap_or_default()))
            }
            _ => None,
        })
    }

    /// Appends to `survivor` every unit (paragraph, list item, heading with something new
    /// under it) of `others` it does not already hold, each dated from its own file; with
    /// `history`, units holding one of its stale sentences say until when they held. Stages the
    /// survivor with `reason` (given how many facts were appended) and returns that number.
    pub(super) fn fold_into(
        &mut self,
        survivor: usize,
        others: &[usize],
        history: Option<&History>,
        reason: impl FnOnce(usize) -> String,
    ) -> Result<usize> {
        let text = self
            .set
            .read(&self.files[survivor].rel)?
            .unwrap_or_default();
        let body = frontmatter::parse_document(&text).body;
        let body_units = units(&body);
        let mut seen = format!(" {} ", comparable(&body));
        let mut appended: Vec<Unit> = Vec::new();
        for &other in others {
            let other_text = self.set.read(&self.files[other].rel)?.unwrap_or_default();
            let date = self.written_on(other).date;
            let doc = frontmatter::parse_document(&other_text);
            let mut other_units = units(&doc.body);
            // A memory that says everything in its description: the description is its fact.
            if other_units.is_empty() {
                if let Some(description) =
                    doc.frontmatter.description.filter(|d| !d.trim().is_empty())
                {
                    other_units.push(Unit {
                        kind: UnitKind::Paragraph,
                        text: description,
                    });
                }
            }
            let mut heading: Option<Unit> = None;
            for unit in other_units {
                if unit.kind == UnitKind::Heading {
                    heading = Some(unit);
                    continue;
                }
                let key = comparable(&unit.text);
                if key.is_empty() || seen.contains(&format!(" {key} ")) {
                    continue;
                }
                // A heading comes along only with something new under it.
                if let Some(h) = heading.take() {
                    if !seen.contains(&format!(" {} ", comparable(&h.text))) {
                        appended.push(h);
                    }
                }
                seen.push_str(&key);
                seen.push(' ');
                // Its relative dates meant the day *that* file was written.
                let mut text = rewrite_relative_dates(&unit.text, 0, date).text;
                if let Some(history) = history {
                    if history.holds_stale(&unit.text) {
                        text = until(&text, &history.until);
                    }
                }
                appended.push(Unit { text, ..unit });
            }
        }
        let kept = appended
            .iter()
            .filter(|u| u.kind != UnitKind::Heading)
            .count();
        if !appended.is_empty() {
            let merged = append_units(&text, body_units.last().map(|u| u.kind), &appended);
            self.set
                .stage_write(&self.files[survivor].rel, merged, &reason(kept))?;
            self.protect(survivor);
        }
        Ok(kept)
    }
}

/// What an older memory superseded by a newer one keeps: its stale sentences, said to hold
/// until the month of the newer.
pub(super) struct History {
    pub stale: Vec<String>,
    /// `2026-06`.
    pub until: String,
}

impl History {
    fn holds_stale(&self, unit: &str) -> bool {
        let unit = index::one_line(unit);
        self.stale
            .iter()
            .any(|s| unit.contains(&index::one_line(s)))
    }
}

/// `text` (a unit) marked as holding until `until`: "Until 2026-06: …", after a list marker.
fn until(text: &str, until: &str) -> String {
    let indent = text.len() - text.trim_start().len();
    let marker = list_marker_len(&text[indent..]).unwrap_or(0);
    let (head, rest) = text.split_at(indent + marker);
    format!("{head}Until {until}: {rest}")
}

/// The texts of one index's memories and what compares them (see [`super::likeness`]).
pub(super) struct Comparison {
    /// The files compared, as indices into the planner's files.
    members: Vec<usize>,
    texts: Vec<String>,
    stems: Vec<BTreeSet<String>>,
    rarity: Rarity,
    /// Each member's vector, when the dream has vectors (`None` for one past the cap).
    vectors: Option<Vec<Option<Vec<f32>>>>,
}

/// A stem held by more memories than this says nothing about which are alike: it proposes no
/// pair (keeps the pairs compared near-linear in a dir of thousands).
const COMMON_STEM: usize = 32;

impl Comparison {
    /// Member `k`'s text as compared.
    pub(super) fn text(&self, k: usize) -> &str {
        &self.texts[k]
    }

    /// The member index of planner file `i`.
    pub(super) fn position(&self, i: usize) -> usize {
        self.members.iter().position(|&m| m == i).unwrap_or(0)
    }

    pub(super) fn likeness(&self, a: usize, b: usize) -> Likeness {
        let vector = self
            .vectors
            .as_ref()
            .and_then(|vectors| Some(cosine(vectors[a].as_ref()?, vectors[b].as_ref()?)));
        self.rarity.likeness(&self.stems[a], &self.stems[b], vector)
    }

    /// The pairs `(a, b)`, `a < b`, worth a verdict: about the same subject by their vectors,
    /// or sharing a word few memories hold.
    pub(super) fn candidate_pairs(&self) -> Vec<(usize, usize)> {
        let mut pairs = BTreeSet::new();
        let mut holders: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, stems) in self.stems.iter().enumerate() {
            for stem in stems {
                holders.entry(stem.as_str()).or_default().push(k);
            }
        }
        for members in holders
            .values()
            .filter(|m| m.len() >= 2 && m.len() <= COMMON_STEM)
        {
            for (n, &a) in members.iter().enumerate() {
                for &b in &members[n + 1..] {
                    pairs.insert((a, b));
                }
            }
        }
        if let Some(vectors) = &self.vectors {
            for a in 0..vectors.len() {
                for b in a + 1..vectors.len() {
                    if let (Some(x), Some(y)) = (&vectors[a], &vectors[b]) {
                        if cosine(x, y) >= SUBJECT_VECTOR {
                            pairs.insert((a, b));
                        }
                    }
                }
            }
        }
        pairs
            .into_iter()
            .filter(|&(a, b)| self.likeness(a, b).same_subject())
            .collect()
    }
}

/// Whether a file stem reads as a copy of another's: `x_copy`, `x copy 2`, `x (1)`, `x-backup`,
/// `x.bak`, `x-old`, `copy of x`.
fn is_copy_name(stem: &str) -> bool {
    static COPY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?:[ _.-](?:copy|backup|bak|old|orig|dup|duplicate)(?:[ _.-]*\d+)?|[ _-]*\(\d+\)|[ _-]\d+)$|^copy[ _-]of[ _-]",
        )
        .expect("a valid regex")
    });
    COPY.is_match(stem)
}

/// What the `duplicate-memory` rule compares, exactly as lint builds it (`lint::check_file`):
/// the description, a line break, the trimmed body of the frontmatter as the scanner reads it.
fn duplicate_key(text: &str) -> String {
    let doc = frontmatter::parse_document_within(text, Some(SCAN_LINE_LIMIT));
    format!(
        "{}\n{}",
        doc.frontmatter.description.as_deref().unwrap_or_default(),
        doc.body.trim()
    )
}

/// The pair (indices into `names`) a `duplicate-memory` finding names. The rule reports
/// "`{first}` and `{second}` are N% similar…" with the finding's file first; the second is
/// matched against the known names rather than cut at a space, so names with spaces work.
fn duplicate_pair(finding: &Finding, names: &[&str]) -> Option<(usize, usize)> {
    let first = names.iter().position(|n| *n == finding.file)?;
    let rest = finding
        .message
        .strip_prefix(&format!("{} and ", finding.file))?;
    let second = names
        .iter()
        .position(|n| rest.starts_with(&format!("{n} are ")))?;
    Some((first, second))
}

/// The groups (of two or more) of `n` items joined by `pairs`, each sorted, ordered by their
/// first item: two groups join through a pair only when every item of one goes `together` with
/// every item of the other.
fn clusters(
    n: usize,
    pairs: &[(usize, usize)],
    together: impl Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut label: Vec<usize> = (0..n).collect();
    for &(a, b) in pairs {
        let (keep, gone) = (label[a].min(label[b]), label[a].max(label[b]));
        if keep == gone {
            continue;
        }
        let members = |l: usize| -> Vec<usize> { (0..n).filter(|&i| label[i] == l).collect() };
        let (kept, joining) = (members(keep), members(gone));
        if !kept
            .iter()
            .all(|&x| joining.iter().all(|&y| together(x, y)))
        {
            continue;
        }
        for l in &mut label {
            if *l == gone {
                *l = keep;
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, l) in label.into_iter().enumerate() {
        groups.entry(l).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    Heading,
    /// A list item with its continuation lines.
    Item,
    /// A paragraph, or a whole code fence.
    Paragraph,
}

/// The pieces a merge compares and moves: headings, list items, paragraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unit {
    kind: UnitKind,
    text: String,
}

/// `body` cut into units. A code fence is one unit, never split.
fn units(body: &str) -> Vec<Unit> {
    fn finish(current: &mut Option<Unit>, units: &mut Vec<Unit>) {
        units.extend(current.take());
    }
    let mut units = Vec::new();
    let mut current: Option<Unit> = None;
    let mut fence: Option<(u8, usize)> = None;
    for line in body.lines() {
        if let Some(open) = fence {
            if let Some(unit) = &mut current {
                unit.text.push('\n');
                unit.text.push_str(line);
            }
            if closes_fence(line, open) {
                fence = None;
                finish(&mut current, &mut units);
            }
            continue;
        }
        let new = |kind| Unit {
            kind,
            text: line.to_owned(),
        };
        if let Some(open) = fence_marker(line) {
            finish(&mut current, &mut units);
            current = Some(new(UnitKind::Paragraph));
            fence = Some(open);
        } else if line.trim().is_empty() {
            finish(&mut current, &mut units);
        } else if is_heading(line) {
            finish(&mut current, &mut units);
            units.push(new(UnitKind::Heading));
        } else if is_list_item(line) {
            finish(&mut current, &mut units);
            current = Some(new(UnitKind::Item));
        } else if let Some(unit) = &mut current {
            unit.text.push('\n');
            unit.text.push_str(line);
        } else {
            current = Some(new(UnitKind::Paragraph));
        }
    }
    finish(&mut current, &mut units);
    units
}

/// `text` with `units` appended after its end: list items that follow list items stay in one
/// list, everything else is its own block. Keeps the file's line endings.
fn append_units(text: &str, last: Option<UnitKind>, units: &[Unit]) -> String {
    let eol = index::line_ending(text);
    let mut out = text.trim_end().to_owned();
    let mut previous = last;
    for unit in units {
        let together = previous == Some(UnitKind::Item) && unit.kind == UnitKind::Item;
        out.push_str(eol);
        if !together {
            out.push_str(eol);
        }
        out.push_str(&unit.text.replace('\n', eol));
        previous = Some(unit.kind);
    }
    out.push_str(eol);
    out
}

/// A unit's text as merges compare it: list marker dropped, whitespace normalised, lowercase.
fn comparable(text: &str) -> String {
    let text = text.trim_start();
    let text = list_marker_len(text).map_or(text, |n| &text[n..]);
    index::one_line(text).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{memory, plan, write_at};
    use crate::testing::fixtures::TempMemoryDir;

    #[test]
    fn a_chain_of_pairs_never_folds_memories_that_are_only_each_like_a_third() {
        // 0–1 and 1–2 are pairs, 0 and 2 are not alike: 2 stays apart, 3–4 join.
        let pairs = [(0, 1), (1, 2), (3, 4)];
        let alike = |a: usize, b: usize| !matches!((a.min(b), a.max(b)), (0, 2));
        assert_eq!(super::clusters(5, &pairs, alike), [vec![0, 1], vec![3, 4]]);
        assert_eq!(
            super::clusters(5, &pairs, |_, _| true),
            [vec![0, 1, 2], vec![3, 4]],
            "a chain of memories all alike is one group"
        );
    }

    #[test]
    fn memories_under_different_indexes_are_never_merged() {
        let fx = TempMemoryDir::new("memory");
        let text = memory(
            "Deploys",
            "No deploys on Fridays",
            "project",
            "Never deploy on Fridays; on-call is thin.\n",
        );
        write_at(&fx, "project_deploys.md", &text, "2026-06-01");
        write_at(&fx, "team/project_deploys.md", &text, "2026-06-02");
        let index = "- [Deploys](project_deploys.md) — no Friday deploys\n";
        fx.write("MEMORY.md", index);
        fx.write("team/MEMORY.md", index);
        let dream = plan(&fx);
        assert!(
            dream.changes.is_empty(),
            "a team memory is shared: never folded into a private one, nor the reverse: {}",
            dream.summary
        );
    }

    /// Which copy of one text a dream keeps, and what is deleted, for a dir of copies.
    fn kept_and_deleted(files: &[(&str, &str)], index: &str) -> (Vec<String>, Vec<String>) {
        let fx = TempMemoryDir::new("memory");
        let body = "Releases ship from main every Tuesday.\n";
        for (file, day) in files {
            write_at(
                &fx,
                file,
                &memory("Release", "How releases ship", "project", body),
                day,
            );
        }
        fx.write("MEMORY.md", index);
        let dream = plan(&fx);
        let deleted: Vec<String> = dream
            .changes
            .changes
            .iter()
            .filter(|c| c.after.is_none())
            .map(|c| c.file.clone())
            .collect();
        let kept = files
            .iter()
            .map(|(f, _)| (*f).to_owned())
            .filter(|f| !deleted.contains(f))
            .collect();
        (kept, deleted)
    }

    #[test]
    fn of_exact_duplicates_the_one_with_the_better_claim_stays() {
        // Issue #20: the newer `_copy` used to stay, and the original the index links to went.
        let (kept, _) = kept_and_deleted(
            &[
                ("release.md", "2026-06-01"),
                ("release_copy.md", "2026-06-05"),
            ],
            "- [Release](release.md) — how releases ship every Tuesday\n",
        );
        assert_eq!(kept, ["release.md"], "the one the index links to");
        let (kept, _) = kept_and_deleted(
            &[("release.md", "2026-06-01"), ("release-2.md", "2026-06-05")],
            "- [Release](release.md)\n- [Release](release-2.md) — how releases ship\n",
        );
        assert_eq!(
            kept,
            ["release-2.md"],
            "the one whose index line says something"
        );
        let (kept, _) = kept_and_deleted(
            &[
                ("release.md", "2026-06-01"),
                ("release-backup.md", "2026-06-05"),
            ],
            "- [Release](release.md) — ships\n- [Release](release-backup.md) — how releases ship\n",
        );
        assert_eq!(kept, ["release.md"], "a name that is not a copy's");
        let (kept, _) = kept_and_deleted(
            &[("cadence.md", "2026-06-01"), ("release.md", "2026-06-05")],
            "",
        );
        assert_eq!(kept, ["release.md"], "else the newest");
        let (kept, _) = kept_and_deleted(&[("b.md", "2026-06-01"), ("a.md", "2026-06-01")], "");
        assert_eq!(
            kept,
            ["a.md"],
            "else the first path: the same plan every time"
        );
    }
}
