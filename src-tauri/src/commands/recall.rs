//! The Recall panel of a project: what Engram's prompt hook would inject for a prompt typed in
//! the app — which memories and why, what was passed over, and what it costs — with the
//! configured provider or offline.
//!
//! A preview is not a session: nothing is recorded as surfaced. One preview runs at a time;
//! starting another, or [`cancel_recall`], cancels the one running (a model call can take the
//! provider's whole timeout).

use memory_engine::config::LlmOverrides;
use memory_engine::hooks::is_recall_query;
use memory_engine::llm::ProviderKind;
use memory_engine::recall::{RecallReport, RecallRequest};
use memory_engine::JobKind;
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// What the panel shows for one prompt.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RecallPreview {
    pub report: RecallReport,
    /// Whether the prompt hook recalls for this prompt at all: Claude Code skips single-word
    /// prompts, so for those the hook would inject nothing, whatever the report shows.
    pub hook_query: bool,
}

/// Recalls `project`'s memories for `query` as the prompt hook would (the provider in force, or
/// offline when `offline`), without recording anything.
#[tauri::command]
pub async fn recall_preview(
    state: State<'_, AppState>,
    project: String,
    query: String,
    offline: bool,
) -> Result<RecallPreview> {
    let dir = state.memory_dir(&project)?;
    // Cancelled by the next preview, by `cancel_recall`, or when this command is dropped.
    let job = state.engine().jobs().start(JobKind::Recall);
    let engine = state.engine().clone();
    let overrides = LlmOverrides {
        provider: offline.then_some(ProviderKind::Offline),
        ..LlmOverrides::default()
    };
    // `config.toml` and the API key (the keyring may block on D-Bus), off the async threads.
    let root = dir.root().to_path_buf();
    let setup = blocking(move || engine.recall_setup(&overrides, &root)).await?;
    let request = RecallRequest {
        query,
        ..RecallRequest::default()
    };
    let report = state
        .engine()
        .recall_as(dir.root(), &request, &setup, job.token())
        .await?;
    Ok(RecallPreview {
        hook_query: is_recall_query(&report.query),
        report,
    })
}

/// Cancels the preview running, if any (it then fails with kind `cancelled`).
#[tauri::command]
pub fn cancel_recall(state: State<'_, AppState>) {
    state.engine().jobs().cancel(JobKind::Recall);
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use memory_engine::testing::keyring_store::TestKeyring;
    use memory_engine::testing::{wire, Reply, ScriptedServer};
    use serde_json::{json, Value};

    use super::super::test_shell::{copy_tree, invoke, Shell, REAL_FIXTURES};

    const PROJECT: &str = "-home-adrian-stockerly";

    /// A home whose one project holds a copy of the real stockerly memory dir.
    fn stockerly(home: &Path) {
        copy_tree(
            &Path::new(REAL_FIXTURES).join("memory/stockerly"),
            &home.join("projects").join(PROJECT).join("memory"),
        );
    }

    fn preview(shell: &Shell, query: &str, offline: bool) -> Result<Value, Value> {
        shell.invoke(
            "recall_preview",
            json!({ "project": PROJECT, "query": query, "offline": offline }),
        )
    }

    fn files(preview: &Value) -> Vec<&str> {
        preview["report"]["results"]
            .as_array()
            .map(|all| all.iter().filter_map(|r| r["file"].as_str()).collect())
            .unwrap_or_default()
    }

    /// Points `config.toml` at an OpenAI-compatible server.
    fn configure_openai(shell: &Shell, server: &ScriptedServer) {
        fs::create_dir_all(shell.engram_home()).expect("engram home");
        fs::write(
            shell.engram_home().join("config.toml"),
            format!(
                "[llm]\nprovider = \"openai\"\n\n[llm.openai]\nmodel = \"scripted\"\nbase_url = \"{}/v1\"\n",
                server.url()
            ),
        )
        .expect("config");
    }

    #[test]
    fn offline_recall_shows_what_would_be_injected_and_why() {
        let shell = Shell::with_home(stockerly);
        let preview = preview(
            &shell,
            "Fix the hardcoded USD currency in execute_trade before the beta",
            false,
        )
        .expect("recalled with no config at all");
        assert_eq!(files(&preview).first(), Some(&"project_decision.md"));
        assert_eq!(preview["hookQuery"], true);
        let report = &preview["report"];
        assert_eq!(report["provider"], "offline");
        assert_eq!(report["considered"], 7, "MEMORY.md is not a memory");
        let top = &report["results"][0];
        assert_eq!(top["type"], "project");
        assert!(top["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("matched: ")));
        assert!(top["score"].as_f64().is_some_and(|s| s > 0.0));
        assert!(top["tokens"].as_u64().is_some_and(|t| t > 0));
        assert!(top["age"].is_string());
        assert!(report["injectedTokens"].as_u64().is_some_and(|t| t > 0));
        assert!(report["elapsedMs"].is_u64());
        assert!(report["passedOver"].is_array());
        assert_eq!(report["usage"]["calls"], 0, "no model, no tokens spent");
        // The panel can say why each memory passed, by which rule, and why offline.
        assert!(
            top["verdict"]
                .as_str()
                .is_some_and(|v| v.starts_with("shares ") && v.contains("meets 15 %")),
            "{top}"
        );
        assert!(
            report["gate"]
                .as_str()
                .is_some_and(|g| g.starts_with("the prompt reads as set in the project")),
            "{report}"
        );
        assert_eq!(
            report["providerReason"],
            "no provider is configured and the local model is not installed (engram models fetch)"
        );
        assert!(
            !shell.engram_home().join("sessions").exists(),
            "a preview records nothing as surfaced"
        );
    }

    #[test]
    fn single_word_prompts_are_flagged_as_skipped_by_the_hook() {
        let shell = Shell::with_home(stockerly);
        let preview = preview(&shell, "currency", false).expect("recalled");
        assert_eq!(preview["hookQuery"], false);
        assert!(
            !files(&preview).is_empty(),
            "the preview still shows matches"
        );
    }

    #[test]
    fn the_configured_provider_selects_and_offline_overrides_it() {
        let _keyring = TestKeyring::install();
        let shell = Shell::with_home(stockerly);
        let server = ScriptedServer::queue(vec![Reply::json(wire::openai_text(
            r#"{"selected_memories": ["user_adrian.md", "invented.md"]}"#,
            640,
            14,
            0,
        ))]);
        configure_openai(&shell, &server);
        let chosen =
            preview(&shell, "How should I track my CETES investments?", false).expect("recalled");
        let report = &chosen["report"];
        assert_eq!(report["provider"], "openai");
        assert_eq!(report["model"], "scripted");
        assert_eq!(files(&chosen), ["user_adrian.md"]);
        assert_eq!(report["rejected"], json!(["invented.md"]));
        assert_eq!(report["usage"]["inputTokens"], 640);
        assert_eq!(report["results"][0]["reason"], "selected by scripted");
        assert_eq!(server.requests().len(), 1);

        let offline =
            preview(&shell, "How should I track my CETES investments?", true).expect("offline");
        assert_eq!(offline["report"]["provider"], "offline");
        assert_eq!(server.requests().len(), 1, "offline asks no model");
    }

    #[test]
    fn a_provider_that_cannot_run_fails_in_place_naming_the_fix() {
        let _keyring = TestKeyring::install();
        let shell = Shell::with_home(stockerly);
        fs::create_dir_all(shell.engram_home()).expect("engram home");
        fs::write(
            shell.engram_home().join("config.toml"),
            "[llm]\nprovider = \"anthropic\"\n",
        )
        .expect("config");
        let error = preview(&shell, "currency bug", false).expect_err("no key");
        assert_eq!(error["kind"], "llm");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("ANTHROPIC_API_KEY")),
            "{error}"
        );
        assert!(
            preview(&shell, "currency bug", true).is_ok(),
            "offline still works"
        );
    }

    #[test]
    fn a_project_is_a_name_never_a_path() {
        let shell = Shell::with_home(stockerly);
        for project in ["../claude/projects/x", "/etc", ".."] {
            let error = shell
                .invoke(
                    "recall_preview",
                    json!({ "project": project, "query": "a b", "offline": true }),
                )
                .expect_err("denied");
            assert_eq!(error["kind"], "pathDenied", "{project}: {error}");
        }
    }

    #[test]
    fn a_slow_model_call_is_cancelled() {
        let _keyring = TestKeyring::install();
        let shell = Shell::with_home(stockerly);
        let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(20))]);
        configure_openai(&shell, &server);
        let window = shell.window();
        let started = Instant::now();
        let running = std::thread::spawn(move || {
            invoke(
                &window,
                "recall_preview",
                json!({ "project": PROJECT, "query": "currency bug", "offline": false }),
            )
        });
        // Cancel once the request has reached the server.
        while server.requests().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "never sent");
            std::thread::sleep(Duration::from_millis(20));
        }
        shell.invoke("cancel_recall", json!({})).expect("cancelled");
        let error = running
            .join()
            .expect("the invoking thread")
            .expect_err("cancelled");
        assert_eq!(error["kind"], "cancelled", "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
