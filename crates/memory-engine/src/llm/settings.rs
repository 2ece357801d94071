//! The one way from Engram's configuration to a model client: `config.toml` and the command
//! line's choices become [`LlmSettings`] (flags over `config.toml` over the environment over the
//! defaults), and the settings plus the API key (environment, then the OS keyring) become a
//! [`Client`]. Recall, the prompt hook, the connection test, dreams and extraction all start here,
//! and every client built here is metered ([`super::usage`]): its calls are logged for the
//! [`Caller`] it was built for and held to the daily budget.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::anthropic::{self, AnthropicClient};
use super::embeddings::{MeteredEmbeddings, RemoteEmbeddings};
use super::openai::{self, OpenAiClient};
use super::usage::{BudgetStatus, Caller};
use super::{keys, Client, ClientOptions, ProviderKind, RetryPolicy};
use crate::config::{Config, EmbeddingSource, LlmOverrides, DEFAULT_TIMEOUT};
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::error::Result;

/// The effective provider settings after flags, config, environment and defaults. Holds no key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmSettings {
    pub provider: ProviderKind,
    /// Why this provider is in force, for a person: chosen for this run, set in `config.toml`,
    /// or the default (local when the local model is installed, else offline).
    pub provider_reason: String,
    /// Empty for offline.
    pub model: String,
    /// Empty for offline.
    pub base_url: String,
    pub timeout_ms: u64,
    pub max_retries: u32,
}

/// A model client and the settings it was built from; `client` is `None` for offline.
#[derive(Clone)]
pub struct ModelClient {
    pub settings: LlmSettings,
    /// Metered for the caller it was built for: logged, and refused once the budget is reached.
    pub client: Option<Arc<dyn Client>>,
    /// Today's tokens against the budget when there is a client and a budget; `None` otherwise.
    pub budget: Option<BudgetStatus>,
    /// Why a remote provider has no client in this process although a key may be stored: the
    /// process does not read the keyring ([`keys::keyring_withheld`]).
    pub withheld: Option<String>,
}

impl ModelClient {
    /// The budget, when it is reached and a model would be asked: the caller should do without
    /// (every call of `client` would be refused).
    pub fn over_budget(&self) -> Option<&BudgetStatus> {
        self.budget
            .as_ref()
            .filter(|status| status.reached && self.client.is_some())
    }

    /// Why the caller should do without the model it asked for — the budget is reached, or this
    /// process does not read the key — or `None` when it can ask it (or asked for none).
    pub fn do_without(&self) -> Option<String> {
        self.withheld
            .clone()
            .or_else(|| self.over_budget().map(BudgetStatus::reason))
    }
}

impl Engine {
    /// The client for this run of `caller`'s job: `config.toml` read, `overrides` applied, the
    /// key looked up, the client metered for `caller` (see [`super::usage`]). Reads the OS
    /// keyring, which may block on D-Bus: call from a blocking context. Fails with a clear error
    /// when `config.toml` is malformed or Anthropic has no key.
    pub fn llm_client_for(&self, overrides: &LlmOverrides, caller: &Caller) -> Result<ModelClient> {
        self.llm_client_in(&self.load_config()?, overrides, caller)
    }

    /// [`Engine::llm_client_for`] with `config.toml` already read.
    pub fn llm_client_in(
        &self,
        config: &Config,
        overrides: &LlmOverrides,
        caller: &Caller,
    ) -> Result<ModelClient> {
        let settings = self.llm_settings(config, overrides);
        if let Some(withheld) = keys::keyring_withheld(self.env(), settings.provider) {
            return Ok(ModelClient {
                settings,
                client: None,
                budget: None,
                withheld: Some(withheld),
            });
        }
        let key = keys::api_key(self.env(), settings.provider);
        let retry = RetryPolicy {
            max_retries: settings.max_retries,
            ..RetryPolicy::default()
        };
        let timeout = Duration::from_millis(settings.timeout_ms);
        let daily_tokens = config.budget.daily_tokens;
        let client = client_for(&settings, key, timeout, retry)?
            .map(|client| self.metered(client, caller.clone(), daily_tokens));
        let budget = match (&client, daily_tokens) {
            (Some(_), Some(_)) => Some(self.budget_in(config)?),
            _ => None,
        };
        Ok(ModelClient {
            settings,
            client,
            budget,
            withheld: None,
        })
    }

    /// Where sentence vectors come from under `config`: the local model, or `[llm.openai]`'s
    /// `/embeddings` (`[llm] embeddings = "openai"`, base URL and key as the chat client's),
    /// its requests held to the daily budget and logged for `caller`
    /// ([`MeteredEmbeddings`]). Nothing is loaded or sent yet. Reads the keyring for an OpenAI
    /// key: call from a blocking context.
    pub fn embedder_in(&self, config: &Config, caller: &Caller) -> Result<Arc<dyn Embedder>> {
        match config.llm.embeddings.unwrap_or_default() {
            EmbeddingSource::Local => Ok(Arc::clone(self.embeddings()) as Arc<dyn Embedder>),
            EmbeddingSource::OpenAi => {
                let chat = self.llm_settings(
                    config,
                    &LlmOverrides {
                        provider: Some(ProviderKind::OpenAi),
                        ..LlmOverrides::default()
                    },
                );
                let model = config
                    .llm
                    .openai
                    .embedding_model
                    .clone()
                    .unwrap_or_else(|| openai::DEFAULT_EMBEDDING_MODEL.to_owned());
                let options = ClientOptions {
                    base_url: chat.base_url,
                    model,
                    api_key: keys::api_key(self.env(), ProviderKind::OpenAi),
                    timeout: Duration::from_millis(chat.timeout_ms),
                    retry: RetryPolicy {
                        max_retries: chat.max_retries,
                        ..RetryPolicy::default()
                    },
                };
                // Kept per settings and key, so its cache is read once per process.
                let key = format!("{:?}|{:?}", options, options.api_key.as_deref().map(digest));
                let home = self.engram_home();
                let source = self.remote_embedder(&key, || {
                    Ok(Arc::new(RemoteEmbeddings::new(options, &home)?))
                })?;
                Ok(Arc::new(MeteredEmbeddings::new(
                    source,
                    self.clone(),
                    caller.clone(),
                    config.budget.daily_tokens,
                )))
            }
        }
    }

    /// The effective settings for this run, `config.toml` read.
    pub fn llm_settings_for(&self, overrides: &LlmOverrides) -> Result<LlmSettings> {
        Ok(self.llm_settings(&self.load_config()?, overrides))
    }

    /// The provider in force and why: `overrides`, else `[llm] provider`, else local when the
    /// local model is installed — one `stat`, never a load, so the prompt hook stays fast — else
    /// offline. (A model that is installed but cannot load still leaves recall working: it
    /// ranks lexically and says so.)
    pub fn provider_in_force(
        &self,
        config: &Config,
        overrides: &LlmOverrides,
    ) -> (ProviderKind, String) {
        if let Some(provider) = overrides.provider {
            return (provider, "chosen for this run".to_owned());
        }
        if let Some(provider) = config.llm.provider {
            return (
                provider,
                format!("[llm] provider in {}", self.config_path().display()),
            );
        }
        if self.embeddings().is_installed() {
            (
                ProviderKind::Local,
                "the local model is installed and no provider is configured".to_owned(),
            )
        } else {
            (
                ProviderKind::Offline,
                "no provider is configured and the local model is not installed (engram models \
                 fetch)"
                    .to_owned(),
            )
        }
    }

    /// The effective provider settings for this run.
    pub fn llm_settings(&self, config: &Config, overrides: &LlmOverrides) -> LlmSettings {
        let (provider, provider_reason) = self.provider_in_force(config, overrides);
        let timeout = overrides
            .timeout
            .or(config.llm.timeout_ms.map(Duration::from_millis))
            .unwrap_or(DEFAULT_TIMEOUT);
        let max_retries = config
            .llm
            .max_retries
            .unwrap_or(RetryPolicy::default().max_retries);
        let (env_base, default_base, default_model) = match provider {
            ProviderKind::Offline | ProviderKind::Local => (None, "", ""),
            ProviderKind::Anthropic => (
                Some("ANTHROPIC_BASE_URL"),
                anthropic::DEFAULT_BASE_URL,
                anthropic::DEFAULT_MODEL,
            ),
            ProviderKind::OpenAi => (
                Some("OPENAI_BASE_URL"),
                openai::DEFAULT_BASE_URL,
                openai::DEFAULT_MODEL,
            ),
        };
        let section = config.provider(provider);
        let model = overrides
            .model
            .clone()
            .or_else(|| section.and_then(|s| s.model.clone()))
            .unwrap_or_else(|| default_model.to_owned());
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| section.and_then(|s| s.base_url.clone()))
            .or_else(|| {
                env_base
                    .and_then(|var| self.env().get(var))
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| default_base.to_owned());
        LlmSettings {
            provider,
            provider_reason,
            model: if !provider.is_remote() {
                String::new()
            } else {
                model
            },
            base_url,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            max_retries,
        }
    }
}

/// A short fingerprint of a key (never the key itself) to tell two keys apart.
fn digest(key: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(key.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A client for `settings` with this key, per-attempt timeout and retry policy; `None` for
/// offline. Fails with a clear error when Anthropic has no key. Unmetered: only
/// [`Engine::llm_client_in`] and the connection test (which meter it) use it.
pub(super) fn client_for(
    settings: &LlmSettings,
    api_key: Option<String>,
    timeout: Duration,
    retry: RetryPolicy,
) -> Result<Option<Arc<dyn Client>>> {
    let options = ClientOptions {
        base_url: settings.base_url.clone(),
        model: settings.model.clone(),
        api_key,
        timeout,
        retry,
    };
    Ok(match settings.provider {
        ProviderKind::Offline | ProviderKind::Local => None,
        ProviderKind::Anthropic => Some(Arc::new(AnthropicClient::new(options)?)),
        ProviderKind::OpenAi => Some(Arc::new(OpenAiClient::new(options)?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;

    fn engine(home: &std::path::Path, env: Environment) -> Engine {
        Engine::builder(env).engram_home(home).build()
    }

    #[test]
    fn missing_config_is_offline_with_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        let config = engine.load_config().expect("load");
        assert_eq!(config, Config::default());
        let settings = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(settings.provider, ProviderKind::Offline);
        assert!(engine
            .llm_client_for(
                &LlmOverrides::default(),
                &Caller::new(super::super::ModelJob::Recall, "")
            )
            .expect("client")
            .client
            .is_none());
        assert_eq!(config.hooks.budget(), Duration::from_secs(2));
        assert!(
            settings.provider_reason.contains("not installed"),
            "{}",
            settings.provider_reason
        );
    }

    /// Where the local model would be (`<models dir>/all-MiniLM-L6-v2/model.safetensors`): only
    /// its presence counts, so a file of any content stands in for it.
    fn install_model(models: &std::path::Path) {
        let dir = models.join(crate::embed::LOCAL_MODEL);
        std::fs::create_dir_all(&dir).expect("models dir");
        std::fs::write(dir.join("model.safetensors"), b"weights").expect("weights");
    }

    #[test]
    fn with_the_local_model_installed_and_nothing_configured_the_default_is_local() {
        let dir = tempfile::tempdir().expect("tempdir");
        let models = dir.path().join("models");
        let engine = engine(
            dir.path(),
            Environment::empty().with("ENGRAM_MODELS_DIR", models.to_string_lossy()),
        );
        let mut config = Config::default();
        let offline = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(offline.provider, ProviderKind::Offline);

        install_model(&models);
        let settings = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(settings.provider, ProviderKind::Local);
        assert_eq!(
            settings.provider_reason,
            "the local model is installed and no provider is configured"
        );
        let json = serde_json::to_value(&settings).expect("json");
        assert_eq!(json["providerReason"], settings.provider_reason.as_str());

        // A configured provider, or one chosen for the run, wins over the default.
        config.llm.provider = Some(ProviderKind::Offline);
        let configured = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(configured.provider, ProviderKind::Offline);
        assert!(
            configured.provider_reason.starts_with("[llm] provider in "),
            "{}",
            configured.provider_reason
        );
        let chosen = engine.llm_settings(
            &Config::default(),
            &LlmOverrides {
                provider: Some(ProviderKind::Offline),
                ..LlmOverrides::default()
            },
        );
        assert_eq!(
            (chosen.provider, chosen.provider_reason.as_str()),
            (ProviderKind::Offline, "chosen for this run")
        );
    }

    #[test]
    fn flags_beat_config_beats_environment_beats_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = Environment::empty()
            .with("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/env")
            .with("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
        let engine = engine(dir.path(), env);
        let mut config = Config::default();
        config.llm.provider = Some(ProviderKind::Anthropic);
        let settings = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(
            settings.base_url, "http://127.0.0.1:9/env",
            "env when config is silent"
        );
        assert_eq!(settings.model, anthropic::DEFAULT_MODEL);
        config.llm.anthropic.base_url = Some("http://127.0.0.1:9/config".into());
        config.llm.anthropic.model = Some("claude-sonnet-4-5".into());
        let settings = engine.llm_settings(&config, &LlmOverrides::default());
        assert_eq!(settings.base_url, "http://127.0.0.1:9/config");
        assert_eq!(settings.model, "claude-sonnet-4-5");
        let settings = engine.llm_settings(
            &config,
            &LlmOverrides {
                provider: Some(ProviderKind::OpenAi),
                model: Some("llama3".into()),
                ..LlmOverrides::default()
            },
        );
        assert_eq!(settings.provider, ProviderKind::OpenAi);
        assert_eq!(settings.model, "llama3");
        assert_eq!(settings.base_url, "http://127.0.0.1:9/v1");
    }
}
