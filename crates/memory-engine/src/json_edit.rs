//! Format-preserving edits of a JSON document: parse it into spans (where each value, member and
//! element starts and ends in the text), then splice text in or out, so every byte Engram does
//! not own stays exactly as the user (or Claude Code) wrote it — key order, indentation, spacing,
//! line endings, escapes and number forms included.
//!
//! Inserted values are rendered in the document's own style: its newline (`\n` or `\r\n`), its
//! indentation unit (detected from the first indented line; two spaces when there is none), the
//! indentation of the siblings they join, its `": "` or `":"` member separator, and compact on one
//! line when the container they join is on one line. Removal is the exact inverse of insertion:
//! removing the element or member just appended gives back the original bytes.

use serde_json::Value;

/// A parsed JSON value and where it lies in the text (`start..end`, bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string (its decoded value) — the one scalar Engram reads.
    String(String),
    /// Numbers, booleans, null.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(elements) => Some(elements),
            _ => None,
        }
    }

    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().find(|m| m.key == key)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Parses a whole document (one value, whitespace around it allowed; a UTF-8 BOM is skipped).
/// The error says what is wrong and at which line.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut parser = Parser {
        text: text.as_bytes(),
        pos: 0,
    };
    if text.starts_with('\u{feff}') {
        parser.pos = 3;
    }
    parser.skip_ws();
    let node = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != parser.text.len() {
        return Err(parser.error("unexpected text after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

/// Nesting deeper than this is refused rather than risk the stack.
const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn error(&self, message: &str) -> String {
        let line = self.text[..self.pos.min(self.text.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        format!("line {line}: {message}")
    }

    fn skip_ws(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.text.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", byte as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let start = self.pos;
        let kind = match self.text.get(self.pos) {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b't') => self.literal("true")?,
            Some(b'f') => self.literal("false")?,
            Some(b'n') => self.literal("null")?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("expected a JSON value")),
            None => return Err(self.error("unexpected end of the document")),
        };
        Ok(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    fn object(&mut self, depth: usize) -> Result<Kind, String> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.skip_ws();
        if self.text.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_ws();
            let key_start = self.pos;
            if self.text.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected a member name"));
            }
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, String> {
        self.expect(b'[')?;
        let mut elements = Vec::new();
        self.skip_ws();
        if self.text.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Kind::Array(elements));
        }
        loop {
            self.skip_ws();
            elements.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Kind::Array(elements));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            match self.text.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => self.pos += 2,
                Some(b) if *b < 0x20 => return Err(self.error("control character in a string")),
                Some(_) => self.pos += 1,
                None => return Err(self.error("unterminated string")),
            }
        }
        let raw = std::str::from_utf8(&self.text[start..self.pos.min(self.text.len())])
            .map_err(|_| self.error("invalid UTF-8"))?;
        serde_json::from_str(raw).map_err(|e| self.error(&format!("bad string: {e}")))
    }

    fn literal(&mut self, word: &str) -> Result<Kind, String> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(Kind::Other)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn number(&mut self) -> Result<Kind, String> {
        let start = self.pos;
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.pos += 1;
        }
        let raw = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        serde_json::from_str::<serde_json::Number>(raw)
            .map(|_| Kind::Other)
            .map_err(|_| self.error("malformed number"))
    }
}

/// How the document writes itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    pub newline: &'static str,
    pub indent: String,
    /// Between a member's name and its value: `": "` or `":"`.
    pub colon: String,
}

impl Style {
    pub fn detect(text: &str, root: &Node) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let indent = text
            .split('\n')
            .skip(1)
            .map(|line| {
                let body = line.trim_start_matches([' ', '\t']);
                &line[..line.len() - body.len()]
            })
            .find(|ws| !ws.is_empty())
            .unwrap_or("  ")
            .to_owned();
        let colon = root
            .members()
            .and_then(|m| m.first())
            .map(|m| {
                let key_end = m.key_start + json_string_len(&text[m.key_start..]);
                text[key_end..m.value.start].to_owned()
            })
            .filter(|c| c.trim() == ":" && !c.contains('\n'))
            .unwrap_or_else(|| ": ".to_owned());
        Style {
            newline,
            indent,
            colon,
        }
    }

    /// `value` rendered in this style, its continuation lines starting with `base`; compact
    /// (one line, the document's separator) when `compact`.
    pub fn render(&self, value: &Value, base: &str, compact: bool) -> String {
        if compact {
            let text = value.to_string();
            return if self.colon == ":" {
                text
            } else {
                compact_with_spaces(value)
            };
        }
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        if serde::Serialize::serialize(value, &mut serializer).is_err() {
            return value.to_string();
        }
        let text = String::from_utf8_lossy(&out).into_owned();
        let text = if self.colon == ": " {
            text
        } else {
            // serde_json writes `": "`; a document written with `":"` gets the same.
            rewrite_colons(&text, &self.colon)
        };
        text.replace('\n', &format!("{}{base}", self.newline))
    }
}

/// `{"a": 1, "b": [2, 3]}` — compact with a space after `:` and `,`, as a one-line container in
/// a pretty document usually is.
fn compact_with_spaces(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), compact_with_spaces(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact_with_spaces).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// Replaces the `": "` after every member name in serde_json's pretty output with `colon`.
fn rewrite_colons(text: &str, colon: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        if body.starts_with('"') {
            let name_len = json_string_len(body);
            if body[name_len..].starts_with(": ") {
                let indent = &line[..line.len() - body.len()];
                out.push_str(indent);
                out.push_str(&body[..name_len]);
                out.push_str(colon);
                out.push_str(&body[name_len + 2..]);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// The byte length of the JSON string literal at the start of `text`.
fn json_string_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The whitespace at the start of the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let body = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - body.len()]
}

/// The spans of a container's children: members (name to value end) or elements.
fn child_spans(container: &Node) -> Vec<(usize, usize)> {
    match &container.kind {
        Kind::Object(members) => members.iter().map(|m| (m.key_start, m.value.end)).collect(),
        Kind::Array(elements) => elements.iter().map(|e| (e.start, e.end)).collect(),
        _ => Vec::new(),
    }
}

/// Appends a child (`child` is the already-rendered text of a member `"k": v` or an element)
/// to `container`, returning the new document. `render` gets the indentation the child's own
/// continuation lines must start with, and whether the container is on one line.
pub fn append_child(
    text: &str,
    container: &Node,
    style: &Style,
    render: impl Fn(&str, bool) -> String,
) -> String {
    let children = child_spans(container);
    let (Some(&(first_start, first_end)), Some(&(_, last_end))) =
        (children.first(), children.last())
    else {
        let outer = line_indent(text, container.start);
        let indent = format!("{outer}{}", style.indent);
        let child = render(&indent, false);
        return splice(
            text,
            container.start + 1,
            container.end - 1,
            &format!("{nl}{indent}{child}{nl}{outer}", nl = style.newline),
        );
    };
    let between = &text[container.start + 1..first_start];
    if between.contains('\n') {
        let indent = line_indent(text, first_start);
        let child = render(indent, false);
        return splice(
            text,
            last_end,
            last_end,
            &format!(",{}{indent}{child}", style.newline),
        );
    }
    // A container on one line stays on one line, spaced like its first separator.
    let child = render("", true);
    let spaced = if children.len() > 1 {
        text[first_end..].starts_with(", ")
    } else {
        between.starts_with(' ')
    };
    let sep = if spaced { ", " } else { "," };
    splice(text, last_end, last_end, &format!("{sep}{child}"))
}

/// Removes child `index` of `container` with the separator and whitespace that came with it:
/// the exact inverse of [`append_child`] for a last child, and an empty `{}` / `[]` for an only
/// child.
pub fn remove_child(text: &str, container: &Node, index: usize) -> String {
    let children = child_spans(container);
    if children.len() <= 1 {
        return splice(text, container.start + 1, container.end - 1, "");
    }
    if index > 0 {
        let (_, prev_end) = children[index - 1];
        let (_, end) = children[index];
        splice(text, prev_end, end, "")
    } else {
        let (start, _) = children[0];
        let (next_start, _) = children[1];
        splice(text, start, next_start, "")
    }
}

/// Replaces the text of `node`.
pub fn replace_node(text: &str, node: &Node, replacement: &str) -> String {
    splice(text, node.start, node.end, replacement)
}

fn splice(text: &str, start: usize, end: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..start]);
    out.push_str(insert);
    out.push_str(&text[end..]);
    out
}

/// A member `"key": value` rendered in `style`.
pub fn render_member(style: &Style, key: &str, value: &Value, base: &str, compact: bool) -> String {
    format!(
        "{}{}{}",
        Value::String(key.to_owned()),
        style.colon,
        style.render(value, base, compact)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(text: &str) -> Node {
        parse(text).expect("valid JSON")
    }

    #[test]
    fn parses_spans_and_strings() {
        let text = "{\n  \"a\": [1, \"x\\\"y\"],\n  \"b\": {}\n}\n";
        let node = root(text);
        let a = node.member("a").expect("a");
        assert_eq!(&text[a.value.start..a.value.end], "[1, \"x\\\"y\"]");
        assert_eq!(a.value.elements().expect("array")[1].as_str(), Some("x\"y"));
        assert!(parse("{\"a\": }").expect_err("bad").starts_with("line 1"));
        assert!(parse("{} x").is_err());
        assert!(parse("[1,]").is_err());
    }

    #[test]
    fn appending_then_removing_gives_back_the_bytes() {
        for text in [
            "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n",
            "{\r\n\t\"model\": \"opus\"\r\n}",
            "{\"model\":\"opus\",\"x\":[1,2]}",
            "{ \"model\": \"opus\" }",
            "{}",
            "{\n}\n",
        ] {
            let node = root(text);
            let style = Style::detect(text, &node);
            let value =
                json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "e"}]}]});
            let added = append_child(text, &node, &style, |base, compact| {
                render_member(&style, "hooks", &value, base, compact)
            });
            let reparsed = root(&added);
            let hooks = reparsed.member("hooks").expect("added");
            let back: Value =
                serde_json::from_str(&added[hooks.value.start..hooks.value.end]).expect("valid");
            assert_eq!(back, value, "{added}");
            let index = reparsed
                .members()
                .expect("object")
                .iter()
                .position(|m| m.key == "hooks")
                .expect("index");
            let removed = remove_child(&added, &reparsed, index);
            if text.trim() == "{}" || text.trim() == "{\n}" {
                assert_eq!(removed.trim(), "{}", "{text:?}");
            } else {
                assert_eq!(removed, text, "round trip of {text:?} via {added:?}");
            }
        }
    }

    #[test]
    fn appended_members_follow_the_documents_indentation() {
        let text = "{\n    \"a\": 1\n}\n";
        let node = root(text);
        let style = Style::detect(text, &node);
        assert_eq!(style.indent, "    ");
        let added = append_child(text, &node, &style, |base, compact| {
            render_member(&style, "b", &json!({"c": [1]}), base, compact)
        });
        assert_eq!(
            added,
            "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": [\n            1\n        ]\n    }\n}\n"
        );
    }

    #[test]
    fn removing_a_first_or_middle_child_keeps_the_rest_intact() {
        let text = "[\n  1,\n  2,\n  3\n]";
        let node = root(text);
        assert_eq!(remove_child(text, &node, 0), "[\n  2,\n  3\n]");
        assert_eq!(remove_child(text, &node, 1), "[\n  1,\n  3\n]");
        assert_eq!(remove_child(text, &node, 2), "[\n  1,\n  2\n]");
    }
}
