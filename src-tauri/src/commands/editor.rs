//! The memory editor: save, create, rename and delete, each one change set applied as the user,
//! with the index line following the file. A save is checked against what the editor opened
//! (`opened`, the file's content when it was read): if the disk moved since, nothing is written
//! and the command fails with kind `conflict`; `memory_conflict` then gives both sides and
//! `resolve_memory_conflict` applies the user's choice.

use memory_engine::editor::{ConflictResolution, EditOutcome, MemoryForm};
use memory_engine::ConflictDetails;
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// Writes `form` over the file as it was opened (`opened`); `conflict` if it changed since.
#[tauri::command]
pub async fn save_memory(
    state: State<'_, AppState>,
    project: String,
    file: String,
    opened: String,
    form: MemoryForm,
) -> Result<EditOutcome> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.save_memory(&file, &opened, &form)).await
}

/// Both sides of a refused save: the disk now and the form applied over it.
#[tauri::command]
pub async fn memory_conflict(
    state: State<'_, AppState>,
    project: String,
    file: String,
    form: MemoryForm,
) -> Result<ConflictDetails> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.memory_conflict(&file, &form)).await
}

/// Keeps the user's version (over the disk version they were shown) or takes the disk's.
#[tauri::command]
pub async fn resolve_memory_conflict(
    state: State<'_, AppState>,
    project: String,
    file: String,
    resolution: ConflictResolution,
) -> Result<EditOutcome> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.resolve_memory_conflict(&file, &resolution)).await
}

/// A new memory and its index line; `file` is derived from type and name when absent.
#[tauri::command]
pub async fn create_memory(
    state: State<'_, AppState>,
    project: String,
    file: Option<String>,
    form: MemoryForm,
) -> Result<EditOutcome> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.create_memory(file.as_deref(), &form)).await
}

/// Moves a memory to `new_file`, updating its index link in place.
#[tauri::command]
pub async fn rename_memory(
    state: State<'_, AppState>,
    project: String,
    file: String,
    new_file: String,
    opened: Option<String>,
) -> Result<EditOutcome> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.rename_memory(&file, &new_file, opened.as_deref())).await
}

/// Deletes a memory and its index line(s); with `opened`, only if the file is still that.
#[tauri::command]
pub async fn delete_memory(
    state: State<'_, AppState>,
    project: String,
    file: String,
    opened: Option<String>,
) -> Result<EditOutcome> {
    let dir = state.memory_dir(&project)?;
    blocking(move || dir.delete_memory(&file, opened.as_deref())).await
}
