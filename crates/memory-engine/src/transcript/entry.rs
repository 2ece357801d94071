//! One transcript line, read cheaply: the fields that place an entry in the conversation (type,
//! uuids, flags, `message.id`) and a summary of its content (text, tool uses, tool results),
//! borrowing from the line and skipping every other value unparsed. This is the hot path of every
//! transcript read, so it allocates only for strings that carry escapes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::decode::{decode_line, describe};

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub struct EntryHead<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub subtype: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "nullable")]
    pub parent_uuid: Nullable<Cow<'a, str>>,
    #[serde(borrow)]
    pub logical_parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sourceToolAssistantUUID", borrow)]
    pub source_tool_assistant_uuid: Option<Cow<'a, str>>,
    pub is_sidechain: Option<bool>,
    pub is_meta: Option<bool>,
    pub is_compact_summary: Option<bool>,
    #[serde(borrow)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub message: Option<MessageHead<'a>>,
    // Metadata entries.
    #[serde(borrow)]
    pub summary: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub custom_title: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub ai_title: Option<Cow<'a, str>>,
    pub compact_metadata: Option<CompactMetadata>,
}

/// A key that may be absent, `null`, or set: `parentUuid: null` marks a root, which is not the
/// same as an entry that has no place in the chain at all.
#[derive(Default, Debug, Clone, PartialEq)]
pub enum Nullable<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

fn nullable<'de, D, T>(deserializer: D) -> Result<Nullable<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(match Option::<T>::deserialize(deserializer)? {
        Some(value) => Nullable::Value(value),
        None => Nullable::Null,
    })
}

#[derive(Deserialize, Default, Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactMetadata {
    pub trigger: Option<String>,
    pub pre_tokens: Option<u64>,
}

#[derive(Deserialize, Default, Debug)]
pub struct MessageHead<'a> {
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub role: Option<Cow<'a, str>>,
    #[serde(default)]
    pub content: ContentSummary,
}

/// What a message's `content` holds, counted without keeping it.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentSummary {
    /// The size of the prose (a string content, or `text` blocks), as bytes of JSON (escapes as
    /// written): the chain only asks whether there is any (0: none).
    pub text_chars: usize,
    pub tool_uses: u16,
    pub tool_results: u16,
    pub thinking: bool,
}

impl<'de> Deserialize<'de> for ContentSummary {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = ContentSummary;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a list of content blocks")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<ContentSummary, E> {
        Ok(ContentSummary {
            text_chars: text.trim().len(),
            ..ContentSummary::default()
        })
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<ContentSummary, E> {
        Ok(ContentSummary::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ContentSummary, A::Error> {
        let mut summary = ContentSummary::default();
        while let Some(block) = seq.next_element::<BlockHead>()? {
            match block.kind {
                BlockKind::Text => summary.text_chars += block.text_chars,
                BlockKind::ToolUse => summary.tool_uses += 1,
                BlockKind::ToolResult => summary.tool_results += 1,
                BlockKind::Thinking => summary.thinking = true,
                BlockKind::Other => {}
            }
        }
        Ok(summary)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentSummary, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ContentSummary::default())
    }
}

/// A content block's type and, for text, its length: everything else is skipped.
struct BlockHead {
    kind: BlockKind,
    text_chars: usize,
}

#[derive(Clone, Copy)]
enum BlockKind {
    Text,
    ToolUse,
    ToolResult,
    Thinking,
    Other,
}

impl BlockKind {
    fn of(name: &str) -> BlockKind {
        match name {
            "text" => BlockKind::Text,
            "tool_use" | "server_tool_use" => BlockKind::ToolUse,
            "tool_result" => BlockKind::ToolResult,
            "thinking" | "redacted_thinking" => BlockKind::Thinking,
            _ => BlockKind::Other,
        }
    }
}

impl<'de> Deserialize<'de> for BlockHead {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BlockVisitor;
        impl<'de> Visitor<'de> for BlockVisitor {
            type Value = BlockHead;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BlockHead, A::Error> {
                let mut block = BlockHead {
                    kind: BlockKind::Other,
                    text_chars: 0,
                };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "type" => block.kind = BlockKind::of(&map.next_value::<Cow<'de, str>>()?),
                        // The text's length is all the chain needs: its raw JSON, unparsed
                        // (escapes count as written; a `null` or `""` is no text).
                        "text" => {
                            let raw = map.next_value::<&'de serde_json::value::RawValue>()?;
                            block.text_chars = match raw.get() {
                                "null" => 0,
                                text => text.len().saturating_sub(2),
                            };
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(block)
            }
            // A block that is not an object (seen in hand-made files) counts as nothing.
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<BlockHead, E> {
                Ok(BlockHead {
                    kind: BlockKind::Other,
                    text_chars: 0,
                })
            }
        }
        deserializer.deserialize_any(BlockVisitor)
    }
}

/// Parses a line's head: the fast scanner, else the full decode every reader of transcript lines
/// shares ([`super::decode::decode_line`]), so a line is accepted here exactly when its message
/// can be read later (lone surrogates and invalid UTF-8 repaired; too deep nesting refused).
pub fn parse_head(line: &[u8]) -> Result<EntryHead<'_>, String> {
    if let Some(head) = super::scan::scan_head(line) {
        return Ok(head);
    }
    let value = decode_line(line)?;
    if !value.is_object() {
        return Err("not a JSON object".into());
    }
    // The decoded entry, written back as plain JSON, gives the head the same way the scanner's
    // borrowed fields do. Rare: only lines the scanner steps aside for come here.
    let canonical = serde_json::to_vec(&value).map_err(|e| describe(&e))?;
    serde_json::from_slice::<EntryHead<'_>>(&canonical)
        .map(EntryHead::into_owned)
        .map_err(|e| describe(&e))
}

fn own<'b>(value: Option<Cow<'_, str>>) -> Option<Cow<'b, str>> {
    value.map(|v| Cow::Owned(v.into_owned()))
}

impl EntryHead<'_> {
    fn into_owned<'b>(self) -> EntryHead<'b> {
        EntryHead {
            kind: own(self.kind),
            subtype: own(self.subtype),
            uuid: own(self.uuid),
            parent_uuid: match self.parent_uuid {
                Nullable::Value(v) => Nullable::Value(Cow::Owned(v.into_owned())),
                Nullable::Null => Nullable::Null,
                Nullable::Absent => Nullable::Absent,
            },
            logical_parent_uuid: own(self.logical_parent_uuid),
            source_tool_assistant_uuid: own(self.source_tool_assistant_uuid),
            is_sidechain: self.is_sidechain,
            is_meta: self.is_meta,
            is_compact_summary: self.is_compact_summary,
            session_id: own(self.session_id),
            cwd: own(self.cwd),
            timestamp: own(self.timestamp),
            message: self.message.map(|m| MessageHead {
                id: own(m.id),
                role: own(m.role),
                content: m.content,
            }),
            summary: own(self.summary),
            custom_title: own(self.custom_title),
            ai_title: own(self.ai_title),
            compact_metadata: self.compact_metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_that_place_an_entry() {
        let line = br#"{"parentUuid":null,"isSidechain":false,"type":"assistant","uuid":"u1","timestamp":"2025-09-03T00:52:31.217Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":" hi "},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a"}},{"type":"thinking","thinking":"x"}]}}"#;
        let head = parse_head(line).expect("test input");
        assert_eq!(head.kind.as_deref(), Some("assistant"));
        assert_eq!(head.parent_uuid, Nullable::Null);
        let message = head.message.expect("test input");
        assert_eq!(message.id.as_deref(), Some("msg_1"));
        assert_eq!(message.content.text_chars, 4, "the raw length: \" hi \"");
        assert_eq!(message.content.tool_uses, 1);
        assert!(message.content.thinking);
    }

    #[test]
    fn a_missing_parent_key_is_not_a_null_parent() {
        let head =
            parse_head(br#"{"type":"summary","summary":"s","leafUuid":"x"}"#).expect("test input");
        assert_eq!(head.parent_uuid, Nullable::Absent);
    }

    #[test]
    fn invalid_utf8_inside_a_string_keeps_the_line() {
        let line = b"{\"type\":\"user\",\"uuid\":\"u\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"caf\xC3\"}}";
        let head = parse_head(line).expect("test input");
        assert_eq!(head.uuid.as_deref(), Some("u"));
        assert!(head.message.expect("test input").content.text_chars > 0);
    }

    #[test]
    fn truncated_and_malformed_lines_are_described() {
        assert_eq!(
            parse_head(br#"{"type":"user","uuid":"#).expect_err("an error"),
            "truncated line (cut off mid-entry)"
        );
        assert!(parse_head(b"{oops}")
            .expect_err("an error")
            .starts_with("malformed JSON"));
    }
}
