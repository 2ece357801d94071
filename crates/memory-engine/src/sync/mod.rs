//! Personal sync (`docs/sync.md`): one person's memory on every machine through their own git
//! remote, riding the git engine team sync uses ([`crate::git_repo`]).
//!
//! What syncs: every project's memory dir (topic files, `MEMORY.md`, `logs/`) and the user
//! scope's agent memory — never a memory dir's `team/` (it has its own remote), never a dot-file,
//! never Engram's data dir or transcripts. The remote holds `manifest.json` (folder → identity),
//! `projects/<folder>/…` and `agent-memory/<agent>/…`. A project's identity is the one attached by
//! hand (`[sync.map]`), else its canonical git root's origin URL normalised
//! ([`identity::normalize_origin`]), else its working dir relative to the home (`~/code/app`),
//! else its folder name; the folder is the identity made one plain name.
//!
//! Contract:
//! - **Pull**: per file, a change only the remote made lands (history names it `sync`); a file
//!   changed on both sides becomes a staged change set (source `sync`), the local file untouched
//!   until accepted — except `MEMORY.md`, merged entry by entry ([`crate::index::merge_edit`]) when
//!   the two edits can both stand; a deletion lands only where the local file is unchanged since
//!   the last sync. Every incoming path is checked with the team key rules against the memory dir
//!   it lands in and secret-scanned (refused files are named, never written); nothing is written
//!   outside a memory dir; a remote folder no local project has is left on the remote, listed by
//!   `status` as not on this machine.
//! - **Push**: only when asked (the CLI never pushes by itself); never a force push; a remote
//!   that moved since the last pull must be pulled first; a file holding a secret, or whose
//!   conflict waits for review, is named and not pushed (the remote keeps its version).
//! - Two paths that differ only in case, both on the remote or one there and one here, are a
//!   case conflict named in `skipped` by pull and push alike: never one written over the other,
//!   never a second spelling added to the remote ([`crate::git_repo::CaseClashes`]).
//! - A remote whose history no longer holds the last synced commit (rewritten by a force push)
//!   is refused by pull and push alike, naming it; a remote that cannot be read is an error
//!   naming it. In both cases nothing local changed.

pub mod auto;
pub mod identity;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::config::SyncConfig;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::git_repo::{
    git_program, local_files, parse_remote, refused_on_pull, CaseClashes, Git, Tree,
};
use crate::index::{is_index_file, merge_edit};
use crate::staging::{ChangeSource, StagedChangeSet};
use crate::team::validate_key;

pub use crate::team::sync::Skipped;

const MANIFEST: &str = "manifest.json";
const PROJECTS: &str = "projects";
const AGENT_MEMORY: &str = "agent-memory";
/// The `project` staged sets of user-scope agent memory name: any plain name derives the agent
/// memory dir from the set's own `memoryDir` folder name.
const AGENT_MEMORY_PROJECT: &str = "agent-memory";

/// What a pull or a push did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonalSyncReport {
    /// Remote paths (`projects/<folder>/<file>`) written, deleted or pushed.
    pub files: Vec<String>,
    /// Files skipped, with why (a refused path, a secret, a conflict waiting for review).
    pub skipped: Vec<Skipped>,
    /// The staged sets of conflicts to review, one per memory dir.
    pub conflicts: Vec<StagedChangeSet>,
    pub commit: Option<String>,
}

/// `engram sync status --json`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    pub remote: Option<String>,
    /// Local files changed since the last sync (what a push would send).
    pub ahead: usize,
    /// Remote files changed since the last sync (what a pull would bring).
    pub behind: usize,
    /// Files changed on both sides, or waiting in a staged conflict set.
    pub conflicts: usize,
    pub projects: Vec<SyncedProject>,
}

/// One project (or user-scope agent's memory) as sync sees it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncedProject {
    pub identity: String,
    /// `None` for a project the remote knows but this machine has not seen.
    pub memory_dir: Option<PathBuf>,
    /// `in-sync`, `ahead`, `behind`, `ahead-behind`, `conflicts`, `local-only` (never pushed)
    /// or `not-on-this-machine`.
    pub state: String,
}

/// What `engram sync map` attached.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncMapped {
    pub identity: String,
    pub project: String,
    pub memory_dir: PathBuf,
}

/// `manifest.json` on the remote: which identity each folder holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    projects: BTreeMap<String, ManifestEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ManifestEntry {
    identity: String,
}

/// One local dir that syncs: a project's memory dir or a user-scope agent's.
#[derive(Debug, Clone)]
struct Unit {
    identity: String,
    /// The project folder name staged sets name.
    project: String,
    memory_dir: PathBuf,
}

/// The remote prefix (`projects/<folder>` or `agent-memory/<agent>`) and the rest of `key`.
fn split_key(key: &str) -> Option<(String, &str)> {
    let (top, rest) = key.split_once('/')?;
    let (folder, rest) = rest.split_once('/')?;
    (matches!(top, PROJECTS | AGENT_MEMORY) && identity::is_plain_folder(folder))
        .then(|| (format!("{top}/{folder}"), rest))
}

/// The files of `base` under a prefix this machine has synced with.
fn synced_only(
    base: &BTreeMap<String, String>,
    synced: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    base.iter()
        .filter(|(key, _)| split_key(key).is_some_and(|(prefix, _)| synced.contains(&prefix)))
        .map(|(key, text)| (key.clone(), text.clone()))
        .collect()
}

fn manifest_of(tree: &Tree) -> Manifest {
    tree.files
        .get(MANIFEST)
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

impl Engine {
    fn sync_state_dir(&self) -> PathBuf {
        self.engram_home().join("sync")
    }

    fn sync_config(&self) -> Result<SyncConfig> {
        let config = self.load_config()?.sync;
        if config.remote.is_empty() {
            return Err(Error::InvalidInput(
                "no sync remote: engram sync remote set URL[#branch]".to_owned(),
            ));
        }
        Ok(config)
    }

    /// Sets the personal sync remote (`URL` or `URL#branch`).
    pub fn set_sync_remote(&self, spec: &str) -> Result<SyncConfig> {
        let (remote, branch) = parse_remote(spec)?;
        let mut config = self.load_config()?;
        if config.sync.remote != remote || config.sync.branch != branch {
            // Another remote: the old clone and base say nothing about it.
            let _ = std::fs::remove_dir_all(self.sync_state_dir());
        }
        config.sync.remote = remote;
        config.sync.branch = branch;
        let saved = config.sync.clone();
        self.save_config(&config)?;
        Ok(saved)
    }

    /// Turns `[sync] auto` on or off (the app's debounced push after applied changes).
    pub fn set_sync_auto(&self, auto: bool) -> Result<SyncConfig> {
        let mut config = self.load_config()?;
        config.sync.auto = auto;
        let saved = config.sync.clone();
        self.save_config(&config)?;
        Ok(saved)
    }

    /// The status the last [`Engine::sync_status`] found (no fetch): what the tray shows.
    pub fn sync_last_status(&self) -> Option<SyncStatus> {
        let text = std::fs::read_to_string(self.sync_state_dir().join("status.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Attaches `identity` by hand to the local project whose working dir is `path`.
    pub fn map_sync_identity(&self, identity: &str, path: &Path) -> Result<SyncMapped> {
        let identity = identity.trim();
        if identity.is_empty() || identity.contains('\0') {
            return Err(Error::InvalidInput(format!(
                "{identity:?} is not a project identity"
            )));
        }
        let real = crate::platform::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
        let project = crate::paths::sanitize_path(&real.to_string_lossy());
        let memory_dir = self.resolve_memory_dir(&real)?.memory_dir;
        // The memory dir makes the project one this machine has, listed or not.
        disk::create_dir_all(&memory_dir).map_err(|e| Error::io(&memory_dir, e))?;
        let mut config = self.load_config()?;
        config.sync.map.insert(project.clone(), identity.to_owned());
        self.save_config(&config)?;
        Ok(SyncMapped {
            identity: identity.to_owned(),
            project,
            memory_dir,
        })
    }

    /// The identity of the project named `name` whose working dir is `cwd` (see the module docs).
    fn project_identity(&self, config: &SyncConfig, name: &str, cwd: Option<&Path>) -> String {
        if let Some(mapped) = config.map.get(name) {
            return mapped.clone();
        }
        if let Some(cwd) = cwd {
            let origin = crate::paths::canonical_git_root(cwd)
                .and_then(|root| {
                    let git = git_program(self.env(), config.git.as_deref()).ok()?;
                    identity::origin_url(&git, &root)
                })
                .and_then(|url| identity::normalize_origin(&url));
            if let Some(origin) = origin {
                return origin;
            }
            let home = self.env().home_dir();
            let relative = home.and_then(|home| {
                let home = crate::platform::fs::canonicalize(&home).unwrap_or(home);
                let cwd =
                    crate::platform::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
                cwd.strip_prefix(&home)
                    .ok()
                    .and_then(Path::to_str)
                    .filter(|r| !r.is_empty())
                    .map(|r| format!("~/{}", r.replace('\\', "/")))
            });
            if let Some(relative) = relative {
                return relative;
            }
        }
        name.to_owned()
    }

    /// Every local dir that syncs, by remote prefix; a second project with an identity already
    /// taken is named in `skipped`.
    fn sync_units(&self, config: &SyncConfig) -> Result<(BTreeMap<String, Unit>, Vec<Skipped>)> {
        let mut units: BTreeMap<String, Unit> = BTreeMap::new();
        let mut skipped = Vec::new();
        let mut seen_dirs = BTreeSet::new();
        for name in self.project_names()? {
            let cwd = self.listed_project_path(&name);
            // Where Claude Code keeps this project's memory: all worktrees of a repo share one.
            let memory_dir = cwd
                .as_deref()
                .and_then(|cwd| self.resolve_memory_dir(cwd).ok())
                .map(|r| r.memory_dir)
                .unwrap_or_else(|| self.project_memory_dir(&name));
            if !seen_dirs.insert(disk::resolved_path(&memory_dir)) {
                continue;
            }
            let identity = self.project_identity(config, &name, cwd.as_deref());
            let prefix = format!("{PROJECTS}/{}", identity::folder_of(&identity));
            if let Some(first) = units.get(&prefix) {
                skipped.push(Skipped {
                    file: memory_dir.to_string_lossy().into_owned(),
                    reason: format!(
                        "its identity {identity:?} is also {}'s: not synced \
                         (engram sync map IDENTITY PATH tells them apart)",
                        first.memory_dir.display()
                    ),
                });
                continue;
            }
            units.insert(
                prefix,
                Unit {
                    identity,
                    project: name,
                    memory_dir,
                },
            );
        }
        let agents = self.user_scope_agent_memory();
        if let Ok(entries) = std::fs::read_dir(&agents) {
            for entry in entries.flatten() {
                let Some(agent) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if entry.file_type().is_ok_and(|t| t.is_dir()) && identity::is_plain_folder(&agent)
                {
                    units.insert(
                        format!("{AGENT_MEMORY}/{agent}"),
                        agent_unit(&agents, &agent),
                    );
                }
            }
        }
        Ok((units, skipped))
    }

    /// The clone, made on first use, fetched; returns it, the branch and the remote's commit —
    /// refusing a remote rewritten since the last sync.
    fn sync_fetched(&self) -> Result<(Git, String, Option<String>, Option<String>)> {
        let config = self.sync_config()?;
        let branch = config.branch.clone().unwrap_or_else(|| "main".to_owned());
        let dir = self.sync_state_dir().join("clone");
        let git = Git {
            dir: dir.clone(),
            program: git_program(self.env(), config.git.as_deref())?,
        };
        if !dir.join(".git").is_dir() {
            disk::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            git.run(&["init", "-q"])?;
            git.run(&["remote", "add", "origin", &config.remote])?;
        }
        git.run(&["fetch", "-q", "origin"]).map_err(|e| {
            Error::InvalidInput(format!(
                "the sync remote {} cannot be read ({e}); nothing changed here",
                config.remote
            ))
        })?;
        let theirs = git.rev(&format!("refs/remotes/origin/{branch}"));
        let base = self.sync_base();
        if let Some(base) = &base {
            let kept = theirs
                .as_deref()
                .is_some_and(|theirs| git.is_ancestor(base, theirs));
            if !kept {
                return Err(Error::InvalidInput(format!(
                    "the sync remote {} was rewritten: branch {branch} no longer holds commit {base}, \
                     the last one synced here (a force push?); refused, nothing changed here. \
                     Restore the branch, or set the remote again to start over from it",
                    config.remote
                )));
            }
        }
        Ok((git, branch, theirs, base))
    }

    fn sync_base(&self) -> Option<String> {
        std::fs::read_to_string(self.sync_state_dir().join("base"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    }

    fn set_sync_base(&self, commit: &str) -> Result<()> {
        disk::atomic_write(&self.sync_state_dir().join("base"), commit.as_bytes())
    }

    /// The remote prefixes this machine has synced with (pulled, or pushed into an empty
    /// place): only for those does the base say what this machine last had. A project met for
    /// the first time (just mapped, just cloned) has no base: what the remote holds for it is
    /// new here, never "deleted here".
    fn synced_prefixes(&self) -> BTreeSet<String> {
        std::fs::read_to_string(self.sync_state_dir().join("synced.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn set_synced_prefixes(&self, prefixes: &BTreeSet<String>) -> Result<()> {
        let text = serde_json::to_vec(prefixes)
            .map_err(|e| Error::InvalidInput(format!("sync state: {e}")))?;
        disk::atomic_write(&self.sync_state_dir().join("synced.json"), &text)
    }

    /// The remote keys whose conflict still waits for review, each with its staged set's id.
    fn waiting_sync_conflicts(
        &self,
        units: &BTreeMap<String, Unit>,
    ) -> Result<BTreeMap<String, String>> {
        let by_dir: BTreeMap<PathBuf, &String> = units
            .iter()
            .map(|(prefix, unit)| (disk::resolved_path(&unit.memory_dir), prefix))
            .collect();
        let mut waiting = BTreeMap::new();
        for set in self.staged_change_sets()? {
            if set.source != ChangeSource::Sync {
                continue;
            }
            let Some(prefix) = by_dir.get(&disk::resolved_path(&set.memory_dir)) else {
                continue;
            };
            for file in set.waiting_files() {
                waiting
                    .entry(format!("{prefix}/{}", file.change.file))
                    .or_insert_with(|| set.id.clone());
            }
        }
        Ok(waiting)
    }

    /// User-scope agent memory is the same on every machine: an agent the remote has is one
    /// this machine syncs too (a pull makes its dir).
    fn add_remote_agents(
        &self,
        units: &mut BTreeMap<String, Unit>,
        theirs: &BTreeMap<String, String>,
    ) {
        let agents = self.user_scope_agent_memory();
        for key in theirs.keys() {
            if let Some((prefix, _)) = split_key(key) {
                if let Some(agent) = prefix.strip_prefix(&format!("{AGENT_MEMORY}/")) {
                    let agent = agent.to_owned();
                    units
                        .entry(prefix)
                        .or_insert_with(|| agent_unit(&agents, &agent));
                }
            }
        }
    }

    /// Every local file that syncs, by remote key (a memory dir's `team/` left out), and the
    /// ones that cannot be read, with why.
    fn sync_local_files(
        &self,
        units: &BTreeMap<String, Unit>,
    ) -> Result<(BTreeMap<String, String>, BTreeMap<String, String>)> {
        let (mut files, mut unreadable) = (BTreeMap::new(), BTreeMap::new());
        for (prefix, unit) in units {
            let local = local_files(&unit.memory_dir)?;
            let not_team = |key: &String| !(key == "team" || key.starts_with("team/"));
            for (key, text) in local.files.into_iter().filter(|(k, _)| not_team(k)) {
                files.insert(format!("{prefix}/{key}"), text);
            }
            for (key, why) in local.unreadable.into_iter().filter(|(k, _)| not_team(k)) {
                unreadable.insert(format!("{prefix}/{key}"), why);
            }
        }
        Ok((files, unreadable))
    }

    /// Brings this person's changes from their other machines in (see the module docs).
    pub fn sync_pull(&self) -> Result<PersonalSyncReport> {
        let config = self.sync_config()?;
        let (git, _branch, theirs_rev, base_rev) = self.sync_fetched()?;
        let base_tree = git.tree_at(base_rev.as_deref())?;
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let synced = self.synced_prefixes();
        let base = &synced_only(&base_tree.files, &synced);
        let theirs = &theirs_tree.files;
        let (mut units, mut skipped) = self.sync_units(&config)?;
        let mut report = PersonalSyncReport::default();
        report.skipped.append(&mut skipped);
        for (key, why) in &theirs_tree.unsynced {
            let unchanged = match (theirs_tree.entries.get(key), base_tree.entries.get(key)) {
                (Some(now), Some(before)) => now.same_as(before),
                _ => false,
            };
            if !unchanged {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: format!("{why}: not synced"),
                });
            }
        }
        self.add_remote_agents(&mut units, theirs);
        let (local, unreadable) = self.sync_local_files(&units)?;
        let case_clashes = CaseClashes::new(
            theirs.keys().map(String::as_str),
            local.keys().chain(unreadable.keys()).map(String::as_str),
        );
        let keys: BTreeSet<&String> = theirs
            .keys()
            .chain(base.keys())
            .filter(|key| !theirs_tree.unsynced.contains_key(*key) && key.as_str() != MANIFEST)
            .collect();
        let mut plans: BTreeMap<String, (ChangeSet, ChangeSet)> = BTreeMap::new();
        for key in keys {
            let (b, t, l) = (base.get(key), theirs.get(key), local.get(key));
            if t == l || t == b {
                continue; // in sync, or only the local side moved (a push carries it)
            }
            let Some((prefix, rest)) = split_key(key) else {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: "not under projects/<folder>/ or agent-memory/<agent>/: not synced"
                        .into(),
                });
                continue;
            };
            let Some(unit) = units.get(&prefix) else {
                continue; // a project this machine has not seen: kept on the remote
            };
            if let Some(why) = unreadable.get(key) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: format!("changed on another machine, but here {why}: left as it is"),
                });
                continue;
            }
            if rest == "team" || rest.starts_with("team/") {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: "team memory syncs through team sync only: not written".into(),
                });
                continue;
            }
            disk::create_dir_all(&unit.memory_dir).map_err(|e| Error::io(&unit.memory_dir, e))?;
            if let Err(refused) = validate_key(&unit.memory_dir, rest) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    // The team key rules, said of a memory dir.
                    reason: refused
                        .to_string()
                        .replacen("team key", "path", 1)
                        .replace("outside team/", "outside the memory dir"),
                });
                continue;
            }
            if let Some(why) = refused_on_pull(rest, key, t, &case_clashes) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: why,
                });
                continue;
            }
            let (clean, conflicts) = plans.entry(prefix.clone()).or_insert_with(|| {
                (
                    ChangeSet::new(&unit.memory_dir),
                    ChangeSet::new(&unit.memory_dir),
                )
            });
            // Both sides edited the index: entry by entry, when the two edits can both stand.
            let merged = match (b, t, l) {
                (Some(b), Some(t), Some(l)) if is_index_file(rest) => merge_edit(b, t, l),
                _ => None,
            };
            match (l == b, t, merged) {
                (_, _, Some(merged)) => clean.stage_write(
                    rest,
                    merged,
                    "MEMORY.md changed here and on another machine: merged entry by entry",
                )?,
                (true, Some(t), None) => {
                    clean.stage_write(rest, t.clone(), "changed on another machine")?
                }
                (true, None, None) => clean.stage_delete(rest, "deleted on another machine")?,
                (false, Some(t), None) => conflicts.stage_write(
                    rest,
                    t.clone(),
                    "changed here and on another machine: theirs shown over yours",
                )?,
                (false, None, None) => conflicts.stage_delete(
                    rest,
                    "deleted on another machine, changed here: deleting it is yours to decide",
                )?,
            }
        }
        for (prefix, (clean, conflicts)) in plans {
            if !clean.is_empty() {
                self.apply_change_set(&clean, Actor::Sync)?
                    .first_failure()?;
                report
                    .files
                    .extend(clean.changes.iter().map(|c| format!("{prefix}/{}", c.file)));
            }
            if !conflicts.is_empty() {
                let unit = &units[&prefix];
                let summary = format!(
                    "sync: {} changed here and on another machine ({})",
                    conflicts.summary(),
                    unit.identity
                );
                let staged = self.stage_change_set(
                    &conflicts,
                    ChangeSource::Sync,
                    &unit.project,
                    &summary,
                    None,
                )?;
                report.conflicts.push(staged);
            }
        }
        if let Some(theirs_rev) = &theirs_rev {
            self.set_sync_base(theirs_rev)?;
        }
        self.set_synced_prefixes(&synced.into_iter().chain(units.into_keys()).collect())?;
        report.commit = theirs_rev;
        Ok(report)
    }

    /// Sends this machine's memory to the remote (see the module docs). Running it is the
    /// person's own decision.
    pub fn sync_push(&self) -> Result<PersonalSyncReport> {
        let config = self.sync_config()?;
        let (git, branch, theirs_rev, base_rev) = self.sync_fetched()?;
        if theirs_rev.is_some() && theirs_rev != base_rev {
            return Err(Error::InvalidInput(
                "the remote has changes from another machine not pulled yet: run `engram sync pull` first"
                    .into(),
            ));
        }
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let (units, skipped) = self.sync_units(&config)?;
        let (local, unreadable) = self.sync_local_files(&units)?;
        let mut report = PersonalSyncReport {
            skipped,
            ..PersonalSyncReport::default()
        };
        // A file whose conflict waits for review is not pushed: the pull moved the base to
        // theirs, so an unreviewed local version would overwrite the other machine's.
        let mut held: BTreeMap<String, String> = self
            .waiting_sync_conflicts(&units)?
            .into_iter()
            .map(|(key, id)| {
                let why = format!(
                    "a conflict with another machine's change waits for review \
                     (engram changes show {id}): not pushed"
                );
                (key, why)
            })
            .collect();
        for (key, why) in &unreadable {
            held.entry(key.clone())
                .or_insert_with(|| format!("{why}: not pushed"));
        }
        report
            .skipped
            .extend(held.iter().map(|(file, reason)| Skipped {
                file: file.clone(),
                reason: reason.clone(),
            }));
        match &theirs_rev {
            Some(rev) => {
                git.run(&["checkout", "-q", "-f", "-B", &branch, rev])?;
            }
            None => {
                git.run(&["symbolic-ref", "HEAD", &format!("refs/heads/{branch}")])?;
            }
        }
        git.run(&["rm", "-q", "-r", "--cached", "--ignore-unmatch", "."])?;
        for entry in std::fs::read_dir(&git.dir)
            .map_err(|e| Error::io(&git.dir, e))?
            .flatten()
        {
            if entry.file_name() != ".git" {
                let path = entry.path();
                let _ = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
            }
        }
        let synced = self.synced_prefixes();
        let on_remote: BTreeSet<String> = theirs_tree
            .entries
            .keys()
            .filter_map(|key| split_key(key).map(|(prefix, _)| prefix))
            .collect();
        // Never synced here but already on the remote (mapped, or pushed from another machine
        // first): the remote's files stay until a pull has brought them in.
        let unpulled = |prefix: &String| !synced.contains(prefix) && on_remote.contains(prefix);
        let case_clashes = CaseClashes::new(
            theirs_tree.files.keys().map(String::as_str),
            local.keys().chain(unreadable.keys()).map(String::as_str),
        );
        // The remote's files of another spelling that a skipped local file must not remove.
        let mut kept_twins = BTreeSet::new();
        for (key, content) in local {
            if held.contains_key(&key) {
                continue;
            }
            if let Some((why, twin)) = case_clashes.on_push(&key) {
                kept_twins.extend(twin);
                report.skipped.push(Skipped {
                    file: key,
                    reason: why,
                });
                continue;
            }
            if split_key(&key).is_some_and(|(prefix, _)| unpulled(&prefix))
                && theirs_tree.entries.contains_key(&key)
            {
                report.skipped.push(Skipped {
                    file: key,
                    reason: "the remote has its own version and this project was never pulled \
                             here: run `engram sync pull` first"
                        .into(),
                });
                continue;
            }
            if let Some(why) = theirs_tree.unsynced.get(&key) {
                report.skipped.push(Skipped {
                    file: key,
                    reason: format!("the remote holds {why} under this name: not pushed"),
                });
                continue;
            }
            let rest = split_key(&key).map_or(key.as_str(), |(_, rest)| rest);
            // The repository is checked out on the user's other machines, whatever their OS.
            if let Some((name, rule)) = crate::platform::names::windows_key_rule(rest) {
                let reason = format!(
                    "{name:?} {}: not pushed, so the sync repository stays portable",
                    rule.describe()
                );
                report.skipped.push(Skipped { file: key, reason });
                continue;
            }
            if let Some(secret) = crate::secrets::scan_shared_file(rest, content.as_bytes())
                .into_iter()
                .next()
            {
                report.skipped.push(Skipped {
                    file: key,
                    reason: format!("{secret}: not pushed"),
                });
                continue;
            }
            disk::atomic_write(&git.dir.join(&key), content.as_bytes())?;
            report.files.push(key);
        }
        // The manifest: what the remote knew, with this machine's projects over it.
        let mut manifest = manifest_of(&theirs_tree);
        manifest.version = 1;
        for (prefix, unit) in &units {
            if let Some(folder) = prefix.strip_prefix(&format!("{PROJECTS}/")) {
                manifest.projects.insert(
                    folder.to_owned(),
                    ManifestEntry {
                        identity: unit.identity.clone(),
                    },
                );
            }
        }
        let manifest_text = serde_json::to_string_pretty(&manifest)
            .map_err(|e| Error::InvalidInput(format!("sync manifest: {e}")))?;
        disk::atomic_write(
            &git.dir.join(MANIFEST),
            format!("{manifest_text}\n").as_bytes(),
        )?;
        git.run(&["add", "-A", "."])?;
        // Kept as the remote has them: a file skipped here, what never syncs, and every
        // project this machine has not seen.
        let skipped: BTreeSet<&str> = report.skipped.iter().map(|s| s.file.as_str()).collect();
        git.keep_in_index(theirs_tree.entries.iter().filter_map(|(key, entry)| {
            let unseen = key != MANIFEST
                && split_key(key)
                    .is_none_or(|(prefix, _)| !units.contains_key(&prefix) || unpulled(&prefix));
            (skipped.contains(key.as_str())
                || kept_twins.contains(key)
                || theirs_tree.unsynced.contains_key(key)
                || unseen)
                .then_some(entry)
        }))?;
        let changed = git.commit_staged("Memory from Engram")?;
        report.files.retain(|file| changed.contains(file));
        if changed.is_empty() {
            return Ok(report);
        }
        // Never forced: a remote that moved meanwhile refuses it, and the person pulls first.
        git.run(&["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")])
            .map_err(|e| {
                Error::InvalidInput(format!(
                    "the sync remote refused the push ({e}): run `engram sync pull` first"
                ))
            })?;
        let commit = git.rev("HEAD");
        if let Some(commit) = &commit {
            self.set_sync_base(commit)?;
        }
        let pushed_into_empty = units.keys().filter(|prefix| !on_remote.contains(*prefix));
        self.set_synced_prefixes(&synced.iter().chain(pushed_into_empty).cloned().collect())?;
        report.commit = commit;
        Ok(report)
    }

    /// Ahead / behind / conflicts against the remote (fetches), and each project's state.
    pub fn sync_status(&self) -> Result<SyncStatus> {
        let config = self.load_config()?.sync;
        let (mut units, _) = self.sync_units(&config)?;
        if config.remote.is_empty() {
            return Ok(SyncStatus {
                remote: None,
                ahead: 0,
                behind: 0,
                conflicts: 0,
                projects: units
                    .values()
                    .map(|unit| SyncedProject {
                        identity: unit.identity.clone(),
                        memory_dir: Some(unit.memory_dir.clone()),
                        state: "local-only".into(),
                    })
                    .collect(),
            });
        }
        let (git, _, theirs_rev, base_rev) = self.sync_fetched()?;
        let base = synced_only(
            &git.tree_at(base_rev.as_deref())?.files,
            &self.synced_prefixes(),
        );
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let theirs = &theirs_tree.files;
        self.add_remote_agents(&mut units, theirs);
        let (local, _) = self.sync_local_files(&units)?;
        let waiting = self.waiting_sync_conflicts(&units)?;
        let keys: BTreeSet<&String> = base
            .keys()
            .chain(theirs.keys())
            .chain(local.keys())
            .filter(|key| !theirs_tree.unsynced.contains_key(*key) && key.as_str() != MANIFEST)
            .collect();
        // Per prefix: (ahead, behind, conflicts).
        let mut per: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
        for key in waiting.keys() {
            if let Some((prefix, _)) = split_key(key) {
                per.entry(prefix).or_default().2 += 1;
            }
        }
        let mut on_remote: BTreeSet<String> = BTreeSet::new();
        for key in keys {
            let Some((prefix, _)) = split_key(key) else {
                continue;
            };
            if theirs.contains_key(key) {
                on_remote.insert(prefix.clone());
            }
            if waiting.contains_key(key) {
                continue;
            }
            let counts = per.entry(prefix).or_default();
            let (b, t, l) = (base.get(key), theirs.get(key), local.get(key));
            match (l != b, t != b) {
                (true, true) if l != t => counts.2 += 1,
                (true, false) => counts.0 += 1,
                (false, true) => counts.1 += 1,
                _ => {}
            }
        }
        let manifest = manifest_of(&theirs_tree);
        let mut status = SyncStatus {
            remote: Some(config.remote.clone()),
            ahead: 0,
            behind: 0,
            conflicts: 0,
            projects: Vec::new(),
        };
        for (prefix, unit) in &units {
            let (ahead, behind, conflicts) = per.get(prefix).copied().unwrap_or_default();
            let state = match (ahead, behind, conflicts) {
                (_, _, c) if c > 0 => "conflicts",
                (a, _, _) if a > 0 && !on_remote.contains(prefix) => "local-only",
                (a, b, _) if a > 0 && b > 0 => "ahead-behind",
                (a, _, _) if a > 0 => "ahead",
                (_, b, _) if b > 0 => "behind",
                _ => "in-sync",
            };
            status.projects.push(SyncedProject {
                identity: unit.identity.clone(),
                memory_dir: Some(unit.memory_dir.clone()),
                state: state.into(),
            });
        }
        let unseen: BTreeSet<String> = on_remote
            .iter()
            .filter(|prefix| !units.contains_key(*prefix))
            .cloned()
            .collect();
        for prefix in unseen {
            let folder = prefix.rsplit('/').next().unwrap_or_default();
            let identity = if prefix.starts_with(PROJECTS) {
                manifest
                    .projects
                    .get(folder)
                    .map_or_else(|| folder.to_owned(), |e| e.identity.clone())
            } else {
                prefix.clone()
            };
            status.projects.push(SyncedProject {
                identity,
                memory_dir: None,
                state: "not-on-this-machine".into(),
            });
        }
        for (prefix, (ahead, behind, conflicts)) in &per {
            // A remote-only project's files count as nothing to do here: pull leaves them there.
            if units.contains_key(prefix) {
                status.ahead += ahead;
                status.behind += behind;
                status.conflicts += conflicts;
            }
        }
        // Kept for the tray, which shows it without fetching; losing it only blanks that line.
        if let Ok(text) = serde_json::to_vec(&status) {
            let _ = disk::atomic_write(&self.sync_state_dir().join("status.json"), &text);
        }
        Ok(status)
    }
}

fn agent_unit(agents: &Path, agent: &str) -> Unit {
    Unit {
        identity: format!("{AGENT_MEMORY}/{agent}"),
        project: AGENT_MEMORY_PROJECT.to_owned(),
        memory_dir: agents.join(agent),
    }
}

#[cfg(test)]
mod tests;
