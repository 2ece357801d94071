//! The one relevance gate: whether a memory is about the prompt at all, decided the same way for
//! the prompt hook, `engram recall` and the app's Recall tab, and put into words for each memory
//! (its verdict), so a person sees why a memory was or was not injected.
//!
//! A prompt nothing in the dir answers — an ordinary programming question such as "what does
//! `set -euo pipefail` do?" — still shares words with memories ("set", "script", "test",
//! "change") and still lands somewhere in the model's sentence space. The gate asks for evidence
//! a chance overlap rarely gives:
//!
//! - **offline** ([`LexicalEvidence`]): how much of the prompt's weight a memory's shared words
//!   cover (each word weighs its IDF, a word no memory has weighing the most: the prompt's rare
//!   vocabulary), asked of it by the prompt's form ([`super::prompt_form`]). For a general
//!   question a memory must share at least two of the prompt's distinct words and cover 20 %,
//!   or cover 40 % with one word (a prompt of one or two words): one shared word in a longer
//!   question is what unrelated questions have in common with a memory dir (on the 70 tuning
//!   questions of `bench/recall-questions.toml`, 382 of the 415 memory matches were one word).
//!   In a general question each word's IDF is also scaled by how rare the word is in English
//!   ([`Bars::english_rarity`]): twenty memories cannot tell that "check", "without" or "keep"
//!   are how any question is phrased, and a question's matches on those are chance.
//!   For a prompt set in the project (it says "we" or "this", or asks for work) shared words
//!   covering 15 % are enough, however many: there one word is often the memory meant (on the
//!   labeled set, 8 of the 72 relevant memories were found by one word, such as tokio for
//!   "Let's use tokio to read files concurrently"); so is a name written as code that the
//!   memory writes the same way (`SaveData`, `app_open`: `recall::lexical::code_names`). A
//!   memory meeting these bars shows the prompt is about the dir, and then every memory sharing
//!   its words is related, as locally (`recall::lexical::bring_along`): the bars decide whether
//!   the prompt gets anything, the ranking and the floor which memories.
//! - **local** ([`Calibration`]): similarity means different things for different models, so
//!   it is measured in the model's own spread (σ) of similarity between unrelated texts (a
//!   fixed set of ordinary requests and project facts on other subjects, embedded once per
//!   model and cached), and from the prompt's own mean similarity to those ordinary requests
//!   ([`Calibration::for_prompt`]): a generic programming question ("how do I squash three
//!   commits?") is near any project's memories and near ordinary requests alike, a prompt about
//!   the project is near its memories only. A memory's *strength* is how many σ its similarity
//!   stands above that baseline. The prompt is about the dir when its strongest memory reaches
//!   a bar set by the prompt's form, as offline: 4.375σ for a general question, 2.375σ for a
//!   prompt set in the project ("Be honest: is this plan any good?" finds the memory asking for
//!   brutal honesty at 2.5σ; "Is a plan any good?" does not, at 2.4σ). A general question
//!   needs the lexical side's agreement as well (a memory meeting the offline bars), or 4.5σ on
//!   the model's word alone: a question on the dir's own technology ("What's the difference
//!   between includes, preload and eager_load in ActiveRecord?" asked of a Rails project's
//!   memories) stands near them without being about them. Then every memory
//!   reaching 1.5σ is related (a prompt that is about the dir brings its weaker matches along,
//!   a prompt that is not brings none). Two more kinds of evidence are
//!   measured and count 0σ as chosen ([`Bars::CHOSEN`] says why): the words a memory shares
//!   with the prompt ([`Bars::lexical_agreement`]), and the prompt's *known share*, the share
//!   of its weight in words the dir uses anywhere ([`Bars::in_domain`],
//!   [`crate::bm25::Bm25Index::known_share`]).
//!
//! The numbers are [`Bars::CHOSEN`].
//!
//! The bars were chosen on the tuning half of the questions and `bench/recall-set`; `make bench`
//! prints the trade-off (recall@5 against questions wrongly injected) for neighbouring bars, on
//! those and on the held-out half with `bench/recall-heldout`.

use super::prompt_form::PromptForm;
use crate::embed::{cosine, Embedder};
use crate::error::Result;

/// Where the gate's bars stand. [`Bars::CHOSEN`] is what recall uses; `make bench` measures its
/// neighbours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bars {
    /// For a general question: distinct prompt words a memory must share (unless it covers
    /// `alone_coverage`).
    pub min_words: usize,
    /// The share of the prompt's weight a memory sharing `min_words` words must cover.
    pub min_coverage: f64,
    /// The share of the prompt's weight one shared word must cover on its own.
    pub alone_coverage: f64,
    /// For a general question, whether each word weighs its IDF scaled by how rare it is in
    /// English (`Scored::rare_coverage` in [`crate::bm25`]): the ordinary words a question is
    /// phrased in ("check", "without", "keep") then weigh little, whatever the dir's memories
    /// happen to say.
    pub english_rarity: bool,
    /// For a prompt set in the project ([`super::prompt_form`]): the share of its weight a
    /// memory's shared words must cover, however many (the bars above pass too).
    pub project_coverage: f64,
    /// Offline, whether in a prompt set in the project a name written as code (`SaveData`,
    /// `app_open`, `SHT40`) that a memory writes the same way is enough on its own
    /// (`recall::lexical::code_names`): code names are the project's own, not English.
    pub code_names: bool,
    /// Offline, whether a prompt one match shows to be about the dir brings its other matches
    /// along (`recall::lexical::bring_along`), rather than each memory being held to the bars
    /// alone.
    pub bring_along: bool,
    /// Offline, a related match scoring under this share of the best one's lexical score is
    /// noise next to it and passed over.
    pub lexical_floor: f64,
    /// The same locally, for the score combining similarity and a share of the lexical score.
    pub semantic_floor: f64,
    /// Strength (σ over unrelated text) the strongest memory of a general question must reach
    /// ([`super::prompt_form`]).
    pub prompt: f64,
    /// The same for a prompt set in the project.
    pub project_prompt: f64,
    /// Strength the strongest memory of a general question must reach when no memory meets the
    /// lexical bars: the model's word alone. Under it, the question needs the lexical side's
    /// agreement as well as `prompt`.
    pub model_alone: f64,
    /// Strength each memory must reach once the prompt passes.
    pub memory: f64,
    /// σ added per unit of lexical coverage, for a memory sharing `min_words` words.
    pub lexical_agreement: f64,
    /// σ added to the strongest memory per unit of the prompt's known share (the share of its
    /// weight in words the dir uses at all): query-level evidence that the prompt is about the
    /// dir.
    pub in_domain: f64,
    /// Whether a memory's similarity is measured from the prompt's own mean similarity to the
    /// unrelated requests ([`Calibration::for_prompt`]) rather than from the model's mean for
    /// unrelated pairs: a generic question is near everything, a prompt about a project is not.
    pub prompt_baseline: bool,
}

impl Bars {
    /// On the tuning half of the questions and `bench/recall-set`: offline, 20 of 210
    /// (question, dir) pairs inject (47 % before the gate) at recall@5 0.65 (0.68 with no
    /// gate); local, 8 of 210 (60 %) at 0.93 (0.96 as the top five with no gate, 0.94 with the
    /// floor). Bars that silence more cost recall faster (`make bench`, whose table opens with no
    /// gate). The 48 yes/no questions written later (`super::prompt_form` says why)
    /// joined the halves after every choice below: with them offline 24 of 282 tuning pairs and
    /// 14 of 276 held out inject, locally 14 and 14, and each rule below still picks the same
    /// bars among the neighbours `make bench` prints.
    ///
    /// Local, a general question the lexical side does not agree with (no memory meets the
    /// offline bars) needs 4.5σ: the most found on the tuning set with at most 10 % of its
    /// (question, dir) pairs injecting, then the fewest injecting, then the higher bars, on a
    /// grid of 0.125σ with the general bar moved too — 0.93 at 18 of 210 (held out 0.855 at 10
    /// of 204), against 0.94 at 23 (0.87 at 16) with the lexical side never asked. The cap was
    /// 15 % for the two bars below, and at 15 % this bar stays unasked: more recall is always
    /// bought by more questions until the cap. `bench/recall-fresh`, written later by two writers
    /// who saw none of this (memories with **Why:** lines, prompts as people type them), showed
    /// what that cap let in: questions on the dir's own tools, 4 of the 6 nothing-relevant
    /// prompts of one writer's three projects (2 with this bar), 1 of 6 of the other's; recall@5
    /// there 0.89 either way.
    ///
    /// With that bar in place the pair below was chosen again by its own rule: the general
    /// question's bar rose from 3.875σ to 4.375σ (the project's stayed at 2.375σ), at the same
    /// tuning recall@5 (0.93) with 8 of 210 pairs injecting instead of 11; held out 9 of 204
    /// instead of 10 at the same 0.855; on `bench/recall-fresh` 242 of 1,620 instead of 268, at
    /// 0.881 instead of 0.890. Chosen again with this bar and the new pair, 4.5σ stays: 4.375σ
    /// finds as much with as many injecting, and the rule takes the higher.
    ///
    /// Local, the bars are the pair (general question, prompt set in the project) finding the
    /// most on the tuning set with at most 15 % of its (question, dir) pairs injecting — under
    /// the one nothing-relevant prompt in six that may get a memory, with room for prompts unlike
    /// ours — then the fewest injecting, then the higher bars, on a grid of 0.125σ: first
    /// 3.875σ and 2.375σ, 0.94 at 23 of 210 (held out 0.87 at 16 of 204) with the lexical side
    /// never asked; 4.375σ and 2.375σ since it is (above). Blind to the prompt's form, one
    /// bar for every prompt, the same rule chose 3.5σ: 0.88 at 26 (held out 0.86 at 22); a
    /// general question then needed no more than a prompt pointing at the asker's own work, so
    /// the bar that kept questions quiet silenced that work too (at most 10 %, the first choice,
    /// it stood at 3.625σ: 0.85 tuning, 0.84 held out). Offline, the two-word
    /// bar stays at 20 % for general questions: 15 % found one prompt more (0.57 at 27 of 210)
    /// and made 4 of the soak's 20 unrelated prompts inject (`make soak`, the issue's own
    /// examples among them), where 20 % injects none. For prompts set in the project, 15 %
    /// however many words is the bar finding the most with every tuning prompt nothing
    /// relates to silent, on a grid of 5 % (10 % let a pasted traceback from another project
    /// in for 0.02 more recall@5, then at 1.94 memories a prompt against 1.69); reading the
    /// prompt's form took tuning recall@5 from 0.56 to 0.62 at the same questions injected
    /// (held out 0.49 → 0.62, 12 → 14 of 204), each memory then held to the bars alone.
    ///
    /// Measured from the model's mean for unrelated pairs (the first pass), the local gate found
    /// 0.79 with 10 of 210 injecting; the prompt's known share at 1.5σ found 0.82 with 18 —
    /// measured from the prompt's own baseline it adds nothing at that share of questions, nor
    /// do shared words (3σ per unit of coverage), so both count 0σ. Before the prompt's form,
    /// no lexical evidence measured did better offline: a
    /// lower bar for one shared word when the prompt's words are known to the dir, or for a
    /// word only one memory has, injects about as many questions more as it finds memories.
    /// Nor did evidence from outside the dir: synonyms from a thesaurus (WordNet), static
    /// word vectors (GloVe) or a static table distilled from the local model find a paraphrase
    /// for every one to ten questions more they inject (`docs/reliability.md`, limits). With
    /// the form read, the local model's word vectors let past only in prompts set in the
    /// project reach 0.65–0.68 tuning at 25–26 of 210 questions, letting one or two tuning
    /// prompts nothing relates to in: measured, not shipped.
    ///
    /// Offline, a general question's words weigh their IDF scaled by how rare they are in English
    /// (1 under Zipf 3, once per million words; 0 at Zipf 7, the commonest words: the scale's
    /// own landmarks, not tuned): 20 of 210 tuning pairs inject instead of 23, 12 of 204 held out
    /// instead of 14, 264 of 1,620 fresh instead of 314 (255 with `prompt_form` reading a subject
    /// named with "the" and "show me how …"), at the same recall@5 on every set. Prompts set in the project keep IDF alone: there an ordinary
    /// word is the project's own ("the deployment", "the image"), and scaling it lost 3 of 69
    /// held-out memories. Locally it changes a few pairs, as the model decides most.
    ///
    /// Offline, the bars first decided each memory on its own; they now decide the prompt, and
    /// a prompt one memory shows to be about the dir brings its other matches along (as the
    /// local gate always did): recall@5 0.62 → 0.65 tuning and 0.62 → 0.70 held out, at 1.25
    /// → 1.69 and 1.16 → 1.90 memories a prompt, with the same questions injecting and every
    /// prompt nothing relates to silent. The memories a weak match finds are worth their
    /// neighbours' cost: the one meant is missing from the prompt otherwise ("Type this JSON
    /// response from the payment API" found the rule against `any` by "types" alone).
    ///
    /// Each floor is the highest on a grid of 5 % that costs no tuning recall: offline 35 %
    /// (2.09 memories a prompt at 25 %, 1.69 at 35 %; 40 % loses a memory), locally 30 %
    /// (3.62 → 3.25 and 3.57 → 3.16; 35 % loses one). A floor says nothing about whether a
    /// prompt injects: the best related match always stands above it.
    pub const CHOSEN: Bars = Bars {
        min_words: 2,
        min_coverage: 0.2,
        alone_coverage: 0.4,
        english_rarity: true,
        project_coverage: 0.15,
        code_names: true,
        bring_along: true,
        lexical_floor: 0.35,
        semantic_floor: 0.3,
        prompt: 4.375,
        project_prompt: 2.375,
        model_alone: 4.5,
        memory: 1.5,
        lexical_agreement: 0.0,
        in_domain: 0.0,
        prompt_baseline: true,
    };

    /// The strength a prompt of `form` needs its strongest memory to reach, locally, when the
    /// lexical side agrees (`lexical_agrees`: a memory meets the lexical bars) or not.
    pub fn prompt_bar(&self, form: &PromptForm, lexical_agrees: bool) -> f64 {
        match (form.general, lexical_agrees) {
            (false, _) => self.project_prompt,
            (true, true) => self.prompt,
            (true, false) => self.model_alone.max(self.prompt),
        }
    }
}

impl Default for Bars {
    fn default() -> Bars {
        Bars::CHOSEN
    }
}

/// What a memory shares with the prompt, word for word.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalEvidence {
    /// Distinct prompt words the memory has.
    pub words: usize,
    /// Distinct words of the prompt (stop words left out).
    pub prompt_words: usize,
    /// The share of the prompt's IDF weight those words carry, in 0..=1.
    pub coverage: f64,
    /// Whether the prompt is a general question ([`super::prompt_form`]).
    pub general_question: bool,
    /// Whether the memory writes a name of the prompt's written as code exactly as the prompt
    /// does (`recall::lexical::code_names`).
    pub shares_code_name: bool,
}

impl LexicalEvidence {
    /// Whether this alone makes the memory about the prompt (the offline gate).
    pub fn passes(&self, bars: &Bars) -> bool {
        self.passes_by_words(bars) || self.passes_by_code_name(bars)
    }

    fn passes_by_words(&self, bars: &Bars) -> bool {
        (self.words >= bars.min_words && self.coverage >= bars.min_coverage)
            || self.coverage >= bars.alone_coverage
            || (!self.general_question && self.coverage >= bars.project_coverage)
    }

    /// Whether a code name the memory shares is what makes it about the prompt (one set in
    /// the project), its words falling short.
    pub fn passes_by_code_name(&self, bars: &Bars) -> bool {
        bars.code_names
            && !self.general_question
            && self.shares_code_name
            && !self.passes_by_words(bars)
    }

    /// The coverage that counts as agreement with the sentence vectors: none for one word.
    pub fn agreement(&self, bars: &Bars) -> f64 {
        if self.words >= bars.min_words {
            self.coverage
        } else {
            0.0
        }
    }

    /// "shares 2 of the prompt's 5 words (38 % of its weight)".
    pub fn describe(&self) -> String {
        format!(
            "shares {} of the prompt's {} words ({} of its weight)",
            self.words,
            self.prompt_words,
            percent(self.coverage)
        )
    }

    /// The offline verdict of a match under the bars in a prompt that `by` (a file name) shows
    /// to be about the dir.
    pub fn brought_along(&self, by: &str) -> String {
        format!(
            "{}; brought along: {by} meets the bars, so the prompt is about this dir",
            self.describe()
        )
    }

    /// The offline verdict in words: what it shares, and whether that meets what the bars need
    /// or what it would need ("…; meets 15 % (the prompt is set in the project)", "…; needs 2
    /// words and 20 %, or 40 % alone").
    pub fn verdict(&self, bars: &Bars) -> String {
        let bar = if self.general_question {
            format!(
                "{} words and {}, or {} alone",
                bars.min_words,
                percent(bars.min_coverage),
                percent(bars.alone_coverage)
            )
        } else {
            format!(
                "{} (the prompt is set in the project)",
                percent(bars.project_coverage)
            )
        };
        let stands = if self.passes_by_words(bars) {
            "meets"
        } else {
            "needs"
        };
        format!("{}; {stands} {bar}", self.describe())
    }
}

/// The gate's bars for offline recall, for a prompt of `form`, in words (for the report).
pub fn lexical_rule(bars: &Bars, form: &PromptForm) -> String {
    if form.general {
        format!(
            "the prompt reads as {}: it is about this dir when a memory shares {} of the \
             prompt's words covering {} of its weight, or one covering {}; then every memory \
             sharing its words is related",
            form.why,
            bars.min_words,
            percent(bars.min_coverage),
            percent(bars.alone_coverage)
        )
    } else {
        format!(
            "the prompt reads as {}: it is about this dir when a memory shares words covering \
             {} of its weight; then every memory sharing its words is related",
            form.why,
            percent(bars.project_coverage)
        )
    }
}

fn percent(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// Ordinary requests to an assistant, and facts a project's memory might hold, none of them
/// about another: every (request, fact) pair is an unrelated pair, so their similarities are
/// what the model in use gives texts with nothing in common. Written apart from the labeled
/// sets and the benchmark's questions; changing them moves every bar.
const UNRELATED_REQUESTS: [&str; 20] = [
    "How do I convert a PNG image to WebP from the command line?",
    "What is the time complexity of inserting into a red-black tree?",
    "Write a limerick about a cat who hates Mondays",
    "How do I center text inside a LaTeX table cell?",
    "Explain how a bloom filter works",
    "What is the capital city of Canada?",
    "How do I profile the memory usage of a Node.js process?",
    "Recommend a good book about the history of Rome",
    "How do I compute a moving average in Excel?",
    "What is the difference between TCP keepalive and HTTP keep-alive?",
    "Give me a recipe for banana pancakes",
    "How do I resize a partition on Linux without losing data?",
    "What are the rules of cricket in simple terms?",
    "How do I write a Makefile rule that depends on every .c file?",
    "Translate good morning into Japanese",
    "How do I read an Excel file in R?",
    "What does a p-value mean in statistics?",
    "How do I plan a three-day trip to Lisbon?",
    "What is the best way to learn touch typing?",
    "How do I animate an SVG path with CSS?",
];
const UNRELATED_FACTS: [&str; 20] = [
    "The ferry timetable changes every October",
    "Invoices are sent on the first business day of each month",
    "The team prefers tabs over spaces in Go source files",
    "The warehouse robots stop at night for battery maintenance",
    "Podcast episodes are edited in Audacity and published on Fridays",
    "The choir rehearses on Wednesday evenings in the old church hall",
    "Our firmware targets the STM32F4 microcontroller and must fit in 512 KB of flash",
    "The wedding photos are stored on the NAS in the basement",
    "Grant proposals must be reviewed by two senior researchers before submission",
    "The museum closes its east wing on Mondays",
    "Sales leads from the website form go to HubSpot",
    "The chess engine searches with alpha-beta pruning to a depth of 20 plies",
    "Weather station readings are uploaded every hour over LoRa",
    "The legal team approves every change to the privacy policy",
    "Conference tickets are sold through Eventbrite",
    "The drone's flight controller runs PX4 firmware",
    "The newsletter goes out every Sunday at 8 am",
    "Student grades are exported to the school system as CSV",
    "The robot arm is calibrated before every shift",
    "Volunteers sign up for shifts in a shared spreadsheet",
];

/// How one embedding model scores unrelated texts: the mean and spread of its similarity over
/// every unrelated (request, fact) pair, the unit in which a memory's strength is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The vectors' source ([`Embedder::id`]).
    pub model: String,
    /// The similarity that counts as nothing: the model's mean over unrelated pairs, or, once
    /// [`Calibration::for_prompt`], the prompt's own mean similarity to the unrelated requests.
    pub mean: f64,
    pub spread: f64,
    /// The unrelated requests' vectors.
    pub requests: Vec<Vec<f32>>,
}

impl Calibration {
    /// Measures `embedder` (its vectors of the reference texts come from its cache after the
    /// first time). Blocking.
    pub fn measure(embedder: &dyn Embedder) -> Result<Calibration> {
        let texts: Vec<&str> = UNRELATED_REQUESTS
            .iter()
            .chain(UNRELATED_FACTS.iter())
            .copied()
            .collect();
        let vectors = embedder.embed(&texts)?;
        let (requests, facts) = vectors.split_at(UNRELATED_REQUESTS.len());
        let similarities: Vec<f64> = requests
            .iter()
            .flat_map(|r| facts.iter().map(move |f| f64::from(cosine(r, f))))
            .collect();
        let n = similarities.len() as f64;
        let mean = similarities.iter().sum::<f64>() / n;
        let variance = similarities.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
        Ok(Calibration {
            model: embedder.id().to_owned(),
            mean,
            // A model that puts everything at one similarity tells nothing apart; a floor keeps
            // the strength finite and such a model's memories under the bars.
            spread: variance.sqrt().max(1e-3),
            requests: requests.to_vec(),
        })
    }

    /// This calibration measured from the prompt at `prompt` (its vector): what counts as
    /// nothing is the prompt's own mean similarity to the unrelated requests. A generic
    /// programming question sits near any project's memories and near those requests alike; a
    /// prompt about the project is near its memories only. (On the tuning set, this found 0.85
    /// of the relevant memories where the model's mean found 0.82, at about the same share of
    /// ordinary questions injecting.)
    pub fn for_prompt(&self, prompt: &[f32]) -> Calibration {
        let mean = if self.requests.is_empty() {
            self.mean
        } else {
            self.requests
                .iter()
                .map(|r| f64::from(cosine(prompt, r)))
                .sum::<f64>()
                / self.requests.len() as f64
        };
        Calibration {
            mean,
            ..self.clone()
        }
    }

    /// A memory's strength: σ of its similarity over unrelated text, plus the lexical
    /// agreement.
    pub fn strength(&self, similarity: f64, lexical: Option<&LexicalEvidence>, bars: &Bars) -> f64 {
        (similarity - self.mean) / self.spread
            + bars.lexical_agreement * lexical.map_or(0.0, |l| l.agreement(bars))
    }

    /// The similarity that alone reaches `bar` σ.
    pub fn similarity_at(&self, bar: f64) -> f64 {
        self.mean + bar * self.spread
    }

    /// The gate's bars for local recall, for a prompt of `form` whose words a memory meets the
    /// lexical bars with (`lexical_agrees`) or not, in words (for the report).
    pub fn rule(&self, bars: &Bars, form: &PromptForm, lexical_agrees: bool) -> String {
        let agreement = if bars.lexical_agreement > 0.0 {
            format!(
                "; {}σ more per unit of coverage when it shares {} words",
                bars.lexical_agreement, bars.min_words
            )
        } else {
            String::new()
        };
        let in_domain = if bars.in_domain > 0.0 {
            format!(
                "; up to {}σ less as the prompt's words are ones this dir uses",
                bars.in_domain
            )
        } else {
            String::new()
        };
        let baseline = if bars.prompt_baseline {
            "the prompt's own similarity to ordinary requests on other subjects"
        } else {
            "its similarity for unrelated text"
        };
        let prompt_bar = bars.prompt_bar(form, lexical_agrees);
        let agreeing = bars.prompt_bar(form, true);
        let lexical_side = if prompt_bar > agreeing {
            format!(", as no memory shares enough of its words ({agreeing}σ when one does)")
        } else if form.general && bars.prompt_bar(form, false) > agreeing {
            ", as a memory shares enough of its words".to_owned()
        } else {
            String::new()
        };
        format!(
            "the prompt reads as {}: its strongest memory must stand {prompt_bar}σ{lexical_side} \
             ({}'s spread for unrelated text, {:.3}) above {baseline} (similarity \
             {:.2}{agreement}{in_domain}), then each memory {}σ (similarity {:.2})",
            form.why,
            self.model,
            self.spread,
            self.similarity_at(prompt_bar),
            bars.memory,
            self.similarity_at(bars.memory)
        )
    }
}

/// The local gate over the offered memories, each given as its similarity to the prompt and what
/// it shares with it word for word, for a prompt whose weight is `known_share` words the dir
/// uses ([`crate::bm25::Bm25Index::known_share`]): whether each is related, and why, in words.
pub fn semantic_verdicts(
    calibration: &Calibration,
    evidence: &[(f64, Option<LexicalEvidence>)],
    known_share: f64,
    form: &PromptForm,
    lexical_agrees: bool,
    bars: &Bars,
) -> Vec<(bool, String)> {
    let strengths: Vec<f64> = evidence
        .iter()
        .map(|(similarity, lexical)| calibration.strength(*similarity, lexical.as_ref(), bars))
        .collect();
    let strongest = strengths.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // The prompt's evidence: its strongest memory, and how much of it speaks the dir's words.
    let in_domain = bars.in_domain * known_share;
    let best = strongest + in_domain;
    let prompt_bar = bars.prompt_bar(form, lexical_agrees);
    let prompt_passes = best >= prompt_bar;
    let reaches = if bars.in_domain > 0.0 {
        format!(
            "the strongest memory reaches {strongest:.1}σ, +{in_domain:.1}σ as {} of the \
             prompt's weight is words this dir uses",
            percent(known_share)
        )
    } else {
        format!("the strongest memory reaches {strongest:.1}σ")
    };
    evidence
        .iter()
        .zip(&strengths)
        .map(|((similarity, lexical), &strength)| {
            let mut said = format!("similarity {similarity:.2}");
            if let Some(lexical) =
                lexical.filter(|l| bars.lexical_agreement > 0.0 && l.agreement(bars) > 0.0)
            {
                said.push_str(&format!(", {}", lexical.describe()));
            }
            let related = prompt_passes && strength >= bars.memory;
            let why = if !prompt_passes {
                format!(
                    "{said}: {strength:.1}σ over unrelated text; {reaches}, under the {prompt_bar}σ \
                     that shows the prompt is about this memory dir{}",
                    if prompt_bar > bars.prompt_bar(form, true) {
                        " when no memory shares enough of its words"
                    } else {
                        ""
                    }
                )
            } else {
                format!(
                    "{said}: {strength:.1}σ over unrelated text; needs {}σ ({reaches})",
                    bars.memory
                )
            };
            (related, why)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(words: usize, prompt_words: usize, coverage: f64) -> LexicalEvidence {
        LexicalEvidence {
            words,
            prompt_words,
            coverage,
            general_question: true,
            shares_code_name: false,
        }
    }

    #[test]
    fn one_shared_word_is_chance_unless_it_is_most_of_the_prompt() {
        let bars = Bars::CHOSEN;
        assert!(!evidence(1, 5, 0.3).passes(&bars), "one word of five");
        assert!(
            evidence(1, 2, 0.55).passes(&bars),
            "half of a two-word prompt"
        );
        assert!(evidence(2, 5, 0.25).passes(&bars));
        assert!(
            !evidence(2, 9, 0.15).passes(&bars),
            "two words, too little weight"
        );
        assert_eq!(evidence(1, 5, 0.3).agreement(&bars), 0.0);
        assert_eq!(evidence(3, 5, 0.6).agreement(&bars), 0.6);
        assert_eq!(
            evidence(1, 5, 0.3).verdict(&bars),
            "shares 1 of the prompt's 5 words (30 % of its weight); needs 2 words and 20 %, or \
             40 % alone"
        );
        assert_eq!(
            evidence(2, 5, 0.25).verdict(&bars),
            "shares 2 of the prompt's 5 words (25 % of its weight); meets 2 words and 20 %, or \
             40 % alone"
        );
    }

    #[test]
    fn in_a_prompt_set_in_the_project_one_word_with_enough_weight_is_enough() {
        let bars = Bars::CHOSEN;
        let in_project = |words, prompt_words, coverage| LexicalEvidence {
            general_question: false,
            ..evidence(words, prompt_words, coverage)
        };
        assert!(in_project(1, 5, 0.2).passes(&bars));
        assert!(!evidence(1, 5, 0.2).passes(&bars), "as a general question");
        assert!(!in_project(2, 9, 0.1).passes(&bars), "too little weight");
        assert_eq!(
            in_project(1, 5, 0.2).verdict(&bars),
            "shares 1 of the prompt's 5 words (20 % of its weight); meets 15 % (the prompt is \
             set in the project)"
        );
        assert_eq!(
            in_project(2, 9, 0.1).verdict(&bars),
            "shares 2 of the prompt's 9 words (10 % of its weight); needs 15 % (the prompt is \
             set in the project)"
        );
        let form = super::super::prompt_form::read("Let's use tokio here");
        assert_eq!(
            lexical_rule(&bars, &form),
            "the prompt reads as set in the project (it says \"let's\"): it is about this dir \
             when a memory shares words covering 15 % of its weight; then every memory sharing \
             its words is related"
        );
    }

    /// A model whose unrelated pairs sit at similarity 0 with a spread of 0.1: similarity 0.25
    /// is 2.5σ.
    fn tenth_spread() -> Calibration {
        Calibration {
            model: "m".into(),
            mean: 0.0,
            spread: 0.1,
            requests: Vec::new(),
        }
    }

    #[test]
    fn the_prompt_passes_on_its_strongest_memory_and_brings_weaker_ones() {
        let bars = Bars::CHOSEN;
        let calibration = tenth_spread();
        let question = super::super::prompt_form::read("How does the retry queue work?");
        let weak = (0.2, None);
        let verdicts = semantic_verdicts(
            &calibration,
            &[(0.44, None), weak, (0.1, None)],
            0.0,
            &question,
            true,
            &bars,
        );
        assert!(verdicts[0].0 && verdicts[1].0, "{verdicts:?}");
        assert!(!verdicts[2].0, "1σ is under the memory bar: {verdicts:?}");
        assert!(verdicts[1].1.contains("needs 1.5σ"), "{}", verdicts[1].1);

        // Without a strong memory the weak one is not enough.
        let verdicts = semantic_verdicts(&calibration, &[weak], 0.0, &question, true, &bars);
        assert!(!verdicts[0].0);
        assert!(
            verdicts[0].1.contains("under the 4.375σ"),
            "{}",
            verdicts[0].1
        );
        assert!(
            !verdicts[0].1.contains("words this dir uses"),
            "the known share counts 0σ as chosen: {}",
            verdicts[0].1
        );
        assert!((calibration.similarity_at(bars.prompt) - 0.4375).abs() < 1e-9);

        // Where the known share counts, a prompt in the dir's own words needs less of its
        // strongest memory: 4σ falls short of 4.5σ for a prompt of words the dir never uses,
        // and passes for one of words it uses.
        let in_domain = Bars {
            prompt: 4.5,
            in_domain: 1.5,
            ..bars
        };
        let near = (0.4, Some(evidence(3, 4, 0.7)));
        let verdicts = semantic_verdicts(&calibration, &[near], 0.0, &question, true, &in_domain);
        assert!(!verdicts[0].0, "{verdicts:?}");
        assert!(
            !verdicts[0].1.contains("shares"),
            "shared words count 0σ as chosen: {}",
            verdicts[0].1
        );
        let verdicts = semantic_verdicts(&calibration, &[near], 0.5, &question, true, &in_domain);
        assert!(verdicts[0].0, "4σ + 0.75σ: {verdicts:?}");
        assert!(
            verdicts[0]
                .1
                .contains("+0.8σ as 50 % of the prompt's weight"),
            "{}",
            verdicts[0].1
        );

        // Shared words lift a memory the model finds only near, where they count.
        let agreeing = Bars {
            prompt: 4.5,
            lexical_agreement: 3.0,
            ..bars
        };
        let near = (0.3, Some(evidence(3, 4, 0.7)));
        let verdicts = semantic_verdicts(&calibration, &[near], 0.0, &question, true, &agreeing);
        assert!(verdicts[0].0, "3σ + 2.1σ: {verdicts:?}");
        assert!(
            verdicts[0].1.contains("shares 3 of the prompt's 4 words"),
            "{}",
            verdicts[0].1
        );
    }

    #[test]
    fn a_prompt_set_in_the_project_needs_less_of_its_strongest_memory() {
        let bars = Bars::CHOSEN;
        let calibration = tenth_spread();
        // 2.5σ: under the general question's bar, over the one for a prompt set in the project.
        let memory = [(0.25, None)];
        let question = super::super::prompt_form::read("Is a code review plan any good?");
        let in_project = super::super::prompt_form::read("Be honest: is this plan any good?");
        assert!(question.general && !in_project.general);
        let verdicts = semantic_verdicts(&calibration, &memory, 0.0, &question, true, &bars);
        assert!(!verdicts[0].0, "{verdicts:?}");
        let verdicts = semantic_verdicts(&calibration, &memory, 0.0, &in_project, true, &bars);
        assert!(verdicts[0].0, "{verdicts:?}");
        assert_eq!(
            verdicts[0].1,
            "similarity 0.25: 2.5σ over unrelated text; needs 1.5σ (the strongest memory reaches \
             2.5σ)"
        );
        assert_eq!(
            calibration.rule(&bars, &in_project, true),
            "the prompt reads as set in the project (it says \"this\"): its strongest memory \
             must stand 2.375σ (m's spread for unrelated text, 0.100) above the prompt's own \
             similarity to ordinary requests on other subjects (similarity 0.24), then each \
             memory 1.5σ (similarity 0.15)"
        );
        assert!(
            calibration.rule(&bars, &question, true).starts_with(
                "the prompt reads as a general question (\"is …\"): its strongest \
                              memory must stand 4.375σ"
            ),
            "{}",
            calibration.rule(&bars, &question, true)
        );
    }

    #[test]
    fn a_general_question_the_lexical_side_does_not_agree_with_needs_more_of_the_model() {
        let bars = Bars::CHOSEN;
        let calibration = tenth_spread();
        let question = super::super::prompt_form::read("How does the retry queue work?");
        // 4.4σ: over the general question's bar, under the model's word alone.
        let memory = [(0.44, None)];
        let verdicts = semantic_verdicts(&calibration, &memory, 0.0, &question, true, &bars);
        assert!(verdicts[0].0, "{verdicts:?}");
        let verdicts = semantic_verdicts(&calibration, &memory, 0.0, &question, false, &bars);
        assert!(!verdicts[0].0, "{verdicts:?}");
        assert_eq!(
            verdicts[0].1,
            "similarity 0.44: 4.4σ over unrelated text; the strongest memory reaches 4.4σ, under \
             the 4.5σ that shows the prompt is about this memory dir when no memory shares \
             enough of its words"
        );
        assert!(
            calibration.rule(&bars, &question, false).starts_with(
                "the prompt reads as a general question (\"how …\"): its strongest memory must \
                 stand 4.5σ, as no memory shares enough of its words (4.375σ when one does)"
            ),
            "{}",
            calibration.rule(&bars, &question, false)
        );
        // 4.6σ is the model's word alone.
        let verdicts =
            semantic_verdicts(&calibration, &[(0.46, None)], 0.0, &question, false, &bars);
        assert!(verdicts[0].0, "{verdicts:?}");
        // A prompt set in the project is not asked for the lexical side's agreement.
        let in_project = super::super::prompt_form::read("The retry queue stalls again");
        let verdicts = semantic_verdicts(
            &calibration,
            &[(0.25, None)],
            0.0,
            &in_project,
            false,
            &bars,
        );
        assert!(verdicts[0].0, "{verdicts:?}");
    }

    #[test]
    fn a_prompt_is_measured_from_its_own_similarity_to_unrelated_requests() {
        let calibration = Calibration {
            model: "m".into(),
            mean: 0.05,
            spread: 0.1,
            requests: vec![vec![1.0, 0.0], vec![0.0, 1.0]],
        };
        // A generic prompt is near both ordinary requests (similarity 0.6 and 0.8).
        let generic = calibration.for_prompt(&[0.6, 0.8]);
        assert!((generic.mean - 0.7).abs() < 1e-6, "{generic:?}");
        assert_eq!(generic.spread, 0.1);
        // A memory at 0.75 is 0.5σ over that prompt's baseline, 7σ over the model's mean.
        let bars = Bars::CHOSEN;
        assert!((generic.strength(0.75, None, &bars) - 0.5).abs() < 1e-6);
        assert!((calibration.strength(0.75, None, &bars) - 7.0).abs() < 1e-6);
        let form = super::super::prompt_form::read("How do I squash three commits?");
        assert!(
            generic.rule(&bars, &form, true).contains(
                "above the prompt's own similarity to ordinary requests on other subjects \
                 (similarity 1.14)"
            ),
            "{}",
            generic.rule(&bars, &form, true)
        );
        // Without requests (nothing to measure from), the model's mean stands.
        let bare = Calibration {
            requests: Vec::new(),
            ..calibration
        };
        assert_eq!(bare.for_prompt(&[0.6, 0.8]).mean, 0.05);
    }
}
