//! `MEMORY.md`, the index Claude Code loads into every conversation (`FORMATS.md` §2).
//!
//! Loading reproduces Claude Code 2.1.330 exactly: strip frontmatter and HTML comments, trim; keep
//! the first 200 lines; if the text is still over 25,000 UTF-16 units cut it at the last newline at
//! or before that offset (a hard cut when there is none); then append the warning naming why and
//! what was cut ("50 of 250 lines were cut off, starting at line 201 ("…")" — 2.1.88 said only
//! "Only part of it was loaded."). The limits are measured on the whole stripped text, so a file
//! over both limits reports both even when dropping lines alone would have brought it under the
//! size cap — as Claude Code does.
//!
//! Entries are `- [Title](file.md) — hook` lines; real indexes also use `*`/`+` bullets, other
//! separators (`–`, `-`, `:`) or none, `##` section headings and intro prose, all of which are kept
//! byte for byte when an entry is added, refreshed or removed.

use crate::frontmatter;
use crate::memory_type::MemoryType;

pub const INDEX_FILE: &str = "MEMORY.md";
/// Claude Code's line cap for the loaded index.
pub const MAX_INDEX_LINES: usize = 200;
/// Claude Code's size cap, in UTF-16 code units (JavaScript string length).
pub const MAX_INDEX_BYTES: usize = 25_000;
/// The length an index line should stay under (`FORMATS.md` §2, §8).
pub const MAX_ENTRY_CHARS: usize = 150;

/// The index as Claude Code loads it, plus what was cut.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedIndex {
    /// Exactly what Claude Code puts in context, warning included.
    pub content: String,
    /// Lines of the stripped, trimmed text before truncation.
    pub lines: usize,
    /// Size of the stripped, trimmed text before truncation, in UTF-16 units (Claude Code's
    /// "bytes").
    pub bytes: usize,
    pub truncated: bool,
    /// The appended warning (also at the end of `content`).
    pub warning: Option<String>,
    /// Every entry of the file, including any past the cut.
    pub entries: Vec<IndexEntry>,
    /// Whether `MEMORY.md` exists at all.
    pub exists: bool,
    /// The first line (1-based, of the stripped text) that did not load completely.
    pub cut_from_line: Option<usize>,
    /// Lines not loaded completely.
    pub lines_cut: usize,
    /// UTF-16 units not loaded.
    pub bytes_cut: usize,
    /// The stripped text that was not loaded (empty when nothing was cut), so a viewer can show
    /// exactly what Claude Code never sees: `content` minus the warning, then this.
    pub cut_text: String,
}

/// One `[Title](file)` entry of the index.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub title: String,
    /// The link target as written, minus a leading `./`.
    pub file: String,
    /// 1-based line in `MEMORY.md`.
    pub line: usize,
    /// The text after the link and its separator, if any.
    pub hook: Option<String>,
}

/// Loads index text the way Claude Code does (see the module docs).
pub fn load_index_text(raw: &str) -> LoadedIndex {
    let stripped = strip_html_comments(&frontmatter::parse_document(raw).body);
    let trimmed = stripped.trim();
    let line_count = trimmed.split('\n').count();
    let units = utf16_len(trimmed);
    let too_many_lines = line_count > MAX_INDEX_LINES;
    let too_large = units > MAX_INDEX_BYTES;
    let mut loaded = LoadedIndex {
        lines: line_count,
        bytes: units,
        entries: parse_entries(raw),
        exists: true,
        ..LoadedIndex::default()
    };
    if !too_many_lines && !too_large {
        loaded.content = trimmed.to_string();
        return loaded;
    }

    let mut kept = if too_many_lines {
        nth_newline(trimmed, MAX_INDEX_LINES).map_or(trimmed, |at| &trimmed[..at])
    } else {
        trimmed
    };
    if utf16_len(kept) > MAX_INDEX_BYTES {
        kept = cut_at_utf16(kept, MAX_INDEX_BYTES);
    }
    let kept_lines = kept.split('\n').count();
    // The last kept line is complete only when the cut fell on a line break.
    let last_complete = trimmed.len() == kept.len() || trimmed.as_bytes()[kept.len()] == b'\n';
    let complete_lines = if last_complete {
        kept_lines
    } else {
        kept_lines - 1
    };
    loaded.cut_from_line = Some(complete_lines + 1);
    loaded.lines_cut = line_count - complete_lines;
    loaded.bytes_cut = units - utf16_len(kept);
    loaded.cut_text = trimmed[kept.len()..].to_string();

    let reason = match (too_many_lines, too_large) {
        (false, true) => format!(
            "{} (limit: {}) — index entries are too long",
            format_file_size(units),
            format_file_size(MAX_INDEX_BYTES)
        ),
        (true, false) => format!("{line_count} lines (limit: {MAX_INDEX_LINES})"),
        _ => format!("{line_count} lines and {}", format_file_size(units)),
    };
    let what_was_cut = if last_complete {
        // The first line cut, trimmed and shortened as Claude Code quotes it.
        let first_cut = trimmed[kept.len() + 1..]
            .split('\n')
            .next()
            .unwrap_or_default()
            .trim();
        let quoted = if first_cut.is_empty() {
            String::new()
        } else {
            format!(" (\"{}\")", shorten_at_word(first_cut, 80))
        };
        format!(
            "{} of {line_count} lines were cut off, starting at line {}{quoted}",
            line_count - complete_lines,
            complete_lines + 1
        )
    } else {
        format!(
            "everything after the first {} characters of line 1 was cut off",
            utf16_len(kept)
        )
    };
    let warning = format!(
        "> WARNING: {INDEX_FILE} is {reason}. Only part of it was loaded: {what_was_cut}. Keep \
         index entries to one line under ~200 chars; move detail into topic files."
    );
    loaded.content = format!("{kept}\n\n{warning}");
    loaded.truncated = true;
    loaded.warning = Some(warning);
    loaded
}

/// Claude Code's `formatFileSize`: `N bytes` under 1 KiB, else KB/MB/GB with one decimal rounded
/// half up (JavaScript `toFixed(1)`) and a trailing `.0` dropped.
pub fn format_file_size(bytes: usize) -> String {
    const UNITS: [(u128, &str); 3] = [(1 << 10, "KB"), (1 << 20, "MB"), (1 << 30, "GB")];
    let n = bytes as u128;
    if n < 1024 {
        return format!("{bytes} bytes");
    }
    let (divisor, unit) = UNITS
        .iter()
        .rev()
        .find(|(d, _)| n >= *d)
        .copied()
        .unwrap_or(UNITS[0]);
    // Tenths, rounded half up, in integers so no float tie is ever mis-rounded.
    let tenths = (n * 20 + divisor) / (2 * divisor);
    if tenths.is_multiple_of(10) {
        format!("{}{unit}", tenths / 10)
    } else {
        format!("{}.{}{unit}", tenths / 10, tenths % 10)
    }
}

fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// Claude Code's way of quoting a line in at most `max` UTF-16 units: whole when it fits, else
/// its first `max - 1` units cut back to the last word when that keeps more than half, then `…`.
fn shorten_at_word(text: &str, max: usize) -> String {
    if utf16_len(text) <= max {
        return text.to_owned();
    }
    let head = cut_at_utf16_hard(text, max - 1);
    // JavaScript's `head.search(/\s\S*$/)`: the last whitespace.
    let at_word = head
        .rfind(char::is_whitespace)
        .map_or("", |at| head[..at].trim_end());
    let kept = if utf16_len(at_word) * 2 > max {
        at_word
    } else {
        head.trim_end()
    };
    format!("{kept}\u{2026}")
}

/// The longest prefix of `text` within `max` UTF-16 units, never half a surrogate pair.
fn cut_at_utf16_hard(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &text[..at];
        }
    }
    text
}

/// Byte offset of the `n`th `\n` (1-based), if there are that many.
fn nth_newline(text: &str, n: usize) -> Option<usize> {
    text.match_indices('\n').nth(n - 1).map(|(at, _)| at)
}

/// JavaScript's `s.slice(0, lastIndexOf('\n', max) > 0 ? that : max)` in UTF-16 units. A hard cut
/// that would split a surrogate pair keeps the pair out (Rust strings cannot hold half of one).
fn cut_at_utf16(text: &str, max: usize) -> &str {
    let mut units = 0;
    let mut last_newline = None;
    let mut hard_cut = text.len();
    for (at, c) in text.char_indices() {
        if units > max {
            break;
        }
        if c == '\n' {
            last_newline = Some(at);
        }
        if units + c.len_utf16() > max && hard_cut == text.len() {
            hard_cut = at;
        }
        units += c.len_utf16();
    }
    match last_newline {
        Some(at) if at > 0 => &text[..at],
        _ => &text[..hard_cut],
    }
}

/// Removes `<!-- … -->` comments; an unclosed comment is left as text.
fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        let Some(len) = rest[start + 4..].find("-->") else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + 4 + len + 3..];
    }
    out.push_str(rest);
    out
}

/// Every entry of raw index text, with 1-based line numbers (frontmatter lines excluded).
pub fn parse_entries(raw: &str) -> Vec<IndexEntry> {
    let skip = frontmatter_line_count(raw);
    raw.lines()
        .enumerate()
        .skip(skip)
        .filter_map(|(i, line)| {
            parse_entry_line(line).map(|(title, file, hook)| IndexEntry {
                title,
                file,
                line: i + 1,
                hook,
            })
        })
        .collect()
}

/// Lines taken by a leading frontmatter block (0 when there is none).
fn frontmatter_line_count(raw: &str) -> usize {
    let raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    let mut lines = raw.lines();
    if lines.next().is_none_or(|l| l.trim_end() != "---") {
        return 0;
    }
    lines
        .position(|l| l.trim_end() == "---")
        .map_or(0, |p| p + 2)
}

/// Parses `- [Title](file.md) — hook` (bullet `-`, `*`, `+` or none; any separator or none).
/// Links with a URL scheme or an anchor-only target are prose, not entries.
pub fn parse_entry_line(line: &str) -> Option<(String, String, Option<String>)> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix(['-', '*', '+']) {
        if !after.starts_with([' ', '\t']) {
            return None;
        }
        rest = after.trim_start();
    }
    let rest = rest.strip_prefix('[')?;
    let title_end = matching_close(rest, '[', ']')?;
    let title = &rest[..title_end];
    let rest = rest[title_end + 1..].strip_prefix('(')?;
    let target_end = matching_close(rest, '(', ')')?;
    let target = link_target(&rest[..target_end])?;
    let hook = rest[target_end + 1..]
        .trim_start()
        .trim_start_matches(['—', '–', '-', ':', '|'])
        .trim();
    Some((
        title.trim().to_string(),
        target,
        (!hook.is_empty()).then(|| hook.to_string()),
    ))
}

fn matching_close(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == open => depth += 1,
            c if c == close => {
                if depth == 0 {
                    return Some(at);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    None
}

/// The file a link points at: `<…>` unwrapped, a `"title"` and `#anchor` dropped, `./` removed.
fn link_target(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let raw = match raw.strip_prefix('<').and_then(|r| r.split_once('>')) {
        Some((inner, _)) => inner,
        None => raw.split_whitespace().next().unwrap_or(""),
    };
    let raw = raw.split('#').next().unwrap_or("");
    let has_scheme = raw
        .split_once(':')
        .is_some_and(|(scheme, _)| !scheme.is_empty() && !scheme.contains('/'));
    if raw.is_empty() || has_scheme {
        return None;
    }
    Some(normalize_target(raw).to_string())
}

fn normalize_target(target: &str) -> &str {
    let mut t = target;
    while let Some(rest) = t.strip_prefix("./") {
        t = rest;
    }
    t
}

/// The canonical index line `- [Title](file) — hook`, at most [`MAX_ENTRY_CHARS`] characters: the
/// hook (and if need be the title) is shortened with `…`. Line breaks and brackets in the title
/// are flattened so the line stays one parsable entry.
pub fn entry_line(title: &str, file: &str, hook: &str) -> String {
    let title: String = one_line(title)
        .chars()
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            c => c,
        })
        .collect();
    let title = neutralize_comments(&title);
    let hook = neutralize_comments(&one_line(hook));
    let fixed = "- []()".len() + file.chars().count();
    let title = shorten(&title, MAX_ENTRY_CHARS.saturating_sub(fixed + 8).max(1));
    let head = format!("- [{title}]({file})");
    if hook.is_empty() {
        return head;
    }
    let room = MAX_ENTRY_CHARS.saturating_sub(head.chars().count() + 3);
    if room < 2 {
        return head;
    }
    format!("{head} — {}", shorten(&hook, room))
}

/// `text` with HTML comment markers broken up (`<!--` → `<!- -`, `-->` → `- ->`): Claude Code
/// strips comments from the index before loading it, so a description holding `<!--` would hide
/// every entry up to the next `-->`.
pub(crate) fn neutralize_comments(text: &str) -> String {
    if !text.contains("<!--") && !text.contains("-->") {
        return text.to_owned();
    }
    text.replace("<!--", "<!- -").replace("-->", "- ->")
}

/// `text` on one line: each run of whitespace, line breaks included, becomes one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The directory part of a path relative to the memory dir (`""` for the root).
pub(crate) fn parent_of(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `name` inside `dir`, both relative to the memory dir.
pub(crate) fn join_rel(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether an entry's link stays inside the memory dir (no `..` segment, not absolute): one that
/// does not never counts as pointing at a file, wherever it leads.
pub(crate) fn link_stays_inside(link: &str) -> bool {
    !link.split('/').any(|s| s == "..") && !link.starts_with('/')
}

/// At most `max` characters, the last one `…` when shortened.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// The line ending an index uses: CRLF if any of its lines ends so, else LF.
pub(crate) fn line_ending(raw: &str) -> &'static str {
    if raw.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// Adds `line` for `file`, or replaces the existing entry line for `file` in place. A new entry
/// goes under the section heading named after `section` (`## User`, `## Projects`, …) when the
/// index has one, else at the end. Every other byte is kept.
pub fn upsert_entry(raw: &str, file: &str, line: &str, section: Option<MemoryType>) -> String {
    let eol = line_ending(raw);
    let file = normalize_target(file);
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    let skip = frontmatter_line_count(raw);
    let new_line = format!("{line}{eol}");
    let existing = lines
        .iter()
        .enumerate()
        .skip(skip)
        .find(|(_, l)| parse_entry_line(l).is_some_and(|(_, target, _)| target == file));
    if let Some((at, old)) = existing {
        let ending = if old.ends_with('\n') {
            &new_line[..]
        } else {
            line
        };
        let mut out = String::with_capacity(raw.len() + line.len());
        lines[..at].iter().for_each(|l| out.push_str(l));
        out.push_str(ending);
        lines[at + 1..].iter().for_each(|l| out.push_str(l));
        return out;
    }
    if let Some(at) = section.and_then(|s| section_insert_point(&lines, skip, s)) {
        // Inserting after the section's last line, which may lack its line break at EOF.
        let mut out = String::with_capacity(raw.len() + new_line.len() + 2);
        lines[..at].iter().for_each(|l| out.push_str(l));
        if at > 0 && !lines[at - 1].ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str(&new_line);
        lines[at..].iter().for_each(|l| out.push_str(l));
        return out;
    }
    let mut out = raw.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(eol);
    }
    out.push_str(&new_line);
    out
}

/// Where a new entry of type `section` goes: after the last entry (or the heading itself) of the
/// first heading whose text is the type's name, singular or plural, any case.
fn section_insert_point(lines: &[&str], skip: usize, section: MemoryType) -> Option<usize> {
    let name = section.as_str();
    let heading_text = |l: &str| {
        let t = l.trim();
        t.starts_with('#')
            .then(|| t.trim_start_matches('#').trim().to_lowercase())
    };
    let start = lines.iter().enumerate().skip(skip).find_map(|(i, l)| {
        heading_text(l)
            .filter(|h| h == name || h.strip_suffix('s') == Some(name))
            .map(|_| i)
    })?;
    let mut insert = start + 1;
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        if heading_text(l).is_some() {
            break;
        }
        if parse_entry_line(l).is_some() {
            insert = i + 1;
        }
    }
    Some(insert)
}

/// Removes every entry line pointing at `file`; reports whether there was one.
pub fn remove_entry(raw: &str, file: &str) -> (String, bool) {
    let file = normalize_target(file);
    let skip = frontmatter_line_count(raw);
    let mut removed = false;
    let mut out = String::with_capacity(raw.len());
    for (i, line) in raw.split_inclusive('\n').enumerate() {
        let points_at_file =
            i >= skip && parse_entry_line(line).is_some_and(|(_, target, _)| target == file);
        if points_at_file {
            removed = true;
        } else {
            out.push_str(line);
        }
    }
    (out, removed)
}

/// Whether `file` (relative to a memory dir, `/`-separated) is an index: `MEMORY.md` at any
/// depth.
pub fn is_index_file(file: &str) -> bool {
    file == INDEX_FILE || file.ends_with(&format!("/{INDEX_FILE}"))
}

/// The name of a topic index: a topic file, next to its `MEMORY.md`, that lists entries moved out
/// of the index to keep it within its caps (`index-project.md`), linked from the index. Claude
/// Code reads it as any other memory; Engram counts the files it lists as indexed.
pub const TOPIC_INDEX_PREFIX: &str = "index-";

/// Whether the topic file `rel` with `text` is a topic index: named `index-….md`, and its body
/// only entry lines, headings and blank lines, at least one entry. (A memory that happens to be
/// named so but says something else is a memory.)
pub fn is_topic_index(rel: &str, text: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if !(name.starts_with(TOPIC_INDEX_PREFIX) && name.ends_with(".md")) {
        return false;
    }
    let body = frontmatter::parse_document(text).body;
    let mut entries = 0;
    for line in body.lines() {
        let line = line.trim();
        if parse_entry_line(line).is_some() {
            entries += 1;
        } else if !(line.is_empty() || line.starts_with('#')) {
            return false;
        }
    }
    entries > 0
}

/// The topic index for entries of `memory_type` (`index-other.md` for those without one).
pub fn topic_index_name(memory_type: Option<MemoryType>) -> String {
    let kind = memory_type.map_or("other", |t| t.as_str());
    format!("{TOPIC_INDEX_PREFIX}{kind}.md")
}

/// Replays the edit that turned `before` into `after` onto `current`, what the disk holds now —
/// so an index that someone else (Claude Code, a person, another Engram) changed meanwhile keeps
/// their lines *and* gets ours, as `MEMORY.md`'s many writers need. Entry lines are matched by
/// the file they link to: an entry we removed is removed whatever its wording on disk; an entry we
/// added or reworded replaces the disk's entry for that file in place, or is inserted after the
/// line it followed in `after` (or at the end when that line is gone). Other lines (headings,
/// prose) are removed or inserted by exact text. Every line we did not touch stays as it is on
/// disk. When `current == before` the result is exactly `after`.
///
/// `None` — a conflict, for a person to resolve — when the two edits cannot both stand: an entry
/// we reworded was reworded differently on disk, or the index was replaced wholesale (not one
/// line of `before` is left), so there is nothing to anchor our edit to.
pub fn merge_edit(before: &str, after: &str, current: &str) -> Option<String> {
    if current == before || current == after {
        return Some(after.to_owned());
    }
    let link = |line: &str| parse_entry_line(line).map(|(_, file, _)| file);
    let on_disk: std::collections::HashSet<&str> = current.lines().collect();
    let mut kept = before.lines().filter(|l| !l.trim().is_empty()).peekable();
    if kept.peek().is_some() && !kept.any(|l| on_disk.contains(l)) {
        return None;
    }
    let entry_lines = |text: &str| -> std::collections::HashMap<String, String> {
        text.lines()
            .filter_map(|l| link(l).map(|file| (file, l.to_owned())))
            .collect()
    };
    let (was, will_be, is) = (
        entry_lines(before),
        entry_lines(after),
        entry_lines(current),
    );
    for (file, ours) in &will_be {
        let (Some(was), Some(is)) = (was.get(file), is.get(file)) else {
            continue;
        };
        if was != ours && is != was && is != ours {
            return None;
        }
    }
    let ours: std::collections::HashSet<String> = after.lines().filter_map(link).collect();
    let eol = if current.is_empty() {
        line_ending(after)
    } else {
        line_ending(current)
    };
    let ends_with_newline =
        current.ends_with('\n') || (current.is_empty() && after.ends_with('\n'));
    let mut lines: Vec<String> = current.lines().map(str::to_owned).collect();

    let diff = similar::TextDiff::from_lines(before, after);
    let mut anchor: Option<String> = None; // the last line of `after` before the current op
    for change in diff.iter_all_changes() {
        let text = change.value().trim_end_matches(['\n', '\r']);
        match change.tag() {
            similar::ChangeTag::Equal => anchor = Some(text.to_owned()),
            similar::ChangeTag::Delete => match link(text) {
                // An entry we dropped altogether goes, however it is worded on disk now.
                Some(file) if !ours.contains(&file) => {
                    lines.retain(|l| link(l).as_deref() != Some(file.as_str()))
                }
                // A reworded entry is replaced when its new line is inserted.
                Some(_) => {}
                None => {
                    if let Some(at) = lines.iter().position(|l| l == text) {
                        lines.remove(at);
                    }
                }
            },
            similar::ChangeTag::Insert => {
                let existing = match link(text) {
                    Some(file) => lines
                        .iter()
                        .position(|l| link(l).as_deref() == Some(file.as_str())),
                    None => None,
                };
                match existing {
                    Some(at) => lines[at] = text.to_owned(),
                    None => {
                        let at = anchor
                            .as_deref()
                            .and_then(|a| lines.iter().rposition(|l| l == a))
                            .map_or_else(
                                || if anchor.is_none() { 0 } else { lines.len() },
                                |at| at + 1,
                            );
                        lines.insert(at, text.to_owned());
                    }
                }
                anchor = Some(text.to_owned());
            }
        }
    }
    let mut out = lines.join(eol);
    if ends_with_newline && !out.is_empty() {
        out.push_str(eol);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::real_memory;

    #[test]
    fn index_lines_engram_writes_never_open_or_close_an_html_comment() {
        let hide = entry_line("A", "a.md", "<!-- hide");
        let end = entry_line("B <!--", "b.md", "end -->");
        for line in [&hide, &end] {
            assert!(!line.contains("<!--") && !line.contains("-->"), "{line}");
        }
        let raw = format!("{hide}\n- [C](c.md) \u{2014} c\n{end}\n- [D](d.md) \u{2014} d\n");
        assert_eq!(load_index_text(&raw).entries.len(), 4, "nothing hidden");
    }

    const WARNING_TAIL: &str =
        ". Keep index entries to one line under ~200 chars; move detail into topic files.";

    /// What was loaded of the index, without the warning appended to it.
    fn loaded_part(loaded: &LoadedIndex) -> &str {
        loaded
            .content
            .split("\n\n> WARNING")
            .next()
            .expect("content")
    }

    fn entries(n: usize, width: usize) -> String {
        (1..=n)
            .map(|i| {
                let line = format!("- [T{i}](t{i}.md) — ");
                let pad = width.saturating_sub(line.chars().count());
                format!("{line}{}", "h".repeat(pad))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn merging_an_edit_keeps_lines_written_on_disk_since() {
        let before = "# Memory\n\n- [A](a.md) \u{2014} a\n";
        let ours = "# Memory\n\n- [A](a.md) \u{2014} a\n- [B](b.md) \u{2014} b\n";
        let theirs = "# Memory\n\n- [A](a.md) \u{2014} a\n- [C](c.md) \u{2014} c\n";
        let merged = merge_edit(before, ours, theirs).expect("no conflict");
        assert_eq!(
            merged,
            "# Memory\n\n- [A](a.md) \u{2014} a\n- [B](b.md) \u{2014} b\n- [C](c.md) \u{2014} c\n",
            "both new entries are kept"
        );
        assert_eq!(
            merge_edit(before, ours, before).as_deref(),
            Some(ours),
            "nothing moved: ours exactly"
        );
    }

    #[test]
    fn merging_removes_and_rewords_entries_by_the_file_they_link_to() {
        let before = "- [A](a.md) \u{2014} a\n- [B](b.md) \u{2014} b\n- [C](c.md) \u{2014} c\n";
        // We drop B and reword C; meanwhile someone reworded B and added D.
        let ours = "- [A](a.md) \u{2014} a\n- [C](c.md) \u{2014} sea\n";
        let theirs = "- [A](a.md) \u{2014} a\n- [B](b.md) \u{2014} bee\n- [C](c.md) \u{2014} c\n- [D](d.md) \u{2014} d\n";
        assert_eq!(
            merge_edit(before, ours, theirs).as_deref(),
            Some("- [A](a.md) \u{2014} a\n- [C](c.md) \u{2014} sea\n- [D](d.md) \u{2014} d\n")
        );
    }

    #[test]
    fn merging_into_crlf_or_an_index_without_a_final_newline_keeps_its_form() {
        let merged = merge_edit(
            "- [A](a.md)\n",
            "- [A](a.md)\n- [B](b.md)\n",
            "- [A](a.md)\r\n- [C](c.md)",
        );
        assert_eq!(
            merged.as_deref(),
            Some("- [A](a.md)\r\n- [B](b.md)\r\n- [C](c.md)")
        );
        assert_eq!(
            merge_edit("", "- [B](b.md)\n", "").as_deref(),
            Some("- [B](b.md)\n")
        );
        assert_eq!(
            merge_edit("", "- [B](b.md)\n", "- [C](c.md)\n").as_deref(),
            Some("- [B](b.md)\n- [C](c.md)\n"),
            "no anchor: at the top, as in `after`"
        );
    }

    #[test]
    fn edits_that_cannot_both_stand_are_a_conflict() {
        let before = "- [A](a.md) \u{2014} a\n";
        let ours = "- [A](a.md) \u{2014} ours\n";
        assert_eq!(
            merge_edit(before, ours, "- [A](a.md) \u{2014} theirs\n"),
            None,
            "the same entry reworded both ways"
        );
        assert_eq!(
            merge_edit(
                before,
                "- [A](a.md) \u{2014} a\n- [B](b.md)\n",
                "rewritten\n"
            ),
            None,
            "nothing of the planned-on index is left"
        );
        assert_eq!(
            merge_edit(before, ours, ours).as_deref(),
            Some(ours),
            "the same rewording on both sides is no conflict"
        );
    }

    #[test]
    fn small_index_loads_trimmed_without_warning() {
        let loaded = load_index_text("\n\n- [A](a.md) — hook\n\n");
        assert_eq!(loaded.content, "- [A](a.md) — hook");
        assert!(!loaded.truncated);
        assert_eq!(loaded.warning, None);
        assert_eq!((loaded.lines, loaded.bytes), (1, 18));
    }

    #[test]
    fn strips_frontmatter_and_html_comments() {
        let raw = "---\ntitle: idx\n---\n<!-- hidden\nnote -->\n- [A](a.md)<!-- x --> — h\n";
        assert_eq!(load_index_text(raw).content, "- [A](a.md) — h");
    }

    #[test]
    fn over_200_lines_keeps_200_with_the_exact_warning() {
        let raw = entries(250, 20);
        let loaded = load_index_text(&raw);
        assert!(loaded.truncated);
        let expected_kept = raw.lines().take(200).collect::<Vec<_>>().join("\n");
        let first_cut = raw.lines().nth(200).expect("line 201").trim();
        assert_eq!(
            loaded.content,
            format!(
                "{expected_kept}\n\n> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it \
                 was loaded: 50 of 250 lines were cut off, starting at line 201 (\"{first_cut}\")\
                 {WARNING_TAIL}"
            )
        );
        assert_eq!(loaded.cut_from_line, Some(201));
        assert_eq!(loaded.lines_cut, 50);
        assert_eq!(loaded.lines, 250);
    }

    #[test]
    fn over_25000_units_cuts_at_the_last_newline_with_the_exact_warning() {
        // 100 lines of 300 chars: 30,099 units, under the line cap.
        let raw = entries(100, 300);
        let loaded = load_index_text(&raw);
        let kept = loaded_part(&loaded);
        assert!(utf16_len(kept) <= 25_000);
        assert_eq!(
            kept,
            raw.lines().take(83).collect::<Vec<_>>().join("\n"),
            "83 × 301 = 24,983 ≤ 25,000"
        );
        // Line 84 is quoted in 79 units and `…`: cut back to its last word it would keep less
        // than half of that.
        let quoted: String = raw
            .lines()
            .nth(83)
            .expect("line 84")
            .chars()
            .take(79)
            .collect();
        assert!(loaded.content.ends_with(&format!(
            "> WARNING: MEMORY.md is 29.4KB (limit: 24.4KB) — index entries are too long. Only \
             part of it was loaded: 17 of 100 lines were cut off, starting at line 84 \
             (\"{quoted}\u{2026}\"){WARNING_TAIL}"
        )));
        assert_eq!(loaded.cut_from_line, Some(84));
        assert_eq!(loaded.lines_cut, 17);
        assert_eq!(loaded.bytes, 30_099);
    }

    #[test]
    fn over_both_limits_names_both_measured_on_the_whole_text() {
        // 300 lines of 120 chars: the first 200 lines (24,199 units) fit the size cap, but the
        // reason still reports the whole file's size, as Claude Code does.
        let raw = entries(300, 120);
        let loaded = load_index_text(&raw);
        assert_eq!(
            loaded.warning.as_deref(),
            Some(
                format!(
                    "> WARNING: MEMORY.md is 300 lines and 35.4KB. Only part of it was loaded: 100 \
                     of 300 lines were cut off, starting at line 201 (\"{}\u{2026}\"){WARNING_TAIL}",
                    raw.lines().nth(200).expect("line 201").chars().take(79).collect::<String>()
                )
                .as_str()
            )
        );
        let kept = loaded_part(&loaded);
        assert_eq!(kept.lines().count(), 200);
    }

    #[test]
    fn size_is_counted_in_utf16_units_not_bytes() {
        // 'é' is 2 UTF-8 bytes but 1 UTF-16 unit: 20,000 of them are under the cap.
        let under = "é".repeat(20_000);
        assert!(
            !load_index_text(&under).truncated,
            "40,000 UTF-8 bytes, 20,000 units"
        );
        // An emoji is 2 UTF-16 units: 13,000 of them are 26,000 units.
        let over = "😀".repeat(13_000);
        let loaded = load_index_text(&over);
        assert!(loaded.truncated);
        assert_eq!(loaded.bytes, 26_000);
    }

    #[test]
    fn without_a_newline_the_cut_is_hard_at_25000_units() {
        let raw = "x".repeat(30_000);
        let loaded = load_index_text(&raw);
        let kept = loaded_part(&loaded);
        assert_eq!(kept.len(), 25_000);
        assert_eq!(loaded.cut_from_line, Some(1));
        assert_eq!(loaded.bytes_cut, 5_000);
        assert!(
            loaded.content.contains(
                "29.3KB (limit: 24.4KB) — index entries are too long. Only part of it was \
                 loaded: everything after the first 25000 characters of line 1 was cut off."
            ),
            "{}",
            &loaded.content[25_000..]
        );
    }

    /// The warning Claude Code 2.1.330 put in its request to the model for a 250-line index (its
    /// lines `- [Fact NNN](fNNN.md) — lineNNNx wwwwwwwwww`), copied from that request.
    #[test]
    fn the_warning_names_what_was_cut_as_claude_code_2_1_330_does() {
        let raw: Vec<String> = (1..=250)
            .map(|i| format!("- [Fact {i:03}](f{i:03}.md) \u{2014} line{i:03}x wwwwwwwwww"))
            .collect();
        let loaded = load_index_text(&raw.join("\n"));
        assert_eq!(
            loaded.warning.as_deref(),
            Some(
                "> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was loaded: 50 \
                 of 250 lines were cut off, starting at line 201 (\"- [Fact 201](f201.md) \u{2014} \
                 line201x wwwwwwwwww\"). Keep index entries to one line under ~200 chars; move \
                 detail into topic files."
            )
        );
        // A blank first cut line is not quoted.
        let blank = format!("{}\n\n{}", raw[..200].join("\n"), raw[200..].join("\n"));
        let warning = load_index_text(&blank).warning.expect("cut");
        assert!(
            warning.contains("51 of 251 lines were cut off, starting at line 201. Keep"),
            "{warning}"
        );
    }

    #[test]
    fn a_long_line_is_quoted_to_its_last_word_when_that_keeps_more_than_half() {
        let words =
            "Releases are cut on Thursdays from the main branch after the full suite passes \
                     and the changelog is reviewed";
        assert_eq!(
            shorten_at_word(words, 80),
            "Releases are cut on Thursdays from the main branch after the full suite passes\u{2026}"
        );
        assert_eq!(shorten_at_word("short line", 80), "short line");
        let one_word = "x".repeat(100);
        assert_eq!(
            shorten_at_word(&one_word, 80),
            format!("{}\u{2026}", "x".repeat(79))
        );
        // Never half of a surrogate pair.
        let emoji = "😀".repeat(50);
        assert_eq!(
            shorten_at_word(&emoji, 80),
            format!("{}\u{2026}", "😀".repeat(39))
        );
    }

    #[test]
    fn the_cut_text_is_exactly_what_was_not_loaded() {
        let lines: Vec<String> = (1..=205)
            .map(|n| format!("- [m{n}](m{n}.md) — hook"))
            .collect();
        let loaded = load_index_text(&lines.join("\n"));
        let kept = loaded_part(&loaded);
        assert_eq!(
            format!("{kept}{}", loaded.cut_text),
            lines.join("\n"),
            "loaded part + cut part = the whole stripped index"
        );
        assert!(
            loaded.cut_text.starts_with("\n- [m201]"),
            "{:?}",
            loaded.cut_text
        );
        assert_eq!(load_index_text("- [a](a.md)").cut_text, "", "nothing cut");
    }

    #[test]
    fn a_hard_cut_never_splits_a_surrogate_pair() {
        let raw = format!("{}{}", "x".repeat(24_999), "😀".repeat(10));
        let loaded = load_index_text(&raw);
        let kept = loaded_part(&loaded);
        assert_eq!(kept, "x".repeat(24_999));
    }

    #[test]
    fn a_newline_exactly_at_the_limit_is_a_cut_point() {
        // `lastIndexOf('\n', 25000)` includes index 25,000 itself.
        let raw = format!("{}\n{}", "a".repeat(25_000), "b".repeat(10));
        let loaded = load_index_text(&raw);
        let kept = loaded_part(&loaded);
        assert_eq!(
            kept,
            "a".repeat(25_000),
            "newline at index 25,000 is at-or-before the limit"
        );
    }

    #[test]
    fn file_sizes_format_like_claude_code() {
        assert_eq!(format_file_size(25_000), "24.4KB");
        assert_eq!(format_file_size(1024), "1KB");
        assert_eq!(format_file_size(30_720), "30KB");
        assert_eq!(format_file_size(500), "500 bytes");
        // 25,344 / 1024 = 24.75 exactly: toFixed rounds the tie up.
        assert_eq!(format_file_size(25_344), "24.8KB");
        assert_eq!(
            format_file_size(25_856),
            "25.3KB",
            "25.25 rounds up, not to even"
        );
        assert_eq!(format_file_size(3 * 1024 * 1024 / 2), "1.5MB");
    }

    #[test]
    fn parses_the_real_sectioned_stockerly_index() {
        let raw =
            std::fs::read_to_string(real_memory("stockerly").join("MEMORY.md")).expect("fixture");
        let entries = parse_entries(&raw);
        let files: Vec<_> = entries.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "user_adrian.md",
                "project_vision.md",
                "project_decision.md",
                "project_working_method.md",
                "project_expert_panel_v2.md",
                "feedback_brutal_honesty.md",
                "feedback_anti_patterns.md"
            ]
        );
        assert_eq!(entries[0].line, 6);
        assert_eq!(entries[0].title, "Adrian profile");
        assert_eq!(
            entries[0].hook.as_deref(),
            Some("MX investor, MXN+USD portfolio, demands brutal honesty")
        );
        assert_eq!(entries[2].title, "Decision: fix not rewrite");
        let loaded = load_index_text(&raw);
        assert!(loaded.content.starts_with("# Stockerly Memory Index"));
        assert!(!loaded.truncated);
    }

    #[test]
    fn entry_variants() {
        let parse = parse_entry_line;
        assert_eq!(
            parse("* [A](./a.md): hook"),
            Some(("A".into(), "a.md".into(), Some("hook".into())))
        );
        assert_eq!(
            parse("+ [A [v2]](a.md)"),
            Some(("A [v2]".into(), "a.md".into(), None))
        );
        assert_eq!(
            parse("- [A](a.md) – en dash"),
            Some(("A".into(), "a.md".into(), Some("en dash".into())))
        );
        assert_eq!(
            parse("[A](<my file.md>) - x"),
            Some(("A".into(), "my file.md".into(), Some("x".into())))
        );
        assert_eq!(parse("- [docs](https://example.com) — web"), None);
        assert_eq!(parse("-[A](a.md)"), None, "not a list item");
        assert_eq!(parse("> [A](a.md)"), None);
    }

    #[test]
    fn entry_line_stays_under_150_chars() {
        assert_eq!(
            entry_line("Testing", "t.md", "Real DB"),
            "- [Testing](t.md) — Real DB"
        );
        let long = entry_line("Testing", "feedback_testing.md", &"word ".repeat(60));
        assert_eq!(long.chars().count(), MAX_ENTRY_CHARS);
        assert!(long.ends_with('…'));
        assert!(parse_entry_line(&long).is_some());
        let odd = entry_line("A [b]\nc", "a.md", "line\nbreak");
        assert_eq!(odd, "- [A (b) c](a.md) — line break");
        let huge_title = entry_line(&"T".repeat(300), "a.md", "hook");
        assert!(
            huge_title.chars().count() <= MAX_ENTRY_CHARS,
            "{huge_title}"
        );
        assert_eq!(
            parse_entry_line(&huge_title).map(|e| e.1),
            Some("a.md".to_string())
        );
    }

    #[test]
    fn upsert_appends_refreshes_and_keeps_everything_else() {
        let raw = "# Index\n\nIntro line.\n- [A](a.md) — old\n* [B](b.md) — keep\n";
        let refreshed = upsert_entry(raw, "a.md", "- [A](a.md) — new", None);
        assert_eq!(
            refreshed,
            "# Index\n\nIntro line.\n- [A](a.md) — new\n* [B](b.md) — keep\n"
        );
        let added = upsert_entry(raw, "c.md", "- [C](c.md) — c", None);
        assert_eq!(added, format!("{raw}- [C](c.md) — c\n"));
        assert_eq!(
            upsert_entry(raw, "./b.md", "* [B](b.md) — keep", None),
            raw,
            "same line: same bytes"
        );
        assert_eq!(
            upsert_entry("", "a.md", "- [A](a.md)", None),
            "- [A](a.md)\n"
        );
        assert_eq!(
            upsert_entry("x", "a.md", "- [A](a.md)", None),
            "x\n- [A](a.md)\n"
        );
        assert_eq!(
            upsert_entry("x\r\n", "a.md", "- [A](a.md)", None),
            "x\r\n- [A](a.md)\r\n",
            "CRLF files stay CRLF"
        );
    }

    #[test]
    fn upsert_files_a_new_entry_under_its_type_section() {
        let raw =
            "# Idx\n\n## User\n- [U](u.md) — u\n\n## Projects\n- [P](p.md) — p\n\n## Feedback\n";
        let added = upsert_entry(
            raw,
            "p2.md",
            "- [P2](p2.md) — p2",
            Some(MemoryType::Project),
        );
        assert_eq!(
            added,
            "# Idx\n\n## User\n- [U](u.md) — u\n\n## Projects\n- [P](p.md) — p\n- [P2](p2.md) — p2\n\n## Feedback\n"
        );
        let fb = upsert_entry(raw, "f.md", "- [F](f.md)", Some(MemoryType::Feedback));
        assert_eq!(fb, format!("{raw}- [F](f.md)\n"));
        let no_section = upsert_entry(raw, "r.md", "- [R](r.md)", Some(MemoryType::Reference));
        assert_eq!(no_section, format!("{raw}- [R](r.md)\n"));
    }

    #[test]
    fn remove_drops_only_the_entry_lines_of_that_file() {
        let raw = "# I\n- [A](a.md) — a\n- [B](b.md)\n- [A again](./a.md)\nSee [A](a.md) inline.\n";
        let (out, removed) = remove_entry(raw, "a.md");
        assert!(removed);
        assert_eq!(out, "# I\n- [B](b.md)\nSee [A](a.md) inline.\n");
        let (same, removed) = remove_entry(raw, "zzz.md");
        assert!(!removed);
        assert_eq!(same, raw);
    }
}
