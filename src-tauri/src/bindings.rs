//! The TypeScript shapes of everything that crosses the IPC boundary, generated from the Rust
//! types with ts-rs into `ui/src/ipc/bindings/` and committed, so the UI is type-checked against
//! what the shell really sends.
//!
//! The test below regenerates them into a temp dir and fails when they differ from the committed
//! files (a type changed in Rust and the UI was not told). To update the committed files after
//! such a change: `UPDATE_BINDINGS=1 cargo test -p engram-app --features
//! engram-app/custom-protocol bindings`.

use std::path::Path;

use ts_rs::{ExportError, TS};

/// The committed bindings, relative to this crate.
pub const BINDINGS_DIR: &str = "../ui/src/ipc/bindings";

/// Writes the binding of every IPC type (and of the types they use) into `dir`.
pub fn export_all(dir: &Path) -> Result<(), ExportError> {
    use memory_engine as engine;
    // What commands return or take, and what events carry; their field types follow.
    crate::error::WireError::export_all_to(dir)?;
    crate::commands::home::AppInfo::export_all_to(dir)?;
    crate::commands::onboarding::FirstRun::export_all_to(dir)?;
    engine::hooks::HookPlan::export_all_to(dir)?;
    engine::hooks::HookChange::export_all_to(dir)?;
    crate::commands::settings::LocalModelStatus::export_all_to(dir)?;
    crate::commands::settings::ModelFetchProgress::export_all_to(dir)?;
    engine::EmbedAllProgress::export_all_to(dir)?;
    engine::EmbedAllReport::export_all_to(dir)?;
    crate::commands::memory::ProjectSnapshot::export_all_to(dir)?;
    crate::commands::memory::MemoryDocument::export_all_to(dir)?;
    crate::events::MemoryDirChanged::export_all_to(dir)?;
    engine::ProjectSummary::export_all_to(dir)?;
    engine::search::SearchHit::export_all_to(dir)?;
    engine::LintReport::export_all_to(dir)?;
    engine::editor::MemoryForm::export_all_to(dir)?;
    engine::editor::EditOutcome::export_all_to(dir)?;
    engine::editor::ConflictResolution::export_all_to(dir)?;
    engine::ConflictDetails::export_all_to(dir)?;
    engine::fix::FixTarget::export_all_to(dir)?;
    engine::ChangeSet::export_all_to(dir)?;
    engine::ApplyReport::export_all_to(dir)?;
    engine::Version::export_all_to(dir)?;
    engine::history::VersionChange::export_all_to(dir)?;
    // Settings screen and Recall panel (issue #4).
    engine::llm::setup::LlmSetup::export_all_to(dir)?;
    engine::llm::setup::LlmChoice::export_all_to(dir)?;
    engine::config::EmbeddingSource::export_all_to(dir)?;
    engine::llm::probe::ConnectionTest::export_all_to(dir)?;
    engine::llm::probe::ConnectionCheck::export_all_to(dir)?;
    crate::commands::recall::RecallPreview::export_all_to(dir)?;
    // Settings: Engram's MCP server in Claude Code (issue #22).
    engine::mcp::install::McpStatus::export_all_to(dir)?;
    engine::mcp::install::McpChange::export_all_to(dir)?;
    // Dreams view and the review screen (issue #9).
    crate::commands::dreams::DreamOverview::export_all_to(dir)?;
    crate::events::DreamFinished::export_all_to(dir)?;
    engine::dream::DreamEvent::export_all_to(dir)?;
    engine::config::DreamPolicy::export_all_to(dir)?;
    engine::staging::StagedChangeSet::export_all_to(dir)?;
    // Sessions tab (issue #10).
    engine::transcript::SessionSummary::export_all_to(dir)?;
    engine::transcript::TranscriptPage::export_all_to(dir)?;
    engine::extract::ExtractOutcome::export_all_to(dir)?;
    engine::session_memory::SessionMemoryView::export_all_to(dir)?;
    engine::session_search::SessionHit::export_all_to(dir)?;
    // Agents view (issue #11).
    engine::agent_memory::AgentMemory::export_all_to(dir)?;
    engine::team::sync::TeamStatus::export_all_to(dir)?;
    engine::team::sync::SyncReport::export_all_to(dir)?;
    // Settings → Sync: personal sync (issue #24).
    engine::sync::SyncStatus::export_all_to(dir)?;
    engine::sync::PersonalSyncReport::export_all_to(dir)?;
    crate::commands::sync::SyncSettings::export_all_to(dir)?;
    engine::config::ProjectTeamConfig::export_all_to(dir)?;
    engine::secrets::SecretFinding::export_all_to(dir)?;
    // Token usage and the daily budget (issue #21).
    engine::llm::usage::UsageReport::export_all_to(dir)?;
    engine::llm::usage::BudgetStatus::export_all_to(dir)?;
    export_rules(dir)
}

/// The engine's constants the UI shows or branches on (the index budget, the types, the rules
/// the engine can fix), so the UI never keeps copies that could drift.
fn export_rules(dir: &Path) -> Result<(), ExportError> {
    use memory_engine::{fix::FIXABLE_RULES, index, MemoryType};
    let quoted = |items: &mut dyn Iterator<Item = &str>| {
        items
            .map(|item| format!("\"{item}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "// Generated from the engine by src-tauri/src/bindings.rs. Do not edit by hand.\n\n\
         export const MAX_INDEX_LINES = {};\n\
         export const MAX_INDEX_BYTES = {};\n\
         export const MEMORY_TYPES = [{}] as const;\n\
         export const FIXABLE_RULES = [{}] as const;\n",
        index::MAX_INDEX_LINES,
        index::MAX_INDEX_BYTES,
        quoted(&mut MemoryType::ALL.iter().map(|t| t.as_str())),
        quoted(&mut FIXABLE_RULES.iter().copied()),
    );
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("EngineRules.ts"), text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::PathBuf;

    use super::*;

    /// `*.ts` files of `dir` by name, with their text.
    fn read_bindings(dir: &Path) -> BTreeMap<String, String> {
        let Ok(entries) = fs::read_dir(dir) else {
            return BTreeMap::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "ts"))
            .map(|entry| {
                let text = fs::read_to_string(entry.path()).expect("a readable binding");
                (entry.file_name().to_string_lossy().into_owned(), text)
            })
            .collect()
    }

    #[test]
    fn bindings_match_the_committed_files() {
        let committed_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(BINDINGS_DIR);
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            if committed_dir.exists() {
                fs::remove_dir_all(&committed_dir).expect("clear the old bindings");
            }
            export_all(&committed_dir).expect("export the bindings");
        }
        let fresh = tempfile::tempdir().expect("temp dir");
        export_all(fresh.path()).expect("export the bindings");

        let generated = read_bindings(fresh.path());
        let committed = read_bindings(&committed_dir);
        assert!(!generated.is_empty(), "nothing was exported");
        let names = |map: &BTreeMap<String, String>| map.keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(&committed),
            names(&generated),
            "the set of binding files drifted from the Rust types; regenerate with \
             UPDATE_BINDINGS=1 (see src/bindings.rs)"
        );
        for (name, text) in &generated {
            assert_eq!(
                committed.get(name),
                Some(text),
                "{name} drifted from the Rust types; regenerate with UPDATE_BINDINGS=1 \
                 (see src/bindings.rs)"
            );
        }
    }
}
