//! Steps 4 and 5 of the offline dream: every index repaired (dangling lines, orphans, long
//! lines), then laid out under its caps (see the module docs of [`super`]).

use std::collections::{BTreeMap, BTreeSet};

use chrono::TimeZone;

use super::markdown::body_start;
use super::{names, plural, Planner};
use crate::changeset::ChangeSet;
use crate::error::Result;
use crate::fix::file_stem;
use crate::frontmatter;
use crate::index::{self, IndexEntry, MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES};
use crate::lint::{Severity, INDEX_TOO_LARGE, INDEX_TOO_LONG, LONG_INDEX_LINE};
use crate::scan::SCAN_LINE_LIMIT;

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 4: dangling lines, orphans and long lines of every index, on the staged state.
    pub(super) fn repair_indexes(&mut self) -> Result<()> {
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
pub(super) fn repoint(raw: &str, from: &str, to: &str) -> String {
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
    use crate::index::INDEX_FILE;
    use crate::testing::fixtures::{TempMemoryDir, Xorshift};

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
}
