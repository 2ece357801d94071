//! `engram history` and `engram revert` end to end: the real binary on copies of real memory
//! dirs, with Engram's history in the sandbox's data dir. The JSON keys `version`, `file`,
//! `actor`, `time` and `summary` are a stable interface.

use std::fs;

use crate::support::{assert_has_keys, exit_code, stderr, stdout, Sandbox};
use serde_json::Value;

fn field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {value}"))
}

#[test]
fn history_first_records_what_is_on_disk_then_every_change_with_its_actor() {
    let s = Sandbox::new();
    let dir = s.copy_real_memory("stockerly", &s.root().join("mem"));
    let dir_arg = dir.to_str().expect("utf-8 path");

    let listed = s.json(&["--memory-dir", dir_arg, "history"]);
    let versions = listed.as_array().expect("array");
    assert_eq!(versions.len(), 8, "index + 7 topic files: {listed}");
    for version in versions {
        assert_has_keys(version, &["version", "file", "actor", "time", "summary"]);
        assert_eq!(field(version, "actor"), "external");
        assert_eq!(field(version, "summary"), "created");
        let time = field(version, "time");
        assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
    }
    assert_eq!(
        s.json(&["--memory-dir", dir_arg, "history"]),
        listed,
        "listing again records nothing new"
    );

    // A change through Engram, then one behind its back (Claude Code, an editor).
    let out = s.run(&[
        "--memory-dir",
        dir_arg,
        "remember",
        "--type",
        "user",
        "--name",
        "Adrian profile",
        "--description",
        "Investor in MXN and USD",
        "--file",
        "user_adrian.md",
    ]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    fs::write(dir.join("user_adrian.md"), "rewritten by Claude\n").expect("external write");

    let adrian = s.json(&["--memory-dir", dir_arg, "history", "user_adrian.md"]);
    let rows: Vec<(&str, &str)> = adrian
        .as_array()
        .expect("array")
        .iter()
        .map(|v| (field(v, "actor"), field(v, "file")))
        .collect();
    assert_eq!(
        rows,
        [
            ("external", "user_adrian.md"),
            ("user", "user_adrian.md"),
            ("external", "user_adrian.md"),
        ],
        "newest first: Claude's rewrite, the remember, the original"
    );
    let ids: Vec<&str> = adrian
        .as_array()
        .expect("array")
        .iter()
        .map(|v| field(v, "version"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");

    // Named as `show` takes it; a rewrite without frontmatter is still found by its file.
    assert_eq!(
        s.json(&["--memory-dir", dir_arg, "history", "User_Adrian"]),
        adrian
    );
    assert_eq!(
        s.json(&["--memory-dir", dir_arg, "history", "Brutal honesty mandate"])[0]["file"],
        "feedback_brutal_honesty.md"
    );
    let index = s.json(&["--memory-dir", dir_arg, "history", "MEMORY.md"]);
    assert_eq!(field(&index[0], "file"), "MEMORY.md", "{index}");

    let text = stdout(&s.run(&["--memory-dir", dir_arg, "history", "user_adrian.md"]));
    assert!(text.starts_with("VERSION"), "{text}");
    assert!(
        text.contains(&format!("{}  ", ids[0])) && text.contains("external"),
        "{text}"
    );
}

#[test]
fn revert_restores_a_version_as_a_new_one_and_loses_nothing() {
    let s = Sandbox::new();
    let dir = s.copy_real_memory("claude-code-2.1.330", &s.root().join("mem"));
    let dir_arg = dir.to_str().expect("utf-8 path");
    let original = fs::read_to_string(dir.join("deploy-freeze.md")).expect("read");

    let baseline = s.json(&["--memory-dir", dir_arg, "history", "deploy-freeze.md"]);
    let first = field(&baseline[0], "version").to_owned();
    fs::write(dir.join("deploy-freeze.md"), "Deploy whenever.\n").expect("Claude rewrites");

    let reverted = s.json(&["revert", &first]);
    assert_has_keys(&reverted, &["version", "file", "actor", "time", "summary"]);
    assert_eq!(field(&reverted, "actor"), "user");
    assert_eq!(field(&reverted, "file"), "deploy-freeze.md");
    assert_eq!(field(&reverted, "summary"), format!("reverted to {first}"));
    assert_eq!(
        fs::read_to_string(dir.join("deploy-freeze.md")).expect("read"),
        original
    );

    // The rewrite Engram never saw was recorded before being replaced: it can come back.
    let history = s.json(&["--memory-dir", dir_arg, "history", "deploy-freeze.md"]);
    let rewrite = history
        .as_array()
        .expect("array")
        .iter()
        .find(|v| field(v, "actor") == "external" && field(v, "summary") != "created")
        .expect("the external rewrite is in history");
    let out = s.run(&["revert", field(rewrite, "version")]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("reverted deploy-freeze.md to v"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.join("deploy-freeze.md")).expect("read"),
        "Deploy whenever.\n"
    );

    // A file deleted before Engram ever saw it has no history to bring it back from...
    fs::remove_file(dir.join("prefers-tabs-default.md")).expect("rm");
    let history = s.json(&[
        "--memory-dir",
        dir_arg,
        "history",
        "prefers-tabs-default.md",
    ]);
    assert_eq!(history, Value::Array(Vec::new()));
    // ...but once the dir was listed, a deletion is recorded, and reverting to the version
    // before it recreates the file; reverting to the deletion deletes it again.
    s.json(&["--memory-dir", dir_arg, "history"]);
    fs::remove_file(dir.join("hook-test.md")).expect("rm");
    let history = s.json(&["--memory-dir", dir_arg, "history", "hook-test.md"]);
    assert_eq!(field(&history[0], "summary"), "deleted");
    let created = field(&history[1], "version").to_owned();
    let deleted = field(&history[0], "version").to_owned();
    s.json(&["revert", &created]);
    assert!(dir.join("hook-test.md").is_file(), "recreated");
    s.json(&["revert", &deleted]);
    assert!(!dir.join("hook-test.md").exists(), "deleted again");

    // A deleted memory is named as one on disk: its file without `.md`, or the name it had.
    assert_eq!(
        s.json(&["--memory-dir", dir_arg, "history", "Hook-Test"]),
        { s.json(&["--memory-dir", dir_arg, "history", "hook-test.md"]) }
    );
    let tabs =
        "---\nname: prefers-tabs\ndescription: Tabs over spaces\ntype: feedback\n---\n\nTabs.\n";
    fs::write(dir.join("prefers-tabs-default.md"), tabs).expect("write");
    s.json(&["--memory-dir", dir_arg, "history"]);
    fs::remove_file(dir.join("prefers-tabs-default.md")).expect("rm");
    let by_name = s.json(&["--memory-dir", dir_arg, "history", "Prefers-Tabs"]);
    assert_eq!(field(&by_name[0], "file"), "prefers-tabs-default.md");
    assert_eq!(field(&by_name[0], "summary"), "deleted");
    // A name no memory, on disk or deleted, ever had is still refused.
    let out = s.run(&["--memory-dir", dir_arg, "history", "tabs"]);
    assert_eq!(exit_code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no memory \"tabs\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_versions_and_files_exit_two_naming_them() {
    let s = Sandbox::new();
    let dir = s.copy_real_memory("claude-code-2.1.330", &s.root().join("mem"));
    let dir_arg = dir.to_str().expect("utf-8 path");

    let out = s.run(&["revert", "v424242"]);
    assert_eq!(exit_code(&out), 2);
    assert_eq!(stderr(&out), "engram: v424242: not found\n");

    let out = s.run(&["--memory-dir", dir_arg, "history", "../outside.md"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("outside"), "{}", stderr(&out));

    let out = s.run(&["revert"]);
    assert_eq!(exit_code(&out), 2, "a missing VERSION is a usage error");
}
