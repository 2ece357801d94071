use super::*;
use crate::environment::Environment;
use std::io::Write;

const REAL: &str = "../../../shared/fixtures/real/claude-home/projects/-path-to-Demo";

fn engine(root: &Path) -> Engine {
    Engine::builder(Environment::empty())
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build()
}

fn append(path: &Path, lines: &[Value]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    for line in lines {
        writeln!(file, "{line}").expect("append");
    }
}

fn user(uuid: &str, text: &str) -> Value {
    serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": null, "sessionId": "s1",
        "timestamp": "2026-11-20T10:00:00Z", "message": {"role": "user", "content": text}})
}

#[test]
fn finds_prompts_tool_names_and_paths_in_the_genuine_transcripts() {
    let tmp = tempfile::tempdir().expect("tmp");
    let projects = tmp.path().join(".claude/projects/-path-to-Demo");
    std::fs::create_dir_all(&projects).expect("dir");
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL))
        .expect("fixtures")
        .flatten()
    {
        std::fs::copy(entry.path(), projects.join(entry.file_name())).expect("copy");
    }
    let engine = engine(tmp.path());
    let hits = engine
        .search_sessions("TodoWrite", None, 5)
        .expect("search")
        .hits;
    assert!(!hits.is_empty(), "a tool name is searchable");
    let hits = engine
        .search_sessions("Next.js TODO app", Some("-path-to-Demo"), 5)
        .expect("search")
        .hits;
    assert!(!hits.is_empty());
    assert_eq!(hits[0].project, "-path-to-Demo");
    assert!(
        hits[0].snippet.to_lowercase().contains("todo"),
        "{:?}",
        hits[0]
    );
    assert!(!hits[0].highlights.is_empty());
    // Syntax a person types by accident never fails.
    for odd in ["(unclosed", "AND", "\"quote", "-", "a:b:c", "*", ""] {
        engine.search_sessions(odd, None, 5).expect(odd);
    }
    assert!(engine
        .search_sessions("", None, 5)
        .expect("empty")
        .hits
        .is_empty());
    assert!(engine
        .search_sessions("TodoWrite", Some("-other"), 5)
        .expect("filter")
        .hits
        .is_empty());
}

#[test]
fn appends_are_indexed_incrementally_and_a_rewrite_starts_over() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join(".claude/projects/-p");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("s1.jsonl");
    append(&path, &[user("u1", "we deploy the shop with flyctl")]);
    let engine = engine(tmp.path());
    assert_eq!(
        engine
            .search_sessions("flyctl", None, 5)
            .expect("search")
            .hits
            .len(),
        1
    );
    assert!(engine
        .search_sessions("kubernetes", None, 5)
        .expect("search")
        .hits
        .is_empty());
    append(&path, &[user("u2", "now move it to kubernetes")]);
    let hits = engine
        .search_sessions("kubernetes", None, 5)
        .expect("search")
        .hits;
    assert_eq!(hits.len(), 1, "the append is found");
    assert_eq!(hits[0].uuid, "u2");
    assert_eq!(
        engine
            .search_sessions("flyctl", None, 5)
            .expect("search")
            .hits
            .len(),
        1,
        "not indexed twice"
    );
    // A partial last line waits until it is complete.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    let line = user("u3", "terraform plan output").to_string();
    file.write_all(&line.as_bytes()[..line.len() / 2])
        .expect("half");
    assert!(engine
        .search_sessions("terraform", None, 5)
        .expect("search")
        .hits
        .is_empty());
    file.write_all(&line.as_bytes()[line.len() / 2..])
        .expect("rest");
    file.write_all(b"\n").expect("newline");
    assert_eq!(
        engine
            .search_sessions("terraform", None, 5)
            .expect("search")
            .hits
            .len(),
        1
    );
    // Rewritten shorter: the old entries go.
    std::fs::write(&path, format!("{}\n", user("v1", "only this now"))).expect("rewrite");
    assert!(engine
        .search_sessions("kubernetes", None, 5)
        .expect("search")
        .hits
        .is_empty());
    assert_eq!(
        engine
            .search_sessions("only", None, 5)
            .expect("search")
            .hits
            .len(),
        1
    );
    // Deleted: forgotten.
    std::fs::remove_file(&path).expect("rm");
    assert!(engine
        .search_sessions("only", None, 5)
        .expect("search")
        .hits
        .is_empty());
}
