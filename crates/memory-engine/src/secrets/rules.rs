//! The rule set: gitleaks' generated default config (vendored unchanged in `gitleaks/`) plus
//! Engram's additions (`engram.toml`, same format), read once per process. A rule's regex is
//! compiled the first time one of its keywords appears in a scanned text, so a scan pays only for
//! the rules its text could trigger.
//!
//! Why the `regex` crate in bytes mode with Unicode off: gitleaks' patterns are Go RE2, whose
//! `\w`, `\d`, `\s` and `\b` are ASCII-only. Rust's are Unicode by default, which changes what
//! they match and makes three of gitleaks' patterns (`generic-api-key`, `pypi-upload-token`,
//! `vault-batch-token`) exceed the crate's compiled-size limit. With Unicode off every pattern
//! compiles as written, means what it means in Go, and can scan files that are not UTF-8.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

/// The gitleaks release `gitleaks/gitleaks.toml` comes from (`gitleaks/README.md`).
pub const GITLEAKS_VERSION: &str = "v8.30.0-27-gb58d3f10";

const GITLEAKS_TOML: &str = include_str!("gitleaks/gitleaks.toml");
const ENGRAM_TOML: &str = include_str!("engram.toml");

/// Where a rule comes from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleOrigin {
    Gitleaks,
    Engram,
}

// --- The config file, as gitleaks defines it. Unknown fields are refused: a newer gitleaks
// config with a field this reader does not understand fails the tests instead of being half-read.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ConfigFile {
    #[serde(default)]
    #[allow(dead_code)]
    title: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    min_version: Option<String>,
    /// The older single global allowlist (gitleaks still writes this form).
    #[serde(default)]
    allowlist: Option<AllowlistConfig>,
    #[serde(default)]
    allowlists: Vec<AllowlistConfig>,
    #[serde(default)]
    rules: Vec<RuleConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RuleConfig {
    id: String,
    #[serde(default)]
    description: String,
    regex: Option<String>,
    path: Option<String>,
    #[serde(default)]
    entropy: f64,
    #[serde(default)]
    secret_group: usize,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<AllowlistConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AllowlistConfig {
    #[serde(default)]
    #[allow(dead_code)]
    description: String,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
}

// --- Compiled.

/// What an allowlist's regexes are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AllowTarget {
    /// The secret (the capture group), gitleaks' default.
    Secret,
    /// The whole regex match.
    Match,
    /// The line(s) the match is on.
    Line,
}

/// An allowlist: a finding it allows is not reported.
///
/// Deliberately stricter than gitleaks in one way: an allowlist never applies because of a file
/// path or a commit. In gitleaks those excuse vendored files and lock files in a repository; here
/// the scanned files are memory and team files about to be shared, and a file's name must not
/// excuse a secret in them. So an `OR` allowlist works through its regexes and stopwords only, and
/// an `AND` allowlist that also requires a path or commit never allows.
pub(super) struct Allowlist {
    target: AllowTarget,
    all_required: bool,
    needs_path_or_commit: bool,
    /// The regexes joined into one alternation, as gitleaks does.
    regex: Option<Regex>,
    /// Lowercase; matched against the lowercased secret.
    stopwords: Option<AhoCorasick>,
}

impl Allowlist {
    fn compile(config: &AllowlistConfig, rule: &str) -> Result<Self, String> {
        let target = match config.regex_target.as_deref() {
            None | Some("secret") => AllowTarget::Secret,
            Some("match") => AllowTarget::Match,
            Some("line") => AllowTarget::Line,
            Some(other) => return Err(format!("{rule}: unknown allowlist regexTarget {other:?}")),
        };
        let all_required = match config.condition.as_deref() {
            None | Some("OR") => false,
            Some("AND") => true,
            Some(other) => return Err(format!("{rule}: unknown allowlist condition {other:?}")),
        };
        let regex = if config.regexes.is_empty() {
            None
        } else {
            let joined = config
                .regexes
                .iter()
                .map(|r| format!("(?:{r})"))
                .collect::<Vec<_>>()
                .join("|");
            Some(compile(&joined).map_err(|e| format!("{rule}: allowlist regex: {e}"))?)
        };
        let stopwords = if config.stopwords.is_empty() {
            None
        } else {
            let lower: Vec<String> = config.stopwords.iter().map(|w| w.to_lowercase()).collect();
            Some(AhoCorasick::new(&lower).map_err(|e| format!("{rule}: stopwords: {e}"))?)
        };
        Ok(Allowlist {
            target,
            all_required,
            needs_path_or_commit: !config.paths.is_empty() || !config.commits.is_empty(),
            regex,
            stopwords,
        })
    }

    pub(super) fn target(&self) -> AllowTarget {
        self.target
    }

    /// Whether this allowlist excuses a finding whose `secret` is given, `target` being the text
    /// its regexes look at (per [`Allowlist::target`]).
    pub(super) fn allows(&self, secret: &[u8], target: &[u8]) -> bool {
        let regex_allows =
            !target.is_empty() && self.regex.as_ref().is_some_and(|r| r.is_match(target));
        let stopword = !secret.is_empty()
            && self
                .stopwords
                .as_ref()
                .is_some_and(|words| words.is_match(&secret.to_ascii_lowercase()));
        if self.all_required {
            !self.needs_path_or_commit
                && (self.regex.is_none() || regex_allows)
                && (self.stopwords.is_none() || stopword)
                && (self.regex.is_some() || self.stopwords.is_some())
        } else {
            regex_allows || stopword
        }
    }
}

/// A rule's compiled parts.
pub(super) struct Compiled {
    pub(super) regex: Option<Regex>,
    pub(super) path: Option<Regex>,
    pub(super) allowlists: Vec<Allowlist>,
}

/// One detection rule.
pub struct Rule {
    pub id: String,
    pub description: String,
    pub origin: RuleOrigin,
    pub(super) entropy: f64,
    pub(super) secret_group: usize,
    pub(super) keywords: Vec<String>,
    config: RuleConfig,
    compiled: OnceLock<Result<Compiled, String>>,
}

impl Rule {
    /// The compiled rule, or why it cannot be used (then it is skipped, and listed by
    /// [`skipped_rules`]).
    pub(super) fn compiled(&self) -> Result<&Compiled, &str> {
        self.compiled
            .get_or_init(|| {
                let regex = self.config.regex.as_deref().map(compile).transpose();
                let path = self.config.path.as_deref().map(compile).transpose();
                let allowlists = self
                    .config
                    .allowlists
                    .iter()
                    .map(|a| Allowlist::compile(a, &self.id))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Compiled {
                    regex: regex.map_err(|e| format!("regex: {e}"))?,
                    path: path.map_err(|e| format!("path: {e}"))?,
                    allowlists,
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The rule's regex as written in its config (Go RE2 syntax).
    pub fn regex_source(&self) -> Option<&str> {
        self.config.regex.as_deref()
    }

    /// The regex a file's path must match for the rule to look at the file.
    pub fn path_source(&self) -> Option<&str> {
        self.config.path.as_deref()
    }

    /// The rule's keywords, lowercase: it runs only on text containing one (any case).
    pub fn keywords(&self) -> &[String] {
        &self.keywords
    }

    /// Whether the rule looks at a file's path (only files whose path matches are scanned by it,
    /// or, without a regex, the path alone is the finding).
    pub fn needs_path(&self) -> bool {
        self.config.path.is_some()
    }
}

/// Every pattern is compiled the same way (see the module comment). The size limit is raised
/// because a few of gitleaks' patterns have large bounded repetitions (`{50,1000}`).
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&from_go_syntax(pattern))
        .unicode(false)
        .size_limit(64 << 20)
        .build()
}

/// `pattern` with the one piece of Go RE2 syntax the `regex` crate reads differently made
/// explicit: a `{` that does not open a repetition (`{n}`, `{n,}`, `{n,m}`) is a literal brace in
/// Go and an error here, so it is escaped (gitleaks' own allowlists match `import {…} from` and
/// `{{…}}` templates this way). Everything else is passed through as written.
pub(super) fn from_go_syntax(pattern: &str) -> std::borrow::Cow<'_, str> {
    let bytes = pattern.as_bytes();
    let mut escaped_at = Vec::new();
    let (mut at, mut in_class) = (0, false);
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1, // the escaped character is skipped
            b'[' if !in_class => {
                in_class = true;
                // `]` right after `[` or `[^` is a literal member, not the end.
                if bytes.get(at + 1) == Some(&b'^') {
                    at += 1;
                }
                if bytes.get(at + 1) == Some(&b']') {
                    at += 1;
                }
            }
            b'[' if bytes.get(at + 1) == Some(&b':') => {
                // A POSIX class inside a class: `[:alnum:]`.
                if let Some(end) = pattern[at..].find(":]") {
                    at += end + 1;
                }
            }
            b']' if in_class => in_class = false,
            b'{' if !in_class && !opens_repetition(&bytes[at + 1..]) => escaped_at.push(at),
            _ => {}
        }
        at += 1;
    }
    if escaped_at.is_empty() {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + escaped_at.len());
    let mut from = 0;
    for brace in escaped_at {
        out.push_str(&pattern[from..brace]);
        out.push('\\');
        from = brace;
    }
    out.push_str(&pattern[from..]);
    std::borrow::Cow::Owned(out)
}

/// Whether the text after a `{` makes it a repetition: digits, optionally `,` and digits, `}`.
fn opens_repetition(after: &[u8]) -> bool {
    let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    match after.get(digits) {
        Some(b'}') => true,
        Some(b',') => {
            let rest = &after[digits + 1..];
            let more = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            rest.get(more) == Some(&b'}')
        }
        _ => false,
    }
}

/// All rules, the global allowlists, and the keyword prefilter.
pub(super) struct RuleSet {
    pub(super) rules: Vec<Rule>,
    pub(super) global: Vec<Allowlist>,
    /// Why a global allowlist could not be used.
    skipped_global: Vec<String>,
    /// Every distinct keyword, ASCII case-insensitive (gitleaks lowercases the text and the
    /// keywords; all keywords are ASCII).
    pub(super) prefilter: AhoCorasick,
    /// For each keyword of the prefilter, the rules it triggers.
    pub(super) keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords: they always run.
    pub(super) always: Vec<usize>,
}

fn load(source: &str, origin: RuleOrigin) -> (Vec<Rule>, Vec<AllowlistConfig>) {
    // The configs are compiled into the binary and tested; a parse failure is a build defect.
    let file: ConfigFile = toml::from_str(source).expect("the vendored secret rules parse");
    let global = file.allowlist.into_iter().chain(file.allowlists).collect();
    let rules = file
        .rules
        .into_iter()
        .map(|config| Rule {
            id: config.id.clone(),
            description: config.description.clone(),
            origin,
            entropy: config.entropy,
            secret_group: config.secret_group,
            keywords: config.keywords.iter().map(|k| k.to_lowercase()).collect(),
            config,
            compiled: OnceLock::new(),
        })
        .collect();
    (rules, global)
}

static RULE_SET: LazyLock<RuleSet> = LazyLock::new(|| {
    let (mut rules, global_configs) = load(GITLEAKS_TOML, RuleOrigin::Gitleaks);
    let (engram_rules, engram_global) = load(ENGRAM_TOML, RuleOrigin::Engram);
    rules.extend(engram_rules);
    // A global allowlist that fails to compile is left out (that can only make the scan
    // stricter) and listed by `skipped_rules`.
    let (mut global, mut skipped_global) = (Vec::new(), Vec::new());
    for allowlist in global_configs.iter().chain(&engram_global) {
        match Allowlist::compile(allowlist, "global allowlist") {
            Ok(compiled) => global.push(compiled),
            Err(reason) => skipped_global.push(reason),
        }
    }
    let mut keywords: Vec<String> = Vec::new();
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    let mut always = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        if rule.keywords.is_empty() {
            always.push(index);
        }
        for keyword in &rule.keywords {
            let at = keywords
                .iter()
                .position(|k| k == keyword)
                .unwrap_or_else(|| {
                    keywords.push(keyword.clone());
                    keyword_rules.push(Vec::new());
                    keywords.len() - 1
                });
            keyword_rules[at].push(index);
        }
    }
    // A full DFA: the overlapping search every scan makes over every byte is several times
    // faster than with the default NFA, for a table of well under a megabyte.
    let prefilter = aho_corasick::AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&keywords)
        .expect("the keyword prefilter builds");
    RuleSet {
        rules,
        global,
        skipped_global,
        prefilter,
        keyword_rules,
        always,
    }
});

pub(super) fn rule_set() -> &'static RuleSet {
    &RULE_SET
}

/// Every rule, gitleaks' first, in config order.
pub fn all_rules() -> &'static [Rule] {
    &RULE_SET.rules
}

/// The rules (and global allowlists) that cannot be used, with the reason: a pattern the `regex`
/// crate cannot compile even after [`from_go_syntax`]. Never silently dropped: `engram secrets
/// rules` lists them, and a test requires none for the vendored config.
pub fn skipped_rules() -> Vec<(&'static str, String)> {
    let rules = RULE_SET
        .rules
        .iter()
        .filter_map(|rule| match rule.compiled() {
            Ok(_) => None,
            Err(reason) => Some((rule.id.as_str(), reason.to_string())),
        });
    let global = RULE_SET
        .skipped_global
        .iter()
        .map(|reason| ("global allowlist", reason.clone()));
    rules.chain(global).collect()
}
