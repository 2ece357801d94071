//! When a session wrote a file: the timestamp of the last `Write`/`Edit` tool use naming it, read
//! in one pass over the transcript in bounded memory. A dream dates a memory's relative words
//! ("yesterday") from the moment its session wrote them, which survives what an mtime does not
//! (a copy, a checkout, a sync).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::LineReader;
use crate::error::{Error, Result};

/// What one transcript says about when some files were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionWrites {
    /// The time of the last tool use writing each wanted path that the session wrote.
    pub last_write: HashMap<String, DateTime<Utc>>,
    /// The newest `timestamp` of any entry: when the session was last active.
    pub last_activity: Option<DateTime<Utc>>,
}

/// Tools whose input names the file they change.
const WRITING_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Reads the transcript at `path` once and finds, for each of `wanted` (absolute paths as Claude
/// Code's tools name them), when the session last wrote it. Lines that are not JSON are skipped,
/// as every transcript reader here does.
pub fn session_writes(path: &Path, wanted: &[String]) -> Result<SessionWrites> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, file));
    let mut found = SessionWrites::default();
    while let Some(line) = reader.next_line().map_err(|e| Error::io(path, e))? {
        let Some(time) = timestamp_of(line.bytes) else {
            continue;
        };
        found.last_activity = found.last_activity.max(Some(time));
        // Only a line naming a wanted file is worth parsing.
        if !wanted
            .iter()
            .any(|w| memchr::memmem::find(line.bytes, w.as_bytes()).is_some())
        {
            continue;
        }
        let Ok(entry) = serde_json::from_slice::<Value>(line.bytes) else {
            continue;
        };
        let Some(blocks) = entry.pointer("/message/content").and_then(Value::as_array) else {
            continue;
        };
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("tool_use")
                || !block
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| WRITING_TOOLS.contains(&n))
            {
                continue;
            }
            let target = ["file_path", "notebook_path", "path"]
                .iter()
                .find_map(|k| block.get("input")?.get(k)?.as_str());
            if let Some(target) = target.filter(|t| wanted.iter().any(|w| w == t)) {
                let slot = found.last_write.entry(target.to_owned()).or_insert(time);
                *slot = (*slot).max(time);
            }
        }
    }
    Ok(found)
}

/// The entry's `"timestamp"`, found without parsing the line (Claude Code writes it as a plain
/// ISO string).
fn timestamp_of(line: &[u8]) -> Option<DateTime<Utc>> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let start = memchr::memmem::find(line, KEY)? + KEY.len();
    let len = memchr::memchr(b'"', &line[start..])?;
    let text = std::str::from_utf8(&line[start..start + len]).ok()?;
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_write_of_each_wanted_file_and_the_last_activity_are_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        let write = |time: &str, tool: &str, file: &str| {
            format!(
                r#"{{"type":"assistant","timestamp":"{time}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"t","name":"{tool}","input":{{"file_path":"{file}","content":"x"}}}}]}}}}"#
            )
        };
        let lines = [
            write("2026-11-20T09:00:00.000Z", "Write", "/m/a.md"),
            write("2026-11-21T23:30:00.000Z", "Edit", "/m/a.md"),
            write("2026-11-21T10:00:00.000Z", "Read", "/m/b.md"),
            "not json, a truncated line naming /m/b.md".to_owned(),
            r#"{"type":"user","timestamp":"2026-11-22T08:00:00Z","message":{"role":"user","content":"bye"}}"#.to_owned(),
        ];
        std::fs::write(&path, lines.join("\n")).expect("write");
        let found =
            session_writes(&path, &["/m/a.md".to_owned(), "/m/b.md".to_owned()]).expect("read");
        let at = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .expect("time")
                .with_timezone(&Utc)
        };
        assert_eq!(
            found.last_write.get("/m/a.md"),
            Some(&at("2026-11-21T23:30:00Z"))
        );
        assert_eq!(found.last_write.get("/m/b.md"), None, "a Read is no write");
        assert_eq!(found.last_activity, Some(at("2026-11-22T08:00:00Z")));
    }
}
