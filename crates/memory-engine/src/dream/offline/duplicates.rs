//! Steps 1 and 2 of the offline dream: exact duplicates removed, near-duplicates merged (see
//! the module docs of [`super`]).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use chrono::TimeZone;
use regex::Regex;

use super::dates::rewrite_relative_dates;
use super::index::IndexEdits;
use super::markdown::{closes_fence, fence_marker, is_heading, is_list_item, list_marker_len};
use super::{names, plural, Planner};
use crate::embed::{cosine, Embedder};
use crate::error::Result;
use crate::frontmatter;
use crate::index;
use crate::lint::duplicates::{self, Candidate};
use crate::lint::Finding;
use crate::memory_type::MemoryType;
use crate::scan::SCAN_LINE_LIMIT;

/// Similarity (sentence vectors of name + description) from which two memories of one type are
/// near-duplicates. all-MiniLM-L6-v2 puts restatements of one rule at 0.82–0.89 ("Don't mock the
/// database in integration tests" / "Integration tests must hit a real database, not mocks":
/// 0.89) and related but distinct memories of one project under 0.6. A merge keeps every fact of
/// both files, and the change waits for review like every other, so two rules that differ in
/// one word (0.94) end up side by side in one file, where a person sees them.
pub const SEMANTIC_DUPLICATE_SIMILARITY: f32 = 0.8;
/// The newest topic files of one type compared by meaning, pairwise (n² dot products).
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

    /// Step 2.
    pub(super) fn merge_near_duplicates(&mut self) -> Result<()> {
        let mut by_index: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for i in self.live_memories() {
            by_index
                .entry(self.files[i].index.clone())
                .or_default()
                .push(i);
        }
        let mut edits = IndexEdits::default();
        for members in by_index.into_values() {
            let mut candidates = Vec::with_capacity(members.len());
            let mut ids = Vec::with_capacity(members.len());
            for i in members {
                let Some(text) = self.set.read(&self.files[i].rel)? else {
                    continue;
                };
                candidates.push(Candidate::new(
                    self.files[i].rel.clone(),
                    duplicate_key(&text),
                ));
                ids.push(i);
            }
            let names: Vec<&str> = ids.iter().map(|&i| self.files[i].rel.as_str()).collect();
            let mut pairs: Vec<(usize, usize)> = duplicates::find_duplicates(&candidates)
                .iter()
                .filter_map(|f| duplicate_pair(f, &names))
                .collect();
            if let Some(embedder) = self.embedder {
                pairs.extend(self.same_meaning(embedder, &ids, &pairs)?);
            }
            for cluster in clusters(ids.len(), &pairs) {
                let members: Vec<usize> = cluster.into_iter().map(|k| ids[k]).collect();
                self.merge_cluster(&members, &mut edits)?;
            }
        }
        edits.stage(&mut self.set)
    }

    /// Pairs (indices into `ids`) of topic files of one type whose name and description are at
    /// least [`SEMANTIC_DUPLICATE_SIMILARITY`] alike, beyond the `known` pairs; each noted with
    /// its similarity. The newest [`SEMANTIC_MAX_FILES`] of each type are compared, pairwise.
    fn same_meaning(
        &mut self,
        embedder: &dyn Embedder,
        ids: &[usize],
        known: &[(usize, usize)],
    ) -> Result<Vec<(usize, usize)>> {
        let mut texts = Vec::with_capacity(ids.len());
        for &i in ids {
            let text = self.set.read(&self.files[i].rel)?.unwrap_or_default();
            let doc = frontmatter::parse_document_within(&text, Some(SCAN_LINE_LIMIT));
            texts.push(crate::corpus::embedding_text_of(
                doc.frontmatter.name.as_deref(),
                &self.files[i].rel,
                doc.frontmatter.description.as_deref(),
                &doc.body,
            ));
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = match embedder.embed(&refs) {
            Ok(vectors) => vectors,
            Err(e) => {
                self.notes
                    .push(format!("near-duplicates by meaning not searched: {e}"));
                return Ok(Vec::new());
            }
        };
        let mut by_type: BTreeMap<Option<MemoryType>, Vec<usize>> = BTreeMap::new();
        for (k, &i) in ids.iter().enumerate() {
            by_type
                .entry(self.files[i].memory_type)
                .or_default()
                .push(k);
        }
        let mut found = Vec::new();
        for mut members in by_type.into_values() {
            members.sort_by_key(|&k| std::cmp::Reverse(self.files[ids[k]].mtime));
            members.truncate(SEMANTIC_MAX_FILES);
            members.sort_unstable();
            for (n, &a) in members.iter().enumerate() {
                for &b in &members[n + 1..] {
                    let similarity = cosine(&vectors[a], &vectors[b]);
                    if similarity >= SEMANTIC_DUPLICATE_SIMILARITY
                        && !known.contains(&(a, b))
                        && !known.contains(&(b, a))
                    {
                        self.notes.push(format!(
                            "alike in meaning: {} and {} (similarity {similarity:.2})",
                            self.files[ids[a]].rel, self.files[ids[b]].rel
                        ));
                        found.push((a, b));
                    }
                }
            }
        }
        Ok(found)
    }

    /// Merges one cluster of near-duplicates into its newest file.
    fn merge_cluster(&mut self, members: &[usize], edits: &mut IndexEdits) -> Result<()> {
        let order = self.newest_first(members);
        let survivor = order[0];
        let text = self
            .set
            .read(&self.files[survivor].rel)?
            .unwrap_or_default();
        let body = frontmatter::parse_document(&text).body;
        let body_units = units(&body);
        let mut seen = format!(" {} ", comparable(&body));
        let mut appended: Vec<Unit> = Vec::new();
        for &other in &order[1..] {
            let other_text = self.set.read(&self.files[other].rel)?.unwrap_or_default();
            let date = self.written_on(other).date;
            let mut heading: Option<Unit> = None;
            for unit in units(&frontmatter::parse_document(&other_text).body) {
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
                let text = rewrite_relative_dates(&unit.text, 0, date).text;
                appended.push(Unit { text, ..unit });
            }
        }

        let others: Vec<String> = order[1..]
            .iter()
            .map(|&i| self.files[i].rel.clone())
            .collect();
        let kept = appended
            .iter()
            .filter(|u| u.kind != UnitKind::Heading)
            .count();
        if !appended.is_empty() {
            let merged = append_units(&text, body_units.last().map(|u| u.kind), &appended);
            let reason = format!(
                "merge near-duplicate {} into it ({kept} unique {} appended)",
                names(&others),
                plural(kept, "fact", "facts")
            );
            self.set
                .stage_write(&self.files[survivor].rel, merged, &reason)?;
            self.protect(survivor);
        }
        for &other in &order[1..] {
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
        let survivor = &self.files[survivor];
        self.notes.push(format!(
            "near-duplicates: merged {} into {} ({kept} unique {} kept)",
            names(&others),
            survivor.rel,
            plural(kept, "fact", "facts")
        ));
        Ok(())
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

/// The connected groups (of two or more) of `n` items joined by `pairs`, each sorted, ordered by
/// their first item.
fn clusters(n: usize, pairs: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut label: Vec<usize> = (0..n).collect();
    for &(a, b) in pairs {
        let (keep, gone) = (label[a].min(label[b]), label[a].max(label[b]));
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
