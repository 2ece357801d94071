//! The memdir operations on copies of real Claude Code memory dirs (`shared/fixtures/real/memory`):
//! nothing Engram does without a change may alter a byte of them.

use std::fs;
use std::path::Path;

use memory_engine::testing::fixtures::{copy_tree, real_memory};
use memory_engine::{Engine, Environment, MemoryType, RememberRequest};

/// A copy of a real memory dir in a fresh temp dir.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_tree(&real_memory(name), tmp.path());
    tmp
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("list")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read(&path).expect("read"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn remembering_every_real_memory_unchanged_leaves_every_byte_alone() {
    for project in ["stockerly", "claude-code-2.1.330"] {
        let tmp = copy_fixture(project);
        let before = snapshot(tmp.path());
        let engine = Engine::builder(Environment::empty()).build();
        let dir = engine.memory_dir(tmp.path());
        let headers = dir.scan(None).expect("scan");
        assert!(headers.len() >= 3, "{project}: {headers:?}");
        for header in headers {
            let memory = dir.show(&header.file).expect("show");
            let outcome = dir
                .remember(RememberRequest {
                    memory_type: memory.header.memory_type.expect("real files are typed"),
                    name: memory.header.name.clone().expect("named"),
                    description: memory.header.description.clone().expect("described"),
                    file: Some(header.file.clone()),
                    body: memory.body.clone(),
                })
                .expect("remember");
            assert!(!outcome.file_changed, "{project}/{}", header.file);
        }
        // Only the un-indexed 2.1.330 test files may gain an index line; every topic file and
        // every existing index line stays byte-identical.
        let after = snapshot(tmp.path());
        for ((name, old), (_, new)) in before.iter().zip(&after) {
            if name == "MEMORY.md" {
                assert!(new.starts_with(old), "{project}: existing index bytes kept");
            } else {
                assert_eq!(old, new, "{project}/{name}");
            }
        }
    }
}

#[test]
fn updating_a_real_file_touches_only_the_changed_line() {
    let tmp = copy_fixture("stockerly");
    let engine = Engine::builder(Environment::empty()).build();
    let dir = engine.memory_dir(tmp.path());
    let original = fs::read_to_string(tmp.path().join("user_adrian.md")).expect("read");
    let old_index = fs::read_to_string(tmp.path().join("MEMORY.md")).expect("read");
    let memory = dir.show("user_adrian.md").expect("show");
    let outcome = dir
        .remember(RememberRequest {
            memory_type: MemoryType::User,
            name: "Adrian profile".into(),
            description: "Mexican engineer; MXN+USD investor; wants brutal honesty".into(),
            file: None,
            body: memory.body,
        })
        .expect("remember");
    assert_eq!(outcome.file, "user_adrian.md", "found by name");
    let updated = fs::read_to_string(tmp.path().join("user_adrian.md")).expect("read");
    let changed: Vec<_> = original
        .lines()
        .zip(updated.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(
        changed[0].1,
        "description: Mexican engineer; MXN+USD investor; wants brutal honesty"
    );
    assert_eq!(original.lines().count(), updated.lines().count());
    let index = fs::read_to_string(tmp.path().join("MEMORY.md")).expect("read");
    assert_eq!(
        index,
        old_index.replace(
            "- [Adrian profile](user_adrian.md) — MX investor, MXN+USD portfolio, demands brutal honesty",
            "- [Adrian profile](user_adrian.md) — Mexican engineer; MXN+USD investor; wants brutal honesty"
        )
    );
}

#[test]
fn real_indexes_load_as_claude_code_loads_them() {
    let engine = Engine::builder(Environment::empty()).build();
    let stockerly = engine
        .memory_dir(real_memory("stockerly"))
        .load_index()
        .expect("load");
    let raw = fs::read_to_string(real_memory("stockerly").join("MEMORY.md")).expect("read");
    assert_eq!(stockerly.content, raw.trim());
    assert_eq!(stockerly.entries.len(), 7);
    assert!(!stockerly.truncated);
    let v330 = engine
        .memory_dir(real_memory("claude-code-2.1.330"))
        .load_index()
        .expect("load");
    assert_eq!(
        v330.content,
        "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays MEMIDX-777"
    );
    assert_eq!(v330.entries[0].file, "deploy-freeze.md");
}
