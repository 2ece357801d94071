//! Tauri's build step: embeds `tauri.conf.json`, the capabilities and the icons, checks that the UI
//! bundle (`../ui/dist`) exists — build the UI first (`make run` / `make test` do) — and declares
//! the app's own commands, so each gets an `allow-<command>` permission and a window may call only
//! those its capability lists.

/// Every `#[tauri::command]` registered in `lib.rs`; a command missing here cannot be allowed.
const COMMANDS: &[&str] = &[
    "app_info",
    "local_model_status",
    "fetch_local_model",
    "embed_all_memories",
    "stop_model_work",
    "ui_ready",
    "list_projects",
    "search_memories",
    "open_project",
    "lint_project",
    "read_memory",
    "save_memory",
    "memory_conflict",
    "resolve_memory_conflict",
    "create_memory",
    "rename_memory",
    "delete_memory",
    "plan_fix",
    "apply_fix",
    "file_history",
    "version_change",
    "revert_version",
    "watch_project",
    "unwatch_project",
    "llm_setup",
    "save_llm_setup",
    "store_api_key",
    "delete_api_key",
    "test_connection",
    "start_at_login",
    "set_start_at_login",
    "token_usage",
    "set_daily_budget",
    "recall_preview",
    "cancel_recall",
    "dream_overview",
    "set_dream_settings",
    "start_dream",
    "kill_dream",
    "list_change_sets",
    "change_set",
    "accept_changes",
    "reject_changes",
    "undo_changes",
    "change_conflict",
    "list_sessions",
    "read_transcript",
    "extract_session",
    "session_summary",
    "update_session_summary",
    "search_sessions",
    "list_agents",
    "initialize_agent",
    "stage_snapshot_merge",
    "team_status",
    "team_pull",
    "team_push",
    "set_team_remote",
    "team_secrets",
    "redact_team_secrets",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))?;
    Ok(())
}
