//! Checks a memory dir against Claude Code's rules (`FORMATS.md` §2–3, §9) and reports findings
//! with stable rule ids:
//!
//! | rule | severity | what |
//! |---|---|---|
//! | `dangling-pointer` | error | an index entry links to a file that does not exist |
//! | `orphan-file` | warning | a topic file no index entry links to, directly or through a topic index the index links to (`index-….md`, see `index::is_topic_index`): Claude Code never sees it unless recall picks it |
//! | `bad-frontmatter` | error | no frontmatter, not closed within the first 30 lines, or not YAML even after Claude Code's auto-quoting retry: Claude Code sees no metadata |
//! | `missing-description` | warning | no `description`: the file still loads, but recall selects memories by their description, so it will hardly ever be recalled |
//! | `unknown-type` | warning | a `type` other than user, feedback, project, reference (read as no type) |
//! | `index-too-long` | error | the index is over 200 lines: the rest is not loaded |
//! | `index-too-large` | error | the index is over 25,000 UTF-16 units: the rest is not loaded |
//! | `long-index-line` | warning | an index line over 150 characters |
//! | `duplicate-memory` | warning | two memories whose description + body are ≥ 85 % similar (word diff ratio) |
//! | `secret` | error | a credential (see `secrets.rs`); the message names the rule |
//! | `case-twin` | warning | two files whose names differ only in case (`Deploy.md`, `deploy.md`) or in how an accent is encoded: one file on macOS and Windows, so a copy or a sync there keeps only one |
//!
//! Every `MEMORY.md` in the dir (the root's, `team/MEMORY.md`, …) is checked, and a topic file
//! belongs to the nearest index above it. Daily logs (`logs/`) are not topic files: they are only
//! scanned for secrets.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use crate::error::Result;
use crate::frontmatter::{self, Frontmatter, FrontmatterStatus};
use crate::index::{
    self, join_rel, parent_of, INDEX_FILE, MAX_ENTRY_CHARS, MAX_INDEX_BYTES, MAX_INDEX_LINES,
};
use crate::memdir::MemoryDir;
use crate::platform::case::CaseIndex;
use crate::scan::{self, SCAN_LINE_LIMIT};
use crate::secrets::{by_line, scan_secrets};

pub(crate) mod duplicates;

pub const DANGLING_POINTER: &str = "dangling-pointer";
pub const ORPHAN_FILE: &str = "orphan-file";
pub const BAD_FRONTMATTER: &str = "bad-frontmatter";
pub const MISSING_DESCRIPTION: &str = "missing-description";
pub const UNKNOWN_TYPE: &str = "unknown-type";
pub const INDEX_TOO_LONG: &str = "index-too-long";
pub const INDEX_TOO_LARGE: &str = "index-too-large";
pub const LONG_INDEX_LINE: &str = "long-index-line";
pub const DUPLICATE_MEMORY: &str = "duplicate-memory";
pub const SECRET: &str = "secret";
pub const INDEX_COMMENT: &str = "index-comment";
pub const UNREADABLE: &str = "unreadable";
pub const STRAY_TEMP_FILE: &str = "stray-temp-file";
pub const CASE_TWIN: &str = "case-twin";

/// Similarity (0–1) from which two memories count as near-duplicates.
pub const DUPLICATE_THRESHOLD: f32 = 0.85;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    /// Relative to the memory dir, `/`-separated.
    pub file: String,
    /// 1-based, where the finding has a line.
    pub line: Option<usize>,
    pub message: String,
    /// The other file, for a rule about two (`duplicate-memory`: the memory this one nearly
    /// duplicates).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub other_file: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LintReport {
    pub findings: Vec<Finding>,
}

impl LintReport {
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// Findings of one rule.
    pub fn by_rule<'a>(&'a self, rule: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.rule == rule)
    }
}

impl MemoryDir {
    /// Lints the whole dir.
    pub fn lint(&self) -> Result<LintReport> {
        lint_dir(self.root())
    }
}

fn finding(
    rule: &'static str,
    severity: Severity,
    file: &str,
    line: Option<usize>,
    message: String,
) -> Finding {
    Finding {
        rule,
        severity,
        file: file.to_string(),
        line,
        message,
        other_file: None,
    }
}

/// Lints the memory dir at `root`; a missing dir has nothing to report.
pub fn lint_dir(root: &Path) -> Result<LintReport> {
    let files = scan::list_paths(root)?;
    // The indexes are checked on a thread of their own while the files are checked on the
    // others: each file is read once, and only the orphan rule needs both.
    let ((mut findings, indexes), checks) = std::thread::scope(|scope| {
        let indexes = scope.spawn(|| lint_indexes(root, &files));
        let checks = scan::map_parallel(&files, Vec::new, |buf, file| check_file(file, buf));
        let indexes = indexes
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (indexes, checks)
    });
    let mut memories = Vec::new();
    for (file, check) in files.iter().zip(checks) {
        findings.extend(check.findings);
        if let Some(memory) = check.memory {
            findings.extend(orphan_finding(&file.rel, &indexes));
            memories.push(memory);
        }
    }
    findings.extend(duplicates::find_duplicates(&memories));
    let by_case = CaseIndex::new(files.iter().map(|f| f.rel.as_str()));
    for file in &files {
        if let Some(twin) = by_case.twin(&file.rel) {
            findings.push(finding(
                CASE_TWIN,
                Severity::Warning,
                &file.rel,
                None,
                format!(
                    "differs {} from {twin:?}: on macOS and Windows they are one file, so a \
                     copy or a sync of this dir there keeps only one; rename one of them",
                    crate::platform::case::how_twins_differ(&file.rel, twin)
                ),
            ));
        }
    }
    for key in crate::disk::stray_temp_files(root)? {
        let pid = key
            .rsplit('/')
            .next()
            .and_then(crate::disk::temp_writer)
            .unwrap_or_default();
        findings.push(finding(
            STRAY_TEMP_FILE,
            Severity::Warning,
            &key,
            None,
            format!(
                "left by a write that was killed (process {pid} is gone); `engram lint --fix` \
                 removes it"
            ),
        ));
    }

    findings
        .sort_by(|a, b| (a.file.as_str(), a.line, a.rule).cmp(&(b.file.as_str(), b.line, b.rule)));
    Ok(LintReport { findings })
}

/// Which files each index links to (by the directory holding it), with the indexes' own
/// findings. Every dir holding files (and the root) may have its own index.
fn lint_indexes(
    root: &Path,
    files: &[scan::ListedFile],
) -> (Vec<Finding>, BTreeMap<String, Option<HashSet<String>>>) {
    let mut dirs: BTreeSet<&str> = files.iter().map(|f| parent_of(&f.rel)).collect();
    dirs.insert("");
    let listed: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let mut findings = Vec::new();
    let mut indexes = BTreeMap::new();
    for dir in dirs {
        let rel = join_rel(dir, INDEX_FILE);
        let bytes = match std::fs::read(root.join(&rel)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                // One finding, not an orphan for every file it might list.
                findings.push(unreadable(&rel, &e.to_string()));
                indexes.insert(dir.to_owned(), None);
                continue;
            }
        };
        if let Some(finding) = invalid_utf8(&rel, &bytes) {
            findings.push(finding);
        }
        let raw = String::from_utf8_lossy(&bytes);
        let mut linked = lint_index(root, &listed, dir, &rel, &raw, &mut findings);
        linked.extend(topic_index_links(
            root,
            &listed,
            dir,
            &linked,
            &mut findings,
        ));
        indexes.insert(dir.to_owned(), Some(linked));
    }
    (findings, indexes)
}

/// What one file contributes: its own findings, and, for a topic file, its text for the
/// duplicate search (`None` for a daily log or a file that could not be read).
struct FileCheck {
    findings: Vec<Finding>,
    memory: Option<duplicates::Candidate>,
}

/// Checks one file, read into `buf` (a buffer reused from file to file): every rule but the
/// orphan rule, which needs the indexes.
fn check_file(file: &scan::ListedFile, buf: &mut Vec<u8>) -> FileCheck {
    let mut findings = Vec::new();
    if let Err(e) = scan::read_file(&file.path, buf) {
        findings.push(unreadable(&file.rel, &e.to_string()));
        return FileCheck {
            findings,
            memory: None,
        };
    }
    findings.extend(invalid_utf8(&file.rel, buf));
    let text = String::from_utf8_lossy(buf);
    for (line, rules) in by_line(&scan_secrets(&text)) {
        findings.push(secret_finding(&file.rel, line, &rules));
    }
    if file.rel.starts_with("logs/") {
        return FileCheck {
            findings,
            memory: None,
        };
    }
    let (frontmatter, body) = frontmatter::parse_document_lending(&text, Some(SCAN_LINE_LIMIT));
    lint_frontmatter(&file.rel, &text, &frontmatter, &mut findings);
    // What the duplicate rule compares: "{description}\n{body}".
    let description = frontmatter.description.as_deref().unwrap_or_default();
    let body = body.trim();
    let mut key = String::with_capacity(description.len() + 1 + body.len());
    key.push_str(description);
    key.push('\n');
    key.push_str(body);
    FileCheck {
        findings,
        memory: Some(duplicates::Candidate::new(file.rel.clone(), key)),
    }
}

fn unreadable(file: &str, why: &str) -> Finding {
    finding(
        UNREADABLE,
        Severity::Error,
        file,
        None,
        format!("cannot be read ({why}): nothing in it can be checked"),
    )
}

/// A finding for text that is not UTF-8, at the line of the first bad byte: Claude Code reads
/// it garbled and Engram cannot edit it.
fn invalid_utf8(file: &str, bytes: &[u8]) -> Option<Finding> {
    let error = std::str::from_utf8(bytes).err()?;
    let at = error.valid_up_to();
    let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
    Some(finding(
        UNREADABLE,
        Severity::Error,
        file,
        Some(line),
        format!(
            "not valid UTF-8 (byte {at}): Claude Code reads it garbled and Engram cannot edit it"
        ),
    ))
}

/// One finding per line, naming every rule that matched on it.
fn secret_finding(file: &str, line: usize, rules: &[&str]) -> Finding {
    finding(
        SECRET,
        Severity::Error,
        file,
        Some(line),
        format!(
            "looks like a credential ({}); never store secrets in memory",
            rules.join(", ")
        ),
    )
}

/// Checks one index; returns the (root-relative) files its entries link to. `listed` are the
/// memory files the walk found, which need no `stat` to be known to exist.
fn lint_index(
    root: &Path,
    listed: &HashSet<&str>,
    dir: &str,
    rel: &str,
    raw: &str,
    findings: &mut Vec<Finding>,
) -> HashSet<String> {
    let loaded = index::load_index_text(raw);
    if loaded.lines > MAX_INDEX_LINES {
        findings.push(finding(
            INDEX_TOO_LONG,
            Severity::Error,
            rel,
            Some(MAX_INDEX_LINES + 1),
            format!(
                "{} lines (limit: {MAX_INDEX_LINES}): Claude Code does not load the rest",
                loaded.lines
            ),
        ));
    }
    if loaded.bytes > MAX_INDEX_BYTES {
        findings.push(finding(
            INDEX_TOO_LARGE,
            Severity::Error,
            rel,
            loaded.cut_from_line,
            format!(
                "{} (limit: {}): Claude Code does not load the rest; move detail into topic files",
                index::format_file_size(loaded.bytes),
                index::format_file_size(MAX_INDEX_BYTES)
            ),
        ));
    }
    for (i, line) in raw.lines().enumerate() {
        // Claude Code strips HTML comments before loading the index: a `<!--` in a hook hides
        // every line up to the next `-->`, entries included.
        if line.contains("<!--") || line.contains("-->") {
            findings.push(finding(
                INDEX_COMMENT,
                Severity::Warning,
                rel,
                Some(i + 1),
                "an HTML comment marker: Claude Code does not load what a comment encloses, \
                 entries included"
                    .to_owned(),
            ));
        }
        let chars = line.chars().count();
        if chars > MAX_ENTRY_CHARS {
            findings.push(finding(
                LONG_INDEX_LINE,
                Severity::Warning,
                rel,
                Some(i + 1),
                format!("{chars} characters (keep index lines under {MAX_ENTRY_CHARS})"),
            ));
        }
    }
    for (line, rules) in by_line(&scan_secrets(raw)) {
        findings.push(secret_finding(rel, line, &rules));
    }
    let mut linked = HashSet::new();
    for entry in &loaded.entries {
        linked.insert(check_entry_target(root, listed, dir, rel, entry, findings));
    }
    linked
}

/// The files listed in the topic indexes (`index-….md` next to the index) that the index in
/// `dir` links to: indexed through them. Their dangling entries are reported.
fn topic_index_links(
    root: &Path,
    listed: &HashSet<&str>,
    dir: &str,
    linked: &HashSet<String>,
    findings: &mut Vec<Finding>,
) -> Vec<String> {
    let mut through = Vec::new();
    for topic_index in linked.iter().filter(|t| parent_of(t) == dir) {
        let Ok(text) = crate::disk::read_text(&root.join(topic_index)) else {
            continue;
        };
        if !index::is_topic_index(topic_index, &text) {
            continue;
        }
        for entry in index::parse_entries(&text) {
            through.push(check_entry_target(
                root,
                listed,
                dir,
                topic_index,
                &entry,
                findings,
            ));
        }
    }
    through
}

/// The file an entry of the index `index_file` (in `dir`) links to, reported as a dangling
/// pointer when it leaves the memory dir or does not exist.
fn check_entry_target(
    root: &Path,
    listed: &HashSet<&str>,
    dir: &str,
    index_file: &str,
    entry: &index::IndexEntry,
    findings: &mut Vec<Finding>,
) -> String {
    let target = join_rel(dir, &entry.file);
    let exists = index::link_stays_inside(&entry.file)
        && (listed.contains(target.as_str()) || root.join(&target).is_file());
    if !exists {
        findings.push(finding(
            DANGLING_POINTER,
            Severity::Error,
            index_file,
            Some(entry.line),
            format!(
                "entry \"{}\" links to {}, which does not exist",
                entry.title, entry.file
            ),
        ));
    }
    target
}

/// The frontmatter rules of a topic file.
fn lint_frontmatter(rel: &str, text: &str, fm: &Frontmatter, findings: &mut Vec<Finding>) {
    let problem = match &fm.status {
        FrontmatterStatus::Missing => Some(
            "no frontmatter: Claude Code sees no name, description or type".to_string(),
        ),
        FrontmatterStatus::Unclosed => Some(format!(
            "frontmatter is not closed by a `---` line within the first {SCAN_LINE_LIMIT} lines"
        )),
        FrontmatterStatus::Malformed { message } => Some(format!(
            "frontmatter is not valid YAML, even with special values quoted ({message}); it reads as empty"
        )),
        FrontmatterStatus::Valid | FrontmatterStatus::Repaired => None,
    };
    match problem {
        Some(message) => findings.push(finding(
            BAD_FRONTMATTER,
            Severity::Error,
            rel,
            Some(1),
            message,
        )),
        None => {
            if fm
                .description
                .as_deref()
                .is_none_or(|d| d.trim().is_empty())
            {
                findings.push(finding(
                    MISSING_DESCRIPTION,
                    Severity::Warning,
                    rel,
                    Some(1),
                    "no description: recall selects memories by their description".to_string(),
                ));
            }
            if let (Some(raw), None) = (&fm.raw_type, fm.memory_type) {
                findings.push(finding(
                    UNKNOWN_TYPE,
                    Severity::Warning,
                    rel,
                    line_of_key(text, "type"),
                    format!("type {raw:?} is not one of user, feedback, project, reference; read as no type"),
                ));
            }
        }
    }
}

/// The orphan rule: a topic file its nearest index (at or above its dir) does not list.
fn orphan_finding(
    rel: &str,
    indexes: &BTreeMap<String, Option<HashSet<String>>>,
) -> Option<Finding> {
    let mut dir = parent_of(rel);
    let governing = loop {
        match indexes.get(dir) {
            Some(Some(linked)) => break Some((dir, linked)),
            // Its index could not be read: whether it lists this file is unknown.
            Some(None) => return None,
            None => {}
        }
        if dir.is_empty() {
            break None;
        }
        dir = parent_of(dir);
    };
    if governing.is_some_and(|(_, linked)| linked.contains(rel)) {
        return None;
    }
    let index_rel = join_rel(governing.map_or("", |(d, _)| d), INDEX_FILE);
    Some(finding(
        ORPHAN_FILE,
        Severity::Warning,
        rel,
        None,
        format!("not listed in {index_rel}: Claude Code only sees it if recall selects it"),
    ))
}

/// The 1-based line of `key:` (top-level or nested) within the frontmatter.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .take(SCAN_LINE_LIMIT)
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.starts_with(':'))
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::{real_memory, Xorshift};
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    fn memory(name: &str, description: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")
    }

    /// (rule, file, line) of every finding, for compact assertions.
    fn summary(report: &LintReport) -> Vec<(&'static str, String, Option<usize>)> {
        report
            .findings
            .iter()
            .map(|f| (f.rule, f.file.clone(), f.line))
            .collect()
    }

    /// Platforms row 12: files that differ only in case are one file on macOS and Windows.
    #[test]
    fn files_differing_only_in_case_are_named_as_case_twins() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let text = memory("Deploy", "how we deploy", "Fly.io");
        write(
            tmp.path(),
            "MEMORY.md",
            "- [Deploy](Deploy.md) — how\n- [deploy](deploy.md) — how\n- [other](other.md) — x\n",
        );
        write(tmp.path(), "Deploy.md", &text);
        write(
            tmp.path(),
            "deploy.md",
            &memory("deploy", "k8s notes", "k8s"),
        );
        write(tmp.path(), "other.md", &memory("other", "x", "y"));
        let report = lint_dir(tmp.path()).expect("lint");
        let twins: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.rule == CASE_TWIN)
            .map(|f| {
                (
                    f.file.as_str(),
                    f.severity,
                    f.message.contains("\"Deploy.md\""),
                )
            })
            .collect();
        assert_eq!(
            twins,
            [
                ("Deploy.md", Severity::Warning, false),
                ("deploy.md", Severity::Warning, true)
            ],
            "{report:?}"
        );
    }

    #[test]
    fn a_clean_dir_has_no_findings() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), "MEMORY.md", "# Index\n- [A](a.md) — a\n");
        write(tmp.path(), "a.md", &memory("a", "About a", "Alpha body."));
        write(
            tmp.path(),
            "logs/2026/01/2026-01-01.md",
            "# 2026-01-01\n\n- 09:00 no frontmatter needed\n",
        );
        let report = lint_dir(tmp.path()).expect("lint");
        assert_eq!(report.findings, vec![]);
        assert!(!report.has_errors());
    }

    #[test]
    fn the_real_fixtures_lint_clean() {
        let stockerly = lint_dir(&real_memory("stockerly")).expect("lint");
        assert!(!stockerly.has_errors(), "{:#?}", stockerly.findings);
        let v330 = lint_dir(&real_memory("claude-code-2.1.330")).expect("lint");
        // Its index lists only deploy-freeze.md: the two files Claude Code wrote in tests are
        // orphans, and nothing else is wrong.
        let mut orphans: Vec<_> = v330.by_rule(ORPHAN_FILE).map(|f| f.file.as_str()).collect();
        orphans.sort();
        assert_eq!(orphans, ["hook-test.md", "prefers-tabs-default.md"]);
        assert_eq!(v330.findings.len(), 2, "{:#?}", v330.findings);
    }

    #[test]
    fn files_a_linked_topic_index_lists_are_indexed_and_its_dangling_lines_reported() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(
            tmp.path(),
            "MEMORY.md",
            "- [Older project memories](index-project.md) — moved out\n- [Notes](index-notes.md) — notes\n",
        );
        write(
            tmp.path(),
            "index-project.md",
            "---\nname: Older project memories\ndescription: moved out\ntype: project\n---\n\n- [A](a.md) — a\n- [Gone](gone.md) — was here\n",
        );
        // Named like one, but a memory: what it links to is not indexed through it.
        write(
            tmp.path(),
            "index-notes.md",
            &memory(
                "notes",
                "Notes",
                "See [B](b.md) for the details.\n- [C](c.md)",
            ),
        );
        for name in ["a", "b", "c"] {
            write(tmp.path(), &format!("{name}.md"), &memory(name, name, name));
        }
        let report = lint_dir(tmp.path()).expect("lint");
        assert_eq!(
            summary(&report),
            [
                (ORPHAN_FILE, "b.md".to_string(), None),
                (ORPHAN_FILE, "c.md".to_string(), None),
                (DANGLING_POINTER, "index-project.md".to_string(), Some(8)),
            ]
        );
    }

    #[test]
    fn dangling_pointers_and_orphans() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(
            tmp.path(),
            "MEMORY.md",
            "# I\n\n- [Gone](gone.md) — was here\n- [A](a.md)\n- [Up](../x.md)\n",
        );
        write(tmp.path(), "a.md", &memory("a", "About a", "alpha"));
        write(tmp.path(), "b.md", &memory("b", "About b", "beta"));
        write(tmp.path(), "team/MEMORY.md", "- [T](t.md)\n");
        write(tmp.path(), "team/t.md", &memory("t", "About t", "tee"));
        write(tmp.path(), "team/u.md", &memory("u", "About u", "you"));
        let report = lint_dir(tmp.path()).expect("lint");
        assert_eq!(
            summary(&report),
            vec![
                (DANGLING_POINTER, "MEMORY.md".to_string(), Some(3)),
                (DANGLING_POINTER, "MEMORY.md".to_string(), Some(5)),
                (ORPHAN_FILE, "b.md".to_string(), None),
                (ORPHAN_FILE, "team/u.md".to_string(), None),
            ]
        );
        let dangling = &report.findings[0];
        assert_eq!(dangling.severity, Severity::Error);
        assert!(dangling.message.contains("gone.md"), "{}", dangling.message);
        assert!(
            report.findings[3].message.contains("team/MEMORY.md"),
            "nearest index named"
        );
        assert!(report.has_errors());
    }

    #[test]
    fn frontmatter_rules() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let padding: String = (0..30).map(|i| format!("k{i}: v\n")).collect();
        let files = [
            ("missing.md", "# Just a heading\n".to_string()),
            ("unclosed.md", format!("---\nname: x\ndescription: y\n{padding}---\n")),
            ("malformed.md", "---\nname: [oops\n  - : {\n---\n".to_string()),
            ("repaired.md", "---\nname: a: b\ndescription: uses `x` @home\ntype: user\n---\nok\n".to_string()),
            ("nodesc.md", "---\nname: n\ntype: user\n---\nbody\n".to_string()),
            ("weird.md", "---\nname: w\ndescription: d\ntype: note\n---\nbody\n".to_string()),
            ("nested.md", "---\nname: s\ndescription: d\nmetadata:\n  node_type: memory\n  type: memo\n---\nb\n".to_string()),
        ];
        let mut index = String::new();
        for (name, text) in &files {
            write(tmp.path(), name, text);
            index.push_str(&format!("- [{name}]({name})\n"));
        }
        write(tmp.path(), "MEMORY.md", &index);
        let report = lint_dir(tmp.path()).expect("lint");
        let mut got: Vec<_> = report
            .findings
            .iter()
            .map(|f| (f.file.as_str(), f.rule, f.severity, f.line))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("malformed.md", BAD_FRONTMATTER, Severity::Error, Some(1)),
                ("missing.md", BAD_FRONTMATTER, Severity::Error, Some(1)),
                ("nested.md", UNKNOWN_TYPE, Severity::Warning, Some(6)),
                ("nodesc.md", MISSING_DESCRIPTION, Severity::Warning, Some(1)),
                ("unclosed.md", BAD_FRONTMATTER, Severity::Error, Some(1)),
                ("weird.md", UNKNOWN_TYPE, Severity::Warning, Some(4)),
            ],
            "repaired.md reads fine in Claude Code and is not reported"
        );
    }

    #[test]
    fn index_size_rules() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut index = String::new();
        for i in 0..210 {
            index.push_str(&format!("- [T{i}](t{i}.md) — {}\n", "h".repeat(134)));
            write(
                tmp.path(),
                &format!("t{i}.md"),
                &memory(
                    &format!("t{i}"),
                    &format!("topic {i}"),
                    &format!("unique {i} {}", "z".repeat(i)),
                ),
            );
        }
        write(tmp.path(), "MEMORY.md", &index);
        let report = lint_dir(tmp.path()).expect("lint");
        let long: Vec<_> = report.by_rule(INDEX_TOO_LONG).collect();
        assert_eq!(long.len(), 1);
        assert_eq!(long[0].line, Some(201));
        assert!(
            long[0].message.starts_with("210 lines (limit: 200)"),
            "{}",
            long[0].message
        );
        let large: Vec<_> = report.by_rule(INDEX_TOO_LARGE).collect();
        assert_eq!(large.len(), 1);
        assert_eq!(large[0].severity, Severity::Error);
        let long_lines: Vec<_> = report.by_rule(LONG_INDEX_LINE).map(|f| f.line).collect();
        assert_eq!(
            long_lines.len(),
            210 - 10,
            "lines for t0..t9 are exactly 150 chars or less"
        );
        assert_eq!(long_lines[0], Some(11));
        assert!(report
            .by_rule(LONG_INDEX_LINE)
            .all(|f| f.severity == Severity::Warning));
    }

    #[test]
    fn near_duplicates_are_named_together() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let body = "Integration tests must hit a real database, never mocks. Why: a mocked \
                    migration passed while prod broke. How to apply: every new test.";
        write(
            tmp.path(),
            "MEMORY.md",
            "- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n",
        );
        write(
            tmp.path(),
            "a.md",
            &memory("a", "Tests use a real DB", body),
        );
        write(
            tmp.path(),
            "b.md",
            &memory(
                "b",
                "Tests use a real DB",
                &body.replace("every new test", "every test"),
            ),
        );
        write(
            tmp.path(),
            "c.md",
            &memory(
                "c",
                "Deploys freeze on Fridays",
                "Nothing ships on Friday; on-call is thin.",
            ),
        );
        let report = lint_dir(tmp.path()).expect("lint");
        let dups: Vec<_> = report.by_rule(DUPLICATE_MEMORY).collect();
        assert_eq!(dups.len(), 1, "{:#?}", report.findings);
        assert_eq!(dups[0].file, "a.md");
        assert!(
            dups[0].message.contains("a.md and b.md"),
            "{}",
            dups[0].message
        );
        assert_eq!(dups[0].severity, Severity::Warning);
    }

    #[test]
    fn near_duplicates_are_found_among_hundreds_of_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // Distinct pseudo-random memories from a small vocabulary, like a large real dir.
        let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
        let mut index = String::new();
        for i in 0..400 {
            let body = rng.words(60);
            write(
                tmp.path(),
                &format!("m{i:03}.md"),
                &memory(&format!("m{i}"), &format!("note {i}"), &body),
            );
            index.push_str(&format!("- [m{i}](m{i:03}.md)\n"));
            if i == 123 {
                // Three words changed, scattered: still ≥ 85 % similar.
                let mut words: Vec<&str> = body.split(' ').collect();
                words[5] = "CHANGED";
                words[30] = "EDITED";
                words[50] = "NEW";
                write(
                    tmp.path(),
                    "copy.md",
                    &memory("copy", "note 123", &words.join(" ")),
                );
                index.push_str("- [copy](copy.md)\n");
            }
        }
        write(tmp.path(), "MEMORY.md", &index);
        let report = lint_dir(tmp.path()).expect("lint");
        let dups: Vec<_> = report
            .by_rule(DUPLICATE_MEMORY)
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(dups.len(), 1, "{dups:#?}");
        assert!(dups[0].starts_with("copy.md and m123.md"), "{}", dups[0]);
    }

    #[test]
    fn a_group_of_copies_is_reported_once_per_extra_copy() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut index = String::new();
        for i in 0..6 {
            write(
                tmp.path(),
                &format!("c{i}.md"),
                &memory("same", "the same note", "identical body text here"),
            );
            index.push_str(&format!("- [c{i}](c{i}.md)\n"));
        }
        write(tmp.path(), "MEMORY.md", &index);
        let report = lint_dir(tmp.path()).expect("lint");
        assert_eq!(
            report.by_rule(DUPLICATE_MEMORY).count(),
            5,
            "{:#?}",
            report.findings
        );
    }

    #[test]
    fn secrets_are_errors_with_their_line() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let key = format!("AKIA{}", "QWERTY234567ABCD");
        write(tmp.path(), "MEMORY.md", "- [A](a.md)\n");
        write(
            tmp.path(),
            "a.md",
            &memory("a", "Creds", &format!("line one\nkey: {key}")),
        );
        write(
            tmp.path(),
            "logs/2026/01/2026-01-01.md",
            &format!("# d\n\n- 09:00 {key}\n"),
        );
        let report = lint_dir(tmp.path()).expect("lint");
        let secrets: Vec<_> = report
            .by_rule(SECRET)
            .map(|f| (f.file.as_str(), f.line, f.severity))
            .collect();
        assert_eq!(
            secrets,
            [
                ("a.md", Some(8), Severity::Error),
                ("logs/2026/01/2026-01-01.md", Some(3), Severity::Error)
            ]
        );
        // `key: AKIA…` is an AWS key id, and a generic assignment of a secret to `key`: one
        // finding for the line, naming both.
        let messages: Vec<&str> = report.by_rule(SECRET).map(|f| f.message.as_str()).collect();
        assert!(
            messages[0].contains("(aws-access-token, generic-api-key)"),
            "{messages:?}"
        );
        assert!(messages[1].contains("(aws-access-token)"), "{messages:?}");
        assert!(report.has_errors());
    }

    #[test]
    fn findings_serialize_for_adapters() {
        let f = finding(ORPHAN_FILE, Severity::Warning, "a.md", None, "m".into());
        let json = serde_json::to_value(&f).expect("json");
        assert_eq!(json["rule"], "orphan-file");
        assert_eq!(json["severity"], "warning");
        assert!(json["line"].is_null());
    }
}
