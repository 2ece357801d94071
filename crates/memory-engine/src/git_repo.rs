//! The `git` executable over a clone in Engram's data dir, as team sync (`team::sync`) and
//! personal sync (`sync`) both drive it: the user's own credentials, SSH agent and
//! `~/.ssh/config` work as they do for `git` itself.
//!
//! Which git runs: `ENGRAM_GIT`, else `[sync] git` in Engram's config (for team sync too), else
//! the first found on `PATH` and the OS's install places ([`crate::platform::git`]); none found is
//! an error naming every place looked at.
//!
//! Contract: git never prompts (`GIT_TERMINAL_PROMPT=0`); a failing git command is an error
//! naming the subcommand and carrying git's own message; a commit's tree is read with every
//! entry's mode, object and raw name, and split into what syncs (UTF-8 text under a UTF-8 name
//! with no dot-part) and what never does (submodules, symlinks, dot-files, non-UTF-8), with why.
//! What both syncs refuse to write on a pull is decided here too ([`refused_on_pull`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::disk;
use crate::environment::Environment;
use crate::error::{Error, Result};
use crate::platform::case::{how_twins_differ, CaseIndex};
use crate::platform::git::{find_git, ChosenGit};
use crate::platform::Os;

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

/// The git program sync runs: `ENGRAM_GIT`, else `configured` (`[sync] git`), else the first
/// git on `env`'s `PATH` or in the OS's install places.
pub(crate) fn git_program(env: &Environment, configured: Option<&str>) -> Result<PathBuf> {
    let chosen = match (env.get("ENGRAM_GIT"), configured.filter(|c| !c.is_empty())) {
        (Some(program), _) => Some(ChosenGit {
            source: "ENGRAM_GIT",
            program,
        }),
        (None, Some(program)) => Some(ChosenGit {
            source: "`git` under [sync] in Engram's config.toml",
            program,
        }),
        (None, None) => None,
    };
    find_git(Os::CURRENT, chosen, |key| env.get(key), Path::new("/"))
}

/// A clone at `dir`, driven by the git at `program` ([`git_program`]).
pub(crate) struct Git {
    pub(crate) dir: PathBuf,
    pub(crate) program: PathBuf,
}

impl Git {
    pub(crate) fn run(&self, args: &[&str]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.run_bytes(args, None)?).into_owned())
    }

    /// `git -C <clone> ARGS`, `input` on its stdin; its stdout as bytes.
    pub(crate) fn run_bytes(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>> {
        let program = &self.program;
        let mut child = crate::platform::git::command(program)
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(program, e))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written whole before reading: every input here is small and git reads it all
            // before it answers.
            stdin.write_all(input).map_err(|e| Error::io("git", e))?;
        }
        let output = child.wait_with_output().map_err(|e| Error::io("git", e))?;
        if !output.status.success() {
            return Err(Error::InvalidInput(format!(
                "git {}: {}",
                args.first().copied().unwrap_or(""),
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(output.stdout)
    }

    pub(crate) fn rev(&self, rev: &str) -> Option<String> {
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

    /// The tree at `rev` (empty when `rev` is `None`): what syncs and what does not.
    pub(crate) fn tree_at(&self, rev: Option<&str>) -> Result<Tree> {
        let mut tree = Tree::default();
        let Some(rev) = rev else {
            return Ok(tree);
        };
        // With modes (`--name-only` hides submodules and symlinks) and NUL-separated names.
        let listing = self.run_bytes(&["ls-tree", "-r", "-z", "--full-tree", rev], None)?;
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = record.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&record[..tab]);
            let mut fields = meta.split(' ');
            let (Some(mode), Some(_kind), Some(object)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let entry = TreeEntry {
                mode: mode.to_owned(),
                object: object.to_owned(),
                path: record[tab + 1..].to_vec(),
            };
            let key = String::from_utf8_lossy(&entry.path).into_owned();
            let unsynced = match (mode, std::str::from_utf8(&entry.path)) {
                (_, Err(_)) => Some("its name is not UTF-8"),
                ("160000", _) => Some("a submodule (a link to another repository)"),
                ("120000", _) => Some("a symbolic link"),
                (_, Ok(name)) if is_dot_path(name) => {
                    Some("a dot-file (git or tool settings such as .gitattributes)")
                }
                _ => None,
            };
            let unsynced = match unsynced {
                Some(why) => Some(why),
                None => {
                    match String::from_utf8(self.run_bytes(&["cat-file", "blob", object], None)?) {
                        Ok(text) => {
                            tree.files.insert(key.clone(), text);
                            None
                        }
                        Err(_) => Some("not UTF-8 text"),
                    }
                }
            };
            if let Some(why) = unsynced {
                tree.unsynced.insert(key.clone(), why);
            }
            tree.entries.insert(key, entry);
        }
        Ok(tree)
    }

    /// Puts `entries` into the index exactly as they are (mode, object, name): the remote's
    /// version of what this push does not send.
    pub(crate) fn keep_in_index<'a>(
        &self,
        entries: impl IntoIterator<Item = &'a TreeEntry>,
    ) -> Result<()> {
        let mut info = Vec::new();
        for entry in entries {
            info.extend_from_slice(format!("{} {}\t", entry.mode, entry.object).as_bytes());
            info.extend_from_slice(&entry.path);
            info.push(0);
        }
        if !info.is_empty() {
            self.run_bytes(&["update-index", "-z", "--index-info"], Some(&info))?;
        }
        Ok(())
    }

    /// Commits what the index holds as Engram, with `message`, and returns the paths the commit
    /// changes on the remote; empty: nothing to send, and nothing was committed.
    pub(crate) fn commit_staged(&self, message: &str) -> Result<Vec<String>> {
        let changed = self.run(&["diff", "--cached", "--name-only", "-z", "--no-renames"])?;
        let changed: Vec<String> = changed
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        if !changed.is_empty() {
            self.run(&[
                "-c",
                "user.name=Engram",
                "-c",
                "user.email=engram@localhost",
                "commit",
                "-q",
                "-m",
                message,
            ])?;
        }
        Ok(changed)
    }
}

/// One entry of a git tree as `ls-tree` lists it: enough to put it back in an index unchanged,
/// whatever its name's bytes.
pub(crate) struct TreeEntry {
    pub(crate) mode: String,
    pub(crate) object: String,
    pub(crate) path: Vec<u8>,
}

impl TreeEntry {
    pub(crate) fn same_as(&self, other: &TreeEntry) -> bool {
        self.mode == other.mode && self.object == other.object
    }
}

/// A commit's tree as sync sees it.
#[derive(Default)]
pub(crate) struct Tree {
    /// The files that sync: UTF-8 text under a UTF-8 name, no part of which starts with `.`.
    pub(crate) files: BTreeMap<String, String>,
    /// What never syncs (submodules, symbolic links, dot-files, names or contents that are not
    /// UTF-8), with why: never written into a memory dir, and kept as they are on the remote by a push.
    pub(crate) unsynced: BTreeMap<String, &'static str>,
    /// Every entry by name (not UTF-8: lossily), synced or not.
    pub(crate) entries: BTreeMap<String, TreeEntry>,
}

/// Whether a part of `key` starts with `.`: `.gitattributes`, `.gitmodules`, `.git/`, a tool's
/// hidden file. Never team memory.
pub(crate) fn is_dot_path(key: &str) -> bool {
    key.split('/').any(|name| name.starts_with('.'))
}

impl Git {
    /// Whether `ancestor` is in the history of `descendant`: a remote whose branch no longer
    /// contains the last synced commit was rewritten (a force push). A commit this clone does
    /// not have is not an ancestor.
    pub(crate) fn is_ancestor(&self, ancestor: &str, descendant: &str) -> bool {
        self.run(&["merge-base", "--is-ancestor", ancestor, descendant])
            .is_ok()
    }
}

/// A synced dir's files as a push sees them (symlinks not followed; dot-files and Engram's temp files left
/// out).
#[derive(Default)]
pub(crate) struct LocalFiles {
    pub(crate) files: BTreeMap<String, String>,
    /// Files that cannot be sent, with why (not UTF-8, unreadable): named, never fatal.
    pub(crate) unreadable: BTreeMap<String, String>,
}

pub(crate) fn local_files(team: &Path) -> Result<LocalFiles> {
    let mut local = LocalFiles::default();
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
            let relative = path.strip_prefix(team).map_err(|_| Error::PathDenied {
                path: path.clone(),
                root: team.to_path_buf(),
            })?;
            let lossy = relative.to_string_lossy().replace('\\', "/");
            if is_dot_path(&lossy) || lossy.contains(".engram-") {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let Some(key) = relative.to_str().map(|k| k.replace('\\', "/")) else {
                    local
                        .unreadable
                        .insert(lossy, "its name is not UTF-8".to_owned());
                    continue;
                };
                match disk::read_text(&path) {
                    Ok(text) => {
                        local.files.insert(key, text);
                    }
                    Err(e) => {
                        local.unreadable.insert(key, e.to_string());
                    }
                }
            }
        }
    }
    Ok(local)
}

/// Why a pull, team or personal, must not write `theirs` at `key` (or delete it, `None`): the
/// incoming text holds a secret (`path` names the file as the secret rules read it, inside the
/// memory dir), or the key clashes in case with another ([`CaseClashes::on_pull`]). `None` when
/// the pull may go on.
pub(crate) fn refused_on_pull(
    path: &str,
    key: &str,
    theirs: Option<&String>,
    case_clashes: &CaseClashes,
) -> Option<String> {
    let secret = theirs.and_then(|text| {
        crate::secrets::scan_shared_file(path, text.as_bytes())
            .into_iter()
            .next()
    });
    if let Some(secret) = secret {
        return Some(format!("{secret}: not written"));
    }
    case_clashes.on_pull(key, theirs.is_some())
}

/// Keys that differ only in case (or in how an accent is encoded: `case::fold`), as a pull or a
/// push meets them: on a case-insensitive volume (macOS, Windows) `Foo.md` and `foo.md` are one
/// file, so a pull never lets one replace the other and a push never puts a second spelling on
/// the remote. Each case is reported (a skipped file with why), never settled silently; what is
/// skipped keeps its version on both sides. Pure, so Linux tests cover every case.
pub(crate) struct CaseClashes {
    remote: CaseIndex,
    local: CaseIndex,
}

impl CaseClashes {
    /// `remote`: the keys the remote's tree holds; `local`: the keys of the local files.
    pub(crate) fn new<'a>(
        remote: impl IntoIterator<Item = &'a str>,
        local: impl IntoIterator<Item = &'a str>,
    ) -> CaseClashes {
        CaseClashes {
            remote: CaseIndex::new(remote),
            local: CaseIndex::new(local),
        }
    }

    /// Why a pull must not write (`writes`) or delete `key` here.
    pub(crate) fn on_pull(&self, key: &str, writes: bool) -> Option<String> {
        if !writes {
            return self.remote.twin(key).map(|twin| {
                format!(
                    "renamed on the remote to {twin:?}, which differs {}: left as it is here (a \
                     case-insensitive volume takes both for one file); rename it here by hand",
                    how_twins_differ(key, twin)
                )
            });
        }
        if let Some(twin) = self.remote.twin(key) {
            return Some(format!(
                "case conflict: the remote also holds {twin:?}, which differs {}; on a \
                 case-insensitive volume (macOS, Windows) they are one file, so neither replaces \
                 the other here: rename one of them in the repository",
                how_twins_differ(key, twin)
            ));
        }
        if self.local.holds(key) {
            return None;
        }
        self.local.twin(key).map(|twin| {
            format!(
                "case conflict: differs {} from {twin:?} here; on a case-insensitive volume it \
                 would replace that file, so it is not written: rename one of them",
                how_twins_differ(key, twin)
            )
        })
    }

    /// Why a push must not send the local `key`, and the remote's file of another spelling that
    /// must stay on the remote (it is not among the local files).
    pub(crate) fn on_push(&self, key: &str) -> Option<(String, Option<String>)> {
        if self.remote.holds(key) {
            return None;
        }
        if let Some(twin) = self.remote.twin(key) {
            let why = format!(
                "case conflict: the remote holds {twin:?}, which differs {}; on a \
                 case-insensitive volume (macOS, Windows) they are one file, so this is not \
                 pushed and the remote keeps {twin:?}: rename one of them",
                how_twins_differ(key, twin)
            );
            // A twin that is also a local file is pushed as itself: keeping the remote's
            // version in its place would undo that.
            let keep = (!self.local.holds(twin)).then(|| twin.to_owned());
            return Some((why, keep));
        }
        self.local.twin(key).map(|twin| {
            let why = format!(
                "case conflict: differs {} from {twin:?}, also here; not pushed, so the \
                 repository stays checkout-able on macOS and Windows: rename one of them",
                how_twins_differ(key, twin)
            );
            (why, None)
        })
    }
}

#[cfg(test)]
mod case_clash_tests {
    use super::CaseClashes;

    #[test]
    fn a_pull_writes_no_case_twin_over_another_file() {
        // Two teammates pushed `Foo.md` and `foo.md`: neither lands.
        let clashes = CaseClashes::new(["Foo.md", "foo.md", "bar.md"], ["bar.md"]);
        let why = clashes.on_pull("foo.md", true).expect("a case conflict");
        assert!(why.contains("\"Foo.md\""), "{why}");
        assert!(clashes.on_pull("Foo.md", true).is_some());
        assert_eq!(clashes.on_pull("bar.md", true), None);
        // A new remote file whose twin is a local file: not written over it.
        let clashes = CaseClashes::new(["Notes.md"], ["notes.md"]);
        let why = clashes.on_pull("Notes.md", true).expect("a case conflict");
        assert!(why.contains("\"notes.md\""), "{why}");
        // A local file spelled exactly as the remote's: an ordinary update.
        let clashes = CaseClashes::new(["a.md"], ["a.md", "A.md"]);
        assert_eq!(clashes.on_pull("a.md", true), None);
        // A teammate's "Café.md" with its accent decomposed, here composed: one file on a Mac.
        let clashes = CaseClashes::new(["Cafe\u{301}.md"], ["Caf\u{e9}.md"]);
        let why = clashes
            .on_pull("Cafe\u{301}.md", true)
            .expect("an encoding conflict");
        assert!(
            why.contains("differs only in how an accent is encoded (Unicode normalisation) from"),
            "{why}"
        );
    }

    #[test]
    fn a_rename_only_in_case_on_the_remote_leaves_the_local_file() {
        // The remote renamed `foo.md` to `Foo.md`: the new name is not written over the old
        // file, and the old one is not deleted either (deletions land last, after the write).
        let clashes = CaseClashes::new(["Foo.md"], ["foo.md"]);
        assert!(clashes.on_pull("Foo.md", true).is_some());
        let why = clashes.on_pull("foo.md", false).expect("kept");
        assert!(why.contains("\"Foo.md\""), "{why}");
        // An ordinary deletion is no case matter.
        let clashes = CaseClashes::new(["bar.md"], ["foo.md"]);
        assert_eq!(clashes.on_pull("foo.md", false), None);
    }

    #[test]
    fn a_push_adds_no_second_spelling_to_the_remote() {
        let clashes = CaseClashes::new(["Foo.md", "bar.md"], ["foo.md", "bar.md"]);
        let (why, keep) = clashes.on_push("foo.md").expect("a case conflict");
        assert!(why.contains("\"Foo.md\""), "{why}");
        assert_eq!(keep.as_deref(), Some("Foo.md"), "the remote keeps its file");
        assert_eq!(clashes.on_push("bar.md"), None);
        // Two local spellings (a case-sensitive disk holds both): the one already on the remote
        // goes, the other is held back.
        let clashes = CaseClashes::new(["a.md"], ["a.md", "A.md"]);
        assert_eq!(clashes.on_push("a.md"), None);
        let (why, keep) = clashes.on_push("A.md").expect("held back");
        assert!(why.contains("\"a.md\""), "{why}");
        assert_eq!(keep, None, "a.md is pushed as the local file, not kept");
        // Neither on the remote yet: neither goes.
        let clashes = CaseClashes::new([], ["x.md", "X.md"]);
        assert!(clashes.on_push("x.md").is_some() && clashes.on_push("X.md").is_some());
    }
}
