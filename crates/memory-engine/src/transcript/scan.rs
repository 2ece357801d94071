//! A direct scanner for the head of a transcript line: the same [`EntryHead`] serde derives, found
//! by walking the line once — strings are skipped with `memchr` (serde_json steps through them
//! byte by byte) and only the fields the chain needs are turned into values. It handles the
//! shapes Claude Code writes; anything else (an escaped key, a value of an unexpected type, a
//! truncated or malformed line) returns `None` and the line goes through serde_json instead,
//! which also names the error. So the scanner can be fast without being the judge of validity.

use std::borrow::Cow;

use super::entry::{CompactMetadata, ContentSummary, EntryHead, MessageHead, Nullable};

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
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

    /// A string at the cursor: its raw bytes (between the quotes) and whether it has escapes.
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            // `get`: an escape as the line's last byte leaves the cursor past the end.
            let offset = memchr::memchr2(b'"', b'\\', self.bytes.get(self.at..)?)?;
            self.at += offset;
            if self.bytes[self.at] == b'\\' {
                escaped = true;
                self.at += 2;
                continue;
            }
            let raw = &self.bytes[start..self.at];
            self.at += 1;
            return Some((raw, escaped));
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        self.space();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                        }
                        b'{' | b'[' => {
                            depth += 1;
                            self.at += 1;
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                return Some(());
                            }
                        }
                        _ => self.at += 1,
                    }
                }
            }
            _ => {
                let start = self.at;
                while !matches!(
                    self.peek()?,
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'
                ) {
                    self.at += 1;
                }
                (self.at > start).then_some(())
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
        self.space();
        if self.peek()? == b'}' {
            self.at += 1;
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
                self.at += 1;
                loop {
                    self.space();
                    match self.peek()? {
                        b']' => {
                            self.at += 1;
                            break;
                        }
                        b',' => self.at += 1,
                        b'{' => {
                            let (mut kind, mut text) = (&b""[..], 0usize);
                            self.object(|s, key| {
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
                        }
                        _ => self.skip_value()?,
                    }
                }
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
    let mut scanner = Scanner { bytes: line, at: 0 };
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
}
