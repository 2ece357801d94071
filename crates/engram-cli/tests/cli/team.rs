//! `engram team check` and `engram secrets scan`.

use std::fs;

use crate::support::{exit_code, stderr, Sandbox};

#[test]
fn team_check_exits_2_naming_the_rule_and_0_for_a_safe_key() {
    let s = Sandbox::in_project("team").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let dir = memory.to_string_lossy().into_owned();
    for (key, rule) in [
        ("%252e%252e%252fx.md", "url-encoded-traversal"),
        ("\u{FF0E}\u{FF0E}/x.md", "nfkc-traversal"),
        ("../x.md", "outside-team"),
        ("a\\b.md", "backslash"),
        ("/etc/passwd", "absolute"),
    ] {
        let out = s.run(&["team", "check", key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key}");
        assert!(stderr(&out).contains(rule), "{key}: {}", stderr(&out));
    }
    let ok = s.run(&["team", "check", "notes/deploy.md", "--memory-dir", &dir]);
    assert_eq!(exit_code(&ok), 0, "{}", stderr(&ok));
}

/// Issue #20 item 12: keys that reach `../` only through NFKC and URL-decoding together,
/// overlong UTF-8, and names no file could have were accepted with exit 0.
#[test]
fn team_check_refuses_combined_decodings_overlong_utf8_and_names_no_file_could_have() {
    let s = Sandbox::in_project("team").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let dir = memory.to_string_lossy().into_owned();
    let long_name = format!("{}.md", "n".repeat(252));
    for (key, rule) in [
        (
            "\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF46}x.md"
                .to_owned(),
            "url-encoded-traversal",
        ),
        (
            "%ef%bc%8e%ef%bc%8e%ef%bc%8fx.md".to_owned(),
            "url-encoded-traversal",
        ),
        ("%c0%ae%c0%ae%c0%afx.md".to_owned(), "bad-encoding"),
        (format!("{long_name}.md"), "too-long"),
        (format!("{}x.md", "notes/".repeat(700)), "too-long"),
        ("notes/".to_owned(), "not-a-file-name"),
    ] {
        let out = s.run(&["team", "check", &key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key:.60}: {}", stderr(&out));
        assert!(stderr(&out).contains(rule), "{key:.60}: {}", stderr(&out));
    }
    let ok = s.run(&["team", "check", &long_name, "--memory-dir", &dir]);
    assert_eq!(
        exit_code(&ok),
        0,
        "a 255-byte name is a file: {}",
        stderr(&ok)
    );
}

#[test]
fn secrets_scan_reports_file_line_and_rule_and_never_modifies() {
    let s = Sandbox::in_project("secrets").with_engram_home();
    let dir = s.root().join("scan");
    fs::create_dir_all(dir.join("sub")).expect("dir");
    let leaky = "notes\nkey: sk-ant-api03-Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7Xk9pQ2vL7mZ3wR8tY4nB6AA\n";
    fs::write(dir.join("sub/leak.jsonl"), leaky).expect("leak");
    fs::write(dir.join("clean.md"), "nothing here\n").expect("clean");
    let found = s.json_with_code(&["secrets", "scan", &dir.to_string_lossy()], 1);
    let rows = found.as_array().expect("array");
    assert_eq!(rows.len(), 1, "{found}");
    assert_eq!(rows[0]["line"], 2);
    assert!(rows[0]["file"]
        .as_str()
        .expect("file")
        .ends_with("sub/leak.jsonl"));
    assert!(
        rows[0]["rule"]
            .as_str()
            .expect("rule")
            .contains("anthropic"),
        "{found}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("sub/leak.jsonl")).expect("read"),
        leaky
    );
}

#[test]
fn team_sync_through_a_bare_repo_reports_status_in_the_documented_shape() {
    let s = Sandbox::in_project("sync").with_engram_home();
    let remote = s.root().join("team.git");
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .expect("git");
    assert!(ok.success());
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    fs::write(
        memory.join("team/deploy.md"),
        "---\nname: Deploy\n---\nFly.io\n",
    )
    .expect("file");
    let dir = memory.to_string_lossy().into_owned();
    s.json(&[
        "team",
        "remote",
        "set",
        &remote.to_string_lossy(),
        "--memory-dir",
        &dir,
    ]);
    let before = s.json(&["team", "status", "--memory-dir", &dir]);
    crate::support::assert_has_keys(&before, &["remote", "ahead", "behind", "conflicts"]);
    assert_eq!(before["ahead"], 1);
    let pushed = s.json(&["team", "push", "--memory-dir", &dir]);
    assert_eq!(pushed["files"], serde_json::json!(["deploy.md"]));
    let after = s.json(&["team", "status", "--memory-dir", &dir]);
    assert_eq!(
        (
            after["ahead"].as_u64(),
            after["behind"].as_u64(),
            after["conflicts"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
}

#[test]
fn secrets_redact_stages_a_reviewed_change_and_rules_lists_gitleaks_ids() {
    let s = Sandbox::in_project("redact").with_engram_home();
    let memory = s.root().join("mem");
    fs::create_dir_all(memory.join("team")).expect("team");
    let token = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let leaky =
        format!("---\nname: CI\ndescription: the CI\ntype: reference\n---\nmirror token {token}\n");
    fs::write(memory.join("team/ci.md"), &leaky).expect("ci");
    fs::write(memory.join("MEMORY.md"), "- [CI](team/ci.md) — the CI\n").expect("index");
    let dir = memory.to_string_lossy().into_owned();

    let set = s.json(&["secrets", "redact", "--memory-dir", &dir]);
    assert_eq!(set["source"], "redaction", "{set}");
    assert_eq!(set["files"].as_array().map(Vec::len), Some(1), "{set}");
    assert!(
        set["files"][0]["diff"]
            .as_str()
            .expect("diff")
            .contains("+mirror token [REDACTED:github-pat]"),
        "{set}"
    );
    assert_eq!(
        fs::read_to_string(memory.join("team/ci.md")).expect("read"),
        leaky
    );
    let id = set["id"].as_str().expect("id");
    let out = s.run(&["changes", "apply", id, "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(fs::read_to_string(memory.join("team/ci.md"))
        .expect("read")
        .ends_with("mirror token [REDACTED:github-pat]\n"));
    let none = s.run(&["secrets", "redact", "--memory-dir", &dir]);
    assert!(crate::support::stdout(&none).contains("nothing to redact"));
    s.json_with_code(&["secrets", "scan", &dir], 0);

    let rules = s.json(&["secrets", "rules"]);
    let rules = rules.as_array().expect("rules");
    assert_eq!(
        rules.len(),
        223,
        "gitleaks' 222 and Claude Code's login tokens"
    );
    assert!(rules.iter().all(|r| r.get("skipped").is_none()));
    for id in [
        "github-pat",
        "generic-api-key",
        "private-key",
        "anthropic-oauth-token",
    ] {
        assert!(rules.iter().any(|r| r["id"] == id), "{id}");
    }
}
