//! The merge of an updated team snapshot into local agent memory (prompt-update), as a change set
//! reviewed file by file. Planning is the same with or without a model; with one, each file both
//! sides changed gets the model's proposed merge of the two (and of the version both started
//! from, when history holds it) in place of the snapshot's version — a proposal like any other,
//! shown as a diff against the local file and applied only when accepted. A model answer that is
//! not a memory file keeps the snapshot's version, and says so in the file's reason.

use std::path::{Path, PathBuf};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{flat_files, snapshot_dir, snapshot_updated_at, write_marker, AgentScope, SYNC_MARKER};
use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::llm::{Client, Message, Request, StructuredOutput, Usage};
use crate::staging::{ChangeSource, StagedChangeSet, SyncMarker};

/// One file the merge writes.
struct Planned {
    file: String,
    content: String,
    reason: String,
    /// Set when both sides changed: what a model may merge.
    conflict: Option<Conflict>,
}

struct Conflict {
    /// The content last synced from a snapshot, when history holds it.
    base: Option<String>,
    ours: String,
    theirs: String,
}

struct MergePlan {
    dir: PathBuf,
    updated_at: String,
    files: Vec<Planned>,
}

/// What a model proposed, for the staged set's summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Proposals {
    pub merged: usize,
    /// Answers that were not a memory file: the snapshot's version stayed.
    pub refused: usize,
    pub usage: Usage,
}

/// The structured-output name of the model's answer.
const MERGE_NAME: &str = "merged_memory_file";
const MERGE_MAX_TOKENS: u32 = 8_192;
const MERGE_SYSTEM_PROMPT: &str = "You merge two versions of one memory file of a coding agent: \
the team's shared snapshot and the local copy, which both changed. The file is Markdown with YAML \
frontmatter (name, description, type) between --- lines. Write one file that keeps every fact, rule \
and reason either version holds; when the two contradict each other, the snapshot's wording wins \
and the local one is kept only if it adds a detail. When the version both started from is given, \
a fact removed on one side since then stays removed. Keep the frontmatter's fields; the \
description must still summarise the whole file in one line. Answer with the complete merged \
file, nothing else.";

impl Engine {
    /// Stages the merge of an updated snapshot into the agent dir (see the module docs); the
    /// marker is written when the set is decided. `project` names the set in review lists.
    pub fn stage_snapshot_merge(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
        project: &str,
    ) -> Result<Option<StagedChangeSet>> {
        let plan = self.plan_snapshot_merge(agent_type, scope, cwd)?;
        self.stage_merge_plan(plan, agent_type, project, None)
    }

    /// [`Engine::stage_snapshot_merge`] with `client` proposing a merge of each file both sides
    /// changed (see the module docs).
    pub async fn stage_snapshot_merge_proposed(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
        project: &str,
        client: &dyn Client,
        cancel: &CancellationToken,
    ) -> Result<(Option<StagedChangeSet>, Proposals)> {
        let mut plan = self.plan_snapshot_merge(agent_type, scope, cwd)?;
        let mut proposals = Proposals::default();
        for planned in &mut plan.files {
            let Some(conflict) = &planned.conflict else {
                continue;
            };
            let response = client
                .complete(&merge_request(&planned.file, conflict), cancel)
                .await?;
            proposals.usage += response.usage;
            let merged = response.structured(MERGE_NAME).ok().and_then(|answer| {
                answer
                    .get("merged")
                    .and_then(|m| m.as_str())
                    .map(str::to_owned)
            });
            match merged.filter(|text| is_memory_file(text, conflict)) {
                Some(mut text) => {
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                    planned.content = text;
                    planned.reason = format!(
                        "both changed: {} proposes this merge of yours (the before) and the \
                         snapshot's — check it",
                        client.model()
                    );
                    proposals.merged += 1;
                }
                None => {
                    planned.reason.push_str(
                        " — the model's merge was not a memory file with frontmatter, so it was \
                         left out",
                    );
                    proposals.refused += 1;
                }
            }
        }
        let note = (proposals.merged > 0)
            .then(|| format!("{} merged by {}", proposals.merged, client.model()));
        let staged = self.stage_merge_plan(plan, agent_type, project, note.as_deref())?;
        Ok((staged, proposals))
    }

    fn plan_snapshot_merge(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
    ) -> Result<MergePlan> {
        let dir = self.agent_memory_dir(agent_type, scope, cwd)?;
        let snapshot = snapshot_dir(cwd, agent_type)?;
        let updated_at = snapshot_updated_at(&snapshot).ok_or_else(|| {
            Error::InvalidInput(format!("{}: no valid snapshot", snapshot.display()))
        })?;
        let local = flat_files(&dir)?;
        let history = self.history(&dir, None).unwrap_or_default();
        let mut files = Vec::new();
        for (file, theirs) in flat_files(&snapshot)? {
            let Some(ours) = local.get(&file) else {
                files.push(Planned {
                    file,
                    content: theirs,
                    reason: "only in the snapshot: added".to_owned(),
                    conflict: None,
                });
                continue;
            };
            if *ours == theirs {
                continue;
            }
            // The content last synced from a snapshot, if history recorded it (newest first:
            // the latest version the snapshot wrote).
            let base = history
                .iter()
                .find(|v| v.file == file && v.actor == Actor::Snapshot)
                .and_then(|v| self.version_content(&v.version).ok().flatten());
            let reason = match &base {
                Some(base) if base == ours => "only the snapshot changed since the last sync: take it",
                Some(base) if *base == theirs => continue, // only local changed: keep it
                Some(_) => "both changed since the last sync: the snapshot's version (yours is the before)",
                None => "both differ and no common version is known: the snapshot's version (yours is the before)",
            };
            let both_changed = !matches!(&base, Some(base) if base == ours);
            files.push(Planned {
                conflict: both_changed.then(|| Conflict {
                    base: base.clone(),
                    ours: ours.clone(),
                    theirs: theirs.clone(),
                }),
                file,
                content: theirs,
                reason: reason.to_owned(),
            });
        }
        Ok(MergePlan {
            dir,
            updated_at,
            files,
        })
    }

    fn stage_merge_plan(
        &self,
        plan: MergePlan,
        agent_type: &str,
        project: &str,
        note: Option<&str>,
    ) -> Result<Option<StagedChangeSet>> {
        let mut set = ChangeSet::new(&plan.dir);
        for planned in plan.files {
            set.stage_write(&planned.file, planned.content, &planned.reason)?;
        }
        if set.is_empty() {
            write_marker(&plan.dir, &plan.updated_at)?;
            return Ok(None);
        }
        let marker = SyncMarker {
            path: plan.dir.join(SYNC_MARKER),
            synced_from: plan.updated_at.clone(),
            written: false,
        };
        let mut summary = format!(
            "merge of the team's {agent_type} snapshot of {}",
            plan.updated_at
        );
        if let Some(note) = note {
            summary.push_str(&format!(" ({note})"));
        }
        let staged =
            self.stage_change_set(&set, ChangeSource::Snapshot, project, &summary, None)?;
        Ok(Some(
            self.attach_sync_marker(&staged.id, marker, &plan.dir)?,
        ))
    }
}

fn merge_request(file: &str, conflict: &Conflict) -> Request {
    let mut request = Request::new(MERGE_MAX_TOKENS);
    request.system = Some(MERGE_SYSTEM_PROMPT.to_owned());
    let base = match &conflict.base {
        Some(base) => format!("The version both started from:\n<base>\n{base}</base>\n\n"),
        None => "The version both started from is not known.\n\n".to_owned(),
    };
    request.messages.push(Message::user(format!(
        "File: {file}\n\n{base}The team's snapshot:\n<snapshot>\n{}</snapshot>\n\nThe local copy:\n<local>\n{}</local>",
        conflict.theirs, conflict.ours
    )));
    request.structured = Some(StructuredOutput {
        name: MERGE_NAME.to_owned(),
        description: "Report the complete merged memory file.".to_owned(),
        schema: json!({
            "type": "object",
            "properties": {
                "merged": {"type": "string", "description": "The whole merged file, frontmatter included."}
            },
            "required": ["merged"],
            "additionalProperties": false
        }),
    });
    request
}

/// Whether a proposed merge is a memory file: not blank, and with readable frontmatter naming
/// it whenever either side had one.
fn is_memory_file(text: &str, conflict: &Conflict) -> bool {
    if text.trim().is_empty() {
        return false;
    }
    let had_frontmatter = [&conflict.ours, &conflict.theirs].iter().any(|side| {
        !crate::frontmatter::parse_document(side)
            .frontmatter
            .status
            .is_unusable()
    });
    let merged = crate::frontmatter::parse_document(text).frontmatter;
    !had_frontmatter || (!merged.status.is_unusable() && merged.name.is_some())
}
