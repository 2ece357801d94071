//! The review screen: change sets dreams staged, their diffs, accepting or rejecting them file by
//! file, and undoing an applied one. Accepting here is the person's approval, so protected
//! changes (deleting or rewriting a user or feedback memory) are applied too.

use memory_engine::staging::StagedChangeSet;
use memory_engine::ConflictDetails;
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// Every staged change set, newest first; only `project`'s when given.
#[tauri::command]
pub async fn list_change_sets(
    state: State<'_, AppState>,
    project: Option<String>,
) -> Result<Vec<StagedChangeSet>> {
    let engine = state.engine().clone();
    blocking(move || {
        let mut sets = engine.staged_change_sets()?;
        if let Some(project) = project {
            sets.retain(|s| s.project == project);
        }
        Ok(sets)
    })
    .await
}

#[tauri::command]
pub async fn change_set(state: State<'_, AppState>, id: String) -> Result<StagedChangeSet> {
    let engine = state.engine().clone();
    blocking(move || engine.staged_change_set(&id)).await
}

/// Applies the named files of change set `id` (all waiting files when empty).
#[tauri::command]
pub async fn accept_changes(
    state: State<'_, AppState>,
    id: String,
    files: Vec<String>,
) -> Result<StagedChangeSet> {
    let engine = state.engine().clone();
    blocking(move || engine.apply_staged(&id, &files, true, None)).await
}

/// Rejects the named files of change set `id` (all waiting files when empty).
#[tauri::command]
pub async fn reject_changes(
    state: State<'_, AppState>,
    id: String,
    files: Vec<String>,
) -> Result<StagedChangeSet> {
    let engine = state.engine().clone();
    blocking(move || engine.reject_staged(&id, &files, None)).await
}

/// Undoes every applied file of change set `id` in one step.
#[tauri::command]
pub async fn undo_changes(state: State<'_, AppState>, id: String) -> Result<StagedChangeSet> {
    let engine = state.engine().clone();
    blocking(move || engine.undo_staged(&id, None)).await
}

/// Both sides of a file of change set `id` that conflicts: what the disk holds now, and what the
/// dream planned.
#[tauri::command]
pub async fn change_conflict(
    state: State<'_, AppState>,
    id: String,
    file: String,
) -> Result<ConflictDetails> {
    let engine = state.engine().clone();
    blocking(move || engine.staged_conflict(&id, &file)).await
}

#[cfg(test)]
mod tests {
    use memory_engine::testing::fixtures::write_file as write;
    use serde_json::{json, Value};
    use tauri::Manager;

    use super::super::test_shell::Shell;
    use crate::state::AppState;

    /// A project whose memory has a relative date and a dead index line, dreamed offline
    /// (staged), through the engine the shell holds.
    fn dreamed() -> (Shell, String) {
        let shell = Shell::with_home(|home| {
            let memory = home.join("projects/-work-demo/memory");
            write(
                &memory.join("MEMORY.md"),
                "- [Plan](plan.md) \u{2014} the plan\n- [Gone](gone.md) \u{2014} missing\n",
            );
            write(
                &memory.join("plan.md"),
                "---\nname: Plan\ndescription: the plan\ntype: project\n---\nShipped yesterday.\n",
            );
        });
        let engine = shell.window().state::<AppState>().engine().clone();
        let target = engine.dream_target("-work-demo").expect("target");
        let options = memory_engine::dream::DreamOptions {
            gates: memory_engine::dream::GateCheck::Skip,
            ..Default::default()
        };
        let outcome = tauri::async_runtime::block_on(engine.run_dream(
            &target,
            &options,
            &memory_engine::job::CancellationToken::new(),
            |_| {},
        ))
        .expect("dream");
        let id = outcome.change_set.expect("a change set");
        (shell, id)
    }

    #[test]
    fn the_review_commands_list_accept_reject_and_undo_a_staged_dream() {
        let (shell, id) = dreamed();
        let overview = shell
            .invoke("dream_overview", json!({ "project": "-work-demo" }))
            .expect("overview");
        assert_eq!(overview["status"]["project"], "-work-demo");
        assert_eq!(overview["past"][0]["changeSet"], id.as_str(), "{overview}");

        let sets = shell
            .invoke("list_change_sets", json!({ "project": "-work-demo" }))
            .expect("list");
        assert_eq!(sets[0]["id"], id.as_str());
        let files: Vec<String> = sets[0]["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["file"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(files, vec!["plan.md", "MEMORY.md"], "{sets}");

        let memory = shell.home().join("projects/-work-demo/memory");
        let accepted = shell
            .invoke("accept_changes", json!({ "id": id, "files": ["plan.md"] }))
            .expect("accept");
        // The offline dream dates "yesterday" as a sentence still reads: "Shipped on 20…".
        let plan = std::fs::read_to_string(memory.join("plan.md")).expect("plan");
        assert!(
            plan.contains("Shipped on 20") && !plan.contains("yesterday"),
            "{plan}"
        );
        let rejected = shell
            .invoke(
                "reject_changes",
                json!({ "id": id, "files": ["MEMORY.md"] }),
            )
            .expect("reject");
        assert_eq!(rejected["status"], "applied", "{accepted} {rejected}");
        assert!(std::fs::read_to_string(memory.join("MEMORY.md"))
            .expect("index")
            .contains("gone.md"));
        let undone = shell
            .invoke("undo_changes", json!({ "id": id }))
            .expect("undo");
        assert_eq!(undone["status"], "undone");
        assert!(std::fs::read_to_string(memory.join("plan.md"))
            .expect("plan")
            .contains("yesterday"));

        let err: Value = shell
            .invoke("change_set", json!({ "id": "../../etc" }))
            .expect_err("not an id");
        assert_eq!(err["kind"], "notFound");
    }
}
