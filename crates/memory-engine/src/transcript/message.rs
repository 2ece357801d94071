//! A transcript message in full — text, tool uses, tool results — read from its line on demand
//! (the chain keeps only offsets; see the module contract).

use std::fs::File;
use std::path::Path;

use serde_json::Value;

use super::decode::decode_line;
use super::{continues, Node, NodeKind, Transcript};
use crate::error::{Error, Result};

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub uuid: String,
    pub parent_uuid: Option<String>,
    /// `user`, `assistant` or `system`.
    pub role: String,
    pub timestamp: Option<String>,
    /// The prose: a string content, or the text blocks joined by blank lines.
    pub text: String,
    pub tool_uses: Vec<ToolUse>,
    pub is_compact_summary: bool,
    // Additions to the documented shape.
    pub tool_results: Vec<ToolResult>,
    /// Thinking blocks, joined (hidden by default in the app).
    pub thinking: String,
    /// Claude Code's own context injections (`isMeta`): not something the user typed.
    pub is_meta: bool,
    /// Which segment (between compact boundaries) it belongs to; 0 first.
    pub segment: usize,
    /// The line it starts on.
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub usage: Option<MessageUsage>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub input: Value,
}

impl ToolUse {
    /// The file the tool touches, for tools that name one (`file_path`, `path`, `notebook_path`).
    pub fn file_path(&self) -> Option<&str> {
        ["file_path", "notebook_path", "path"]
            .iter()
            .find_map(|k| self.input.get(k)?.as_str())
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub tool_use_id: String,
    pub text: String,
    pub is_error: bool,
}

/// The API's token accounting of an assistant message (`message.usage`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageUsage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_creation_input_tokens: u32,
    pub cache_read_input_tokens: u32,
}

impl MessageUsage {
    /// The context size this message saw and produced, counted as Claude Code's autocompact does
    /// (input + output + cache tokens).
    pub fn context_tokens(&self) -> u64 {
        u64::from(self.input_tokens)
            + u64::from(self.output_tokens)
            + u64::from(self.cache_creation_input_tokens)
            + u64::from(self.cache_read_input_tokens)
    }
}

impl Message {
    /// Rough token count of what this message adds to a context (chars / 4, as `FORMATS.md` §6).
    pub fn estimated_tokens(&self) -> usize {
        let mut chars = self.text.len() + self.thinking.len();
        chars += self
            .tool_uses
            .iter()
            .map(|t| t.name.len() + t.input.to_string().len())
            .sum::<usize>();
        chars += self
            .tool_results
            .iter()
            .map(|t| t.text.len())
            .sum::<usize>();
        chars.div_ceil(4)
    }

    fn absorb(&mut self, next: Message) {
        if !next.text.is_empty() {
            if !self.text.is_empty() {
                self.text.push_str("\n\n");
            }
            self.text.push_str(&next.text);
        }
        if !next.thinking.is_empty() {
            if !self.thinking.is_empty() {
                self.thinking.push_str("\n\n");
            }
            self.thinking.push_str(&next.thinking);
        }
        self.tool_uses.extend(next.tool_uses);
        self.tool_results.extend(next.tool_results);
        self.usage = next.usage.or(self.usage);
        // The merged message is known by its last record: that is what the next entry's
        // parentUuid names.
        self.uuid = next.uuid;
    }
}

/// Reads a node's line again.
fn read_line(file: &File, path: &Path, node: &Node) -> Result<Vec<u8>> {
    let mut bytes = vec![0; node.len as usize];
    crate::platform::fs::read_at(file, &mut bytes, node.offset).map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

pub(super) fn read_one(path: &Path, node: &Node) -> Result<Message> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let value = decode_line(&read_line(&file, path, node)?)
        .map_err(|reason| Error::parse(path, Some(node.line as usize), reason))?;
    Ok(to_message(&value, node, 0))
}

pub(super) fn read_uuid(path: &Path, node: &Node) -> Option<String> {
    let file = File::open(path).ok()?;
    let value = decode_line(&read_line(&file, path, node).ok()?).ok()?;
    Some(value.get("uuid")?.as_str()?.to_owned())
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(text) => Some(text.as_str()),
                _ if b.get("type").and_then(Value::as_str) == Some("text") => {
                    b.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value.get(key)?.as_str().map(str::to_owned)
}

fn to_message(entry: &Value, node: &Node, segment: usize) -> Message {
    let message = entry.get("message").unwrap_or(&Value::Null);
    let content = message.get("content").unwrap_or(&Value::Null);
    let mut out = Message {
        uuid: str_field(entry, "uuid").unwrap_or_default(),
        parent_uuid: str_field(entry, "parentUuid"),
        role: match node.kind {
            NodeKind::User => "user",
            NodeKind::Assistant => "assistant",
            _ => "system",
        }
        .to_owned(),
        timestamp: str_field(entry, "timestamp"),
        is_compact_summary: node.compact_summary,
        is_meta: node.meta,
        segment,
        line: node.line as usize,
        ..Message::default()
    };
    match content {
        Value::String(text) => out.text = text.clone(),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        texts.push(block.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("tool_use") | Some("server_tool_use") => out.tool_uses.push(ToolUse {
                        id: str_field(block, "id").unwrap_or_default(),
                        name: str_field(block, "name").unwrap_or_default(),
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                    }),
                    Some("tool_result") => out.tool_results.push(ToolResult {
                        tool_use_id: str_field(block, "tool_use_id").unwrap_or_default(),
                        text: text_of(block.get("content").unwrap_or(&Value::Null)),
                        is_error: block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    }),
                    Some("thinking") => {
                        if let Some(thinking) = block.get("thinking").and_then(Value::as_str) {
                            if !out.thinking.is_empty() {
                                out.thinking.push_str("\n\n");
                            }
                            out.thinking.push_str(thinking);
                        }
                    }
                    _ => {}
                }
            }
            out.text = texts.join("\n\n");
        }
        _ => {}
    }
    // A system entry's text is its `content` field (compact boundaries, hook summaries).
    if node.kind != NodeKind::User && node.kind != NodeKind::Assistant {
        out.text = str_field(entry, "content").unwrap_or_default();
    }
    out.usage = message.get("usage").map(|usage| {
        let field = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
        MessageUsage {
            input_tokens: field("input_tokens"),
            output_tokens: field("output_tokens"),
            cache_creation_input_tokens: field("cache_creation_input_tokens"),
            cache_read_input_tokens: field("cache_read_input_tokens"),
        }
    });
    out
}

/// `text` on one line, at most `max` characters: what a list shows. A slash command's expansion
/// (`<command-name>/x</command-name><command-args>y</command-args>`) reads as `/x y`.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&format!("</{name}>"))? + start;
        Some(text[start..end].trim())
    };
    let shown = match tag("command-name") {
        Some(command) => {
            let command = if command.starts_with('/') {
                command.to_owned()
            } else {
                format!("/{command}")
            };
            match tag("command-args").filter(|a| !a.is_empty()) {
                Some(args) => format!("{command} {args}"),
                None => command,
            }
        }
        None => text.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    match shown.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", shown[..cut].trim_end()),
        None => shown,
    }
}

/// The chain's messages, root to leaf, streamed records merged; each read from the file when
/// reached (see [`Transcript::messages`]).
pub struct Messages<'a> {
    spans: Spans<'a>,
    file: File,
}

impl<'a> Messages<'a> {
    pub(super) fn new(transcript: &'a Transcript) -> Result<Self> {
        let file = File::open(&transcript.path).map_err(|e| Error::io(&transcript.path, e))?;
        Ok(Messages {
            spans: Spans::new(transcript),
            file,
        })
    }

    fn read(&self, index: u32) -> Result<Message> {
        let transcript = self.spans.transcript;
        let node = &transcript.nodes[index as usize];
        let bytes = read_line(&self.file, &transcript.path, node)?;
        // The chain was built with the same decoder: a line it accepted that no longer decodes
        // was rewritten since. Said only when the file shows it, never assumed.
        let value = decode_line(&bytes).map_err(|reason| {
            let message = if transcript.changed_on_disk() {
                format!("changed since it was read: {reason}")
            } else {
                reason
            };
            Error::parse(&transcript.path, Some(node.line as usize), message)
        })?;
        Ok(to_message(&value, node, self.spans.segment))
    }
}

/// The chain's messages as spans of chain positions — the first record, then its streamed
/// continuations — found from the nodes alone, without reading the file: what [`Messages`]
/// reads, skips (paging deep into a long session reads only the page) and counts.
pub(super) struct Spans<'a> {
    transcript: &'a Transcript,
    position: usize,
    /// The segment (compactions before it) of the span last returned.
    segment: usize,
}

impl<'a> Spans<'a> {
    pub(super) fn new(transcript: &'a Transcript) -> Self {
        Spans {
            transcript,
            position: 0,
            segment: 0,
        }
    }
}

impl Iterator for Spans<'_> {
    type Item = std::ops::Range<usize>;

    fn next(&mut self) -> Option<std::ops::Range<usize>> {
        let chain = &self.transcript.chain;
        let nodes = &self.transcript.nodes;
        loop {
            let &index = chain.get(self.position)?;
            if self.transcript.segment_starts[1..].contains(&self.position) {
                self.segment += 1;
            }
            self.position += 1;
            let node = &nodes[index as usize];
            if !(node.is_message() || node.kind == NodeKind::CompactBoundary) {
                continue;
            }
            let first = self.position - 1;
            // Streamed records of one assistant message follow each other on the chain.
            while let Some(&next) = chain.get(self.position) {
                if !continues(
                    Some(&nodes[chain[self.position - 1] as usize]),
                    &nodes[next as usize],
                ) {
                    break;
                }
                self.position += 1;
            }
            return Some(first..self.position);
        }
    }
}

impl Iterator for Messages<'_> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        let span = self.spans.next()?;
        let records = &self.spans.transcript.chain[span];
        let mut message = match self.read(records[0]) {
            Ok(message) => message,
            Err(e) => return Some(Err(e)),
        };
        for &more in &records[1..] {
            match self.read(more) {
                Ok(more) => message.absorb(more),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(message))
    }

    /// Skips `n` messages without reading them (`skip(offset)` comes here).
    fn nth(&mut self, n: usize) -> Option<Result<Message>> {
        if n > 0 {
            self.spans.nth(n - 1)?;
        }
        self.next()
    }
}

impl serde::Serialize for Transcript {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap, SerializeSeq};
        struct AllMessages<'a>(&'a Transcript);
        impl serde::Serialize for AllMessages<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(None)?;
                for message in self.0.messages().map_err(S::Error::custom)? {
                    seq.serialize_element(&message.map_err(S::Error::custom)?)?;
                }
                seq.end()
            }
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("sessionId", &self.session_id)?;
        map.serialize_entry("title", &self.title())?;
        map.serialize_entry("messages", &AllMessages(self))?;
        map.serialize_entry("compactions", &self.compactions)?;
        map.serialize_entry("branches", &self.branches)?;
        map.serialize_entry("skippedLines", &self.skipped_lines)?;
        map.serialize_entry("unknownTypes", &self.unknown_types)?;
        map.serialize_entry("file", &self.path)?;
        map.serialize_entry("cwd", &self.cwd)?;
        map.serialize_entry("sidechain", &self.sidechain)?;
        map.serialize_entry("brokenLinks", &self.broken_links)?;
        map.serialize_entry("parentCycle", &self.parent_cycle)?;
        map.serialize_entry("subagents", &self.subagents())?;
        map.end()
    }
}
