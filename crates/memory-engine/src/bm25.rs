//! Lexical ranking for offline recall: BM25F over several weighted fields, so a word in a
//! memory's name counts more than one in its description, and one in its body least.
//!
//! Tokens: text is lowercased (NFKD-normalised with combining marks dropped when it is not
//! ASCII, so `decisión` = `decision`), split on everything that is not a letter or digit (so
//! `execute_trade.rb` gives `execute`, `trade`, `rb`), stripped of English and Spanish stop words
//! and one-letter tokens, spelled the American way (`colours` = `colors`, `catalogue` =
//! `catalog`: codespell's list, `words/README.md`), and stemmed with the Snowball English stemmer
//! (`deploys`, `deploying` and `deployed` are all `deploy`). `rust-stemmers` is the Snowball
//! implementation tantivy uses; hand-rolled suffix rules merge wrong words, as hand-rolled
//! spelling rules would (`four` is not `for`).
//!
//! The index keeps terms as numbers: each distinct surface form is folded and stemmed once, and
//! every later occurrence is one hash lookup of a borrowed `&str` — no allocation per token, in
//! indexing or in search.
//!
//! Scores are BM25F (each field's term frequency normalised by that field's own average length,
//! weighted, then saturated once), and each hit also carries its *coverage*: the share of the
//! query's weight (the sum of its terms' IDF, a term no document has counting as the rarest) that
//! the document matched. Coverage says how much of the prompt a memory speaks to, which a raw
//! BM25 score — relative to the corpus — cannot; recall uses it to inject nothing when nothing
//! relates. Its *rare coverage* scales each word's IDF by how rare the word is in English at large
//! (from wordfreq's frequency tables: `words/README.md`), because a dir of twenty memories cannot
//! tell that "check", "without" or "keep" are how any question is phrased.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// The most a query weighs for [`Scored::coverage`]: this many of the rarest words. On the
/// labeled set (`make bench`), every prompt but the pasted logs weighs less; with the logs
/// uncapped, no memory covered 15 % of them.
const COVERAGE_WEIGHT_CAP: f64 = 10.0;

const STOP_WORDS: &[&str] = &[
    // English
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "for",
    "from",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "me",
    "my",
    "no",
    "not",
    "now",
    "of",
    "on",
    "or",
    "our",
    "out",
    "please",
    "should",
    "so",
    "some",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "up",
    "us",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    // The filler of requests to an assistant: they say what to do, not what it is about.
    "actually",
    "add",
    "anything",
    "explain",
    "get",
    "give",
    "go",
    "going",
    "good",
    "got",
    "help",
    "know",
    "like",
    "look",
    "make",
    "maybe",
    "need",
    "new",
    "ok",
    "okay",
    "really",
    "show",
    "something",
    "still",
    "sure",
    "tell",
    "thing",
    "things",
    "try",
    "use",
    "using",
    "want",
    "way",
    "write", // Spanish
    "al",
    "como",
    "con",
    "de",
    "del",
    "el",
    "en",
    "es",
    "esta",
    "este",
    "la",
    "las",
    "lo",
    "los",
    "mas",
    "mi",
    "muy",
    "para",
    "pero",
    "por",
    "que",
    "se",
    "si",
    "sin",
    "su",
    "sus",
    "un",
    "una",
    "y",
    "ya",
];

/// `word`'s stem, spelled the American way first ([`american_spelling`]).
fn stem(word: &str) -> Cow<'_, str> {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(american_spelling(word))
}

/// British spellings and their American forms: lines of the two words, from codespell's en-GB →
/// en-US dictionary (`words/README.md`).
const BRITISH_SPELLINGS: &str = include_str!("words/british.txt");

/// `word` spelled the American way when it is a British spelling (`colours` → `colors`), else
/// `word`: a person writing "colour" means the memory that says "color". The map of 535 words
/// takes tens of microseconds to build, once.
fn american_spelling(word: &str) -> &str {
    static AMERICAN: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    let american = AMERICAN.get_or_init(|| {
        BRITISH_SPELLINGS
            .lines()
            .filter_map(|line| line.split_once(' '))
            .collect()
    });
    american.get(word).copied().unwrap_or(word)
}

/// Calls `each` with every word of `text` folded (lowercase, accents off), stop words and
/// one-letter words left out, before stemming. `buffer` is reused between calls.
fn for_each_word(text: &str, buffer: &mut String, mut each: impl FnMut(&str)) {
    buffer.clear();
    if text.is_ascii() {
        buffer.push_str(text);
        buffer.make_ascii_lowercase();
    } else {
        buffer.extend(
            text.nfkd()
                .filter(|c| !is_combining_mark(*c))
                .flat_map(char::to_lowercase),
        );
    }
    for word in buffer.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().nth(1).is_some() && !STOP_WORDS.contains(&word) {
            each(word);
        }
    }
}

/// The stemmed tokens of `text`, in order, with repeats.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, &mut String::new(), |word| {
        out.push(stem(word).into_owned());
    });
    out
}

/// How common English words are: lines of a word and its Zipf frequency (log10 of uses per
/// billion words), in byte order of the words, from wordfreq (`words/README.md`).
const ENGLISH_WORDS: &str = include_str!("words/english.txt");
/// A word used less than once per million words is rare ([`english_rarity`] 1).
const RARE_ZIPF: f64 = 3.0;
/// The commonest English words ("the" 7.7, "to" 7.4) say nothing ([`english_rarity`] 0).
const COMMONEST_ZIPF: f64 = 7.0;

/// `word`'s Zipf frequency, 0 for a word not in [`ENGLISH_WORDS`]: a binary search over the
/// text itself, halving a range of bytes and reading the line holding its middle byte, so there
/// is nothing to build (a map of its 28,000 words took 4 ms, most of a cold hook's time).
fn english_zipf(word: &str) -> f64 {
    let bytes = ENGLISH_WORDS.as_bytes();
    // Both ends of the range stand at the start of a line.
    let (mut low, mut high) = (0, bytes.len());
    while low < high {
        let middle = low + (high - low) / 2;
        let start = bytes[..middle]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let end = bytes[middle..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |at| middle + at);
        let line = &ENGLISH_WORDS[start..end];
        let (entry, zipf) = line.split_once(' ').unwrap_or((line, ""));
        match entry.cmp(word) {
            std::cmp::Ordering::Equal => return zipf.parse().unwrap_or(0.0),
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    0.0
}

/// How rare `word` is in English at large, 0..=1: 1 for a word used less than once per million
/// words (Zipf 3: `kubernetes`, `webhook`, `pipefail`, or no English word at all), falling
/// linearly to 0 at Zipf 7, the commonest words ("the"): `deployment` 0.77, `check` 0.42,
/// `without` 0.33. A memory dir is too small to know that "check" or "without" is how any
/// question is phrased: in twenty memories one that says "check" looks rare.
fn english_rarity(word: &str) -> f64 {
    let zipf = english_zipf(word);
    ((COMMONEST_ZIPF - zipf) / (COMMONEST_ZIPF - RARE_ZIPF)).clamp(0.0, 1.0)
}

/// Term numbers: each surface form is stemmed once.
#[derive(Debug, Clone, Default)]
struct Vocabulary {
    /// Surface word → term.
    words: HashMap<String, u32>,
    /// Stem → term.
    stems: HashMap<String, u32>,
    /// How many terms there are.
    count: u32,
}

impl Vocabulary {
    fn term(&mut self, word: &str) -> u32 {
        if let Some(&term) = self.words.get(word) {
            return term;
        }
        let stem = stem(word);
        let term = match self.stems.get(stem.as_ref()) {
            Some(&term) => term,
            None => {
                let term = self.count;
                self.count += 1;
                self.stems.insert(stem.into_owned(), term);
                term
            }
        };
        self.words.insert(word.to_owned(), term);
        term
    }

    /// The term of `word` if any document has it, without learning it.
    fn known(&self, word: &str) -> Option<u32> {
        self.words
            .get(word)
            .or_else(|| self.stems.get(stem(word).as_ref()))
            .copied()
    }
}

/// One document: per field, its (term, count) pairs and its length.
#[derive(Debug, Clone, Default)]
struct Doc {
    fields: Vec<FieldStats>,
}

#[derive(Debug, Clone, Default)]
struct FieldStats {
    /// Sorted by term.
    counts: Vec<(u32, u32)>,
    length: u32,
}

/// A BM25F index over documents made of weighted fields (the same fields, in the same order, for
/// every document).
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    vocabulary: Vocabulary,
    docs: Vec<Doc>,
    weights: Vec<f64>,
    /// Documents containing each term.
    df: Vec<u32>,
    /// Average length of each field.
    avg_length: Vec<f64>,
}

/// A query's distinct terms, as [`Bm25Index::search`] weighs them.
#[derive(Default)]
struct QueryTerms {
    /// Each known term, the word as the query has it, and the term's weight.
    known: Vec<(u32, String, Weight)>,
    unknown: Vec<String>,
    known_weight: Weight,
    unknown_weight: Weight,
}

/// What a query term weighs for coverage: its IDF, and its IDF scaled by how rare the word is in
/// English ([`english_rarity`]).
#[derive(Debug, Clone, Copy, Default)]
struct Weight {
    idf: f64,
    rare: f64,
}

impl Weight {
    fn of(idf: f64, word: &str) -> Weight {
        Weight {
            idf,
            rare: idf * english_rarity(word),
        }
    }

    fn add(&mut self, other: Weight) {
        self.idf += other.idf;
        self.rare += other.rare;
    }
}

/// One document's score against a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The document's position in the input.
    pub doc: usize,
    pub score: f64,
    /// The share of the query's IDF weight this document matched, in 0..=1.
    pub coverage: f64,
    /// The same share with each word's IDF scaled by how rare the word is in English
    /// ([`english_rarity`]): how much of what the query is about the document matched, rather
    /// than of the ordinary words it is phrased in ("check", "without", "keep").
    pub rare_coverage: f64,
    /// The query's words the document contains (as the query has them), in query order, one
    /// per distinct term.
    pub matched: Vec<String>,
    /// The query's distinct terms (stop words left out), known to the index or not.
    pub query_terms: usize,
}

impl Bm25Index {
    /// Indexes `docs`, each a list of `(text, weight)` fields.
    pub fn new<'a>(docs: impl IntoIterator<Item = Vec<(&'a str, f64)>>) -> Bm25Index {
        let mut index = Bm25Index::default();
        let mut buffer = String::new();
        let mut terms: Vec<u32> = Vec::new();
        for fields in docs {
            if index.weights.len() < fields.len() {
                index.weights.resize(fields.len(), 0.0);
            }
            let mut doc = Doc::default();
            for (position, (text, weight)) in fields.into_iter().enumerate() {
                index.weights[position] = weight;
                terms.clear();
                let vocabulary = &mut index.vocabulary;
                for_each_word(text, &mut buffer, |word| terms.push(vocabulary.term(word)));
                let length = u32::try_from(terms.len()).unwrap_or(u32::MAX);
                terms.sort_unstable();
                let mut counts: Vec<(u32, u32)> = Vec::new();
                for &term in &terms {
                    match counts.last_mut() {
                        Some((last, count)) if *last == term => *count += 1,
                        _ => counts.push((term, 1)),
                    }
                }
                doc.fields.push(FieldStats { counts, length });
            }
            let mut seen: Vec<u32> = doc
                .fields
                .iter()
                .flat_map(|f| f.counts.iter().map(|&(t, _)| t))
                .collect();
            seen.sort_unstable();
            seen.dedup();
            for term in seen {
                let slot = term as usize;
                if index.df.len() <= slot {
                    index.df.resize(slot + 1, 0);
                }
                index.df[slot] += 1;
            }
            index.docs.push(doc);
        }
        let n = index.docs.len().max(1) as f64;
        index.avg_length = (0..index.weights.len())
            .map(|f| {
                index
                    .docs
                    .iter()
                    .map(|d| d.fields.get(f).map_or(0, |s| s.length) as f64)
                    .sum::<f64>()
                    / n
            })
            .collect();
        index
    }

    fn idf(&self, df: u32) -> f64 {
        let n = self.docs.len() as f64;
        let df = f64::from(df);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The query's distinct terms: those the index knows (with the word as the query has it),
    /// the stems of those it does not, and their summed weights (a word no document has counting
    /// as the rarest).
    fn query(&self, query: &str) -> QueryTerms {
        let mut terms = QueryTerms::default();
        for_each_word(query, &mut String::new(), |word| {
            match self.vocabulary.known(word) {
                Some(term) if !terms.known.iter().any(|(t, _, _)| *t == term) => {
                    let weight = Weight::of(self.idf(self.df[term as usize]), word);
                    terms.known_weight.add(weight);
                    terms.known.push((term, word.to_owned(), weight));
                }
                Some(_) => {}
                None => {
                    let stem = stem(word);
                    if !terms.unknown.iter().any(|u| u == stem.as_ref()) {
                        terms.unknown_weight.add(Weight::of(self.idf(0), word));
                        terms.unknown.push(stem.into_owned());
                    }
                }
            }
        });
        terms
    }

    /// The share of the query's weight carried by words some document has, in 0..=1 (0 for a
    /// query with no words): how much of a prompt speaks this corpus's vocabulary at all. An
    /// ordinary question is mostly words a project's memories never use (`pipefail`,
    /// `StatefulSet`); a prompt about the project mostly words they do.
    pub fn known_share(&self, query: &str) -> f64 {
        let terms = self.query(query);
        let total = terms.known_weight.idf + terms.unknown_weight.idf;
        if total > 0.0 {
            terms.known_weight.idf / total
        } else {
            0.0
        }
    }

    /// The documents matching at least one query term, best first (ties keep input order).
    pub fn search(&self, query: &str) -> Vec<Scored> {
        let QueryTerms {
            known,
            unknown,
            known_weight,
            unknown_weight,
        } = self.query(query);
        // A prompt's weight stops growing past a sentence's worth of rare words: a question
        // around a pasted log or stack trace is about the question, not diluted by every path,
        // hash and number in the paste.
        let cap = COVERAGE_WEIGHT_CAP * self.idf(0);
        let total_idf = (known_weight.idf + unknown_weight.idf).min(cap);
        let total_rare = (known_weight.rare + unknown_weight.rare).min(cap);
        let share = |part: f64, total: f64| if total > 0.0 { part / total } else { 0.0 };
        let query_terms = known.len() + unknown.len();
        let mut scored: Vec<Scored> = Vec::new();
        for (i, doc) in self.docs.iter().enumerate() {
            let mut score = 0.0;
            let mut matched_weight = Weight::default();
            let mut matched = Vec::new();
            for (term, word, weight) in &known {
                let term = *term;
                let mut tf = 0.0;
                for (f, field) in doc.fields.iter().enumerate() {
                    let Ok(at) = field.counts.binary_search_by_key(&term, |&(t, _)| t) else {
                        continue;
                    };
                    let count = f64::from(field.counts[at].1);
                    let norm = if self.avg_length[f] > 0.0 {
                        1.0 - B + B * f64::from(field.length) / self.avg_length[f]
                    } else {
                        1.0
                    };
                    tf += self.weights[f] * count / norm;
                }
                if tf == 0.0 {
                    continue;
                }
                score += weight.idf * tf * (K1 + 1.0) / (tf + K1);
                matched_weight.add(*weight);
                matched.push(word.clone());
            }
            if score > 0.0 {
                scored.push(Scored {
                    doc: i,
                    score,
                    coverage: share(matched_weight.idf, total_idf),
                    rare_coverage: share(matched_weight.rare, total_rare),
                    matched,
                    query_terms,
                });
            }
        }
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_fold_case_accents_and_stem_and_drop_stop_words() {
        assert_eq!(
            tokens("The Decisión about execute_trade.rb: memories & Patterns"),
            ["decis", "execut", "trade", "rb", "memori", "pattern"]
        );
        assert_eq!(tokens("deploys deploying deployed"), ["deploy"; 3]);
        assert_eq!(
            tokens("process bus analysis"),
            ["process", "bus", "analysi"]
        );
        assert!(tokens("a I y é").is_empty());
    }

    #[test]
    fn british_spellings_are_the_american_words() {
        assert_eq!(tokens("colours colors"), ["color"; 2]);
        assert_eq!(tokens("Catalogue catalog"), ["catalog"; 2]);
        assert_eq!(tokens("normalised normalized"), ["normal"; 2]);
        // Words that only look British keep their own spelling.
        assert_eq!(tokens("four hour"), ["four", "hour"]);
        let index = Bm25Index::new([vec![("design system colors", 1.0)], vec![("fonts", 1.0)]]);
        let hits = index.search("Which colour should the badge use?");
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].doc, 0);
        // The match is reported as the prompt spells it.
        assert_eq!(hits[0].matched, ["colour"]);
    }

    #[test]
    fn the_british_spellings_are_sorted_single_words_never_folded_twice() {
        let pairs: Vec<(&str, &str)> = BRITISH_SPELLINGS
            .lines()
            .map(|line| line.split_once(' ').expect("two words a line"))
            .collect();
        assert!(pairs.len() > 500, "{}", pairs.len());
        for (british, american) in &pairs {
            for word in [british, american] {
                assert!(
                    word.len() >= 2 && word.bytes().all(|b| b.is_ascii_lowercase()),
                    "{word:?}"
                );
            }
            assert_eq!(
                american_spelling(american),
                *american,
                "{british} → {american}"
            );
        }
        assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn rarer_terms_and_heavier_fields_rank_higher() {
        let index = Bm25Index::new([
            vec![("testing policy", 2.0), ("tests hit a real database", 1.0)],
            vec![
                ("deploy freeze", 2.0),
                ("no deploys on fridays during testing", 1.0),
            ],
            vec![("style", 2.0), ("prefers tabs", 1.0)],
        ]);
        let hits = index.search("database tests");
        assert_eq!(hits[0].doc, 0);
        assert_eq!(hits[0].matched, ["database", "tests"]);
        assert!((hits[0].coverage - 1.0).abs() < 1e-9);
        assert!(
            index.search("kubernetes").is_empty(),
            "no shared term, no hit"
        );
        let hits = index.search("testing");
        assert_eq!(hits[0].doc, 0, "a name hit beats a description hit");
        assert_eq!(hits.len(), 2);
    }

    #[test]
    fn coverage_is_the_share_of_the_query_a_document_speaks_to() {
        let index = Bm25Index::new([vec![("stripe webhooks", 1.0)], vec![("cart rounding", 1.0)]]);
        let hits = index.search("stripe webhook signature");
        assert_eq!(hits.len(), 1);
        // Two of three terms; the unknown one weighs what a term no document has would.
        let (seen_once, never) = ((1.0f64 + 1.5 / 1.5).ln(), (1.0f64 + 2.5 / 0.5).ln());
        let expected = 2.0 * seen_once / (2.0 * seen_once + never);
        assert!((hits[0].coverage - expected).abs() < 1e-9, "{hits:?}");
        assert_eq!(hits[0].matched, ["stripe", "webhook"]);
        assert_eq!(hits[0].query_terms, 3);
        let hits = index.search("stripe stripe");
        assert!((hits[0].coverage - 1.0).abs() < 1e-9, "repeats count once");

        // Around a pasted log of 300 unknown tokens, the query weighs at most ten rare words.
        let log: Vec<String> = (0..300).map(|i| format!("0x{i:04x}deadbeef")).collect();
        let hits = index.search(&format!("stripe webhook failing:\n{}", log.join(" ")));
        let expected = 2.0 * seen_once / (COVERAGE_WEIGHT_CAP * never);
        assert!((hits[0].coverage - expected).abs() < 1e-9, "{hits:?}");
    }

    #[test]
    fn the_rare_coverage_weighs_the_ordinary_words_a_question_is_phrased_in_less() {
        assert_eq!(english_rarity("the"), 0.0);
        assert_eq!(english_rarity("kubernetes"), 1.0);
        assert_eq!(english_rarity("pipefail"), 1.0, "no English word at all");
        for line in ENGLISH_WORDS.lines() {
            let (word, zipf) = line.split_once(' ').expect("a word and its frequency");
            assert_eq!(
                english_zipf(word),
                zipf.parse::<f64>().expect("a number"),
                "{word}"
            );
        }
        assert_eq!(english_zipf("zzzzzz"), 0.0);
        assert_eq!(english_zipf("a"), 0.0, "before the first word");
        // "check" is used 10^5.3 times per billion words.
        assert!((english_rarity("check") - (7.0 - 5.3) / 4.0).abs() < 1e-9);

        let index = Bm25Index::new([
            vec![("check the build without network access", 1.0)],
            vec![("KeyError in the invoice importer", 1.0)],
        ]);
        let hits = index.search("how do I check if a key exists without getting a KeyError");
        let ordinary = hits
            .iter()
            .find(|h| h.doc == 0)
            .expect("shares check, without");
        let rare = hits.iter().find(|h| h.doc == 1).expect("shares keyerror");
        assert_eq!(ordinary.matched, ["check", "without"]);
        assert!(ordinary.coverage > rare.coverage, "{hits:?}");
        assert!(ordinary.rare_coverage < rare.rare_coverage, "{hits:?}");
        assert!(ordinary.rare_coverage < ordinary.coverage, "{hits:?}");
        assert!(rare.rare_coverage > rare.coverage, "{hits:?}");
    }

    #[test]
    fn the_known_share_is_the_weight_of_the_words_the_corpus_uses() {
        let index = Bm25Index::new([vec![("stripe webhooks", 1.0)], vec![("cart rounding", 1.0)]]);
        let (seen_once, never) = ((1.0f64 + 1.5 / 1.5).ln(), (1.0f64 + 2.5 / 0.5).ln());
        let share = index.known_share("Stripe webhook signature, stripe again");
        assert!((share - 2.0 * seen_once / (2.0 * seen_once + never)).abs() < 1e-9);
        assert!((index.known_share("cart rounding") - 1.0).abs() < 1e-9);
        assert_eq!(index.known_share("what does pipefail do"), 0.0);
        assert_eq!(index.known_share("the a an"), 0.0, "stop words only");
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let index = Bm25Index::new(Vec::<Vec<(&str, f64)>>::new());
        assert!(index.search("anything").is_empty());
    }
}
