//! Team sync through git: the project's `team/` syncs with a remote the user configured (a repo,
//! or a branch of another repo with `URL#branch`), through the `git` executable — the user's own
//! credentials, SSH agent and `~/.ssh/config` work as they do for `git` itself (libgit2's SSH
//! support is known to fail there).
//!
//! Engram keeps a clone in its data dir (`<engram home>/team/<project>/clone`) and the commit last
//! synced (`base`). **Pull**: per file, theirs wins unless the local file changed too since the
//! base — then the two are a conflict staged for review (source `team`); every incoming key is
//! validated (§9) and every incoming file secret-scanned, path and content, before it is written
//! (refused files are reported, never written). **Push** (only when the user runs it): local
//! files that pass the key checks and the secret scan are committed and pushed; others are
//! skipped and reported, and keep the remote's version — so does a file whose conflict with a
//! teammate still waits for review; a remote that moved on since the last pull must be pulled
//! first. **Status**: ahead / behind / conflicts.
//!
//! Only UTF-8 text files under UTF-8 names sync. What else a remote may hold — a submodule, a
//! symbolic link, a dot-file such as `.gitattributes` or `.gitmodules`, a file or name that is not
//! UTF-8 — is never written into `team/` (a pull names it in `skipped`; the rest syncs) and a
//! push leaves it on the remote as it is; a local dot-file is never pushed, a local file that
//! is not UTF-8 is named and skipped.
//!
//! Two keys that differ only in case (`Deploy.md`, `deploy.md`) are one file on macOS and
//! Windows: a pull writes neither over the other and a push adds no second spelling to the
//! remote; each is named in `skipped` as a case conflict ([`crate::git_repo::CaseClashes`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::validate_key;
use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::config::ProjectTeamConfig;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};
pub use crate::git_repo::parse_remote;
use crate::git_repo::{git_program, local_files, refused_on_pull, CaseClashes, Git};
use crate::staging::{ChangeSource, StagedChangeSet};

/// `engram team status --json`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamStatus {
    pub remote: Option<String>,
    /// Local files changed since the last sync (what a push would send).
    pub ahead: usize,
    /// Remote files changed since the last sync (what a pull would bring).
    pub behind: usize,
    /// Files changed on both sides, or waiting in a staged conflict set.
    pub conflicts: usize,
}

/// What a pull or a push did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Files written, deleted or pushed.
    pub files: Vec<String>,
    /// Files skipped, with why (a refused key, a secret).
    pub skipped: Vec<Skipped>,
    /// The staged set of conflicts to review, if any.
    pub conflicts: Option<StagedChangeSet>,
    pub commit: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

impl Engine {
    fn team_state_dir(&self, project: &str) -> PathBuf {
        self.engram_home().join("team").join(project)
    }

    /// Sets the team remote of `project` (`URL` or `URL#branch`).
    pub fn set_team_remote(&self, project: &str, spec: &str) -> Result<ProjectTeamConfig> {
        let (remote, branch) = parse_remote(spec)?;
        let mut config = self.load_config()?;
        let entry = config.team.projects.entry(project.to_owned()).or_default();
        if entry.remote != remote {
            // Another remote: the old clone and base say nothing about it.
            let _ = std::fs::remove_dir_all(self.team_state_dir(project));
        }
        entry.remote = remote;
        entry.branch = branch;
        let saved = entry.clone();
        self.save_config(&config)?;
        Ok(saved)
    }

    fn team_config(&self, project: &str) -> Result<ProjectTeamConfig> {
        self.load_config()?
            .team
            .projects
            .get(project)
            .cloned()
            .ok_or_else(|| {
                Error::InvalidInput(
                    "no team remote for this project: engram team remote set URL".to_owned(),
                )
            })
    }

    /// The clone, made on first use, fetched; returns it, the branch and the remote's commit.
    fn fetched(&self, project: &str) -> Result<(Git, String, Option<String>)> {
        let config = self.team_config(project)?;
        let branch = config.branch.clone().unwrap_or_else(|| "main".to_owned());
        let dir = self.team_state_dir(project).join("clone");
        let program = git_program(self.env(), self.load_config()?.sync.git.as_deref())?;
        let git = Git {
            dir: dir.clone(),
            program,
        };
        if !dir.join(".git").is_dir() {
            crate::disk::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            git.run(&["init", "-q"])?;
            git.run(&["remote", "add", "origin", &config.remote])?;
        }
        git.run(&["fetch", "-q", "origin"])?;
        let theirs = git.rev(&format!("refs/remotes/origin/{branch}"));
        Ok((git, branch, theirs))
    }

    fn team_base(&self, project: &str) -> Option<String> {
        std::fs::read_to_string(self.team_state_dir(project).join("base"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    }

    fn set_team_base(&self, project: &str, commit: &str) -> Result<()> {
        disk::atomic_write(
            &self.team_state_dir(project).join("base"),
            commit.as_bytes(),
        )
    }

    /// The team keys of `project` whose conflict with a teammate still waits for review, each
    /// with the id of its staged set.
    fn waiting_team_conflicts(&self, project: &str) -> Result<BTreeMap<String, String>> {
        let mut waiting = BTreeMap::new();
        for set in self.staged_change_sets()? {
            if set.source != ChangeSource::Team || set.project != project {
                continue;
            }
            for file in set.waiting_files() {
                if let Some(key) = file.change.file.strip_prefix("team/") {
                    waiting
                        .entry(key.to_owned())
                        .or_insert_with(|| set.id.clone());
                }
            }
        }
        Ok(waiting)
    }

    /// Brings the teammates' changes into `memory_dir/team/` (see the module docs).
    pub fn team_pull(&self, project: &str, memory_dir: &Path) -> Result<SyncReport> {
        let (git, _branch, theirs_rev) = self.fetched(project)?;
        let team = memory_dir.join("team");
        crate::disk::create_dir_all(&team).map_err(|e| Error::io(&team, e))?;
        let base_rev = self.team_base(project);
        let base_tree = git.tree_at(base_rev.as_deref())?;
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let (base, theirs) = (&base_tree.files, &theirs_tree.files);
        let local = local_files(&team)?;
        let mut report = SyncReport::default();
        // What never syncs is named when it is new or changed on the remote, and left alone:
        // nothing of it is written into team/, and a local file of that name stays as it is.
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
        let mut clean = ChangeSet::new(memory_dir);
        let mut conflicts = ChangeSet::new(memory_dir);
        let case_clashes = CaseClashes::new(
            theirs.keys().map(String::as_str),
            local
                .files
                .keys()
                .chain(local.unreadable.keys())
                .map(String::as_str),
        );
        let keys: BTreeSet<&String> = theirs
            .keys()
            .chain(base.keys())
            .filter(|key| !theirs_tree.unsynced.contains_key(*key))
            .collect();
        for key in keys {
            let (b, t, l) = (base.get(key), theirs.get(key), local.files.get(key));
            if t == l || t == b {
                continue; // in sync, or only the local side moved (a push carries it)
            }
            if let Some(why) = local.unreadable.get(key) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: format!("changed by a teammate, but here {why}: left as it is"),
                });
                continue;
            }
            if let Err(refused) = validate_key(&team, key) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: refused.to_string(),
                });
                continue;
            }
            if let Some(why) = refused_on_pull(key, key, t, &case_clashes) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: why,
                });
                continue;
            }
            if t.is_some_and(|t| t.len() > super::MAX_TEAM_FILE_BYTES) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: "over the 250,000-byte cap".into(),
                });
                continue;
            }
            let rel = format!("team/{key}");
            let target = if l == b { &mut clean } else { &mut conflicts };
            let reason = if l == b {
                "a teammate's change"
            } else {
                "changed here and by a teammate: theirs shown over yours"
            };
            match t {
                Some(t) => target.stage_write(&rel, t.clone(), reason)?,
                None if l.is_some() => target.stage_delete(&rel, reason)?,
                None => {}
            }
        }
        report.files = clean.changes.iter().map(|c| c.file.clone()).collect();
        if !clean.is_empty() {
            self.apply_change_set(&clean, Actor::Team)?
                .first_failure()?;
        }
        if !conflicts.is_empty() {
            let summary = format!(
                "team sync: {} conflicting with a teammate",
                conflicts.summary()
            );
            report.conflicts = Some(self.stage_change_set(
                &conflicts,
                ChangeSource::Team,
                project,
                &summary,
                None,
            )?);
        }
        if let Some(theirs_rev) = &theirs_rev {
            self.set_team_base(project, theirs_rev)?;
        }
        report.commit = theirs_rev;
        Ok(report)
    }

    /// Sends `memory_dir/team/`'s changes to the remote (see the module docs). Running it is the
    /// user's opt-in.
    pub fn team_push(&self, project: &str, memory_dir: &Path) -> Result<SyncReport> {
        let (git, branch, theirs_rev) = self.fetched(project)?;
        let base_rev = self.team_base(project);
        if theirs_rev.is_some() && theirs_rev != base_rev {
            return Err(Error::InvalidInput(
                "the remote has teammates' changes not pulled yet: run `engram team pull` first"
                    .into(),
            ));
        }
        let team = memory_dir.join("team");
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let local = local_files(&team)?;
        let mut report = SyncReport::default();
        // A file whose conflict with a teammate waits for review is not pushed, whatever its
        // state here: the pull moved the base to theirs, so an unreviewed local edit (or
        // deletion) would look like a fresh change and overwrite their version on the remote.
        let mut held: BTreeMap<String, String> = self
            .waiting_team_conflicts(project)?
            .into_iter()
            .map(|(key, id)| {
                let why = format!(
                    "a conflict with a teammate's change waits for review \
                     (engram changes show {id}): not pushed"
                );
                (key, why)
            })
            .collect();
        for (key, why) in &local.unreadable {
            held.entry(key.clone())
                .or_insert_with(|| format!("{why}: not pushed"));
        }
        report
            .skipped
            .extend(held.iter().map(|(file, reason)| Skipped {
                file: file.clone(),
                reason: reason.clone(),
            }));
        // The worktree becomes exactly what passes the checks; git works out the difference.
        match &theirs_rev {
            Some(rev) => {
                git.run(&["checkout", "-q", "-B", &branch, rev])?;
            }
            // Nothing pushed yet: the first commit starts the branch.
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
        let case_clashes = CaseClashes::new(
            theirs_tree.files.keys().map(String::as_str),
            local
                .files
                .keys()
                .chain(local.unreadable.keys())
                .map(String::as_str),
        );
        // The remote's files of another spelling that a skipped local file must not remove.
        let mut kept_twins = BTreeSet::new();
        for (key, content) in local.files {
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
            if let Some(why) = theirs_tree.unsynced.get(&key) {
                report.skipped.push(Skipped {
                    file: key,
                    reason: format!("the remote holds {why} under this name: not pushed"),
                });
                continue;
            }
            if let Err(refused) = validate_key(&team, &key) {
                report.skipped.push(Skipped {
                    file: key,
                    reason: refused.to_string(),
                });
                continue;
            }
            if let Some(secret) = crate::secrets::scan_shared_file(&key, content.as_bytes())
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
        git.run(&["add", "-A", "."])?;
        // A file skipped here keeps the remote's version (if it has one) rather than being
        // deleted there: refusing to send it must not unshare what the team already has. So
        // does what never syncs (a submodule, a symlink, `.gitattributes`): not ours to remove.
        let skipped: BTreeSet<&str> = report.skipped.iter().map(|s| s.file.as_str()).collect();
        git.keep_in_index(theirs_tree.entries.iter().filter_map(|(key, entry)| {
            (skipped.contains(key.as_str())
                || kept_twins.contains(key)
                || theirs_tree.unsynced.contains_key(key))
            .then_some(entry)
        }))?;
        // What this push changes on the remote: the report names those, not every file.
        let changed = git.commit_staged("Team memory from Engram")?;
        report.files.retain(|file| changed.contains(file));
        if changed.is_empty() {
            return Ok(report);
        }
        git.run(&["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")])?;
        let commit = git.rev("HEAD");
        if let Some(commit) = &commit {
            self.set_team_base(project, commit)?;
        }
        report.commit = commit;
        Ok(report)
    }

    /// Ahead / behind / conflicts of `memory_dir/team/` against the remote (fetches).
    pub fn team_status(&self, project: &str, memory_dir: &Path) -> Result<TeamStatus> {
        let remote = self.team_config(project).ok().map(|c| c.remote);
        if remote.is_none() {
            return Ok(TeamStatus {
                remote,
                ahead: 0,
                behind: 0,
                conflicts: 0,
            });
        }
        let (git, _, theirs_rev) = self.fetched(project)?;
        let base = git.tree_at(self.team_base(project).as_deref())?.files;
        let theirs_tree = git.tree_at(theirs_rev.as_deref())?;
        let theirs = &theirs_tree.files;
        let local = local_files(&memory_dir.join("team"))?.files;
        // What never syncs counts neither way.
        let keys: BTreeSet<&String> = base
            .keys()
            .chain(theirs.keys())
            .chain(local.keys())
            .filter(|key| !theirs_tree.unsynced.contains_key(*key))
            .collect();
        // A file waiting in a staged conflict counts once, as a conflict: a push holds it back.
        let waiting = self.waiting_team_conflicts(project)?;
        let (mut ahead, mut behind, mut conflicts) = (0, 0, 0);
        for key in keys.into_iter().filter(|key| !waiting.contains_key(*key)) {
            let (b, t, l) = (base.get(key), theirs.get(key), local.get(key));
            match (l != b, t != b) {
                (true, true) if l != t => conflicts += 1,
                (true, false) => ahead += 1,
                (false, true) => behind += 1,
                _ => {}
            }
        }
        Ok(TeamStatus {
            remote,
            ahead,
            behind,
            conflicts: conflicts + waiting.len(),
        })
    }
}
