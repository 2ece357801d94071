//! The Projects view: every project Claude Code has seen under the config home, and a search
//! across all of their memories.

use memory_engine::search::{SearchHit, SearchOptions};
use memory_engine::ProjectSummary;
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// How many hits a search returns: a screenful and then some; refine the query for more.
const SEARCH_LIMIT: usize = 50;

/// Every project under `<claude home>/projects/`, most recently active first, with its lint
/// counts.
#[tauri::command]
pub async fn list_projects(state: State<'_, AppState>) -> Result<Vec<ProjectSummary>> {
    let engine = state.engine().clone();
    blocking(move || engine.list_projects_with_lint()).await
}

/// Memories of every project matching all words of `query`, best first.
#[tauri::command]
pub async fn search_memories(state: State<'_, AppState>, query: String) -> Result<Vec<SearchHit>> {
    let engine = state.engine().clone();
    let options = SearchOptions {
        limit: SEARCH_LIMIT,
    };
    blocking(move || engine.search_memories(&query, &options)).await
}
