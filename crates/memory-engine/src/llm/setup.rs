//! The language-model part of `config.toml` as a settings screen edits it: which provider jobs
//! use, each provider's model and base URL as written in the file (blank = the default), the
//! defaults that apply when they are blank, and where each provider's API key would come from.
//!
//! Saving ([`Engine::save_llm_choice`]) re-reads `config.toml` and changes only what the screen
//! owns (`[llm] provider` and `embeddings`, each provider's `model` / `base_url`, the OpenAI-compatible
//! `embedding_model`), so sections and keys written
//! by anything else since the screen was opened are kept. Keys are never part of it: they go to
//! the OS keyring ([`super::keys`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::keys::{self, KeyStatus};
use super::ProviderKind;
use crate::config::{Config, EmbeddingSource, LlmOverrides};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Everything the Settings screen shows about language models.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmSetup {
    /// The file the choice is saved to.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub config_path: PathBuf,
    /// The provider jobs use: `config.toml`'s, else local when the local model is installed,
    /// else offline.
    pub provider: ProviderKind,
    /// Why that provider is in force, for a person.
    pub provider_reason: String,
    /// Whether `config.toml` names the provider (else it is the default).
    pub provider_configured: bool,
    /// One entry per model provider (Anthropic, then OpenAI-compatible); offline has nothing
    /// to set.
    pub providers: Vec<ProviderSetup>,
    /// Where local recall's sentence vectors come from.
    pub embeddings: EmbeddingSource,
    /// `[llm.openai] embedding_model` as written; `None` = `default_embedding_model`.
    pub embedding_model: Option<String>,
    pub default_embedding_model: String,
}

/// One model provider's settings.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSetup {
    pub provider: ProviderKind,
    /// As written in `config.toml`; `None` = [`ProviderSetup::default_model`].
    pub model: Option<String>,
    /// As written in `config.toml`; `None` = [`ProviderSetup::default_base_url`].
    pub base_url: Option<String>,
    pub default_model: String,
    /// The environment's base URL when set (see `base_url_env`), else the built-in one.
    pub default_base_url: String,
    /// The environment variable the default base URL comes from, when it is set.
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub base_url_env: Option<&'static str>,
    /// The environment variable that holds this provider's key (it wins over the keyring).
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub key_env_var: &'static str,
    /// Where the API key would come from (never the key).
    pub key: KeyStatus,
}

/// What the Settings screen saves.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmChoice {
    pub provider: ProviderKind,
    /// Providers not listed are left as they are.
    pub providers: Vec<ProviderChoice>,
    /// `None`: left as it is.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub embeddings: Option<EmbeddingSource>,
    /// The OpenAI-compatible server's embedding model; blank or `None` = the default. Saved
    /// only with `embeddings = openai`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub embedding_model: Option<String>,
}

/// One provider's model and base URL; blank or `None` means the default.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderChoice {
    pub provider: ProviderKind,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// The environment variable that sets `provider`'s base URL when `config.toml` does not, as
/// the official SDKs read it.
pub fn base_url_env_var(provider: ProviderKind) -> Option<&'static str> {
    match provider {
        ProviderKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
        ProviderKind::OpenAi => Some("OPENAI_BASE_URL"),
        ProviderKind::Offline | ProviderKind::Local => None,
    }
}

/// `model` trimmed; blank is `None`. A name with whitespace inside is refused: no provider
/// names its models that way, and it is usually a paste gone wrong.
pub fn normalize_model(model: Option<&str>) -> Result<Option<String>> {
    let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    if model.chars().any(char::is_whitespace) {
        return Err(Error::InvalidInput(format!(
            "model `{model}`: a model name has no spaces"
        )));
    }
    Ok(Some(model.to_owned()))
}

/// `base_url` trimmed, without a trailing `/`; blank is `None`. Anything but an absolute
/// `http`/`https` URL with a host is refused, naming it.
pub fn normalize_base_url(base_url: Option<&str>) -> Result<Option<String>> {
    let Some(text) = base_url.map(str::trim).filter(|u| !u.is_empty()) else {
        return Ok(None);
    };
    let refused = || {
        Error::InvalidInput(format!(
            "base URL `{text}` is not an http(s) address (e.g. https://api.anthropic.com or \
             http://localhost:11434/v1)"
        ))
    };
    let url = reqwest::Url::parse(text).map_err(|_| refused())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(refused());
    }
    Ok(Some(text.trim_end_matches('/').to_owned()))
}

impl Engine {
    /// The LLM settings as the Settings screen shows them. Reads the OS keyring (which may
    /// block on D-Bus): call from a blocking context.
    pub fn llm_setup(&self) -> Result<LlmSetup> {
        let config = self.load_config()?;
        let providers = [ProviderKind::Anthropic, ProviderKind::OpenAi]
            .into_iter()
            .map(|provider| self.provider_setup(&config, provider))
            .collect();
        let (provider, provider_reason) = self.provider_in_force(&config, &LlmOverrides::default());
        Ok(LlmSetup {
            config_path: self.config_path(),
            provider,
            provider_reason,
            provider_configured: config.llm.provider.is_some(),
            providers,
            embeddings: config.llm.embeddings.unwrap_or_default(),
            embedding_model: config.llm.openai.embedding_model.clone(),
            default_embedding_model: crate::llm::openai::DEFAULT_EMBEDDING_MODEL.to_owned(),
        })
    }

    fn provider_setup(&self, config: &Config, provider: ProviderKind) -> ProviderSetup {
        let section = config.provider(provider).cloned().unwrap_or_default();
        // The defaults are what `llm_settings` picks when the section is silent.
        let mut silent = config.clone();
        if let Some(section) = silent.provider_mut(provider) {
            *section = Default::default();
        }
        let defaults = self.llm_settings(
            &silent,
            &LlmOverrides {
                provider: Some(provider),
                ..LlmOverrides::default()
            },
        );
        ProviderSetup {
            provider,
            model: section.model,
            base_url: section.base_url,
            default_model: defaults.model,
            default_base_url: defaults.base_url,
            base_url_env: base_url_env_var(provider).filter(|var| self.env().get(var).is_some()),
            key_env_var: keys::env_var(provider).unwrap_or_default(),
            key: keys::key_status(self.env(), provider),
        }
    }

    /// Writes `choice` into `config.toml` (re-read first, so whatever else it holds is kept)
    /// and returns the settings as they now are. Nothing is written when a value is refused.
    pub fn save_llm_choice(&self, choice: &LlmChoice) -> Result<LlmSetup> {
        let mut config = self.load_config()?;
        for entry in &choice.providers {
            let model = normalize_model(entry.model.as_deref())?;
            let base_url = normalize_base_url(entry.base_url.as_deref())?;
            let section = config.provider_mut(entry.provider).ok_or_else(|| {
                Error::InvalidInput(format!("the {} provider has no settings", entry.provider))
            })?;
            section.model = model;
            section.base_url = base_url;
        }
        if let Some(source) = choice.embeddings {
            // The server's model is set with the server; choosing the local model keeps it for
            // a later switch back.
            if source == EmbeddingSource::OpenAi {
                config.llm.openai.embedding_model =
                    normalize_model(choice.embedding_model.as_deref())?;
            }
            // The default is written as nothing: the file says only what was chosen.
            config.llm.embeddings = (source != EmbeddingSource::default()).then_some(source);
        }
        config.llm.provider = Some(choice.provider);
        self.save_config(&config)?;
        self.llm_setup()
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::environment::Environment;
    use crate::llm::{anthropic, openai};

    fn engine(dir: &std::path::Path, env: Environment) -> Engine {
        Engine::builder(env).engram_home(dir).build()
    }

    fn choice(provider: ProviderKind, model: &str, base_url: &str) -> ProviderChoice {
        ProviderChoice {
            provider,
            model: Some(model.into()),
            base_url: Some(base_url.into()),
        }
    }

    #[test]
    fn a_fresh_machine_is_offline_with_each_providers_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = engine(dir.path(), Environment::empty())
            .llm_setup()
            .expect("setup");
        assert_eq!(setup.provider, ProviderKind::Offline);
        assert!(!setup.provider_configured);
        assert!(
            setup.provider_reason.contains("not installed"),
            "{}",
            setup.provider_reason
        );
        assert_eq!(setup.config_path, dir.path().join("config.toml"));
        let [claude, compatible] = &setup.providers[..] else {
            panic!("two model providers: {:?}", setup.providers)
        };
        assert_eq!(claude.provider, ProviderKind::Anthropic);
        assert_eq!(claude.default_model, anthropic::DEFAULT_MODEL);
        assert_eq!(claude.default_base_url, anthropic::DEFAULT_BASE_URL);
        assert_eq!(
            (claude.model.as_deref(), claude.base_url.as_deref()),
            (None, None)
        );
        assert_eq!(compatible.provider, ProviderKind::OpenAi);
        assert_eq!(compatible.default_model, openai::DEFAULT_MODEL);
        assert_eq!(compatible.default_base_url, openai::DEFAULT_BASE_URL);
        assert!(
            !dir.path().join("config.toml").exists(),
            "reading writes nothing"
        );
    }

    #[test]
    fn the_environment_supplies_default_base_urls_and_keys_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = Environment::empty()
            .with("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .with("ANTHROPIC_API_KEY", "sk-ant-from-env");
        let setup = engine(dir.path(), env).llm_setup().expect("setup");
        let compatible = &setup.providers[1];
        assert_eq!(compatible.default_base_url, "http://127.0.0.1:9/v1");
        assert_eq!(compatible.base_url_env, Some("OPENAI_BASE_URL"));
        assert_eq!(setup.providers[0].base_url_env, None);
        assert_eq!(setup.providers[0].key_env_var, "ANTHROPIC_API_KEY");
        assert_eq!(compatible.key_env_var, "OPENAI_API_KEY");
        assert_eq!(setup.providers[0].key.source, "env");
        assert_eq!(setup.providers[0].key.env_var, Some("ANTHROPIC_API_KEY"));
        let json = serde_json::to_string(&setup).expect("json");
        assert!(!json.contains("sk-ant-from-env"), "never the key: {json}");
    }

    #[test]
    fn saving_writes_only_what_the_screen_owns_and_reads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        fs::write(
            engine.config_path(),
            "[dream]\nmin_hours = 24\n\n[llm]\ntimeout_ms = 9000\n\n[llm.anthropic]\nmodel = \"claude-sonnet-4-5\"\n",
        )
        .expect("seed");
        let setup = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::OpenAi,
                providers: vec![choice(
                    ProviderKind::OpenAi,
                    "  qwen2.5:7b ",
                    "http://localhost:11434/v1/",
                )],
                ..LlmChoice::default()
            })
            .expect("saved");
        assert_eq!(setup.provider, ProviderKind::OpenAi);
        assert_eq!(setup.providers[1].model.as_deref(), Some("qwen2.5:7b"));
        assert_eq!(
            setup.providers[1].base_url.as_deref(),
            Some("http://localhost:11434/v1"),
            "trimmed, without the trailing slash"
        );
        assert_eq!(
            setup.providers[0].model.as_deref(),
            Some("claude-sonnet-4-5"),
            "a provider not in the choice is left alone"
        );
        let config = engine.load_config().expect("reload");
        assert_eq!(config.llm.timeout_ms, Some(9000));
        assert_eq!(config.llm.provider, Some(ProviderKind::OpenAi));
        let text = fs::read_to_string(engine.config_path()).expect("read");
        assert!(
            text.contains("min_hours = 24"),
            "other sections kept: {text}"
        );

        // Blank fields go back to the defaults.
        engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Offline,
                providers: vec![choice(ProviderKind::OpenAi, " ", "")],
                ..LlmChoice::default()
            })
            .expect("saved");
        let config = engine.load_config().expect("reload");
        assert_eq!(config.llm.openai.model, None);
        assert_eq!(config.llm.openai.base_url, None);
        assert_eq!(config.llm.provider, Some(ProviderKind::Offline));
    }

    #[test]
    fn the_vector_source_and_its_model_are_saved_when_chosen_and_kept_when_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        let setup = engine.llm_setup().expect("setup");
        assert_eq!(setup.embeddings, EmbeddingSource::Local);
        assert_eq!(setup.embedding_model, None);
        assert_eq!(
            setup.default_embedding_model,
            openai::DEFAULT_EMBEDDING_MODEL
        );
        let setup = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Local,
                embeddings: Some(EmbeddingSource::OpenAi),
                embedding_model: Some(" nomic-embed-text ".into()),
                ..LlmChoice::default()
            })
            .expect("saved");
        assert_eq!(setup.embeddings, EmbeddingSource::OpenAi);
        assert_eq!(setup.embedding_model.as_deref(), Some("nomic-embed-text"));
        let text = fs::read_to_string(engine.config_path()).expect("read");
        assert!(text.contains("embeddings = \"openai\""), "{text}");
        // A choice silent about vectors leaves them alone.
        let setup = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Offline,
                ..LlmChoice::default()
            })
            .expect("saved");
        assert_eq!(setup.embeddings, EmbeddingSource::OpenAi);
        assert_eq!(setup.embedding_model.as_deref(), Some("nomic-embed-text"));
        // Back to the local model: the default source is written as nothing; the server's
        // model stays for a switch back.
        let setup = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Local,
                embeddings: Some(EmbeddingSource::Local),
                ..LlmChoice::default()
            })
            .expect("saved");
        assert_eq!(setup.embeddings, EmbeddingSource::Local);
        assert_eq!(setup.embedding_model.as_deref(), Some("nomic-embed-text"));
        let text = fs::read_to_string(engine.config_path()).expect("read");
        assert!(!text.contains("embeddings ="), "{text}");
        let err = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Local,
                embeddings: Some(EmbeddingSource::OpenAi),
                embedding_model: Some("nomic embed".into()),
                ..LlmChoice::default()
            })
            .expect_err("refused");
        assert!(err.to_string().contains("nomic embed"), "{err}");
    }

    #[test]
    fn refused_values_name_themselves_and_write_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path(), Environment::empty());
        for (model, base_url, named) in [
            ("m", "localhost:11434", "localhost:11434"),
            ("m", "ftp://example.com", "ftp://example.com"),
            ("m", "not a url", "not a url"),
            ("gpt 4", "", "gpt 4"),
        ] {
            let err = engine
                .save_llm_choice(&LlmChoice {
                    provider: ProviderKind::OpenAi,
                    providers: vec![choice(ProviderKind::OpenAi, model, base_url)],
                    ..LlmChoice::default()
                })
                .expect_err("refused");
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput, "{err}");
            assert!(err.to_string().contains(named), "{err}");
        }
        let err = engine
            .save_llm_choice(&LlmChoice {
                provider: ProviderKind::Offline,
                providers: vec![choice(ProviderKind::Offline, "m", "")],
                ..LlmChoice::default()
            })
            .expect_err("offline has no settings");
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
        assert!(!engine.config_path().exists(), "nothing written");
    }

    #[test]
    fn the_env_var_named_is_the_one_llm_settings_reads() {
        let dir = tempfile::tempdir().expect("tempdir");
        for provider in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
            let var = base_url_env_var(provider).expect("a variable");
            let env = Environment::empty().with(var, "http://127.0.0.1:1/x");
            let settings = engine(dir.path(), env).llm_settings(
                &Config::default(),
                &LlmOverrides {
                    provider: Some(provider),
                    ..LlmOverrides::default()
                },
            );
            assert_eq!(settings.base_url, "http://127.0.0.1:1/x", "{provider}");
        }
    }
}
