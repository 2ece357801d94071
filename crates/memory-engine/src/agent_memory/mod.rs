//! Agent memory (`FORMATS.md` §1): each subagent type keeps its own memory dir — an index and
//! topic files, exactly like a project's — in one of three scopes:
//! user `<memory base>/agent-memory/<name>/`, project `<cwd>/.claude/agent-memory/<name>/`, local
//! `<cwd>/.claude/agent-memory-local/<name>/` (`<name>` = the agent type with `:` → `-`). They are
//! memory dirs: browsed, edited, linted, searched and kept in history like any other
//! ([`crate::memdir::MemoryDir`]).
//!
//! **Snapshots.** A team shares an agent's memory by committing
//! `<cwd>/.claude/agent-memory-snapshots/<agentType>/` (the files + `snapshot.json`
//! `{"updatedAt"}`); the local dir remembers what it took in `.snapshot-synced.json`
//! `{"syncedFrom"}`. The decision ([`SnapshotAction`]) is Claude Code's: no valid snapshot →
//! none; no `*.md` in the agent dir → initialize; marker missing or older → prompt-update.
//! - initialize copies the snapshot's regular files (flat; not `snapshot.json`) and writes the
//!   marker — nothing local can be lost;
//! - prompt-update never overwrites on its own: [`Engine::stage_snapshot_merge`] prepares a change
//!   set, per file: only in the snapshot (added), identical (nothing), only local (kept), both
//!   changed (three-way where history holds the content last synced: a side that did not move
//!   takes the other; else the snapshot's version, the local one shown as the diff's before) —
//!   reviewed file by file; the marker is written once every file is decided. With a model,
//!   [`Engine::stage_snapshot_merge_proposed`] proposes a merge of each file both sides changed
//!   instead of the snapshot's version (`merge.rs`) — still reviewed;
//! - replace deletes the local `*.md` first, then copies, as Claude Code does;
//! - publish writes local memory out as a snapshot with a new `updatedAt`, refusing files the
//!   secret scan flags.
//!
//! Every write goes through a change set and history (actor `snapshot`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};

mod merge;

pub const SNAPSHOT_BASE: &str = "agent-memory-snapshots";
pub const SNAPSHOT_FILE: &str = "snapshot.json";
pub use crate::paths::SYNC_MARKER;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentScope {
    User,
    Project,
    Local,
}

impl std::str::FromStr for AgentScope {
    type Err = Error;
    fn from_str(text: &str) -> Result<AgentScope> {
        match text {
            "user" => Ok(AgentScope::User),
            "project" => Ok(AgentScope::Project),
            "local" => Ok(AgentScope::Local),
            other => Err(Error::InvalidInput(format!(
                "unknown scope {other:?}: user, project or local"
            ))),
        }
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapshotAction {
    None,
    Initialize,
    PromptUpdate,
}

/// One agent's memory in one scope (`engram agents --json`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMemory {
    pub agent_type: String,
    pub scope: AgentScope,
    pub dir: PathBuf,
    /// Topic files (`*.md` but `MEMORY.md`).
    pub files: usize,
    pub snapshot: SnapshotAction,
    pub snapshot_updated_at: Option<String>,
    pub synced_from: Option<String>,
    /// The project's working dir (project and local scopes).
    pub project: Option<PathBuf>,
    /// How the app names this dir where it names a project's memory dir (to browse, edit, lint,
    /// recall and keep history with the same commands): see [`Engine::memory_store_dir_checked`].
    pub store: String,
}

/// Which agent memory a dir is (for a search hit in it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentLabel {
    /// As its dir names it (`:` written `-`).
    pub agent_type: String,
    pub scope: AgentScope,
}

/// An agent memory dir that exists, as [`Engine::agent_stores`] finds it.
#[derive(Debug, Clone)]
pub(crate) struct AgentStore {
    pub label: AgentLabel,
    pub dir: PathBuf,
    pub cwd: Option<PathBuf>,
    /// Its store name ([`AgentMemory::store`]).
    pub store: String,
}

/// The prefix of an agent memory store's name: `agent:<scope>:<dir name>:<working dir>` (the
/// working dir empty for the user scope). Project folder names never hold a `:` (Claude Code
/// replaces every character but letters and digits), so the two kinds of names cannot meet.
const STORE_PREFIX: &str = "agent:";

fn store_name(scope: AgentScope, dir_name: &str, cwd: Option<&Path>) -> String {
    let scope = match scope {
        AgentScope::User => "user",
        AgentScope::Project => "project",
        AgentScope::Local => "local",
    };
    let cwd = cwd
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{STORE_PREFIX}{scope}:{dir_name}:{cwd}")
}

/// The dir name of an agent type: `:` → `-` (a plugin's `plugin:agent`).
pub fn dir_name(agent_type: &str) -> Result<String> {
    let name = agent_type.replace(':', "-");
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::InvalidInput(format!(
            "{agent_type:?} is not an agent type"
        )));
    }
    Ok(name)
}

fn snapshot_dir(cwd: &Path, agent_type: &str) -> Result<PathBuf> {
    dir_name(agent_type)?; // the same checks: the type is a single path component
    Ok(cwd.join(".claude").join(SNAPSHOT_BASE).join(agent_type))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotMeta {
    updated_at: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Marker {
    synced_from: String,
}

/// `snapshot.json`'s `updatedAt`, when the snapshot is valid.
fn snapshot_updated_at(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(SNAPSHOT_FILE)).ok()?;
    let meta: SnapshotMeta = serde_json::from_str(&text).ok()?;
    chrono::DateTime::parse_from_rfc3339(&meta.updated_at).ok()?;
    Some(meta.updated_at)
}

fn synced_from(agent_dir: &Path) -> Option<String> {
    let text = fs::read_to_string(agent_dir.join(SYNC_MARKER)).ok()?;
    Some(serde_json::from_str::<Marker>(&text).ok()?.synced_from)
}

fn has_markdown(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "md"))
    })
}

/// Claude Code's decision (see the module docs). Times compare as instants.
pub fn snapshot_decision(
    snapshot: &Path,
    agent_dir: &Path,
) -> (SnapshotAction, Option<String>, Option<String>) {
    let Some(updated_at) = snapshot_updated_at(snapshot) else {
        return (SnapshotAction::None, None, synced_from(agent_dir));
    };
    let synced = synced_from(agent_dir);
    let action = if !has_markdown(agent_dir) {
        SnapshotAction::Initialize
    } else {
        let instant = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
        match synced.as_deref().and_then(instant) {
            Some(synced_at) if instant(&updated_at).is_some_and(|u| u <= synced_at) => {
                SnapshotAction::None
            }
            _ => SnapshotAction::PromptUpdate,
        }
    };
    (action, Some(updated_at), synced)
}

/// The regular files directly in `dir` (flat), by name, without `snapshot.json` and the marker.
fn flat_files(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(Error::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.at(dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Symlinks and sub-dirs are not part of a snapshot: only regular files are copied.
        if !entry.file_type().at(entry.path())?.is_file()
            || name == SNAPSHOT_FILE
            || name == SYNC_MARKER
            || name.starts_with('.')
        {
            continue;
        }
        files.insert(name, disk::read_text(&entry.path())?);
    }
    Ok(files)
}

impl Engine {
    /// The memory dir of `agent_type` in `scope` (`cwd`: the project, for project and local).
    pub fn agent_memory_dir(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
    ) -> Result<PathBuf> {
        let name = dir_name(agent_type)?;
        Ok(match scope {
            AgentScope::User => self.user_scope_agent_memory().join(name),
            AgentScope::Project => crate::paths::project_scope_agent_memory(cwd).join(name),
            AgentScope::Local => crate::paths::local_scope_agent_memory(cwd).join(name),
        })
    }

    /// Every agent memory dir: the user scope's, and the project and local scopes' under every
    /// known project's working dir (and `extra_projects`), plus agents that only have a snapshot
    /// (to initialize) — sorted by agent type, then scope.
    pub fn list_agent_memories(&self, extra_projects: &[PathBuf]) -> Result<Vec<AgentMemory>> {
        let projects = self.project_working_dirs(extra_projects)?;
        let stores = stores_under(&self.memory_base(), &projects);
        let mut found: Vec<AgentMemory> = stores
            .iter()
            .map(|store| {
                let label = &store.label;
                self.describe(
                    &label.agent_type,
                    label.scope,
                    store.dir.clone(),
                    store.cwd.as_ref(),
                )
            })
            .collect();
        // A snapshot with no local memory yet: offered for initialization (project scope).
        for cwd in &projects {
            for agent_type in subdirs(&cwd.join(".claude").join(SNAPSHOT_BASE)) {
                let has_memory = stores.iter().any(|s| {
                    s.cwd.as_ref() == Some(cwd)
                        && s.label.agent_type == agent_type.replace(':', "-")
                });
                if !has_memory {
                    if let Ok(dir) = self.agent_memory_dir(&agent_type, AgentScope::Project, cwd) {
                        found.push(self.describe(&agent_type, AgentScope::Project, dir, Some(cwd)));
                    }
                }
            }
        }
        found.sort_by(|a, b| {
            (&a.agent_type, a.scope, &a.project).cmp(&(&b.agent_type, b.scope, &b.project))
        });
        Ok(found)
    }

    /// The working dirs of every project Claude Code has seen, and `extra`, sorted, once each.
    fn project_working_dirs(&self, extra: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let mut cwds: Vec<PathBuf> = self
            .project_names()?
            .iter()
            .filter_map(|name| {
                crate::projects::project_path(name, &self.project_transcripts_dir_of(name))
            })
            .chain(extra.iter().cloned())
            .collect();
        cwds.sort();
        cwds.dedup();
        Ok(cwds)
    }

    fn describe(
        &self,
        agent_type: &str,
        scope: AgentScope,
        dir: PathBuf,
        cwd: Option<&PathBuf>,
    ) -> AgentMemory {
        let files = self
            .memory_dir(&dir)
            .scan(None)
            .map(|headers| headers.len())
            .unwrap_or(0);
        let (snapshot, snapshot_updated_at, synced_from) = match cwd {
            Some(cwd) => match snapshot_dir(cwd, agent_type) {
                Ok(snapshot) => snapshot_decision(&snapshot, &dir),
                Err(_) => (SnapshotAction::None, None, None),
            },
            None => (SnapshotAction::None, None, synced_from(&dir)),
        };
        let store = store_name(
            scope,
            &agent_type.replace(':', "-"),
            cwd.map(PathBuf::as_path),
        );
        AgentMemory {
            agent_type: agent_type.to_owned(),
            scope,
            store,
            dir,
            files,
            snapshot,
            snapshot_updated_at,
            synced_from,
            project: cwd.cloned(),
        }
    }

    /// Every agent memory dir that exists — the user scope's, and the project and local scopes'
    /// under each project's working dir — without the snapshot checks and file counts of
    /// [`Engine::list_agent_memories`]: what a search walks.
    pub(crate) fn agent_stores(&self) -> Result<Vec<AgentStore>> {
        Ok(stores_under(
            &self.memory_base(),
            &self.project_working_dirs(&[])?,
        ))
    }

    /// The memory dir a store name stands for: a project's folder name (its memory dir, checked
    /// as [`Engine::project_memory_dir_checked`] does) or an agent memory store
    /// ([`AgentMemory::store`]), whose working dir must be a project Claude Code has seen. Any
    /// other name is refused: the app reaches only these dirs.
    pub fn memory_store_dir_checked(&self, name: &str) -> Result<PathBuf> {
        let Some(agent) = name.strip_prefix(STORE_PREFIX) else {
            return self.project_memory_dir_checked(name);
        };
        let invalid = || Error::InvalidInput(format!("{name:?} names no agent memory"));
        let mut parts = agent.splitn(3, ':');
        let (Some(scope), Some(dir), Some(cwd)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(invalid());
        };
        let scope: AgentScope = scope.parse()?;
        if dir_name(dir)? != dir {
            return Err(invalid());
        }
        match (scope, cwd.is_empty()) {
            (AgentScope::User, true) => self.agent_memory_dir(dir, scope, Path::new("")),
            (AgentScope::User, false) | (_, true) => Err(invalid()),
            (_, false) => {
                let cwd = self.known_project_dir(Path::new(cwd))?;
                self.agent_memory_dir(dir, scope, &cwd)
            }
        }
    }

    /// `cwd` if it is the working dir of a project Claude Code has seen (what the app may name);
    /// anything else is refused, so a window cannot aim agent-memory writes elsewhere.
    pub fn known_project_dir(&self, cwd: &Path) -> Result<PathBuf> {
        self.list_projects()?
            .into_iter()
            .filter_map(|p| p.path)
            .find(|p| p == cwd)
            .ok_or_else(|| Error::PathDenied {
                path: cwd.to_path_buf(),
                root: self.claude_home().join("projects"),
            })
    }

    /// Copies the snapshot into an agent dir that has no `*.md` yet, then writes the marker.
    pub fn initialize_agent_memory(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
    ) -> Result<AgentMemory> {
        let dir = self.agent_memory_dir(agent_type, scope, cwd)?;
        let snapshot = snapshot_dir(cwd, agent_type)?;
        let (action, updated_at, _) = snapshot_decision(&snapshot, &dir);
        let Some(updated_at) = updated_at else {
            return Err(Error::InvalidInput(format!(
                "{}: no valid snapshot (snapshot.json with updatedAt)",
                snapshot.display()
            )));
        };
        if action != SnapshotAction::Initialize {
            return Err(Error::InvalidInput(format!(
                "{}: already holds memory; merge (--merge) or replace (--replace) instead",
                dir.display()
            )));
        }
        let mut set = ChangeSet::new(&dir);
        for (name, content) in flat_files(&snapshot)? {
            set.stage_write(&name, content, "initialize from the team's snapshot")?;
        }
        self.land_snapshot(&set, &updated_at)?;
        Ok(self.describe(agent_type, scope, dir, Some(&cwd.to_path_buf())))
    }

    /// Applies a snapshot's copy into the agent dir (recorded in history as `snapshot`), then
    /// marks the dir as synced with `updated_at`.
    fn land_snapshot(&self, set: &ChangeSet, updated_at: &str) -> Result<()> {
        crate::disk::create_dir_all(&set.root).at(&set.root)?;
        self.apply_change_set(set, Actor::Snapshot)?
            .first_failure()?;
        write_marker(&set.root, updated_at)
    }

    /// Deletes the agent dir's `*.md`, then copies the snapshot and writes the marker (Claude
    /// Code's "replace"). Applied at once: the person chose to take the team's version whole.
    pub fn replace_agent_memory(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
    ) -> Result<AgentMemory> {
        let dir = self.agent_memory_dir(agent_type, scope, cwd)?;
        let snapshot = snapshot_dir(cwd, agent_type)?;
        let updated_at = snapshot_updated_at(&snapshot).ok_or_else(|| {
            Error::InvalidInput(format!("{}: no valid snapshot", snapshot.display()))
        })?;
        let incoming = flat_files(&snapshot)?;
        let mut set = ChangeSet::new(&dir);
        for name in flat_files(&dir)?.keys() {
            if name.ends_with(".md") && !incoming.contains_key(name) {
                set.stage_delete(name, "replaced by the team's snapshot")?;
            }
        }
        for (name, content) in incoming {
            set.stage_write(&name, content, "replaced by the team's snapshot")?;
        }
        self.land_snapshot(&set, &updated_at)?;
        Ok(self.describe(agent_type, scope, dir, Some(&cwd.to_path_buf())))
    }

    /// Writes the agent's local memory out as a snapshot for the team to commit: its `*.md` files
    /// and `snapshot.json` with a new `updatedAt`; a file the secret scan flags is refused (and
    /// named). Marks the local dir as synced with what it published.
    pub fn publish_agent_memory(
        &self,
        agent_type: &str,
        scope: AgentScope,
        cwd: &Path,
    ) -> Result<PublishReport> {
        let dir = self.agent_memory_dir(agent_type, scope, cwd)?;
        let snapshot = snapshot_dir(cwd, agent_type)?;
        let files = flat_files(&dir)?;
        if !files.keys().any(|n| n.ends_with(".md")) {
            return Err(Error::InvalidInput(format!(
                "{}: no memory to publish",
                dir.display()
            )));
        }
        let mut report = PublishReport {
            snapshot: snapshot.clone(),
            published: Vec::new(),
            refused: Vec::new(),
            updated_at: crate::staleness::iso_time(self.clock().now()),
        };
        crate::disk::create_dir_all(&snapshot).at(&snapshot)?;
        let mut writes = Vec::new();
        for (name, content) in files.into_iter().filter(|(n, _)| n.ends_with(".md")) {
            match crate::secrets::scan_shared_file(&name, content.as_bytes())
                .into_iter()
                .next()
            {
                Some(finding) => report.refused.push(RefusedSecret {
                    file: name,
                    rule: finding.rule.to_owned(),
                    line: finding.line.unwrap_or(0),
                    in_name: finding.line.is_none(),
                }),
                None => {
                    writes.push((snapshot.join(&name), content));
                    report.published.push(name);
                }
            }
        }
        let meta = serde_json::json!({ "updatedAt": report.updated_at }).to_string();
        writes.push((snapshot.join(SNAPSHOT_FILE), meta));
        for (path, content) in &writes {
            disk::atomic_write(path, content.as_bytes())?;
        }
        write_marker(&dir, &report.updated_at)?;
        Ok(report)
    }
}

/// What [`Engine::publish_agent_memory`] wrote.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishReport {
    pub snapshot: PathBuf,
    pub updated_at: String,
    pub published: Vec<String>,
    pub refused: Vec<RefusedSecret>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedSecret {
    pub file: String,
    pub rule: String,
    /// The 1-based line; 0 when the secret is in the file's name (`in_name`).
    pub line: usize,
    pub in_name: bool,
}

fn write_marker(dir: &Path, updated_at: &str) -> Result<()> {
    let json = serde_json::json!({ "syncedFrom": updated_at }).to_string();
    disk::atomic_write(&dir.join(SYNC_MARKER), json.as_bytes())
}

/// The names of the directories directly under `dir` (none when it does not exist).
/// Every agent memory dir that exists: the user scope's under `memory_base`, and the project and
/// local scopes' under each of `cwds`.
fn stores_under(memory_base: &Path, cwds: &[PathBuf]) -> Vec<AgentStore> {
    let mut stores = Vec::new();
    let user_root = memory_base.join("agent-memory");
    for name in subdirs(&user_root) {
        stores.push(AgentStore {
            store: store_name(AgentScope::User, &name, None),
            dir: user_root.join(&name),
            cwd: None,
            label: AgentLabel {
                agent_type: name,
                scope: AgentScope::User,
            },
        });
    }
    for cwd in cwds {
        for (scope, folder) in [
            (AgentScope::Project, "agent-memory"),
            (AgentScope::Local, "agent-memory-local"),
        ] {
            let root = cwd.join(".claude").join(folder);
            for name in subdirs(&root) {
                stores.push(AgentStore {
                    store: store_name(scope, &name, Some(cwd)),
                    dir: root.join(&name),
                    cwd: Some(cwd.clone()),
                    label: AgentLabel {
                        agent_type: name,
                        scope,
                    },
                });
            }
        }
    }
    stores
}

fn subdirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests;
