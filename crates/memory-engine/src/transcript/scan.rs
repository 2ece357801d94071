//! A direct scanner for the head of a transcript line: the same [`EntryHead`] serde derives, found
//! by walking the line once — strings are skipped with `memchr` (serde_json steps through them
//! byte by byte) and only the fields the chain needs are turned into values. It handles the
//! shapes Claude Code writes; anything else (an escaped key, a value of an unexpected type, a
//! surrogate escape, an exponent, deep nesting, a truncated or malformed line) returns `None` and
//! the line goes through the shared decoder ([`super::decode`]) instead, which also names the
//! error.
//!
//! Invariant: a line the scanner accepts is one the decoder reads, so a message the chain holds
//! can always be read again. The scanner checks what serde_json checks (structure, literals,
//! numbers, escapes, control characters) on every value, skipped ones too.

use std::borrow::Cow;

use super::entry::{CompactMetadata, ContentSummary, EntryHead, MessageHead, Nullable};

/// How deep the scanner follows nesting before it steps aside (Claude Code's lines nest a dozen
/// levels at most; serde_json decides the rest, up to its limit).
const MAX_SCAN_DEPTH: usize = 64;

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Arrays and objects open at the cursor.
    depth: usize,
}

/// Whether `bytes` hold a control character, which JSON forbids raw inside a string. Eight bytes
/// at a time (a byte below 0x20 borrows into its high bit; one at or above 0x80 is masked out):
/// strings are most of a line, and this runs over all of them.
fn has_control(bytes: &[u8]) -> bool {
    const LOW: u64 = 0x2020_2020_2020_2020;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        if word.wrapping_sub(LOW) & !word & HIGH != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20)
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Opens an array or object: `None` past [`MAX_SCAN_DEPTH`].
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_SCAN_DEPTH).then_some(())
    }

    /// A string at the cursor: its raw bytes (between the quotes) and whether it has escapes.
    /// Only a string serde_json would accept as it is: no raw control character, every escape
    /// valid, no surrogate escape (serde refuses a lone one, and the line's decoder repairs it).
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            // `get`: an escape as the line's last byte leaves the cursor past the end.
            let rest = self.bytes.get(self.at..)?;
            let offset = memchr::memchr2(b'"', b'\\', rest)?;
            self.at += offset;
            if self.bytes[self.at] == b'\\' {
                escaped = true;
                self.escape()?;
                continue;
            }
            let raw = &self.bytes[start..self.at];
            // (Escapes hold no control character: checking the whole string once is enough.)
            if has_control(raw) {
                return None;
            }
            self.at += 1;
            return Some((raw, escaped));
        }
    }

    /// The escape at the cursor (its backslash), if serde_json reads it as it is.
    fn escape(&mut self) -> Option<()> {
        match *self.bytes.get(self.at + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 2,
            b'u' => {
                let hex = self.bytes.get(self.at + 2..self.at + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                let unit = u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                if (0xD800..0xE000).contains(&unit) {
                    return None;
                }
                self.at += 6;
            }
            _ => return None,
        }
        Some(())
    }

    /// A number as JSON writes it. Exponents and integer parts long enough to overflow an `f64`
    /// (which serde_json refuses) are left to serde.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let digits = |s: &mut Self| {
            let start = s.at;
            while matches!(s.peek(), Some(b'0'..=b'9')) {
                s.at += 1;
            }
            s.at - start
        };
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                if digits(self) > 300 {
                    return None;
                }
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return None;
            }
        }
        (!matches!(self.peek(), Some(b'e' | b'E'))).then_some(())
    }

    /// Skips the value at the cursor, checking it is JSON serde_json reads as it is.
    fn skip_value(&mut self) -> Option<()> {
        self.space();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|s, _| s.skip_value()),
            b'[' => self.array(Self::skip_value),
            b't' | b'f' | b'n' => {
                (self.literal(b"true") || self.literal(b"false") || self.literal(b"null"))
                    .then_some(())
            }
            _ => self.number(),
        }
    }

    /// Calls `item` for each element of the array at the cursor; it must consume the element.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.enter()?;
        self.space();
        if self.peek()? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.space();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The raw bytes of the value at the cursor.
    fn raw_value(&mut self) -> Option<&'a [u8]> {
        self.space();
        let start = self.at;
        self.skip_value()?;
        Some(&self.bytes[start..self.at])
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    /// A string or `null`.
    fn text(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.space();
        if self.literal(b"null") {
            return Some(None);
        }
        let start = self.at;
        let (raw, escaped) = self.string()?;
        if escaped {
            let decoded: String = serde_json::from_slice(&self.bytes[start..self.at]).ok()?;
            return Some(Some(Cow::Owned(decoded)));
        }
        Some(Some(Cow::Borrowed(std::str::from_utf8(raw).ok()?)))
    }

    fn boolean(&mut self) -> Option<Option<bool>> {
        self.space();
        if self.literal(b"true") {
            Some(Some(true))
        } else if self.literal(b"false") {
            Some(Some(false))
        } else if self.literal(b"null") {
            Some(None)
        } else {
            None
        }
    }

    /// Calls `field` for each key of the object at the cursor; it must consume the value.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.enter()?;
        self.space();
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            self.space();
            let (key, escaped) = self.string()?;
            if escaped {
                return None;
            }
            self.eat(b':')?;
            field(self, key)?;
            self.space();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn content(&mut self) -> Option<ContentSummary> {
        self.space();
        let mut summary = ContentSummary::default();
        match self.peek()? {
            b'"' => {
                let (raw, _) = self.string()?;
                summary.text_chars = if raw.iter().all(u8::is_ascii_whitespace) {
                    0
                } else {
                    raw.len()
                };
            }
            b'[' => {
                self.array(|s| {
                    s.space();
                    if s.peek()? != b'{' {
                        return s.skip_value();
                    }
                    let (mut kind, mut text) = (&b""[..], 0usize);
                    s.object(|s, key| {
                        match key {
                            b"type" => kind = s.string()?.0,
                            b"text" => {
                                s.space();
                                text = if s.literal(b"null") {
                                    0
                                } else {
                                    s.string()?.0.len()
                                };
                            }
                            _ => s.skip_value()?,
                        }
                        Some(())
                    })?;
                    match kind {
                        b"text" => summary.text_chars += text,
                        b"tool_use" | b"server_tool_use" => summary.tool_uses += 1,
                        b"tool_result" => summary.tool_results += 1,
                        b"thinking" | b"redacted_thinking" => summary.thinking = true,
                        _ => {}
                    }
                    Some(())
                })?;
            }
            _ => self.skip_value()?,
        }
        Some(summary)
    }

    fn message(&mut self) -> Option<Option<MessageHead<'a>>> {
        self.space();
        if self.literal(b"null") {
            return Some(None);
        }
        let mut message = MessageHead::default();
        self.object(|s, key| {
            match key {
                b"id" => message.id = s.text()?,
                b"role" => message.role = s.text()?,
                b"content" => message.content = s.content()?,
                _ => s.skip_value()?,
            }
            Some(())
        })?;
        Some(Some(message))
    }
}

/// The head of `line`, or `None` to let serde_json decide (see the module docs).
pub(super) fn scan_head(line: &[u8]) -> Option<EntryHead<'_>> {
    let mut scanner = Scanner {
        bytes: line,
        at: 0,
        depth: 0,
    };
    let mut head = EntryHead::default();
    scanner.object(|s, key| {
        match key {
            b"type" => head.kind = s.text()?,
            b"subtype" => head.subtype = s.text()?,
            b"uuid" => head.uuid = s.text()?,
            b"parentUuid" => {
                head.parent_uuid = match s.text()? {
                    Some(parent) => Nullable::Value(parent),
                    None => Nullable::Null,
                }
            }
            b"logicalParentUuid" => head.logical_parent_uuid = s.text()?,
            b"sourceToolAssistantUUID" => head.source_tool_assistant_uuid = s.text()?,
            b"isSidechain" => head.is_sidechain = s.boolean()?,
            b"isMeta" => head.is_meta = s.boolean()?,
            b"isCompactSummary" => head.is_compact_summary = s.boolean()?,
            b"sessionId" => head.session_id = s.text()?,
            b"cwd" => head.cwd = s.text()?,
            b"timestamp" => head.timestamp = s.text()?,
            b"message" => head.message = s.message()?,
            b"summary" => head.summary = s.text()?,
            b"customTitle" => head.custom_title = s.text()?,
            b"aiTitle" => head.ai_title = s.text()?,
            b"compactMetadata" => {
                head.compact_metadata =
                    serde_json::from_slice::<Option<CompactMetadata>>(s.raw_value()?).ok()?
            }
            _ => s.skip_value()?,
        }
        Some(())
    })?;
    scanner.space();
    (scanner.at == line.len()).then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::decode::decode_line;
    use crate::transcript::entry::parse_head;

    /// The scanner and serde agree on every line of the genuine transcripts.
    #[test]
    fn agrees_with_serde_on_the_genuine_transcripts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/real/claude-home/projects/-path-to-Demo");
        let mut lines = 0;
        for entry in std::fs::read_dir(dir).expect("fixtures").flatten() {
            let text = std::fs::read(entry.path()).expect("read");
            for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let mut fast = scan_head(line).expect("the scanner reads Claude Code's lines");
                let mut slow: EntryHead<'_> = serde_json::from_slice(line).expect("serde reads it");
                // Text sizes are raw (escapes as written) on one side, decoded on the other: the
                // chain only asks whether there is text.
                for head in [&mut fast, &mut slow] {
                    if let Some(message) = head.message.as_mut() {
                        message.content.text_chars = usize::from(message.content.text_chars > 0);
                    }
                }
                assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
                lines += 1;
            }
        }
        assert!(lines > 500);
    }

    #[test]
    fn anything_unusual_is_left_to_serde() {
        for line in [
            &br#"{"type":"user","uuid":"#[..],
            br#"{"type":"user"} trailing"#,
            br#"{"type":1}"#,
            br#"{"ty\u0070e":"user"}"#,
            br#"{"isMeta":"yes"}"#,
            // Found by `make fuzz`: an escape as the very last byte.
            br#"{"type":"user","cwd":"\"#,
            br#"{"a":"\"#,
            b"[1,2]",
        ] {
            assert!(
                scan_head(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Escaped values are decoded like serde does.
        let head =
            scan_head(br#"{"type":"user","cwd":"C:\\work\\app","uuid":"u","parentUuid":null}"#)
                .expect("scan");
        assert_eq!(head.cwd.as_deref(), Some("C:\\work\\app"));
        assert_eq!(head.parent_uuid, Nullable::Null);
        assert!(
            parse_head(br#"{"type":1}"#).is_err(),
            "serde still judges it"
        );
    }

    /// What serde_json refuses (or, for surrogates and deep nesting, decides), the scanner never
    /// accepts: each of these once reached the chain and failed its message's read.
    #[test]
    fn the_scanner_accepts_nothing_the_decoder_refuses() {
        let deep = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        let values = [
            "\"a\tb\"".to_owned(), // a raw tab inside a string
            r#""\x""#.to_owned(),
            r#""\u12g4""#.to_owned(),
            r#""\ud83d""#.to_owned(),
            r#""\ud83d\ude00""#.to_owned(),
            "nope".to_owned(),
            "tru".to_owned(),
            "01".to_owned(),
            "1.".to_owned(),
            "-".to_owned(),
            "1e400".to_owned(),
            "9".repeat(400),
            "[1,]".to_owned(),
            "[,1]".to_owned(),
            "[1 2]".to_owned(),
            r#"{"a" 1}"#.to_owned(),
            r#"{"a":1,}"#.to_owned(),
            r#"{1:2}"#.to_owned(),
            "[}".to_owned(),
            deep(MAX_SCAN_DEPTH),
        ];
        for value in &values {
            for line in [
                format!(r#"{{"type":"user","uuid":"u","parentUuid":null,"extra":{value}}}"#),
                format!(
                    r#"{{"type":"user","uuid":"u","parentUuid":null,"message":{{"role":"user","content":[{{"type":"text","text":"hi"}},{{"type":"tool_use","input":{value}}}]}}}}"#
                ),
            ] {
                assert!(scan_head(line.as_bytes()).is_none(), "{line}");
                assert_eq!(
                    parse_head(line.as_bytes()).is_ok(),
                    decode_line(line.as_bytes()).is_ok(),
                    "the head is read exactly when the line decodes: {line}"
                );
            }
        }
        for content in [
            r#"[,{"type":"text","text":"a"}]"#,
            r#"[{"type":"text","text":"a"},]"#,
        ] {
            let line = format!(
                r#"{{"type":"user","uuid":"u","parentUuid":null,"message":{{"content":{content}}}}}"#
            );
            assert!(scan_head(line.as_bytes()).is_none(), "{line}");
        }
        // Ordinary values still go the fast way.
        let line = r#"{"type":"user","uuid":"u","parentUuid":null,"x":[-0.5,10,true,false,null,{"a":"b\n\u00e9"}],"message":{"content":[]}}"#;
        assert!(scan_head(line.as_bytes()).is_some());
    }

    #[test]
    fn control_characters_are_found_at_any_position_among_any_bytes() {
        for position in 0..19 {
            for byte in 0..=255u8 {
                let mut bytes = vec![b'a'; 19];
                bytes[position] = byte;
                bytes[(position + 7) % 19] = 0xE9; // high bytes elsewhere change nothing
                assert_eq!(has_control(&bytes), byte < 0x20, "{byte:#x} at {position}");
            }
        }
    }
}
