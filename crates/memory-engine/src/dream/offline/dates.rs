//! Step 3 of the offline dream: relative dates made absolute (see the module docs of
//! [`super`]).

use std::ops::Range;
use std::sync::LazyLock;

use chrono::{Days, NaiveDate, TimeZone};
use regex::{Captures, Regex};

use super::markdown::{body_start, closes_fence, fence_marker};
use super::{names, plural, Planner};
use crate::error::Result;

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 3.
    pub(super) fn make_dates_absolute(&mut self) -> Result<()> {
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
pub(super) fn absolute_dates(
    text: &str,
    from: usize,
    date: NaiveDate,
) -> (String, Vec<(String, String)>) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{date, memory, plan, write_at};
    use super::*;
    use crate::testing::fixtures::TempMemoryDir;

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
