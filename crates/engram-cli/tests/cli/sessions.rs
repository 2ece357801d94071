//! `engram sessions`, `engram transcript` and `engram sessions search` on the genuine transcripts
//! and on synthetic ones.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use crate::support::{assert_has_keys, exit_code, stderr, Sandbox};
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

/// Runs `command` to its end and returns its exit status and peak RSS in KiB: the child's own
/// high-water mark (`VmHWM` of `/proc/<pid>/status`), read until it exits. (`wait4`'s
/// `ru_maxrss` will not do: on Linux a spawned child starts from its parent's peak, and this
/// test binary's other tests make that large.) The last reading can miss only allocations of the
/// final few milliseconds; the chain is held until the output is written, so the peak is seen.
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
        let line = if i % 2 == 0 {
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
