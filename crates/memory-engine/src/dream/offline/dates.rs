//! Step 3 of the offline dream: relative dates made absolute (see the module docs of
//! [`super`]), in English as people write it.
//!
//! A phrase is read against the day its words were written: the day the memory's session
//! (`originSessionId`, when its transcript is there) last wrote the file, else the day of the
//! file's mtime. What it meant is written out so that the sentence still reads: "we shipped
//! yesterday" → "we shipped on 2026-11-18", "last Thursday" → "on 2026-11-12 (Thursday)",
//! "next week" → "the week of 2026-11-23", "last month" → "in October 2026", "since last
//! month" → "since October 2026", "yesterday's standup" → "2026-11-18's standup". A capital at
//! the start of the phrase is kept. A day or weekend named with no "last" or "next" ("on
//! Monday", "over the weekend") is read by the tense of its clause: in the past, the last one
//! before the day of writing; ahead ("will", "is due"), the next one; in neither, it is
//! a habit or a schedule ("standup is on Monday", "we never deploy on the weekend") and no date.
//!
//! Left as written, and named in the summary, where English gives no one date: "the other day",
//! "a few days ago", "last Friday" written on a Saturday (yesterday, or the Friday of last
//! week?), "next Tuesday" written on a Monday (tomorrow, or a week later?), "next weekend" on a
//! weekday, "on Wednesday" written on a Wednesday and "over the weekend" written on one (today
//! or a week away), "in 3 days" with nothing saying it is ahead ("fixed in 3 days" is a
//! duration), and any phrase inside a quotation (the words as said). Spans are not dates and
//! are not touched: "the last week", "every next month". Never rewritten: frontmatter other
//! than `description`, code spans and fences, URLs, link targets, HTML tags.
//!
//! The rewrite is idempotent: nothing it writes reads as a relative date again.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, TimeZone, Utc, Weekday};
use regex::{Captures, Regex};

use super::index::{rewrite_lines, LineEdit};
use super::markdown::{body_start, closes_fence, fence_marker};
use super::{names, plural, Planner};
use crate::error::Result;
use crate::index;
use crate::transcript::session_writes;

/// The day a file's words were written, and how that is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WrittenOn {
    pub date: NaiveDate,
    /// From its session's transcript (else from the file's mtime).
    pub by_session: bool,
}

impl WrittenOn {
    fn describe(self) -> String {
        if self.by_session {
            format!("the day its session wrote it, {}", self.date)
        } else {
            format!("the file's date {}", self.date)
        }
    }
}

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 3: every live topic file's body and description, and every index line (dated from
    /// the file it links to: an index line is written with its file).
    pub(super) fn make_dates_absolute(&mut self) -> Result<()> {
        let mut dated = Vec::new();
        let mut left: Vec<String> = Vec::new();
        for i in self.live_memories() {
            let rel = self.files[i].rel.clone();
            let Some(text) = self.set.read(&rel)? else {
                continue;
            };
            // A block that opens and never closes: frontmatter and body cannot be told apart.
            let Some(start) = body_start(&text) else {
                continue;
            };
            // Cheap test first: most files hold no relative date, and dating one may read a
            // transcript.
            if !RELATIVE_DATE.is_match(&text) {
                continue;
            }
            let when = self.written_on(i);
            let mut found = DateRewrite::default();
            let mut updated = text.clone();
            if let Some(value) = description_value(&text, start) {
                let rewrite = rewrite_relative_dates(&text[value.clone()], 0, when.date);
                updated.replace_range(value, &rewrite.text);
                found.absorb(rewrite);
            }
            let body_from = start + updated.len() - text.len();
            let rewrite = rewrite_relative_dates(&updated, body_from, when.date);
            updated = rewrite.text.clone();
            found.absorb(rewrite);
            left.extend(
                found
                    .left
                    .iter()
                    .map(|(phrase, why)| format!("{rel} \"{phrase}\" ({why})")),
            );
            if found.replaced.is_empty() {
                continue;
            }
            let reason = format!(
                "relative dates made absolute from {}: {}",
                when.describe(),
                found.pairs()
            );
            self.set.stage_write(&rel, updated, &reason)?;
            self.protect(i);
            dated.push(rel);
        }
        let listings: Vec<String> = self
            .indexes
            .iter()
            .flat_map(|index_file| self.listing_files(index_file))
            .collect();
        for index_file in listings {
            if let Some(rel) = self.date_index_lines(&index_file, &mut left)? {
                dated.push(rel);
            }
        }
        if !dated.is_empty() {
            self.notes.push(format!(
                "relative dates made absolute in {} {} ({})",
                dated.len(),
                plural(dated.len(), "file", "files"),
                names(&dated)
            ));
        }
        if !left.is_empty() {
            let shown = left.len().min(12);
            let more = match left.len() - shown {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            self.notes.push(format!(
                "relative dates left as written, no one date to give them: {}{more}",
                left[..shown].join(", ")
            ));
        }
        Ok(())
    }

    /// The relative dates of `index_file`'s entry lines, each made absolute from the day the
    /// file it links to was written, and of its other lines (notes written into the index)
    /// from the index's own mtime; the index's name when it changed.
    fn date_index_lines(
        &mut self,
        index_file: &str,
        left: &mut Vec<String>,
    ) -> Result<Option<String>> {
        let Some(raw) = self.set.read(index_file)? else {
            return Ok(None);
        };
        if !RELATIVE_DATE.is_match(&raw) {
            return Ok(None);
        }
        let dir = index::parent_of(index_file).to_owned();
        let live: BTreeMap<String, usize> = self
            .live()
            .into_iter()
            .map(|i| (self.files[i].rel.clone(), i))
            .collect();
        let mut dates = BTreeMap::new();
        let mut entry_lines = BTreeSet::new();
        for entry in index::parse_entries(&raw) {
            entry_lines.insert(entry.line);
            if let Some(&i) = live.get(&index::join_rel(&dir, &entry.file)) {
                dates.insert(entry.line, self.written_on(i).date);
            }
        }
        let own_date = std::fs::metadata(self.root.join(index_file))
            .and_then(|m| m.modified())
            .ok()
            .map(|mtime| self.date_in_zone(mtime));
        let skip = raw[..body_start(&raw).unwrap_or(0)].lines().count();
        let mut found = DateRewrite::default();
        let updated = rewrite_lines(&raw, |number, line| {
            let date = match dates.get(&number) {
                Some(&date) => date,
                None if number > skip && !entry_lines.contains(&number) => match own_date {
                    Some(date) => date,
                    None => return LineEdit::Keep,
                },
                None => return LineEdit::Keep,
            };
            let rewrite = rewrite_relative_dates(line, 0, date);
            let new = rewrite.text.clone();
            found.absorb(rewrite);
            if new == line {
                LineEdit::Keep
            } else {
                LineEdit::Replace(new)
            }
        });
        left.extend(
            found
                .left
                .iter()
                .map(|(phrase, why)| format!("{index_file} \"{phrase}\" ({why})")),
        );
        if updated == raw {
            return Ok(None);
        }
        let reason = format!(
            "relative dates in index lines made absolute from the day each linked file was written: {}",
            found.pairs()
        );
        self.set.stage_write(index_file, updated, &reason)?;
        Ok(Some(index_file.to_owned()))
    }

    /// The day file `i`'s words were written, in the dream's time zone: when its session last
    /// wrote it (the transcript named by `originSessionId`; the session's last activity when no
    /// write of it is found), else its mtime. A future time (clock skew) counts as now.
    pub(super) fn written_on(&mut self, i: usize) -> WrittenOn {
        let by_session = self.session_time(i);
        let time = by_session.unwrap_or_else(|| DateTime::<Utc>::from(self.files[i].mtime));
        let time = time.min(DateTime::<Utc>::from(self.now));
        WrittenOn {
            date: time.with_timezone(self.zone).date_naive(),
            by_session: by_session.is_some(),
        }
    }

    /// The day of `time` in the dream's time zone; a future time (clock skew) counts as now.
    fn date_in_zone(&self, time: std::time::SystemTime) -> NaiveDate {
        let time = DateTime::<Utc>::from(time.min(self.now));
        time.with_timezone(self.zone).date_naive()
    }

    /// When the session named in file `i`'s frontmatter wrote it, if its transcript says.
    fn session_time(&mut self, i: usize) -> Option<DateTime<Utc>> {
        let session = self.files[i].origin_session.clone()?;
        let transcripts = self.transcripts.clone()?;
        if !self.sessions.contains_key(&session) {
            // Every file of the session at once: one pass over the transcript.
            let wanted: Vec<String> = self
                .files
                .iter()
                .filter(|f| f.origin_session.as_deref() == Some(session.as_str()))
                .flat_map(|f| self.absolute_paths(&f.rel))
                .collect();
            let path = transcripts.join(format!("{session}.jsonl"));
            let writes = path
                .is_file()
                .then(|| session_writes(&path, &wanted).ok())
                .flatten();
            self.sessions.insert(session.clone(), writes);
        }
        let writes = self.sessions.get(&session)?.as_ref()?;
        self.absolute_paths(&self.files[i].rel)
            .iter()
            .find_map(|p| writes.last_write.get(p).copied())
            .or(writes.last_activity)
    }

    /// `rel` as a tool names it: under the dir as given, and under its real path.
    fn absolute_paths(&self, rel: &str) -> Vec<String> {
        let mut paths = vec![self.root.join(rel)];
        if let Ok(real) = std::fs::canonicalize(self.root) {
            paths.push(real.join(rel));
        }
        let mut paths: Vec<String> = paths
            .into_iter()
            .map(|p: PathBuf| p.to_string_lossy().into_owned())
            .collect();
        paths.dedup();
        paths
    }
}

/// What one text's rewrite did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct DateRewrite {
    pub text: String,
    /// `(phrase, what replaced it)`, in order.
    pub replaced: Vec<(String, String)>,
    /// `(phrase, why it was left as written)`, in order.
    pub left: Vec<(String, &'static str)>,
}

impl DateRewrite {
    fn absorb(&mut self, other: DateRewrite) {
        self.replaced.extend(other.replaced);
        self.left.extend(other.left);
    }

    /// `phrase → replacement` pairs, each once, for a reason.
    fn pairs(&self) -> String {
        let mut pairs: Vec<String> = Vec::new();
        for (phrase, absolute) in &self.replaced {
            let pair = format!("{} → {absolute}", phrase.to_lowercase());
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
        pairs.join(", ")
    }
}

const NUMBER: &str = r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?couple(?:\s+of)?";
const VAGUE: &str = r"a\s+few|few|several|some|many|a\s+number\s+of";
const UNIT: &str = r"(?:day|week|fortnight|month|year)s?";
const WEEKDAY: &str = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday";

/// Every relative date phrase this step knows, case-insensitively, on word boundaries; longer
/// forms first where two start at the same word. The groups say which form matched.
static RELATIVE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = format!(
        r"(?ix)\b(?:
        (?P<day_before>the\s+day\s+before\s+yesterday)
        | (?P<day_after>the\s+day\s+after\s+tomorrow)
        | the\s+(?P<before_last>week|month|year)\s+before\s+last
        | the\s+(?P<after_next>week|month|year)\s+after\s+next
        | (?P<edge>earlier|later)\s+(?:(?P<edge_today>today)|this\s+(?P<edge_span>week|month|year))
        | (?P<part_day>yesterday|today|tomorrow)\s+(?P<part>morning|afternoon|evening|night)
        | (?P<past_weekend>(?:this|the)\s+past\s+weekend)
        | (?P<rel>last|next|this)\s+(?P<target>{WEEKDAY}|weekend|week|month|quarter|year)
        | (?P<the_weekend>the\s+weekend)
        | on\s+(?P<bare_weekday>{WEEKDAY})
        | (?P<ago_n>{NUMBER})\s+(?P<ago_unit>{UNIT})\s+ago
        | (?P<ahead_n>{NUMBER})\s+(?P<ahead_unit>{UNIT})\s+from\s+(?:now|today)
        | (?P<vague>(?:{VAGUE})\s+{UNIT}\s+ago|in\s+(?:{VAGUE})\s+{UNIT}|the\s+other\s+day)
        | in\s+(?P<in_n>{NUMBER})\s+(?P<in_unit>{UNIT})(?:['’]s?\s+time)?
        | (?P<word>today|tonight|yesterday|tomorrow)
        | this\s+(?P<this_part>morning|afternoon|evening)
        | (?P<last_night>last\s+night)
        )\b"
    );
    Regex::new(&pattern).expect("a valid regex")
});

/// Words before a phrase that make it a span, not a date ("the last week", "every next
/// month"): left alone, and not named.
const SPAN_WORDS: &[&str] = &["the", "a", "an", "every", "each", "any", "that"];
/// Words before a phrase that take the date as a noun: "since last month" → "since October
/// 2026", not "since in October 2026".
const PREPOSITIONS: &[&str] = &[
    "on",
    "in",
    "at",
    "since",
    "until",
    "till",
    "til",
    "by",
    "before",
    "after",
    "from",
    "to",
    "through",
    "thru",
    "during",
    "of",
    "for",
    "as",
    "between",
    "around",
    "about",
    "than",
    "per",
    "within",
    "over",
    "under",
    "starting",
    "effective",
    "circa",
];
/// Words after a phrase that make it the subject: "Yesterday was rough" → "2026-11-18 was
/// rough".
const COPULAS: &[&str] = &[
    "is", "was", "were", "are", "will", "would", "has", "had", "seems", "seemed", "looks",
    "looked", "became", "becomes", "remains", "remained", "felt", "feels",
];

/// A sentence that puts "in N days" ahead: an appointment, not a duration.
static AHEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:will|shall|going\s+to|gonna|due|scheduled|planned|plan\s+to|expires?|expiring|starts?|starting|begins?|beginning|ends?|ending|opens?|closes?|launch(?:es)?|ships?|lands?|goes\s+live|kicks?\s+off|set\s+to|deadline|from\s+now)\b|['’]ll\b",
    )
    .expect("a valid regex")
});
/// A sentence that makes "in N days" a duration.
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:took|take|takes|taking|lasted|lasts|finished|completed|done|built|wrote|written|fixed|migrated|every|each|per)\b",
    )
    .expect("a valid regex")
});

/// What a phrase means, written on a given day.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Meaning {
    /// A day; `weekday` when the phrase named one ("last Thursday"), so the date says it too.
    Day {
        date: NaiveDate,
        weekday: bool,
    },
    PartOfDay {
        date: NaiveDate,
        part: String,
    },
    /// The week starting on this Monday.
    Week(NaiveDate),
    /// The weekend starting on this Saturday.
    Weekend(NaiveDate),
    /// The month starting on this day.
    Month(NaiveDate),
    Quarter {
        year: i32,
        quarter: u32,
    },
    Year(i32),
    /// Earlier or later within a day, week, month or year ("earlier this week").
    Within {
        edge: String,
        span: Box<Meaning>,
    },
}

/// How the sentence uses the phrase, which decides the words around the date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// "we shipped yesterday" → "on 2026-11-18"; "last month" → "in October 2026".
    Adverb,
    /// After a preposition, before a colon or a verb like "was", or alone on its line.
    Noun,
    /// Before `'s`.
    Possessive,
}

/// `text` with each relative date phrase at or after byte `from` replaced by what it meant on
/// `date` (see the module docs).
pub(super) fn rewrite_relative_dates(text: &str, from: usize, date: NaiveDate) -> DateRewrite {
    let untouchable = untouchable_ranges(text, from);
    let quotations = quotation_ranges(text);
    let overlaps = |ranges: &[Range<usize>], range: &Range<usize>| {
        ranges
            .iter()
            .any(|r| r.start < range.end && range.start < r.end)
    };
    let mut rewrite = DateRewrite {
        text: String::with_capacity(text.len() + 32),
        ..DateRewrite::default()
    };
    let mut last = 0;
    for caps in RELATIVE_DATE.captures_iter(text) {
        let Some(phrase) = caps.get(0) else {
            continue;
        };
        let range = phrase.range();
        if overlaps(&untouchable, &range) {
            continue;
        }
        let Some(role) = role_of(text, &range) else {
            continue;
        };
        // "the weekend of 2026-11-21" is what this step writes, not a phrase to read again.
        let written_out =
            caps.name("the_weekend").is_some() && ABSOLUTE_AFTER.is_match(&text[range.end..]);
        if written_out {
            continue;
        }
        let meaning = if overlaps(&quotations, &range) {
            Err("inside a quotation: the words as said")
        } else if is_tensed(&caps) {
            match tensed_meaning(&caps, date, tense_of(&clause_around(text, &range))) {
                Some(meaning) => meaning,
                // Neither past nor ahead: a schedule ("standup is on Monday"), not a date.
                None => continue,
            }
        } else {
            meaning_of(&caps, date, || sentence_around(text, &range))
        };
        let meaning = match meaning {
            Ok(meaning) => meaning,
            Err(why) => {
                rewrite.left.push((one_line(phrase.as_str()), why));
                continue;
            }
        };
        let mut absolute = render(&meaning, role);
        if phrase.as_str().starts_with(char::is_uppercase) {
            absolute = capitalized(&absolute);
        }
        rewrite.text.push_str(&text[last..range.start]);
        rewrite.text.push_str(&absolute);
        last = range.end;
        rewrite.replaced.push((one_line(phrase.as_str()), absolute));
    }
    rewrite.text.push_str(&text[last..]);
    rewrite
}

/// What the matched phrase meant on `date`, or why it has no one meaning. `sentence` gives the
/// sentence around it, for "in N days".
fn meaning_of(
    caps: &Captures<'_>,
    date: NaiveDate,
    sentence: impl FnOnce() -> String,
) -> std::result::Result<Meaning, &'static str> {
    let group = |name: &str| caps.name(name).map(|m| m.as_str().to_lowercase());
    let day = |date: NaiveDate| Meaning::Day {
        date,
        weekday: false,
    };
    let shift = |days: i64| shift_days(date, days).ok_or("out of the calendar");
    if caps.name("day_before").is_some() {
        return Ok(day(shift(-2)?));
    }
    if caps.name("day_after").is_some() {
        return Ok(day(shift(2)?));
    }
    if let Some(unit) = group("before_last") {
        return span_from(date, &unit, -2);
    }
    if let Some(unit) = group("after_next") {
        return span_from(date, &unit, 2);
    }
    if let Some(edge) = group("edge") {
        let span = match group("edge_span") {
            Some(unit) => span_from(date, &unit, 0)?,
            None => day(date),
        };
        return Ok(Meaning::Within {
            edge,
            span: Box::new(span),
        });
    }
    if let (Some(which), Some(part)) = (group("part_day"), group("part")) {
        let offset = match which.as_str() {
            "yesterday" => -1,
            "tomorrow" => 1,
            _ => 0,
        };
        return Ok(Meaning::PartOfDay {
            date: shift(offset)?,
            part,
        });
    }
    if let (Some(rel), Some(target)) = (group("rel"), group("target")) {
        return relative_to(date, &rel, &target);
    }
    if let (Some(n), Some(unit)) = (group("ago_n"), group("ago_unit")) {
        return counted(date, &n, &unit, -1);
    }
    if let (Some(n), Some(unit)) = (group("ahead_n"), group("ahead_unit")) {
        return counted(date, &n, &unit, 1);
    }
    if let Some(vague) = group("vague") {
        return Err(if vague.contains("other") {
            "no one day"
        } else {
            "not one number"
        });
    }
    if let (Some(n), Some(unit)) = (group("in_n"), group("in_unit")) {
        let sentence = sentence();
        if DURATION.is_match(&sentence) || !AHEAD.is_match(&sentence) {
            return Err("a date or a duration");
        }
        return counted(date, &n, &unit, 1);
    }
    if let Some(word) = group("word") {
        return Ok(match word.as_str() {
            "today" => day(date),
            "tonight" => Meaning::PartOfDay {
                date,
                part: "night".to_owned(),
            },
            "yesterday" => day(shift(-1)?),
            _ => day(shift(1)?),
        });
    }
    if let Some(part) = group("this_part") {
        return Ok(Meaning::PartOfDay { date, part });
    }
    if caps.name("last_night").is_some() {
        return Ok(Meaning::PartOfDay {
            date: shift(-1)?,
            part: "night".to_owned(),
        });
    }
    Err("not a date")
}

/// Whether the phrase names a day or weekend with no "last" or "next", so that only the
/// clause's tense says which: "on Monday", "over the weekend".
fn is_tensed(caps: &Captures<'_>) -> bool {
    ["past_weekend", "the_weekend", "bare_weekday"]
        .iter()
        .any(|name| caps.name(name).is_some())
}

/// Which way a clause looks from the day it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tense {
    Past,
    Ahead,
    /// Present or none: a habit or a schedule.
    Neither,
}

/// The tense of a clause: ahead when it says so ("will", "going to", "is due", "scheduled
/// for"), past when it has a verb in the past ("we migrated", "it broke", "was down"; not a
/// participle after "is" or a determiner: "the office is closed on Monday", "the automated
/// report goes out on Monday"), else neither.
fn tense_of(clause: &str) -> Tense {
    const IRREGULAR: &[&str] = &[
        "was", "were", "did", "didn't", "had", "went", "got", "came", "ran", "broke", "took",
        "made", "saw", "found", "wrote", "sent", "left", "began", "spent", "lost", "fell", "threw",
        "gave", "told", "said",
    ];
    const NOT_PAST: &[&str] = &[
        "need", "feed", "seed", "speed", "embed", "proceed", "exceed", "succeed", "indeed",
        "hundred", "red", "bed", "shed",
    ];
    // Only words that put it ahead: "starts on Monday" in the present is as often a schedule
    // ("the sprint starts on Monday") as the coming one.
    static FUTURE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(?:will|shall|going\s+to|gonna|plan(?:ned|ning)?\s+to|due|set\s+to|scheduled\s+for|expected\s+to|about\s+to)\b|['’]ll\b",
        )
        .expect("a valid regex")
    });
    if FUTURE.is_match(clause) {
        return Tense::Ahead;
    }
    let words: Vec<String> = clause
        .split(|c: char| !c.is_alphabetic() && c != '\'' && c != '’')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect();
    // After "is" a participle is a present state ("is closed on Monday"); after a determiner or
    // a preposition it describes a noun ("the automated report", "with shared runners").
    const NOT_A_VERB_AFTER: &[&str] = &[
        "is", "are", "be", "being", "the", "a", "an", "our", "my", "your", "their", "its", "his",
        "her", "this", "that", "these", "those", "some", "any", "every", "each", "no", "with",
        "of", "for", "by", "in", "on", "at", "to", "from", "and", "or",
    ];
    let past = words.iter().enumerate().any(|(i, word)| {
        let adjective = i
            .checked_sub(1)
            .is_some_and(|before| NOT_A_VERB_AFTER.contains(&words[before].as_str()));
        IRREGULAR.contains(&word.as_str())
            || (word.len() > 3
                && word.ends_with("ed")
                && !NOT_PAST.contains(&word.as_str())
                && !adjective)
    });
    if past {
        Tense::Past
    } else {
        Tense::Neither
    }
}

/// "on Monday", "over the weekend", "this past weekend" read by the tense of their clause: in
/// the past, the last one before the day of writing; ahead, the next one after it. Written on
/// that weekday (or on a weekend), the same words name today or a week away, so they are left
/// and named. `None`: neither tense, so no date at all.
fn tensed_meaning(
    caps: &Captures<'_>,
    date: NaiveDate,
    tense: Tense,
) -> Option<std::result::Result<Meaning, &'static str>> {
    let tense = if caps.name("past_weekend").is_some() {
        Tense::Past
    } else {
        tense
    };
    let step: i64 = match tense {
        Tense::Past => -1,
        Tense::Ahead => 1,
        Tense::Neither => return None,
    };
    let today = i64::from(date.weekday().num_days_from_monday());
    let out = "out of the calendar";
    if let Some(name) = caps.name("bare_weekday") {
        let weekday = weekday_named(&name.as_str().to_lowercase())?;
        let offset = i64::from(weekday.num_days_from_monday());
        if offset == today {
            return Some(Err("today or a week away"));
        }
        let days = if step < 0 {
            -((today - offset).rem_euclid(7))
        } else {
            (offset - today).rem_euclid(7)
        };
        return Some(
            shift_days(date, days)
                .map(|date| Meaning::Day {
                    date,
                    weekday: true,
                })
                .ok_or(out),
        );
    }
    if today >= 5 {
        return Some(Err("this weekend or another"));
    }
    let monday = monday_of(date);
    Some(
        shift_days(monday, if step < 0 { -2 } else { 5 })
            .map(Meaning::Weekend)
            .ok_or(out),
    )
}

/// "last/next/this" + a weekday, weekend, week, month, quarter or year.
fn relative_to(
    date: NaiveDate,
    rel: &str,
    target: &str,
) -> std::result::Result<Meaning, &'static str> {
    let step = match rel {
        "last" => -1,
        "next" => 1,
        _ => 0,
    };
    let monday = monday_of(date);
    if let Some(weekday) = weekday_named(target) {
        let offset = i64::from(weekday.num_days_from_monday());
        let today = i64::from(date.weekday().num_days_from_monday());
        // Two readings: the nearest such day in that direction, and that day of the previous,
        // this or the next calendar week. Where they differ, English does not say which.
        let calendar = shift_days(monday, 7 * step + offset).ok_or("out of the calendar")?;
        let nearest = match step {
            -1 => shift_days(date, -((today - offset + 6).rem_euclid(7) + 1)),
            1 => shift_days(date, (offset - today + 6).rem_euclid(7) + 1),
            _ => Some(calendar).filter(|day| *day >= date),
        };
        return match nearest {
            Some(day) if day == calendar => Ok(Meaning::Day {
                date: day,
                weekday: true,
            }),
            _ => Err(match step {
                -1 => "this week's or last week's",
                1 => "this week's or next week's",
                _ => "earlier this week or the coming one",
            }),
        };
    }
    if target == "weekend" {
        let on_weekend = date.weekday().num_days_from_monday() >= 5;
        return match step {
            -1 => shift_days(monday, -2),
            0 => shift_days(monday, 5),
            _ if on_weekend => shift_days(monday, 12),
            _ => return Err("the coming weekend or the one after"),
        }
        .map(Meaning::Weekend)
        .ok_or("out of the calendar");
    }
    span_from(date, target, step)
}

/// The week, month, quarter or year `step` of them away from the one holding `date`.
fn span_from(date: NaiveDate, unit: &str, step: i64) -> std::result::Result<Meaning, &'static str> {
    let out = "out of the calendar";
    Ok(match unit {
        "week" => Meaning::Week(shift_days(monday_of(date), 7 * step).ok_or(out)?),
        "month" => Meaning::Month(shift_months(first_of_month(date), step).ok_or(out)?),
        "quarter" => {
            let first = NaiveDate::from_ymd_opt(date.year(), (date.month() - 1) / 3 * 3 + 1, 1)
                .ok_or(out)?;
            let start = shift_months(first, 3 * step).ok_or(out)?;
            Meaning::Quarter {
                year: start.year(),
                quarter: (start.month() - 1) / 3 + 1,
            }
        }
        _ => Meaning::Year(date.year() + i32::try_from(step).map_err(|_| out)?),
    })
}

/// "N units ago" (`sign` -1) or "in N units" / "N units from now" (`sign` 1).
fn counted(
    date: NaiveDate,
    n: &str,
    unit: &str,
    sign: i64,
) -> std::result::Result<Meaning, &'static str> {
    let out = "out of the calendar";
    let n = count(n).ok_or("not one number")?;
    let unit = unit.trim_end_matches('s');
    let (n, unit) = match unit {
        "fortnight" => (2 * n, "week"),
        other => (n, other),
    };
    let by = sign * n;
    Ok(match unit {
        "day" => Meaning::Day {
            date: shift_days(date, by).ok_or(out)?,
            weekday: false,
        },
        "week" => Meaning::Week(monday_of(shift_days(date, 7 * by).ok_or(out)?)),
        "month" => Meaning::Month(shift_months(first_of_month(date), by).ok_or(out)?),
        _ => Meaning::Year(date.year() + i32::try_from(by).map_err(|_| out)?),
    })
}

fn count(word: &str) -> Option<i64> {
    let word = word.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match word.as_str() {
        "a" | "an" | "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        w if w.contains("couple") => 2,
        digits => digits.parse().ok()?,
    })
}

/// The words that say `meaning` where the phrase stood.
fn render(meaning: &Meaning, role: Role) -> String {
    let month = |first: &NaiveDate| first.format("%B %Y").to_string();
    let (noun, adverb) = match meaning {
        Meaning::Day { date, weekday } => {
            if role == Role::Possessive || !weekday {
                (date.to_string(), format!("on {date}"))
            } else {
                let named = format!("{date} ({})", weekday_name(date.weekday()));
                (named.clone(), format!("on {named}"))
            }
        }
        Meaning::PartOfDay { date, part } => {
            if role == Role::Possessive {
                (format!("{date} {part}"), String::new())
            } else {
                let noun = format!("the {part} of {date}");
                (noun.clone(), format!("on {noun}"))
            }
        }
        Meaning::Week(monday) => (
            format!("the week of {monday}"),
            format!("the week of {monday}"),
        ),
        Meaning::Weekend(saturday) => (
            format!("the weekend of {saturday}"),
            format!("the weekend of {saturday}"),
        ),
        Meaning::Month(first) => (month(first), format!("in {}", month(first))),
        Meaning::Quarter { year, quarter } => (
            format!("Q{quarter} {year}"),
            format!("in Q{quarter} {year}"),
        ),
        Meaning::Year(year) => (year.to_string(), format!("in {year}")),
        Meaning::Within { edge, span } => {
            let within = match span.as_ref() {
                Meaning::Day { date, .. } => format!("{edge} on {date}"),
                Meaning::Week(monday) => format!("{edge} in the week of {monday}"),
                Meaning::Month(first) => format!("{edge} in {}", month(first)),
                other => format!("{edge} in {}", render(other, Role::Noun)),
            };
            (within.clone(), within)
        }
    };
    match role {
        Role::Adverb => adverb,
        Role::Noun | Role::Possessive => noun,
    }
}

/// How the sentence around `range` uses the phrase; `None` when it is a span, not a date.
fn role_of(text: &str, range: &Range<usize>) -> Option<Role> {
    let line_start = text[..range.start].rfind('\n').map_or(0, |at| at + 1);
    let line_end = text[range.end..]
        .find('\n')
        .map_or(text.len(), |at| range.end + at);
    let before = text[line_start..range.start].trim_end_matches([' ', '\t']);
    let previous: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphabetic())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<String>()
        .to_lowercase();
    let previous_is_word = before.len() >= previous.len() && !previous.is_empty();
    if previous_is_word && SPAN_WORDS.contains(&previous.as_str()) {
        return None;
    }
    let after = &text[range.end..line_end];
    if after.starts_with("'s") || after.starts_with("’s") {
        return Some(Role::Possessive);
    }
    if previous_is_word && PREPOSITIONS.contains(&previous.as_str()) {
        return Some(Role::Noun);
    }
    let next = after.trim_start_matches([' ', '\t']);
    let next_word: String = next
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    if next.starts_with([':', '—', '–']) || COPULAS.contains(&next_word.as_str()) {
        return Some(Role::Noun);
    }
    // Alone on its line (a heading, a list item, a label): a name, not an adverb.
    let marker_free = before.trim_start_matches(|c: char| {
        c.is_whitespace()
            || matches!(c, '#' | '>' | '-' | '*' | '+' | '.' | ')')
            || c.is_ascii_digit()
    });
    let rest = after.trim_end_matches(|c: char| c.is_whitespace() || ".,;!?*_".contains(c));
    if marker_free.is_empty() && rest.is_empty() {
        return Some(Role::Noun);
    }
    Some(Role::Adverb)
}

/// The sentence holding `range` (on its line), for the words that tell a date from a duration.
fn sentence_around(text: &str, range: &Range<usize>) -> String {
    text[sentence_range(text, range)].to_owned()
}

/// Where the sentence holding `range` (on its line) starts and ends in `text`.
fn sentence_range(text: &str, range: &Range<usize>) -> Range<usize> {
    let is_end = |c: char| matches!(c, '.' | '!' | '?' | '\n');
    let start = text[..range.start].rfind(is_end).map_or(0, |at| at + 1);
    let end = text[range.end..]
        .find(is_end)
        .map_or(text.len(), |at| range.end + at);
    start..end
}

/// The clause around `range`: its sentence cut at the joins between clauses (",", ";", " and ",
/// " but "), so "we migrated on Monday and will verify on Friday" reads each day by its own
/// verb.
fn clause_around(text: &str, range: &Range<usize>) -> String {
    static JOINS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)[,;:]\s|\s(?:and|but|so|then|while|whereas)\s").expect("a valid regex")
    });
    let sentence_at = sentence_range(text, range);
    let sentence = &text[sentence_at.clone()];
    let at = range.start - sentence_at.start;
    let from = JOINS
        .find_iter(&sentence[..at])
        .last()
        .map_or(0, |join| join.end());
    let to = JOINS
        .find_at(sentence, at)
        .map_or(sentence.len(), |join| join.start());
    sentence[from..to.max(from)].to_owned()
}

/// After "the weekend": " of 2026-11-21", already a date.
static ABSOLUTE_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+of\s+\d{4}-\d{2}-\d{2}").expect("a valid regex"));

/// Text between double quotes (`"…"` on one line, `“…”`): someone's words, kept as said.
fn quotation_ranges(text: &str) -> Vec<Range<usize>> {
    static QUOTATION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""[^"\n]*"|“[^”]*”"#).expect("a valid regex"));
    QUOTATION.find_iter(text).map(|m| m.range()).collect()
}

/// The byte range of the `description:` value in the frontmatter of `text` (which ends at
/// `body_start`), inside its quotes; `None` when there is none or it is not on one line.
fn description_value(text: &str, body_start: usize) -> Option<Range<usize>> {
    let mut offset = 0;
    for line in text[..body_start].split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(rest) = content.strip_prefix("description:") {
            let value = rest.trim();
            if value.is_empty() || value.starts_with(['|', '>']) {
                return None;
            }
            let value_start =
                offset + "description:".len() + (rest.len() - rest.trim_start().len());
            let mut range = value_start..value_start + value.len();
            let quoted = value.len() >= 2
                && ((value.starts_with('"') && value.ends_with('"'))
                    || (value.starts_with('\'') && value.ends_with('\'')));
            if quoted {
                range = range.start + 1..range.end - 1;
            }
            return Some(range);
        }
        offset += line.len();
    }
    None
}

fn shift_days(date: NaiveDate, days: i64) -> Option<NaiveDate> {
    let by = Days::new(days.unsigned_abs());
    if days < 0 {
        date.checked_sub_days(by)
    } else {
        date.checked_add_days(by)
    }
}

fn shift_months(date: NaiveDate, months: i64) -> Option<NaiveDate> {
    let by = Months::new(u32::try_from(months.unsigned_abs()).ok()?);
    if months < 0 {
        date.checked_sub_months(by)
    } else {
        date.checked_add_months(by)
    }
}

fn monday_of(date: NaiveDate) -> NaiveDate {
    date - chrono::Duration::days(i64::from(date.weekday().num_days_from_monday()))
}

fn first_of_month(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

fn weekday_named(name: &str) -> Option<Weekday> {
    name.parse().ok().filter(|_| name.len() > 3)
}

fn weekday_name(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

fn one_line(phrase: &str) -> String {
    phrase.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What relative dates are never rewritten in besides code: URLs, link targets, autolinks and
/// HTML tags.
static URL_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s<>]*|\bwww\.[^\s<>]*|\]\([^)]*\)|<[^<>\s][^<>]*>")
        .expect("a valid regex")
});

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
    use chrono::Utc;

    use super::super::tests::{date, memory, plan, write_at};
    use super::super::{plan_offline_dream_with, DreamSources};
    use super::*;
    use crate::testing::fixtures::TempMemoryDir;

    /// Monday 2026-11-23.
    const MONDAY: &str = "2026-11-23";
    /// Monday 2026-11-16, before the fixture clock's now (2026-11-18): a dream dates nothing
    /// after now.
    const EARLIER_MONDAY: &str = "2026-11-16";

    fn rewritten(text: &str, day: &str) -> DateRewrite {
        rewrite_relative_dates(text, 0, date(day))
    }

    #[test]
    fn english_relative_dates_become_the_dates_they_meant() {
        let cases = [
            // Days, read as adverbs, nouns and possessives.
            ("We shipped yesterday.", "We shipped on 2026-11-22."),
            ("Yesterday we shipped.", "On 2026-11-22 we shipped."),
            ("Yesterday was rough.", "2026-11-22 was rough."),
            ("Today: done", "2026-11-23: done"),
            (
                "The freeze starts tomorrow.",
                "The freeze starts on 2026-11-24.",
            ),
            ("TOMORROW", "2026-11-24"),
            (
                "It broke the day before yesterday.",
                "It broke on 2026-11-21.",
            ),
            (
                "We release the day after tomorrow.",
                "We release on 2026-11-25.",
            ),
            ("yesterday's standup", "2026-11-22's standup"),
            ("as of yesterday", "as of 2026-11-22"),
            (
                "3 days ago and a day ago",
                "on 2026-11-20 and on 2026-11-22",
            ),
            (
                "The outage was two  days ago.",
                "The outage was on 2026-11-21.",
            ),
            ("Paid a couple of days ago.", "Paid on 2026-11-21."),
            ("We moved 5 days from now", "We moved on 2026-11-28"),
            // Parts of a day.
            (
                "This morning we deployed.",
                "On the morning of 2026-11-23 we deployed.",
            ),
            ("since last night", "since the night of 2026-11-22"),
            (
                "Paged yesterday evening.",
                "Paged on the evening of 2026-11-22.",
            ),
            ("Deploy tonight.", "Deploy on the night of 2026-11-23."),
            ("this morning's standup", "2026-11-23 morning's standup"),
            ("Fixed earlier today.", "Fixed earlier on 2026-11-23."),
            // Weekdays, where the week says which.
            ("We met last Thursday.", "We met on 2026-11-19 (Thursday)."),
            (
                "Last Thursday's demo went well.",
                "2026-11-19's demo went well.",
            ),
            ("Seen last Sunday.", "Seen on 2026-11-22 (Sunday)."),
            (
                "We deploy next Monday.",
                "We deploy on 2026-11-30 (Monday).",
            ),
            ("Due this Wednesday.", "Due on 2026-11-25 (Wednesday)."),
            // Weeks, weekends, months, quarters, years.
            ("We ship next week.", "We ship the week of 2026-11-30."),
            ("Busy last week.", "Busy the week of 2026-11-16."),
            ("## This week", "## The week of 2026-11-23"),
            (
                "It moved three weeks ago.",
                "It moved the week of 2026-11-02.",
            ),
            ("a fortnight ago", "the week of 2026-11-09"),
            ("the week before last", "the week of 2026-11-09"),
            (
                "Renamed earlier this week.",
                "Renamed earlier in the week of 2026-11-23.",
            ),
            ("Hiking last weekend.", "Hiking the weekend of 2026-11-21."),
            ("It moved last month.", "It moved in October 2026."),
            ("since last month", "since October 2026"),
            ("Last month was quiet.", "October 2026 was quiet."),
            (
                "Pricing changes next month.",
                "Pricing changes in December 2026.",
            ),
            ("Hired two months ago.", "Hired in September 2026."),
            ("the month after next", "January 2027"),
            ("More later this month.", "More later in November 2026."),
            (
                "Revenue doubled last quarter.",
                "Revenue doubled in Q3 2026.",
            ),
            ("We started this year.", "We started in 2026."),
            ("Founded a year ago.", "Founded in 2025."),
            // "in N …" only when the sentence puts it ahead.
            (
                "The cert expires in 10 days.",
                "The cert expires on 2026-12-03.",
            ),
            (
                "The freeze starts in two weeks.",
                "The freeze starts the week of 2026-12-07.",
            ),
            (
                "We'll revisit in a month.",
                "We'll revisit in December 2026.",
            ),
            // Spans, other words, code, links and quotations are not dates to rewrite.
            ("over the last week", "over the last week"),
            ("todays yesterdays days ago", "todays yesterdays days ago"),
            ("`today` ``a ` today``", "`today` ``a ` today``"),
            (
                "see https://x.io/today and [t](today.md)",
                "see https://x.io/today and [t](today.md)",
            ),
            ("```\ntoday\n```\ntoday", "```\ntoday\n```\n2026-11-23"),
            ("~~~~\ntoday\n~~~\ntoday", "~~~~\ntoday\n~~~\ntoday"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(text, expected)| {
                let got = rewritten(text, MONDAY).text;
                (got != *expected).then(|| format!("{text:?} → {got:?}, not {expected:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
        for (text, expected) in cases {
            let first = rewritten(text, MONDAY);
            assert_eq!(first.text, expected, "{text:?}");
            assert!(first.left.is_empty(), "{text:?} left {:?}", first.left);
            let again = rewritten(&first.text, MONDAY);
            assert_eq!(
                (again.text.as_str(), again.replaced.len()),
                (first.text.as_str(), 0),
                "{text:?}: rewriting the result again must change nothing"
            );
        }
    }

    #[test]
    fn a_phrase_english_gives_no_one_date_is_left_and_named() {
        let cases = [
            (
                MONDAY,
                "We talked the other day.",
                "the other day",
                "no one day",
            ),
            (
                MONDAY,
                "It broke a few days ago.",
                "a few days ago",
                "not one number",
            ),
            // Friday after a Monday: this week's (in four days) or next week's?
            (
                MONDAY,
                "The review is next Friday.",
                "next Friday",
                "this week's or next week's",
            ),
            (
                MONDAY,
                "Camping next weekend.",
                "next weekend",
                "the coming weekend or the one after",
            ),
            // Written on a Saturday: yesterday, or the Friday of last week?
            (
                "2026-11-28",
                "Merged last Friday.",
                "last Friday",
                "this week's or last week's",
            ),
            (
                "2026-11-26",
                "Ship this Monday.",
                "this Monday",
                "earlier this week or the coming one",
            ),
            (
                MONDAY,
                "We fixed it in 3 days.",
                "in 3 days",
                "a date or a duration",
            ),
            (
                MONDAY,
                "Look again in 3 days.",
                "in 3 days",
                "a date or a duration",
            ),
            (
                MONDAY,
                "She said \"ship it tomorrow\" and left.",
                "tomorrow",
                "inside a quotation: the words as said",
            ),
        ];
        for (day, text, phrase, why) in cases {
            let rewrite = rewritten(text, day);
            assert_eq!(rewrite.text, text, "{text:?} is left as written");
            assert_eq!(rewrite.left, [(phrase.to_owned(), why)], "{text:?}");
        }
        // On a weekend, "next weekend" is the one after this.
        assert_eq!(
            rewritten("Camping next weekend.", "2026-11-29").text,
            "Camping the weekend of 2026-12-05."
        );
    }

    #[test]
    fn a_day_or_weekend_with_no_last_or_next_is_read_by_its_tense() {
        let wednesday = "2026-11-25";
        let cases = [
            (
                "We migrated the database over the weekend.",
                "We migrated the database over the weekend of 2026-11-21.",
            ),
            (
                "The cluster was down this past weekend.",
                "The cluster was down the weekend of 2026-11-21.",
            ),
            (
                "We'll run the backfill over the weekend.",
                "We'll run the backfill over the weekend of 2026-11-28.",
            ),
            (
                "Deployed the fix on Monday.",
                "Deployed the fix on 2026-11-23 (Monday).",
            ),
            (
                "The freeze will start on Friday.",
                "The freeze will start on 2026-11-27 (Friday).",
            ),
            (
                "We migrated on Monday and will verify on Friday.",
                "We migrated on 2026-11-23 (Monday) and will verify on 2026-11-27 (Friday).",
            ),
        ];
        for (text, expected) in cases {
            let rewrite = rewritten(text, wednesday);
            assert_eq!(rewrite.text, expected, "{text:?}");
            // Idempotent: what it wrote reads as no relative date.
            let again = rewritten(&rewrite.text, wednesday);
            assert_eq!(again.text, expected);
            assert!(
                again.replaced.is_empty() && again.left.is_empty(),
                "{again:?}"
            );
        }
        // Neither past nor ahead: a habit or a schedule, no date, nothing named.
        for text in [
            "Standup is on Monday.",
            "We never deploy on the weekend.",
            "The office is closed on Monday.",
            "The automated report goes out on Monday.",
            "The sprint starts on Monday.",
            "Nightly builds with shared runners pause over the weekend.",
        ] {
            let rewrite = rewritten(text, wednesday);
            assert_eq!(rewrite.text, text);
            assert!(rewrite.left.is_empty(), "{text:?}: {:?}", rewrite.left);
        }
        // The same weekday, or a weekend: today, or a week away?
        let cases = [
            (
                wednesday,
                "Shipped on Wednesday.",
                "on Wednesday",
                "today or a week away",
            ),
            (
                "2026-11-28",
                "We migrated over the weekend.",
                "the weekend",
                "this weekend or another",
            ),
        ];
        for (day, text, phrase, why) in cases {
            let rewrite = rewritten(text, day);
            assert_eq!(rewrite.text, text);
            assert_eq!(rewrite.left, [(phrase.to_owned(), why)], "{text:?}");
        }
    }

    #[test]
    fn frontmatter_other_than_the_description_is_never_rewritten() {
        let file = "---\nname: today\ndescription: \"what happened yesterday\"\ntype: project\n---\nyesterday\n";
        let start = body_start(file).expect("closed");
        assert_eq!(
            rewrite_relative_dates(file, start, date(MONDAY)).text,
            "---\nname: today\ndescription: \"what happened yesterday\"\ntype: project\n---\n2026-11-22\n",
        );
        let value = description_value(file, start).expect("a description");
        assert_eq!(&file[value], "what happened yesterday", "inside its quotes");
        assert_eq!(body_start("---\nname: x\nno end\n"), None);
        assert_eq!(body_start("no frontmatter\n"), Some(0));
    }

    #[test]
    fn a_dream_dates_bodies_descriptions_and_index_lines_from_when_they_were_written() {
        let fx = TempMemoryDir::new("memory");
        write_at(
            &fx,
            "project_move.md",
            &memory(
                "API host",
                "Moved the API to Fly.io last week",
                "project",
                "We moved the API to Fly.io last Thursday; the Heroku app goes next week.\n",
            ),
            EARLIER_MONDAY,
        );
        fx.write(
            "MEMORY.md",
            "- [API host](project_move.md) — moved to Fly.io last week\n",
        );
        let dream = plan(&fx);
        let after = dream
            .changes
            .peek("project_move.md")
            .expect("read")
            .expect("file");
        assert!(
            after.contains("description: Moved the API to Fly.io the week of 2026-11-09\n")
                && after.contains(
                    "We moved the API to Fly.io on 2026-11-12 (Thursday); the Heroku app goes the week of 2026-11-23.\n"
                ),
            "{after}"
        );
        let index = dream
            .changes
            .peek("MEMORY.md")
            .expect("read")
            .expect("index");
        assert_eq!(
            index,
            "- [API host](project_move.md) — moved to Fly.io the week of 2026-11-09\n"
        );
        let reason = &dream
            .changes
            .changes
            .iter()
            .find(|c| c.file == "project_move.md")
            .expect("change")
            .reason;
        assert!(
            reason.starts_with("relative dates made absolute from the file's date 2026-11-16: "),
            "{reason}"
        );
    }

    #[test]
    fn the_session_that_wrote_a_memory_dates_it_when_its_transcript_is_there() {
        let fx = TempMemoryDir::new("memory");
        let session = "3ed04df3-3a97-4f9b-a2a3-a2a120610cb7";
        let text = format!(
            "---\nname: release\ndescription: the release\nmetadata:\n  node_type: memory\n  type: project\n  originSessionId: {session}\n---\n\nWe cut the release yesterday.\n"
        );
        // Copied since: the mtime says 2026-11-16, the session wrote it on 2026-11-10.
        write_at(&fx, "release.md", &text, EARLIER_MONDAY);
        fx.write("MEMORY.md", "- [release](release.md) — the release\n");
        let transcripts = fx.path("").parent().expect("project dir").to_path_buf();
        let wrote = fx.path("release.md");
        let line = format!(
            r#"{{"type":"assistant","timestamp":"2026-11-10T15:00:00.000Z","sessionId":"{session}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"Write","input":{{"file_path":"{}","content":"x"}}}}]}}}}"#,
            wrote.display()
        );
        let later = r#"{"type":"user","timestamp":"2026-11-12T09:00:00.000Z","message":{"role":"user","content":"thanks"}}"#;
        std::fs::write(
            transcripts.join(format!("{session}.jsonl")),
            format!("{line}\n{later}\n"),
        )
        .expect("transcript");

        let dated = |sources: DreamSources<'_>| {
            let dream = plan_offline_dream_with(&fx.dir, &Utc, sources).expect("plan");
            let change = dream
                .changes
                .changes
                .iter()
                .find(|c| c.file == "release.md")
                .expect("a change")
                .clone();
            (change.after.expect("content"), change.reason)
        };
        let (after, reason) = dated(DreamSources {
            transcripts: Some(&transcripts),
            ..DreamSources::default()
        });
        assert!(
            after.ends_with("We cut the release on 2026-11-09.\n"),
            "{after}"
        );
        assert!(
            reason.contains("from the day its session wrote it, 2026-11-10"),
            "{reason}"
        );
        // Without the transcripts, the mtime is all there is.
        let (after, _) = dated(DreamSources::default());
        assert!(
            after.ends_with("We cut the release on 2026-11-15.\n"),
            "{after}"
        );
        // A session that never wrote the file dates it by its last activity.
        std::fs::write(
            transcripts.join(format!("{session}.jsonl")),
            format!("{later}\n"),
        )
        .expect("transcript");
        let (after, _) = dated(DreamSources {
            transcripts: Some(&transcripts),
            ..DreamSources::default()
        });
        assert!(
            after.ends_with("We cut the release on 2026-11-11.\n"),
            "{after}"
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
        assert!(after.ends_with("done on 2026-11-18\n"), "{after}");
    }
}
