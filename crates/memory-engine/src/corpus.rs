//! What recall ranks for one memory dir: its newest [`CLAUDE_SCAN_CAP`] memory files (headers
//! and the first 4 KiB of each body), the lexical index over them, and — on first semantic
//! recall — their sentence vectors.
//!
//! Loading a corpus costs a walk and a `stat` of every file (the newest are found by mtime) and a
//! read of the newest 200: ~25 ms at 10,000 files. [`WarmCorpora`] keeps the corpora of the dirs a
//! long-lived process (the app, the tray) answers for, each with a file watcher that marks it
//! stale on any change under the dir; the next recall reloads it. So in the app a recall costs
//! the ranking and the read of the five files shown, and stays correct: a corpus is never used
//! after a change was seen. (Engine-free, so the engine can own the warm set.)

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use crate::bm25::Bm25Index;
use crate::disk::confined_path;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::frontmatter;
use crate::scan::{self, MemoryHeader, CLAUDE_SCAN_CAP};

/// Lexical field weights: a word in the name says most about what the memory is, one only in
/// its body least.
const NAME_WEIGHT: f64 = 2.0;
const FILE_NAME_WEIGHT: f64 = 1.5;
const DESCRIPTION_WEIGHT: f64 = 1.0;
const BODY_WEIGHT: f64 = 0.5;
/// Body bytes kept per file: what recall would show of it.
const BODY_BYTES: usize = 4096;
/// Body characters embedded for a memory without a description.
const EMBED_BODY_CHARS: usize = 300;
/// Body characters recall embeds after a memory's name and description.
const RECALL_BODY_CHARS: usize = 400;
/// At most this many dirs are kept warm; the least recently used goes first.
const MAX_WARM: usize = 32;

/// One dir's recall corpus.
#[derive(Debug)]
pub struct Corpus {
    /// Newest first.
    pub headers: Vec<MemoryHeader>,
    /// `file: why` for files that could not be read.
    pub unreadable: Vec<String>,
    /// Each file's body (frontmatter off, first 4 KiB).
    pub bodies: Vec<String>,
    /// BM25F over name, file name, description and body, in `headers` order.
    pub lexical: Bm25Index,
    /// Each file's vector of [`recall_text`], in `headers` order, from the embedder named.
    vectors: Mutex<Option<(String, Vectors)>>,
}

/// One vector per file of a corpus.
pub type Vectors = Arc<Vec<Vec<f32>>>;

impl Corpus {
    /// Reads the corpus of `root` (`now` dates the headers' ages).
    pub fn load(root: &Path, now: SystemTime) -> Result<Corpus> {
        let headers = scan::scan_dir(root, Some(CLAUDE_SCAN_CAP), now)?;
        let unreadable = scan::unreadable(root, &headers)
            .into_iter()
            .map(|(file, why)| format!("{file}: {why}"))
            .collect();
        let bodies: Vec<String> = headers.iter().map(|h| read_body(root, &h.file)).collect();
        let stems: Vec<&str> = headers
            .iter()
            .map(|h| {
                let name = h.file.rsplit('/').next().unwrap_or(&h.file);
                name.strip_suffix(".md").unwrap_or(name)
            })
            .collect();
        let lexical = Bm25Index::new(headers.iter().zip(&stems).zip(&bodies).map(
            |((h, stem), body)| {
                vec![
                    (h.name.as_deref().unwrap_or(""), NAME_WEIGHT),
                    (*stem, FILE_NAME_WEIGHT),
                    (h.description.as_deref().unwrap_or(""), DESCRIPTION_WEIGHT),
                    (body.as_str(), BODY_WEIGHT),
                ]
            },
        ));
        Ok(Corpus {
            headers,
            unreadable,
            bodies,
            lexical,
            vectors: Mutex::new(None),
        })
    }

    /// `embedder`'s vector of each file's [`recall_text`], in `headers` order (computed once per
    /// corpus and embedder, from the embedding cache where it has them).
    pub fn vectors(&self, embedder: &dyn Embedder) -> Result<Vectors> {
        if let Some((id, vectors)) = self.vectors.lock().ok().as_deref().and_then(Option::as_ref) {
            if id == embedder.id() {
                return Ok(Arc::clone(vectors));
            }
        }
        let texts: Vec<String> = self
            .headers
            .iter()
            .zip(&self.bodies)
            .map(|(h, body)| recall_text(h, body))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = Arc::new(embedder.embed(&refs)?);
        if let Ok(mut slot) = self.vectors.lock() {
            *slot = Some((embedder.id().to_owned(), Arc::clone(&vectors)));
        }
        Ok(vectors)
    }
}

/// What the model reads for a memory: its name and description — one sentence saying what it
/// is, which the model compares best (adding the body measured worse on the labeled set) — or,
/// without a description, the start of its body.
pub fn embedding_text(header: &MemoryHeader, body: &str) -> String {
    embedding_text_of(
        header.name.as_deref(),
        &header.file,
        header.description.as_deref(),
        body,
    )
}

/// [`embedding_text`] from a memory's parts (`file` names it when it has no name).
pub fn embedding_text_of(
    name: Option<&str>,
    file: &str,
    description: Option<&str>,
    body: &str,
) -> String {
    let name = name.unwrap_or(file);
    match description.filter(|d| !d.trim().is_empty()) {
        Some(description) => format!("{name}: {description}"),
        None => format!("{name}: {}", cut(body, EMBED_BODY_CHARS)),
    }
}

/// What recall compares a prompt with: the memory's name and description, then the start of its
/// body — a prompt often asks about what the body says (on the labeled set, the body added to
/// name and description separates the relevant memories from ordinary questions' best matches
/// clearly better: at the similarity only 5 % of those questions reach, 54 of 68 prompts still
/// find a memory, against 45 without it). Memory-to-memory comparisons (the dream's
/// near-duplicates, extraction) keep [`embedding_text`].
pub fn recall_text(header: &MemoryHeader, body: &str) -> String {
    let name = header.name.as_deref().unwrap_or(&header.file);
    let body = cut_chars(body.trim(), RECALL_BODY_CHARS);
    match header
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    {
        Some(description) => format!("{name}: {description}\n{body}"),
        None => format!("{name}: {body}"),
    }
}

/// The first `max` characters of `text`.
fn cut_chars(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(end, _)| &text[..end])
}

fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The body of `file` (frontmatter off, the first [`BODY_BYTES`]); empty when it cannot be read.
fn read_body(root: &Path, file: &str) -> String {
    let Ok(path) = confined_path(root, file) else {
        return String::new();
    };
    let Ok(bytes) = fs::read(&path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let (_, body) = frontmatter::parse_document_lending(&text, None);
    cut(&body, BODY_BYTES).to_owned()
}

/// Texts embedded per step of [`embed_dir`]: progress every step, cancellation between steps.
const EMBED_STEP: usize = 64;

/// How far [`embed_dir`] is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedProgress {
    /// Memories embedded (or found cached) so far.
    pub done: usize,
    pub total: usize,
}

/// What [`embed_dir`] did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedReport {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub memory_dir: PathBuf,
    /// The vectors' source ([`Embedder::id`]).
    pub source: String,
    /// Memory files in the dir.
    pub files: usize,
    /// Memories whose vectors were computed now (any of their texts).
    pub embedded: usize,
    /// Memories whose vectors were all cached already.
    pub cached: usize,
    /// Stopped by the caller before the end.
    pub cancelled: bool,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
}

/// Embeds every memory of `root` — not only the newest 200 recall reads — so that recall,
/// dreams and extraction find each one's vector cached: a dir of 10,000 memories is embedded
/// once (newest first, [`EMBED_STEP`] at a time, `progress` after each step), then only what
/// changes. Blocking (CPU work or a server's round trips); `cancel` stops it between steps, with
/// what was done kept.
pub fn embed_dir(
    root: &Path,
    embedder: &dyn Embedder,
    cancel: &tokio_util::sync::CancellationToken,
    progress: &dyn Fn(EmbedProgress),
) -> Result<EmbedReport> {
    let started = Instant::now();
    let headers = scan::scan_dir(root, None, SystemTime::now())?;
    let total = headers.len();
    let mut report = EmbedReport {
        memory_dir: root.to_path_buf(),
        source: embedder.id().to_owned(),
        files: total,
        embedded: 0,
        cached: 0,
        cancelled: false,
        elapsed_ms: 0,
    };
    progress(EmbedProgress { done: 0, total });
    for step in headers.chunks(EMBED_STEP) {
        if cancel.is_cancelled() {
            report.cancelled = true;
            break;
        }
        // Each memory's two texts: what recall compares with prompts, and what dreams and
        // extraction compare memories by.
        let texts: Vec<[String; 2]> = step
            .iter()
            .map(|h| {
                let body = read_body(root, &h.file);
                [recall_text(h, &body), embedding_text(h, &body)]
            })
            .collect();
        let refs: Vec<&str> = texts.iter().flatten().map(String::as_str).collect();
        let cached = texts
            .iter()
            .filter(|pair| pair.iter().all(|t| embedder.is_cached(t)))
            .count();
        embedder.embed(&refs)?;
        report.cached += cached;
        report.embedded += texts.len() - cached;
        progress(EmbedProgress {
            done: report.cached + report.embedded,
            total,
        });
    }
    report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// A warm dir: its corpus (when loaded and unchanged since) and the watcher that says when not.
struct Warm {
    corpus: Option<Arc<Corpus>>,
    stale: Arc<AtomicBool>,
    used: Instant,
    _watcher: RecommendedWatcher,
}

/// The corpora a long-lived process keeps in memory, one per dir it was asked to keep warm.
#[derive(Default)]
pub struct WarmCorpora {
    dirs: Mutex<HashMap<PathBuf, Warm>>,
}

impl std::fmt::Debug for WarmCorpora {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.dirs.lock().map_or(0, |d| d.len());
        write!(f, "WarmCorpora({count} dirs)")
    }
}

impl WarmCorpora {
    /// Starts keeping `root` warm (a no-op when it already is): a watcher marks its corpus stale
    /// on any change under it. The corpus itself loads on the next [`WarmCorpora::get`].
    pub fn keep(&self, root: &Path) -> Result<()> {
        let mut dirs = self
            .dirs
            .lock()
            .map_err(|_| Error::InvalidInput("the warm corpora lock is poisoned".to_owned()))?;
        if dirs.contains_key(root) {
            return Ok(());
        }
        let stale = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&stale);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                // Reads (this corpus's own loads among them) change nothing; anything else might,
                // and an error may have lost an event.
                let changed =
                    event.map_or(true, |e| !matches!(e.kind, notify::EventKind::Access(_)));
                if changed {
                    flag.store(true, Ordering::SeqCst);
                }
            })
            .map_err(|e| Error::InvalidInput(format!("{}: cannot watch: {e}", root.display())))?;
        watcher
            .watch(root, RecursiveMode::Recursive)
            .map_err(|e| Error::InvalidInput(format!("{}: cannot watch: {e}", root.display())))?;
        if dirs.len() >= MAX_WARM {
            if let Some(oldest) = dirs
                .iter()
                .min_by_key(|(_, w)| w.used)
                .map(|(dir, _)| dir.clone())
            {
                dirs.remove(&oldest);
            }
        }
        dirs.insert(
            root.to_path_buf(),
            Warm {
                corpus: None,
                stale,
                used: Instant::now(),
                _watcher: watcher,
            },
        );
        Ok(())
    }

    /// Whether `root` is kept warm.
    pub fn is_kept(&self, root: &Path) -> bool {
        self.dirs.lock().is_ok_and(|d| d.contains_key(root))
    }

    /// The corpus of `root`: the kept one when nothing changed since it was loaded, else loaded
    /// now (and kept, when `root` is warm).
    pub fn get(&self, root: &Path, now: SystemTime) -> Result<Arc<Corpus>> {
        let stale = {
            let mut dirs = self
                .dirs
                .lock()
                .map_err(|_| Error::InvalidInput("the warm corpora lock is poisoned".to_owned()))?;
            match dirs.get_mut(root) {
                None => return Corpus::load(root, now).map(Arc::new),
                Some(warm) => {
                    warm.used = Instant::now();
                    match &warm.corpus {
                        Some(corpus) if !warm.stale.load(Ordering::SeqCst) => {
                            return Ok(Arc::clone(corpus))
                        }
                        _ => Arc::clone(&warm.stale),
                    }
                }
            }
        };
        // Cleared before reading: a change during the load marks it stale again.
        stale.store(false, Ordering::SeqCst);
        let corpus = Arc::new(Corpus::load(root, now)?);
        if let Ok(mut dirs) = self.dirs.lock() {
            if let Some(warm) = dirs.get_mut(root) {
                warm.corpus = Some(Arc::clone(&corpus));
            }
        }
        Ok(corpus)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::embed::Embeddings;

    fn write(dir: &Path, file: &str, description: &str) {
        fs::write(
            dir.join(file),
            format!("---\nname: {file}\ndescription: {description}\ntype: project\n---\n\nBody of {file}.\n"),
        )
        .expect("write");
    }

    #[test]
    fn a_warm_corpus_is_reused_until_the_watcher_sees_a_change() {
        let temp = tempfile::tempdir().expect("temp");
        let root = temp.path().canonicalize().expect("canonical");
        write(&root, "deploy.md", "Deploys go out on Tuesdays");
        let warm = WarmCorpora::default();
        let now = SystemTime::now();

        // Not kept: loaded each time.
        let a = warm.get(&root, now).expect("get");
        let b = warm.get(&root, now).expect("get");
        assert!(!Arc::ptr_eq(&a, &b));

        warm.keep(&root).expect("keep");
        assert!(warm.is_kept(&root));
        let first = warm.get(&root, now).expect("get");
        let again = warm.get(&root, now).expect("get");
        assert!(Arc::ptr_eq(&first, &again), "unchanged: the kept corpus");
        assert_eq!(first.bodies, ["Body of deploy.md.\n"]);

        // An in-place edit (as Claude Code writes) and a new file are seen.
        write(&root, "deploy.md", "Deploys go out on Thursdays");
        write(&root, "style.md", "Tabs, not spaces");
        let deadline = Instant::now() + Duration::from_secs(5);
        let fresh = loop {
            let corpus = warm.get(&root, now).expect("get");
            if corpus.headers.len() == 2
                && corpus
                    .headers
                    .iter()
                    .any(|h| h.description.as_deref() == Some("Deploys go out on Thursdays"))
            {
                break corpus;
            }
            assert!(Instant::now() < deadline, "the change was never seen");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!Arc::ptr_eq(&first, &fresh));
        assert_eq!(
            fresh.lexical.search("thursdays")[0].doc,
            fresh
                .headers
                .iter()
                .position(|h| h.file == "deploy.md")
                .expect("deploy")
        );
    }

    #[test]
    fn embedding_a_dir_stops_between_steps_when_cancelled() {
        let temp = tempfile::tempdir().expect("temp");
        let root = temp.path().canonicalize().expect("canonical");
        for i in 0..3 {
            write(&root, &format!("note{i}.md"), "A fact");
        }
        // No model in this data dir: any embedding would fail, so none may be attempted.
        let embeddings = Embeddings::new(root.join("no-models"), temp.path(), String::new());
        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let seen = Mutex::new(Vec::new());
        let report = embed_dir(&root, &embeddings, &cancel, &|p| {
            seen.lock().expect("seen").push(p)
        })
        .expect("a cancelled run is not an error");
        assert!(report.cancelled);
        assert_eq!((report.files, report.embedded, report.cached), (3, 0, 0));
        assert_eq!(
            *seen.lock().expect("seen"),
            [EmbedProgress { done: 0, total: 3 }]
        );
        // Not cancelled, the missing model is an error that says how to get it.
        let error =
            embed_dir(&root, &embeddings, &Default::default(), &|_| {}).expect_err("no model");
        assert!(error.to_string().contains("engram models fetch"), "{error}");
    }
}
