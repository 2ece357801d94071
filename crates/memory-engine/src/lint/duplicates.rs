//! The `duplicate-memory` rule: which topic files are near-duplicates — their description + body
//! at least [`DUPLICATE_THRESHOLD`] similar by `similar`'s word-diff ratio — in dirs of tens of
//! thousands of files, without diffing every pair.
//!
//! Three stages, each dearer per pair than the one before and run on fewer pairs:
//!
//! 1. **Candidates** by locality-sensitive hashing (MinHash of word 3-shingles, banded), then the
//!    signatures' agreement and a length check. This stage can miss a pair, rarely.
//! 2. **An exact bound**: the longest common subsequence of the two token sequences, computed
//!    bit-parallel. The diff ratio is `2·kept / (|a| + |b|)` over tokens, and the tokens a diff
//!    keeps are a common subsequence, so a pair whose LCS cannot reach the threshold cannot be a
//!    duplicate. Tokens are compared by hash class, which can only lengthen the LCS. This stage
//!    only discards pairs the diff would have rejected — it changes no finding — and saves the
//!    diffs: on a dir of notes written from one vocabulary, nearly all of them.
//! 3. **The diff** (`similar`, bounded by [`DIFF_TIMEOUT`]) decides, and gives the percentage.
//!
//! Neither of the first two stages invents a finding: only the diff reports one.

use std::time::Duration;

use super::{finding, Finding, Severity, DUPLICATE_MEMORY, DUPLICATE_THRESHOLD};
use crate::scan;

/// A bound on each pairwise diff, so a dir of large files cannot stall lint.
const DIFF_TIMEOUT: Duration = Duration::from_millis(100);

/// A topic file's description + body, with a MinHash signature of its word 3-shingles.
pub(crate) struct Candidate {
    file: String,
    text: String,
    signature: [u64; SIGNATURE],
}

/// Locality-sensitive hashing finds the pairs worth diffing without comparing every pair (lint
/// runs on dirs of 20,000 files). Each text gets a 48-value MinHash signature (one-permutation
/// hashing with densification: one hash per shingle, so sketching is linear in the text), cut
/// into 16 bands of 3. Texts sharing a band are candidates — near-certain for the shingle overlap
/// of ≥ 85 %-similar texts (Jaccard 0.6 ⇒ 97 %), rare for unrelated ones. Candidates whose
/// signatures agree on fewer than [`MIN_AGREEING`] values (estimated Jaccard < 0.2, which
/// 85 %-similar texts exceed even when every change is a separate word) are dropped.
const BANDS: usize = 16;
const ROWS: usize = 3;
const SIGNATURE: usize = BANDS * ROWS;
const MIN_AGREEING: usize = 10;
/// How many earlier members of a bucket each member is paired with. Real near-duplicates share
/// many bands, so a few suffice; a bucket of a thousand identical stubs stays linear.
const MAX_BUCKET_PAIRS: usize = 4;

impl Candidate {
    pub(crate) fn new(file: String, text: String) -> Self {
        let signature = signature(&text);
        Candidate {
            file,
            text,
            signature,
        }
    }

    /// The value of band `band`: its rows' values combined.
    fn band(&self, band: usize) -> u64 {
        let rows = &self.signature[band * ROWS..][..ROWS];
        mix(rows[0] ^ rows[1].rotate_left(21) ^ rows[2].rotate_left(42))
    }

    fn agreeing(&self, other: &Candidate) -> usize {
        self.signature
            .iter()
            .zip(&other.signature)
            .filter(|(a, b)| a == b)
            .count()
    }
}

/// A 64-bit finaliser (splitmix64): spreads the bits of a combined hash.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// Calls `f` with the hash of each word of `text` — `text.split_whitespace()`, each word hashed
/// by FNV-1a over its ASCII-lowercased bytes (case does not make two memories different) — in one
/// pass over the bytes.
fn for_each_word_hash(text: &str, mut f: impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let (mut at, mut hash, mut in_word) = (0, FNV_OFFSET, false);
    while at < bytes.len() {
        let (whitespace, width) = char_class(text, at);
        if whitespace {
            if in_word {
                f(hash);
                (hash, in_word) = (FNV_OFFSET, false);
            }
        } else {
            for &b in &bytes[at..at + width] {
                hash = (hash ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(FNV_PRIME);
            }
            in_word = true;
        }
        at += width;
    }
    if in_word {
        f(hash);
    }
}

/// Whether the char at byte `at` of `text` is whitespace (`char::is_whitespace`), and its width.
/// Asked of every byte the duplicate rule reads: ASCII is a table lookup, inlined.
#[inline(always)]
fn char_class(text: &str, at: usize) -> (bool, usize) {
    let b = text.as_bytes()[at];
    if b.is_ascii() {
        (ASCII_WHITESPACE[usize::from(b)], 1)
    } else {
        non_ascii_char_class(text, at)
    }
}

#[cold]
fn non_ascii_char_class(text: &str, at: usize) -> (bool, usize) {
    let c = text[at..].chars().next().unwrap_or_default();
    (c.is_whitespace(), c.len_utf8())
}

fn signature(text: &str) -> [u64; SIGNATURE] {
    let mut bins = [u64::MAX; SIGNATURE];
    let mut put = |shingle: u64| {
        let h = mix(shingle);
        // The high bits pick the bin, the whole hash is the value.
        let bin = (((h >> 32) * SIGNATURE as u64) >> 32) as usize;
        bins[bin] = bins[bin].min(h);
    };
    let mut window = [0u64; 3];
    let mut words = 0usize;
    for_each_word_hash(text, |word| {
        window = [window[1], window[2], word];
        words += 1;
        if words >= 3 {
            put(window[0] ^ window[1].rotate_left(21) ^ window[2].rotate_left(42));
        }
    });
    if (1..3).contains(&words) {
        put(window[1] ^ window[2].rotate_left(17));
    }
    // Densify: an empty bin borrows the next filled bin's value (salted by the distance), so
    // short texts still get comparable signatures.
    if let Some(first_filled) = bins.iter().position(|&b| b != u64::MAX) {
        let filled = bins;
        for (i, bin) in bins.iter_mut().enumerate() {
            if *bin == u64::MAX {
                let (distance, value) = (1..SIGNATURE)
                    .map(|d| (d, filled[(i + d) % SIGNATURE]))
                    .find(|(_, v)| *v != u64::MAX)
                    .unwrap_or((0, filled[first_filled]));
                *bin = mix(value ^ distance as u64);
            }
        }
    }
    bins
}

/// Stage 1: the candidate pairs `(i, j)`, `i < j`, ascending: sharing a band value, and passing
/// [`is_candidate`]. A bucket (one value in one band) pairs each member with at most
/// [`MAX_BUCKET_PAIRS`] earlier ones, in file order. Bands are independent: one per thread.
fn candidate_pairs(memories: &[Candidate]) -> Vec<(usize, usize)> {
    let bands: Vec<usize> = (0..BANDS).collect();
    let worth_threads = memories.len() >= scan::PARALLEL_THRESHOLD;
    let per_band = scan::map_parallel_if(worth_threads, &bands, Vec::new, |entries, &band| {
        // Sorting (value, file) lays every bucket out contiguously, members in file order.
        entries.clear();
        entries.extend(
            memories
                .iter()
                .enumerate()
                .map(|(i, memory)| (memory.band(band), i)),
        );
        entries.sort_unstable();
        let mut pairs = Vec::new();
        for bucket in entries.chunk_by(|a, b| a.0 == b.0) {
            for (n, &(_, j)) in bucket.iter().enumerate().skip(1) {
                for &(_, i) in &bucket[..n.min(MAX_BUCKET_PAIRS)] {
                    if is_candidate(&memories[i], &memories[j]) {
                        pairs.push((i, j));
                    }
                }
            }
        }
        pairs
    });
    let mut pairs: Vec<(usize, usize)> = per_band.into_iter().flatten().collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Stage 1's last checks: the signatures agree enough, and the lengths are close enough for the
/// ratio (at most 2·min / (len a + len b)) to reach the threshold.
fn is_candidate(a: &Candidate, b: &Candidate) -> bool {
    if a.agreeing(b) < MIN_AGREEING {
        return false;
    }
    let (la, lb) = (a.text.len() as f32, b.text.len() as f32);
    la + lb > 0.0 && 2.0 * la.min(lb) / (la + lb) >= DUPLICATE_THRESHOLD
}

/// The duplicate findings among `memories`: one per file joining a group of near-duplicates,
/// named with the file it duplicates.
pub(crate) fn find_duplicates(memories: &[Candidate]) -> Vec<Finding> {
    let candidates = candidate_pairs(memories);
    // Stage 2 for every candidate, on every core: it is most of the work, and independent.
    let reachable = scan::map_parallel(&candidates, LcsBound::default, |bound, &(i, j)| {
        bound.may_reach_threshold(&memories[i].text, &memories[j].text)
    });

    // Files already known to be in one duplicate group are not diffed again: a group of n copies
    // costs n − 1 diffs and n − 1 findings, not n².
    let mut findings = Vec::new();
    let mut groups = DisjointSets::new(memories.len());
    for (&(i, j), reachable) in candidates.iter().zip(reachable) {
        if !reachable || groups.find(i) == groups.find(j) {
            continue;
        }
        let (a, b) = (&memories[i], &memories[j]);
        let ratio = word_diff_ratio(&a.text, &b.text);
        if ratio >= DUPLICATE_THRESHOLD {
            groups.union(i, j);
            let (first, second) = if a.file <= b.file { (a, b) } else { (b, a) };
            findings.push(Finding {
                other_file: Some(second.file.clone()),
                ..finding(
                    DUPLICATE_MEMORY,
                    Severity::Warning,
                    &first.file,
                    None,
                    format!(
                        "{} and {} are {:.0}% similar: merge them into one memory",
                        first.file,
                        second.file,
                        ratio * 100.0
                    ),
                )
            });
        }
    }
    findings
}

/// Stage 3: `similar`'s word-diff ratio, the measure the rule is defined by.
fn word_diff_ratio(a: &str, b: &str) -> f32 {
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_words(a, b)
        .ratio()
}

/// `similar`'s ratio for `kept` tokens of `total`, computed as it computes it (in `f32`), so the
/// bound compares with the threshold exactly as the diff's ratio will.
fn ratio_of(kept: usize, total: usize) -> f32 {
    if total == 0 {
        1.0
    } else {
        2.0 * kept as f32 / total as f32
    }
}

/// The hash of each token of `text` as `similar::TextDiff::diff_words` splits it: maximal runs
/// of whitespace and of non-whitespace characters (`char::is_whitespace`). Equal tokens have
/// equal hashes, so a collision can only lengthen a common subsequence, never shorten it.
fn token_hashes(text: &str, out: &mut Vec<u64>) {
    out.clear();
    let bytes = text.as_bytes();
    let (mut start, mut at) = (0, 0);
    let mut in_whitespace = None;
    while at < bytes.len() {
        let (whitespace, width) = char_class(text, at);
        if in_whitespace != Some(whitespace) {
            if in_whitespace.is_some() {
                out.push(token_hash(&bytes[start..at]));
            }
            (start, in_whitespace) = (at, Some(whitespace));
        }
        at += width;
    }
    if in_whitespace.is_some() {
        out.push(token_hash(&bytes[start..]));
    }
}

/// `char::is_whitespace` for the ASCII characters: tab, line feed, vertical tab, form feed,
/// carriage return and space (a test checks it against the char method).
const ASCII_WHITESPACE: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = matches!(b, 0x09..=0x0d | 0x20);
        b += 1;
    }
    table
};

fn token_hash(token: &[u8]) -> u64 {
    mix(token.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    }))
}

/// Above this many tokens in the shorter text, the bound is not computed (its table grows with
/// the square of the length) and the diff, bounded by its timeout, decides alone.
const MAX_BOUND_TOKENS: usize = 20_000;

/// Stage 2, with its buffers reused from pair to pair.
#[derive(Default)]
struct LcsBound {
    a: Vec<u64>,
    b: Vec<u64>,
    lcs: Lcs,
}

impl LcsBound {
    /// False only when no diff of `a` and `b` can keep enough tokens to reach the threshold.
    fn may_reach_threshold(&mut self, a: &str, b: &str) -> bool {
        token_hashes(a, &mut self.a);
        token_hashes(b, &mut self.b);
        let total = self.a.len() + self.b.len();
        // The shorter sequence is the bit-vector side: fewer words per step.
        let (short, long) = if self.a.len() <= self.b.len() {
            (&self.a, &self.b)
        } else {
            (&self.b, &self.a)
        };
        // Even keeping every token of the shorter one may not be enough.
        if ratio_of(short.len(), total) < DUPLICATE_THRESHOLD {
            return false;
        }
        if short.len() > MAX_BOUND_TOKENS {
            return true;
        }
        ratio_of(self.lcs.len(short, long), total) >= DUPLICATE_THRESHOLD
    }
}

/// How many classes tokens are sorted into by their hash. Tokens of one class count as equal,
/// which can only lengthen a common subsequence: the result stays an upper bound.
const CLASSES: usize = 1024;

/// Longest-common-subsequence length by the bit-vector algorithm of Crochemore, Iliopoulos,
/// Pinzon and Reid (2001): one pass over the longer sequence, ⌈short / 64⌉ word operations a
/// step. Tokens are compared by class (their hash's low bits), a table lookup rather than a map.
#[derive(Default)]
struct Lcs {
    /// Class c, word w: bit k set when token 64·w + k of the short sequence is of class c.
    /// All zero between calls.
    matches: Vec<u64>,
    /// The classes the short sequence has, as a bit set, and as a list (to clear them after).
    present: [u64; CLASSES / 64],
    classes: Vec<usize>,
    /// The state vector: after the pass, its zero bits (of the first `short.len()`) count the LCS.
    state: Vec<u64>,
}

impl Lcs {
    fn len(&mut self, short: &[u64], long: &[u64]) -> usize {
        let words = short.len().div_ceil(64);
        if self.matches.len() < CLASSES * words {
            self.matches.resize(CLASSES * words, 0);
        }
        for (k, &token) in short.iter().enumerate() {
            let class = class_of(token);
            if self.present[class / 64] & (1 << (class % 64)) == 0 {
                self.present[class / 64] |= 1 << (class % 64);
                self.classes.push(class);
            }
            self.matches[class * words + k / 64] |= 1 << (k % 64);
        }
        self.state.clear();
        self.state.resize(words, u64::MAX);
        for &token in long {
            let class = class_of(token);
            // A token of no class of the short sequence leaves the state as it is.
            if self.present[class / 64] & (1 << (class % 64)) == 0 {
                continue;
            }
            let matches = &self.matches[class * words..][..words];
            // V ← (V + (V & M)) | (V & !M), the addition carrying across words.
            let mut carry = false;
            for (v, &m) in self.state.iter_mut().zip(matches) {
                let u = *v & m;
                let (sum, c1) = v.overflowing_add(u);
                let (sum, c2) = sum.overflowing_add(u64::from(carry));
                carry = c1 || c2;
                *v = sum | (*v & !m);
            }
        }
        for class in self.classes.drain(..) {
            self.matches[class * words..][..words].fill(0);
        }
        self.present = [0; CLASSES / 64];
        let mut kept = 0;
        for (w, v) in self.state.iter().enumerate() {
            let bits = (short.len() - 64 * w).min(64);
            let valid = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            kept += (!v & valid).count_ones() as usize;
        }
        kept
    }
}

fn class_of(token: u64) -> usize {
    token as usize % CLASSES
}

/// Union–find over file indices.
struct DisjointSets {
    parent: Vec<usize>,
}

impl DisjointSets {
    fn new(n: usize) -> Self {
        DisjointSets {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        self.parent[ra.max(rb)] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use similar::DiffableStr;

    use super::*;
    use crate::testing::fixtures::Xorshift;

    /// Whitespace of every kind, multi-byte characters, case.
    const TRICKY_TEXTS: [&str; 9] = [
        "",
        " ",
        "one",
        "  two  Words  ",
        "tab\tand\x0bvertical\x0cform\r\nfeeds",
        "non\u{a0}breaking\u{2003}em\u{3000}ideographic\u{85}next-line\u{2028}sep",
        "ünïcödé WÖRDS, 日本語のテキスト 😀 emoji",
        "- deploy tests line 3\n- cache auth line 4\n",
        "a\u{200b}zero-width\u{feff}bom are not whitespace",
    ];

    /// A note like the bench corpus's: a description, then 5–40 lines of four words.
    fn note(rng: &mut Xorshift) -> String {
        let mut text = format!(
            "{} when {} touches {}\n",
            rng.words(1),
            rng.words(1),
            rng.words(1)
        );
        for line in 0..5 + rng.below(36) {
            text.push_str(&format!("- {} line {line}\n", rng.words(4)));
        }
        text
    }

    /// `text` with `edits` random word edits (replaced, dropped, doubled) and an occasional
    /// change of spacing or case: near-duplicates from identical to clearly different.
    fn edited(rng: &mut Xorshift, text: &str, edits: usize) -> String {
        let mut tokens: Vec<String> = text
            .tokenize_words()
            .iter()
            .map(|t| t.to_string())
            .collect();
        for _ in 0..edits {
            let at = rng.below(tokens.len());
            match rng.below(6) {
                0 | 1 => tokens[at] = rng.words(1),
                2 => {
                    tokens.remove(at);
                }
                3 => tokens.insert(at, format!("{} ", rng.words(1))),
                4 => tokens[at] = tokens[at].replace(' ', "  ").replace('\n', " \n"),
                _ => tokens[at] = tokens[at].to_uppercase(),
            }
            if tokens.is_empty() {
                tokens.push("x".to_owned());
            }
        }
        tokens.concat()
    }

    /// How many tokens `similar`'s word diff keeps: what its ratio counts.
    fn kept_by_diff(a: &str, b: &str) -> usize {
        similar::TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_words(a, b)
            .ops()
            .iter()
            .map(|op| match op {
                similar::DiffOp::Equal { len, .. } => *len,
                _ => 0,
            })
            .sum()
    }

    fn lcs_by_table(a: &[u64], b: &[u64]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for x in a {
            let mut diagonal = 0;
            for (j, y) in b.iter().enumerate() {
                let above = row[j + 1];
                row[j + 1] = if x == y {
                    diagonal + 1
                } else {
                    above.max(row[j])
                };
                diagonal = above;
            }
        }
        row[b.len()]
    }

    #[test]
    fn tokens_are_split_as_the_word_diff_splits_them() {
        for b in 0..128u8 {
            assert_eq!(
                ASCII_WHITESPACE[usize::from(b)],
                char::from(b).is_whitespace(),
                "byte {b:#x}"
            );
        }
        let mut hashes = Vec::new();
        for text in TRICKY_TEXTS {
            token_hashes(text, &mut hashes);
            let expected: Vec<u64> = text
                .tokenize_words()
                .iter()
                .map(|t| token_hash(t.as_bytes()))
                .collect();
            assert_eq!(hashes, expected, "{text:?}");
        }
    }

    /// The signature's words must stay exactly what they were (`split_whitespace`, FNV-1a of the
    /// lowercased bytes): they decide which pairs are candidates.
    #[test]
    fn words_are_split_and_hashed_as_split_whitespace_splits_them() {
        let fnv = |word: &str| {
            word.bytes().fold(FNV_OFFSET, |h, b| {
                (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(FNV_PRIME)
            })
        };
        for text in TRICKY_TEXTS {
            let mut hashes = Vec::new();
            for_each_word_hash(text, |h| hashes.push(h));
            let expected: Vec<u64> = text.split_whitespace().map(fnv).collect();
            assert_eq!(hashes, expected, "{text:?}");
        }
    }

    #[test]
    fn the_bit_vector_lcs_is_the_lcs() {
        let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
        let mut lcs = Lcs::default();
        let lengths = [0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 200];
        for &m in &lengths {
            for &n in &lengths {
                for alphabet in [1, 2, 4, 30] {
                    let a: Vec<u64> = (0..m).map(|_| rng.below(alphabet) as u64).collect();
                    let b: Vec<u64> = (0..n).map(|_| rng.below(alphabet) as u64).collect();
                    assert_eq!(
                        lcs.len(&a, &b),
                        lcs_by_table(&a, &b),
                        "m {m}, n {n}, alphabet {alphabet}"
                    );
                    // Tokens sharing a class count as equal: never a shorter result.
                    let spread = |s: &[u64]| -> Vec<u64> {
                        s.iter().map(|&t| t * CLASSES as u64 + t % 2).collect()
                    };
                    assert!(
                        lcs.len(&spread(&a), &spread(&b)) >= lcs_by_table(&a, &b),
                        "m {m}, n {n}, alphabet {alphabet}, classes colliding"
                    );
                }
            }
        }
    }

    /// The bound's promise, pair by pair: it never counts fewer common tokens than the diff
    /// keeps, so it never turns away a pair whose ratio reaches the threshold.
    #[test]
    fn the_bound_never_turns_away_a_pair_the_diff_finds_similar_enough() {
        let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
        let mut bound = LcsBound::default();
        let (mut similar_enough, mut just_above, mut turned_away, mut below) = (0, 0, 0, 0);
        for round in 0..400 {
            let a = note(&mut rng);
            // Edited copies from identical to far apart, and now and then an unrelated note.
            let b = if round % 8 == 7 {
                note(&mut rng)
            } else {
                let edits = rng.below(1 + a.len() / 12);
                edited(&mut rng, &a, edits)
            };
            let kept = kept_by_diff(&a, &b);
            let total = a.tokenize_words().len() + b.tokenize_words().len();
            let ratio = ratio_of(kept, total);
            token_hashes(&a, &mut bound.a);
            token_hashes(&b, &mut bound.b);
            let lcs = lcs_by_table(&bound.a, &bound.b);
            assert!(lcs >= kept, "LCS {lcs} < kept {kept} for {a:?} / {b:?}");
            let passes = bound.may_reach_threshold(&a, &b);
            if ratio >= DUPLICATE_THRESHOLD {
                assert!(passes, "ratio {ratio} turned away: {a:?} / {b:?}");
                similar_enough += 1;
                just_above += usize::from(ratio < 0.9);
            } else {
                below += 1;
                turned_away += usize::from(!passes);
            }
        }
        // Not vacuous: pairs on both sides of the threshold, some just above it, and most of
        // those below turned away without a diff.
        assert!(similar_enough >= 50, "{similar_enough} pairs ≥ threshold");
        assert!(just_above >= 10, "{just_above} pairs in [0.85, 0.9)");
        assert!(
            below >= 50 && turned_away * 2 >= below,
            "{turned_away} of {below} turned away"
        );
    }

    /// The rule end to end on a corpus like the bench's with planted near-duplicates: the same
    /// findings, in the same order, as lint found before the bound and the per-band pairing.
    #[test]
    fn the_bound_changes_no_finding() {
        let mut rng = Xorshift(0x853c_49e6_748f_ea9b);
        let mut memories = Vec::new();
        for i in 0..300 {
            let text = note(&mut rng);
            if i % 3 == 0 {
                let edits = rng.below(1 + text.len() / 30);
                let copy = edited(&mut rng, &text, edits);
                memories.push(Candidate::new(format!("copy_{i:03}.md"), copy));
            }
            memories.push(Candidate::new(format!("note_{i:03}.md"), text));
        }

        // What lint did before the bound, as it did it: one map of buckets, every pair of
        // bucket-mates, then a diff of every candidate not already grouped.
        let mut buckets: HashMap<(usize, u64), Vec<usize>> = HashMap::new();
        for (i, memory) in memories.iter().enumerate() {
            for band in 0..BANDS {
                buckets
                    .entry((band, memory.band(band)))
                    .or_default()
                    .push(i);
            }
        }
        let mut pairs = Vec::new();
        for members in buckets.values() {
            for (n, &j) in members.iter().enumerate().skip(1) {
                for &i in &members[..n.min(MAX_BUCKET_PAIRS)] {
                    pairs.push((i.min(j), i.max(j)));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut expected = Vec::new();
        let mut groups = DisjointSets::new(memories.len());
        for (i, j) in pairs {
            let (a, b) = (&memories[i], &memories[j]);
            if groups.find(i) == groups.find(j) || !is_candidate(a, b) {
                continue;
            }
            let ratio = word_diff_ratio(&a.text, &b.text);
            if ratio >= DUPLICATE_THRESHOLD {
                groups.union(i, j);
                expected.push((
                    a.file.clone(),
                    b.file.clone(),
                    format!("{:.0}", ratio * 100.0),
                ));
            }
        }
        let found: Vec<String> = find_duplicates(&memories)
            .into_iter()
            .map(|f| f.message)
            .collect();
        let expected: Vec<String> = expected
            .into_iter()
            .map(|(a, b, percent)| {
                let (first, second) = if a <= b { (a, b) } else { (b, a) };
                format!("{first} and {second} are {percent}% similar: merge them into one memory")
            })
            .collect();
        assert!(
            expected.len() >= 40,
            "{} planted pairs found",
            expected.len()
        );
        assert_eq!(found, expected);
    }
}
