//! The offline dream: a deterministic consolidation of one memory dir, with no model. It plans a
//! [`ChangeSet`] and writes nothing; the caller reviews, stages or applies it (as
//! [`Actor::Dream`](crate::actor::Actor::Dream)).
//!
//! Steps, in order, each staging into the same change set and reading the earlier steps' staged
//! content through [`ChangeSet::read`]:
//!
//! 1. **Exact duplicates** — topic files whose bodies are equal once whitespace is normalised
//!    (frontmatter aside): the newest (mtime) stays, the others are deleted and their index lines
//!    point at the survivor (or go, when it already has one).
//! 2. **Near-duplicates** — lint's `duplicate-memory` detection (`lint/duplicates.rs`) and, when
//!    the dream has sentence vectors (provider `local`), memories of the same type whose name and
//!    description mean the same ([`SEMANTIC_DUPLICATE_SIMILARITY`]) though worded apart; clustered:
//!    the newest file of a cluster stays with its frontmatter and body first, every paragraph or
//!    list item of the others that it does not already hold is appended (unique facts are kept),
//!    and the others are deleted and unindexed as in step 1.
//! 3. **Relative dates → absolute** in bodies (`today`, `tonight`, `yesterday`, `tomorrow`,
//!    `this morning/afternoon/evening`, `last night`, `N days ago`), from the date of the file's
//!    mtime — when the words were written. Never inside frontmatter, code spans, code fences,
//!    URLs or link targets. Facts merged in step 2 are dated from the file they came from.
//! 4. **The index repaired** — what `fix.rs` fixes, computed on the staged state (its planner
//!    reads the disk): lines linking to missing files removed, orphans indexed (under their
//!    type's section), entries over 150 characters rewritten as `- [Title](file) — hook`.
//! 5. **The index laid out under its caps** (200 lines, 25,000 UTF-16 units): only when over
//!    them — blank-line runs collapsed, then blank lines dropped, then hooks shortened. Headings
//!    and intro lines stay, and no entry is ever dropped: an index still over is flagged.
//! 6. **Likely secrets** (`secrets.rs`) in the resulting files are flagged, never changed.
//! 7. **Protection** — a change that deletes or rewrites the body of a `user` or `feedback`
//!    memory is planned like any other but listed in [`OfflineDream::protected_files`], so it is
//!    never applied without a person seeing it.
//!
//! Deliberately not done: merging across indexes (a `team/` memory is never folded into a
//! private one), deciding which of two contradicting facts is true, touching daily logs
//! (`logs/`, only scanned for secrets), or guessing ambiguous dates (`last Tuesday`).
//!
//! Same input, same plan: files are visited in path order, ties between equal mtimes go to the
//! first path, and nothing depends on the clock but the clamp of a future mtime to now.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;
use std::sync::LazyLock;
use std::time::SystemTime;

use chrono::{DateTime, Days, NaiveDate, TimeZone, Utc};
use regex::{Captures, Regex};
use serde::Serialize;

use crate::changeset::ChangeSet;
use crate::embed::{cosine, Embedder};
use crate::error::Result;
use crate::fix::file_stem;
use crate::frontmatter;
use crate::index::{
    self, IndexEntry, INDEX_FILE, MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES,
};
use crate::lint::duplicates::{self, Candidate};
use crate::lint::{Finding, Severity, INDEX_TOO_LARGE, INDEX_TOO_LONG, LONG_INDEX_LINE, SECRET};
use crate::memdir::{governing_index, MemoryDir};
use crate::memory_type::MemoryType;
use crate::scan::{self, SCAN_LINE_LIMIT};
use crate::secrets::{by_line, scan_secrets};

/// A file stem named like a copy of another: `notes_copy`, `notes-copy-2`, `notes copy`,
/// `notes (1)`, `Copy of notes`.
static COPY_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:[ _.-]copy(?:[ _.-]?\d+)?|\s?\(\d+\)|^copy[ _-]of[ _-].*)$")
        .expect("a valid regex")
});

/// Similarity (sentence vectors of name + description) from which two memories of one type are
/// near-duplicates. all-MiniLM-L6-v2 puts restatements of one rule at 0.82–0.89 ("Don't mock the
/// database in integration tests" / "Integration tests must hit a real database, not mocks":
/// 0.89) and related but distinct memories of one project under 0.6. A merge keeps every fact of
/// both files, and the change waits for review like every other, so two rules that differ in
/// one word (0.94) end up side by side in one file, where a person sees them.
pub const SEMANTIC_DUPLICATE_SIMILARITY: f32 = 0.8;
/// The newest topic files of one type compared by meaning, pairwise (n² dot products).
const SEMANTIC_MAX_FILES: usize = 2000;

/// The rule of a flag for a file the dream could not read (not UTF-8, no permission): it is left
/// out of every step.
pub const UNREADABLE_FILE: &str = "unreadable-file";

/// What the offline dream plans for one memory dir.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfflineDream {
    /// Every planned change, each with a one-line reason. Nothing is written until it is applied.
    pub changes: ChangeSet,
    /// What needs a person and was left as it is: likely secrets (with their line in the file
    /// as it will be), an index still over its caps, index lines that cannot be shortened
    /// automatically, files that could not be read.
    pub flagged: Vec<Finding>,
    /// The files of `changes` that delete or rewrite a `user` or `feedback` memory, sorted.
    pub protected_files: Vec<String>,
    /// What the dream did, a few lines for a log, a notification or the CLI.
    pub summary: String,
}

impl OfflineDream {
    /// Whether the change of `file` deletes or rewrites a `user` or `feedback` memory.
    pub fn is_protected(&self, file: &str) -> bool {
        self.protected_files.iter().any(|f| f == file)
    }
}

/// Plans the offline dream of `dir` (see the module docs). `zone` is the time zone the files'
/// mtimes are read in to date their relative words: `&chrono::Local` for the person's own
/// dates; tests pass `&chrono::Utc`.
pub fn plan_offline_dream<Tz: TimeZone>(dir: &MemoryDir, zone: &Tz) -> Result<OfflineDream> {
    plan_offline_dream_with(dir, zone, None)
}

/// [`plan_offline_dream`], finding near-duplicates by meaning too with `embedder`'s vectors.
/// Blocking (the embedder may compute or ask a server); an embedder that fails leaves the
/// lexical detection alone, and the summary says so.
pub fn plan_offline_dream_with<Tz: TimeZone>(
    dir: &MemoryDir,
    zone: &Tz,
    embedder: Option<&dyn Embedder>,
) -> Result<OfflineDream> {
    let mut planner = Planner::new(dir.root(), zone, dir.engine().clock().now())?;
    planner.embedder = embedder;
    planner.remove_exact_duplicates()?;
    planner.merge_near_duplicates()?;
    planner.make_dates_absolute()?;
    planner.repair_indexes()?;
    planner.fit_indexes_under_caps()?;
    planner.flag_secrets()?;
    Ok(planner.finish())
}

/// A topic file as found on disk when planning started.
struct TopicFile {
    rel: String,
    mtime: SystemTime,
    /// The type its frontmatter had before the dream (protection is about what was there).
    memory_type: Option<MemoryType>,
    /// Its governing index, and the link that index uses for it.
    index: String,
    link: String,
}

struct Planner<'a, Tz: TimeZone> {
    root: &'a Path,
    /// Sentence vectors for near-duplicates by meaning, when the dream has them.
    embedder: Option<&'a dyn Embedder>,
    zone: &'a Tz,
    now: SystemTime,
    set: ChangeSet,
    /// Topic files (daily logs excluded), sorted by path.
    files: Vec<TopicFile>,
    /// Daily logs: only scanned for secrets.
    logs: Vec<String>,
    /// The index files that exist, or that orphans will create.
    indexes: BTreeSet<String>,
    protected: BTreeSet<String>,
    flagged: Vec<Finding>,
    /// One line per thing done, for the summary.
    notes: Vec<String>,
}

impl<'a, Tz: TimeZone> Planner<'a, Tz> {
    fn new(root: &'a Path, zone: &'a Tz, now: SystemTime) -> Result<Self> {
        let mut planner = Planner {
            root,
            embedder: None,
            zone,
            now,
            set: ChangeSet::new(root),
            files: Vec::new(),
            logs: Vec::new(),
            indexes: BTreeSet::new(),
            protected: BTreeSet::new(),
            flagged: Vec::new(),
            notes: Vec::new(),
        };
        let mut found = scan::list_files(root)?;
        found.sort_by(|a, b| a.rel.cmp(&b.rel));
        planner.indexes.insert(INDEX_FILE.to_owned());
        for file in found {
            let nearest = index::join_rel(index::parent_of(&file.rel), INDEX_FILE);
            if root.join(&nearest).is_file() {
                planner.indexes.insert(nearest);
            }
            if file.rel.starts_with("logs/") {
                planner.logs.push(file.rel);
                continue;
            }
            let text = match planner.set.read(&file.rel) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    planner.flag(
                        UNREADABLE_FILE,
                        Severity::Warning,
                        &file.rel,
                        None,
                        format!("left alone: {e}"),
                    );
                    continue;
                }
            };
            let (index, link) = governing_index(root, &file.rel);
            planner.indexes.insert(index.clone());
            planner.files.push(TopicFile {
                memory_type: frontmatter::parse_document(&text).frontmatter.memory_type,
                rel: file.rel,
                mtime: file.mtime,
                index,
                link,
            });
        }
        Ok(planner)
    }

    /// Step 1.
    fn remove_exact_duplicates(&mut self) -> Result<()> {
        let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (i, file) in self.files.iter().enumerate() {
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
                edits.edit(&self.set, &self.files[other].index, &note, |raw| {
                    repoint(raw, from, to)
                })?;
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

    /// Step 2.
    fn merge_near_duplicates(&mut self) -> Result<()> {
        let mut by_index: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for i in self.live() {
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
            let date = self.date_of(other);
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
                let (text, _) = absolute_dates(&unit.text, 0, date);
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
            edits.edit(&self.set, &self.files[other].index, &note, |raw| {
                repoint(raw, from, to)
            })?;
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

    /// Step 3.
    fn make_dates_absolute(&mut self) -> Result<()> {
        let mut dated = Vec::new();
        for i in self.live() {
            let rel = self.files[i].rel.clone();
            let Some(text) = self.set.read(&rel)? else {
                continue;
            };
            // A block that opens and never closes: frontmatter and body cannot be told apart.
            let Some(start) = body_start(&text) else {
                continue;
            };
            let date = self.date_of(i);
            let (updated, replaced) = absolute_dates(&text, start, date);
            if replaced.is_empty() {
                continue;
            }
            let mut pairs: Vec<String> = Vec::new();
            for (phrase, absolute) in replaced {
                let pair = format!("{} → {absolute}", phrase.to_lowercase());
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
            let reason = format!(
                "relative dates made absolute from the file's date {date}: {}",
                pairs.join(", ")
            );
            self.set.stage_write(&rel, updated, &reason)?;
            self.protect(i);
            dated.push(rel);
        }
        if !dated.is_empty() {
            self.notes.push(format!(
                "relative dates made absolute in {} {} ({})",
                dated.len(),
                plural(dated.len(), "file", "files"),
                names(&dated)
            ));
        }
        Ok(())
    }

    /// Step 4: dangling lines, orphans and long lines of every index, on the staged state.
    fn repair_indexes(&mut self) -> Result<()> {
        let indexes: Vec<String> = self.indexes.iter().cloned().collect();
        for index_file in indexes {
            let current = self.set.read(&index_file)?;
            let mut raw = current.clone().unwrap_or_default();
            let dir = index::parent_of(&index_file).to_owned();
            let mut done = Vec::new();

            let mut missing: Vec<String> = Vec::new();
            for entry in index::parse_entries(&raw) {
                if !self.link_exists(&dir, &entry.file) && !missing.contains(&entry.file) {
                    missing.push(entry.file);
                }
            }
            for link in &missing {
                raw = index::remove_entry(&raw, link).0;
            }
            if !missing.is_empty() {
                done.push(format!(
                    "remove the lines linking to missing {}",
                    names(&missing)
                ));
            }

            let (shortened, count) = self.shorten_long_lines(&index_file, &raw);
            raw = shortened;
            if count > 0 {
                done.push(format!(
                    "shorten {count} long {}",
                    plural(count, "line", "lines")
                ));
            }

            let mut orphans = Vec::new();
            let mut linked: BTreeSet<String> = index::parse_entries(&raw)
                .into_iter()
                .map(|e| e.file)
                .collect();
            for i in self.live() {
                let file = &self.files[i];
                if file.index != index_file || linked.contains(&file.link) {
                    continue;
                }
                let text = self.set.read(&file.rel)?.unwrap_or_default();
                let fm =
                    frontmatter::parse_document_within(&text, Some(SCAN_LINE_LIMIT)).frontmatter;
                let title = fm
                    .name
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| file_stem(&file.rel));
                let line =
                    index::entry_line(&title, &file.link, fm.description.as_deref().unwrap_or(""));
                raw = index::upsert_entry(&raw, &file.link, &line, fm.memory_type);
                linked.insert(file.link.clone());
                orphans.push(file.rel.clone());
            }
            if !orphans.is_empty() {
                done.push(format!(
                    "index {} {}",
                    plural(orphans.len(), "orphan", "orphans"),
                    names(&orphans)
                ));
            }

            if current.as_deref().unwrap_or_default() != raw {
                self.set.stage_write(&index_file, raw, &done.join("; "))?;
                self.notes
                    .push(format!("{index_file}: {}", done.join("; ")));
            }
        }
        Ok(())
    }

    /// Entry lines of `raw` over [`MAX_ENTRY_CHARS`] rewritten in the canonical form (as the
    /// `long-index-line` fix does), and how many; what cannot be shortened so is flagged.
    fn shorten_long_lines(&mut self, index_file: &str, raw: &str) -> (String, usize) {
        let entries = entries_by_line(raw);
        let mut count = 0;
        let mut flags = Vec::new();
        let updated = rewrite_lines(raw, |number, line| {
            let chars = line.chars().count();
            if chars <= MAX_ENTRY_CHARS {
                return LineEdit::Keep;
            }
            let Some(entry) = entries.get(&number) else {
                flags.push((number, format!("{chars} characters, and not an index entry (a heading or prose): shorten it by hand")));
                return LineEdit::Keep;
            };
            let line = index::entry_line(
                &entry.title,
                &entry.file,
                entry.hook.as_deref().unwrap_or(""),
            );
            if line.chars().count() > MAX_ENTRY_CHARS {
                flags.push((number, format!("{chars} characters: the link alone is too long to fit {MAX_ENTRY_CHARS}; rename the file")));
                return LineEdit::Keep;
            }
            count += 1;
            LineEdit::Replace(line)
        });
        for (line, message) in flags {
            self.flag(
                LONG_INDEX_LINE,
                Severity::Warning,
                index_file,
                Some(line),
                message,
            );
        }
        (updated, count)
    }

    /// Step 5: each index over its caps laid out again (see the module docs).
    fn fit_indexes_under_caps(&mut self) -> Result<()> {
        let indexes: Vec<String> = self.indexes.iter().cloned().collect();
        for index_file in indexes {
            let Some(raw) = self.set.read(&index_file)? else {
                continue;
            };
            let before = index::load_index_text(&raw);
            if !over_caps(&before) {
                continue;
            }
            let mut done = Vec::new();
            let mut text = collapse_blank_runs(&raw);
            if text != raw {
                done.push("collapse blank-line runs".to_owned());
            }
            if over_caps(&index::load_index_text(&text)) {
                let dropped = drop_blank_lines(&text);
                if dropped != text {
                    done.push("drop blank lines".to_owned());
                    text = dropped;
                }
            }
            for max in [120, 100, 80, 60, 40] {
                if index::load_index_text(&text).bytes <= MAX_INDEX_BYTES {
                    break;
                }
                let shorter = shorten_entries(&text, max);
                if shorter != text {
                    done.push(format!("shorten entries to {max} characters"));
                    text = shorter;
                }
            }
            let after = index::load_index_text(&text);
            if text != raw {
                let reason = format!(
                    "lay out under the index caps: {} ({} → {} lines, {} → {})",
                    done.join(", "),
                    before.lines,
                    after.lines,
                    index::format_file_size(before.bytes),
                    index::format_file_size(after.bytes)
                );
                self.notes.push(format!("{index_file}: {reason}"));
                self.set.stage_write(&index_file, text, &reason)?;
            }
            // Never drop an entry to fit: what is still over is for a person to move or merge.
            if after.lines > MAX_INDEX_LINES {
                self.flag(
                    INDEX_TOO_LONG,
                    Severity::Error,
                    &index_file,
                    Some(MAX_INDEX_LINES + 1),
                    format!(
                        "{} lines (limit: {MAX_INDEX_LINES}) even without blank lines; every entry was kept: merge or move entries by hand",
                        after.lines
                    ),
                );
            }
            if after.bytes > MAX_INDEX_BYTES {
                self.flag(
                    INDEX_TOO_LARGE,
                    Severity::Error,
                    &index_file,
                    after.cut_from_line,
                    format!(
                        "{} (limit: {}) even with shortened entries; every entry was kept: merge or move entries by hand",
                        index::format_file_size(after.bytes),
                        index::format_file_size(MAX_INDEX_BYTES)
                    ),
                );
            }
        }
        Ok(())
    }

    /// Step 6: likely secrets in every file as it will be once the change set is applied.
    fn flag_secrets(&mut self) -> Result<()> {
        let mut files: Vec<String> = self
            .live()
            .into_iter()
            .map(|i| self.files[i].rel.clone())
            .collect();
        files.extend(self.logs.iter().cloned());
        files.extend(self.indexes.iter().cloned());
        for file in files {
            let Some(text) = self.set.read(&file)? else {
                continue;
            };
            for (line, rules) in by_line(&scan_secrets(&text)) {
                self.flag(
                    SECRET,
                    Severity::Error,
                    &file,
                    Some(line),
                    format!(
                        "looks like a credential ({}); never store secrets in memory — left unchanged",
                        rules.join(", ")
                    ),
                );
            }
        }
        Ok(())
    }

    fn finish(mut self) -> OfflineDream {
        self.flagged.sort_by(|a, b| {
            (a.file.as_str(), a.line, a.rule).cmp(&(b.file.as_str(), b.line, b.rule))
        });
        let protected_files: Vec<String> = self
            .protected
            .into_iter()
            .filter(|f| self.set.staged_content(f).is_some())
            .collect();
        let mut summary = if self.set.is_empty() {
            "offline dream: nothing to change".to_owned()
        } else {
            format!("offline dream: {}", self.set.summary())
        };
        for note in &self.notes {
            summary.push_str(&format!("\n- {note}"));
        }
        if !protected_files.is_empty() {
            summary.push_str(&format!(
                "\n- protected (user/feedback memories deleted or rewritten, review before applying): {}",
                protected_files.join(", ")
            ));
        }
        for flag in &self.flagged {
            let place = match flag.line {
                Some(line) => format!("{}:{line}", flag.file),
                None => flag.file.clone(),
            };
            summary.push_str(&format!(
                "\n- needs a person: {place} {}: {}",
                flag.rule, flag.message
            ));
        }
        OfflineDream {
            changes: self.set,
            flagged: self.flagged,
            protected_files,
            summary,
        }
    }

    /// Indices of the topic files not staged for deletion, in path order.
    fn live(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| self.set.staged_content(&self.files[i].rel) != Some(None))
            .collect()
    }

    /// `members` newest first (mtime), ties in path order.
    /// Exact duplicates, the one with the better claim to stay first: a name not like a copy's
    /// (`_copy`, `-copy 2`, ` (1)`), then a line in its index, then the newest. The newest alone
    /// kept `x_copy.md` and deleted the original its index lists.
    fn best_claim_first(&mut self, members: &[usize]) -> Result<Vec<usize>> {
        let mut claims = Vec::with_capacity(members.len());
        for &i in members {
            let (index, link, rel) = {
                let file = &self.files[i];
                (file.index.clone(), file.link.clone(), file.rel.clone())
            };
            let text = self.set.read(&index)?.unwrap_or_default();
            let listed = text.contains(&format!("]({link})"));
            claims.push((i, COPY_NAME.is_match(&file_stem(&rel)), !listed));
        }
        let newest = self.newest_first(members);
        let rank = |i: usize| newest.iter().position(|&n| n == i).unwrap_or(usize::MAX);
        claims.sort_by_key(|&(i, copy, unlisted)| (copy, unlisted, rank(i)));
        Ok(claims.into_iter().map(|(i, _, _)| i).collect())
    }

    fn newest_first(&self, members: &[usize]) -> Vec<usize> {
        let mut order = members.to_vec();
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.files[a], &self.files[b]);
            b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel))
        });
        order
    }

    /// The day a file was written, in the dream's time zone; a future mtime (clock skew) counts
    /// as now.
    fn date_of(&self, i: usize) -> NaiveDate {
        let written = self.files[i].mtime.min(self.now);
        DateTime::<Utc>::from(written)
            .with_timezone(self.zone)
            .date_naive()
    }

    /// Marks file `i`'s change as protected when it is a `user` or `feedback` memory.
    fn protect(&mut self, i: usize) {
        if matches!(
            self.files[i].memory_type,
            Some(MemoryType::User | MemoryType::Feedback)
        ) {
            self.protected.insert(self.files[i].rel.clone());
        }
    }

    /// Whether an entry of the index in `dir` linking to `link` points at a file that will exist
    /// (the test lint applies, on the staged state).
    fn link_exists(&self, dir: &str, link: &str) -> bool {
        if !index::link_stays_inside(link) {
            return false;
        }
        let target = index::join_rel(dir, link);
        match self.set.staged_content(&target) {
            Some(content) => content.is_some(),
            None => self.root.join(&target).is_file(),
        }
    }

    fn flag(
        &mut self,
        rule: &'static str,
        severity: Severity,
        file: &str,
        line: Option<usize>,
        message: String,
    ) {
        self.flagged.push(Finding {
            rule,
            severity,
            file: file.to_owned(),
            line,
            message,
        });
    }
}

/// Index texts edited by one step, staged together at its end: one change (and one reason) per
/// index per step, however many lines the step touched.
#[derive(Default)]
struct IndexEdits(BTreeMap<String, (String, Vec<String>)>);

impl IndexEdits {
    /// Applies `edit` to `file`'s text as edited so far (the staged text, empty when there is
    /// none); `note` goes into the reason when it changed something.
    fn edit(
        &mut self,
        set: &ChangeSet,
        file: &str,
        note: &str,
        edit: impl FnOnce(&str) -> String,
    ) -> Result<()> {
        if !self.0.contains_key(file) {
            let raw = set.peek(file)?.unwrap_or_default();
            self.0.insert(file.to_owned(), (raw, Vec::new()));
        }
        if let Some((raw, notes)) = self.0.get_mut(file) {
            let edited = edit(raw);
            if edited != *raw {
                *raw = edited;
                if !notes.iter().any(|n| n == note) {
                    notes.push(note.to_owned());
                }
            }
        }
        Ok(())
    }

    fn stage(self, set: &mut ChangeSet) -> Result<()> {
        for (file, (raw, notes)) in self.0 {
            if set.read(&file)?.unwrap_or_default() != raw {
                set.stage_write(&file, raw, &notes.join("; "))?;
            }
        }
        Ok(())
    }
}

/// `raw` with the entry lines of `from` pointing at `to`: the first keeps its title and hook
/// (someone's wording), the others go — and all go when `to` already has a line.
fn repoint(raw: &str, from: &str, to: &str) -> String {
    let entries = index::parse_entries(raw);
    let Some(entry) = entries.iter().find(|e| e.file == from) else {
        return raw.to_owned();
    };
    if entries.iter().any(|e| e.file == to) {
        return index::remove_entry(raw, from).0;
    }
    let line = index::entry_line(&entry.title, to, entry.hook.as_deref().unwrap_or(""));
    // Replaces the first line of `from` in place; the line now links to `to`, so only the
    // remaining lines of `from` are removed after.
    let repointed = index::upsert_entry(raw, from, &line, None);
    index::remove_entry(&repointed, from).0
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

fn is_heading(line: &str) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    line.len() - trimmed.len() <= 3
        && (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

fn is_list_item(line: &str) -> bool {
    list_marker_len(line.trim_start()).is_some()
}

/// The length of the list marker (`- `, `* `, `+ `, `1. `, `1) `) `text` starts with.
fn list_marker_len(text: &str) -> Option<usize> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = match text.as_bytes().get(digits) {
        Some(b'-' | b'*' | b'+') if digits == 0 => 1,
        Some(b'.' | b')') if (1..=9).contains(&digits) => digits + 1,
        _ => return None,
    };
    match text.as_bytes().get(marker) {
        Some(b' ' | b'\t') => Some(marker + 1),
        _ => None,
    }
}

/// The opening of a code fence: three or more backticks or tildes, indented at most 3 spaces.
fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = *trimmed.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let run = trimmed.bytes().take_while(|&b| b == c).count();
    (run >= 3).then_some((c, run))
}

fn closes_fence(line: &str, (c, run): (u8, usize)) -> bool {
    fence_marker(line).is_some_and(|(close, len)| {
        close == c && len >= run && line.trim_start_matches(' ')[len..].trim().is_empty()
    })
}

/// The byte offset where the body of `text` starts: after the closing `---` of a leading
/// frontmatter block, or 0 when there is none. `None` when a block opens and never closes.
fn body_start(text: &str) -> Option<usize> {
    let is_fence = |line: &str| {
        line.strip_prefix("---")
            .is_some_and(|rest| rest.trim_end().is_empty())
    };
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[bom..].split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Some(0);
    };
    if !is_fence(first) {
        return Some(0);
    }
    let mut offset = bom + first.len();
    for line in lines {
        offset += line.len();
        if is_fence(line) {
            return Some(offset);
        }
    }
    None
}

/// The relative date phrases rewritten, case-insensitively, on word boundaries. Only phrases
/// with one meaning given the day they were written: `last Tuesday` or `next week` are not.
static RELATIVE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:(today|tonight|yesterday|tomorrow)|this\s+(morning|afternoon|evening)|(last\s+night)|(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago)\b",
    )
    .expect("a valid regex")
});

/// What relative dates are never rewritten in besides code: URLs, link targets, autolinks and
/// HTML tags.
static URL_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s<>]*|\bwww\.[^\s<>]*|\]\([^)]*\)|<[^<>\s][^<>]*>")
        .expect("a valid regex")
});

/// `text` with each relative date phrase at or after byte `from` replaced by the date it meant
/// on `date`, keeping a capital at the start; and the `(phrase, replacement)` pairs.
fn absolute_dates(text: &str, from: usize, date: NaiveDate) -> (String, Vec<(String, String)>) {
    let untouchable = untouchable_ranges(text, from);
    let mut out = String::with_capacity(text.len());
    let mut replaced = Vec::new();
    let mut last = 0;
    for caps in RELATIVE_DATE.captures_iter(text) {
        let Some(phrase) = caps.get(0) else {
            continue;
        };
        let range = phrase.range();
        if untouchable
            .iter()
            .any(|r| r.start < range.end && range.start < r.end)
        {
            continue;
        }
        let Some(absolute) = absolute_date(&caps, date) else {
            continue;
        };
        let absolute = match phrase.as_str().chars().next() {
            Some(c) if c.is_uppercase() => capitalized(&absolute),
            _ => absolute,
        };
        out.push_str(&text[last..range.start]);
        out.push_str(&absolute);
        last = range.end;
        replaced.push((phrase.as_str().to_owned(), absolute));
    }
    out.push_str(&text[last..]);
    (out, replaced)
}

/// The absolute form of one matched phrase written on `date`.
fn absolute_date(caps: &Captures<'_>, date: NaiveDate) -> Option<String> {
    let day = |back: u64| date.checked_sub_days(Days::new(back));
    if let Some(word) = caps.get(1) {
        return Some(match word.as_str().to_lowercase().as_str() {
            "today" => date.to_string(),
            "tonight" => format!("the night of {date}"),
            "yesterday" => day(1)?.to_string(),
            _ => date.checked_add_days(Days::new(1))?.to_string(),
        });
    }
    if let Some(part) = caps.get(2) {
        return Some(format!("the {} of {date}", part.as_str().to_lowercase()));
    }
    if caps.get(3).is_some() {
        return Some(format!("the night of {}", day(1)?));
    }
    let count = caps.get(4)?.as_str().to_lowercase();
    let back = match count.as_str() {
        "a" | "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        digits => digits.parse().ok()?,
    };
    Some(day(back)?.to_string())
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The byte ranges of `text` a date rewrite must not touch: everything before `from`
/// (frontmatter), code fences (to their end, or the text's when unclosed), code spans, and
/// URL-like text.
fn untouchable_ranges(text: &str, from: usize) -> Vec<Range<usize>> {
    // Everything before `from` first: the frontmatter.
    let mut ranges: Vec<Range<usize>> = Vec::new();
    ranges.push(0..from);
    let mut offset = 0;
    let mut open: Option<(usize, (u8, usize))> = None;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        match open {
            Some((start, marker)) if closes_fence(content, marker) => {
                ranges.push(start..offset + line.len());
                open = None;
            }
            Some(_) => {}
            None => open = fence_marker(content).map(|marker| (offset, marker)),
        }
        offset += line.len();
    }
    if let Some((start, _)) = open {
        ranges.push(start..text.len());
    }
    // Code spans: a run of backticks up to the next run of the same length.
    let bytes = text.as_bytes();
    let run_at = |at: usize| bytes[at..].iter().take_while(|&&b| b == b'`').count();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            at += 1;
            continue;
        }
        let run = run_at(at);
        let mut close = at + run;
        let mut end = None;
        while close < bytes.len() {
            if bytes[close] == b'`' {
                let len = run_at(close);
                if len == run {
                    end = Some(close + len);
                    break;
                }
                close += len;
            } else {
                close += 1;
            }
        }
        match end {
            Some(end) => {
                ranges.push(at..end);
                at = end;
            }
            None => at += run,
        }
    }
    ranges.extend(URL_LIKE.find_iter(text).map(|m| m.range()));
    ranges
}

/// What a [`rewrite_lines`] callback does with a line.
enum LineEdit {
    Keep,
    Replace(String),
    Drop,
}

/// `raw` with each line (content without its line break, 1-based number) kept, replaced
/// (keeping its line break) or dropped by `edit`.
fn rewrite_lines(raw: &str, mut edit: impl FnMut(usize, &str) -> LineEdit) -> String {
    let mut out = String::with_capacity(raw.len());
    for (i, line) in raw.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        match edit(i + 1, content) {
            LineEdit::Keep => out.push_str(line),
            LineEdit::Replace(new) => {
                out.push_str(&new);
                out.push_str(&line[content.len()..]);
            }
            LineEdit::Drop => {}
        }
    }
    out
}

/// The entries of index text by their 1-based line.
fn entries_by_line(raw: &str) -> BTreeMap<usize, IndexEntry> {
    index::parse_entries(raw)
        .into_iter()
        .map(|e| (e.line, e))
        .collect()
}

fn over_caps(loaded: &index::LoadedIndex) -> bool {
    loaded.lines > MAX_INDEX_LINES || loaded.bytes > MAX_INDEX_BYTES
}

/// Lines of index text that belong to its frontmatter (never laid out).
fn frontmatter_lines(raw: &str) -> usize {
    raw[..body_start(raw).unwrap_or(0)].lines().count()
}

/// Every run of blank lines (after the frontmatter) down to one.
fn collapse_blank_runs(raw: &str) -> String {
    let skip = frontmatter_lines(raw);
    let mut previous_blank = false;
    rewrite_lines(raw, |number, line| {
        let blank = number > skip && line.trim().is_empty();
        let edit = if blank && previous_blank {
            LineEdit::Drop
        } else {
            LineEdit::Keep
        };
        previous_blank = blank;
        edit
    })
}

/// Every blank line after the frontmatter dropped.
fn drop_blank_lines(raw: &str) -> String {
    let skip = frontmatter_lines(raw);
    rewrite_lines(raw, |number, line| {
        if number > skip && line.trim().is_empty() {
            LineEdit::Drop
        } else {
            LineEdit::Keep
        }
    })
}

/// Entry lines longer than `max` characters rewritten with their hook shortened (dropped when
/// there is no room for it); title and link are kept whole.
fn shorten_entries(raw: &str, max: usize) -> String {
    let entries = entries_by_line(raw);
    rewrite_lines(raw, |number, line| {
        let Some(entry) = entries.get(&number) else {
            return LineEdit::Keep;
        };
        if line.chars().count() <= max {
            return LineEdit::Keep;
        }
        let head = index::entry_line(&entry.title, &entry.file, "");
        let room = max.saturating_sub(head.chars().count() + " — ".chars().count());
        let hook = entry.hook.as_deref().unwrap_or("");
        let new = if room < 8 || hook.is_empty() {
            head
        } else {
            let kept: String = hook.chars().take(room - 1).collect();
            index::entry_line(&entry.title, &entry.file, &format!("{}…", kept.trim_end()))
        };
        if new.chars().count() < line.chars().count() {
            LineEdit::Replace(new)
        } else {
            LineEdit::Keep
        }
    })
}

/// Names for a reason or the summary: all of them up to three, else three and a count.
fn names(items: &[String]) -> String {
    match items.len() {
        0..=3 => items.join(", "),
        n => format!("{} and {} more", items[..3].join(", "), n - 3),
    }
}

fn plural<'s>(n: usize, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use std::fs::{File, FileTimes};

    use chrono::NaiveTime;

    use super::*;
    use crate::actor::Actor;
    use crate::changeset::ChangeKind;
    use crate::lint::{DANGLING_POINTER, DUPLICATE_MEMORY, ORPHAN_FILE};
    use crate::testing::fixtures::{real_memory, TempMemoryDir, Xorshift};

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a YYYY-MM-DD date")
    }

    /// Noon UTC of `day`: the same date in every zone from UTC−11 to UTC+11.
    fn noon(day: &str) -> SystemTime {
        let at = date(day).and_time(NaiveTime::from_hms_opt(12, 0, 0).expect("noon"));
        SystemTime::from(at.and_utc())
    }

    /// Writes `file` with its mtime at noon of `day`.
    fn write_at(fx: &TempMemoryDir, file: &str, text: &str, day: &str) {
        fx.write(file, text);
        File::options()
            .write(true)
            .open(fx.path(file))
            .and_then(|f| f.set_times(FileTimes::new().set_modified(noon(day))))
            .expect("set mtime");
    }

    fn memory(name: &str, description: &str, memory_type: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n\n{body}")
    }

    fn plan(fx: &TempMemoryDir) -> OfflineDream {
        plan_offline_dream(&fx.dir, &Utc).expect("plan")
    }

    /// The dream as a reviewer sees it: the summary, then each change with its reason and diff.
    /// Runs of one repeated diff line (a block of blank lines) are shown once with a count.
    fn rendered(dream: &OfflineDream) -> String {
        let mut out = format!("{}\n", dream.summary);
        for change in &dream.changes.changes {
            let protected = if dream.is_protected(&change.file) {
                " [protected]"
            } else {
                ""
            };
            out.push_str(&format!(
                "\n{:?} {}{protected} — {}\n",
                change.kind, change.file, change.reason
            ));
            let lines: Vec<&str> = change.diff.lines().collect();
            for run in lines.chunk_by(|a, b| a == b) {
                match run.len() {
                    1 | 2 => run.iter().for_each(|l| out.push_str(&format!("{l}\n"))),
                    n => out.push_str(&format!("{}  … ×{n}\n", run[0])),
                }
            }
        }
        out
    }

    const SHARED_TESTING: &str = "Integration tests must hit a real database, never mocks.\n\n\
        **Why:** last quarter a mocked migration passed in CI while the production migration \
        broke, and it took two days to find out which schema change caused it.\n\n\
        **How to apply:**\n\
        - every new integration test opens a connection to the shared test database\n\
        - fixtures are loaded through the seed scripts, never built in memory by hand\n\
        - a test that needs a mock must say why in a comment next to it\n";
    const FACT_OLD: &str = "- seed data was refreshed 3 days ago from the staging snapshot";
    const FACT_NEW: &str = "- run them with `make test-db`, which starts the database container";

    /// A memory dir with everything the offline dream fixes, and one thing it must not.
    fn messy_dir() -> TempMemoryDir {
        let fx = TempMemoryDir::new("memory");
        let release = "Releases ship from the main branch every Tuesday.\n\n- tag with vX.Y.Z\n- announce in #releases\n";
        write_at(
            &fx,
            "project_release.md",
            &memory("Release process", "How releases ship", "project", release),
            "2026-06-08",
        );
        write_at(
            &fx,
            "project_release_copy.md",
            &memory(
                "release-process",
                "How releases ship (saved again)",
                "project",
                &release
                    .replace("main branch", "main  branch\n")
                    .replace("\n- tag", "\n\n- tag"),
            ),
            "2026-06-10",
        );
        write_at(
            &fx,
            "feedback_real_db.md",
            &memory(
                "Real database in tests",
                "Integration tests must hit a real database, not mocks",
                "feedback",
                &format!("{SHARED_TESTING}{FACT_OLD}\n"),
            ),
            "2026-06-05",
        );
        write_at(
            &fx,
            "feedback_testing.md",
            &memory(
                "Testing policy",
                "Integration tests must hit a real database, not mocks",
                "feedback",
                &format!("{SHARED_TESTING}{FACT_NEW}\n"),
            ),
            "2026-06-12",
        );
        write_at(
            &fx,
            "user_profile.md",
            &memory(
                "Adrian",
                "Backend engineer, wants terse answers",
                "user",
                "Adrian is a backend engineer; he moved the team to Rust yesterday.\nPrefers terse answers.\n",
            ),
            "2026-06-12",
        );
        write_at(
            &fx,
            "project_status.md",
            &memory(
                "Release status",
                "Where the v2.3 release stands",
                "project",
                "Deployed v2.3 today. The outage was 3 days ago.\n\n\
                 Tomorrow the freeze starts; notes from this morning are in `today.md` and at \
                 https://wiki.example.com/today.\n\n```sh\necho \"yesterday\"\n```\n",
            ),
            "2026-06-12",
        );
        let key = format!("AKIA{}", "QWERTY234567ABCD");
        write_at(
            &fx,
            "reference_dashboards.md",
            &memory(
                "Dashboards",
                "Where the Grafana dashboards are",
                "reference",
                &format!("Grafana at grafana.example.com.\nRead-only key: {key}\n"),
            ),
            "2026-06-01",
        );
        let blank_run = "\n".repeat(70);
        let archived: String = (1..=5)
            .map(|n| format!("- [Archived {n}](archive/note-{n}.md) — archived\n"))
            .collect();
        fx.write(
            "MEMORY.md",
            &format!(
                "# Project Memory\n\n> One line per memory; details live in the topic files.\n\n\
                 ## User\n- [Profile](user_profile.md) — who Adrian is\n{blank_run}\
                 ## Feedback\n- [Real DB in tests](feedback_real_db.md) — integration tests hit a real database\n\
                 - [Testing](feedback_testing.md) — how tests are run\n{blank_run}\
                 ## Project\n- [Release process](project_release.md) — how releases ship\n\
                 - [Status](project_status.md) — where the v2.3 release stands: deployed, the outage, the freeze that starts next, and where the notes of every meeting live\n\
                 - [Old notes](old_notes.md) — superseded\n{blank_run}{archived}"
            ),
        );
        fx
    }

    #[test]
    fn a_messy_dir_is_consolidated_and_then_lints_clean() {
        let fx = messy_dir();
        let before = fx.dir.lint().expect("lint");
        for rule in [
            DANGLING_POINTER,
            ORPHAN_FILE,
            DUPLICATE_MEMORY,
            INDEX_TOO_LONG,
            LONG_INDEX_LINE,
            SECRET,
        ] {
            assert!(
                before.by_rule(rule).next().is_some(),
                "the fixture must exercise {rule}: {:#?}",
                before.findings
            );
        }

        let dream = plan(&fx);
        assert!(
            fx.read("feedback_real_db.md").is_some(),
            "planning writes nothing"
        );
        insta::assert_snapshot!(rendered(&dream));
        for change in &dream.changes.changes {
            assert!(
                !change.reason.is_empty() && !change.reason.contains('\n'),
                "{}: one-line reason, got {:?}",
                change.file,
                change.reason
            );
            let kept_type = change
                .before
                .as_deref()
                .and_then(|b| frontmatter::parse_document(b).frontmatter.memory_type);
            if matches!(kept_type, Some(MemoryType::User | MemoryType::Feedback)) {
                assert!(
                    dream.is_protected(&change.file),
                    "{} deletes or rewrites a user/feedback memory without being protected",
                    change.file
                );
            }
        }
        assert_eq!(
            dream.protected_files,
            [
                "feedback_real_db.md",
                "feedback_testing.md",
                "user_profile.md"
            ]
        );
        let secrets: Vec<_> = dream
            .flagged
            .iter()
            .map(|f| (f.rule, f.file.as_str(), f.line))
            .collect();
        assert_eq!(secrets, [(SECRET, "reference_dashboards.md", Some(8))]);

        let report = fx
            .engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        assert!(report.all_applied(), "{report:?}");

        let after = fx.dir.lint().expect("lint");
        for rule in [
            DANGLING_POINTER,
            ORPHAN_FILE,
            DUPLICATE_MEMORY,
            INDEX_TOO_LONG,
            INDEX_TOO_LARGE,
            LONG_INDEX_LINE,
        ] {
            assert_eq!(
                after.by_rule(rule).count(),
                0,
                "{rule} left after the dream: {:#?}",
                after.findings
            );
        }
        assert_eq!(
            after.by_rule(SECRET).count(),
            1,
            "the secret is flagged, never changed"
        );

        let survivor = fx.read("feedback_testing.md").expect("survivor");
        assert!(survivor.contains(FACT_NEW), "{survivor}");
        assert!(
            survivor.contains("- seed data was refreshed 2026-06-02 from the staging snapshot"),
            "the merged fact is kept, dated from its own file: {survivor}"
        );
        assert_eq!(
            survivor.matches("never mocks").count(),
            1,
            "shared facts are not repeated: {survivor}"
        );
        assert_eq!(fx.read("feedback_real_db.md"), None);
        assert_eq!(
            fx.read("project_release_copy.md"),
            None,
            "the copy goes, though newer"
        );
        assert!(
            fx.read("project_release.md").is_some(),
            "the original its index lists stays"
        );

        let status = fx.read("project_status.md").expect("status");
        assert!(
            status.contains("Deployed v2.3 2026-06-12. The outage was 2026-06-09.")
                && status.contains("2026-06-13 the freeze starts")
                && status.contains("the morning of 2026-06-12"),
            "{status}"
        );
        assert!(
            status.contains("`today.md`")
                && status.contains("https://wiki.example.com/today")
                && status.contains("echo \"yesterday\""),
            "code and URLs are left alone: {status}"
        );
        let user = fx.read("user_profile.md").expect("user");
        assert!(
            user.contains("moved the team to Rust 2026-06-11."),
            "{user}"
        );
        for file in fx.dir.scan(None).expect("scan") {
            let text = fx.read(&file.file).expect("file");
            let start = body_start(&text).expect("closed frontmatter");
            let (_, left) = absolute_dates(&text, start, date("2026-01-01"));
            assert!(
                left.is_empty(),
                "{}: relative dates left: {left:?}",
                file.file
            );
        }

        let index = fx.read("MEMORY.md").expect("index");
        assert!(
            index.contains("- [Release process](project_release.md) — how releases ship\n"),
            "the original's line stays as it was: {index}"
        );
        assert!(
            index.starts_with("# Project Memory\n\n> One line per memory"),
            "{index}"
        );
        for heading in ["## User", "## Feedback", "## Project"] {
            assert!(index.contains(heading), "{heading} kept: {index}");
        }
    }

    #[test]
    fn the_same_dir_gives_the_same_plan() {
        let fx = messy_dir();
        let first = plan(&fx);
        let second = plan(&fx);
        assert_eq!(first, second);
        assert!(!first.changes.is_empty());
    }

    #[test]
    fn the_real_fixtures_lose_nothing() {
        for name in ["stockerly", "claude-code-2.1.330"] {
            let fx = TempMemoryDir::real("memory", name);
            let dream = plan(&fx);
            insta::assert_snapshot!(format!("real-{name}"), dream.summary);
            assert!(
                dream
                    .changes
                    .changes
                    .iter()
                    .all(|c| c.kind != ChangeKind::Delete && c.file == INDEX_FILE),
                "{name}: only the index may change: {:#?}",
                dream.changes
            );
            fx.engine
                .apply_change_set(&dream.changes, Actor::Dream)
                .expect("apply");
            for file in std::fs::read_dir(real_memory(name)).expect("fixture") {
                let file = file.expect("entry").file_name();
                let file = file.to_string_lossy();
                let original =
                    std::fs::read_to_string(real_memory(name).join(&*file)).expect("original");
                let now = fx.read(&file).expect("still there");
                if file == INDEX_FILE {
                    for line in original.lines() {
                        assert!(now.contains(line), "{name}: index line {line:?} lost");
                    }
                } else {
                    assert_eq!(now, original, "{name}/{file} changed");
                }
            }
            assert!(
                fx.dir.lint().expect("lint").findings.is_empty(),
                "{name}: {:#?}",
                fx.dir.lint()
            );
        }
    }

    #[test]
    fn an_index_over_its_caps_is_shortened_but_never_loses_an_entry() {
        let fx = TempMemoryDir::new("memory");
        let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
        let mut index = String::from("# Memory\n\n");
        for i in 0..205 {
            let file = format!("project_{i:03}.md");
            let description = format!("note {i} about {}", rng.words(3));
            write_at(
                &fx,
                &file,
                &memory(&format!("n{i}"), &description, "project", &rng.words(40)),
                "2026-06-01",
            );
            index.push_str(&format!(
                "- [Note {i}]({file}) — {description}, {}\n",
                "and more detail than an index needs ".repeat(3)
            ));
        }
        fx.write("MEMORY.md", &index);
        let before = index::load_index_text(&index);
        assert!(before.lines > MAX_INDEX_LINES && before.bytes > MAX_INDEX_BYTES);

        let dream = plan(&fx);
        let after = dream
            .changes
            .peek(INDEX_FILE)
            .expect("read")
            .expect("index");
        let loaded = index::load_index_text(&after);
        assert!(loaded.bytes <= MAX_INDEX_BYTES, "{} units", loaded.bytes);
        let files = |raw: &str| -> Vec<String> {
            index::parse_entries(raw)
                .into_iter()
                .map(|e| e.file)
                .collect()
        };
        assert_eq!(files(&after), files(&index), "every entry kept, in order");
        let flags: Vec<_> = dream.flagged.iter().map(|f| (f.rule, f.line)).collect();
        assert_eq!(flags, [(INDEX_TOO_LONG, Some(MAX_INDEX_LINES + 1))]);
        assert!(
            dream.summary.contains("index-too-long"),
            "{}",
            dream.summary
        );
    }

    #[test]
    fn relative_dates_become_the_dates_they_meant() {
        let day = date("2026-06-12");
        let cases = [
            ("we shipped yesterday.", "we shipped 2026-06-11."),
            ("Today: done", "2026-06-12: done"),
            ("TOMORROW", "2026-06-13"),
            ("3 days ago and a day ago", "2026-06-09 and 2026-06-11"),
            ("two  days ago", "2026-06-10"),
            ("This morning", "The morning of 2026-06-12"),
            ("since last night", "since the night of 2026-06-11"),
            ("yesterday's standup", "2026-06-11's standup"),
            ("todays yesterdays days ago", "todays yesterdays days ago"),
            ("`today` ``a ` today``", "`today` ``a ` today``"),
            (
                "see https://x.io/today and [t](today.md)",
                "see https://x.io/today and [t](today.md)",
            ),
            ("```\ntoday\n```\ntoday", "```\ntoday\n```\n2026-06-12"),
            ("~~~~\ntoday\n~~~\ntoday", "~~~~\ntoday\n~~~\ntoday"),
        ];
        for (text, expected) in cases {
            assert_eq!(absolute_dates(text, 0, day).0, expected, "{text:?}");
        }
        let file = "---\nname: today\ndescription: what happened yesterday\n---\nyesterday\n";
        let start = body_start(file).expect("closed");
        assert_eq!(
            absolute_dates(file, start, day).0,
            "---\nname: today\ndescription: what happened yesterday\n---\n2026-06-11\n",
            "frontmatter untouched"
        );
        assert_eq!(body_start("---\nname: x\nno end\n"), None);
        assert_eq!(body_start("no frontmatter\n"), Some(0));
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

    #[test]
    fn a_future_mtime_is_dated_today() {
        let fx = TempMemoryDir::new("memory");
        write_at(
            &fx,
            "project_a.md",
            &memory("a", "a", "project", "done today\n"),
            "2030-01-01",
        );
        fx.write("MEMORY.md", "- [a](project_a.md) — a\n");
        let dream = plan(&fx);
        let after = dream
            .changes
            .peek("project_a.md")
            .expect("read")
            .expect("file");
        // The fixture clock stands at 2026-11-18.
        assert!(after.ends_with("done 2026-11-18\n"), "{after}");
    }
}
