//! Pasted material in a prompt: the lines a person copied from a terminal, a log, a debugger or
//! a file — stack traces, compiler errors, logs, diffs, git logs, file trees, JSON, tables,
//! indented code — as opposed to the sentences they wrote. The offline extractor reads only the
//! sentences: a pasted line can say "never retry" or "remember the last project" without anyone
//! having said it.
//!
//! Judged one line at a time from its shape (no line of prose looks like these), plus one rule
//! for blocks: after a line that ends with ":" and introduces pasted material, the rest of its
//! block (up to a blank line) is that material too, whatever each line looks like.

/// Whether `line` (as typed, indentation included) is machine output or code rather than a
/// sentence someone wrote.
pub fn is_pasted_line(line: &str) -> bool {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return false;
    }
    // Indented lines: code, stack frames, the body of a commit, a nested tree.
    if line.starts_with('\t') || line.starts_with("    ") {
        return true;
    }
    if !trimmed.chars().any(char::is_alphabetic) {
        return true; // "}", "----", "|---|---|", "."
    }
    const STARTS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        "|",
        "+",
        "@@",
        "---",
        "diff --git",
        "index ",
        "commit ",
        "Author:",
        "Date:",
        "Merge:",
        "$ ",
        "# ",
        "//",
        "/*",
        "-->",
        "Traceback ",
        "Caused by:",
        "├",
        "└",
        "│",
        "File \"",
        "thread '",
        "Exception in thread",
        "stack backtrace",
    ];
    if STARTS.iter().any(|s| trimmed.starts_with(s)) {
        return true;
    }
    // A JSON member (`"build": "ok",`); a stack frame (`at Array.map (<anonymous>)`), not "at
    // least once a week".
    if trimmed.starts_with('"') && trimmed.contains("\":") {
        return true;
    }
    if let Some(frame) = trimmed.strip_prefix("at ") {
        let callee = frame.split_whitespace().next().unwrap_or("");
        if callee.contains(['.', '(', '<']) {
            return true;
        }
    }
    // A diff's removed line ("-    let x", "-port: 80"), not a bullet ("- we deploy").
    if let Some(rest) = trimmed.strip_prefix('-') {
        if !rest.starts_with(' ') || rest.starts_with("  ") {
            return true;
        }
    }
    let first = trimmed.split_whitespace().next().unwrap_or("");
    if is_commit_hash(first) || starts_with_timestamp(trimmed) || is_error_name(first) {
        return true;
    }
    // A log level among the first words: "2026-… INFO server: …", "[main] WARN db: …".
    if trimmed.split_whitespace().take(3).any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        matches!(
            w,
            "INFO" | "WARN" | "WARNING" | "ERROR" | "DEBUG" | "TRACE" | "FATAL"
        )
    }) {
        return true;
    }
    // A numbered frame ("0: rust_begin_unwind"), a source position ("src/main.rs:14:5"), code.
    if first.ends_with(':') && first[..first.len() - 1].chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if has_source_position(trimmed)
        || ["::", "->", "=>", "();", "!=", "=="]
            .iter()
            .any(|s| trimmed.contains(s))
    {
        return true;
    }
    let symbols = trimmed
        .chars()
        .filter(|c| {
            matches!(
                c,
                '{' | '}' | '[' | ']' | '<' | '>' | '=' | ';' | '|' | '\\' | '$'
            )
        })
        .count();
    symbols * 10 > trimmed.chars().count()
}

/// A git commit hash as `git log --oneline` prints it: 7 to 40 hex digits, at least one a digit
/// (so that words like "added" or "decade" are not taken for one).
fn is_commit_hash(word: &str) -> bool {
    (7..=40).contains(&word.len())
        && word.chars().all(|c| c.is_ascii_hexdigit())
        && word.chars().any(|c| c.is_ascii_digit())
}

/// "2026-11-23…", "10:12:44 …", "[2026-…", "[10:12:44]": the start of a log line.
fn starts_with_timestamp(line: &str) -> bool {
    let line = line.trim_start_matches('[');
    let digits =
        |s: &str, n: usize| s.len() >= n && s.as_bytes()[..n].iter().all(u8::is_ascii_digit);
    let bytes = line.as_bytes();
    (digits(line, 4) && bytes.get(4) == Some(&b'-') && digits(line.get(5..).unwrap_or(""), 2))
        || (digits(line, 2)
            && bytes.get(2) == Some(&b':')
            && digits(line.get(3..).unwrap_or(""), 2))
}

/// The name of an error as a runtime prints it: `TypeError:`, `psycopg2.errors.UndefinedTable:`,
/// `error[E0502]:`, `java.lang.NullPointerException` — a word no sentence starts with.
fn is_error_name(word: &str) -> bool {
    let name = word.trim_end_matches(':');
    if name.is_empty() {
        return false;
    }
    let camel_inside = name
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let dotted = name.contains('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._".contains(c));
    let code_mark = name.contains(['[', '(', '_']);
    (word.ends_with(':') && (camel_inside || dotted || code_mark))
        || ((name.ends_with("Error") || name.ends_with("Exception")) && camel_inside)
}

/// `file.ext:12` somewhere in the line: where a trace or a compiler points.
fn has_source_position(line: &str) -> bool {
    line.split_whitespace().any(|word| {
        let word = word.trim_matches(|c: char| "()<>,'\"`".contains(c));
        let mut parts = word.split(':');
        let path = parts.next().unwrap_or("");
        let line_number = parts.next().unwrap_or("");
        path.rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty() && ext.len() <= 5)
            && !line_number.is_empty()
            && line_number.chars().all(|c| c.is_ascii_digit())
    })
}

/// The lines of `text` someone wrote, without pasted material. A line that ends with ":" and is
/// followed in its block by a pasted line introduces that block: everything after it up to the
/// next blank line is left out, and the line says so. A line that ends with ":" followed by
/// lines of prose carries them as its items (a list: "For future reference:" then "- …" lines),
/// for the caller to judge what the introduction asked for.
pub fn prose_lines(text: &str) -> Vec<ProseLine> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut at = 0;
    let mut after_pasted = false;
    while at < lines.len() {
        let line = lines[at];
        at += 1;
        if line.trim().is_empty() {
            continue;
        }
        if is_pasted_line(line) {
            after_pasted = true;
            continue;
        }
        // Only an introduction looks ahead, and then skips what it looked at: linear in the text.
        let block_end = || {
            lines[at..]
                .iter()
                .position(|l| l.trim().is_empty())
                .map_or(lines.len(), |p| at + p)
        };
        let block_end = if line.trim_end().ends_with(':') {
            block_end()
        } else {
            at
        };
        if at < block_end {
            let following = &lines[at..block_end];
            if following.iter().any(|l| is_pasted_line(l)) {
                // An introduction of pasted material: the material is never prose.
                out.push(ProseLine {
                    text: line.trim().to_owned(),
                    items: Vec::new(),
                    introduces_pasted: true,
                    after_pasted,
                });
                after_pasted = true;
            } else {
                out.push(ProseLine {
                    text: line.trim().to_owned(),
                    items: following.iter().map(|l| l.trim().to_owned()).collect(),
                    introduces_pasted: false,
                    after_pasted,
                });
                after_pasted = false;
            }
            at = block_end;
            continue;
        }
        out.push(ProseLine {
            text: line.trim().to_owned(),
            items: Vec::new(),
            introduces_pasted: false,
            after_pasted,
        });
        after_pasted = false;
    }
    out
}

/// A line of prose, and what it introduces when it ends with ":".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProseLine {
    pub text: String,
    /// The lines of prose it introduces (its block after it), when it ends with ":".
    pub items: Vec<String>,
    /// It ends with ":" and pasted material follows it in its block.
    pub introduces_pasted: bool,
    /// Pasted material came between it and the line of prose before it.
    pub after_pasted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_output_is_told_from_sentences() {
        for pasted in [
            "    at renderRow (src/table/Row.tsx:42:17)",
            "TypeError: Cannot read properties of undefined (reading 'id')",
            "psycopg2.errors.UndefinedTable: relation \"events_2026\" does not exist",
            "error[E0502]: cannot borrow `self.items` as mutable",
            "  --> src/store.rs:41:9",
            "thread 'main' panicked at src/main.rs:14:5:",
            "Exception in thread \"main\" java.lang.NullPointerException: oops",
            "commit 3f2a9c1d5e8b7a6c4d3e2f1a0b9c8d7e6f5a4b3c",
            "a1b2c3d Always retry uploads twice",
            "2026-11-23T10:12:44Z INFO  server: listening on 0.0.0.0:8080",
            "diff --git a/src/lib.rs b/src/lib.rs",
            "-  port: 8080",
            "+  port: 9090",
            "@@ -3,4 +3,4 @@",
            "├── main.rs",
            "| /search  | 41  | 380 |",
            "{\"user_id\": 4411, \"always\": true}",
            "}",
            "called `Option::unwrap()` on a `None` value",
        ] {
            assert!(is_pasted_line(pasted), "pasted: {pasted}");
        }
        for prose in [
            "Remember that we deploy with Fly.io, never Heroku.",
            "- we deploy on Fridays",
            "Note: all timestamps in the database are stored in UTC.",
            "FYI: the load balancer terminates TLS, so the app only sees plain HTTP.",
            "Never use unwrap() in library code.",
            "For future reference: the staging URL is https://staging.example.com.",
            "Please remember: Grafana dashboards are at grafana.internal/d/core.",
            "I added a decade of data yesterday",
        ] {
            assert!(!is_pasted_line(prose), "prose: {prose}");
        }
    }

    #[test]
    fn what_an_introduction_introduces_is_told_apart() {
        let lines = prose_lines(
            "Keep this log in mind:\n2026-11-23T10:12:44Z WARN db: slow\nnote: run with RUST_BACKTRACE=full\n\nFor future reference:\n- we deploy on Fridays\n- staging resets Mondays",
        );
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].introduces_pasted, "{lines:?}");
        assert_eq!(
            lines[1].items,
            ["- we deploy on Fridays", "- staging resets Mondays"]
        );
    }
}
