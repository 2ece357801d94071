//! The `engram` binary end to end: real process, real files in temp dirs (copies of the shared
//! real-world fixtures or trees built here), a hand-made environment (`env_clear`), and the JSON
//! shapes checked key by key, since `--json` output is a product interface.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{assert_has_keys, exit_code, keys, stderr, stdout, Sandbox};
use memory_engine::testing::fixtures::{copy_tree, write_file, REAL_FIXTURES};
use serde_json::Value;

/// Claude Code's directory name for a path (the Node form; these test paths are short).
fn sanitized(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// where

#[test]
fn where_reports_the_default_dir_with_its_shape() {
    let s = Sandbox::in_project("my-project");
    let v = s.json(&["where"]);
    assert_eq!(
        keys(&v),
        [
            "gitRoot",
            "memoryDir",
            "settingsFile",
            "source",
            "transcriptsDir",
            "warnings"
        ]
    );
    let dir = s.claude().join("projects").join(sanitized(&s.project()));
    assert_eq!(v["source"], "default");
    assert_eq!(
        v["memoryDir"],
        dir.join("memory").to_string_lossy().as_ref()
    );
    assert_eq!(v["transcriptsDir"], dir.to_string_lossy().as_ref());
    assert_eq!(v["gitRoot"], Value::Null);
}

#[test]
fn where_follows_claude_config_dir_and_the_claude_dir_flag() {
    let s = Sandbox::in_project("my-project");
    let cfg = s.root().join("cfg");
    let out = s
        .command(&["where", "--json"])
        .env("CLAUDE_CONFIG_DIR", &cfg)
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["memoryDir"]
            .as_str()
            .expect("str")
            .starts_with(&*cfg.to_string_lossy()),
        "{v}"
    );
    let flag = s.root().join("flag");
    let v = s.json(&["--claude-dir", &flag.to_string_lossy(), "where"]);
    assert!(v["memoryDir"]
        .as_str()
        .expect("str")
        .starts_with(&*flag.to_string_lossy()));
}

/// Claude Code 2.1.330 moves the memory dir by the project's or the local settings only in a
/// workspace the person trusted; the environment's override always.
#[test]
fn where_honours_project_and_local_settings_only_in_a_trusted_workspace_and_env_always() {
    let s = Sandbox::in_project("my-project");
    write_file(
        &s.project().join(".claude/settings.json"),
        r#"{"autoMemoryDirectory": "~/.ssh"}"#,
    );
    write_file(
        &s.project().join(".claude/settings.local.json"),
        r#"{"autoMemoryDirectory": "~/notes/memory"}"#,
    );
    let v = s.json(&["where"]);
    assert_eq!(
        v["source"], "default",
        "a settings file in a workspace nobody trusted must not move memory"
    );

    s.trust_project();
    let v = s.json(&["where"]);
    assert_eq!(v["source"], "settings");
    assert_eq!(
        v["memoryDir"],
        s.home().join("notes/memory").to_string_lossy().as_ref()
    );
    assert!(
        v["settingsFile"]
            .as_str()
            .is_some_and(|f| f.ends_with("settings.local.json")),
        "{v}"
    );

    let out = s
        .command(&["where", "--json"])
        .env("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "/mnt/space/memory")
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["source"], "env");
    assert_eq!(v["memoryDir"], "/mnt/space/memory");

    let v = s.json(&["where", "--memory-dir", "/some/dir"]);
    assert_eq!(v["source"], "flag");
    assert_eq!(v["memoryDir"], "/some/dir");
}

#[test]
fn where_shares_one_memory_dir_across_git_worktrees() {
    let s = Sandbox::in_project("my-project");
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", s.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    if git(&s.project(), &["init", "-q"]).is_none() {
        eprintln!("git unavailable; the engine's hand-built worktree tests cover this");
        return;
    }
    git(
        &s.project(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "i",
        ],
    )
    .expect("commit");
    let wt = s.root().join("wt");
    git(
        &s.project(),
        &["worktree", "add", "-q", &wt.to_string_lossy()],
    )
    .expect("worktree");
    let main = s.json(&["where"]);
    let other = s.json(&["where", "--project", &wt.to_string_lossy()]);
    assert_eq!(main["memoryDir"], other["memoryDir"]);
    assert_eq!(other["gitRoot"], s.project().to_string_lossy().as_ref());
    assert_ne!(main["transcriptsDir"], other["transcriptsDir"]);
}

#[test]
fn a_malformed_settings_file_is_a_warning_naming_file_and_line() {
    let s = Sandbox::in_project("my-project");
    let settings = s.claude().join("settings.json");
    write_file(&settings, "{\n  \"autoMemoryEnabled\": true,\n  ]\n}\n");
    let out = s.run(&["where"]);
    assert_eq!(
        exit_code(&out),
        0,
        "a broken settings file must not stop engram"
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!("engram: warning: {}:3:", settings.display())),
        "{err}"
    );
    assert!(stdout(&out).contains("memory dir"), "{}", stdout(&out));
}

#[test]
fn memory_commands_use_the_dir_resolved_from_the_project() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("claude-code-2.1.330");
    let elsewhere = s.root().join("elsewhere");
    fs::create_dir_all(&elsewhere).expect("mkdir");
    write_file(
        &s.project().join(".claude/settings.local.json"),
        &format!(r#"{{"autoMemoryDirectory": "{}"}}"#, mem.display()),
    );
    s.trust_project();
    // Run from another directory so only `--project` can lead to the memory dir.
    let out = s
        .command(&[
            "scan",
            "--json",
            "--project",
            &s.project().to_string_lossy(),
        ])
        .current_dir(&elsewhere)
        .output()
        .expect("run");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let files: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|i| i["file"].as_str().expect("file"))
        .collect();
    assert!(files.contains(&"deploy-freeze.md"), "{files:?}");

    let v = s.json(&["where", "--memory-dir", "../mem/x/.."]);
    assert_eq!(
        v["memoryDir"],
        s.root().join("work/mem").to_string_lossy().as_ref(),
        "a relative --memory-dir is taken from the current directory, dots resolved"
    );
}

// ---------------------------------------------------------------------------------------------
// projects

#[test]
fn projects_lists_the_real_claude_home() {
    let s = Sandbox::in_project("my-project");
    copy_tree(&Path::new(REAL_FIXTURES).join("claude-home"), &s.claude());
    let v = s.json(&["projects"]);
    let list = v.as_array().expect("array");
    assert_eq!(list.len(), 1);
    let p = &list[0];
    assert_eq!(
        keys(p),
        [
            "lastActivity",
            "memoryDir",
            "memoryFiles",
            "name",
            "path",
            "sessions"
        ]
    );
    assert_eq!(p["name"], "-path-to-Demo");
    assert_eq!(p["path"], "/path/to/Demo");
    assert_eq!(p["sessions"], 3);
    assert_eq!(p["memoryFiles"], 0);
    let iso = p["lastActivity"].as_str().expect("iso time");
    assert!(
        iso.len() == 24 && iso.ends_with('Z') && &iso[10..11] == "T",
        "{iso}"
    );

    let out = s.run(&["projects"]);
    assert!(stdout(&out).contains("/path/to/Demo"), "{}", stdout(&out));
}

// ---------------------------------------------------------------------------------------------
// scan, index, show

#[test]
fn scan_lists_real_memories_newest_first() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let v = s.json(&["scan", "--memory-dir", &mem.to_string_lossy()]);
    let list = v.as_array().expect("array");
    assert_eq!(list.len(), 7, "every topic file, not MEMORY.md");
    for item in list {
        assert_eq!(
            keys(item),
            [
                "age",
                "days",
                "description",
                "file",
                "mtime",
                "name",
                "type"
            ]
        );
    }
    let mtimes: Vec<&str> = list
        .iter()
        .map(|i| i["mtime"].as_str().expect("mtime"))
        .collect();
    let mut sorted = mtimes.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(mtimes, sorted, "newest first");
    let adrian = list
        .iter()
        .find(|i| i["file"] == "user_adrian.md")
        .expect("user_adrian.md listed");
    assert_eq!(adrian["type"], "user");
    assert_eq!(adrian["name"], "Adrian profile");
    assert_eq!(adrian["age"], "today");
    assert_eq!(adrian["days"], 0);

    let out = s.run(&["scan", "--memory-dir", &mem.to_string_lossy()]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("user_adrian.md"))
        .expect("a row for user_adrian.md");
    assert!(line.starts_with("user "), "type badge first: {line}");
    let header = text.lines().next().expect("header");
    assert_eq!(
        header.find("FILE"),
        line.find("user_adrian.md"),
        "columns are aligned:\n{text}"
    );
}

#[test]
fn scan_caps_at_200_unless_all() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("many");
    for i in 0..205 {
        write_file(
            &mem.join(format!("m{i:03}.md")),
            &format!("---\nname: m{i}\ndescription: d\ntype: project\n---\nbody\n"),
        );
    }
    let dir = mem.to_string_lossy();
    let capped = s.json(&["scan", "--memory-dir", &dir]);
    assert_eq!(capped.as_array().expect("array").len(), 200);
    let all = s.json(&["scan", "--all", "--memory-dir", &dir]);
    assert_eq!(all.as_array().expect("array").len(), 205);
}

#[test]
fn scan_reports_a_missing_type_as_null() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("m");
    write_file(&mem.join("bare.md"), "no frontmatter here\n");
    write_file(
        &mem.join("odd.md"),
        "---\nname: odd\ntype: nonsense\n---\nx\n",
    );
    let v = s.json(&["scan", "--memory-dir", &mem.to_string_lossy()]);
    for item in v.as_array().expect("array") {
        assert_eq!(item["type"], Value::Null, "{item}");
    }
}

#[test]
fn index_shape_and_entries_of_a_real_index() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let v = s.json(&["index", "--memory-dir", &mem.to_string_lossy()]);
    assert_has_keys(
        &v,
        &[
            "content",
            "lines",
            "bytes",
            "truncated",
            "warning",
            "entries",
        ],
    );
    assert_eq!(v["truncated"], false);
    assert_eq!(v["warning"], Value::Null);
    let entries = v["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 7);
    let first = &entries[0];
    assert_has_keys(first, &["title", "file", "line"]);
    assert_eq!(first["title"], "Adrian profile");
    assert_eq!(first["file"], "user_adrian.md");
    assert_eq!(first["line"], 6);
    assert!(v["content"]
        .as_str()
        .expect("content")
        .starts_with("# Stockerly Memory Index"));
}

#[test]
fn index_warning_is_visible_when_truncated() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("big");
    let index: String = (0..250)
        .map(|i| format!("- [t{i}](f{i}.md) — hook\n"))
        .collect();
    write_file(&mem.join("MEMORY.md"), &index);
    let dir = mem.to_string_lossy();
    let v = s.json(&["index", "--memory-dir", &dir]);
    assert_eq!(v["truncated"], true);
    let warning = v["warning"].as_str().expect("a warning").to_string();
    assert!(v["content"]
        .as_str()
        .expect("content")
        .contains(warning.trim()));
    let out = s.run(&["index", "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 0);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("warning: {}", warning.trim())),
        "{text}"
    );
    assert!(text.contains("250 lines of 200"), "{text}");
}

#[test]
fn show_returns_one_memory_and_errors_name_the_file() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let dir = mem.to_string_lossy();
    let v = s.json(&["show", "feedback_brutal_honesty.md", "--memory-dir", &dir]);
    assert_has_keys(
        &v,
        &[
            "file",
            "name",
            "description",
            "type",
            "body",
            "mtime",
            "age",
            "caveat",
        ],
    );
    assert_eq!(v["type"], "feedback");
    assert_eq!(v["caveat"], Value::Null, "fresh memories carry no caveat");
    assert!(v["body"]
        .as_str()
        .expect("body")
        .contains("**Rule:** Brutal honesty"));
    assert!(!v["body"].as_str().expect("body").contains("type: feedback"));

    let out = s.run(&["show", "nope.md", "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.starts_with("engram: ") && err.contains("nope.md"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");

    let out = s.run(&["show", "../../etc/passwd", "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
}

// ---------------------------------------------------------------------------------------------
// lint

#[test]
fn lint_exits_one_on_errors_and_groups_by_file() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let dir = mem.to_string_lossy();
    let clean = s.run(&["lint", "--json", "--memory-dir", &dir]);
    let report: Value = serde_json::from_slice(&clean.stdout).expect("json");
    assert_eq!(keys(&report), ["findings"]);
    let has_error = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["severity"] == "error");
    assert_eq!(exit_code(&clean), i32::from(has_error), "{report}");

    // A pointer to a file that does not exist is an error.
    let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
    write_file(
        &mem.join("MEMORY.md"),
        &format!("{index}- [Gone](gone_missing.md) — deleted\n"),
    );
    let broken = s.run(&["lint", "--json", "--memory-dir", &dir]);
    assert_eq!(exit_code(&broken), 1, "{}", stdout(&broken));
    let report: Value = serde_json::from_slice(&broken.stdout).expect("json");
    let finding = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| {
            f["severity"] == "error"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("gone_missing.md"))
        })
        .unwrap_or_else(|| panic!("a finding for the broken pointer: {report}"));
    assert_eq!(
        keys(finding),
        ["file", "line", "message", "rule", "severity"]
    );
    assert_eq!(finding["file"], "MEMORY.md");
    let line = finding["line"].as_u64().expect("line number");
    assert_eq!(line as usize, index.lines().count() + 1);

    let human = s.run(&["lint", "--memory-dir", &dir]);
    assert_eq!(exit_code(&human), 1);
    let text = stdout(&human);
    assert!(text.contains(&format!("MEMORY.md:{line}")), "{text}");
    assert!(
        text.lines().any(|l| l == "MEMORY.md"),
        "grouped under the file: {text}"
    );
}

// ---------------------------------------------------------------------------------------------
// remember, forget, log

#[test]
fn remember_creates_then_updates_and_indexes() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy();
    let args = [
        "remember",
        "--type",
        "feedback",
        "--name",
        "Use tabs",
        "--description",
        "The user wants tabs in Go files",
        "--file",
        "feedback_tabs.md",
        "--body",
        "Tabs, always.",
        "--memory-dir",
        &dir,
    ];
    let v = s.json(&args);
    assert_has_keys(&v, &["action", "file"]);
    assert_eq!(v["action"], "created");
    assert_eq!(v["file"], "feedback_tabs.md");
    let text = fs::read_to_string(mem.join("feedback_tabs.md")).expect("written");
    assert!(
        text.contains("type: feedback") && text.contains("Tabs, always."),
        "{text}"
    );
    let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
    assert!(index.contains("(feedback_tabs.md)"), "{index}");

    let v = s.json(&args);
    assert_eq!(v["action"], "updated");
    assert_eq!(v["fileChanged"], false);
    assert_eq!(v["replacedDescription"], Value::Null);
    let out = s.run(&args);
    assert!(
        stdout(&out).starts_with("unchanged feedback_tabs.md (it already says this)"),
        "{}",
        stdout(&out)
    );

    // The same name with another description: said, with the way back.
    let mut args = args.to_vec();
    args[6] = "Tabs in Go and in Makefiles";
    let out = s.run(&args);
    let text = stdout(&out);
    assert!(
        text.starts_with("updated feedback_tabs.md\n")
            && text.contains("its description was: The user wants tabs in Go files")
            && text.contains("engram history feedback_tabs.md"),
        "{text}"
    );
    args[6] = "Tabs everywhere";
    let v = s.json(&args);
    assert_eq!(v["replacedDescription"], "Tabs in Go and in Makefiles");
}

#[test]
fn remember_reads_the_body_from_stdin() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("mem");
    let out = s.run_with_stdin(
        &[
            "remember",
            "--type",
            "project",
            "--name",
            "Freeze",
            "--description",
            "Deploy freeze until Monday",
            "--file",
            "project_freeze.md",
            "--json",
            "--memory-dir",
            &mem.to_string_lossy(),
        ],
        "No deploys until Monday.\n",
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let text = fs::read_to_string(mem.join("project_freeze.md")).expect("written");
    assert!(text.contains("No deploys until Monday."), "{text}");
}

#[test]
fn remember_rejects_bad_input_with_exit_two() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy();
    let base = |ty: &'static str, desc: &'static str, file: &'static str| {
        vec![
            "remember",
            "--type",
            ty,
            "--name",
            "n",
            "--description",
            desc,
            "--file",
            file,
            "--body",
            "b",
        ]
    };
    for (args, why) in [
        (base("opinion", "d", "a.md"), "unknown type"),
        (base("user", "", "a.md"), "empty description"),
        (
            base("user", "d", "../escape.md"),
            "file escaping the memory dir",
        ),
    ] {
        let out = s.run(&[&args[..], &["--memory-dir", &dir]].concat());
        assert_eq!(exit_code(&out), 2, "{why}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("engram: "),
            "{why}: {}",
            stderr(&out)
        );
    }
    assert!(!s.root().join("escape.md").exists());
}

#[test]
fn forget_removes_the_file_and_its_index_line() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let dir = mem.to_string_lossy();
    let v = s.json(&["forget", "project_vision.md", "--memory-dir", &dir]);
    assert_eq!(v["file"], "project_vision.md");
    assert_eq!(v["indexLineRemoved"], true);
    assert!(!mem.join("project_vision.md").exists());
    let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
    assert!(!index.contains("project_vision.md"), "{index}");
    let out = s.run(&["forget", "project_vision.md", "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 2, "forgetting twice is an error");
}

#[test]
fn show_and_forget_take_a_memory_by_its_name_as_well_as_its_file() {
    let s = Sandbox::in_project("my-project");
    let mem = s.real_memory("stockerly");
    let dir = mem.to_string_lossy();
    // The file without `.md`, the frontmatter name, the title in MEMORY.md: case aside.
    for given in [
        "feedback_brutal_honesty",
        "brutal honesty mandate",
        "Brutal Honesty Mandate",
    ] {
        let v = s.json(&["show", given, "--memory-dir", &dir]);
        assert_eq!(v["file"], "feedback_brutal_honesty.md", "{given}");
    }
    // A part of a name is not a name: refused, naming what it is part of, nothing deleted.
    let out = s.run(&["forget", "vision", "--memory-dir", &dir]);
    assert_eq!(exit_code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("no memory \"vision\"") && err.contains("did you mean project_vision.md?"),
        "{err}"
    );
    assert!(mem.join("project_vision.md").exists());
    // Its title in MEMORY.md ("Vision & audience"), not its name ("Stockerly vision & …").
    let v = s.json(&["forget", "vision & audience", "--memory-dir", &dir]);
    assert_eq!(v["file"], "project_vision.md");
    assert_eq!(v["indexLineRemoved"], true);
    assert!(!mem.join("project_vision.md").exists());
}

#[test]
fn log_appends_to_todays_file() {
    let s = Sandbox::in_project("my-project");
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy();
    let v = s.json(&["log", "shipped", "the", "fix", "--memory-dir", &dir]);
    assert_eq!(keys(&v), ["file"]);
    let file = v["file"].as_str().expect("file");
    let parts: Vec<&str> = file.split('/').collect();
    assert_eq!(parts.len(), 4, "logs/YYYY/MM/YYYY-MM-DD.md: {file}");
    assert_eq!(parts[0], "logs");
    assert_eq!(
        parts[3],
        format!("{}-{}-{}.md", parts[1], parts[2], &parts[3][8..10])
    );
    let text = fs::read_to_string(mem.join(file)).expect("log written");
    assert!(text.contains("shipped the fix"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// usage

#[test]
fn usage_errors_exit_two() {
    let s = Sandbox::in_project("my-project");
    for args in [&["frobnicate"][..], &["show"], &["scan", "--bogus"], &[]] {
        let out = s.run(args);
        assert_eq!(exit_code(&out), 2, "engram {args:?}: {}", stderr(&out));
    }
    assert_eq!(exit_code(&s.run(&["--help"])), 0);
    assert_eq!(exit_code(&s.run(&["--version"])), 0);
}
