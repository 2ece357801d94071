use super::*;
use serde_json::{json, Value};
use std::io::Write;

const REAL: &str = "../../../shared/fixtures/real/claude-home/projects/-path-to-Demo";

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL).join(name)
}

fn write(lines: &[Vec<u8>]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("test transcript");
    let path = dir
        .path()
        .join("11111111-2222-3333-4444-555555555555.jsonl");
    let mut file = File::create(&path).expect("test transcript");
    for line in lines {
        file.write_all(line).expect("test transcript");
        file.write_all(b"\n").expect("test transcript");
    }
    (dir, path)
}

fn entry(value: Value) -> Vec<u8> {
    serde_json::to_vec(&value).expect("test transcript")
}

fn user(uuid: &str, parent: Option<&str>, text: &str) -> Vec<u8> {
    entry(
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": false,
        "sessionId": "s1", "cwd": "/work/app", "timestamp": format!("2026-01-01T00:00:{:02}Z", uuid.len()),
        "message": {"role": "user", "content": text}}),
    )
}

fn assistant(uuid: &str, parent: &str, id: &str, block: Value) -> Vec<u8> {
    entry(
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "isSidechain": false,
        "sessionId": "s1", "timestamp": "2026-01-01T00:01:00Z",
        "message": {"id": id, "role": "assistant", "content": [block],
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100}}}),
    )
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn messages(transcript: &Transcript) -> Vec<Message> {
    transcript
        .messages()
        .expect("test transcript")
        .map(|m| m.expect("message"))
        .collect()
}

fn uuids(transcript: &Transcript) -> Vec<String> {
    messages(transcript).into_iter().map(|m| m.uuid).collect()
}

#[test]
fn streamed_records_sharing_a_message_id_are_one_message() {
    let (_dir, path) = write(&[
        user("u1", None, "list the files"),
        assistant("a1", "u1", "msg_1", text("Let me look.")),
        assistant(
            "a2",
            "a1",
            "msg_1",
            json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "*"}}),
        ),
        entry(
            json!({"type": "user", "uuid": "r1", "parentUuid": "a2", "sessionId": "s1",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.rs\nb.rs"}]}}),
        ),
        assistant("a3", "r1", "msg_2", text("Two files.")),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    let all = messages(&transcript);
    assert_eq!(all.len(), 4);
    assert_eq!(
        all[1].uuid, "a2",
        "a merged message is known by its last record"
    );
    assert_eq!(all[1].text, "Let me look.");
    assert_eq!(all[1].tool_uses[0].name, "Glob");
    assert_eq!(all[2].tool_results[0].text, "a.rs\nb.rs");
    assert_eq!(transcript.message_count(), 4);
    assert_eq!(transcript.title().as_deref(), Some("list the files"));
    assert_eq!(all[3].usage.expect("test transcript").context_tokens(), 115);
}

#[test]
fn a_compact_boundary_starts_a_segment_and_the_walk_continues_through_its_logical_parent() {
    let (_dir, path) = write(&[
        user("u1", None, "first"),
        assistant("a1", "u1", "m1", text("one")),
        entry(
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "cb", "parentUuid": null,
            "logicalParentUuid": "a1", "content": "Conversation compacted", "timestamp": "2026-01-01T01:00:00Z",
            "compactMetadata": {"trigger": "auto", "preTokens": 150000}}),
        ),
        entry(
            json!({"type": "user", "uuid": "s", "parentUuid": "cb", "isCompactSummary": true,
            "message": {"role": "user", "content": "Summary of the conversation so far"}}),
        ),
        user("u2", Some("s"), "second"),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["u1", "a1", "cb", "s", "u2"]);
    let all = messages(&transcript);
    assert_eq!(
        all.iter().map(|m| m.segment).collect::<Vec<_>>(),
        [0, 0, 1, 1, 1]
    );
    assert!(all[3].is_compact_summary);
    assert_eq!(transcript.compactions.len(), 1);
    assert_eq!(transcript.compactions[0].uuid, "cb");
    assert_eq!(transcript.compactions[0].pre_tokens, Some(150000));
    assert_eq!(transcript.compactions[0].trigger.as_deref(), Some("auto"));
}

#[test]
fn a_rewind_leaves_a_branch_and_the_chain_follows_the_latest_leaf() {
    let (_dir, path) = write(&[
        user("u1", None, "start"),
        assistant("a1", "u1", "m1", text("ok")),
        user("u2", Some("a1"), "try A"),
        assistant("a2", "u2", "m2", text("did A")),
        // Rewound to a1: the user asked something else.
        user("u3", Some("a1"), "try B instead"),
        assistant("a3", "u3", "m3", text("did B")),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["u1", "a1", "u3", "a3"]);
    assert_eq!(transcript.branches.len(), 1);
    let branch = &transcript.branches[0];
    assert_eq!(branch.fork_uuid.as_deref(), Some("a1"));
    assert_eq!(branch.leaf_uuid, "a2");
    assert_eq!(branch.messages, 2);
}

#[test]
fn unknown_types_are_counted_and_bad_lines_reported_with_their_number() {
    let mut truncated = user("u3", Some("u2"), "cut");
    truncated.truncate(truncated.len() / 2);
    let mut bad_utf8 = user("u2", Some("u1"), "caf");
    let at = bad_utf8
        .windows(3)
        .position(|w| w == b"caf")
        .expect("test transcript")
        + 3;
    bad_utf8.insert(at, 0xC3);
    let (_dir, path) = write(&[
        b"\xEF\xBB\xBF"
            .iter()
            .copied()
            .chain(user("u1", None, "hello"))
            .collect(),
        entry(json!({"type": "brand-new-thing", "x": 1})),
        entry(json!({"type": "brand-new-thing", "x": 2})),
        b"".to_vec(),
        b"not json".to_vec(),
        bad_utf8,
        entry(json!({"type": "queue-operation", "operation": "enqueue"})),
        truncated,
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["u1", "u2"]);
    assert_eq!(messages(&transcript)[1].text, "caf\u{FFFD}");
    assert_eq!(transcript.unknown_types.get("brand-new-thing"), Some(&2));
    assert!(!transcript.unknown_types.contains_key("queue-operation"));
    let lines: Vec<usize> = transcript.skipped_lines.iter().map(|s| s.line).collect();
    assert_eq!(lines, [5, 8]);
    assert!(transcript.skipped_lines[1].reason.contains("truncated"));
}

#[test]
fn a_missing_parent_is_bridged_by_source_tool_assistant_uuid() {
    let (_dir, path) = write(&[
        user("u1", None, "go"),
        assistant(
            "a1",
            "u1",
            "m1",
            json!({"type": "tool_use", "id": "t", "name": "Bash", "input": {}}),
        ),
        entry(
            json!({"type": "user", "uuid": "r", "parentUuid": "gone", "sourceToolAssistantUUID": "a1",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "done"}]}]}}),
        ),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["u1", "a1", "r"]);
    assert_eq!(transcript.broken_links, 0);
}

#[test]
fn titles_prefer_custom_then_ai_then_summary_then_first_prompt() {
    let base = [
        entry(json!({"type": "summary", "summary": "A summary", "leafUuid": "a1"})),
        user("u1", None, "<command-message>x</command-message>\n<command-name>/review</command-name>\n<command-args>the PR</command-args>"),
        assistant("a1", "u1", "m", text("ok")),
    ];
    let (_d, path) = write(&base);
    let t = Transcript::open(&path).expect("test transcript");
    assert_eq!(t.title().as_deref(), Some("A summary"));
    assert_eq!(t.first_prompt().as_deref(), Some("/review the PR"));
    let mut more = base.to_vec();
    more.push(entry(json!({"type": "ai-title", "aiTitle": "AI title"})));
    let (_d, path) = write(&more);
    assert_eq!(
        Transcript::open(&path)
            .expect("test transcript")
            .title()
            .as_deref(),
        Some("AI title")
    );
    more.push(entry(
        json!({"type": "custom-title", "customTitle": "Mine"}),
    ));
    let (_d, path) = write(&more);
    assert_eq!(
        Transcript::open(&path)
            .expect("test transcript")
            .title()
            .as_deref(),
        Some("Mine")
    );
}

#[test]
fn a_parent_cycle_is_cut_at_the_first_repeated_uuid_and_noted() {
    // Every entry has a child, so there is no leaf: the walk starts from the last message.
    let (_dir, path) = write(&[
        user("x", Some("z"), "one"),
        user("y", Some("x"), "two"),
        user("z", Some("y"), "three"),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["x", "y", "z"]);
    assert_eq!(
        transcript.parent_cycle,
        Some(1),
        "x's parent z was walked already"
    );

    let (_dir, path) = write(&[user("s", Some("s"), "its own parent")]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["s"]);
    assert_eq!(transcript.parent_cycle, Some(1));

    // A leaf whose ancestry runs into a cycle: the chain is the leaf and the cycle, once.
    let (_dir, path) = write(&[
        user("x", Some("y"), "a"),
        user("y", Some("x"), "b"),
        user("leaf", Some("y"), "c"),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["x", "y", "leaf"]);
    assert_eq!(transcript.parent_cycle, Some(1));
    let page = transcript.page(0, 10).expect("page");
    assert_eq!((page.total, page.parent_cycle), (3, Some(1)));

    // A sound chain has no note.
    let (_dir, path) = write(&[user("u1", None, "a"), user("u2", Some("u1"), "b")]);
    assert_eq!(
        Transcript::open(&path)
            .expect("test transcript")
            .parent_cycle,
        None
    );
}

#[test]
fn a_subagent_file_is_a_sidechain_and_subagents_are_found_with_their_meta() {
    let t = Transcript::open(&real("agent-test-hash-123.jsonl")).expect("test transcript");
    assert!(t.sidechain);
    assert!(t.message_count() >= 1);

    let (dir, path) = write(&[user("u1", None, "hi")]);
    let sub = dir
        .path()
        .join("11111111-2222-3333-4444-555555555555/subagents");
    std::fs::create_dir_all(&sub).expect("test transcript");
    std::fs::write(sub.join("agent-abc.jsonl"), user("s1", None, "sub")).expect("test transcript");
    std::fs::write(
        sub.join("agent-abc.meta.json"),
        r#"{"agentType":"Explore"}"#,
    )
    .expect("test transcript");
    let subagents = Transcript::open(&path)
        .expect("test transcript")
        .subagents();
    assert_eq!(subagents.len(), 1);
    assert_eq!(subagents[0].agent_id, "abc");
    assert_eq!(
        subagents[0].meta.as_ref().expect("test transcript")["agentType"],
        "Explore"
    );
}

#[test]
fn the_genuine_transcripts_read_whole() {
    for name in [
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    ] {
        let t = Transcript::open(&real(name)).expect("test transcript");
        assert!(t.skipped_lines.is_empty(), "{name}: {:?}", t.skipped_lines);
        assert!(t.unknown_types.is_empty(), "{name}: {:?}", t.unknown_types);
        assert_eq!(t.broken_links, 0, "{name}");
        let all = messages(&t);
        assert!(all.len() > 10, "{name}: {}", all.len());
        assert!(
            all[0].parent_uuid.is_none(),
            "{name}: the chain starts at a root"
        );
        assert!(all.iter().any(|m| !m.tool_uses.is_empty()), "{name}");
        assert!(t.title().is_some());
        assert_eq!(
            t.session_id.as_deref(),
            Some(name.trim_end_matches(".jsonl"))
        );
    }
    let t = Transcript::open(&real("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
        .expect("test transcript");
    assert_eq!(
        t.title().as_deref(),
        Some("Empty Repo Setup: CLAUDE.md Foundation Created")
    );
    assert_eq!(
        t.first_prompt().as_deref(),
        Some("/orchestrator create TODO app by Next.js")
    );
}

#[test]
fn every_page_is_the_slice_of_the_whole_conversation() {
    let (_dir, compacted) = write(&[
        user("u1", None, "first"),
        assistant("a1", "u1", "m1", text("one")),
        assistant("a2", "a1", "m1", text(" and more")),
        entry(
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "cb", "parentUuid": null,
            "logicalParentUuid": "a2", "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 150000}}),
        ),
        entry(
            json!({"type": "user", "uuid": "s", "parentUuid": "cb", "isCompactSummary": true,
            "message": {"role": "user", "content": "Summary of the conversation so far"}}),
        ),
        user("u2", Some("s"), "second"),
        assistant("a3", "u2", "m2", text("two")),
    ]);
    let mut paths = vec![compacted];
    paths.extend(
        [
            "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
            "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        ]
        .map(real),
    );
    for path in paths {
        let transcript = Transcript::open(&path).expect("test transcript");
        let whole = messages(&transcript);
        let all: Vec<String> = whole
            .iter()
            .map(|m| format!("{} {} {} {}", m.uuid, m.segment, m.role, m.text))
            .collect();
        let markers = whole.iter().filter(|m| m.role == "system").count();
        assert_eq!(
            transcript.message_count(),
            all.len() - markers,
            "{}: compaction markers are not messages said",
            path.display()
        );
        for offset in 0..=all.len() + 1 {
            for limit in [1, 3, 50] {
                let page = transcript.page(offset, limit).expect("page");
                assert_eq!(page.total, all.len());
                let shown: Vec<String> = page
                    .messages
                    .iter()
                    .map(|m| format!("{} {} {} {}", m.uuid, m.segment, m.role, m.text))
                    .collect();
                let end = (offset + limit).min(all.len());
                assert_eq!(
                    shown,
                    all[offset.min(all.len())..end],
                    "{} at {offset}+{limit}",
                    path.display()
                );
            }
        }
    }
}

/// `line` (JSON text) with `raw` spliced in for the placeholder string `"@"`: for bytes
/// `serde_json` never writes (lone surrogates, deep nesting, malformed values).
fn with_raw(line: Vec<u8>, raw: &str) -> Vec<u8> {
    String::from_utf8(line)
        .expect("test transcript")
        .replacen("\"@\"", raw, 1)
        .into_bytes()
}

#[test]
fn a_lone_surrogate_is_read_as_claude_code_reads_it_and_the_rest_of_the_entry_kept() {
    // Node writes `\ud83d` alone for an emoji cut in half; JSON.parse reads it.
    let (_dir, path) = write(&[
        user("u1", None, "show me the logo"),
        with_raw(
            assistant("a1", "u1", "m1", text("@")),
            r#""here it is \ud83d and more""#,
        ),
        with_raw(
            assistant(
                "a2",
                "a1",
                "m1",
                json!({"type": "tool_use", "id": "t", "name": "Write", "input": {"file_path": "@"}}),
            ),
            r#""/tmp/\udc00logo.txt""#,
        ),
        with_raw(
            entry(
                json!({"type": "user", "uuid": "u2", "parentUuid": "a2", "cwd": "@",
                "message": {"role": "user", "content": "thanks"}}),
            ),
            r#""/work/\ud83dapp""#,
        ),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(transcript.skipped_lines, [], "nothing skipped");
    let all = messages(&transcript);
    assert_eq!(
        all.iter().map(|m| m.uuid.as_str()).collect::<Vec<_>>(),
        ["u1", "a2", "u2"]
    );
    assert_eq!(all[1].text, "here it is \u{FFFD} and more");
    assert_eq!(
        all[1].tool_uses[0].file_path(),
        Some("/tmp/\u{FFFD}logo.txt")
    );
    assert_eq!(all[2].text, "thanks");
}

#[test]
fn a_line_nested_too_deep_is_skipped_with_its_number_and_the_file_still_reads() {
    let deep = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    // The entry itself and its `toolUseResult` are two levels: the array adds the rest.
    let at_limit = with_raw(
        entry(
            json!({"type": "user", "uuid": "u2", "parentUuid": "a1", "toolUseResult": "@",
            "message": {"role": "user", "content": "at the limit"}}),
        ),
        &deep(MAX_NESTING - 1),
    );
    let too_deep = with_raw(
        entry(
            json!({"type": "user", "uuid": "u3", "parentUuid": "u2", "toolUseResult": "@",
            "message": {"role": "user", "content": "too deep"}}),
        ),
        &deep(MAX_NESTING),
    );
    let (_dir, path) = write(&[
        user("u1", None, "start"),
        assistant("a1", "u1", "m1", text("ok")),
        at_limit,
        too_deep,
        user("u4", Some("u2"), "after"),
    ]);
    let transcript = Transcript::open(&path).expect("test transcript");
    assert_eq!(uuids(&transcript), ["u1", "a1", "u2", "u4"]);
    assert_eq!(
        transcript.skipped_lines,
        [SkippedLine {
            line: 4,
            reason: format!("nested more than {MAX_NESTING} levels deep")
        }]
    );
}

/// Lines the fast scanner once let through although no JSON reader accepts them: the chain held
/// them and reading their message failed the whole file ("changed since it was read").
#[test]
fn a_line_the_chain_accepts_is_always_read_again() {
    let hostile = [
        r#""a	tab""#,                   // a raw control character inside a string
        r#""bad \x escape""#,           // an escape JSON does not have
        "nope",                         // not a literal
        "1e400",                        // a number no f64 holds
        "01",                           // a leading zero
        "[1,]",                         // a trailing comma
        "[1 2]",                        // a missing comma
        r#"{"k" 1}"#,                   // a missing colon
        "[}",                           // mismatched brackets
        "-",                            // half a number
        r#""\ud83d""#,                  // a lone surrogate: read, repaired
        r#"{"\u0041":"\ud83d\ude00"}"#, // an escaped key and a surrogate pair: read
    ];
    for raw in hostile {
        let (_dir, path) = write(&[
            user("u1", None, "start"),
            with_raw(
                entry(
                    json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1",
                    "message": {"id": "m", "role": "assistant",
                        "content": [{"type": "text", "text": "reply"}, {"type": "tool_use", "id": "t", "name": "X", "input": {"v": "@"}}]}}),
                ),
                raw,
            ),
            user("u2", Some("a1"), "end"),
        ]);
        let transcript = Transcript::open(&path).expect("test transcript");
        let read: Result<Vec<Message>> = transcript.messages().expect("open").collect();
        let read = read.unwrap_or_else(|e| panic!("{raw}: the chain's messages read: {e}"));
        let skipped = !transcript.skipped_lines.is_empty();
        assert_eq!(
            skipped,
            decode_line(
                std::fs::read(&path)
                    .expect("read")
                    .split(|&b| b == b'\n')
                    .nth(1)
                    .expect("line 2")
            )
            .is_err(),
            "{raw}: skipped exactly when the decoder refuses it"
        );
        assert_eq!(read.len(), if skipped { 1 } else { 3 }, "{raw}");
    }
}
