//! Team sync through git: the project's `team/` syncs with a remote the user configured (a repo,
//! or a branch of another repo with `URL#branch`), through the `git` executable — the user's own
//! credentials, SSH agent and `~/.ssh/config` work as they do for `git` itself (libgit2's SSH
//! support is known to fail there).
//!
//! Engram keeps a clone in its data dir (`<engram home>/team/<project>/clone`) and the commit last
//! synced (`base`). **Pull**: per file, theirs wins unless the local file changed too since the
//! base — then the two are a conflict staged for review (source `team`); every incoming key is
//! validated (§9) and every incoming file secret-scanned before it is written (refused files are
//! reported, never written). **Push** (only when the user runs it): local files that pass the key
//! checks and the secret scan are committed and pushed; others are skipped and reported; a remote
//! that moved on since the last pull must be pulled first. **Status**: ahead / behind /
//! conflicts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::validate_key;
use crate::actor::Actor;
use crate::changeset::ChangeSet;
use crate::config::ProjectTeamConfig;
use crate::disk;
use crate::engine::Engine;
use crate::error::{Error, Result};
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

/// A remote as configured: `URL` or `URL#branch`.
pub fn parse_remote(spec: &str) -> Result<(String, Option<String>)> {
    let (url, branch) = match spec.rsplit_once('#') {
        Some((url, branch)) if !branch.is_empty() => (url, Some(branch.to_owned())),
        _ => (spec, None),
    };
    if url.trim().is_empty() || url.starts_with('-') {
        return Err(Error::InvalidInput(format!("{spec:?} is not a git remote")));
    }
    Ok((url.to_owned(), branch))
}

struct Git {
    dir: PathBuf,
}

impl Git {
    fn run(&self, args: &[&str]) -> Result<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Error::InvalidInput(
                        "team sync needs the `git` executable on PATH; install git".into(),
                    )
                } else {
                    Error::io("git", e)
                }
            })?;
        if !output.status.success() {
            return Err(Error::InvalidInput(format!(
                "git {}: {}",
                args.first().copied().unwrap_or(""),
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn rev(&self, rev: &str) -> Option<String> {
        self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
    }

    /// Every file at `rev`, with its content (none when `rev` is `None`).
    fn files_at(&self, rev: Option<&str>) -> Result<BTreeMap<String, String>> {
        let Some(rev) = rev else {
            return Ok(BTreeMap::new());
        };
        let mut files = BTreeMap::new();
        for name in self
            .run(&["ls-tree", "-r", "-z", "--name-only", rev])?
            .split('\0')
        {
            if name.is_empty() {
                continue;
            }
            files.insert(
                name.to_owned(),
                self.run(&["show", &format!("{rev}:{name}")])?,
            );
        }
        Ok(files)
    }
}

/// `team/`'s files (relative keys), symlinks not followed.
fn local_files(team: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![team.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let key = path
                    .strip_prefix(team)
                    .map_err(|_| Error::PathDenied {
                        path: path.clone(),
                        root: team.to_path_buf(),
                    })?
                    .to_string_lossy()
                    .replace('\\', "/");
                if key.starts_with('.') || key.contains(".engram-") {
                    continue;
                }
                files.insert(key, disk::read_text(&path)?);
            }
        }
    }
    Ok(files)
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
        let git = Git { dir: dir.clone() };
        if !dir.join(".git").is_dir() {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
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

    /// Brings the teammates' changes into `memory_dir/team/` (see the module docs).
    pub fn team_pull(&self, project: &str, memory_dir: &Path) -> Result<SyncReport> {
        let (git, _branch, theirs_rev) = self.fetched(project)?;
        let team = memory_dir.join("team");
        std::fs::create_dir_all(&team).map_err(|e| Error::io(&team, e))?;
        let base_rev = self.team_base(project);
        let base = git.files_at(base_rev.as_deref())?;
        let theirs = git.files_at(theirs_rev.as_deref())?;
        let local = local_files(&team)?;
        let mut report = SyncReport::default();
        let mut clean = ChangeSet::new(memory_dir);
        let mut conflicts = ChangeSet::new(memory_dir);
        let keys: BTreeSet<&String> = theirs.keys().chain(base.keys()).collect();
        for key in keys {
            let (b, t, l) = (base.get(key), theirs.get(key), local.get(key));
            if t == l || t == b {
                continue; // in sync, or only the local side moved (a push carries it)
            }
            if let Err(refused) = validate_key(&team, key) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: refused.to_string(),
                });
                continue;
            }
            if let Some(secret) = t.and_then(|t| {
                crate::secrets::scan_shared_file(key, t.as_bytes())
                    .into_iter()
                    .next()
            }) {
                report.skipped.push(Skipped {
                    file: key.clone(),
                    reason: format!("{secret}: not written"),
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
        let mut report = SyncReport::default();
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
        for (key, content) in local_files(&team)? {
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
        // A file skipped here keeps the remote's version (if it has one) rather than being
        // deleted there: refusing to send it must not unshare what the team already has.
        if let Some(rev) = &theirs_rev {
            for skipped in &report.skipped {
                let _ = git.run(&["checkout", rev, "--", &skipped.file]);
            }
        }
        git.run(&["add", "-A", "."])?;
        // What this push changes on the remote: the report names those, not every file.
        let changed = git.run(&["diff", "--cached", "--name-only", "-z", "--no-renames"])?;
        let changed: Vec<&str> = changed.split('\0').filter(|f| !f.is_empty()).collect();
        report.files.retain(|file| changed.contains(&file.as_str()));
        if changed.is_empty() {
            return Ok(report);
        }
        git.run(&[
            "-c",
            "user.name=Engram",
            "-c",
            "user.email=engram@localhost",
            "commit",
            "-q",
            "-m",
            "Team memory from Engram",
        ])?;
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
        let base = git.files_at(self.team_base(project).as_deref())?;
        let theirs = git.files_at(theirs_rev.as_deref())?;
        let local = local_files(&memory_dir.join("team"))?;
        let keys: BTreeSet<&String> = base
            .keys()
            .chain(theirs.keys())
            .chain(local.keys())
            .collect();
        let (mut ahead, mut behind, mut conflicts) = (0, 0, 0);
        for key in keys {
            let (b, t, l) = (base.get(key), theirs.get(key), local.get(key));
            match (l != b, t != b) {
                (true, true) if l != t => conflicts += 1,
                (true, false) => ahead += 1,
                (false, true) => behind += 1,
                _ => {}
            }
        }
        let waiting = self
            .staged_change_sets()?
            .into_iter()
            .filter(|s| s.source == ChangeSource::Team && s.project == project)
            .map(|s| s.waiting())
            .sum::<usize>();
        Ok(TeamStatus {
            remote,
            ahead,
            behind,
            conflicts: conflicts + waiting,
        })
    }
}
