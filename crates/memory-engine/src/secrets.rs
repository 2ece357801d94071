//! Secret detection before a memory is saved or shared (`FORMATS.md` §9): gitleaks-style rules for
//! the credentials that end up pasted into notes — AWS, GCP, Azure, Anthropic, OpenAI, Hugging Face,
//! GitHub, GitLab, Slack, Stripe, npm, PyPI, private keys.
//!
//! The rules are hand-written prefix scanners rather than regexes: every rule starts with a fixed
//! literal, so finding the literal and then checking the characters after it is both exact and
//! fast, and it keeps a regex engine out of the dependency tree. Each rule requires a word boundary
//! before the prefix and the token's real length and alphabet after it, so prose that merely
//! mentions a prefix (`task-based`, "an `sk-ant-` key") does not match.

/// A secret found in text: the rule that matched and the 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMatch {
    pub rule: &'static str,
    pub line: usize,
}

/// What may follow a rule's prefix.
#[derive(Clone, Copy)]
enum Charset {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Za-z0-9_-]`
    Token,
    /// `[A-Za-z0-9_]`
    Word,
    /// `[A-Za-z0-9+/]`
    Base64,
    /// `[A-Za-z0-9/_+-]` (URL path)
    UrlPath,
}

impl Charset {
    fn contains(self, b: u8) -> bool {
        b.is_ascii_alphanumeric()
            || match self {
                Charset::Alnum => false,
                Charset::Token => b == b'_' || b == b'-',
                Charset::Word => b == b'_',
                Charset::Base64 => b == b'+' || b == b'/',
                Charset::UrlPath => matches!(b, b'/' | b'_' | b'+' | b'-'),
            }
    }
}

struct TokenRule {
    rule: &'static str,
    prefixes: &'static [&'static str],
    charset: Charset,
    min: usize,
    max: usize,
    /// An extra check of the body (the characters after the prefix).
    accept: fn(&[u8]) -> bool,
}

fn any(_: &[u8]) -> bool {
    true
}

fn aws_body(body: &[u8]) -> bool {
    body.iter()
        .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(b))
}

fn openai_body(body: &[u8]) -> bool {
    if body.starts_with(b"ant-") {
        return false; // Anthropic's rule reports these.
    }
    let marker = body.windows(8).any(|w| w == b"T3BlbkFJ");
    let project = [&b"proj-"[..], b"svcacct-", b"admin-"]
        .iter()
        .any(|p| body.starts_with(p))
        && body.len() >= 40;
    let legacy = body.len() == 48
        && body.iter().all(u8::is_ascii_alphanumeric)
        && body.iter().any(u8::is_ascii_digit)
        && body.iter().any(u8::is_ascii_uppercase)
        && body.iter().any(u8::is_ascii_lowercase);
    marker || project || legacy
}

fn has_digit(body: &[u8]) -> bool {
    body.iter().any(u8::is_ascii_digit)
}

const TOKEN_RULES: &[TokenRule] = &[
    TokenRule {
        rule: "aws-access-token",
        prefixes: &["AKIA", "ASIA", "ABIA", "ACCA"],
        charset: Charset::Alnum,
        min: 16,
        max: 16,
        accept: aws_body,
    },
    TokenRule {
        rule: "anthropic-api-key",
        prefixes: &["sk-ant-"],
        charset: Charset::Token,
        min: 32,
        max: usize::MAX,
        accept: any,
    },
    TokenRule {
        rule: "openai-api-key",
        prefixes: &["sk-"],
        charset: Charset::Token,
        min: 40,
        max: usize::MAX,
        accept: openai_body,
    },
    TokenRule {
        rule: "gcp-api-key",
        prefixes: &["AIza"],
        charset: Charset::Token,
        min: 35,
        max: 35,
        accept: any,
    },
    TokenRule {
        rule: "huggingface-access-token",
        prefixes: &["hf_"],
        charset: Charset::Alnum,
        min: 34,
        max: 40,
        accept: any,
    },
    TokenRule {
        rule: "github-pat",
        prefixes: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        charset: Charset::Alnum,
        min: 36,
        max: 36,
        accept: any,
    },
    TokenRule {
        rule: "github-fine-grained-pat",
        prefixes: &["github_pat_"],
        charset: Charset::Word,
        min: 82,
        max: 82,
        accept: any,
    },
    TokenRule {
        rule: "gitlab-pat",
        prefixes: &["glpat-"],
        charset: Charset::Token,
        min: 20,
        max: usize::MAX,
        accept: any,
    },
    TokenRule {
        rule: "slack-token",
        prefixes: &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"],
        charset: Charset::Token,
        min: 20,
        max: usize::MAX,
        accept: has_digit,
    },
    TokenRule {
        rule: "slack-webhook-url",
        prefixes: &["hooks.slack.com/services/", "hooks.slack.com/workflows/"],
        charset: Charset::UrlPath,
        min: 40,
        max: usize::MAX,
        accept: any,
    },
    TokenRule {
        rule: "stripe-access-token",
        prefixes: &[
            "sk_live_", "rk_live_", "sk_prod_", "rk_prod_", "sk_test_", "rk_test_",
        ],
        charset: Charset::Alnum,
        min: 20,
        max: 247,
        accept: any,
    },
    TokenRule {
        rule: "npm-access-token",
        prefixes: &["npm_"],
        charset: Charset::Alnum,
        min: 36,
        max: 36,
        accept: any,
    },
    TokenRule {
        rule: "pypi-upload-token",
        prefixes: &["pypi-AgEIcHlwaS5vcmc"],
        charset: Charset::Token,
        min: 50,
        max: usize::MAX,
        accept: any,
    },
    TokenRule {
        rule: "azure-storage-account-key",
        prefixes: &["AccountKey="],
        charset: Charset::Base64,
        min: 80,
        max: 100,
        accept: any,
    },
];

/// For each byte, the bytes that follow it at the start of some prefix in [`TOKEN_RULES`] (a
/// 256-bit set each): the scan looks at the rules only where two bytes already fit one, which
/// in prose is rare.
const PREFIX_STARTS: [[u64; 4]; 256] = {
    let mut table = [[0u64; 4]; 256];
    let mut r = 0;
    while r < TOKEN_RULES.len() {
        let mut p = 0;
        while p < TOKEN_RULES[r].prefixes.len() {
            let prefix = TOKEN_RULES[r].prefixes[p].as_bytes();
            let (first, second) = (prefix[0] as usize, prefix[1] as usize);
            table[first][second / 64] |= 1 << (second % 64);
            p += 1;
        }
        r += 1;
    }
    table
};

/// Whether `first`, `second` begin some prefix.
fn starts_a_prefix(first: u8, second: u8) -> bool {
    let second = usize::from(second);
    PREFIX_STARTS[usize::from(first)][second / 64] & (1 << (second % 64)) != 0
}

/// A secret found in a file by [`scan_tree`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretFinding {
    pub file: std::path::PathBuf,
    pub line: usize,
    pub rule: &'static str,
}

/// Every secret in the text files under `root` (itself if a file; symlinks not followed; files
/// that are not UTF-8 text skipped), and the files that could not be read. Nothing is modified.
pub fn scan_tree(root: &std::path::Path) -> (Vec<SecretFinding>, Vec<std::path::PathBuf>) {
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
        let Ok(bytes) = std::fs::read(&file) else {
            unreadable.push(file);
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        for found in scan_secrets(&text) {
            findings.push(SecretFinding {
                file: file.clone(),
                line: found.line,
                rule: found.rule,
            });
        }
    }
    (findings, unreadable)
}

/// Every secret in `text`, at most one per rule and line, in line order.
pub fn scan_secrets(text: &str) -> Vec<SecretMatch> {
    let lines = LineIndex::new(text);
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    // One pass over the text: every prefix starts a word (the byte before it is not a token
    // character), so only word starts whose first two bytes begin some prefix are examined.
    for (at, pair) in bytes.windows(2).enumerate() {
        let first = pair[0];
        if !starts_a_prefix(first, pair[1]) || (at > 0 && Charset::Token.contains(bytes[at - 1])) {
            continue;
        }
        for rule in TOKEN_RULES {
            for prefix in rule.prefixes {
                // The first byte alone rules out most prefixes, without a call to compare.
                let prefix = prefix.as_bytes();
                if prefix[0] != first || !bytes[at..].starts_with(prefix) {
                    continue;
                }
                let start = at + prefix.len();
                let len = bytes[start..]
                    .iter()
                    .take_while(|b| rule.charset.contains(**b))
                    .count();
                let body = &bytes[start..start + len];
                if (rule.min..=rule.max).contains(&len)
                    && (rule.accept)(body)
                    && !is_placeholder(body)
                {
                    found.push(SecretMatch {
                        rule: rule.rule,
                        line: lines.line_of(at),
                    });
                }
            }
        }
    }
    found.extend(private_keys(text, &lines));
    found.extend(aws_secret_keys(text, &lines));
    found.extend(gcp_service_account(text, &lines));
    found.sort_by_key(|m| (m.line, m.rule));
    found.dedup();
    found
}

/// `-----BEGIN … PRIVATE KEY-----`, some key material, then the matching `-----END` line: a bare
/// header quoted in prose is not a key.
fn private_keys(text: &str, lines: &LineIndex<'_>) -> Vec<SecretMatch> {
    // Linear in the text, whatever it holds: a label is looked for only in the next few bytes,
    // and the key material only up to the next run of dashes (which must open the END line),
    // so the regions examined after two BEGINs never overlap. (Searching for END from every
    // BEGIN took seconds on a file of repeated BEGIN lines.)
    const MAX_LABEL: usize = 100;
    let mut out = Vec::new();
    for (at, _) in text.match_indices("-----BEGIN ") {
        let rest = &text[at + 11..];
        let window = &rest.as_bytes()[..rest.len().min(MAX_LABEL)];
        let Some(header_end) = window.windows(5).position(|w| w == b"-----") else {
            continue;
        };
        let label = &rest[..header_end];
        // `RSA PRIVATE KEY`, `OPENSSH PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`, …
        let is_private = (label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK"))
            && label.bytes().all(|b| b.is_ascii_uppercase() || b == b' ');
        if !is_private {
            continue;
        }
        let after = &rest[header_end + 5..];
        let next_dashes = after.find("-----").unwrap_or(after.len());
        if !after[next_dashes..].starts_with("-----END ") {
            continue;
        }
        let material = after[..next_dashes]
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .count();
        if material >= 64 {
            out.push(SecretMatch {
                rule: "private-key",
                line: lines.line_of(at),
            });
        }
    }
    out
}

/// A documented placeholder rather than a key: `AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx…`.
fn is_placeholder(body: &[u8]) -> bool {
    let example = body.windows(7).any(|w| w.eq_ignore_ascii_case(b"example"));
    let mut distinct = [false; 256];
    body.iter()
        .for_each(|b| distinct[usize::from(b.to_ascii_lowercase())] = true);
    example || distinct.iter().filter(|seen| **seen).count() <= 2
}

/// An AWS secret access key: 40 characters of base64 assigned to something named like
/// `aws_secret_access_key` / `SecretAccessKey` on the same line (alone, the 40 characters are
/// indistinguishable from any other base64).
fn aws_secret_keys(text: &str, lines: &LineIndex<'_>) -> Vec<SecretMatch> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let lower = line.to_ascii_lowercase();
        let named = lower.contains("secret_access_key")
            || lower.contains("secretaccesskey")
            || lower.contains("aws_secret");
        if !named {
            continue;
        }
        let Some(value_at) = line.find(['=', ':']) else {
            continue;
        };
        let value = line[value_at + 1..].trim_start_matches([' ', '\t', '"', '\'']);
        let len = value
            .bytes()
            .take_while(|b| Charset::Base64.contains(*b))
            .count();
        let body = &value.as_bytes()[..len];
        if len == 40 && !is_placeholder(body) && body.iter().any(u8::is_ascii_digit) {
            out.push(SecretMatch {
                rule: "aws-secret-access-key",
                line: lines.line_of(at),
            });
        }
    }
    out
}

/// A GCP service-account key file: `"type": "service_account"` together with a `"private_key"`.
fn gcp_service_account(text: &str, lines: &LineIndex<'_>) -> Vec<SecretMatch> {
    if !text.contains("\"private_key\"") {
        return Vec::new();
    }
    text.match_indices("\"type\"")
        .filter(|(at, _)| {
            let rest = text[at + 6..].trim_start();
            rest.strip_prefix(':')
                .is_some_and(|r| r.trim_start().starts_with("\"service_account\""))
        })
        .map(|(at, _)| SecretMatch {
            rule: "gcp-service-account",
            line: lines.line_of(at),
        })
        .collect()
}

/// Byte offset → 1-based line. The line starts are found on the first lookup: most texts hold
/// no secret and never need them.
struct LineIndex<'a> {
    text: &'a str,
    starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        LineIndex {
            text,
            starts: std::cell::OnceCell::new(),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        let starts = self.starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(self.text.match_indices('\n').map(|(i, _)| i + 1));
            starts
        });
        starts.partition_point(|&s| s <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<&'static str> {
        scan_secrets(text).into_iter().map(|m| m.rule).collect()
    }

    // Test tokens are assembled at run time so this source file does not itself trip scanners.
    fn token(prefix: &str, body: &str, n: usize) -> String {
        format!("{prefix}{}", body.repeat(n))
    }

    #[test]
    fn detects_each_provider_with_its_line() {
        let cases: Vec<(String, &str)> = vec![
            (token("AKIA", "ABCD2345", 2), "aws-access-token"),
            (token("ASIA", "QRST6723", 2), "aws-access-token"),
            (token("sk-ant-api03-", "aB3_x-Yz", 12), "anthropic-api-key"),
            (
                format!("sk-proj-{}T3BlbkFJ{}", "Ab1".repeat(20), "Zz9".repeat(10)),
                "openai-api-key",
            ),
            (token("sk-", "aB3dE5gH", 6), "openai-api-key"),
            (
                token("AIza", "Sy0123456789abcdefghijklmnopqrstu", 1) + "vw",
                "gcp-api-key",
            ),
            (
                token("hf_", "abcdefghijklmnopq", 2),
                "huggingface-access-token",
            ),
            (token("ghp_", "aB3dE5", 6), "github-pat"),
            (token("gho_", "aB3dE5", 6), "github-pat"),
            (
                token("github_pat_", "11ABCDEFG0", 8) + "ab",
                "github-fine-grained-pat",
            ),
            (token("glpat-", "xY3_zK9-", 3), "gitlab-pat"),
            (
                "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx".to_string(),
                "slack-token",
            ),
            (
                "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/AbCdEfGhIjKlMnOpQrStUvWx"
                    .to_string(),
                "slack-webhook-url",
            ),
            (token("sk_live_", "4eC39HqL", 4), "stripe-access-token"),
            (token("rk_live_", "4eC39HqL", 4), "stripe-access-token"),
            (token("npm_", "a1B2c3D4e5F6", 3), "npm-access-token"),
            (
                token("pypi-AgEIcHlwaS5vcmc", "CJDYzY2Q5", 7),
                "pypi-upload-token",
            ),
            (
                format!(
                    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={}==;",
                    "aB3+/dE5".repeat(11)
                ),
                "azure-storage-account-key",
            ),
        ];
        for (secret, rule) in cases {
            let text = format!("# Notes\n\nThe key is `{secret}` for prod.\n");
            assert_eq!(
                scan_secrets(&text),
                vec![SecretMatch { rule, line: 3 }],
                "{secret}"
            );
        }
    }

    #[test]
    fn repeated_begin_lines_are_scanned_in_linear_time_and_still_find_the_key() {
        // 2 MB of BEGIN lines, then one real key: every BEGIN used to search to the end.
        let mut text = "-----BEGIN PRIVATE KEY-----\n".repeat(2_000_000 / 28);
        text.push_str(&format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
            "MIIEowIBAAKCAQEA".repeat(8)
        ));
        let found = scan_secrets(&text);
        assert_eq!(
            found.len(),
            1,
            "only the block with material and an END is a key"
        );
        assert_eq!(found[0].rule, "private-key");
        // Not a timing assertion (machines here are shared): the work is bounded by the text,
        // which this size makes obvious if it is not (it took 7.7 s before).
    }

    #[test]
    fn pgp_blocks_and_aws_secret_keys_are_found_and_documented_placeholders_are_not() {
        let pgp = format!(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\n",
            "lQVYBGRmZW4BDADKx3".repeat(5)
        );
        assert_eq!(rules(&pgp), ["private-key"]);
        let pgp_public = pgp.replace("PRIVATE KEY BLOCK", "PUBLIC KEY BLOCK");
        assert!(
            rules(&pgp_public).is_empty(),
            "a public key is not a secret"
        );

        let secret = format!(
            "aws_secret_access_key = {}",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCY".to_owned() + "0123456789"
        );
        assert_eq!(rules(&secret), ["aws-secret-access-key"]);
        let near = format!(
            "the aws_secret_access_key lives in vault ({})",
            "a".repeat(40)
        );
        assert!(rules(&near).is_empty(), "{near}");
        let short = format!("aws_secret_access_key = {}", "wJalrXUtnFEMI/K7MDENG");
        assert!(rules(&short).is_empty());

        for placeholder in [
            token("AKIA", "IOSFODNN7EXAMPLE", 1),
            token("ghp_", "x", 36),
            format!(
                "aws_secret_access_key = {}",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            ),
        ] {
            assert!(rules(&placeholder).is_empty(), "{placeholder}");
        }
    }

    #[test]
    fn detects_private_keys_and_service_accounts() {
        let pem = format!(
            "intro\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
            "MIIEowIBAAKCAQEA".repeat(8)
        );
        assert_eq!(
            scan_secrets(&pem),
            vec![SecretMatch {
                rule: "private-key",
                line: 2
            }]
        );
        let openssh = pem.replace("RSA PRIVATE", "OPENSSH PRIVATE");
        assert_eq!(rules(&openssh), ["private-key"]);
        let sa = "{\n  \"type\": \"service_account\",\n  \"project_id\": \"p\",\n  \"private_key\": \"...\"\n}";
        assert_eq!(
            scan_secrets(sa),
            vec![SecretMatch {
                rule: "gcp-service-account",
                line: 2
            }]
        );
    }

    #[test]
    fn ordinary_prose_is_not_a_secret() {
        let prose = "\
A task-based workflow; ask-anything sessions. Keys look like `sk-ant-…` or `ghp_…`.
Use AKIA-style IDs only in docs. The hf_ prefix marks Hugging Face tokens.
Run `npm_config_cache=/tmp npm ci`. Put -----BEGIN RSA PRIVATE KEY----- headers in PEM files.
The service account JSON has \"type\": \"service_account\" but no key here.
Stripe test mode uses sk_test_ keys. Slack hooks live at hooks.slack.com/services/…
The AccountKey= value must come from the vault. risk-adjusted, desk-level, disk-space.
";
        assert!(scan_secrets(prose).is_empty(), "{:?}", scan_secrets(prose));
        for project in ["stockerly", "claude-code-2.1.330"] {
            let dir = crate::testing::fixtures::real_memory(project);
            for entry in std::fs::read_dir(dir).expect("dir") {
                let path = entry.expect("entry").path();
                let text = std::fs::read_to_string(&path).expect("read");
                assert!(scan_secrets(&text).is_empty(), "{}", path.display());
            }
        }
    }

    #[test]
    fn tokens_glued_to_words_or_with_wrong_lengths_do_not_match() {
        assert!(
            rules(&token("xAKIA", "ABCD2345", 2)).is_empty(),
            "no left boundary"
        );
        assert!(
            rules(&token("AKIA", "ABCD2345", 3)).is_empty(),
            "24 chars is not an AWS key id"
        );
        assert!(
            rules(&token("ghp_", "aB3dE5", 5)).is_empty(),
            "30 chars is too short"
        );
        assert!(
            rules(&token("AKIA", "abcd2345", 2)).is_empty(),
            "lower case"
        );
    }

    #[test]
    fn every_prefix_starts_with_a_listed_pair_and_needs_a_word_start() {
        for rule in TOKEN_RULES {
            for prefix in rule.prefixes {
                let bytes = prefix.as_bytes();
                assert!(bytes.len() >= 2, "{prefix}: the scan reads two bytes");
                assert!(starts_a_prefix(bytes[0], bytes[1]), "{prefix}");
            }
        }
        assert!(!starts_a_prefix(b's', b'e'), "`se…` starts no prefix");
        // Boundary-free rules still match where they really occur: after `/` and `;`.
        let hook = "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/AbCdEfGhIjKlMnOpQrStUvWx";
        assert_eq!(rules(hook), ["slack-webhook-url"]);
    }

    #[test]
    fn one_match_per_rule_and_line_in_line_order() {
        let key = token("ghp_", "aB3dE5", 6);
        let text = format!("{key} {key}\n\n{}\n", token("AKIA", "ABCD2345", 2));
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
}
