//! Vectors from an OpenAI-compatible `/v1/embeddings` endpoint (`[llm] embeddings = "openai"`):
//! OpenAI's `text-embedding-3-small`, or a model a local server runs (Ollama's
//! `nomic-embed-text`, LM Studio…). Cached like the local model's, one file per base URL and
//! model; the vector size is whatever the model answers.
//!
//! Callers are blocking (the corpus, the dream planner), the HTTP client is async: each call
//! runs its requests on this source's own single-threaded runtime, from a fresh thread, so it
//! works from any thread, inside another runtime's blocking pool or outside every runtime.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::openai::{OpenAiEmbeddings, EMBEDDING_BATCH};
use super::ClientOptions;
use crate::embed::{normalize, through_cache, Embedder, EmbeddingCache};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct RemoteEmbeddings {
    id: String,
    client: Arc<OpenAiEmbeddings>,
    /// Always `Some` but in `drop`.
    runtime: Option<tokio::runtime::Runtime>,
    cache: EmbeddingCache,
}

impl Drop for RemoteEmbeddings {
    fn drop(&mut self) {
        // The last holder may be an async task: a plain drop would block it (and tokio panics).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl RemoteEmbeddings {
    /// The source `options` describe (the embedding model at its base URL), caching under
    /// `engram_home/embeddings/`.
    pub fn new(options: ClientOptions, engram_home: &Path) -> Result<RemoteEmbeddings> {
        let id = format!("openai:{}@{}", options.model, options.base_url);
        let digest = Sha256::digest(id.as_bytes());
        let file: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let cache = EmbeddingCache::open_any_size(
            engram_home
                .join("embeddings")
                .join(format!("openai-{file}.bin")),
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Llm(format!("cannot start the embeddings runtime: {e}")))?;
        Ok(RemoteEmbeddings {
            id,
            client: Arc::new(OpenAiEmbeddings::new(options)?),
            runtime: Some(runtime),
            cache,
        })
    }

    /// Asks the server for `texts`' vectors, [`EMBEDDING_BATCH`] at a time, normalised.
    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let cancel = CancellationToken::new();
        let work = async {
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(EMBEDDING_BATCH) {
                vectors.extend(self.client.embed(batch, &cancel).await?);
            }
            vectors.iter_mut().for_each(|v| normalize(v));
            Ok::<_, Error>(vectors)
        };
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(work))
                .join()
                .map_err(|_| Error::Llm("the embeddings request panicked".to_owned()))?
        })
    }
}

impl Embedder for RemoteEmbeddings {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        through_cache(&self.cache, texts, |missing| self.request(missing))
    }

    fn is_cached(&self, text: &str) -> bool {
        self.cache.contains(text)
    }
}
