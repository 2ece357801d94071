use super::*;
use crate::environment::Environment;
use serde_json::json;
use std::fs;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .status()
        .expect("git");
    assert!(ok.success(), "git {args:?}");
}

/// A Claude home with a project seen at `cwd` (a transcript names it) and its memory dir.
fn seen(engine: &Engine, cwd: &Path, files: &[(&str, &str)]) -> PathBuf {
    let name = crate::paths::sanitize_path(&cwd.to_string_lossy());
    let project = engine.claude_home().join("projects").join(&name);
    fs::create_dir_all(project.join("memory")).expect("memory");
    let line = json!({"type": "user", "uuid": "u", "parentUuid": null, "cwd": cwd, "sessionId": "s",
        "message": {"role": "user", "content": "hi"}});
    fs::write(
        project.join("11111111-1111-4111-8111-111111111111.jsonl"),
        format!("{line}\n"),
    )
    .expect("transcript");
    for (file, text) in files {
        fs::write(project.join("memory").join(file), text).expect("file");
    }
    project.join("memory")
}

const DEPLOY: &str = "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nFly.io\n";

#[test]
fn worktree_keyed_moved_and_subdirectory_stores_are_found_and_merged_for_review() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = fs::canonicalize(tmp.path()).expect("real");
    let engine = Engine::builder(Environment::empty().with("HOME", root.to_string_lossy()))
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build();
    // A repo and a linked worktree; memory was once keyed on the worktree's path.
    let repo = root.join("repo");
    fs::create_dir_all(&repo).expect("repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    );
    let worktree = root.join("repo-feature");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            &worktree.to_string_lossy(),
            "-b",
            "feature",
        ],
    );
    let old = seen(
        &engine,
        &worktree,
        &[
            (
                "MEMORY.md",
                "- [Deploy](project_deploy.md) — how we deploy\n",
            ),
            ("project_deploy.md", DEPLOY),
        ],
    );
    // A project that moved away.
    let gone = seen(
        &engine,
        &root.join("gone-project"),
        &[("notes.md", "---\nname: Notes\n---\nx\n")],
    );
    // Agent memory under a sub-directory of the repo.
    let sub = repo.join("web");
    fs::create_dir_all(sub.join(".claude/agent-memory/reviewer")).expect("agent");
    fs::write(
        sub.join(".claude/agent-memory/reviewer/style.md"),
        "---\nname: Style\n---\nterse\n",
    )
    .expect("agent file");
    seen(&engine, &sub, &[]);

    let stranded = engine.stranded_stores().expect("stranded");
    let kinds: Vec<(StrandedKind, &Path)> =
        stranded.iter().map(|s| (s.kind, s.dir.as_path())).collect();
    assert!(
        kinds.contains(&(StrandedKind::OldWorktreeKey, old.as_path())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(StrandedKind::MovedProject, gone.as_path())),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|(k, d)| *k == StrandedKind::AgentMemoryInSubdirectory
                && d.ends_with("web/.claude/agent-memory/reviewer")),
        "{kinds:?}"
    );
    let worktree_store = stranded
        .iter()
        .find(|s| s.kind == StrandedKind::OldWorktreeKey)
        .expect("worktree");
    assert_eq!(worktree_store.files, ["project_deploy.md"]);
    let live = worktree_store.live.clone().expect("the live store");
    assert_eq!(
        live,
        engine
            .resolve_memory_dir(&repo)
            .expect("resolve")
            .memory_dir,
        "the git root's"
    );

    // Merge: staged, nothing written until accepted; then the file and its index line land.
    let staged = engine
        .stage_stranded_merge(&old, &live, "repo")
        .expect("stage")
        .expect("something to merge");
    assert!(!live.join("project_deploy.md").exists());
    engine
        .apply_staged(&staged.id, &[], true, Some(&live))
        .expect("accept");
    assert_eq!(
        fs::read_to_string(live.join("project_deploy.md")).expect("merged"),
        DEPLOY
    );
    assert!(fs::read_to_string(live.join("MEMORY.md"))
        .expect("index")
        .contains("(project_deploy.md)"));
    assert!(
        old.join("project_deploy.md").exists(),
        "the stranded store is kept"
    );
    assert!(
        engine
            .stage_stranded_merge(&old, &live, "repo")
            .expect("again")
            .is_none(),
        "nothing left to merge"
    );
}

/// Platforms row 13: merging a stranded store would create a file Windows cannot hold in the
/// live store: refused whole, naming the file and the rule; nothing is staged.
#[test]
fn a_stranded_file_windows_cannot_hold_is_not_merged_and_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = fs::canonicalize(tmp.path()).expect("real");
    let engine = Engine::builder(Environment::empty().with("HOME", root.to_string_lossy()))
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build();
    let old = root.join("old");
    let live = root.join("live");
    fs::create_dir_all(&old).expect("old");
    fs::create_dir_all(&live).expect("live");
    fs::write(old.join("project_deploy.md"), DEPLOY).expect("deploy");
    fs::write(old.join("aux.md"), DEPLOY).expect("aux");
    let refused = engine
        .stage_stranded_merge(&old, &live, "repo")
        .expect_err("aux.md is a Windows device name");
    let text = refused.to_string();
    assert!(
        text.contains("\"aux.md\"") && text.contains("Windows device name"),
        "{text}"
    );
    assert!(
        engine.staged_change_sets().expect("list").is_empty(),
        "nothing staged"
    );
    fs::rename(old.join("aux.md"), old.join("project_aux.md")).expect("rename");
    assert!(engine
        .stage_stranded_merge(&old, &live, "repo")
        .expect("stage")
        .is_some());
}

/// Platforms row 12: a stranded file that differs only in case from a live one (or from another
/// stranded file) would be a second file here and one file on macOS and Windows: refused whole,
/// naming both; nothing is staged.
#[test]
fn a_stranded_file_differing_only_in_case_from_another_is_not_merged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = fs::canonicalize(tmp.path()).expect("real");
    let engine = Engine::builder(Environment::empty().with("HOME", root.to_string_lossy()))
        .claude_home(root.join(".claude"))
        .engram_home(root.join("engram"))
        .build();
    let old = root.join("old");
    let live = root.join("live");
    fs::create_dir_all(&old).expect("old");
    fs::create_dir_all(&live).expect("live");
    fs::write(live.join("Project_Deploy.md"), DEPLOY).expect("live deploy");
    fs::write(old.join("project_deploy.md"), DEPLOY).expect("stranded deploy");
    let text = engine
        .stage_stranded_merge(&old, &live, "repo")
        .expect_err("a case twin of a live file")
        .to_string();
    assert!(
        text.contains("\"project_deploy.md\"") && text.contains("\"Project_Deploy.md\""),
        "{text}"
    );
    fs::remove_file(live.join("Project_Deploy.md")).expect("rm");
    fs::write(old.join("PROJECT_DEPLOY.md"), DEPLOY).expect("second spelling");
    let text = engine
        .stage_stranded_merge(&old, &live, "repo")
        .expect_err("two spellings in the stranded store")
        .to_string();
    assert!(text.contains("PROJECT_DEPLOY.md"), "{text}");
    assert!(
        engine.staged_change_sets().expect("list").is_empty(),
        "nothing staged"
    );
}
