//! Lexical ranking for offline recall: BM25 over several weighted fields (BM25F), so a word in a
//! memory's name counts more than one in its description.
//!
//! Tokens: text is NFKD-normalised with combining marks dropped (`decisión` = `decision`),
//! lowercased, split on everything that is not a letter or digit (so `execute_trade.rb` gives
//! `execute`, `trade`, `rb`), stripped of English and Spanish stop words and one-letter tokens,
//! and plurals are folded (`patterns` = `pattern`, `memories` = `memory`). Deliberately no deeper
//! stemming: a wrong merge costs more precision than it buys recall on one-line descriptions.

use std::collections::{BTreeSet, HashMap};

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

const STOP_WORDS: &[&str] = &[
    // English
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing",
    "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "just",
    "let", "me", "my", "no", "not", "now", "of", "on", "or", "our", "out", "please", "should",
    "so", "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "up", "us", "was", "we", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "you", "your", // Spanish
    "al", "como", "con", "de", "del", "el", "en", "es", "esta", "este", "la", "las", "lo", "los",
    "mas", "mi", "muy", "para", "pero", "por", "que", "se", "si", "sin", "su", "sus", "un", "una",
    "y", "ya",
];

/// The tokens of `text`, in order, with repeats.
pub fn tokens(text: &str) -> Vec<String> {
    let folded: String = text
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.chars().count() > 1 && !STOP_WORDS.contains(t))
        .map(fold_plural)
        .collect()
}

fn fold_plural(token: &str) -> String {
    let chars = token.chars().count();
    if chars > 4 && token.ends_with("ies") {
        return format!("{}y", &token[..token.len() - 3]);
    }
    if chars > 3
        && token.ends_with('s')
        && !token.ends_with("ss")
        && !token.ends_with("us")
        && !token.ends_with("is")
    {
        return token[..token.len() - 1].to_owned();
    }
    token.to_owned()
}

/// One document's weighted term frequencies and length.
#[derive(Debug, Clone, Default)]
struct DocStats {
    tf: HashMap<String, f64>,
    length: f64,
}

/// A BM25F index over documents made of weighted fields.
#[derive(Debug, Clone)]
pub struct Bm25Index {
    docs: Vec<DocStats>,
    df: HashMap<String, usize>,
    avg_length: f64,
}

/// One document's score against a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The document's position in the input.
    pub doc: usize,
    pub score: f64,
    /// The query terms the document contains, in query order.
    pub matched: Vec<String>,
}

impl Bm25Index {
    /// Indexes `docs`, each a list of `(text, weight)` fields.
    pub fn new<'a>(docs: impl IntoIterator<Item = Vec<(&'a str, f64)>>) -> Bm25Index {
        let mut df: HashMap<String, usize> = HashMap::new();
        let docs: Vec<DocStats> = docs
            .into_iter()
            .map(|fields| {
                let mut stats = DocStats::default();
                for (text, weight) in fields {
                    for token in tokens(text) {
                        *stats.tf.entry(token).or_default() += weight;
                        stats.length += weight;
                    }
                }
                for term in stats.tf.keys() {
                    *df.entry(term.clone()).or_default() += 1;
                }
                stats
            })
            .collect();
        let avg_length = if docs.is_empty() {
            0.0
        } else {
            docs.iter().map(|d| d.length).sum::<f64>() / docs.len() as f64
        };
        Bm25Index {
            docs,
            df,
            avg_length,
        }
    }

    /// The documents matching at least one query term, best first (ties keep input order).
    pub fn search(&self, query: &str) -> Vec<Scored> {
        let mut seen = BTreeSet::new();
        let terms: Vec<String> = tokens(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect();
        let n = self.docs.len() as f64;
        let mut scored: Vec<Scored> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let mut score = 0.0;
                let mut matched = Vec::new();
                for term in &terms {
                    let Some(&tf) = doc.tf.get(term) else {
                        continue;
                    };
                    let df = self.df.get(term).copied().unwrap_or(0) as f64;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let norm = if self.avg_length > 0.0 {
                        1.0 - B + B * doc.length / self.avg_length
                    } else {
                        1.0
                    };
                    score += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                    matched.push(term.clone());
                }
                (score > 0.0).then_some(Scored {
                    doc: i,
                    score,
                    matched,
                })
            })
            .collect();
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_fold_case_accents_plurals_and_drop_stop_words() {
        assert_eq!(
            tokens("The Decisión about execute_trade.rb: memories & Patterns"),
            ["decision", "execute", "trade", "rb", "memory", "pattern"]
        );
        assert_eq!(
            tokens("process bus analysis"),
            ["process", "bus", "analysis"]
        );
        assert!(tokens("a I y").is_empty());
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
        assert_eq!(hits[0].matched, ["database", "test"]);
        assert!(
            index.search("kubernetes").is_empty(),
            "no shared term, no hit"
        );
        let hits = index.search("testing");
        assert_eq!(hits[0].doc, 0, "a name hit beats a description hit");
        assert_eq!(hits.len(), 2);
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let index = Bm25Index::new(Vec::<Vec<(&str, f64)>>::new());
        assert!(index.search("anything").is_empty());
    }
}
