//! A transcript line's JSON, decoded the one way every reader of transcripts here decodes it: the
//! chain's head parse (when its fast scanner steps aside), the full message read, session search.
//! One decoder, so a line the chain accepted is never refused when its message is read.
//!
//! Claude Code reads its transcripts with JavaScript's `JSON.parse`, which is more lenient than
//! serde_json in one way that occurs in real files: a lone UTF-16 surrogate escape (`"\ud83d"`),
//! which Node writes for an emoji cut in half. Such a line is read here with each lone surrogate
//! decoded to U+FFFD, the rest of the entry intact; so is invalid UTF-8 inside a string. What
//! serde_json still refuses (malformed or truncated JSON, nesting deeper than its limit) is a line
//! the reader skips and reports, with the reason this module gives.

use std::borrow::Cow;

use serde_json::Value;

/// The deepest nesting of arrays and objects a line may have (serde_json's recursion limit).
pub const MAX_NESTING: usize = 127;

/// The entry on `line`, or why it cannot be read (for a skipped-line report).
pub fn decode_line(line: &[u8]) -> Result<Value, String> {
    let strict = match serde_json::from_slice(line) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    match repaired(line) {
        Some(text) => serde_json::from_str(&text).map_err(|e| describe(&e)),
        None => Err(describe(&strict)),
    }
}

/// `line` with invalid UTF-8 replaced and each lone surrogate escape turned into `\ufffd`, or
/// `None` when it has neither (nothing to repair).
fn repaired(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let surrogates = lone_surrogates(text.as_bytes());
    if surrogates.is_empty() {
        return matches!(text, Cow::Owned(_)).then(|| text.into_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for at in surrogates {
        out.push_str(&text[from..at]);
        out.push_str("\\ufffd");
        from = at + 6;
    }
    out.push_str(&text[from..]);
    Some(out)
}

/// Byte offsets of the `\uXXXX` escapes in `json` that are lone surrogates: a high one not
/// followed by a low one, or a low one not preceded by a high one. Escapes are read left to right
/// as a JSON reader reads them (so `\\ud83d` is an escaped backslash, not an escape); a backslash
/// outside a string is a syntax error either way.
fn lone_surrogates(json: &[u8]) -> Vec<usize> {
    let unit_at = |at: usize| -> Option<u16> {
        let hex = json.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' || !hex[2..].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let is_high = |unit: u16| (0xD800..0xDC00).contains(&unit);
    let is_low = |unit: u16| (0xDC00..0xE000).contains(&unit);
    let mut lone = Vec::new();
    let mut at = 0;
    // `get`: an escape as the line's last byte leaves `at` past the end.
    while let Some(offset) = json.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        at += offset;
        match unit_at(at) {
            Some(high) if is_high(high) && unit_at(at + 6).is_some_and(is_low) => at += 12,
            Some(unit) if is_high(unit) || is_low(unit) => {
                lone.push(at);
                at += 6;
            }
            Some(_) => at += 6,
            None => at += 2,
        }
    }
    lone
}

/// Why a line could not be read, as a skipped-line report says it.
pub fn describe(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match error.classify() {
        Category::Eof => "truncated line (cut off mid-entry)".into(),
        Category::Syntax if error.to_string().starts_with("recursion limit exceeded") => {
            format!("nested more than {MAX_NESTING} levels deep")
        }
        Category::Syntax => format!("malformed JSON at column {}", error.column()),
        Category::Data => format!("unexpected value: {error}"),
        Category::Io => format!("{error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_read_as_replacement_characters_and_pairs_stay_whole() {
        // Node writes a lone surrogate for an emoji cut in half; JSON.parse accepts it.
        let value =
            decode_line(br#"{"text":"cut \ud83d here","pair":"\ud83d\ude00","low":"\udc00x"}"#)
                .expect("read as JSON.parse reads it");
        assert_eq!(value["text"], "cut \u{FFFD} here");
        assert_eq!(value["pair"], "\u{1F600}");
        assert_eq!(value["low"], "\u{FFFD}x");
        // A high surrogate followed by another high one: both lone.
        let value = decode_line(br#"{"t":"\ud83d\ud83d\ude00"}"#).expect("read");
        assert_eq!(value["t"], "\u{FFFD}\u{1F600}");
        // An escaped backslash before `ud83d` is not an escape: nothing to repair.
        let value = decode_line(br#"{"t":"\\ud83d"}"#).expect("read");
        assert_eq!(value["t"], "\\ud83d");
        // A lone surrogate last on a truncated line: still reported as truncated.
        assert_eq!(
            decode_line(br#"{"t":"\ud83d"#).expect_err("truncated"),
            "truncated line (cut off mid-entry)"
        );
    }

    /// Found by `make fuzz`: a line cut right after a backslash, with invalid UTF-8 before it
    /// (so the repair runs), took the search for escapes past the end of the line.
    #[test]
    fn a_backslash_as_the_last_byte_is_a_truncated_line() {
        for line in [&b"{\"t\":\"caf\xC3 `\\"[..], b"{\"t\":\"\\ud83d\\", b"\\"] {
            assert!(
                decode_line(line).is_err(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_and_the_rest_kept() {
        let value = decode_line(b"{\"t\":\"caf\xC3\",\"u\":\"\\ud83d\"}").expect("read");
        assert_eq!(value["t"], "caf\u{FFFD}");
        assert_eq!(value["u"], "\u{FFFD}");
    }

    #[test]
    fn nesting_past_the_limit_is_named() {
        let nested = |levels: usize| {
            format!(
                "{{\"a\":{}{}}}",
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        decode_line(nested(MAX_NESTING).as_bytes()).expect("at the limit: read");
        assert_eq!(
            decode_line(nested(MAX_NESTING + 1).as_bytes()).expect_err("past it"),
            format!("nested more than {MAX_NESTING} levels deep")
        );
    }
}
