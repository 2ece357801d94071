//! Vectors from an OpenAI-compatible `/v1/embeddings` endpoint (`[llm] embeddings = "openai"`):
//! OpenAI's `text-embedding-3-small`, or a model a local server runs (Ollama's
//! `nomic-embed-text`, LM Studio…). Cached like the local model's, one file per base URL and
//! model; the vector size is whatever the model answers.
//!
//! Callers are blocking (the corpus, the dream planner), the HTTP client is async: each call
//! runs its requests on this source's own single-threaded runtime, from a fresh thread, so it
//! works from any thread, inside another runtime's blocking pool or outside every runtime.
//!
//! A server's vectors may be billed (OpenAI's are), so they are model calls like any other: the
//! source is only reachable as [`MeteredEmbeddings`], built for one [`Caller`] — each request
//! for vectors the cache lacks is held to the daily budget first and logged after, under the
//! caller's job and project ([`super::usage`]). Vectors found in the cache cost nothing and are
//! not logged.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::openai::{Embedded, OpenAiEmbeddings, EMBEDDING_BATCH};
use super::usage::Caller;
use super::{ClientOptions, ProviderKind, Usage};
use crate::embed::{normalize, through_cache, Embedder, EmbeddingCache};
use crate::engine::Engine;
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

    /// Asks the server for `texts`' vectors, [`EMBEDDING_BATCH`] at a time, normalised; the
    /// usage is the batches' summed.
    fn request(&self, texts: &[&str]) -> Result<Embedded> {
        let cancel = CancellationToken::new();
        let work = async {
            let mut answer = Embedded {
                vectors: Vec::with_capacity(texts.len()),
                usage: Usage::default(),
                model: String::new(),
            };
            for batch in texts.chunks(EMBEDDING_BATCH) {
                let batch = self.client.embed(batch, &cancel).await?;
                answer.vectors.extend(batch.vectors);
                answer.usage += batch.usage;
                answer.model = batch.model;
            }
            answer.vectors.iter_mut().for_each(|v| normalize(v));
            Ok::<_, Error>(answer)
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

/// A server's vectors for one [`Caller`]: what the cache lacks is asked for only under the
/// daily budget, and every answered request is logged (see the module doc).
#[derive(Debug)]
pub struct MeteredEmbeddings {
    source: Arc<RemoteEmbeddings>,
    engine: Engine,
    caller: Caller,
    daily_tokens: Option<u64>,
}

impl MeteredEmbeddings {
    pub fn new(
        source: Arc<RemoteEmbeddings>,
        engine: Engine,
        caller: Caller,
        daily_tokens: Option<u64>,
    ) -> MeteredEmbeddings {
        MeteredEmbeddings {
            source,
            engine,
            caller,
            daily_tokens,
        }
    }
}

impl Embedder for MeteredEmbeddings {
    fn id(&self) -> &str {
        &self.source.id
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        through_cache(&self.source.cache, texts, |missing| {
            self.engine.refuse_over_budget(self.daily_tokens)?;
            let answer = self.source.request(missing)?;
            // The model that answered, as the server names it: that is what is billed.
            let model = if answer.model.is_empty() {
                &self.source.client.options().model
            } else {
                &answer.model
            };
            self.engine
                .record_usage(&self.caller, ProviderKind::OpenAi, model, &answer.usage)?;
            Ok(answer.vectors)
        })
    }

    fn is_cached(&self, text: &str) -> bool {
        self.source.cache.contains(text)
    }
}
