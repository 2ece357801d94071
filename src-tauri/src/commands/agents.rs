//! The Agents view: every subagent's memory (user, project and local scopes) with its team
//! snapshot's state, initializing from a snapshot, and staging a snapshot merge for the review
//! screen. A project is named by its working dir, which must be one Claude Code has seen.

use std::path::PathBuf;

use memory_engine::agent_memory::{AgentMemory, AgentScope};
use memory_engine::config::LlmOverrides;
use memory_engine::job::JobKind;
use memory_engine::llm::{Caller, ModelJob};
use memory_engine::staging::StagedChangeSet;
use tauri::State;

use super::blocking;
use crate::error::Result;
use crate::state::AppState;

#[tauri::command]
pub async fn list_agents(state: State<'_, AppState>) -> Result<Vec<AgentMemory>> {
    let engine = state.engine().clone();
    blocking(move || engine.list_agent_memories(&[])).await
}

/// Copies the team's snapshot into an agent memory that has none yet.
#[tauri::command]
pub async fn initialize_agent(
    state: State<'_, AppState>,
    agent_type: String,
    scope: AgentScope,
    project: PathBuf,
) -> Result<AgentMemory> {
    let engine = state.engine().clone();
    blocking(move || {
        let cwd = engine.known_project_dir(&project)?;
        engine.initialize_agent_memory(&agent_type, scope, &cwd)
    })
    .await
}

/// Stages the merge of an updated snapshot (`None`: nothing differs; marked as synced). With
/// `propose`, the configured model proposes a merge of each file both sides changed (still
/// reviewed); cancelled when the command is dropped.
#[tauri::command]
pub async fn stage_snapshot_merge(
    state: State<'_, AppState>,
    agent_type: String,
    scope: AgentScope,
    project: PathBuf,
    propose: bool,
) -> Result<Option<StagedChangeSet>> {
    let engine = state.engine().clone();
    let (cwd, name) = {
        let engine = engine.clone();
        blocking(move || {
            let cwd = engine.known_project_dir(&project)?;
            let name = engine
                .transcripts_dir(&cwd)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok((cwd, name))
        })
        .await?
    };
    if !propose {
        return blocking(move || engine.stage_snapshot_merge(&agent_type, scope, &cwd, &name))
            .await;
    }
    let job = engine.jobs().start(JobKind::SnapshotMerge);
    // `config.toml` and the API key (the keyring may block on D-Bus), off the async threads.
    let client = {
        let engine = engine.clone();
        let caller = Caller::new(ModelJob::Merge, &name);
        blocking(move || {
            Ok(engine
                .llm_client_for(&LlmOverrides::default(), &caller)?
                .client)
        })
        .await?
    };
    let Some(client) = client else {
        return Err(memory_engine::Error::InvalidInput(
            "no model is configured: choose one in Settings to have merges proposed".to_owned(),
        )
        .into());
    };
    let (staged, _) = engine
        .stage_snapshot_merge_proposed(
            &agent_type,
            scope,
            &cwd,
            &name,
            client.as_ref(),
            job.token(),
        )
        .await?;
    Ok(staged)
}
