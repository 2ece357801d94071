//! Writes `src/secrets/samples.toml`: for every secret rule, a true positive and a near miss, which
//! `secrets::tests` checks against the detector. Samples already in the file are kept (they are
//! reviewed); rules without one get a generated pair; samples of rules that are gone are dropped.
//!
//!     cargo run -p memory-engine --example secret_samples
//!
//! A true positive is generated from the rule's own regex (printable ASCII only, anchors and word
//! boundaries left to chance; the rule's first keyword put before it when the regex does not hold
//! it) with a seed per rule, retried until the full detector reports that
//! rule — so it has passed the keywords, the secret group, the entropy floor and the allowlists.
//! A near miss is the smallest change found that makes the rule stop reporting it: the sample cut
//! short by a few characters (a token too short) when at most a quarter must go, else the rule's
//! keywords each changed by one letter (a prefix one letter off).

use std::collections::BTreeMap;
use std::path::Path;

use memory_engine::secrets::{all_rules, scan_file, scan_secrets, Rule};
use rand::{Rng, RngExt, SeedableRng};
use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, HirKind};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default)]
struct Samples {
    sample: Vec<Sample>,
}

#[derive(Serialize, Deserialize, Clone)]
struct Sample {
    rule: String,
    /// The file name the rule needs to see, for rules that look at paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    tp: String,
    near_miss: String,
    /// For a rule that looks at paths: the file name of the near miss, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    near_miss_path: Option<String>,
    /// How the near miss differs.
    near_miss_is: String,
}

fn fires(rule: &str, path: Option<&str>, text: &str) -> bool {
    let found = match path {
        Some(path) => scan_file(path, text.as_bytes()),
        None => scan_secrets(text),
    };
    found.iter().any(|m| m.rule == rule)
}

/// The pattern with every class narrowed to printable ASCII (and tab, newline) and every anchor
/// or word boundary removed, so it can be sampled.
fn printable(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::empty(),
        HirKind::Literal(_) => hir.clone(),
        HirKind::Class(class) => {
            let mut bytes = match class {
                Class::Bytes(bytes) => bytes.clone(),
                Class::Unicode(unicode) => unicode.to_byte_class().unwrap_or_else(|| {
                    ClassBytes::new(unicode.iter().filter_map(|r| {
                        let (start, end) = (u32::from(r.start()), u32::from(r.end()).min(0x7f));
                        (start <= end).then(|| ClassBytesRange::new(start as u8, end as u8))
                    }))
                }),
            };
            bytes.intersect(&ClassBytes::new([
                ClassBytesRange::new(b'\t', b'\n'),
                ClassBytesRange::new(b' ', b'~'),
            ]));
            Hir::class(Class::Bytes(bytes))
        }
        HirKind::Repetition(repetition) => {
            let mut repetition = repetition.clone();
            repetition.sub = Box::new(printable(&repetition.sub));
            Hir::repetition(repetition)
        }
        HirKind::Capture(capture) => printable(&capture.sub),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(printable).collect()),
        HirKind::Alternation(parts) => Hir::alternation(parts.iter().map(printable).collect()),
    }
}

fn generator(pattern: &str) -> rand_regex::Regex {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("{pattern}: {e}"));
    rand_regex::Regex::with_hir(printable(&hir), 8).expect("a sampler")
}

fn seed_of(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn sample_from(rng: &mut impl Rng, generator: &rand_regex::Regex) -> Option<String> {
    let bytes: Vec<u8> = rng.sample(generator);
    String::from_utf8(bytes).ok()
}

fn generate(rule: &Rule, pattern: &str, path_pattern: Option<&str>) -> Option<Sample> {
    let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed_of(&rule.id));
    let text_generator = generator(pattern);
    let path_generator = path_pattern.map(generator);
    for _ in 0..20_000 {
        let path = match &path_generator {
            Some(g) => Some(sample_from(&mut rng, g)?.replace(['\n', '\t'], "_")),
            None => None,
        };
        let Some(secret) = sample_from(&mut rng, &text_generator) else {
            continue;
        };
        // Some rules' keywords are context the regex does not contain (`facebook` for a
        // Facebook token): then the keyword is put before the sample, as it would be in a note.
        let with_keyword = rule.keywords().first().map(|k| format!("{k} {secret}"));
        let Some(tp) = std::iter::once(secret)
            .chain(with_keyword)
            .find(|tp| fires(&rule.id, path.as_deref(), tp))
        else {
            continue;
        };
        let (near_miss, near_miss_is) = near_miss(rule, path.as_deref(), &tp)?;
        return Some(Sample {
            rule: rule.id.clone(),
            path,
            tp,
            near_miss,
            near_miss_path: None,
            near_miss_is,
        });
    }
    None
}

fn near_miss(rule: &Rule, path: Option<&str>, tp: &str) -> Option<(String, String)> {
    let mut cut = tp.to_string();
    while cut.len() * 4 >= tp.len() * 3 && cut.pop().is_some() {
        if !fires(&rule.id, path, &cut) {
            let n = tp.len() - cut.len();
            return Some((cut, format!("the same, {n} character(s) short")));
        }
    }
    let mut changed = tp.to_string();
    for keyword in rule.keywords() {
        let Some(last) = keyword
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_ascii_alphabetic())
        else {
            continue;
        };
        let other = if last.1 == 'q' { 'x' } else { 'q' };
        let mut off = keyword.to_string();
        off.replace_range(last.0..last.0 + 1, &other.to_string());
        changed = replace_ignoring_case(&changed, keyword, &off);
    }
    (!fires(&rule.id, path, &changed))
        .then(|| (changed, "the same, its keywords one letter off".to_string()))
}

fn replace_ignoring_case(text: &str, needle: &str, with: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut at = 0;
    while let Some(found) = lower[at..].find(needle) {
        out.push_str(&text[at..at + found]);
        out.push_str(with);
        at += found + needle.len();
    }
    out.push_str(&text[at..]);
    out
}

fn main() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/secrets/samples.toml");
    let existing: Samples = std::fs::read_to_string(&file)
        .ok()
        .map(|text| toml::from_str(&text).expect("samples.toml parses"))
        .unwrap_or_default();
    let mut by_rule: BTreeMap<String, Sample> = existing
        .sample
        .into_iter()
        .map(|s| (s.rule.clone(), s))
        .collect();
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for rule in all_rules() {
        if let Some(sample) = by_rule.remove(&rule.id) {
            out.push(sample);
            continue;
        }
        let generated = match (rule.regex_source(), rule.path_source()) {
            (Some(regex), path) => generate(rule, regex, path),
            // A path-only rule: the file name is the finding, there is no content to miss.
            (None, Some(path)) => generate(rule, "", Some(path)),
            (None, None) => None,
        };
        match generated {
            Some(sample) => {
                println!("{}: generated", rule.id);
                out.push(sample);
            }
            None => failed.push(rule.id.clone()),
        }
    }
    for gone in by_rule.keys() {
        println!("{gone}: no such rule any more, dropped");
    }
    let header = "# A true positive and a near miss for every secret rule, checked by `secrets::tests`.\n\
                  # Generated by `cargo run -p memory-engine --example secret_samples` (see there), then\n\
                  # kept: edit a sample by hand when a better one is known. Every value here is random and\n\
                  # fake; it exists to look like a secret.\n\n";
    let body = toml::to_string(&Samples { sample: out }).expect("samples serialise");
    std::fs::write(&file, format!("{header}{body}")).expect("write samples.toml");
    if !failed.is_empty() {
        eprintln!("no sample found for: {}", failed.join(", "));
        std::process::exit(1);
    }
}
