//! Steps 4 and 5 of the offline dream: every index repaired (dangling lines, orphans, long
//! lines), then laid out under its caps (see the module docs of [`super`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use chrono::TimeZone;

use super::markdown::{body_start, is_list_item, list_marker_len};
use super::{names, plural, Planner};
use crate::changeset::ChangeSet;
use crate::error::Result;
use crate::fix::file_stem;
use crate::frontmatter;
use crate::index::{self, IndexEntry, MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES};
use crate::lint::{Severity, INDEX_TOO_LARGE, INDEX_TOO_LONG, LONG_INDEX_LINE};
use crate::memory_type::MemoryType;
use crate::scan::SCAN_LINE_LIMIT;

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 4: dangling lines, orphans and long lines of every index, on the staged state.
    pub(super) fn repair_indexes(&mut self) -> Result<()> {
        let indexes: Vec<String> = self.indexes.iter().cloned().collect();
        for index_file in indexes {
            let dir = index::parent_of(&index_file).to_owned();
            // Topic indexes first: one left with no entry goes, and then so does its line.
            let mut linked_through = BTreeSet::new();
            for topic_index in self.listing_files(&index_file).into_iter().skip(1) {
                linked_through.extend(self.repair_topic_index(&dir, &topic_index)?);
            }
            let current = self.set.read(&index_file)?;
            let mut raw = current.clone().unwrap_or_default();
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
            linked.extend(linked_through);
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

    /// Removes the lines of `topic_index` (in `dir`) linking to missing files, deleting it when
    /// no entry is left; returns the links it still holds.
    fn repair_topic_index(&mut self, dir: &str, topic_index: &str) -> Result<Vec<String>> {
        let Some(raw) = self.set.read(topic_index)? else {
            return Ok(Vec::new());
        };
        let mut kept = Vec::new();
        let mut missing = Vec::new();
        for entry in index::parse_entries(&raw) {
            if self.link_exists(dir, &entry.file) {
                kept.push(entry.file);
            } else if !missing.contains(&entry.file) {
                missing.push(entry.file);
            }
        }
        if missing.is_empty() {
            return Ok(kept);
        }
        let reason = format!("remove the lines linking to missing {}", names(&missing));
        if kept.is_empty() {
            self.set
                .stage_delete(topic_index, &format!("{reason}: no entry left"))?;
        } else {
            let mut text = raw;
            for link in &missing {
                text = index::remove_entry(&text, link).0;
            }
            self.set.stage_write(topic_index, text, &reason)?;
        }
        self.notes.push(format!("{topic_index}: {reason}"));
        Ok(kept)
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
    pub(super) fn fit_indexes_under_caps(&mut self) -> Result<()> {
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
            // Too many lines: what is not an entry goes first, as Claude Code's own warning asks
            // ("move detail into topic files") — a line listed twice, details under an entry
            // (into its memory), blocks of notes (into a memory of their own).
            let too_long = |text: &str| index::load_index_text(text).lines > MAX_INDEX_LINES;
            if too_long(&text) {
                let deduplicated = drop_repeated_entries(&text);
                if deduplicated != text {
                    done.push("drop entries listed twice".to_owned());
                    text = deduplicated;
                }
            }
            if too_long(&text) {
                let (moved, notes) = self.move_entry_details(&index_file, &text)?;
                done.extend(notes);
                text = moved;
            }
            if too_long(&text) {
                let (moved, notes) = self.move_note_blocks(&index_file, &text)?;
                done.extend(notes);
                text = moved;
            }
            // Still too many lines: only moving entries out helps, and it may be enough for the
            // size too, so hooks are not shortened for nothing.
            if too_long(&text) {
                let (moved, notes) =
                    self.move_oldest_entries(&index_file, &text, |l| l.lines <= MAX_INDEX_LINES)?;
                done.extend(notes);
                text = moved;
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
            if over_caps(&index::load_index_text(&text)) {
                let (moved, notes) =
                    self.move_oldest_entries(&index_file, &text, |l| !over_caps(l))?;
                done.extend(notes);
                text = moved;
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
                        "{} lines (limit: {MAX_INDEX_LINES}) even without blank lines and with older project and reference entries moved; every entry was kept: merge or move entries by hand",
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
                        "{} (limit: {}) even with shortened entries and older project and reference entries moved; every entry was kept: merge or move entries by hand",
                        index::format_file_size(after.bytes),
                        index::format_file_size(MAX_INDEX_BYTES)
                    ),
                );
            }
        }
        Ok(())
    }
}

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// The index text `raw` of `index_file` with its oldest entries moved into topic indexes
    /// beside it until it `fits`, and what was moved, for the reason. One type at a time,
    /// the type with the most entries first (project, reference or none — never a `user` or
    /// `feedback` memory's entry, which Claude Code must always see); each type's entries go to
    /// its topic index (`index-project.md`, see `index::is_topic_index`), created or extended
    /// and linked from the index under the type's section, so every entry stays reachable.
    fn move_oldest_entries(
        &mut self,
        index_file: &str,
        raw: &str,
        fits: impl Fn(&index::LoadedIndex) -> bool,
    ) -> Result<(String, Vec<String>)> {
        let dir = index::parent_of(index_file).to_owned();
        let memories = self.memories_of_index(index_file);
        let lines: Vec<&str> = raw.lines().collect();
        let mut by_type: BTreeMap<Option<MemoryType>, Vec<(SystemTime, String, String)>> =
            BTreeMap::new();
        for entry in index::parse_entries(raw) {
            let Some(&i) = memories.get(&index::join_rel(&dir, &entry.file)) else {
                continue;
            };
            let file = &self.files[i];
            if matches!(
                file.memory_type,
                Some(MemoryType::User | MemoryType::Feedback)
            ) {
                continue;
            }
            let line = lines.get(entry.line - 1).copied().unwrap_or_default();
            by_type.entry(file.memory_type).or_default().push((
                file.mtime,
                entry.file,
                line.trim_end_matches('\r').to_owned(),
            ));
        }
        let mut types: Vec<_> = by_type.into_iter().collect();
        // Most entries first; on a tie, project memories (which go stale) before references.
        types.sort_by_key(|(memory_type, entries)| {
            let rank = match memory_type {
                Some(MemoryType::Project) => 0,
                Some(MemoryType::Reference) => 1,
                _ => 2,
            };
            (std::cmp::Reverse(entries.len()), rank)
        });

        let mut text = raw.to_owned();
        let mut notes = Vec::new();
        for (memory_type, mut entries) in types {
            if fits(&index::load_index_text(&text)) {
                break;
            }
            let name = index::topic_index_name(memory_type);
            let topic_rel = index::join_rel(&dir, &name);
            let existing = self.set.read(&topic_rel)?;
            // A memory that happens to bear the name is no topic index: leave it, skip the type.
            if existing
                .as_deref()
                .is_some_and(|t| !index::is_topic_index(&topic_rel, t))
            {
                continue;
            }
            let kind = memory_type.map_or("untyped", MemoryType::as_str);
            let title = format!("Older {kind} memories");
            let mut topic = existing.unwrap_or_else(|| new_topic_index(&title, memory_type));
            if !index::parse_entries(&text).iter().any(|e| e.file == name) {
                let hook = format!("{kind} entries moved out of {}", index::INDEX_FILE);
                let line = index::entry_line(&title, &name, &hook);
                text = index::upsert_entry(&text, &name, &line, memory_type);
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
            let mut moved = Vec::new();
            for (_, link, line) in entries {
                if fits(&index::load_index_text(&text)) {
                    break;
                }
                text = index::remove_entry(&text, &link).0;
                if !topic.ends_with('\n') {
                    topic.push('\n');
                }
                topic.push_str(&line);
                topic.push('\n');
                moved.push(link);
            }
            let reason = format!(
                "the oldest {kind} entries of {index_file}, moved here to keep the index within its caps; linked from it"
            );
            self.set.stage_write(&topic_rel, topic, &reason)?;
            notes.push(format!(
                "move the {} oldest {kind} {} to {name}",
                moved.len(),
                plural(moved.len(), "entry", "entries")
            ));
        }
        Ok((text, notes))
    }
}

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Indented lines right under an entry (its details) moved into the entry's memory, each
    /// kept once, when that memory is an ordinary one of this index — never a `user` or
    /// `feedback` memory, whose rewrite waits for a person while the index edit would not.
    fn move_entry_details(&mut self, index_file: &str, raw: &str) -> Result<(String, Vec<String>)> {
        let dir = index::parent_of(index_file).to_owned();
        let memories = self.memories_of_index(index_file);
        let entries = entries_by_line(raw);
        let skip = frontmatter_lines(raw);
        // Which memory each detail line belongs to.
        let mut owner: BTreeMap<usize, usize> = BTreeMap::new();
        let mut current: Option<usize> = None;
        for (n, line) in raw.lines().enumerate().map(|(n, l)| (n + 1, l)) {
            if n <= skip {
                continue;
            }
            if let Some(entry) = entries.get(&n) {
                current = memories
                    .get(&index::join_rel(&dir, &entry.file))
                    .copied()
                    .filter(|&i| {
                        !matches!(
                            self.files[i].memory_type,
                            Some(MemoryType::User | MemoryType::Feedback)
                        )
                    });
                continue;
            }
            let detail = line.starts_with([' ', '\t']) && !line.trim().is_empty();
            match (detail, current) {
                (true, Some(i)) => {
                    owner.insert(n, i);
                }
                _ => current = None,
            }
        }
        if owner.is_empty() {
            return Ok((raw.to_owned(), Vec::new()));
        }
        let lines: Vec<&str> = raw.lines().collect();
        let mut by_memory: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (&n, &i) in &owner {
            by_memory
                .entry(i)
                .or_default()
                .push(lines[n - 1].trim().to_owned());
        }
        let mut moved = Vec::new();
        for (i, details) in by_memory {
            let rel = self.files[i].rel.clone();
            let text = self.set.read(&rel)?.unwrap_or_default();
            let held = index::one_line(&text).to_lowercase();
            let mut updated = text.trim_end().to_owned();
            let eol = index::line_ending(&text);
            updated.push_str(eol);
            let mut added = 0;
            for detail in details {
                let item = if is_list_item(&detail) {
                    detail
                } else {
                    format!("- {detail}")
                };
                let fact = &item[list_marker_len(&item).unwrap_or(0)..];
                if held.contains(&index::one_line(fact).to_lowercase()) {
                    continue;
                }
                if added == 0 {
                    updated.push_str(eol);
                }
                updated.push_str(&item);
                updated.push_str(eol);
                added += 1;
            }
            if added > 0 {
                let reason = format!(
                    "{added} {} of its entry moved here from {index_file}, which is over its caps",
                    plural(added, "detail", "details")
                );
                self.set.stage_write(&rel, updated, &reason)?;
            }
            moved.push(rel);
        }
        let text = rewrite_lines(raw, |n, _| {
            if owner.contains_key(&n) {
                LineEdit::Drop
            } else {
                LineEdit::Keep
            }
        });
        let note = format!(
            "move the details under {} {} into {}",
            moved.len(),
            plural(moved.len(), "entry", "entries"),
            plural(moved.len(), "its memory", "their memories")
        );
        Ok((text, vec![note]))
    }

    /// Every block of three or more lines that are neither entries nor headings (notes written
    /// into the index itself) moved into a memory of its own, named after the heading above
    /// it, with no type (the dream never guesses one), and linked from where the block was.
    fn move_note_blocks(&mut self, index_file: &str, raw: &str) -> Result<(String, Vec<String>)> {
        let dir = index::parent_of(index_file).to_owned();
        let entries = entries_by_line(raw);
        let skip = frontmatter_lines(raw);
        let lines: Vec<&str> = raw.lines().collect();
        let is_note = |n: usize| {
            let line = lines[n - 1].trim();
            n > skip && !line.is_empty() && !line.starts_with('#') && !entries.contains_key(&n)
        };
        let mut blocks: Vec<(usize, usize, String)> = Vec::new();
        let mut heading = String::from("Notes");
        let mut n = 1;
        while n <= lines.len() {
            let line = lines[n - 1].trim();
            if line.starts_with('#') && n > skip {
                heading = line.trim_start_matches('#').trim().to_owned();
            }
            if !is_note(n) {
                n += 1;
                continue;
            }
            let start = n;
            while n <= lines.len() && is_note(n) {
                n += 1;
            }
            // Indented lines right under an entry are its details, not notes of their own.
            let under_entry = lines[start - 1].starts_with([' ', '\t']);
            if n - start >= 3 && !under_entry {
                blocks.push((start, n - 1, heading.clone()));
            }
        }
        if blocks.is_empty() {
            return Ok((raw.to_owned(), Vec::new()));
        }
        let mut replaced: BTreeMap<usize, Option<String>> = BTreeMap::new();
        let mut created = Vec::new();
        for (start, end, heading) in blocks {
            let name = format!("{heading} (from {})", index::INDEX_FILE);
            let stem = format!("notes_{}", crate::memdir::slug(&heading));
            let mut file = format!("{stem}.md");
            let mut k = 2;
            while self.set.peek(&index::join_rel(&dir, &file))?.is_some() {
                file = format!("{stem}_{k}.md");
                k += 1;
            }
            let body: Vec<&str> = lines[start - 1..end].to_vec();
            let first = index::one_line(body[0].trim_start_matches(['-', '*', '>', ' ']));
            let description = format!("{heading}: notes moved out of {}", index::INDEX_FILE);
            let text = format!(
                "---\nname: {}\ndescription: {}\n---\n\n{}\n",
                frontmatter::yaml_scalar(&name),
                frontmatter::yaml_scalar(&description),
                body.join("\n")
            );
            let rel = index::join_rel(&dir, &file);
            self.set.stage_write(
                &rel,
                text,
                &format!("{} lines of notes moved here from {index_file}, which is over its caps; linked from it", body.len()),
            )?;
            let hook = crate::llm::clip(&first, 80);
            replaced.insert(start, Some(index::entry_line(&name, &file, &hook)));
            for line in start + 1..=end {
                replaced.insert(line, None);
            }
            created.push(file);
        }
        let text = rewrite_lines(raw, |n, _| match replaced.get(&n) {
            Some(Some(line)) => LineEdit::Replace(line.clone()),
            Some(None) => LineEdit::Drop,
            None => LineEdit::Keep,
        });
        let note = format!("move notes into {}", names(&created));
        Ok((text, vec![note]))
    }
}

/// `raw` with every entry line whose link was already listed above dropped.
fn drop_repeated_entries(raw: &str) -> String {
    let entries = entries_by_line(raw);
    let mut seen = BTreeSet::new();
    rewrite_lines(raw, |n, _| match entries.get(&n) {
        Some(entry) if !seen.insert(entry.file.clone()) => LineEdit::Drop,
        _ => LineEdit::Keep,
    })
}

/// A new topic index: frontmatter Claude Code reads like any memory's, then the entries.
fn new_topic_index(title: &str, memory_type: Option<MemoryType>) -> String {
    let description = format!(
        "Entries moved out of {} to keep it within its caps, oldest first: one line per memory",
        index::INDEX_FILE
    );
    let type_line = memory_type.map_or(String::new(), |t| format!("type: {}\n", t.as_str()));
    format!(
        "---\nname: {}\ndescription: {}\n{type_line}---\n\n",
        frontmatter::yaml_scalar(title),
        frontmatter::yaml_scalar(&description)
    )
}

/// Index texts edited by one step, staged together at its end: one change (and one reason) per
/// index per step, however many lines the step touched.
#[derive(Default)]
pub(super) struct IndexEdits(BTreeMap<String, (String, Vec<String>)>);

impl IndexEdits {
    /// Applies `edit` to `file`'s text as edited so far (the staged text, empty when there is
    /// none); `note` goes into the reason when it changed something.
    pub(super) fn edit(
        &mut self,
        set: &ChangeSet,
        file: &str,
        note: &str,
        edit: impl FnOnce(&str) -> String,
    ) -> Result<()> {
        self.load(set, file)?;
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

    /// Points the entry lines of `from` at `to` across `files` (an index and its topic indexes):
    /// the first line found keeps its wording where it is and every other line of `from` goes —
    /// all of them when one of the files already lists `to`.
    pub(super) fn repoint(
        &mut self,
        set: &ChangeSet,
        files: &[String],
        from: &str,
        to: &str,
        note: &str,
    ) -> Result<()> {
        let lists =
            |raw: &str, link: &str| index::parse_entries(raw).iter().any(|e| e.file == link);
        let mut placed = false;
        for file in files {
            placed |= lists(self.load(set, file)?, to);
        }
        for file in files {
            self.edit(set, file, note, |raw| {
                if !placed && lists(raw, from) {
                    placed = true;
                    repoint(raw, from, to)
                } else {
                    index::remove_entry(raw, from).0
                }
            })?;
        }
        Ok(())
    }

    /// Replaces the entry line of `link` in whichever of `files` holds it with `line`.
    pub(super) fn rewrite_entry(
        &mut self,
        set: &ChangeSet,
        files: &[String],
        link: &str,
        line: &str,
        note: &str,
    ) -> Result<()> {
        for file in files {
            self.edit(set, file, note, |raw| {
                if index::parse_entries(raw).iter().any(|e| e.file == link) {
                    index::upsert_entry(raw, link, line, None)
                } else {
                    raw.to_owned()
                }
            })?;
        }
        Ok(())
    }

    /// Removes every entry line of `link` from `files`.
    pub(super) fn remove(
        &mut self,
        set: &ChangeSet,
        files: &[String],
        link: &str,
        note: &str,
    ) -> Result<()> {
        for file in files {
            self.edit(set, file, note, |raw| index::remove_entry(raw, link).0)?;
        }
        Ok(())
    }

    /// `file`'s text as edited so far.
    pub(super) fn text(&mut self, set: &ChangeSet, file: &str) -> Result<&str> {
        self.load(set, file)
    }

    /// `file`'s text as edited so far, read from `set` the first time.
    fn load(&mut self, set: &ChangeSet, file: &str) -> Result<&str> {
        if !self.0.contains_key(file) {
            let raw = set.peek(file)?.unwrap_or_default();
            self.0.insert(file.to_owned(), (raw, Vec::new()));
        }
        Ok(self.0.get(file).map_or("", |(raw, _)| raw.as_str()))
    }

    pub(super) fn stage(self, set: &mut ChangeSet) -> Result<()> {
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

/// What a [`rewrite_lines`] callback does with a line.
pub(super) enum LineEdit {
    Keep,
    Replace(String),
    Drop,
}

/// `raw` with each line (content without its line break, 1-based number) kept, replaced
/// (keeping its line break) or dropped by `edit`.
pub(super) fn rewrite_lines(raw: &str, mut edit: impl FnMut(usize, &str) -> LineEdit) -> String {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{memory, plan, write_at};
    use super::*;
    use crate::actor::Actor;
    use crate::index::INDEX_FILE;
    use crate::lint::{DANGLING_POINTER, ORPHAN_FILE};
    use crate::testing::fixtures::{TempMemoryDir, Xorshift};

    /// A dir of `count` memories (types in turn: 1 user, 1 feedback, 5 project, 2 reference, or
    /// all `only`), each written on its own day, indexed with long hooks and blank-line runs.
    fn crowded_dir(count: usize, only: Option<&str>) -> (TempMemoryDir, String) {
        let fx = TempMemoryDir::new("memory");
        let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
        let cycle = [
            "user",
            "feedback",
            "project",
            "project",
            "project",
            "project",
            "project",
            "reference",
            "reference",
        ];
        let mut index = String::from("# Memory\n\n");
        for i in 0..count {
            let kind = only.unwrap_or(cycle[i % cycle.len()]);
            let file = format!("{kind}_{i:03}.md");
            let description = format!("note {i} about {}", rng.words(3));
            let day = format!("2026-{:02}-{:02}", 1 + i / 28 % 10, 1 + i % 28);
            write_at(
                &fx,
                &file,
                &memory(&format!("n{i}"), &description, kind, &rng.words(40)),
                &day,
            );
            index.push_str(&format!(
                "- [Note {i}]({file}) — {description}, {}\n",
                "and more detail than an index needs ".repeat(2)
            ));
            if i % 10 == 9 {
                index.push_str("\n\n");
            }
        }
        fx.write("MEMORY.md", &index);
        (fx, index)
    }

    /// The topic files reachable from `MEMORY.md`: linked from it, or from a topic index it
    /// links to.
    fn reachable(fx: &TempMemoryDir) -> BTreeSet<String> {
        let index = fx.read(INDEX_FILE).expect("index");
        let mut found = BTreeSet::new();
        for entry in index::parse_entries(&index) {
            if let Some(text) = fx.read(&entry.file) {
                if index::is_topic_index(&entry.file, &text) {
                    found.extend(index::parse_entries(&text).into_iter().map(|e| e.file));
                }
            }
            found.insert(entry.file);
        }
        found
    }

    #[test]
    fn an_index_over_its_caps_moves_its_oldest_entries_out_and_every_memory_stays_reachable() {
        let (fx, index) = crowded_dir(260, None);
        let before = index::load_index_text(&index);
        assert!(before.lines > MAX_INDEX_LINES && before.bytes > MAX_INDEX_BYTES);
        let memories: BTreeSet<String> = index::parse_entries(&index)
            .into_iter()
            .map(|e| e.file)
            .collect();

        let dream = plan(&fx);
        assert!(dream.flagged.is_empty(), "{}", dream.summary);
        assert!(
            dream.protected_files.is_empty(),
            "nothing of a user or feedback memory is touched: {}",
            dream.summary
        );
        let touched: BTreeSet<&str> = dream
            .changes
            .changes
            .iter()
            .map(|c| c.file.as_str())
            .collect();
        assert_eq!(
            touched,
            BTreeSet::from([INDEX_FILE, "index-project.md"]),
            "{}",
            dream.summary
        );
        let report = fx
            .engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        assert!(report.all_applied(), "{report:?}");

        let after = fx.read(INDEX_FILE).expect("index");
        let loaded = index::load_index_text(&after);
        assert!(
            loaded.lines <= MAX_INDEX_LINES && loaded.bytes <= MAX_INDEX_BYTES && !loaded.truncated,
            "{} lines, {} units",
            loaded.lines,
            loaded.bytes
        );
        let reachable = reachable(&fx);
        let lost: Vec<&String> = memories.difference(&reachable).collect();
        assert!(lost.is_empty(), "unreachable after the dream: {lost:?}");
        let direct: BTreeSet<String> = index::parse_entries(&after)
            .into_iter()
            .map(|e| e.file)
            .collect();
        for file in &memories {
            if file.starts_with("user_") || file.starts_with("feedback_") {
                assert!(
                    direct.contains(file),
                    "{file} must stay in MEMORY.md itself"
                );
            }
        }
        let topic = fx.read("index-project.md").expect("topic index");
        assert!(
            topic.starts_with("---\nname: Older project memories\n")
                && topic.contains("\ntype: project\n"),
            "{topic}"
        );
        let moved: Vec<String> = index::parse_entries(&topic)
            .into_iter()
            .map(|e| e.file)
            .collect();
        assert_eq!(
            moved.first().map(String::as_str),
            Some("project_002.md"),
            "oldest first"
        );
        assert!(
            after.contains("- [Older project memories](index-project.md) — project entries moved out of MEMORY.md\n"),
            "{after}"
        );
        let lint = fx.dir.lint().expect("lint");
        for rule in [
            ORPHAN_FILE,
            DANGLING_POINTER,
            INDEX_TOO_LONG,
            INDEX_TOO_LARGE,
        ] {
            assert_eq!(
                lint.by_rule(rule).count(),
                0,
                "{rule}: {:#?}",
                lint.findings
            );
        }
        assert!(
            plan(&fx).changes.is_empty(),
            "a second dream finds nothing to do: {}",
            plan(&fx).summary
        );
    }

    #[test]
    fn an_index_of_user_memories_over_its_caps_keeps_every_entry_and_is_flagged() {
        let (fx, index) = crowded_dir(205, Some("feedback"));
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
    fn an_index_too_long_sheds_what_is_not_an_entry_first_and_keeps_every_line_somewhere() {
        let fx = TempMemoryDir::new("memory");
        write_at(
            &fx,
            "project_ci.md",
            &memory(
                "CI",
                "How CI runs",
                "project",
                "CI runs on GitHub Actions.\n",
            ),
            "2026-06-01",
        );
        write_at(
            &fx,
            "feedback_tests.md",
            &memory(
                "Tests",
                "Real database in tests",
                "feedback",
                "Never mock the database.\n",
            ),
            "2026-06-01",
        );
        let notes: String = (0..200)
            .map(|i| format!("- note {i}: the billing team decided thing number {i}\n"))
            .collect();
        let index = format!(
            "# Memory\n\n## Project\n- [CI](project_ci.md) — GitHub Actions\n  - lint, then tests\n  - deploys run on tags\n- [Tests](feedback_tests.md) — no mocks\n  - the compose Postgres\n  - seeded per test\n  - dropped after\n- [CI](project_ci.md) — listed twice\n\n## Team notes\n{notes}"
        );
        fx.write("MEMORY.md", &index);
        let dream = plan(&fx);
        fx.engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        let after = fx.read(INDEX_FILE).expect("index");
        let loaded = index::load_index_text(&after);
        assert!(loaded.lines <= MAX_INDEX_LINES, "{after}");
        assert_eq!(
            after.matches("](project_ci.md)").count(),
            1,
            "an entry listed twice is listed once: {after}"
        );
        let ci = fx.read("project_ci.md").expect("ci");
        assert!(
            ci.ends_with(
                "CI runs on GitHub Actions.\n\n- lint, then tests\n- deploys run on tags\n"
            ),
            "an entry's details go into its memory: {ci}"
        );
        assert!(
            after.contains("  - the compose Postgres\n  - seeded per test\n  - dropped after\n"),
            "a feedback memory is never rewritten for the layout: {after}"
        );
        let moved = fx
            .read("notes_team_notes.md")
            .expect("the notes' own memory");
        assert!(
            moved.starts_with("---\nname: Team notes (from MEMORY.md)\ndescription: \"Team notes: notes moved out of MEMORY.md\"\n---\n")
                && moved.contains("- note 0: the billing team decided thing number 0\n")
                && moved.contains("- note 199: the billing team decided thing number 199\n"),
            "{moved}"
        );
        assert!(
            after.contains("- [Team notes (from MEMORY.md)](notes_team_notes.md) — note 0:"),
            "linked from where the notes were: {after}"
        );
        let lint = fx.dir.lint().expect("lint");
        assert_eq!(lint.by_rule(ORPHAN_FILE).count(), 0, "{:#?}", lint.findings);
    }
}
