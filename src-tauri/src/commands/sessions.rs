//! The Sessions tab: a project's Claude Code sessions, a readable transcript, and extracting
//! memories from a session into a change set the review screen shows.

use memory_engine::config::DreamPolicy;
use memory_engine::extract::{ExtractOptions, ExtractOutcome};
use memory_engine::job::CancellationToken;
use memory_engine::session_memory::SessionMemoryView;
use memory_engine::session_search::SessionHit;
use memory_engine::transcript::{SessionSummary, Transcript, TranscriptPage};
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

/// The project's sessions, most recently active first.
#[tauri::command]
pub async fn list_sessions(
    state: State<'_, AppState>,
    project: String,
) -> Result<Vec<SessionSummary>> {
    let engine = state.engine().clone();
    blocking(move || Ok(engine.list_sessions(Some(&project))?.sessions)).await
}

/// Messages `offset..offset + limit` of a session's conversation.
#[tauri::command]
pub async fn read_transcript(
    state: State<'_, AppState>,
    project: String,
    session: String,
    offset: usize,
    limit: usize,
) -> Result<TranscriptPage> {
    let engine = state.engine().clone();
    blocking(move || {
        let path = engine.project_session_transcript(&project, &session)?;
        Transcript::open(&path)?.page(offset, limit)
    })
    .await
}

/// Extracts memories from the whole session, staged for review (nothing lands until accepted).
#[tauri::command]
pub async fn extract_session(
    state: State<'_, AppState>,
    project: String,
    session: String,
) -> Result<ExtractOutcome> {
    let engine = state.engine().clone();
    let path = {
        let engine = engine.clone();
        blocking(move || engine.project_session_transcript(&project, &session)).await?
    };
    let options = ExtractOptions {
        policy: Some(DreamPolicy::Review),
        from_start: true,
        ..ExtractOptions::default()
    };
    Ok(engine
        .extract_session(&path, &options, &CancellationToken::new())
        .await?)
}

/// The session's rolling summary (`summary.md`), with what is due.
#[tauri::command]
pub async fn session_summary(
    state: State<'_, AppState>,
    project: String,
    session: String,
) -> Result<SessionMemoryView> {
    let engine = state.engine().clone();
    blocking(move || {
        let path = engine.project_session_transcript(&project, &session)?;
        engine.session_memory(&path)
    })
    .await
}

/// Writes the session's summary now (the configured model, else offline).
#[tauri::command]
pub async fn update_session_summary(
    state: State<'_, AppState>,
    project: String,
    session: String,
) -> Result<SessionMemoryView> {
    let engine = state.engine().clone();
    let path = {
        let engine = engine.clone();
        blocking(move || engine.project_session_transcript(&project, &session)).await?
    };
    let updated = engine
        .update_session_memory(&path, &Default::default(), true, &CancellationToken::new())
        .await?;
    match updated {
        Some(view) => Ok(view),
        None => blocking(move || engine.session_memory(&path)).await,
    }
}

/// Searches the project's sessions (prompts, replies, tool names, file paths), best first.
#[tauri::command]
pub async fn search_sessions(
    state: State<'_, AppState>,
    project: String,
    query: String,
) -> Result<Vec<SessionHit>> {
    let engine = state.engine().clone();
    blocking(move || {
        let found = engine.search_sessions(&query, Some(&project), 50)?;
        if let Some(why) = &found.rebuilt {
            crate::report(
                &engine,
                &format!("session index unusable, built again: {why}"),
            );
        }
        Ok(found.hits)
    })
    .await
}
