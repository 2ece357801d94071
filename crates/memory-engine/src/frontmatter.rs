//! YAML frontmatter of memory files (`FORMATS.md` §3) — the only module that knows about YAML, so
//! the parser can be swapped without touching anything else.
//!
//! Reading follows Claude Code: a leading BOM is dropped and CRLF read as LF; the block opens with
//! a `---` first line and closes at the next `---` line; `name`, `description` and `type` are read
//! at the top level, and `type` also from the nested `metadata:` map that 2.1.330 stamps into
//! every file it writes. YAML that does not parse is retried once with the values that contain YAML
//! special characters auto-quoted; if it still fails the frontmatter counts as empty — the file is
//! still a memory, it just has no metadata. Nothing here ever fails or panics on file content.
//!
//! Writing is surgical: [`apply_edit`] rewrites only the lines of the fields that actually change
//! and keeps every other byte (other keys, their order and quoting, `metadata:` blocks, the line
//! endings, the BOM). An edit that changes nothing returns the input unchanged, byte for byte.

use std::borrow::Cow;

use crate::memory_type::MemoryType;

/// What the frontmatter says about a memory. Every field is `None` when the block is missing,
/// unclosed or malformed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frontmatter {
    pub name: Option<String>,
    pub description: Option<String>,
    /// `type` when it is one of the four known types.
    pub memory_type: Option<MemoryType>,
    /// The `type` value as written (top-level first, then `metadata.type`), known or not.
    pub raw_type: Option<String>,
    /// Whether the type lives in a nested `metadata:` map (the 2.1.330 stamped form).
    pub nested_type: bool,
    /// The session that wrote the file (`metadata.originSessionId`, which 2.1.330 stamps, or a
    /// top-level `originSessionId`).
    pub origin_session_id: Option<String>,
    pub status: FrontmatterStatus,
}

/// How the frontmatter block was read.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum FrontmatterStatus {
    /// Parsed as written.
    #[default]
    Valid,
    /// Parsed only after values with YAML special characters were auto-quoted (Claude Code does
    /// the same retry, so the metadata is visible to it).
    Repaired,
    /// Not YAML even after the retry: read as empty.
    Malformed { message: String },
    /// The file does not open with a `---` line.
    Missing,
    /// A `---` opening line without a closing one (within the line limit, when there is one).
    Unclosed,
}

impl FrontmatterStatus {
    /// True when Claude Code sees no metadata at all for the file.
    pub fn is_unusable(&self) -> bool {
        !matches!(self, FrontmatterStatus::Valid | FrontmatterStatus::Repaired)
    }
}

/// A whole memory file: its frontmatter and its body (after the closing fence, leading blank
/// lines removed — Claude Code's fence pattern swallows them too; LF line endings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub frontmatter: Frontmatter,
    pub body: String,
}

/// Parses a complete file.
pub fn parse_document(text: &str) -> Document {
    parse_document_within(text, None)
}

/// Parses a complete file whose frontmatter must close within its first `max_lines` lines (as
/// the scanner requires); when it does not, the whole text is the body.
pub fn parse_document_within(text: &str, max_lines: Option<usize>) -> Document {
    let (frontmatter, body) = parse_document_lending(text, max_lines);
    Document {
        frontmatter,
        body: body.into_owned(),
    }
}

/// [`parse_document_within`], lending the body from `text` unless it had to be normalised (a BOM
/// or CRLF line ends): lint reads every file and copies only what it keeps.
pub(crate) fn parse_document_lending(
    text: &str,
    max_lines: Option<usize>,
) -> (Frontmatter, Cow<'_, str>) {
    let text = normalize(text);
    let (frontmatter, body_start) = match split(&text, max_lines) {
        Ok(split) => (parse_yaml_block(split.yaml), Some(split.body_start)),
        Err(status) => {
            let frontmatter = Frontmatter {
                status,
                ..Frontmatter::default()
            };
            (frontmatter, None)
        }
    };
    let body = match (text, body_start) {
        (Cow::Borrowed(text), Some(start)) => Cow::Borrowed(text[start..].trim_start_matches('\n')),
        (Cow::Owned(text), Some(start)) => {
            Cow::Owned(text[start..].trim_start_matches('\n').to_string())
        }
        (text, None) => text,
    };
    (frontmatter, body)
}

/// Parses only the frontmatter of `head`, which must close within its first `max_lines` lines
/// (the scanner passes the first 30 lines of a file).
pub fn parse_header(head: &str, max_lines: usize) -> Frontmatter {
    let text = normalize(head);
    match split(&text, Some(max_lines)) {
        Ok(split) => parse_yaml_block(split.yaml),
        Err(status) => Frontmatter {
            status,
            ..Frontmatter::default()
        },
    }
}

/// Drops a leading BOM and reads CRLF as LF, borrowing when there is nothing to change.
fn normalize(text: &str) -> Cow<'_, str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

struct Split<'a> {
    yaml: &'a str,
    /// Byte offset just after the closing fence line.
    body_start: usize,
}

fn is_fence(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.trim_end().is_empty())
}

/// Finds the frontmatter block of LF-normalised text. With `max_lines`, the closing fence must be
/// one of the first `max_lines` lines.
fn split(text: &str, max_lines: Option<usize>) -> Result<Split<'_>, FrontmatterStatus> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontmatterStatus::Missing)?;
    if !is_fence(first) {
        return Err(FrontmatterStatus::Missing);
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for (index, line) in lines.enumerate() {
        // `index` 0 is the file's second line.
        if max_lines.is_some_and(|max| index + 2 > max) {
            break;
        }
        if is_fence(line) {
            return Ok(Split {
                yaml: &text[yaml_start..offset],
                body_start: offset + line.len(),
            });
        }
        offset += line.len();
    }
    Err(FrontmatterStatus::Unclosed)
}

/// The fields of a parsed block, before the type is classified.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<String>,
    top_type: Option<String>,
    nested_type: Option<String>,
    top_session: Option<String>,
    nested_session: Option<String>,
}

fn parse_yaml_block(yaml: &str) -> Frontmatter {
    let (fields, status) = match read_fields(yaml) {
        Ok(fields) => (fields, FrontmatterStatus::Valid),
        Err(first_error) => match read_fields(&quote_special_values(yaml)) {
            Ok(fields) => (fields, FrontmatterStatus::Repaired),
            Err(_) => (
                Fields::default(),
                FrontmatterStatus::Malformed {
                    message: first_error,
                },
            ),
        },
    };
    let nested = fields.top_type.is_none() && fields.nested_type.is_some();
    let raw_type = fields.top_type.or(fields.nested_type);
    Frontmatter {
        name: fields.name,
        description: fields.description,
        memory_type: raw_type.as_deref().and_then(MemoryType::parse),
        raw_type,
        nested_type: nested,
        // The stamped session wins over a top-level one.
        origin_session_id: fields.nested_session.or(fields.top_session),
        status,
    }
}

fn read_fields(yaml: &str) -> Result<Fields, String> {
    if let Some(fields) = read_simple_fields(yaml) {
        return Ok(fields);
    }
    let value: serde_yaml::Value = serde_yaml::from_str(yaml).map_err(|e| e.to_string())?;
    let map = match value {
        serde_yaml::Value::Mapping(map) => map,
        // An empty block is valid and simply says nothing.
        serde_yaml::Value::Null => return Ok(Fields::default()),
        _ => return Err("frontmatter is not a key/value map".to_string()),
    };
    let metadata = map.get("metadata").and_then(|m| m.as_mapping());
    let nested = |key: &str| metadata.and_then(|m| m.get(key)).and_then(scalar_text);
    Ok(Fields {
        name: map.get("name").and_then(scalar_text),
        description: map.get("description").and_then(scalar_text),
        top_type: map.get("type").and_then(scalar_text),
        nested_type: nested("type"),
        top_session: map.get("originSessionId").and_then(scalar_text),
        nested_session: nested("originSessionId"),
    })
}

/// A scalar as the text a JavaScript template string would make of it; maps, lists and null are
/// no value.
fn scalar_text(value: &serde_yaml::Value) -> Option<String> {
    match value {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        serde_yaml::Value::Tagged(tagged) => scalar_text(&tagged.value),
        _ => None,
    }
}

/// The fast path for the frontmatter nearly every memory file has: `key: plain value` lines and
/// at most one level of nested `key: value` lines under a `key:` line. Returns `None` (and the
/// caller falls back to the YAML parser) for anything whose YAML meaning is not obviously the
/// literal text: quotes, flow or block syntax, comments, anchors, numbers, booleans, nulls,
/// duplicate keys, continuation lines. Scanning thousands of files is dominated by this parse,
/// hence the shortcut; its answers are checked against the YAML parser in the tests.
fn read_simple_fields(yaml: &str) -> Option<Fields> {
    let mut fields = Fields::default();
    let mut top_keys: Vec<&str> = Vec::new();
    let mut child_keys: Vec<&str> = Vec::new();
    // The open parent (a `key:` line without a value) and its children's indentation.
    let mut parent: Option<&str> = None;
    let mut child_indent: Option<usize> = None;
    for line in yaml.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let (key, value) = simple_key_value(&line[indent..])?;
        if indent == 0 {
            if top_keys.contains(&key) {
                return None;
            }
            top_keys.push(key);
            child_keys.clear();
            child_indent = None;
            match value {
                None => parent = Some(key),
                Some(value) => {
                    parent = None;
                    let slot = match key {
                        "name" => &mut fields.name,
                        "description" => &mut fields.description,
                        "type" => &mut fields.top_type,
                        "originSessionId" => {
                            fields.top_session = Some(session_id(value)?.to_string());
                            continue;
                        }
                        _ => continue,
                    };
                    *slot = Some(literal(value)?.to_string());
                }
            }
        } else {
            let parent_key = parent?;
            if *child_indent.get_or_insert(indent) != indent || child_keys.contains(&key) {
                return None;
            }
            child_keys.push(key);
            let value = value?;
            if parent_key == "metadata" && key == "type" {
                fields.nested_type = Some(literal(value)?.to_string());
            }
            if parent_key == "metadata" && key == "originSessionId" {
                fields.nested_session = Some(session_id(value)?.to_string());
            }
        }
    }
    Some(fields)
}

/// Splits `key: value` / `key:` when both parts are unambiguous plain YAML.
fn simple_key_value(line: &str) -> Option<(&str, Option<&str>)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    let key_ok = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !key_ok {
        return None;
    }
    let rest = &line[colon + 1..];
    if rest.trim().is_empty() {
        return Some((key, None));
    }
    if !rest.starts_with(' ') {
        return None;
    }
    let value = rest.trim();
    is_plain_scalar(value).then_some((key, Some(value)))
}

/// `value` when YAML reads it as exactly that string (not a number, boolean or null).
fn literal(value: &str) -> Option<&str> {
    is_literal_plain_scalar(value).then_some(value)
}

/// A session id as YAML reads it: a uuid is a string even when it starts with a digit (its
/// dashes make it no number), which [`literal`] cannot tell.
fn session_id(value: &str) -> Option<&str> {
    let uuid = value.len() == 36
        && value.contains('-')
        && value.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if uuid {
        Some(value)
    } else {
        literal(value)
    }
}

/// True when `value` (already trimmed) is a plain YAML scalar with no syntax in it: it parses,
/// though possibly as a number, boolean or null.
fn is_plain_scalar(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || value.ends_with(':') {
        return false;
    }
    !(value.contains(": ")
        || value.contains(" #")
        || value.contains('\t')
        || value.chars().any(char::is_control))
}

/// True when YAML reads `value` (already trimmed) as exactly this string.
fn is_literal_plain_scalar(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    if !is_plain_scalar(value) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "null" | "~" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return false;
    }
    // Anything that might be a number (`12`, `1e3`, `.5`, `+1`, `0x1f`, `.inf`) is left to YAML.
    let numeric_start = first.is_ascii_digit() || first == '.' || first == '+';
    !numeric_start || value.contains(' ')
}

/// Claude Code's retry: every `key: value` line whose value is not already quoted and contains a
/// YAML special character (`{ } [ ] * & # ! | > % @` or a backtick) or `: ` gets the value
/// double-quoted, with `\` and `"` escaped.
fn quote_special_values(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let (content, ending) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
        match quoted_line(content) {
            Some(fixed) => out.push_str(&fixed),
            None => out.push_str(content),
        }
        out.push_str(ending);
    }
    out
}

fn quoted_line(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start().len();
    let colon = line[indent..].find(':')? + indent;
    let key = &line[indent..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let rest = &line[colon + 1..];
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let value = rest.trim();
    if value.is_empty() || value.starts_with('"') || value.starts_with('\'') {
        return None;
    }
    let special = value.contains(": ") || value.chars().any(|c| "{}[]*&#!|>%@`".contains(c));
    if !special {
        return None;
    }
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    Some(format!("{}: \"{escaped}\"", &line[..colon]))
}

/// `value` as a YAML scalar: plain when that reads back as exactly `value`, else double-quoted.
pub fn yaml_scalar(value: &str) -> String {
    let plain_reads_back = is_literal_plain_scalar(value)
        && value == value.trim()
        && serde_yaml::from_str::<serde_yaml::Value>(&format!("k: {value}"))
            .ok()
            .and_then(|v| v.get("k").and_then(|v| v.as_str()).map(|s| s == value))
            .unwrap_or(false);
    if plain_reads_back {
        value.to_string()
    } else {
        // A JSON string is a valid YAML double-quoted scalar with the same meaning.
        serde_json::Value::String(value.to_string()).to_string()
    }
}

/// A new memory file in the form Claude Code writes:
/// `---\nname: …\ndescription: …\ntype: …\n---\n\n<body>\n`.
pub fn render_new(name: &str, description: &str, memory_type: MemoryType, body: &str) -> String {
    let mut out = format!(
        "---\nname: {}\ndescription: {}\ntype: {}\n---\n",
        yaml_scalar(name),
        yaml_scalar(description),
        memory_type.as_str()
    );
    let body = body.trim_end();
    if !body.trim_start().is_empty() {
        out.push('\n');
        out.push_str(body.trim_start_matches('\n'));
        out.push('\n');
    }
    out
}

/// Changes to make to an existing file; `None` leaves that part as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldEdit<'a> {
    pub name: Option<&'a str>,
    pub description: Option<&'a str>,
    pub memory_type: Option<MemoryType>,
    pub body: Option<&'a str>,
}

/// Applies `edit` to the raw text of a memory file, rewriting only what changes (see the module
/// docs). A file without a frontmatter block gets one in front of its content.
pub fn apply_edit(original: &str, edit: &FieldEdit<'_>) -> String {
    let (bom, raw) = match original.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", original),
    };
    let eol = if raw.contains("\r\n") { "\r\n" } else { "\n" };
    let current = parse_document(raw);
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    let closing = lines
        .first()
        .filter(|first| is_fence(first.trim_end_matches(['\r', '\n'])))
        .and_then(|_| {
            lines
                .iter()
                .skip(1)
                .position(|l| is_fence(l.trim_end_matches(['\r', '\n'])))
                .map(|p| p + 1)
        });

    let body_changed = edit
        .body
        .is_some_and(|b| b.trim_end() != current.body.trim_end());
    let mut out = String::with_capacity(raw.len() + 64);
    out.push_str(bom);
    let body_lines: &[&str] = match closing {
        Some(close) => {
            let header = edit_header(&lines[1..close], &current.frontmatter, edit, eol);
            out.push_str(lines[0]);
            out.push_str(&header);
            out.push_str(lines[close]);
            &lines[close + 1..]
        }
        None => {
            // No usable block, so nothing to keep: a fresh one with the fields given.
            out.push_str(&format!("---{eol}"));
            if let Some(name) = edit.name {
                out.push_str(&format!("name: {}{eol}", yaml_scalar(name)));
            }
            if let Some(description) = edit.description {
                out.push_str(&format!("description: {}{eol}", yaml_scalar(description)));
            }
            if let Some(t) = edit.memory_type {
                out.push_str(&format!("type: {t}{eol}"));
            }
            out.push_str(&format!("---{eol}"));
            if !body_changed && !raw.is_empty() {
                out.push_str(eol);
            }
            &lines[..]
        }
    };
    match edit.body.filter(|_| body_changed) {
        Some(body) => {
            let body = body.trim_end().trim_start_matches('\n');
            if !body.trim_start().is_empty() {
                out.push_str(eol);
                if eol == "\n" {
                    out.push_str(body);
                } else {
                    out.push_str(&body.replace("\r\n", "\n").replace('\n', eol));
                }
                out.push_str(eol);
            }
        }
        None => body_lines.iter().for_each(|l| out.push_str(l)),
    }
    out
}

/// Rewrites the lines between the fences. Each changed field replaces the lines of its current
/// value (a key line and its indented continuation lines) or, when absent, is inserted in the
/// canonical order name, description, type.
fn edit_header(lines: &[&str], current: &Frontmatter, edit: &FieldEdit<'_>, eol: &str) -> String {
    let mut lines: Vec<Cow<'_, str>> = lines.iter().map(|l| Cow::Borrowed(*l)).collect();
    if let Some(name) = changed(edit.name, &current.name) {
        set_top_level(&mut lines, "name", &yaml_scalar(name), eol, None);
    }
    if let Some(description) = changed(edit.description, &current.description) {
        set_top_level(
            &mut lines,
            "description",
            &yaml_scalar(description),
            eol,
            Some("name"),
        );
    }
    let new_type = edit
        .memory_type
        .filter(|t| current.raw_type.as_deref() != Some(t.as_str()));
    if let Some(t) = new_type {
        let replaced_nested = find_top_level(&lines, "type").is_none()
            && set_nested_type(&mut lines, t.as_str(), eol);
        if !replaced_nested {
            set_top_level(&mut lines, "type", t.as_str(), eol, Some("description"));
        }
    }
    lines.concat()
}

/// `new` when it differs from `old`.
fn changed<'a>(new: Option<&'a str>, old: &Option<String>) -> Option<&'a str> {
    new.filter(|n| Some(*n) != old.as_deref())
}

fn key_of(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    // A quoted key (`"name": x`) is the same key; missing it would insert a duplicate.
    (!key.is_empty() && !key.starts_with([' ', '\t', '#']))
        .then(|| key.trim_end().trim_matches(['"', '\'']))
}

fn is_continuation(line: &str) -> bool {
    line.starts_with([' ', '\t']) || line.trim().is_empty()
}

/// The line range `[start, end)` of a top-level key and its continuation lines.
fn find_top_level(lines: &[Cow<'_, str>], key: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| key_of(l) == Some(key))?;
    let mut end = start + 1;
    // Blank lines belong to the value only when more indented lines follow them.
    while end < lines.len() && is_continuation(&lines[end]) {
        end += 1;
    }
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    Some((start, end))
}

fn set_top_level(
    lines: &mut Vec<Cow<'_, str>>,
    key: &str,
    value: &str,
    eol: &str,
    after: Option<&str>,
) {
    let new_line = Cow::Owned(format!("{key}: {value}{eol}"));
    match find_top_level(lines, key) {
        Some((start, end)) => {
            lines.splice(start..end, [new_line]);
        }
        None => {
            let at = after
                .and_then(|a| find_top_level(lines, a))
                .map(|(_, end)| end)
                .unwrap_or(if key == "name" { 0 } else { lines.len() });
            lines.insert(at, new_line);
        }
    }
}

/// Replaces `type:` inside a `metadata:` block; false when there is no such line.
fn set_nested_type(lines: &mut [Cow<'_, str>], value: &str, eol: &str) -> bool {
    let Some((start, end)) = find_top_level(lines, "metadata") else {
        return false;
    };
    let child_indent = lines[start + 1..end]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len());
    let Some(indent) = child_indent else {
        return false;
    };
    for line in &mut lines[start + 1..end] {
        let this_indent = line.len() - line.trim_start().len();
        if this_indent == indent && key_of(line.trim_start()) == Some("type") {
            *line = Cow::Owned(format!("{}type: {value}{eol}", &line[..indent]));
            return true;
        }
    }
    false
}

/// What [`repair`] makes of a file's frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// Claude Code reads it as it is (valid, or valid after its own auto-quoting retry).
    Sound,
    /// Broken, with one obvious fix: the whole file fixed, and what was done.
    Fixed { text: String, what: String },
    /// Broken, and no fix is certain: why, for a person.
    NeedsPerson(String),
}

/// A broken frontmatter block fixed when the fix is unambiguous — a quoted value whose closing
/// quote is missing gets it at the end of its line; a block never closed is closed before its
/// first blank line or Markdown heading — and only when the result parses. Nothing is ever
/// added that was not there: no name, no description, and never a guessed type. Other line
/// endings and a BOM are kept.
pub fn repair(text: &str) -> Repair {
    let frontmatter = parse_document(text).frontmatter;
    match frontmatter.status {
        FrontmatterStatus::Valid | FrontmatterStatus::Repaired => Repair::Sound,
        FrontmatterStatus::Missing => Repair::NeedsPerson(
            "no frontmatter: it needs a name, a description and a type, which only a person can give"
                .to_owned(),
        ),
        FrontmatterStatus::Unclosed => close_block(text),
        // A block whose fence is missing runs on to the next `---` (a rule in the body): the
        // same fix as an unclosed one.
        FrontmatterStatus::Malformed { message } => close_quotes(text)
            .or_else(|| Some(close_block(text)).filter(|r| matches!(r, Repair::Fixed { .. })))
            .unwrap_or_else(|| {
                Repair::NeedsPerson(format!(
                    "frontmatter is not valid YAML ({message}); no certain fix"
                ))
            }),
    }
}

/// Whether `text` reads as sound frontmatter with at least one field Claude Code uses.
fn sound_with_fields(text: &str) -> bool {
    let frontmatter = parse_document(text).frontmatter;
    !frontmatter.status.is_unusable()
        && (frontmatter.name.is_some()
            || frontmatter.description.is_some()
            || frontmatter.raw_type.is_some())
}

/// The block closed before its first blank line or heading, when what comes before it is
/// `key: value` lines that parse.
fn close_block(text: &str) -> Repair {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        if number > 0 && (content.trim().is_empty() || content.trim_start().starts_with('#')) {
            if number == 1 {
                break;
            }
            let fixed = format!("{}---{eol}{}", &text[..offset], &text[offset..]);
            return if sound_with_fields(&fixed) {
                Repair::Fixed {
                    text: fixed,
                    what: format!(
                        "close the frontmatter before line {} (its first blank line or heading)",
                        number + 1
                    ),
                }
            } else {
                Repair::NeedsPerson(format!(
                    "frontmatter is never closed, and closing it before line {} does not make it valid",
                    number + 1
                ))
            };
        }
        offset += line.len();
    }
    Repair::NeedsPerson(
        "frontmatter is never closed, and no blank line or heading says where it ends".to_owned(),
    )
}

/// Each `key: "value` (or `'value`) line of the block whose quote never closes, closed at the
/// end of its line — when that makes the block parse.
fn close_quotes(text: &str) -> Option<Repair> {
    let mut fixed = String::with_capacity(text.len() + 4);
    let mut closed = Vec::new();
    let mut in_block = false;
    let mut done = false;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let ending = &line[line.trim_end_matches(['\n', '\r']).len()..];
        let content = &line[..line.len() - ending.len()];
        let fence = content.trim_start_matches('\u{feff}').trim_end() == "---";
        if fence {
            if in_block {
                done = true;
            }
            in_block = !done;
        } else if in_block {
            if let Some(key) = unterminated_quote(content) {
                let quote = content
                    .trim_end()
                    .chars()
                    .find(|c| *c == '"' || *c == '\'')
                    .unwrap_or('"');
                fixed.push_str(content.trim_end());
                fixed.push(quote);
                fixed.push_str(ending);
                closed.push(format!("`{key}` (line {})", number + 1));
                continue;
            }
        }
        fixed.push_str(line);
    }
    if closed.is_empty() || !sound_with_fields(&fixed) {
        return None;
    }
    Some(Repair::Fixed {
        text: fixed,
        what: format!("close the quote of {}", closed.join(", ")),
    })
}

/// The key of a `key: "value` line whose quoted value never closes on its line.
fn unterminated_quote(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = line[..colon].trim();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let value = line[colon + 1..].trim();
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &value[1..];
    let closes = match quote {
        // An escaped quote (`\"`) does not close a double-quoted value.
        '"' => {
            let mut escaped = false;
            inner.chars().any(|c| {
                let closes = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                closes
            })
        }
        // In single quotes, `''` is a quote: a lone one closes.
        _ => inner.replace("''", "").contains('\''),
    };
    (!closes).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_frontmatter_is_repaired_only_where_the_fix_is_certain() {
        let fixed = |text: &str| match repair(text) {
            Repair::Fixed { text, what } => (text, what),
            other => panic!("{text:?}: {other:?}"),
        };
        let (text, what) = fixed(
            "---\nname: deploys\ndescription: \"No deploys on Fridays\ntype: project\n---\n\nBody\n",
        );
        assert_eq!(
            text,
            "---\nname: deploys\ndescription: \"No deploys on Fridays\"\ntype: project\n---\n\nBody\n"
        );
        assert_eq!(what, "close the quote of `description` (line 3)");
        let (text, _) = fixed("---\r\nname: 'it''s late\r\ntype: user\r\n---\r\nBody\r\n");
        assert_eq!(
            text, "---\r\nname: 'it''s late'\r\ntype: user\r\n---\r\nBody\r\n",
            "CRLF kept"
        );
        let (text, what) = fixed(
            "---\nname: Release train\ndescription: Releases leave main on alternate Tuesdays\ntype: project\n\nWe release every other Tuesday.\n---\nafter a rule\n",
        );
        assert!(
            text.starts_with("---\nname: Release train\ndescription: Releases leave main on alternate Tuesdays\ntype: project\n---\n\nWe release"),
            "{text}"
        );
        assert_eq!(
            what,
            "close the frontmatter before line 5 (its first blank line or heading)"
        );
        assert_eq!(
            parse_document(&text).frontmatter.memory_type,
            Some(MemoryType::Project)
        );
        let (text, _) = fixed("---\nname: x\ndescription: y\n# Heading\nbody\n");
        assert_eq!(text, "---\nname: x\ndescription: y\n---\n# Heading\nbody\n");

        for (text, why) in [
            (
                "---\nname: a\ndescription: \"Use the \"fast\" path\n---\nb\n",
                "not valid YAML",
            ),
            ("---\nname: a\ndescription: b\n", "no blank line or heading"),
            (
                "---\nThis is prose, not YAML: it goes on\nand on\n\nbody\n",
                "does not make it valid",
            ),
            ("no frontmatter at all\n", "only a person can give"),
        ] {
            match repair(text) {
                Repair::NeedsPerson(message) => {
                    assert!(message.contains(why), "{text:?}: {message}")
                }
                other => panic!("{text:?} must be left to a person: {other:?}"),
            }
        }
        assert_eq!(repair("---\nname: a\ntype: user\n---\nb\n"), Repair::Sound);
    }
    use crate::testing::fixtures::real_memory;

    #[test]
    fn reads_top_level_fields() {
        let doc = parse_document(
            "---\nname: Testing policy\ndescription: Integration tests must hit a real DB\ntype: feedback\n---\n\nRule first.\n",
        );
        assert_eq!(doc.frontmatter.name.as_deref(), Some("Testing policy"));
        assert_eq!(
            doc.frontmatter.description.as_deref(),
            Some("Integration tests must hit a real DB")
        );
        assert_eq!(doc.frontmatter.memory_type, Some(MemoryType::Feedback));
        assert!(!doc.frontmatter.nested_type);
        assert_eq!(doc.frontmatter.status, FrontmatterStatus::Valid);
        assert_eq!(doc.body, "Rule first.\n");
    }

    #[test]
    fn reads_nested_metadata_type_of_the_real_2_1_330_files() {
        let text = std::fs::read_to_string(real_memory("claude-code-2.1.330").join("hook-test.md"))
            .expect("fixture");
        let fm = parse_document(&text).frontmatter;
        assert_eq!(fm.name.as_deref(), Some("hook-test"));
        assert_eq!(fm.description.as_deref(), Some("hook test memory"));
        assert_eq!(fm.memory_type, Some(MemoryType::Project));
        assert!(fm.nested_type);
    }

    #[test]
    fn top_level_type_wins_over_nested() {
        let fm = parse_document("---\ntype: user\nmetadata:\n  type: project\n---\n").frontmatter;
        assert_eq!(fm.memory_type, Some(MemoryType::User));
        assert!(!fm.nested_type);
    }

    #[test]
    fn strips_bom_and_reads_crlf() {
        let doc = parse_document("\u{feff}---\r\nname: x\r\ntype: user\r\n---\r\n\r\nbody\r\n");
        assert_eq!(doc.frontmatter.name.as_deref(), Some("x"));
        assert_eq!(doc.frontmatter.memory_type, Some(MemoryType::User));
        assert_eq!(doc.body, "body\n");
    }

    #[test]
    fn unknown_type_is_no_type_but_kept_raw() {
        let fm = parse_document("---\nname: a\ntype: note\n---\n").frontmatter;
        assert_eq!(fm.memory_type, None);
        assert_eq!(fm.raw_type.as_deref(), Some("note"));
    }

    #[test]
    fn malformed_yaml_is_retried_with_special_values_quoted() {
        // `: ` inside a plain value is a YAML error; Claude Code's retry quotes it.
        let fm = parse_document(
            "---\nname: Deploy: the rules\ndescription: use `make deploy` — never @friday\ntype: project\n---\n",
        )
        .frontmatter;
        assert_eq!(fm.status, FrontmatterStatus::Repaired);
        assert_eq!(fm.name.as_deref(), Some("Deploy: the rules"));
        assert_eq!(
            fm.description.as_deref(),
            Some("use `make deploy` — never @friday")
        );
        assert_eq!(fm.memory_type, Some(MemoryType::Project));
    }

    #[test]
    fn retry_escapes_backslashes_and_quotes() {
        let fm =
            parse_document("---\ndescription: path C:\\dir says \"hi\": ok\n---\n").frontmatter;
        assert_eq!(fm.status, FrontmatterStatus::Repaired);
        assert_eq!(
            fm.description.as_deref(),
            Some("path C:\\dir says \"hi\": ok")
        );
    }

    #[test]
    fn hopeless_yaml_reads_as_empty_frontmatter() {
        let doc = parse_document("---\nname: [unclosed\n  - what: {\n\"bad\n---\nbody\n");
        assert!(
            matches!(doc.frontmatter.status, FrontmatterStatus::Malformed { .. }),
            "{:?}",
            doc.frontmatter.status
        );
        assert_eq!(doc.frontmatter.name, None);
        assert_eq!(doc.frontmatter.description, None);
        assert_eq!(doc.body, "body\n");
    }

    #[test]
    fn missing_and_unclosed_blocks() {
        assert_eq!(
            parse_document("# Title\nname: x\n").frontmatter.status,
            FrontmatterStatus::Missing
        );
        assert_eq!(
            parse_document("---\nname: x\n").frontmatter.status,
            FrontmatterStatus::Unclosed
        );
        assert_eq!(
            parse_document("---\nname: x\n").frontmatter.name,
            None,
            "an unclosed block has no metadata"
        );
    }

    #[test]
    fn header_must_close_within_the_line_limit() {
        let mut text = String::from("---\nname: late\n");
        for i in 0..27 {
            text.push_str(&format!("k{i}: v\n"));
        }
        // Closing fence on line 30: accepted.
        let closing_on_30 = format!("{text}---\n");
        assert_eq!(closing_on_30.lines().count(), 30);
        assert_eq!(
            parse_header(&closing_on_30, 30).name.as_deref(),
            Some("late")
        );
        // Closing fence on line 31: unclosed for the scanner.
        let closing_on_31 = format!("{text}k: v\n---\n");
        assert_eq!(
            parse_header(&closing_on_31, 30).status,
            FrontmatterStatus::Unclosed
        );
    }

    #[test]
    fn fast_path_agrees_with_the_yaml_parser() {
        let cases = [
            "name: a b\ndescription: 7 anti-patterns, in 2026-05-14 (≤20) — x/y\ntype: user\n",
            "name: deploy-freeze\nmetadata:\n  node_type: memory\n  type: project\n  modified: 2026-11-22T08:38:52.863Z\n",
            "name: t\nmetadata:\n  type: user\n  originSessionId: 3ed04df3-3a97-4f9b-a2a3-a2a120610cb7\n",
            "originSessionId: 1de82924-c7aa-4e8a-a0de-1ba832d417e1\nname: x\n",
            "name: x\n\ndescription: it's fine\n",
            "other: value\nname: nn\n",
        ];
        for yaml in cases {
            let fast = read_simple_fields(yaml)
                .unwrap_or_else(|| panic!("fast path must accept {yaml:?}"));
            let value: serde_yaml::Value = serde_yaml::from_str(yaml).expect("valid yaml");
            let get = |k: &str| value.get(k).and_then(scalar_text);
            assert_eq!(fast.name, get("name"), "{yaml}");
            assert_eq!(fast.description, get("description"), "{yaml}");
            assert_eq!(fast.top_type, get("type"), "{yaml}");
            assert_eq!(
                fast.nested_type,
                value
                    .get("metadata")
                    .and_then(|m| m.get("type"))
                    .and_then(scalar_text),
                "{yaml}"
            );
            assert_eq!(fast.top_session, get("originSessionId"), "{yaml}");
            assert_eq!(
                fast.nested_session,
                value
                    .get("metadata")
                    .and_then(|m| m.get("originSessionId"))
                    .and_then(scalar_text),
                "{yaml}"
            );
        }
        for tricky in [
            "name: 12\n",
            "description: 1e3\n",
            "metadata:\n  type: 12\n",
            "name: true\n",
            "name: \"quoted\"\n",
            "name: a # comment\n",
            "name: a\nname: b\n",
            "name: a\n  continued\n",
            "description: >\n  folded\n",
        ] {
            assert!(
                read_simple_fields(tricky).is_none(),
                "must defer: {tricky:?}"
            );
        }
    }

    #[test]
    fn non_string_scalars_read_as_their_text() {
        let fm = parse_document("---\nname: 2026\ndescription: true\n---\n").frontmatter;
        assert_eq!(fm.name.as_deref(), Some("2026"));
        assert_eq!(fm.description.as_deref(), Some("true"));
    }

    #[test]
    fn yaml_scalar_quotes_only_when_needed() {
        assert_eq!(yaml_scalar("Testing policy"), "Testing policy");
        assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
        assert_eq!(yaml_scalar("true"), "\"true\"");
        assert_eq!(yaml_scalar("42"), "\"42\"");
        assert_eq!(yaml_scalar("#tag"), "\"#tag\"");
        assert_eq!(yaml_scalar(" padded"), "\" padded\"");
        assert_eq!(yaml_scalar("say \"x\""), "say \"x\"");
        for value in [
            "a: b",
            "true",
            "42",
            "#tag",
            " padded",
            "line\nbreak",
            "q\"\\",
            "@x",
            "- item",
        ] {
            let text = render_new(value, value, MemoryType::User, "");
            let fm = parse_document(&text).frontmatter;
            assert_eq!(fm.status, FrontmatterStatus::Valid, "{text}");
            assert_eq!(fm.name.as_deref(), Some(value), "{text}");
        }
    }

    #[test]
    fn render_new_has_the_canonical_shape() {
        assert_eq!(
            render_new("Testing policy", "Real DB: no mocks", MemoryType::Feedback, "Rule.\n\n"),
            "---\nname: Testing policy\ndescription: \"Real DB: no mocks\"\ntype: feedback\n---\n\nRule.\n"
        );
    }

    fn round_trip_unchanged(text: &str) -> String {
        let doc = parse_document(text);
        let fm = &doc.frontmatter;
        apply_edit(
            text,
            &FieldEdit {
                name: fm.name.as_deref(),
                description: fm.description.as_deref(),
                memory_type: fm.memory_type,
                body: Some(&doc.body),
            },
        )
    }

    #[test]
    fn rewriting_real_fixtures_unchanged_is_byte_identical() {
        let mut seen = 0;
        for project in ["stockerly", "claude-code-2.1.330"] {
            let dir = real_memory(project);
            for entry in std::fs::read_dir(&dir).expect("fixture dir") {
                let path = entry.expect("entry").path();
                if path.file_name().is_some_and(|n| n == "MEMORY.md") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("read fixture");
                assert_eq!(round_trip_unchanged(&text), text, "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen >= 10, "expected the real fixtures, saw {seen}");
    }

    #[test]
    fn unchanged_rewrite_keeps_crlf_bom_and_odd_quoting() {
        let text =
            "\u{feff}---\r\nname: 'quoted'\r\ndescription: \"x\"\r\ntype: user\r\n---\r\nbody\r\n";
        assert_eq!(round_trip_unchanged(text), text);
    }

    #[test]
    fn editing_the_nested_type_keeps_every_other_key() {
        let text = "---\nname: prefers-tabs\ndescription: User prefers tabs\nmetadata:\n  node_type: memory\n  type: feedback\n  originSessionId: 3ed04df3\n  modified: 2026-11-22T08:38:28.099Z\n---\n\nUse tabs.\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                description: Some("User prefers tabs: always"),
                memory_type: Some(MemoryType::User),
                ..FieldEdit::default()
            },
        );
        assert_eq!(
            edited,
            "---\nname: prefers-tabs\ndescription: \"User prefers tabs: always\"\nmetadata:\n  node_type: memory\n  type: user\n  originSessionId: 3ed04df3\n  modified: 2026-11-22T08:38:28.099Z\n---\n\nUse tabs.\n"
        );
    }

    #[test]
    fn changing_a_flat_type_edits_only_that_line() {
        let text = "---\nname: a\ndescription: b\ntype: user\nextra: [1, 2]\n---\n\nbody\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                name: Some("a"),
                description: Some("b"),
                memory_type: Some(MemoryType::Project),
                body: Some("body"),
            },
        );
        assert_eq!(edited, text.replace("type: user", "type: project"));
    }

    #[test]
    fn a_metadata_block_without_type_gets_a_top_level_type() {
        let text = "---\nname: a\ndescription: b\nmetadata:\n  node_type: memory\n---\nx\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                memory_type: Some(MemoryType::User),
                ..FieldEdit::default()
            },
        );
        assert_eq!(
            edited,
            "---\nname: a\ndescription: b\ntype: user\nmetadata:\n  node_type: memory\n---\nx\n"
        );
        assert_eq!(
            parse_document(&edited).frontmatter.memory_type,
            Some(MemoryType::User)
        );
    }

    #[test]
    fn editing_replaces_multiline_values_and_inserts_missing_fields() {
        let text = "---\ndescription: >\n  folded\n  value\nextra: kept\n---\nold body\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                name: Some("nm"),
                description: Some("d"),
                memory_type: Some(MemoryType::Reference),
                body: Some("new body"),
            },
        );
        assert_eq!(
            edited,
            "---\nname: nm\ndescription: d\ntype: reference\nextra: kept\n---\n\nnew body\n"
        );
    }

    #[test]
    fn editing_a_quoted_key_replaces_it_instead_of_adding_a_duplicate() {
        let text = "---\n\"name\": old\n'description': d\n---\nb\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                name: Some("new"),
                ..FieldEdit::default()
            },
        );
        assert_eq!(edited, "---\nname: new\n'description': d\n---\nb\n");
    }

    #[test]
    fn editing_keeps_crlf_line_endings() {
        let text = "---\r\nname: a\r\ndescription: b\r\ntype: user\r\n---\r\n\r\nbody\r\n";
        let edited = apply_edit(
            text,
            &FieldEdit {
                description: Some("c"),
                body: Some("one\ntwo"),
                ..FieldEdit::default()
            },
        );
        assert_eq!(
            edited,
            "---\r\nname: a\r\ndescription: c\r\ntype: user\r\n---\r\n\r\none\r\ntwo\r\n"
        );
    }

    #[test]
    fn a_file_without_frontmatter_gets_one() {
        let edited = apply_edit(
            "Just notes.\n",
            &FieldEdit {
                name: Some("notes"),
                description: Some("Loose notes"),
                memory_type: Some(MemoryType::Project),
                body: None,
            },
        );
        assert_eq!(
            edited,
            "---\nname: notes\ndescription: Loose notes\ntype: project\n---\n\nJust notes.\n"
        );
    }
}
