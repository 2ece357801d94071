//! How old a memory is, in Claude Code's words (`FORMATS.md` §3): whole days since the file's
//! mtime, a `today` / `yesterday` / `N days ago` label, and the caveat shown before a memory that
//! is more than a day old. Also the one ISO-8601 form every timestamp crosses the API in.

use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};

const DAY_MS: u128 = 86_400_000;

/// `floor((now − mtime) / 86400000)`; a file dated in the future is 0 days old (Claude Code clamps
/// the same way, so a clock skew never produces a negative age).
pub fn memory_age_days(mtime: SystemTime, now: SystemTime) -> u64 {
    let elapsed = now.duration_since(mtime).unwrap_or(Duration::ZERO);
    u64::try_from(elapsed.as_millis() / DAY_MS).unwrap_or(u64::MAX)
}

/// `today`, `yesterday`, or `N days ago`.
pub fn age_label(days: u64) -> String {
    match days {
        0 => "today".to_string(),
        1 => "yesterday".to_string(),
        n => format!("{n} days ago"),
    }
}

/// The caveat Claude Code puts before a memory older than one day, or `None`.
pub fn staleness_caveat(days: u64) -> Option<String> {
    (days > 1).then(|| {
        format!(
            "This memory is {days} days old. Memories are point-in-time observations, not live \
             state — claims about code behavior or file:line citations may be outdated. Verify \
             against current code before asserting as fact."
        )
    })
}

/// UTC with milliseconds, as JavaScript's `Date.toISOString()` writes it:
/// `2026-11-22T08:38:52.863Z`.
pub fn iso_time(time: SystemTime) -> String {
    DateTime::<Utc>::from(time).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `#[serde(serialize_with = "crate::staleness::serialize_iso_time")]` for `SystemTime` fields.
pub fn serialize_iso_time<S: serde::Serializer>(
    time: &SystemTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&iso_time(*time))
}

/// The same for `Option<SystemTime>` fields (`None` serializes as `null`).
pub fn serialize_optional_iso_time<S: serde::Serializer>(
    time: &Option<SystemTime>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match time {
        Some(t) => serializer.serialize_str(&iso_time(*t)),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn days_are_floored_whole_days() {
        let mtime = at_ms(1_000_000_000_000);
        let day = 86_400_000;
        assert_eq!(
            memory_age_days(mtime, at_ms(1_000_000_000_000 + day - 1)),
            0
        );
        assert_eq!(memory_age_days(mtime, at_ms(1_000_000_000_000 + day)), 1);
        assert_eq!(
            memory_age_days(mtime, at_ms(1_000_000_000_000 + 2 * day - 1)),
            1
        );
        assert_eq!(
            memory_age_days(mtime, at_ms(1_000_000_000_000 + 47 * day + 5)),
            47
        );
    }

    #[test]
    fn future_mtime_is_today() {
        assert_eq!(memory_age_days(at_ms(2_000), at_ms(1_000)), 0);
    }

    #[test]
    fn labels() {
        assert_eq!(age_label(0), "today");
        assert_eq!(age_label(1), "yesterday");
        assert_eq!(age_label(2), "2 days ago");
        assert_eq!(age_label(365), "365 days ago");
    }

    #[test]
    fn caveat_only_after_one_day_with_exact_text() {
        assert_eq!(staleness_caveat(0), None);
        assert_eq!(staleness_caveat(1), None);
        assert_eq!(
            staleness_caveat(2).as_deref(),
            Some(
                "This memory is 2 days old. Memories are point-in-time observations, not live \
                 state — claims about code behavior or file:line citations may be outdated. \
                 Verify against current code before asserting as fact."
            )
        );
        let text = staleness_caveat(30).expect("stale");
        assert!(
            text.starts_with("This memory is 30 days old. Memories are"),
            "{text}"
        );
        assert!(
            !text.contains("  "),
            "line continuations must not leave double spaces"
        );
    }

    #[test]
    fn iso_time_matches_javascript_to_iso_string() {
        // 2026-11-22T08:38:52.863Z, the `modified` stamp of a real 2.1.330 memory file.
        assert_eq!(
            iso_time(at_ms(1_795_336_732_863)),
            "2026-11-22T08:38:52.863Z"
        );
        assert_eq!(iso_time(at_ms(0)), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn serde_helper_writes_the_iso_string() {
        #[derive(serde::Serialize)]
        struct T {
            #[serde(serialize_with = "serialize_iso_time")]
            at: SystemTime,
        }
        let json = serde_json::to_string(&T { at: at_ms(1_500) }).expect("serialize");
        assert_eq!(json, r#"{"at":"1970-01-01T00:00:01.500Z"}"#);
    }
}
