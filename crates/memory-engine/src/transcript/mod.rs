//! Claude Code's session transcripts (`FORMATS.md` §5): `<session-uuid>.jsonl`, one JSON entry a
//! line, append-only, written by every Claude Code version since 1.0.
//!
//! Contract:
//! - Every version's file is read. Unknown entry types are kept and counted, never fatal; a
//!   malformed or truncated line, or one nested deeper than [`MAX_NESTING`], is skipped and
//!   reported with its line number; a BOM, CRLF and blank lines are tolerated; invalid UTF-8 and
//!   lone UTF-16 surrogate escapes inside a line are replaced (as Claude Code's `JSON.parse` reads
//!   them), not fatal. Every reader of a line decodes it alike ([`decode_line`]), so a message the
//!   chain holds can always be read again: reading fails only if the file changed meanwhile.
//! - Any file size is read in bounded memory: [`Transcript::open`] streams the file once and keeps
//!   a compact node per entry (ids, flags, the line's offset), never the text; [`Transcript::messages`]
//!   reads the chain's lines again, one at a time, when someone wants them.
//! - The conversation is the chain from the leaf (the last message nobody answered) back along
//!   `parentUuid`; a tool result whose parent is missing follows `sourceToolAssistantUUID`; a
//!   compact boundary (`parentUuid: null`, `logicalParentUuid`) starts a new segment and the walk
//!   continues through its logical parent; assistant records streamed one per content block
//!   (sharing `message.id`) are one message; other leaves (rewinds) are reported as branches.
//! - Transcripts are never written here: Engram only reads them.

mod decode;
mod entry;
mod lines;
mod listing;
mod message;
mod scan;
mod writes;

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub use decode::{decode_line, MAX_NESTING};
pub use entry::CompactMetadata;
pub use lines::{Line, LineReader, MAX_LINE_BYTES};
pub(crate) use listing::last_entry_time;
pub use listing::{SessionListing, SessionSummary, LISTING_FULL_READ_BYTES};
pub use message::{Message, MessageUsage, Messages, ToolResult, ToolUse};
pub use writes::{session_writes, SessionWrites};

use entry::{parse_head, ContentSummary, EntryHead, Nullable};

/// Entry types this reader knows (`FORMATS.md` §5, through 2.1.330). Any other type is counted
/// in [`Transcript::unknown_types`] and otherwise ignored.
const KNOWN_TYPES: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "summary",
    "custom-title",
    "ai-title",
    "last-prompt",
    "tag",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "tools-used",
    "cost-state",
    "atis-latch",
    "mode",
];

/// A line the reader could not use.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedLine {
    pub line: usize,
    pub reason: String,
}

/// A compact boundary: where Claude Code summarised the conversation so far and went on.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub uuid: String,
    pub timestamp: Option<String>,
    /// `manual` or `auto`.
    pub trigger: Option<String>,
    /// Context tokens before the compaction.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub pre_tokens: Option<u64>,
    /// The segment it opens (the first segment is 0).
    pub segment: usize,
}

/// A branch left behind by a rewind (or an edited prompt): messages that hang off the
/// conversation but are not on the chain to the leaf.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Branch {
    /// The message on the main chain the branch starts from (`None`: a separate root).
    pub fork_uuid: Option<String>,
    pub leaf_uuid: String,
    /// User and assistant records on the branch.
    pub messages: usize,
}

/// A subagent's transcript: `<project dir>/<session-id>/subagents/agent-<id>.jsonl`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subagent {
    pub agent_id: String,
    pub file: PathBuf,
    /// Its `.meta.json`, as written (agent type, description, …), when present and readable.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub meta: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeKind {
    User,
    Assistant,
    System,
    CompactBoundary,
    Attachment,
    /// Any other entry that sits in the chain (`progress`, newer types).
    Other,
}

/// One chained entry, without its text (see the module contract).
#[derive(Debug, Clone)]
struct Node {
    id: u128,
    /// The parent's key; [`NO_PARENT`] at a root. (Not an `Option`: that would double the
    /// field's size, and a node is kept per entry of files of any size.)
    parent: u128,
    /// The parent's index in `nodes`, resolved as the entry is read (parents come first in an
    /// append-only file); [`UNRESOLVED`] for a root or a parent not (yet) seen.
    parent_index: u32,
    kind: NodeKind,
    /// A hash of `message.id` (0: none), to merge streamed assistant records.
    message_id: u64,
    offset: u64,
    len: u32,
    line: u32,
    sidechain: bool,
    meta: bool,
    compact_summary: bool,
    content: ContentSummary,
}

/// The `parent` of a root (no uuid is all zeros).
const NO_PARENT: u128 = 0;
const UNRESOLVED: u32 = u32::MAX;

impl Node {
    fn parent(&self) -> Option<u128> {
        (self.parent != NO_PARENT).then_some(self.parent)
    }

    fn is_message(&self) -> bool {
        matches!(self.kind, NodeKind::User | NodeKind::Assistant)
    }
}

/// A transcript read once (see the module contract).
#[derive(Debug, Clone)]
pub struct Transcript {
    pub path: PathBuf,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    /// The first entry says `"isSidechain": true`: a subagent's file.
    pub sidechain: bool,
    pub custom_title: Option<String>,
    pub ai_title: Option<String>,
    /// The `summary` entry for this conversation's leaf (else the last one).
    pub summary: Option<String>,
    pub compactions: Vec<Compaction>,
    pub branches: Vec<Branch>,
    pub skipped_lines: Vec<SkippedLine>,
    pub unknown_types: BTreeMap<String, usize>,
    /// Chain links that point at an entry the file does not have (the chain stops there).
    pub broken_links: usize,
    /// The line of the entry whose `parentUuid` leads back into the chain already walked (a
    /// cycle, or an entry that is its own parent, in a hand-made or corrupted file): the chain
    /// starts at that entry.
    pub parent_cycle: Option<usize>,
    /// The file's size when it was read.
    pub bytes: u64,
    /// Its modification time then, to tell a file rewritten since from a line that is unreadable.
    modified: Option<std::time::SystemTime>,
    /// The newest `timestamp` of any entry.
    pub last_timestamp: Option<String>,
    nodes: Vec<Node>,
    /// Indexes into `nodes`, root to leaf, every segment.
    chain: Vec<u32>,
    /// Where each segment starts in `chain` (0 first).
    segment_starts: Vec<usize>,
    first_prompt: Option<u32>,
}

/// A uuid as a 128-bit key: the uuid itself when it is one (every Claude Code uuid is), else a
/// hash of the text — keeps a node small and a chain of millions of entries in bounded memory.
fn key(text: &str) -> u128 {
    let bytes = text.as_bytes();
    if bytes.len() == 36 {
        let mut value: u128 = 0;
        let mut digits = 0;
        for &b in bytes {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                b'-' => continue,
                _ => return hashed(text),
            };
            value = (value << 4) | u128::from(digit);
            digits += 1;
        }
        if digits == 32 {
            return value;
        }
    }
    hashed(text)
}

fn hashed(text: &str) -> u128 {
    let half = |seed: u64| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut hasher);
        text.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

fn hash64(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish().max(1)
}

impl Transcript {
    /// Reads `path` once, in bounded memory (see the module contract).
    pub fn open(path: &Path) -> Result<Transcript> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
        let bytes = metadata.len();
        let mut reader = LineReader::new(BufReader::with_capacity(1 << 20, file));
        let mut builder = Builder::default();
        // Growing a big file's node list and map step by step copies them many times over; a
        // guess from the size (Claude Code lines average well over 512 bytes) avoids most of it.
        let guess = (bytes / 512).min(1 << 22) as usize;
        builder.nodes.reserve(guess);
        while let Some(line) = reader.next_line().map_err(|e| Error::io(path, e))? {
            builder.add(&line);
        }
        let mut transcript = builder.finish(path.to_path_buf(), bytes);
        transcript.modified = metadata.modified().ok();
        Ok(transcript)
    }

    /// Whether the file's size or modification time differ from when it was read.
    fn changed_on_disk(&self) -> bool {
        std::fs::metadata(&self.path)
            .map(|now| now.len() != self.bytes || now.modified().ok() != self.modified)
            .unwrap_or(true)
    }

    /// The title Claude Code shows: customTitle > aiTitle > summary > first prompt.
    pub fn title(&self) -> Option<String> {
        self.custom_title
            .clone()
            .or_else(|| self.ai_title.clone())
            .or_else(|| self.summary.clone())
            .or_else(|| self.first_prompt())
    }

    /// The first thing the user typed (slash commands shown as `/name args`), on one line.
    pub fn first_prompt(&self) -> Option<String> {
        let node = &self.nodes[self.first_prompt? as usize];
        let message = message::read_one(&self.path, node).ok()?;
        Some(message::one_line(&message.text, 200))
    }

    /// Messages (user and assistant records; streamed records merged) on the chain, root to
    /// leaf, across every segment. Compaction markers, which [`Transcript::messages`] yields
    /// too, are not counted.
    pub fn message_count(&self) -> usize {
        let mut count = 0;
        let mut previous: Option<&Node> = None;
        for &index in &self.chain {
            let node = &self.nodes[index as usize];
            if node.is_message() && !continues(previous, node) {
                count += 1;
            }
            previous = Some(node);
        }
        count
    }

    /// Every message of the chain, read again from the file one line at a time.
    pub fn messages(&self) -> Result<Messages<'_>> {
        Messages::new(self)
    }

    /// The uuid of the chain's leaf.
    pub fn leaf_uuid(&self) -> Option<String> {
        let node = &self.nodes[*self.chain.last()? as usize];
        message::read_one(&self.path, node).ok().map(|m| m.uuid)
    }

    /// Subagent transcripts of this session (`<session>/subagents/agent-*.jsonl`), by id.
    pub fn subagents(&self) -> Vec<Subagent> {
        let dir = self.path.with_extension("").join("subagents");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<Subagent> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_owned();
                let agent_id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
                let meta = std::fs::read(dir.join(format!("agent-{agent_id}.meta.json")))
                    .ok()
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok());
                Some(Subagent {
                    agent_id: agent_id.to_owned(),
                    file: entry.path(),
                    meta,
                })
            })
            .collect();
        found.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
        found
    }
}

/// A window of a transcript's messages, for a reader that pages through a long session.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptPage {
    pub session_id: Option<String>,
    pub title: Option<String>,
    pub file: PathBuf,
    /// Messages in the whole chain.
    pub total: usize,
    /// Index of the first message of `messages` in the chain.
    pub offset: usize,
    pub messages: Vec<Message>,
    pub compactions: Vec<Compaction>,
    pub branches: Vec<Branch>,
    pub skipped_lines: Vec<SkippedLine>,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, number>"))]
    pub unknown_types: BTreeMap<String, usize>,
    /// The line of the entry whose `parentUuid` leads back into the chain (a cycle): the chain
    /// starts there.
    pub parent_cycle: Option<usize>,
    pub subagents: Vec<Subagent>,
}

impl Transcript {
    /// Messages `offset..offset + limit` of the chain, with the transcript's facts.
    pub fn page(&self, offset: usize, limit: usize) -> Result<TranscriptPage> {
        let messages = self
            .messages()?
            .skip(offset)
            .take(limit)
            .collect::<Result<Vec<_>>>()?;
        Ok(TranscriptPage {
            session_id: self.session_id.clone(),
            title: self.title(),
            file: self.path.clone(),
            // Everything the pages show: compaction markers too.
            total: message::Spans::new(self).count(),
            offset,
            messages,
            compactions: self.compactions.clone(),
            branches: self.branches.clone(),
            skipped_lines: self.skipped_lines.clone(),
            unknown_types: self.unknown_types.clone(),
            parent_cycle: self.parent_cycle,
            subagents: self.subagents(),
        })
    }
}

/// Whether `node` continues the assistant message `previous` began (streamed records share
/// `message.id`).
fn continues(previous: Option<&Node>, node: &Node) -> bool {
    previous.is_some_and(|p| {
        p.kind == NodeKind::Assistant
            && node.kind == NodeKind::Assistant
            && node.message_id != 0
            && p.message_id == node.message_id
    })
}

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    logical_parents: HashMap<u32, u128>,
    tool_sources: HashMap<u32, u128>,
    session_id: Option<String>,
    cwd: Option<String>,
    sidechain: Option<bool>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summaries: Vec<(u128, String)>,
    compact_metadata: HashMap<u32, (Option<String>, CompactMetadata)>,
    skipped_lines: Vec<SkippedLine>,
    unknown_types: BTreeMap<String, usize>,
    first_prompt: Option<u32>,
    last_timestamp: String,
}

/// Skipped-line reports kept per file: a file of garbage says how much, not every line.
const MAX_SKIPPED_REPORTED: usize = 1000;

/// How many entries back a parent is looked for as an entry is read: in an append-only file it
/// is almost always among the last few (the previous record, a parallel tool call's turn).
const PARENT_WINDOW: usize = 64;

/// uuid → node index for the whole file, built once at the end: sorted, searched by bisection.
/// (A hash map filled entry by entry cost a cache miss per entry on large files.)
struct IdIndex(Vec<(u128, u32)>);

impl IdIndex {
    fn new(nodes: &[Node]) -> IdIndex {
        let mut ids: Vec<(u128, u32)> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id, i as u32))
            .collect();
        ids.sort_unstable();
        IdIndex(ids)
    }

    /// The last entry with this uuid (a later copy of an entry wins, as in Claude Code).
    fn get(&self, id: u128) -> Option<u32> {
        let end = self.0.partition_point(|(k, _)| *k <= id);
        (end > 0 && self.0[end - 1].0 == id).then(|| self.0[end - 1].1)
    }
}

impl Builder {
    /// The index of `id` among the last [`PARENT_WINDOW`] entries.
    fn recent(&self, id: u128) -> Option<u32> {
        let from = self.nodes.len().saturating_sub(PARENT_WINDOW);
        self.nodes[from..]
            .iter()
            .rposition(|n| n.id == id)
            .map(|at| (from + at) as u32)
    }

    fn skip(&mut self, line: usize, reason: String) {
        if self.skipped_lines.len() < MAX_SKIPPED_REPORTED {
            self.skipped_lines.push(SkippedLine { line, reason });
        }
    }

    fn add(&mut self, line: &Line<'_>) {
        if line.too_long {
            self.skip(
                line.number,
                format!(
                    "line of {} bytes exceeds the {MAX_LINE_BYTES}-byte limit",
                    line.len
                ),
            );
            return;
        }
        let head: EntryHead<'_> = match parse_head(line.bytes) {
            Ok(head) => head,
            Err(reason) => return self.skip(line.number, reason),
        };
        let Some(kind) = head.kind.as_deref() else {
            return self.skip(line.number, "entry without a \"type\"".into());
        };
        if let Some(timestamp) = head.timestamp.as_deref() {
            if timestamp > self.last_timestamp.as_str() {
                self.last_timestamp.clear();
                self.last_timestamp.push_str(timestamp);
            }
        }
        if self.sidechain.is_none() {
            self.sidechain = head.is_sidechain;
        }
        if self.session_id.is_none() {
            self.session_id = head.session_id.as_deref().map(str::to_owned);
        }
        if self.cwd.is_none() {
            self.cwd = head.cwd.as_deref().map(str::to_owned);
        }
        let known = KNOWN_TYPES.contains(&kind) || kind.starts_with("api-request");
        if !known {
            *self.unknown_types.entry(kind.to_owned()).or_default() += 1;
        }
        match kind {
            "summary" => {
                if let Some(summary) = head.summary.as_deref() {
                    let leaf = line_leaf(line.bytes).map_or(0, |leaf| key(&leaf));
                    self.summaries.push((leaf, summary.to_owned()));
                }
                return;
            }
            "custom-title" => {
                self.custom_title = head.custom_title.as_deref().map(str::to_owned);
                return;
            }
            "ai-title" => {
                self.ai_title = head.ai_title.as_deref().map(str::to_owned);
                return;
            }
            _ => {}
        }
        // Only entries with a uuid and a parentUuid key take part in the conversation.
        let Some(uuid) = head.uuid.as_deref() else {
            return;
        };
        let parent = match &head.parent_uuid {
            Nullable::Absent => return,
            Nullable::Null => None,
            Nullable::Value(parent) => Some(key(parent)),
        };
        let message = head.message.as_ref();
        let node_kind = match kind {
            "user" => NodeKind::User,
            "assistant" => NodeKind::Assistant,
            "system" if head.subtype.as_deref() == Some("compact_boundary") => {
                NodeKind::CompactBoundary
            }
            "system" => NodeKind::System,
            "attachment" => NodeKind::Attachment,
            _ => NodeKind::Other,
        };
        let index = self.nodes.len() as u32;
        // Rare links, kept aside so every node stays small.
        if let Some(logical) = head.logical_parent_uuid.as_deref() {
            self.logical_parents.insert(index, key(logical));
        }
        if let Some(source) = head.source_tool_assistant_uuid.as_deref() {
            self.tool_sources.insert(index, key(source));
        }
        let node = Node {
            id: key(uuid),
            parent: parent.unwrap_or(NO_PARENT),
            parent_index: parent.and_then(|p| self.recent(p)).unwrap_or(UNRESOLVED),
            kind: node_kind,
            message_id: message.and_then(|m| m.id.as_deref()).map_or(0, hash64),
            offset: line.offset,
            len: line.len as u32,
            line: line.number as u32,
            sidechain: head.is_sidechain.unwrap_or(false),
            meta: head.is_meta.unwrap_or(false),
            compact_summary: head.is_compact_summary.unwrap_or(false),
            content: message.map(|m| m.content).unwrap_or_default(),
        };
        if node_kind == NodeKind::CompactBoundary {
            self.compact_metadata.insert(
                index,
                (
                    head.timestamp.as_deref().map(str::to_owned),
                    head.compact_metadata.clone().unwrap_or_default(),
                ),
            );
        }
        if self.first_prompt.is_none()
            && node.kind == NodeKind::User
            && !node.meta
            && !node.compact_summary
            && (!node.sidechain || self.sidechain == Some(true))
            && node.content.text_chars > 0
            && node.content.tool_results == 0
        {
            self.first_prompt = Some(index);
        }
        self.nodes.push(node);
    }

    fn finish(self, path: PathBuf, bytes: u64) -> Transcript {
        let sidechain = self.sidechain.unwrap_or(false);
        let mut nodes = self.nodes;
        let by_id = IdIndex::new(&nodes);
        // A parent that came later in the file than its child (hand-edited files): resolved now.
        for node in nodes.iter_mut() {
            if node.parent_index == UNRESOLVED {
                if let Some(parent) = node.parent().and_then(|p| by_id.get(p)) {
                    node.parent_index = parent;
                }
            }
        }
        let mut has_child = vec![false; nodes.len()];
        for node in &nodes {
            if node.parent_index != UNRESOLVED {
                has_child[node.parent_index as usize] = true;
            }
        }
        for logical in self.logical_parents.values() {
            if let Some(parent) = by_id.get(*logical) {
                has_child[parent as usize] = true;
            }
        }
        let is_leaf =
            |i: usize| !has_child[i] && nodes[i].is_message() && (sidechain || !nodes[i].sidechain);
        let leaf = (0..nodes.len())
            .rev()
            .find(|&i| is_leaf(i))
            .or_else(|| (0..nodes.len()).rev().find(|&i| !has_child[i]))
            // Every entry has a child: a cycle. The walk starts from the last message.
            .or_else(|| (0..nodes.len()).rev().find(|&i| nodes[i].is_message()))
            .or_else(|| nodes.len().checked_sub(1));

        // Walk from the leaf to the root (see the module contract).
        let mut chain = Vec::new();
        let mut on_chain = vec![false; nodes.len()];
        let mut broken_links = 0;
        let mut parent_cycle = None;
        let mut current = leaf.map(|i| i as u32);
        while let Some(index) = current {
            if on_chain[index as usize] {
                // A cycle in a hand-made or corrupted file: the chain starts at the entry whose
                // parent was already walked (the first repeated uuid is not walked again).
                parent_cycle = chain
                    .last()
                    .map(|&last: &u32| nodes[last as usize].line as usize);
                break;
            }
            on_chain[index as usize] = true;
            chain.push(index);
            let node = &nodes[index as usize];
            current = match node.parent() {
                Some(_) => match (node.parent_index != UNRESOLVED).then_some(node.parent_index) {
                    Some(p) => Some(p),
                    None => {
                        let via_tool = self.tool_sources.get(&index).and_then(|s| by_id.get(*s));
                        if via_tool.is_none() {
                            broken_links += 1;
                        }
                        via_tool
                    }
                },
                None if node.kind == NodeKind::CompactBoundary => {
                    self.logical_parents.get(&index).and_then(|l| by_id.get(*l))
                }
                None => None,
            };
        }
        chain.reverse();

        let mut segment_starts = vec![0];
        let mut compactions = Vec::new();
        for (position, &index) in chain.iter().enumerate() {
            if nodes[index as usize].kind == NodeKind::CompactBoundary && position > 0 {
                segment_starts.push(position);
            }
            if nodes[index as usize].kind == NodeKind::CompactBoundary {
                let (timestamp, metadata) = self
                    .compact_metadata
                    .get(&index)
                    .cloned()
                    .unwrap_or_default();
                compactions.push(Compaction {
                    uuid: String::new(), // filled below, from the line
                    timestamp,
                    trigger: metadata.trigger,
                    pre_tokens: metadata.pre_tokens,
                    segment: segment_starts.len() - 1,
                });
            }
        }

        let leaf_id = leaf.map(|i| nodes[i].id);
        let summary = self
            .summaries
            .iter()
            .rev()
            .find(|(leaf, _)| {
                Some(*leaf) == leaf_id || by_id.get(*leaf).is_some_and(|i| on_chain[i as usize])
            })
            .or(self.summaries.last())
            .map(|(_, summary)| summary.clone());

        let mut transcript = Transcript {
            path,
            session_id: self.session_id,
            cwd: self.cwd,
            sidechain,
            custom_title: self.custom_title,
            ai_title: self.ai_title,
            summary,
            compactions,
            branches: Vec::new(),
            skipped_lines: self.skipped_lines,
            unknown_types: self.unknown_types,
            broken_links,
            parent_cycle,
            bytes,
            modified: None,
            last_timestamp: Some(self.last_timestamp).filter(|t| !t.is_empty()),
            nodes,
            chain,
            segment_starts,
            first_prompt: self.first_prompt,
        };
        transcript.branches = transcript.find_branches(&has_child, &on_chain);
        transcript.fill_compaction_uuids();
        transcript
    }
}

/// The `leafUuid` of a `summary` line (not part of the hot head parse).
fn line_leaf(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Leaf {
        #[serde(rename = "leafUuid")]
        leaf_uuid: Option<String>,
    }
    serde_json::from_slice::<Leaf>(line).ok()?.leaf_uuid
}

impl Transcript {
    /// Leaves off the main chain (see [`Branch`]); each node is walked once.
    fn find_branches(&self, has_child: &[bool], on_chain: &[bool]) -> Vec<Branch> {
        let nodes = &self.nodes;
        // For a node off the chain: the chain node its ancestry reaches (or none) and how many
        // messages lie between, memoised so overlapping branches cost one walk.
        let mut reached: HashMap<u32, (Option<u32>, usize)> = HashMap::new();
        let mut branches = Vec::new();
        for leaf in 0..nodes.len() {
            let node = &nodes[leaf];
            if has_child[leaf]
                || on_chain[leaf]
                || !node.is_message()
                || node.sidechain != self.sidechain
            {
                continue;
            }
            let mut path = Vec::new();
            let mut current = Some(leaf as u32);
            let mut end: (Option<u32>, usize) = (None, 0);
            while let Some(index) = current {
                if on_chain[index as usize] {
                    end = (Some(index), 0);
                    break;
                }
                if let Some(&known) = reached.get(&index) {
                    end = known;
                    break;
                }
                if path.contains(&index) {
                    break;
                }
                path.push(index);
                let parent = nodes[index as usize].parent_index;
                current = (parent != UNRESOLVED).then_some(parent);
            }
            let (fork, mut count) = end;
            for &index in path.iter().rev() {
                count += usize::from(nodes[index as usize].is_message());
                reached.insert(index, (fork, count));
            }
            let messages = reached.get(&(leaf as u32)).map_or(0, |r| r.1);
            if messages > 0 {
                branches.push((fork, leaf as u32, messages));
            }
        }
        branches
            .into_iter()
            .filter_map(|(fork, leaf, messages)| {
                Some(Branch {
                    fork_uuid: match fork {
                        Some(f) => Some(self.uuid_of(f)?),
                        None => None,
                    },
                    leaf_uuid: self.uuid_of(leaf)?,
                    messages,
                })
            })
            .collect()
    }

    fn uuid_of(&self, index: u32) -> Option<String> {
        message::read_uuid(&self.path, &self.nodes[index as usize])
    }

    fn fill_compaction_uuids(&mut self) {
        let boundaries: Vec<u32> = self
            .chain
            .iter()
            .copied()
            .filter(|&i| self.nodes[i as usize].kind == NodeKind::CompactBoundary)
            .collect();
        for (compaction, index) in self.compactions.iter_mut().zip(boundaries) {
            compaction.uuid =
                message::read_uuid(&self.path, &self.nodes[index as usize]).unwrap_or_default();
        }
    }
}

#[cfg(test)]
mod tests;
