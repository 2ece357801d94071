//! API keys: from the environment (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, as the official SDKs
//! read them), else from the OS keyring (macOS Keychain, Windows Credential Manager, the Secret
//! Service over D-Bus on Linux) under service [`KEYRING_SERVICE`], user = the provider name.
//! Never from `config.toml`.
//!
//! Reading fails soft: a machine without a keyring (no D-Bus session, no Secret Service, a locked
//! store) simply has no stored key, and [`KeyStatus`] says why for the Settings screen. The
//! environment wins over the keyring so a one-off `ANTHROPIC_API_KEY=… engram recall` does what
//! it says.
//!
//! A keyring read may block on D-Bus; callers on an async runtime run it on a blocking thread.
//!
//! `ENGRAM_KEYRING=never` keeps a process away from the keyring: keys come from the environment
//! only, and a remote provider without one is done without ([`keyring_withheld`]). The hooks
//! set it for themselves where a read could put a dialog in front of the person
//! ([`crate::platform::Os::keyring_may_prompt_unattended`]: macOS asks once per binary whether
//! `engram` may read what the app stored, and a hook has two seconds and nobody watching).

use serde::Serialize;

use super::ProviderKind;
use crate::environment::Environment;
use crate::error::{Error, Result};

/// The keyring service name Engram's keys are stored under.
pub const KEYRING_SERVICE: &str = "engram";

/// Where a provider's key would come from, without the key itself.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyStatus {
    pub provider: ProviderKind,
    /// `env`, `keyring`, or `none`.
    #[cfg_attr(feature = "ts", ts(type = r#""env" | "keyring" | "none""#))]
    pub source: &'static str,
    /// The environment variable read, when the key comes from there.
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub env_var: Option<&'static str>,
    /// Why the keyring could not be read (no key stored is not an error).
    pub keyring_error: Option<String>,
}

/// The environment variable that keeps a process away from the OS keyring when `never`.
pub const KEYRING_VAR: &str = "ENGRAM_KEYRING";

/// Whether this process may read the OS keyring (`ENGRAM_KEYRING` is not `never`).
pub fn keyring_allowed(env: &Environment) -> bool {
    env.get(KEYRING_VAR) != Some("never")
}

/// Why `provider`'s key is missing on purpose: a remote provider, no key in the environment, and
/// a process that does not read the keyring. `None` when the key is there or could be looked up.
pub fn keyring_withheld(env: &Environment, provider: ProviderKind) -> Option<String> {
    let var = env_var(provider)?;
    if keyring_allowed(env) || env.get(var).is_some() {
        return None;
    }
    Some(format!(
        "no {provider} key in {var}, and this process does not read the OS keyring \
         ({KEYRING_VAR}=never)"
    ))
}

/// The environment variable holding `provider`'s key.
pub fn env_var(provider: ProviderKind) -> Option<&'static str> {
    match provider {
        ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
        ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
        ProviderKind::Offline | ProviderKind::Local => None,
    }
}

/// The key to use for `provider`, if any: the environment, then the keyring.
pub fn api_key(env: &Environment, provider: ProviderKind) -> Option<String> {
    if let Some(key) = env_var(provider).and_then(|var| env.get(var)) {
        return Some(key.to_owned());
    }
    if !keyring_allowed(env) {
        return None;
    }
    keyring_get(provider).ok().flatten()
}

/// Where the key for `provider` comes from.
pub fn key_status(env: &Environment, provider: ProviderKind) -> KeyStatus {
    let var = env_var(provider);
    if let Some(var) = var.filter(|var| env.get(var).is_some()) {
        return KeyStatus {
            provider,
            source: "env",
            env_var: Some(var),
            keyring_error: None,
        };
    }
    if let Some(withheld) = keyring_withheld(env, provider) {
        return KeyStatus {
            provider,
            source: "none",
            env_var: None,
            keyring_error: Some(withheld),
        };
    }
    let (source, keyring_error) = match keyring_get(provider) {
        Ok(Some(_)) => ("keyring", None),
        Ok(None) => ("none", None),
        Err(e) => ("none", Some(e.to_string())),
    };
    KeyStatus {
        provider,
        source,
        env_var: None,
        keyring_error,
    }
}

fn entry(provider: ProviderKind) -> Result<keyring::Entry> {
    if !provider.is_remote() {
        return Err(Error::InvalidInput(format!(
            "the {provider} provider takes no API key"
        )));
    }
    keyring::Entry::new(KEYRING_SERVICE, provider.as_str())
        .map_err(|e| Error::Llm(format!("OS keyring: {e}")))
}

/// The stored key: `Ok(None)` when none is stored, `Err` when the keyring cannot be reached.
pub fn keyring_get(provider: ProviderKind) -> Result<Option<String>> {
    match entry(provider)?.get_password() {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
        Ok(_) | Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(Error::Llm(format!("OS keyring: {e}"))),
    }
}

/// Stores `key` for `provider` in the OS keyring (the Settings screen's save).
pub fn keyring_set(provider: ProviderKind, key: &str) -> Result<()> {
    let key = key.trim();
    if key.is_empty() {
        return Err(Error::InvalidInput("an empty API key".to_owned()));
    }
    entry(provider)?
        .set_password(key)
        .map_err(|e| Error::Llm(format!("OS keyring: cannot store the key: {e}")))
}

/// Removes the stored key; removing a key that is not there is fine.
pub fn keyring_delete(provider: ProviderKind) -> Result<()> {
    match entry(provider)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(Error::Llm(format!(
            "OS keyring: cannot remove the key: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_and_is_reported_without_the_key() {
        let env = Environment::empty().with("ANTHROPIC_API_KEY", "sk-ant-test");
        assert_eq!(
            api_key(&env, ProviderKind::Anthropic).as_deref(),
            Some("sk-ant-test")
        );
        let status = key_status(&env, ProviderKind::Anthropic);
        assert_eq!(status.source, "env");
        assert_eq!(status.env_var, Some("ANTHROPIC_API_KEY"));
        assert!(!serde_json::to_string(&status)
            .expect("json")
            .contains("sk-ant-test"));
    }

    /// Whatever this machine has — no D-Bus session (CI), a Secret Service without Engram's
    /// entry, a locked store — reading an absent key must neither panic nor hang; it is simply
    /// not there (or an error the Settings screen can show).
    #[test]
    fn reading_the_keyring_fails_soft() {
        let started = std::time::Instant::now();
        let status = key_status(&Environment::empty(), ProviderKind::OpenAi);
        assert_ne!(status.source, "env");
        if status.source == "none" {
            assert_eq!(api_key(&Environment::empty(), ProviderKind::OpenAi), None);
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "a keyring read must not hang"
        );
        assert!(keyring_get(ProviderKind::Offline).is_err());
    }

    #[test]
    fn stored_keys_round_trip_and_an_unavailable_keyring_says_why() {
        let keyring = crate::testing::keyring_store::TestKeyring::install();
        let env = Environment::empty();
        assert_eq!(key_status(&env, ProviderKind::Anthropic).source, "none");
        keyring_set(ProviderKind::Anthropic, "  sk-ant-stored \n").expect("stored");
        assert_eq!(
            keyring.stored(KEYRING_SERVICE, "anthropic").as_deref(),
            Some("sk-ant-stored"),
            "trimmed, under service `engram`, user = the provider"
        );
        let status = key_status(&env, ProviderKind::Anthropic);
        assert_eq!((status.source, status.keyring_error), ("keyring", None));
        assert_eq!(
            api_key(&env, ProviderKind::Anthropic).as_deref(),
            Some("sk-ant-stored")
        );
        let with_env = Environment::empty().with("ANTHROPIC_API_KEY", "sk-ant-env");
        assert_eq!(
            api_key(&with_env, ProviderKind::Anthropic).as_deref(),
            Some("sk-ant-env"),
            "the environment wins over the keyring"
        );
        assert!(
            keyring_set(ProviderKind::Anthropic, "   ").is_err(),
            "empty key"
        );
        keyring_delete(ProviderKind::Anthropic).expect("deleted");
        keyring_delete(ProviderKind::Anthropic).expect("deleting twice is fine");
        assert_eq!(key_status(&env, ProviderKind::Anthropic).source, "none");

        keyring.set_unavailable(true);
        let status = key_status(&env, ProviderKind::Anthropic);
        assert_eq!(status.source, "none");
        assert!(
            status.keyring_error.as_deref().is_some_and(
                |e| e.starts_with("OS keyring:") && e.contains("org.freedesktop.secrets")
            ),
            "{status:?}"
        );
        let err = keyring_set(ProviderKind::Anthropic, "sk").expect_err("unavailable");
        assert!(err.to_string().contains("cannot store the key"), "{err}");
    }

    #[test]
    fn a_process_told_never_reads_keys_from_the_environment_only_and_says_so() {
        let keyring = crate::testing::keyring_store::TestKeyring::install();
        keyring_set(ProviderKind::Anthropic, "sk-ant-stored").expect("stored");
        let never = Environment::empty().with(KEYRING_VAR, "never");
        assert_eq!(api_key(&never, ProviderKind::Anthropic), None);
        let status = key_status(&never, ProviderKind::Anthropic);
        assert_eq!(status.source, "none");
        let withheld = keyring_withheld(&never, ProviderKind::Anthropic).expect("withheld");
        assert_eq!(status.keyring_error.as_deref(), Some(withheld.as_str()));
        assert!(withheld.contains("ENGRAM_KEYRING=never"), "{withheld}");

        let with_env = never.clone().with("ANTHROPIC_API_KEY", "sk-ant-env");
        assert_eq!(
            api_key(&with_env, ProviderKind::Anthropic).as_deref(),
            Some("sk-ant-env")
        );
        assert_eq!(keyring_withheld(&with_env, ProviderKind::Anthropic), None);
        assert_eq!(keyring_withheld(&never, ProviderKind::Local), None);
        let allowed = Environment::empty().with(KEYRING_VAR, "always");
        assert_eq!(
            api_key(&allowed, ProviderKind::Anthropic).as_deref(),
            Some("sk-ant-stored")
        );
        drop(keyring);
    }
}
