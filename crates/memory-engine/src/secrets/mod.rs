//! Secret detection before a memory is saved or shared (`FORMATS.md` §9), with gitleaks' own
//! rules: its generated default config, vendored unchanged with its licence and version
//! (`gitleaks/`), plus Engram's additions in the same format (`engram.toml`: Claude Code's own
//! `sk-ant-oat01-` / `sk-ant-ort01-` login tokens). Every finding is named by its rule id.
//!
//! A scan follows gitleaks' detector: keywords prefilter the rules (Aho-Corasick, case-insensitive),
//! each triggered rule's regex runs over the text, the secret is the rule's `secretGroup` (else the
//! first non-empty capture group, else the whole match), a finding whose secret's Shannon entropy
//! is not above the rule's `entropy` is dropped, and the global and rule allowlists (regexes on the
//! secret, match or line; stopwords in the secret) excuse findings. Rules with a `path` run only on
//! files whose path matches (a path-only rule reports the file itself).
//!
//! Deliberately stricter than gitleaks, because these files are about to be shared: path and commit
//! allowlists never excuse a finding (`rules::Allowlist`), and a `gitleaks:allow` comment is not
//! honoured.
//!
//! As gitleaks does by default, base64-, hex- and percent-encoded text is decoded and scanned
//! again, up to five levels deep (`decode`): a secret found in decoded text is reported on the
//! line of its encoded form, and redaction replaces the whole encoded value.
//!
//! Used on every write into team memory (refused, rule named), on team push and pull (file
//! skipped, reported) and on snapshot publish, each of which scans a file's path as well as its
//! content ([`scan_shared_file`]); by the `secret` lint rule; and over any tree on demand
//! (`engram secrets scan`, transcripts included: read only). [`redact`] replaces each secret with `[REDACTED:<rule>]`,
//! for a change set the user reviews.

mod decode;
mod rules;

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

pub use rules::{all_rules, skipped_rules, Rule, RuleOrigin, GITLEAKS_VERSION};
use rules::{AllowTarget, Allowlist};

/// A secret found in text: the rule that matched and the 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMatch {
    pub rule: &'static str,
    pub line: usize,
}

/// A secret found in a file by [`scan_tree`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretFinding {
    pub file: PathBuf,
    pub line: usize,
    pub rule: &'static str,
}

/// One finding with where its secret is, in bytes of the scanned text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    rule: &'static str,
    line: usize,
    secret: Range<usize>,
}

/// Every secret in `text`, at most one per rule and line, in line order. Rules that need a file
/// path do not run (see [`scan_file`]).
pub fn scan_secrets(text: &str) -> Vec<SecretMatch> {
    matches_of(find(text.as_bytes(), None, true))
}

/// Every secret [`redact`] would replace, in content that need not be UTF-8 text (what a
/// redaction cannot carry, it names).
pub fn redactable_secrets(content: &[u8]) -> Vec<SecretMatch> {
    let mut found = find(content, None, true);
    found.retain(|f| !f.secret.is_empty());
    matches_of(found)
}

/// Every secret in the content of a file at `path` (its name as the rules see it: relative to
/// the scanned root, `/`-separated), at most one per rule and line, in line order.
pub fn scan_file(path: &str, content: &[u8]) -> Vec<SecretMatch> {
    matches_of(find(content, Some(path), true))
}

/// The rules that match a file's path (relative to the shared folder, `/`-separated) read as
/// text with the content rules: a folder or file named after a token (`ghp_…/`,
/// `AKIA….md`) is shared as surely as one written inside the file — it goes into the remote's
/// tree and into the index line that links it. Each name is scanned on a line of its own, and
/// again without its extension, so a rule whose secret must end at a space, a quote or the end
/// of the line still sees `<token>.md` end. Each rule once, sorted.
pub fn scan_path(path: &str) -> Vec<&'static str> {
    let mut text = String::with_capacity(path.len() * 2);
    for name in path.split(['/', '\\']).filter(|name| !name.is_empty()) {
        text.push_str(name);
        text.push('\n');
        if let Some((stem, _extension)) = name.rsplit_once('.') {
            text.push_str(stem);
            text.push('\n');
        }
    }
    let mut rules: Vec<&'static str> = scan_secrets(&text).into_iter().map(|m| m.rule).collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

/// A secret in a file about to be shared, and where: its path or a line of its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedSecret {
    pub rule: &'static str,
    /// The 1-based line; `None` when the secret is in the file's path (a folder or file name).
    pub line: Option<usize>,
}

impl std::fmt::Display for SharedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line} matches secret rule {}", self.rule),
            None => write!(f, "its path matches secret rule {}", self.rule),
        }
    }
}

/// Every secret in a file about to be shared (team memory written, pushed or pulled; an agent
/// snapshot published): [`scan_path`] over `path`, relative to the shared folder, then
/// [`scan_file`] over `content`. The path's findings come first.
pub fn scan_shared_file(path: &str, content: &[u8]) -> Vec<SharedSecret> {
    let in_path = scan_path(path)
        .into_iter()
        .map(|rule| SharedSecret { rule, line: None });
    let in_content = scan_file(path, content).into_iter().map(|m| SharedSecret {
        rule: m.rule,
        line: Some(m.line),
    });
    in_path.chain(in_content).collect()
}

fn matches_of(found: Vec<Found>) -> Vec<SecretMatch> {
    let mut matches: Vec<SecretMatch> = found
        .into_iter()
        .map(|f| SecretMatch {
            rule: f.rule,
            line: f.line,
        })
        .collect();
    matches.sort_by_key(|m| (m.line, m.rule));
    matches.dedup();
    matches
}

/// Matches (as [`scan_secrets`] orders them) grouped by line: each line once, with its rules.
pub fn by_line(matches: &[SecretMatch]) -> Vec<(usize, Vec<&'static str>)> {
    let mut lines: Vec<(usize, Vec<&'static str>)> = Vec::new();
    for m in matches {
        match lines.last_mut() {
            Some((line, rules)) if *line == m.line => rules.push(m.rule),
            _ => lines.push((m.line, vec![m.rule])),
        }
    }
    lines
}

/// `text` with every secret replaced by `[REDACTED:<rule>]`, and what was replaced. Secrets that
/// overlap are replaced as one, named by the rule that found the first.
pub fn redact(text: &str) -> (String, Vec<SecretMatch>) {
    redact_where(text, |_| true)
}

/// [`redact`] of the secrets `pick` chooses, given each one's text: those a change adds, say,
/// and not those its file held already.
pub fn redact_where(text: &str, mut pick: impl FnMut(&str) -> bool) -> (String, Vec<SecretMatch>) {
    let mut found = find(text.as_bytes(), None, true);
    found.retain(|f| !f.secret.is_empty());
    found.sort_by_key(|f| (f.secret.start, std::cmp::Reverse(f.secret.end)));
    let mut out = String::with_capacity(text.len());
    let mut redacted = Vec::new();
    let mut at = 0;
    // The end of the last secret left in place: what overlaps it stays too.
    let mut kept_until = 0;
    for f in &found {
        // A byte range found in bytes mode may cut a UTF-8 character; widen it to whole ones.
        let start = floor_char_boundary(text, f.secret.start);
        if start < at || start < kept_until {
            continue; // inside the previous replacement, or a secret left in place
        }
        let end = ceil_char_boundary(text, f.secret.end);
        if !pick(&text[start..end]) {
            kept_until = end;
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&format!("[REDACTED:{}]", f.rule));
        at = end;
        redacted.push(SecretMatch {
            rule: f.rule,
            line: f.line,
        });
    }
    out.push_str(&text[at..]);
    (out, redacted)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// Every secret in the files under `root` (itself if a file; symlinks not followed), named
/// relative to `root` for the rules that look at paths, and the files that could not be read
/// (with why). Files are scanned as bytes, so text in any encoding is covered, and a piece at a
/// time, so a file of any size is scanned in bounded memory. Nothing is modified.
pub fn scan_tree(root: &Path) -> (Vec<SecretFinding>, Vec<(PathBuf, String)>) {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            files.push(path);
        } else if meta.is_dir() {
            stack.extend(
                std::fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    files.sort();
    let (mut findings, mut unreadable) = (Vec::new(), Vec::new());
    for file in files {
        let name = match file.strip_prefix(root) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative,
            _ => file.file_name().map(Path::new).unwrap_or(&file),
        };
        let name = name.to_string_lossy().replace('\\', "/");
        let scanned = std::fs::File::open(&file)
            .and_then(|opened| scan_in_pieces(&name, opened, PIECE_BYTES, OVERLAP_BYTES));
        let matches = match scanned {
            Ok(matches) => matches,
            Err(e) => {
                unreadable.push((file, e.to_string()));
                continue;
            }
        };
        for found in matches {
            findings.push(SecretFinding {
                file: file.clone(),
                line: found.line,
                rule: found.rule,
            });
        }
    }
    (findings, unreadable)
}

/// [`scan_tree`] reads a file a piece at a time, so its memory stays bounded whatever the
/// file's size (a transcript can be hundreds of MB): pieces of about this many bytes, cut at a
/// line end.
const PIECE_BYTES: usize = 8 << 20;
/// Each piece begins with up to this much of the one before (whole lines), so a secret that
/// spans lines (a PEM private key) cut by a piece boundary is seen whole in the next piece.
const OVERLAP_BYTES: usize = 256 << 10;

/// [`scan_file`] over `reader`'s bytes, read `piece` bytes at a time with `overlap` bytes of
/// the previous piece re-scanned: the same findings as one scan of the whole content, for any
/// secret shorter than `overlap` (a finding seen twice in an overlap is one, by rule and line).
fn scan_in_pieces(
    name: &str,
    mut reader: impl Read,
    piece: usize,
    overlap: usize,
) -> std::io::Result<Vec<SecretMatch>> {
    let mut buffer: Vec<u8> = Vec::new();
    // The line number of `buffer[0]`, and where the bytes not yet scanned begin.
    let (mut first_line, mut fresh) = (1, 0);
    let mut matches = Vec::new();
    for piece_number in 0.. {
        let read = (&mut reader).take(piece as u64).read_to_end(&mut buffer)?;
        let at_end = read < piece;
        // Whole lines only, unless the new bytes hold no line end at all.
        let cut = match memchr::memrchr(b'\n', &buffer[fresh..]) {
            Some(end) if !at_end => fresh + end + 1,
            _ => buffer.len(),
        };
        for found in find(&buffer[..cut], Some(name), piece_number == 0) {
            matches.push(SecretMatch {
                rule: found.rule,
                line: first_line + found.line - 1,
            });
        }
        if at_end {
            break;
        }
        // Keep the scanned tail (from a line start when there is one) and what follows the cut.
        let keep_from = match cut.checked_sub(overlap) {
            None => 0,
            Some(tail) => memchr::memchr(b'\n', &buffer[tail..cut]).map_or(tail, |i| tail + i + 1),
        };
        first_line += memchr::memchr_iter(b'\n', &buffer[..keep_from]).count();
        buffer.drain(..keep_from);
        fresh = cut - keep_from;
    }
    matches.sort_by_key(|m| (m.line, m.rule));
    matches.dedup();
    Ok(matches)
}

/// The detector over `text` and over what decodes in it (see the module comment). `whole_file`:
/// whether rules that look at the path alone report (they name a file, not a place in it: once
/// per file, not per piece).
fn find(text: &[u8], path: Option<&str>, whole_file: bool) -> Vec<Found> {
    let mut found = detect(text, path, whole_file);
    let lines = LineIndex::new(text);
    // Each pass's segments, to map what a later pass finds back to `text`.
    let mut passes: Vec<Vec<decode::Segment>> = Vec::new();
    let mut current = std::borrow::Cow::Borrowed(text);
    while passes.len() < decode::MAX_DEPTH {
        let Some(pass) = decode::pass(&current) else {
            break;
        };
        for finding in detect(&pass.text, path, false) {
            // What the previous text held already was reported from it.
            let in_decoded = pass.segments.iter().any(|segment| {
                segment.decoded.start < finding.secret.end
                    && finding.secret.start < segment.decoded.end
            });
            if !in_decoded {
                continue;
            }
            let mut secret = decode::to_input(&pass.segments, finding.secret);
            for earlier in passes.iter().rev() {
                secret = decode::to_input(earlier, secret);
            }
            found.push(Found {
                rule: finding.rule,
                line: lines.line_of(secret.start),
                secret,
            });
        }
        passes.push(pass.segments);
        current = std::borrow::Cow::Owned(pass.text);
    }
    found
}

/// The rules over `text` as it is.
fn detect(text: &[u8], path: Option<&str>, whole_file: bool) -> Vec<Found> {
    let set = rules::rule_set();
    let lines = LineIndex::new(text);
    let mut triggered = vec![false; set.rules.len()];
    for index in &set.always {
        triggered[*index] = true;
    }
    for hit in set.prefilter.find_overlapping_iter(text) {
        for index in &set.keyword_rules[hit.pattern().as_usize()] {
            triggered[*index] = true;
        }
    }
    let mut found = Vec::new();
    for (rule, _) in set.rules.iter().zip(&triggered).filter(|(_, on)| **on) {
        // A rule that cannot be compiled is skipped here and listed by `skipped_rules`.
        let Ok(compiled) = rule.compiled() else {
            continue;
        };
        if let Some(path_regex) = &compiled.path {
            let Some(path) = path else { continue };
            if !path_regex.is_match(path.as_bytes()) {
                continue;
            }
            if compiled.regex.is_none() {
                if whole_file {
                    found.push(Found {
                        rule: &rule.id,
                        line: 1,
                        secret: 0..0,
                    });
                }
                continue;
            }
        }
        let Some(regex) = &compiled.regex else {
            continue;
        };
        for captures in regex.captures_iter(text) {
            let whole = captures.get(0).expect("group 0 is the match").range();
            let whole = trim_newlines(text, whole);
            let secret = secret_of(rule, &captures).unwrap_or(whole.clone());
            if rule.entropy != 0.0 && shannon_entropy(&text[secret.clone()]) <= rule.entropy {
                continue;
            }
            let line_span = lines.line_span(whole.clone());
            let target = |allowlist: &Allowlist| match allowlist.target() {
                AllowTarget::Secret => &text[secret.clone()],
                AllowTarget::Match => &text[whole.clone()],
                AllowTarget::Line => &text[line_span.clone()],
            };
            let allowed = set
                .global
                .iter()
                .chain(&compiled.allowlists)
                .any(|a| a.allows(&text[secret.clone()], target(a)));
            if !allowed {
                found.push(Found {
                    rule: &rule.id,
                    line: lines.line_of(whole.start),
                    secret,
                });
            }
        }
    }
    found
}

/// gitleaks trims newlines from both ends of a match.
fn trim_newlines(text: &[u8], mut range: Range<usize>) -> Range<usize> {
    while range.start < range.end && text[range.start] == b'\n' {
        range.start += 1;
    }
    while range.end > range.start && text[range.end - 1] == b'\n' {
        range.end -= 1;
    }
    range
}

/// The secret within a match: the rule's `secretGroup`, else the first non-empty capture group;
/// `None` when the pattern has no groups (the whole match is the secret).
fn secret_of(rule: &Rule, captures: &regex::bytes::Captures<'_>) -> Option<Range<usize>> {
    if captures.len() < 2 {
        return None;
    }
    if rule.secret_group > 0 {
        return Some(
            captures
                .get(rule.secret_group)
                .map_or(0..0, |group| group.range()),
        );
    }
    (1..captures.len())
        .filter_map(|i| captures.get(i))
        .find(|group| !group.is_empty())
        .map(|group| group.range())
}

/// Shannon entropy in bits per character, as gitleaks computes it: characters counted as Unicode
/// scalar values (each invalid byte as one replacement character), divided by the byte length.
fn shannon_entropy(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for chunk in data.utf8_chunks() {
        for c in chunk.valid().chars() {
            *counts.entry(c).or_default() += 1;
        }
        for _ in chunk.invalid() {
            *counts.entry(char::REPLACEMENT_CHARACTER).or_default() += 1;
        }
    }
    let inverse_length = 1.0 / data.len() as f64;
    counts
        .values()
        .map(|count| {
            let frequency = *count as f64 * inverse_length;
            -frequency * frequency.log2()
        })
        .sum()
}

/// Byte offset → 1-based line. The line starts are found on the first lookup: most texts hold
/// no secret and never need them.
struct LineIndex<'a> {
    text: &'a [u8],
    starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a [u8]) -> Self {
        LineIndex {
            text,
            starts: std::cell::OnceCell::new(),
        }
    }

    fn starts(&self) -> &[usize] {
        self.starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(memchr::memchr_iter(b'\n', self.text).map(|i| i + 1));
            starts
        })
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts().partition_point(|&s| s <= offset)
    }

    /// The whole lines a range touches, without the final newline.
    fn line_span(&self, range: Range<usize>) -> Range<usize> {
        let starts = self.starts();
        let first = starts[self.line_of(range.start) - 1];
        let last_line = self.line_of(range.end.saturating_sub(1).max(range.start));
        let end = starts
            .get(last_line)
            .map_or(self.text.len(), |next| next - 1);
        first..end.max(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<&'static str> {
        scan_secrets(text).into_iter().map(|m| m.rule).collect()
    }

    #[derive(serde::Deserialize)]
    struct Samples {
        sample: Vec<Sample>,
    }

    #[derive(serde::Deserialize)]
    struct Sample {
        rule: String,
        path: Option<String>,
        tp: String,
        near_miss: String,
        near_miss_path: Option<String>,
        near_miss_is: String,
    }

    fn fired(path: Option<&str>, text: &str) -> Vec<&'static str> {
        let found = match path {
            Some(path) => scan_file(path, text.as_bytes()),
            None => scan_secrets(text),
        };
        found.into_iter().map(|m| m.rule).collect()
    }

    #[test]
    fn every_rule_is_read_and_compiles_none_skipped() {
        let gitleaks = all_rules()
            .iter()
            .filter(|r| r.origin == RuleOrigin::Gitleaks)
            .count();
        assert_eq!(gitleaks, 222, "the vendored gitleaks.toml holds 222 rules");
        assert!(all_rules()
            .iter()
            .any(|r| r.id == "anthropic-oauth-token" && r.origin == RuleOrigin::Engram));
        assert_eq!(skipped_rules(), Vec::<(&str, String)>::new());
        let mut ids: Vec<&str> = all_rules().iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), before, "rule ids are unique");
    }

    /// `samples.toml`: for every rule a true positive it reports and a near miss it does not.
    #[test]
    fn every_rule_finds_its_true_positive_and_not_its_near_miss() {
        let samples: Samples =
            toml::from_str(include_str!("samples.toml")).expect("samples.toml parses");
        let mut missing: Vec<&str> = Vec::new();
        for rule in all_rules() {
            let Some(sample) = samples.sample.iter().find(|s| s.rule == rule.id) else {
                missing.push(&rule.id);
                continue;
            };
            let path = sample.path.as_deref();
            assert!(
                fired(path, &sample.tp).contains(&rule.id.as_str()),
                "{}: the true positive {:?} is not found",
                rule.id,
                sample.tp
            );
            let near_path = sample.near_miss_path.as_deref().or(path);
            assert!(
                !fired(near_path, &sample.near_miss).contains(&rule.id.as_str()),
                "{}: the near miss ({}) {:?} is reported",
                rule.id,
                sample.near_miss_is,
                sample.near_miss
            );
            assert_ne!(
                (path, sample.tp.as_str()),
                (near_path, sample.near_miss.as_str())
            );
            // In a memory file, among other lines, the true positive is still found, on its line.
            if path.is_none() && !sample.tp.contains('\n') {
                let note = format!("# Notes\n\nsetup:\n{}\n\ndone.\n", sample.tp);
                assert!(
                    scan_secrets(&note)
                        .iter()
                        .any(|m| m.rule == rule.id && m.line == 4),
                    "{}: not found inside a note",
                    rule.id
                );
            }
        }
        assert!(missing.is_empty(), "rules without samples: {missing:?}");
        for sample in &samples.sample {
            assert!(
                all_rules().iter().any(|r| r.id == sample.rule),
                "a sample of no rule: {}",
                sample.rule
            );
        }
    }

    // Claude Code's own tokens, assembled at run time so this file does not trip scanners.
    #[test]
    fn claude_code_login_tokens_are_found_but_prose_about_them_is_not() {
        let body = "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0".repeat(3);
        for prefix in ["sk-ant-oat01-", "sk-ant-ort01-"] {
            let line = format!("export CLAUDE_CODE_OAUTH_TOKEN=\"{prefix}{body}\"");
            assert!(
                rules(&line).contains(&"anthropic-oauth-token"),
                "{prefix}: {:?}",
                rules(&line)
            );
        }
        let prose =
            "Claude Code's login tokens start with `sk-ant-oat01-`; refresh ones `sk-ant-ort01-…`.";
        assert!(rules(prose).is_empty(), "{:?}", rules(prose));
    }

    #[test]
    fn repeated_begin_lines_are_scanned_in_linear_time_and_still_find_the_key() {
        // 2 MB of BEGIN lines, then one real key.
        let mut text = "-----BEGIN PRIVATE KEY-----\n".repeat(2_000_000 / 28);
        text.push_str(&format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
            "MIIEowIBAAKCAQEAx7Kd9".repeat(8)
        ));
        assert!(rules(&text).contains(&"private-key"));
        // Not a timing assertion (machines here are shared): the regex engine is linear in the
        // text, which this size makes obvious if it is not.
    }

    #[test]
    fn ordinary_prose_and_the_real_memory_fixtures_hold_no_secret() {
        let prose = "\
A task-based workflow; ask-anything sessions. Keys look like `sk-ant-…` or `ghp_…`.
Use AKIA-style IDs only in docs. The hf_ prefix marks Hugging Face tokens.
Run `npm_config_cache=/tmp npm ci`. Put -----BEGIN RSA PRIVATE KEY----- headers in PEM files.
The API key lives in the vault; the token expires after an hour; auth is OAuth.
Stripe test mode uses sk_test_ keys. Slack hooks live at hooks.slack.com/services/…
The AccountKey= value must come from the vault. risk-adjusted, desk-level, disk-space.
";
        assert!(scan_secrets(prose).is_empty(), "{:?}", scan_secrets(prose));
        for project in ["stockerly", "claude-code-2.1.330"] {
            let dir = crate::testing::fixtures::real_memory(project);
            let (findings, unreadable) = scan_tree(&dir);
            assert!(findings.is_empty(), "{findings:?}");
            assert!(unreadable.is_empty());
        }
    }

    #[test]
    fn one_match_per_rule_and_line_in_line_order() {
        let key = format!("ghp_{}", "aB3dE5xZ".repeat(4) + "q7W2");
        let aws = "AKIA".to_string() + "QYLPMN5HHHFPZAM2";
        let text = format!("{key} {key}\n\n{aws}\n");
        assert_eq!(
            scan_secrets(&text),
            vec![
                SecretMatch {
                    rule: "github-pat",
                    line: 1
                },
                SecretMatch {
                    rule: "aws-access-token",
                    line: 3
                }
            ]
        );
    }

    #[test]
    fn redaction_replaces_the_secret_and_keeps_the_rest() {
        let key = format!("ghp_{}", "aB3dE5xZ".repeat(4) + "q7W2");
        let text =
            format!("# Deploy\n\nUse token {key} for the mirror.\nNothing else — ünïcode kept.\n");
        let (redacted, replaced) = redact(&text);
        assert_eq!(
            redacted,
            "# Deploy\n\nUse token [REDACTED:github-pat] for the mirror.\nNothing else — ünïcode kept.\n"
        );
        assert_eq!(
            replaced,
            [SecretMatch {
                rule: "github-pat",
                line: 3
            }]
        );
        assert!(
            scan_secrets(&redacted).is_empty(),
            "{:?}",
            scan_secrets(&redacted)
        );
        let (again, none) = redact(&redacted);
        assert_eq!((again.as_str(), none.len()), (redacted.as_str(), 0));
        // A generic assignment keeps its name: only the value (the secret group) goes.
        let (generic, _) = redact("DB_PASSWORD=Tz8qW3vK9mX2pL5r\n");
        assert_eq!(generic, "DB_PASSWORD=[REDACTED:generic-api-key]\n");
    }

    #[test]
    fn a_path_never_excuses_a_secret_and_path_rules_need_their_path() {
        // gitleaks allowlists github-pat in `@octokit/auth-token/README.md`; shared memory is
        // never excused by a file name.
        let key = format!("ghp_{}", "aB3dE5xZ".repeat(4) + "q7W2");
        let found = scan_file("node_modules/@octokit/auth-token/README.md", key.as_bytes());
        assert_eq!(
            found.iter().map(|m| m.rule).collect::<Vec<_>>(),
            ["github-pat"]
        );
        // A path-only rule reports the file by its name alone, and only with a path.
        assert_eq!(
            scan_file("team/certs/client.pfx", b"binary")
                .iter()
                .map(|m| m.rule)
                .collect::<Vec<_>>(),
            ["pkcs12-file"]
        );
        assert!(scan_secrets("client.pfx").is_empty());
    }

    /// Issue #20 item 2: a token as a file or folder name was shared with the team.
    #[test]
    fn a_secret_in_a_path_is_found_by_the_content_rules_and_ordinary_names_are_not() {
        let aws = "AKIA".to_string() + "Z7QWERTYUIOP3XMB";
        let pat = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
        assert_eq!(scan_path(&format!("{aws}.md")), ["aws-access-token"]);
        assert_eq!(scan_path(&format!("{pat}/notes.md")), ["github-pat"]);
        assert_eq!(scan_path(&format!("deep/{pat}/x/y.md")), ["github-pat"]);
        // Percent-encoded, as the content rules decode it.
        let encoded: String = pat.bytes().map(|b| format!("%{b:02X}")).collect();
        assert_eq!(scan_path(&format!("{encoded}.md")), ["github-pat"]);
        // The path first, then the content's lines; each says where.
        let found = scan_shared_file(
            &format!("{aws}.md"),
            format!("---\nname: x\n---\nuse {pat}\n").as_bytes(),
        );
        assert_eq!(
            found,
            [
                SharedSecret {
                    rule: "aws-access-token",
                    line: None
                },
                SharedSecret {
                    rule: "github-pat",
                    line: Some(4)
                }
            ]
        );
        assert_eq!(
            found[0].to_string(),
            "its path matches secret rule aws-access-token"
        );
        assert_eq!(
            found[1].to_string(),
            "line 4 matches secret rule github-pat"
        );
        // Names as memory dirs hold them: none is a secret.
        for name in [
            "MEMORY.md",
            "team/deploy.md",
            "feedback_api_key_rotation.md",
            "reference_token_expiry.md",
            "project_secret_santa.md",
            "user_password_manager_choice.md",
            "logs/2026/11/2026-11-24.md",
            "notes/aws_access_keys_live_in_vault.md",
        ] {
            assert!(scan_path(name).is_empty(), "{name}: {:?}", scan_path(name));
        }
        for project in ["stockerly", "claude-code-2.1.330"] {
            let dir = crate::testing::fixtures::real_memory(project);
            let mut stack = vec![dir.clone()];
            while let Some(path) = stack.pop() {
                if path.is_dir() {
                    stack.extend(
                        std::fs::read_dir(&path)
                            .expect("dir")
                            .map(|e| e.expect("entry").path()),
                    );
                    continue;
                }
                let rel = path
                    .strip_prefix(&dir)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                assert!(scan_path(&rel).is_empty(), "{rel}: {:?}", scan_path(&rel));
            }
        }
    }

    #[test]
    fn a_file_read_in_pieces_gives_what_one_read_gives() {
        let token = |seed: &str| format!("ghp_{}", seed.repeat(4) + "q7W2");
        let mut text = String::new();
        for i in 0..120 {
            text.push_str(&format!(
                "line {i}: notes on the build, nothing secret here\n"
            ));
            if i % 40 == 7 {
                text.push_str(&format!("token = {}\n", token("aB3dE5xZ")));
            }
            if i == 60 {
                // A secret over several lines, longer than the smaller pieces.
                text.push_str("-----BEGIN RSA PRIVATE KEY-----\n");
                for _ in 0..8 {
                    text.push_str(&format!("{}\n", "MIIEowIBAAKCAQEAx7Kd9".repeat(3)));
                }
                text.push_str("-----END RSA PRIVATE KEY-----\n");
            }
            if i == 90 {
                // One line longer than a piece, a token in its middle.
                text.push_str(&"word ".repeat(300));
                text.push_str(&format!(" {} ", token("Zq9Xw2Lp")));
                text.push_str(&"word ".repeat(300));
                text.push('\n');
            }
        }
        text.push_str(&format!("last line, no end: {}", token("Hh7Jj8Kk")));
        for name in ["team/notes.md", "team/certs/client.pfx"] {
            let whole = scan_file(name, text.as_bytes());
            let rules: Vec<_> = whole.iter().map(|m| m.rule).collect();
            assert!(rules.contains(&"private-key"), "{rules:?}");
            assert!(
                rules.iter().filter(|r| **r == "github-pat").count() >= 5,
                "{rules:?}"
            );
            for piece in [16, 100, 333, 4096, 1 << 20] {
                let pieces = scan_in_pieces(name, text.as_bytes(), piece, 1024).expect("read");
                assert_eq!(pieces, whole, "{name} in pieces of {piece} bytes");
            }
        }
    }

    #[test]
    fn an_encoded_secret_is_found_where_its_encoded_form_is() {
        use base64::Engine as _;
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let token = format!("ghp_{}", "aB3dE5xZ".repeat(4) + "q7W2");
        let key = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC".repeat(3)
        );
        let percent: String = token.bytes().map(|b| format!("%{b:02X}")).collect();
        let text = format!(
            "apiVersion: v1\nkind: Secret\ndata:\n  pat: {}\n  tls.key: {}\nnested: {}\nurl: https://x.example/?t={percent}\n",
            b64(&token),
            b64(&key),
            b64(&b64(&token)),
        );
        assert_eq!(
            scan_secrets(&text),
            [
                SecretMatch {
                    rule: "github-pat",
                    line: 4
                },
                SecretMatch {
                    rule: "private-key",
                    line: 5
                },
                SecretMatch {
                    rule: "github-pat",
                    line: 6
                },
                SecretMatch {
                    rule: "github-pat",
                    line: 7
                },
            ]
        );
        // Redaction takes the whole encoded value.
        let (redacted, _) = redact(&text);
        assert!(
            redacted.contains("  pat: [REDACTED:github-pat]\n"),
            "{redacted}"
        );
        assert!(
            redacted.contains("nested: [REDACTED:github-pat]\n"),
            "{redacted}"
        );
        assert!(!redacted.contains(&b64(&token)), "{redacted}");
        // Encoded text that holds no secret is nothing.
        let harmless = format!(
            "note: {}\nid: 0123456789abcdef0123456789abcdef\n",
            b64("just a note")
        );
        assert!(scan_secrets(&harmless).is_empty());
    }

    #[test]
    fn text_that_is_not_utf8_is_still_scanned() {
        let mut bytes = b"\xff\xfe garbage \xc3(\n".to_vec();
        bytes.extend_from_slice(format!("ghp_{}", "aB3dE5xZ".repeat(4) + "q7W2").as_bytes());
        bytes.extend_from_slice(b"\n\x80\x81");
        assert_eq!(
            scan_file("notes.md", &bytes),
            [SecretMatch {
                rule: "github-pat",
                line: 2
            }]
        );
    }

    #[test]
    fn go_braces_that_open_no_repetition_are_made_literal() {
        use rules::from_go_syntax;
        assert_eq!(from_go_syntax(r"a{2,3}b{4}c{5,}"), r"a{2,3}b{4}c{5,}");
        assert_eq!(
            from_go_syntax(r"import[ \t]+{[ \t\w,]+}[ \t]+from"),
            r"import[ \t]+\{[ \t\w,]+}[ \t]+from"
        );
        assert_eq!(from_go_syntax(r"\$?{{[^}]+}}"), r"\$?\{\{[^}]+}}");
        assert_eq!(from_go_syntax(r"[{]\{x[[:alnum:]{]"), r"[{]\{x[[:alnum:]{]");
        assert_eq!(from_go_syntax(r"[]{]{"), r"[]{]\{");
        // Where gitleaks' config needs it: two rules' allowlists.
        let config = include_str!("gitleaks/gitleaks.toml");
        let changed = config
            .lines()
            .filter(|line| line.starts_with("    '''") || line.starts_with("regex = "))
            .filter(|line| matches!(from_go_syntax(line), std::borrow::Cow::Owned(_)))
            .count();
        // The global allowlist's `${1}` / `${NAME}` placeholders, generic-api-key's `import {…}
        // from`, curl-auth-user's `{{…}}` templates.
        assert_eq!(changed, 4);
    }

    #[test]
    fn shannon_entropy_matches_gitleaks() {
        assert_eq!(shannon_entropy(b""), 0.0);
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        assert!((shannon_entropy(b"ab") - 1.0).abs() < 1e-12);
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-12);
        // gitleaks divides by the byte length: "é" (2 bytes) alone has a count of 1 in 2.
        assert!((shannon_entropy("é".as_bytes()) - 0.5).abs() < 1e-12);
    }
}
