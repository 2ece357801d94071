//! `engram sessions`, `engram transcript` and `engram sessions search` on the genuine transcripts
//! and on synthetic ones.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use crate::support::{assert_has_keys, exit_code, stderr, stdout, Sandbox};
use serde_json::{json, Value};

const REAL: &str = "../../../shared/fixtures/real/claude-home/projects/-path-to-Demo";
const GENUINE: &str = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";

/// A sandbox whose Claude home holds the genuine transcripts under `-path-to-Demo`.
fn with_genuine() -> (Sandbox, PathBuf) {
    let s = Sandbox::in_project("sessions").with_engram_home();
    let dir = s.home().join(".claude/projects/-path-to-Demo");
    fs::create_dir_all(&dir).expect("dir");
    for entry in fs::read_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(REAL))
        .expect("fixtures")
        .flatten()
    {
        fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
    }
    (s, dir)
}

#[test]
fn sessions_lists_every_transcript_in_the_documented_shape() {
    let (s, _) = with_genuine();
    let listed = s.json(&["sessions", "--all-projects"]);
    let rows = listed.as_array().expect("array");
    assert_eq!(rows.len(), 5, "{listed}");
    for row in rows {
        assert_has_keys(
            row,
            &[
                "id",
                "project",
                "title",
                "messages",
                "firstPrompt",
                "lastActivity",
                "sidechain",
                "file",
                "bytes",
            ],
        );
    }
    let genuine = rows.iter().find(|r| r["id"] == GENUINE).expect("listed");
    assert_eq!(
        genuine["title"],
        "Empty Repo Setup: CLAUDE.md Foundation Created"
    );
    assert_eq!(
        genuine["firstPrompt"],
        "/orchestrator create TODO app by Next.js"
    );
    assert_eq!(genuine["sidechain"], false);
    let agents: Vec<&Value> = rows.iter().filter(|r| r["sidechain"] == true).collect();
    assert_eq!(agents.len(), 2, "the subagent files are marked");
    // The current project (the sandbox's) has none.
    assert_eq!(s.json(&["sessions"]), json!([]));
}

#[test]
fn transcript_prints_the_chain_with_skipped_lines_and_unknown_types() {
    let (s, dir) = with_genuine();
    let full = s.json(&["transcript", GENUINE]);
    assert_has_keys(
        &full,
        &[
            "sessionId",
            "title",
            "messages",
            "compactions",
            "branches",
            "skippedLines",
            "unknownTypes",
        ],
    );
    let messages = full["messages"].as_array().expect("messages");
    assert!(messages.len() > 20);
    for message in messages {
        assert_has_keys(
            message,
            &[
                "uuid",
                "parentUuid",
                "role",
                "timestamp",
                "text",
                "toolUses",
                "isCompactSummary",
            ],
        );
    }
    assert_eq!(full["skippedLines"], json!([]));

    // A damaged copy: an unknown type, a malformed line, a truncated last line.
    let damaged = dir.join("damaged.jsonl");
    fs::copy(
        dir.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
        &damaged,
    )
    .expect("copy");
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(&damaged)
        .expect("open");
    writeln!(file, "{{\"type\":\"hologram\",\"x\":1}}").expect("unknown");
    writeln!(file, "not json").expect("malformed");
    write!(file, "{{\"type\":\"user\",\"uuid\":").expect("truncated");
    let out = s.run(&["transcript", &damaged.to_string_lossy(), "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["unknownTypes"], json!({"hologram": 1}));
    let skipped: Vec<u64> = v["skippedLines"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|l| l["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(skipped, [31, 32], "{v}");
    assert!(stderr(&out).contains(":31: skipped"), "{}", stderr(&out));
    let out = s.run(&["transcript", "no-such-session"]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("no session"), "{}", stderr(&out));
}

/// A session is named by the start of its id, as `engram sessions` shows it and as a git commit is
/// named by the start of its hash; a start two sessions share is refused, naming both.
#[test]
fn a_session_is_found_by_the_start_of_its_id_and_an_ambiguous_start_names_the_candidates() {
    let (s, dir) = with_genuine();
    let full = s.json(&["transcript", GENUINE]);
    let by_start = s.json(&["transcript", &GENUINE[..8]]);
    assert_eq!(by_start, full);
    let upper = s.json(&["transcript", &GENUINE[..8].to_uppercase()]);
    assert_eq!(upper["sessionId"], full["sessionId"]);
    // A subagent's transcript by the start of its id, as listed (`agent-…`) or without `agent-`.
    for start in ["agent-test-hash-1", "test-hash-1"] {
        let agent = s.run(&["transcript", start, "--json"]);
        assert_eq!(exit_code(&agent), 0, "{start}: {}", stderr(&agent));
        let shown: Value = serde_json::from_slice(&agent.stdout).expect("json");
        assert!(
            shown["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("/agent-test-hash-123.jsonl")),
            "{start}: {shown}"
        );
    }

    // A second session whose id starts the same way.
    let twin = format!("{}-0000-4000-8000-000000000000", &GENUINE[..8]);
    fs::copy(
        dir.join(format!("{GENUINE}.jsonl")),
        dir.join(format!("{twin}.jsonl")),
    )
    .expect("copy");
    let out = s.run(&["transcript", &GENUINE[..8]]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("is ambiguous: 2 sessions start with it")
            && err.contains(GENUINE)
            && err.contains(&twin),
        "{err}"
    );
    // A longer start tells them apart; `extract` and `session-memory` look up the same way.
    assert_eq!(s.json(&["transcript", &GENUINE[..10]]), full);
    let memory = s.run(&["session-memory", &GENUINE[..10], "--json"]);
    assert_eq!(exit_code(&memory), 0, "{}", stderr(&memory));
    // Too short a start to mean one session is no session.
    let out = s.run(&["transcript", &GENUINE[..3]]);
    assert_eq!(exit_code(&out), 2);
    assert!(stderr(&out).contains("no session"), "{}", stderr(&out));
}

#[test]
fn search_finds_prompts_and_picks_up_appends() {
    let (s, dir) = with_genuine();
    let hits = s.json(&["sessions", "search", "TODO app", "--all-projects"]);
    let rows = hits.as_array().expect("array");
    assert!(!rows.is_empty());
    for row in rows {
        assert_has_keys(
            row,
            &[
                "sessionId",
                "project",
                "uuid",
                "role",
                "timestamp",
                "snippet",
            ],
        );
    }
    assert_eq!(
        s.json(&["sessions", "search", "zanzibar", "--all-projects"]),
        json!([])
    );
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(dir.join(format!("{GENUINE}.jsonl")))
        .expect("open");
    let line = json!({"type": "user", "uuid": "z1", "parentUuid": null, "sessionId": GENUINE,
        "timestamp": "2026-11-23T10:00:00Z", "message": {"role": "user", "content": "ship it to zanzibar"}});
    writeln!(file, "{line}").expect("append");
    let found = s.json(&["sessions", "search", "zanzibar", "--all-projects"]);
    assert_eq!(found[0]["uuid"], "z1", "{found}");
    assert!(
        s.engram_home().join("session-index").is_dir(),
        "the index is in Engram's data dir"
    );
}

#[test]
fn session_memory_shows_what_is_due_and_updates_offline() {
    let (s, dir) = with_genuine();
    let before = s.json(&["session-memory", GENUINE]);
    assert_has_keys(
        &before,
        &[
            "sessionId",
            "path",
            "exists",
            "content",
            "sections",
            "tokens",
            "due",
        ],
    );
    assert_eq!(before["exists"], false);
    assert_eq!(
        before["due"], "init",
        "the genuine session is past 10,000 tokens"
    );
    let text = stdout(&s.run(&["session-memory", GENUINE]));
    assert!(
        text.contains(&format!(
            "an update is due (the session is past 10,000 tokens with no summary): engram \
             session-memory {GENUINE} --update"
        )),
        "{text}"
    );
    let after = s.json(&["session-memory", GENUINE, "--update", "--offline"]);
    assert_eq!(after["exists"], true);
    assert_eq!(after["updatedBy"], "offline");
    assert_eq!(after["sections"].as_array().expect("sections").len(), 10);
    assert_eq!(after["due"], Value::Null, "just updated");
    let summary = dir.join(GENUINE).join("session-memory/summary.md");
    let text = fs::read_to_string(&summary).expect("summary.md");
    assert!(
        text.starts_with("# Session Title\n_A short and distinctive"),
        "{text}"
    );
    // The worker of the Stop hook finds nothing due right after.
    let again = s.json(&["session-memory", GENUINE]);
    assert_eq!(again["content"], after["content"]);
}

/// Linux only (platforms row 23): the peak is read from `/proc`.
/// Runs `command` to its end and returns its exit status and peak RSS in KiB: the child's own
/// high-water mark (`VmHWM` of `/proc/<pid>/status`), read until it exits. (`wait4`'s
/// `ru_maxrss` will not do: on Linux a spawned child starts from its parent's peak, and this
/// test binary's other tests make that large.) The last reading can miss only allocations of the
/// final few milliseconds; the chain is held until the output is written, so the peak is seen.
#[cfg(target_os = "linux")]
fn peak_rss_kib(mut command: std::process::Command) -> (i32, u64) {
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Some(hwm) = fs::read_to_string(&status_file).ok().and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            return (status.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_200_mb_transcript_is_read_in_bounded_memory() {
    let s = Sandbox::in_project("big").with_engram_home();
    let path = s.root().join("big.jsonl");
    let mut file = std::io::BufWriter::new(fs::File::create(&path).expect("create"));
    let text = "The build failed because the linker ran out of memory; retrying with fewer jobs. "
        .repeat(24);
    let mut written = 0usize;
    let mut i = 0u64;
    while written < 200 << 20 {
        let uuid = format!("{i:08x}-0000-4000-8000-{i:012x}");
        let parent = if i == 0 {
            Value::Null
        } else {
            json!(format!("{:08x}-0000-4000-8000-{:012x}", i - 1, i - 1))
        };
        let line = if i.is_multiple_of(2) {
            json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "big", "timestamp": "2026-11-23T10:00:00Z",
                "message": {"role": "user", "content": text}})
        } else {
            json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "big", "timestamp": "2026-11-23T10:00:01Z",
                "message": {"id": format!("msg_{i}"), "role": "assistant", "content": [{"type": "text", "text": text},
                    {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "cargo build -j1"}}]}})
        }
        .to_string();
        file.write_all(line.as_bytes()).expect("write");
        file.write_all(b"\n").expect("newline");
        written += line.len() + 1;
        i += 1;
    }
    file.flush().expect("flush");
    drop(file);
    let (code, kib) = peak_rss_kib(s.command(&["transcript", &path.to_string_lossy(), "--json"]));
    assert_eq!(code, 0);
    eprintln!(
        "engram transcript --json of {} MB ({i} entries): peak RSS {} MB",
        written >> 20,
        kib / 1024
    );
    assert!(
        kib < 64 * 1024,
        "peak RSS {kib} KiB for a 200 MB transcript"
    );
}

const HOSTILE: &str = "dddddddd-0000-4000-8000-000000000004";

/// A session of the sandbox's project whose lines are `lines` (JSON text, written as is).
fn project_session(s: &Sandbox, id: &str, lines: &[String]) -> PathBuf {
    let cwd = fs::canonicalize(s.project()).expect("real project");
    let dir = s
        .home()
        .join(".claude/projects")
        .join(memory_engine::paths::sanitize_path(&cwd.to_string_lossy()));
    fs::create_dir_all(&dir).expect("projects");
    let path = dir.join(format!("{id}.jsonl"));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(&path, text).expect("transcript");
    path
}

/// `entry` as JSON text with the placeholder string `"@"` replaced by `raw`: bytes serde never
/// writes (a lone surrogate escape, nesting past serde_json's limit).
fn with_raw(entry: Value, raw: &str) -> String {
    entry.to_string().replacen("\"@\"", raw, 1)
}

#[test]
fn a_lone_surrogate_is_read_and_a_line_nested_too_deep_skipped_by_every_session_command() {
    let s = Sandbox::in_project("hostile").with_engram_home();
    let cwd = fs::canonicalize(s.project()).expect("real project");
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    project_session(
        &s,
        HOSTILE,
        &[
            json!({"type": "user", "uuid": "u1", "parentUuid": null, "cwd": cwd, "sessionId": HOSTILE,
                "timestamp": "2026-11-21T09:00:00Z",
                "message": {"role": "user", "content": "Remember that the staging database is reset every Monday."}})
            .to_string(),
            // Node writes `\ud83d` alone for an emoji cut in half.
            with_raw(
                json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "cwd": cwd, "sessionId": HOSTILE,
                    "timestamp": "2026-11-21T09:00:05Z",
                    "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "@"}]}}),
                r#""Noted \ud83d the zebra rule""#,
            ),
            with_raw(
                json!({"type": "user", "uuid": "u2", "parentUuid": "a1", "cwd": cwd, "sessionId": HOSTILE,
                    "timestamp": "2026-11-21T09:00:09Z", "toolUseResult": "@",
                    "message": {"role": "user", "content": "deep"}}),
                &nested,
            ),
            json!({"type": "user", "uuid": "u3", "parentUuid": "a1", "cwd": cwd, "sessionId": HOSTILE,
                "timestamp": "2026-11-21T09:00:20Z",
                "message": {"role": "user", "content": "and the giraffe ships on Fridays"}})
            .to_string(),
        ],
    );
    let skipped = json!([{"line": 3, "reason": "nested more than 127 levels deep"}]);
    let warned = ":3: skipped: nested more than 127 levels deep";

    let out = s.run(&["transcript", HOSTILE, "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let transcript: Value = serde_json::from_slice(&out.stdout).expect("json");
    let texts: Vec<&str> = transcript["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["text"].as_str().expect("text"))
        .collect();
    assert_eq!(
        texts,
        [
            "Remember that the staging database is reset every Monday.",
            "Noted \u{FFFD} the zebra rule",
            "and the giraffe ships on Fridays"
        ],
        "the lone surrogate is read as JSON.parse reads it"
    );
    assert_eq!(transcript["skippedLines"], skipped);
    assert!(stderr(&out).contains(warned), "{}", stderr(&out));

    let out = s.run(&["session-memory", HOSTILE, "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let view: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(view["skippedLines"], skipped);
    assert!(stderr(&out).contains(warned), "{}", stderr(&out));
    let out = s.run(&["session-memory", HOSTILE, "--update", "--offline", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));

    let out = s.run(&["extract", HOSTILE, "--stage", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let set: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(set["status"], "pending", "{set}");
    assert_eq!(set["skippedLines"], skipped);
    assert!(stderr(&out).contains(warned), "{}", stderr(&out));

    // Search indexes the line with the lone surrogate, and names the one it cannot.
    let out = s.run(&["sessions", "search", "zebra", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let hits: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(hits[0]["uuid"], "a1", "{hits}");
    let not_searchable = ":3: not searchable: nested more than 127 levels deep";
    assert!(stderr(&out).contains(not_searchable), "{}", stderr(&out));
    let again = s.run(&["sessions", "search", "giraffe"]);
    assert_eq!(exit_code(&again), 0, "{}", stderr(&again));
    assert!(
        stderr(&again).contains(not_searchable),
        "said with every search, not only when first indexed: {}",
        stderr(&again)
    );
}

/// The uuids `engram sessions search QUERY --all-projects --json` finds (all of them, sorted:
/// equal scores rank by where a document sits in the index), and what it said on stderr.
fn search_uuids(s: &Sandbox, query: &str) -> (Vec<String>, String) {
    let out = s.run(&[
        "sessions",
        "search",
        query,
        "--all-projects",
        "--limit",
        "1000",
        "--json",
    ]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let hits: Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut uuids: Vec<String> = hits
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["uuid"].as_str().expect("uuid").to_owned())
        .collect();
    assert!(uuids.len() < 1000);
    uuids.sort();
    (uuids, stderr(&out))
}

#[test]
fn a_corrupted_session_index_is_built_again_and_the_search_says_so() {
    let (s, _) = with_genuine();
    let (expected, said) = search_uuids(&s, "TODO app");
    assert!(!expected.is_empty());
    assert!(!said.contains("built again"), "{said}");
    let index = s.engram_home().join("session-index");
    let pristine = s.root().join("pristine-index");
    memory_engine::testing::fixtures::copy_tree(&index, &pristine);
    let tantivy = index.join("tantivy");
    let segment_files = |ext: &str| -> Vec<PathBuf> {
        fs::read_dir(&tantivy)
            .expect("index")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect()
    };
    let truncate = |ext: &str| {
        let files = segment_files(ext);
        assert!(!files.is_empty(), "{ext} files");
        for file in files {
            fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .expect("open")
                .set_len(4)
                .expect("truncate");
        }
    };
    let corruptions: [(&str, &dyn Fn()); 6] = [
        ("an empty meta.json", &|| {
            fs::write(tantivy.join("meta.json"), "").expect("empty")
        }),
        ("a missing store file", &|| {
            for file in segment_files("store") {
                fs::remove_file(file).expect("rm");
            }
        }),
        // Both made tantivy panic (exit 101).
        ("truncated .idx files", &|| truncate("idx")),
        ("truncated .fast files", &|| truncate("fast")),
        ("a manifest that is not JSON", &|| {
            fs::write(index.join("manifest.json"), "{garbage").expect("garbage")
        }),
        ("the index dir replaced by a file", &|| {
            fs::remove_dir_all(&tantivy).expect("rm");
            fs::write(&tantivy, "not a dir").expect("file");
        }),
    ];
    for (what, corrupt) in corruptions {
        fs::remove_dir_all(&index).expect("reset");
        memory_engine::testing::fixtures::copy_tree(&pristine, &index);
        corrupt();
        let (found, said) = search_uuids(&s, "TODO app");
        assert_eq!(
            found, expected,
            "{what}: the same hits from the rebuilt index"
        );
        assert!(
            said.contains("the session index was unusable and was built again"),
            "{what}: {said}"
        );
        let (found, said) = search_uuids(&s, "TODO app");
        assert_eq!(found, expected, "{what}");
        assert!(!said.contains("built again"), "{what}: once: {said}");
    }

    // A lost manifest is not a rebuild, but the files are not indexed twice either.
    fs::remove_file(index.join("manifest.json")).expect("rm");
    let (found, _) = search_uuids(&s, "TODO app");
    assert_eq!(found, expected, "no duplicate hits");
}

#[test]
fn a_parent_cycle_shows_the_chain_and_says_where_it_was_cut() {
    let s = Sandbox::in_project("cycle").with_engram_home();
    let cwd = fs::canonicalize(s.project()).expect("real project");
    let entry = |uuid: &str, parent: &str, text: &str| {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "cwd": cwd, "sessionId": HOSTILE,
            "timestamp": "2026-11-21T09:00:00Z", "message": {"role": "user", "content": text}})
        .to_string()
    };
    project_session(
        &s,
        HOSTILE,
        &[
            entry("x", "z", "one"),
            entry("y", "x", "two"),
            entry("z", "y", "three"),
        ],
    );
    let out = s.run(&["transcript", HOSTILE, "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let transcript: Value = serde_json::from_slice(&out.stdout).expect("json");
    let uuids: Vec<&str> = transcript["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["uuid"].as_str().expect("uuid"))
        .collect();
    assert_eq!(uuids, ["x", "y", "z"]);
    assert_eq!(transcript["parentCycle"], 1);
    assert!(
        stderr(&out).contains(":1: parentUuid leads back into the conversation (a cycle)"),
        "{}",
        stderr(&out)
    );
}
