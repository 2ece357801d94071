//! `engram search` and `engram lint --fix` end to end: the real binary on a sandboxed Claude home
//! built from the real fixtures.

use std::fs;

use crate::support::{assert_has_keys, exit_code, files, stderr, stdout, Sandbox};
use memory_engine::testing::fixtures::{copy_tree, REAL_FIXTURES};
use serde_json::Value;

/// A Claude home holding the real Demo transcripts and both real memory dirs as two projects.
fn real_home(s: &Sandbox) {
    let projects = s.claude().join("projects");
    copy_tree(
        &std::path::Path::new(REAL_FIXTURES).join("claude-home/projects"),
        &projects,
    );
    s.copy_real_memory(
        "claude-code-2.1.330",
        &projects.join("-path-to-Demo/memory"),
    );
    s.copy_real_memory("stockerly", &projects.join("-home-adrian-stockerly/memory"));
}

#[test]
fn search_ranks_memories_of_every_project() {
    let s = Sandbox::new();
    real_home(&s);

    let hits = s.json(&["search", "Deploy"]);
    assert_eq!(
        files(&hits),
        [
            "deploy-freeze.md",
            "project_decision.md",
            "project_expert_panel_v2.md"
        ]
    );
    let first = &hits[0];
    assert_has_keys(
        first,
        &[
            "project",
            "memoryDir",
            "file",
            "name",
            "description",
            "type",
            "snippet",
            "score",
        ],
    );
    assert_eq!(first["project"], "-path-to-Demo");
    assert_eq!(first["projectPath"], "/path/to/Demo");
    assert_eq!(first["type"], "project");
    assert_eq!(
        first["memoryDir"],
        s.claude()
            .join("projects/-path-to-Demo/memory")
            .to_str()
            .expect("utf-8")
    );
    let scores: Vec<f64> = hits
        .as_array()
        .expect("array")
        .iter()
        .map(|h| h["score"].as_f64().expect("score"))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(hits[1]["project"], "-home-adrian-stockerly");
    assert_eq!(hits[1]["projectPath"], Value::Null);

    // Several words: all must match. `--limit` caps.
    assert_eq!(
        files(&s.json(&["search", "deploy", "cetes"])),
        ["project_expert_panel_v2.md"]
    );
    assert_eq!(
        files(&s.json(&["search", "deploy", "--limit", "1"])),
        ["deploy-freeze.md"]
    );

    let text = stdout(&s.run(&["search", "brutal", "honesty"]));
    assert!(text.contains("Brutal honesty mandate  feedback"), "{text}");
    assert!(
        text.contains("-home-adrian-stockerly · feedback_brutal_honesty.md"),
        "{text}"
    );

    let none = s.run(&["search", "zanzibar"]);
    assert_eq!(exit_code(&none), 0);
    assert!(
        stdout(&none).starts_with("no memory matches \"zanzibar\""),
        "{}",
        stdout(&none)
    );
    assert_eq!(s.json(&["search", "zanzibar"]), Value::Array(Vec::new()));

    assert_eq!(exit_code(&s.run(&["search"])), 2, "a query is required");
}

#[test]
fn lint_fix_dry_run_shows_the_diff_and_writes_nothing() {
    let s = Sandbox::new();
    let dir = s.copy_real_memory("claude-code-2.1.330", &s.root().join("mem"));
    let dir_arg = dir.to_str().expect("utf-8 path");
    let index = dir.join("MEMORY.md");
    fs::write(
        &index,
        format!(
            "{}- [Gone](gone.md) — removed long ago\n",
            fs::read_to_string(&index).expect("read")
        ),
    )
    .expect("add a dangling line");
    let before = fs::read_to_string(&index).expect("read");

    let out = s.run(&["--memory-dir", dir_arg, "lint", "--fix", "--dry-run"]);
    assert_eq!(
        exit_code(&out),
        1,
        "the dangling pointer (an error) is still there"
    );
    let text = stdout(&out);
    assert!(
        text.contains("--- a/MEMORY.md\n+++ b/MEMORY.md\n"),
        "{text}"
    );
    assert!(
        text.contains("-- [Gone](gone.md) — removed long ago\n"),
        "{text}"
    );
    assert!(
        text.contains("+- [hook-test](hook-test.md) — hook test memory\n"),
        "{text}"
    );
    assert!(
        text.contains("would fix 3 findings in 1 file (dry run: nothing written)"),
        "{text}"
    );
    assert!(
        text.contains("[dangling-pointer]"),
        "the findings are still listed: {text}"
    );
    assert_eq!(fs::read_to_string(&index).expect("read"), before);

    let json = s.json_with_code(&["--memory-dir", dir_arg, "lint", "--fix", "--dry-run"], 1);
    assert_eq!(json["dryRun"], true);
    assert_eq!(json["applied"], Value::Null);
    assert_eq!(json["plan"]["fixed"].as_array().expect("fixed").len(), 3);
    let change = &json["plan"]["changes"]["changes"][0];
    assert_has_keys(
        change,
        &["file", "kind", "before", "after", "reason", "diff"],
    );
    assert_eq!(change["kind"], "modify");

    let out = s.run(&["--memory-dir", dir_arg, "lint", "--dry-run"]);
    assert_eq!(
        exit_code(&out),
        2,
        "--dry-run needs --fix: {}",
        stderr(&out)
    );
}

#[test]
fn lint_fix_applies_as_the_user_and_reports_what_is_left() {
    let s = Sandbox::new();
    let dir = s.copy_real_memory("stockerly", &s.root().join("mem"));
    let dir_arg = dir.to_str().expect("utf-8 path");
    let index = dir.join("MEMORY.md");
    let long = format!(
        "- [Working method](project_working_method.md) — {}",
        "GitHub Issues/Projects + docs/ split, sprint protocol, discovery cards required; "
            .repeat(3)
    );
    let original = fs::read_to_string(&index).expect("read");
    fs::write(
        &index,
        original.replace(
            "- [Working method](project_working_method.md) — GitHub Issues/Projects + docs/ split, sprint protocol, discovery cards required",
            &long,
        ),
    )
    .expect("lengthen a line");
    // An error no automatic fix touches: a file without frontmatter.
    fs::write(dir.join("scratch.md"), "just text\n").expect("bad file");

    let json = s.json_with_code(&["--memory-dir", dir_arg, "lint", "--fix"], 1);
    assert_eq!(json["dryRun"], false);
    let applied = &json["applied"];
    assert_eq!(applied["actor"], "user");
    assert_eq!(applied["files"][0]["status"], "applied");
    let rules: Vec<&str> = json["report"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().expect("rule"))
        .collect();
    assert_eq!(
        rules,
        ["bad-frontmatter"],
        "only the unfixable error is left"
    );

    let fixed = fs::read_to_string(&index).expect("read");
    let line = fixed
        .lines()
        .find(|l| l.contains("project_working_method.md"))
        .expect("still indexed");
    assert!(line.chars().count() <= 150 && line.ends_with('…'), "{line}");
    assert!(
        fixed.contains("- [scratch](scratch.md)\n"),
        "the orphan got its line: {fixed}"
    );

    let history = s.json(&["--memory-dir", dir_arg, "history", "MEMORY.md"]);
    assert_eq!(history[0]["actor"], "user", "{history}");
    assert_eq!(history[1]["actor"], "external");

    let out = s.run(&["--memory-dir", dir_arg, "lint", "--fix"]);
    assert_eq!(exit_code(&out), 1);
    assert!(
        stdout(&out).starts_with("nothing to fix automatically\n"),
        "{}",
        stdout(&out)
    );
}
