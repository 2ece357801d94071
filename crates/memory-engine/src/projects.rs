//! Every project Claude Code has seen on this machine: the directories under
//! `<config home>/projects/`, one per working directory (`FORMATS.md` §1, §5), which hold the
//! transcripts, and under `<memory base>/projects/`, which hold the memory dirs. The two are the
//! same unless `CLAUDE_CODE_REMOTE_MEMORY_DIR` moves the memory base; a project is listed if
//! either has it.
//!
//! A directory's name is the sanitized path, which cannot be reversed, so the original path is
//! recovered from the `cwd` field of the transcripts inside (reading only the first lines of each,
//! until one carries it). Counts are cheap: file names and `mtime`s only, no frontmatter parsing,
//! and the last activity reads the end of one transcript per project where the mtimes are
//! Claude Code's own, so listing a home with hundreds of projects stays fast. One unreadable
//! project never hides the others: whatever cannot be read is simply not counted.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::engine::Engine;
use crate::error::{Error, IoResultExt, Result};
use crate::llm::{Caller, ModelJob};
use crate::paths::sanitize_path;
use crate::platform::Os;
use crate::staleness::iso_time;

/// How many lines of a transcript to read looking for `cwd` before giving up on that file: the
/// first message entry comes after a few metadata lines (`summary`, `file-history-snapshot`, …).
const CWD_SCAN_LINES: usize = 64;

/// One project: a directory under `<config home>/projects/` or `<memory base>/projects/`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSummary {
    /// The directory name (the sanitized working directory).
    pub name: String,
    /// The original working directory, from a transcript's `cwd`; else the existing directory
    /// the name was sanitized from, found on disk; `None` when neither tells.
    pub path: Option<PathBuf>,
    /// `<memory base>/projects/<name>/memory` (it may not exist).
    pub memory_dir: PathBuf,
    /// Topic files: `*.md` under the memory dir, recursively, except any `MEMORY.md`.
    pub memory_files: usize,
    /// Session transcripts: `<uuid>.jsonl` directly in the project dir (not `agent-*`).
    pub sessions: usize,
    /// When the project was last active, as an ISO-8601 UTC string: the newest entry written
    /// in its transcripts (what `engram sessions` lists as a session's last activity; a copied
    /// `~/.claude` keeps it) or the newest memory file's `mtime`, whichever is later.
    pub last_activity: Option<String>,
    /// Lint errors and warnings of the memory dir: filled by [`Engine::list_projects_with_lint`],
    /// absent (not serialized) from [`Engine::list_projects`], which stays a cheap listing.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub lint: Option<LintCounts>,
}

/// How many lint findings of each severity a memory dir has.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LintCounts {
    pub errors: usize,
    pub warnings: usize,
}

impl Engine {
    /// Lists every project (see the module docs), most recently active first (projects with no
    /// activity last, then by name). A missing projects dir is an empty list.
    pub fn list_projects(&self) -> Result<Vec<ProjectSummary>> {
        let mut summaries: Vec<ProjectSummary> = self
            .project_names()?
            .into_iter()
            .map(|name| {
                let (transcripts, memory) = (
                    self.project_transcripts_dir_of(&name),
                    self.project_memory_dir(&name),
                );
                summarize_project(name, &transcripts, memory)
            })
            .collect();
        summaries.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then_with(|| a.name.cmp(&b.name))
        });
        Ok(summaries)
    }

    /// The names (sanitized working directories) of every project, sorted.
    pub(crate) fn project_names(&self) -> Result<Vec<String>> {
        let mut names = std::collections::BTreeSet::new();
        let config_projects = self.claude_home().join("projects");
        let memory_projects = self.memory_base().join("projects");
        for projects in [&config_projects, &memory_projects] {
            let entries = match fs::read_dir(projects) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(projects, e)),
            };
            for entry in entries {
                let entry = entry.at(projects)?;
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    names.insert(entry.file_name().to_string_lossy().into_owned());
                }
            }
            if memory_projects == config_projects {
                break;
            }
        }
        Ok(names.into_iter().collect())
    }

    /// The memory dir of the project named `name` (a directory name as [`Engine::list_projects`]
    /// reports it): `<memory base>/projects/<name>/memory`. `name` must be one plain path
    /// component; anything else (empty, `.`, `..`, a separator) is refused, so a caller passing
    /// on a name it was given can only ever reach the memory dirs of this home.
    pub fn project_memory_dir_checked(&self, name: &str) -> Result<PathBuf> {
        let plain =
            !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']);
        if !plain {
            return Err(Error::PathDenied {
                path: PathBuf::from(name),
                root: self.memory_base().join("projects"),
            });
        }
        Ok(self.project_memory_dir(name))
    }

    pub(crate) fn project_memory_dir(&self, name: &str) -> PathBuf {
        self.memory_base()
            .join("projects")
            .join(name)
            .join("memory")
    }

    /// The working dir of the project named `name`, if Claude Code lists it (as
    /// [`ProjectSummary::path`] gives it); `None` for a name it does not list.
    pub(crate) fn listed_project_path(&self, name: &str) -> Option<PathBuf> {
        if !self.project_names().ok()?.iter().any(|n| n == name) {
            return None;
        }
        project_path(name, &self.project_transcripts_dir_of(name))
    }

    /// `<config home>/projects/<name>`: where the project's transcripts are.
    pub(crate) fn project_transcripts_dir_of(&self, name: &str) -> PathBuf {
        self.claude_home().join("projects").join(name)
    }
}

impl Engine {
    /// [`Engine::list_projects`] with each project's lint counts ([`Engine::lint_counts`]) — for
    /// the Projects view's status badges. Costs a lint of every memory dir (one read of each
    /// memory file); a dir that cannot be linted is left without counts.
    pub fn list_projects_with_lint(&self) -> Result<Vec<ProjectSummary>> {
        let mut projects = self.list_projects()?;
        for project in &mut projects {
            project.lint =
                if project.memory_files == 0 && !project.memory_dir.join("MEMORY.md").is_file() {
                    Some(LintCounts::default())
                } else {
                    self.lint_counts(&project.memory_dir).ok()
                };
        }
        Ok(projects)
    }

    /// Errors and warnings of the memory dir at `memory_dir`, as `lint` reports them (a missing
    /// dir has none).
    pub fn lint_counts(&self, memory_dir: &Path) -> Result<LintCounts> {
        let report = crate::lint::lint_dir(memory_dir)?;
        let errors = report
            .findings
            .iter()
            .filter(|f| f.severity == crate::lint::Severity::Error)
            .count();
        Ok(LintCounts {
            errors,
            warnings: report.findings.len() - errors,
        })
    }
}

/// The working directory of the project named `name` whose transcripts are in `dir` (a
/// `<config home>/projects/<name>` dir), as [`ProjectSummary::path`] gives it.
pub(crate) fn project_path(name: &str, dir: &Path) -> Option<PathBuf> {
    let mut transcripts = transcripts(dir);
    first_cwd(&mut transcripts).or_else(|| probe_working_dir(name))
}

/// Most directories [`probe_working_dir`] lists for one name: it stays cheap on any machine.
const PROBE_MAX_LISTINGS: usize = 64;

/// The existing directory whose sanitized path is `name`, found by walking down from the root
/// the name starts with ([`probe_start`]) and following the entries whose sanitized name matches
/// the next part of `name` (a `-` in a name may be a separator or any other character, so this
/// is the only way back). For projects whose transcripts are gone or never recorded a `cwd`.
/// `None` when nothing on disk matches: a moved or deleted project, another machine's path, a
/// hashed long name.
fn probe_working_dir(name: &str) -> Option<PathBuf> {
    let (root, rest) = probe_start(Os::CURRENT, name)?;
    let mut listings = 0;
    probe_from(&root, rest, &mut listings)
}

/// Where [`probe_working_dir`] starts on `os`, and the part of `name` left to match: `/` for
/// `-home-me-proj`; on Windows the drive's root for `C--Users-me-proj` (`C:\` sanitises to
/// `C--`). A Windows name without a drive (a UNC share, `\x` on an unknown drive) is not probed.
fn probe_start(os: Os, name: &str) -> Option<(PathBuf, &str)> {
    match os {
        Os::Unix | Os::Mac => Some((PathBuf::from("/"), name.strip_prefix('-')?)),
        Os::Windows => {
            let drive = name.chars().next().filter(char::is_ascii_alphabetic)?;
            let rest = name[1..].strip_prefix("--")?;
            Some((PathBuf::from(format!("{drive}:\\")), rest))
        }
    }
}

fn probe_from(dir: &Path, rest: &str, listings: &mut usize) -> Option<PathBuf> {
    if rest.is_empty() {
        return Some(dir.to_path_buf());
    }
    *listings += 1;
    if *listings > PROBE_MAX_LISTINGS {
        return None;
    }
    let mut matches: Vec<(usize, PathBuf)> = fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let sanitized = sanitize_path(&entry.file_name().to_string_lossy());
            let follows = rest.strip_prefix(sanitized.as_str())?;
            (follows.is_empty() || follows.starts_with('-'))
                .then(|| (sanitized.len(), entry.path()))
        })
        .filter(|(_, path)| path.is_dir())
        .collect();
    // Longest first: `/a/b-c` before `/a/b` + `c` when both exist.
    matches.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    matches.into_iter().find_map(|(length, path)| {
        let next = rest[length..].strip_prefix('-').unwrap_or("");
        probe_from(&path, next, listings)
    })
}

/// The `*.jsonl` files directly in `dir`: (path, is a session, mtime).
fn transcripts(dir: &Path) -> Vec<(PathBuf, bool, Option<SystemTime>)> {
    let mut transcripts = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.filter_map(|entry| entry.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".jsonl") else {
                continue;
            };
            if !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let modified = entry.metadata().and_then(|m| m.modified()).ok();
            transcripts.push((entry.path(), is_uuid(stem), modified));
        }
    }
    transcripts
}

/// The first `cwd` a transcript records, looking at sessions before subagent files, newest
/// first: the main session of the latest run is the likeliest to name the directory as it is now.
fn first_cwd(transcripts: &mut [(PathBuf, bool, Option<SystemTime>)]) -> Option<PathBuf> {
    transcripts
        .sort_by_key(|(_, is_session, modified)| std::cmp::Reverse((*is_session, *modified)));
    transcripts
        .iter()
        .find_map(|(file, _, _)| cwd_of_transcript(file))
}

/// When Claude Code last wrote in any of `transcripts`: the newest entry timestamp (a file's
/// mtime where its end has none). An entry is written no later than its file's mtime, so the
/// files are read newest mtime first and the walk stops at the first one older than what was
/// found: one tail read per project normally, every file's only where the mtimes say nothing
/// (a copied `~/.claude`, every file dated by the copy).
fn last_written(transcripts: &mut [(PathBuf, bool, Option<SystemTime>)]) -> Option<SystemTime> {
    transcripts.sort_by_key(|(_, _, modified)| std::cmp::Reverse(*modified));
    let mut newest: Option<SystemTime> = None;
    for (file, _, modified) in transcripts.iter() {
        if newest.is_some() && *modified < newest {
            break;
        }
        newest = newest.max(crate::transcript::last_entry_time(file).or(*modified));
    }
    newest
}

fn summarize_project(name: String, transcripts_dir: &Path, memory_dir: PathBuf) -> ProjectSummary {
    let mut transcripts = transcripts(transcripts_dir);
    let mut newest = last_written(&mut transcripts);
    let mut note = |time: Option<SystemTime>| {
        if time > newest {
            newest = time;
        }
    };

    let sessions = transcripts
        .iter()
        .filter(|(_, is_session, _)| *is_session)
        .count();

    let mut memory_files = 0;
    visit_markdown(&memory_dir, &mut |path, modified| {
        note(modified);
        if path.file_name().is_some_and(|name| name != "MEMORY.md") {
            memory_files += 1;
        }
    });

    ProjectSummary {
        path: first_cwd(&mut transcripts).or_else(|| probe_working_dir(&name)),
        name,
        memory_dir,
        memory_files,
        sessions,
        last_activity: newest.map(iso_time),
        lint: None,
    }
}

/// Calls `visit` for every `*.md` file under `dir` (recursively; symlinked directories are not
/// followed, as Claude Code's own scan does not follow them).
fn visit_markdown(dir: &Path, visit: &mut dyn FnMut(&Path, Option<SystemTime>)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|entry| entry.ok()) {
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if file_type.is_dir() {
            visit_markdown(&path, visit);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            visit(&path, fs::metadata(&path).and_then(|m| m.modified()).ok());
        }
    }
}

/// The `cwd` of the first entry that has one among the first lines of a transcript. Blank and
/// malformed lines (a BOM, a truncated write) are skipped, as every transcript reader must.
fn cwd_of_transcript(file: &Path) -> Option<PathBuf> {
    let reader = BufReader::new(fs::File::open(file).ok()?);
    reader
        .lines()
        .take(CWD_SCAN_LINES)
        .map_while(|line| line.ok())
        .find_map(|line| {
            let line = line.trim_start_matches('\u{feff}');
            let value: serde_json::Value = serde_json::from_str(line).ok()?;
            value
                .get("cwd")?
                .as_str()
                .filter(|cwd| !cwd.is_empty())
                .map(PathBuf::from)
        })
}

/// `8-4-4-4-12` hex digits, any case: the shape of a session id.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;
    use crate::testing::fixtures::{copy_tree, write_file, REAL_FIXTURES};
    use std::time::Duration;

    fn set_mtime(path: &Path, secs: u64) {
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(time)
            .expect("set mtime");
    }

    fn engine(home: &Path) -> Engine {
        Engine::builder(Environment::empty())
            .claude_home(home)
            .build()
    }

    #[test]
    fn lists_the_real_fixture_home() {
        let tmp = tempfile::tempdir().expect("tmp");
        copy_tree(&Path::new(REAL_FIXTURES).join("claude-home"), tmp.path());
        let demo = tmp.path().join("projects/-path-to-Demo");
        write_file(&demo.join("memory/MEMORY.md"), "- [a](a.md) — x\n");
        write_file(&demo.join("memory/a.md"), "---\nname: a\n---\n");
        write_file(&demo.join("memory/team/b.md"), "b\n");
        write_file(&demo.join("memory/team/MEMORY.md"), "- [b](b.md)\n");
        for entry in fs::read_dir(&demo).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_file() {
                set_mtime(&path, 1_700_000_000);
            }
        }
        set_mtime(&demo.join("memory/a.md"), 1_700_000_000);
        set_mtime(&demo.join("memory/team/b.md"), 2_000_000_000);

        let projects = engine(tmp.path()).list_projects().expect("list");
        assert_eq!(projects.len(), 1);
        let p = &projects[0];
        assert_eq!(p.name, "-path-to-Demo");
        assert_eq!(p.path, Some(PathBuf::from("/path/to/Demo")));
        assert_eq!(p.memory_dir, demo.join("memory"));
        assert_eq!(
            p.sessions, 3,
            "three uuid transcripts; agent-* files are not sessions"
        );
        assert_eq!(p.memory_files, 2, "a.md and team/b.md; no MEMORY.md");
        assert_eq!(
            p.last_activity.as_deref(),
            Some("2033-05-18T03:33:20.000Z"),
            "a nested memory file is the newest activity"
        );
    }

    /// A copied `~/.claude` dates every file by the copy; the entries inside keep when Claude
    /// Code wrote them, as the sessions listing shows.
    #[test]
    fn the_last_activity_is_when_claude_code_last_wrote_not_when_the_home_was_copied() {
        let tmp = tempfile::tempdir().expect("tmp");
        let entry = |at: &str| format!("{{\"type\":\"user\",\"timestamp\":\"{at}\"}}\n");
        let early = tmp.path().join("projects/-early");
        let late = tmp.path().join("projects/-late");
        let early_a = early.join("11111111-1111-4111-8111-111111111111.jsonl");
        let early_b = early.join("22222222-2222-4222-8222-222222222222.jsonl");
        // One line bigger than the first window read from the end (a long tool result).
        let big_result = format!(
            "{{\"type\":\"user\",\"timestamp\":\"2025-02-01T09:00:00Z\",\"content\":\"{}\"}}\n",
            "x".repeat(100 << 10)
        );
        write_file(
            &early_a,
            &format!(
                "{}{}",
                entry("2025-01-01T08:00:00Z"),
                entry("2025-01-10T10:00:00Z")
            ),
        );
        write_file(
            &early_b,
            &format!("{}{big_result}", entry("2025-01-20T08:00:00Z")),
        );
        let late_a = late.join("33333333-3333-4333-8333-333333333333.jsonl");
        write_file(&late_a, &entry("2025-03-05T12:00:00Z"));
        // Copied in an order unlike the work: the early project's files last, its older
        // session after its newer one.
        set_mtime(&late_a, 1_800_000_000);
        set_mtime(&early_b, 1_800_000_100);
        set_mtime(&early_a, 1_800_000_200);

        let projects = engine(tmp.path()).list_projects().expect("list");
        let listed: Vec<(&str, Option<&str>)> = projects
            .iter()
            .map(|p| (p.name.as_str(), p.last_activity.as_deref()))
            .collect();
        assert_eq!(
            listed,
            [
                ("-late", Some("2025-03-05T12:00:00.000Z")),
                ("-early", Some("2025-02-01T09:00:00.000Z")),
            ]
        );
    }

    #[test]
    fn summary_first_lines_are_skipped_when_looking_for_cwd() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("projects/-w-x");
        write_file(
            &dir.join("0A1B2C3D-0000-4000-8000-00000000000F.jsonl"),
            "\u{feff}{\"type\":\"summary\",\"summary\":\"s\"}\nnot json\n\n{\"type\":\"user\",\"cwd\":\"/w/x\"}\n",
        );
        write_file(&dir.join("agent-1.jsonl"), "{\"cwd\":\"/subagent\"}\n");
        set_mtime(
            &dir.join("0A1B2C3D-0000-4000-8000-00000000000F.jsonl"),
            1_000,
        );
        set_mtime(&dir.join("agent-1.jsonl"), 2_000);
        write_file(&dir.join("notes.txt"), "");
        let p = &engine(tmp.path()).list_projects().expect("list")[0];
        assert_eq!(p.sessions, 1, "upper-case uuids count");
        assert_eq!(
            p.path,
            Some(PathBuf::from("/w/x")),
            "a session outranks a newer subagent file"
        );
        assert_eq!(p.memory_files, 0, "no memory dir");
    }

    #[test]
    fn path_is_unknown_without_a_cwd_and_projects_sort_newest_first() {
        let tmp = tempfile::tempdir().expect("tmp");
        let old = tmp.path().join("projects/-old");
        let new = tmp.path().join("projects/-new");
        let idle = tmp.path().join("projects/-idle");
        write_file(
            &old.join("11111111-1111-4111-8111-111111111111.jsonl"),
            "{}\n",
        );
        set_mtime(
            &old.join("11111111-1111-4111-8111-111111111111.jsonl"),
            1_000_000,
        );
        write_file(&new.join("memory/x.md"), "x\n");
        set_mtime(&new.join("memory/x.md"), 2_000_000);
        fs::create_dir_all(&idle).expect("mkdir");
        write_file(&tmp.path().join("projects/stray-file"), "");

        let projects = engine(tmp.path()).list_projects().expect("list");
        let names: Vec<&str> = projects.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["-new", "-old", "-idle"]);
        assert_eq!(projects[1].path, None, "no transcript line carries a cwd");
        assert_eq!(
            projects[0].last_activity.as_deref(),
            Some("1970-01-24T03:33:20.000Z")
        );
        assert_eq!(projects[2].last_activity, None);
    }

    #[test]
    fn a_remote_memory_base_holds_the_memory_dirs_and_the_config_home_the_transcripts() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (config, remote) = (tmp.path().join("config"), tmp.path().join("remote"));
        let session = "11111111-1111-4111-8111-111111111111.jsonl";
        write_file(
            &config.join("projects/-work-app").join(session),
            "{\"type\":\"user\",\"cwd\":\"/work/app\"}\n",
        );
        write_file(
            &config.join("projects/-work-app/memory/stale.md"),
            "---\nname: stale\ndescription: not read\ntype: user\n---\n",
        );
        write_file(
            &remote.join("projects/-work-app/memory/deploy.md"),
            "---\nname: deploy\ndescription: Deploys freeze on Fridays\ntype: project\n---\n",
        );
        write_file(
            &remote.join("projects/-work-only-remote/memory/a.md"),
            "---\nname: a\ndescription: remote only\ntype: user\n---\n",
        );
        let engine = Engine::builder(
            Environment::empty().with("CLAUDE_CODE_REMOTE_MEMORY_DIR", remote.to_string_lossy()),
        )
        .claude_home(&config)
        .build();

        let mut projects = engine.list_projects().expect("list");
        projects.sort_by(|a, b| a.name.cmp(&b.name));
        let app = &projects[0];
        assert_eq!(app.name, "-work-app");
        assert_eq!(app.path.as_deref(), Some(Path::new("/work/app")));
        assert_eq!(app.sessions, 1);
        assert_eq!(app.memory_dir, remote.join("projects/-work-app/memory"));
        assert_eq!(app.memory_files, 1, "only the remote memory dir counts");
        assert_eq!(projects[1].name, "-work-only-remote");
        assert_eq!(projects.len(), 2);

        let hits = engine
            .search_memories("fridays", &crate::search::SearchOptions::default())
            .expect("search");
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].memory_dir, remote.join("projects/-work-app/memory"));
        assert_eq!(
            hits[0].project_path.as_deref(),
            Some(Path::new("/work/app"))
        );
        assert!(engine
            .search_memories("stale", &crate::search::SearchOptions::default())
            .expect("search")
            .is_empty());
    }

    #[test]
    fn without_a_transcript_the_working_dir_is_found_on_disk_from_the_name() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = tmp.path().canonicalize().expect("real path");
        let odd = base.join("work/my.app v2");
        let dashed = base.join("work/my-app");
        fs::create_dir_all(&odd).expect("mkdir");
        fs::create_dir_all(&dashed).expect("mkdir");
        // `/work/my/app` sanitizes the same as `/work/my-app`: the longer entry wins.
        fs::create_dir_all(base.join("work/my/app")).expect("mkdir");
        let home = base.join("claude");
        let gone = base.join("work/deleted");
        for dir in [&odd, &dashed, &gone] {
            let name = sanitize_path(&dir.to_string_lossy());
            write_file(
                &home.join("projects").join(&name).join("memory/a.md"),
                "a\n",
            );
        }

        let projects = engine(&home).list_projects().expect("list");
        let path_of = |dir: &Path| {
            let name = sanitize_path(&dir.to_string_lossy());
            projects
                .iter()
                .find(|p| p.name == name)
                .expect("listed")
                .path
                .clone()
        };
        assert_eq!(path_of(&odd), Some(odd.clone()));
        assert_eq!(path_of(&dashed), Some(dashed.clone()));
        assert_eq!(path_of(&gone), None, "nothing on disk matches");
    }

    /// Platforms row 22: a Windows project key starts at its drive, not at `/`; below the root
    /// the walk is the same, shown here with a temp dir standing in for `C:\`.
    #[test]
    fn a_windows_project_name_is_probed_from_its_drive() {
        assert_eq!(
            probe_start(Os::Windows, "C--Users-me-proj"),
            Some((PathBuf::from("C:\\"), "Users-me-proj"))
        );
        assert_eq!(
            probe_start(Os::Windows, "d--"),
            Some((PathBuf::from("d:\\"), ""))
        );
        for no_drive in ["--server-share-x", "-Users-me", "CD-x", "1--x", ""] {
            assert_eq!(probe_start(Os::Windows, no_drive), None, "{no_drive:?}");
        }
        assert_eq!(
            probe_start(Os::Unix, "-home-me-proj"),
            Some((PathBuf::from("/"), "home-me-proj"))
        );
        assert_eq!(probe_start(Os::Unix, "C--Users-me-proj"), None);

        let drive = tempfile::tempdir().expect("tmp");
        let proj = drive.path().join("Users/me/my proj");
        fs::create_dir_all(&proj).expect("mkdir");
        let key = sanitize_path(r"C:\Users\me\my proj");
        let (_, rest) = probe_start(Os::Windows, &key).expect("a drive");
        assert_eq!(probe_from(drive.path(), rest, &mut 0), Some(proj));
    }

    #[test]
    fn a_project_name_must_be_one_plain_path_component() {
        let engine = engine(Path::new("/h"));
        assert_eq!(
            engine.project_memory_dir_checked("-a-b").expect("plain"),
            Path::new("/h/projects/-a-b/memory")
        );
        for name in ["", ".", "..", "../x", "a/b", "/etc", "a\\b", "a\0b"] {
            let denied = engine
                .project_memory_dir_checked(name)
                .expect_err("not a plain project name");
            assert_eq!(denied.kind(), crate::ErrorKind::PathDenied, "{name:?}");
        }
    }

    #[test]
    fn lint_counts_per_project_come_only_with_the_lint_listing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let broken = tmp.path().join("projects/-broken/memory");
        write_file(
            &broken.join("MEMORY.md"),
            "- [Gone](gone.md) — x\n- [A](a.md) — a\n",
        );
        write_file(
            &broken.join("a.md"),
            "---\nname: A\ndescription: a\ntype: user\n---\nbody\n",
        );
        write_file(&broken.join("orphan.md"), "---\nname: O\n---\n");
        fs::create_dir_all(tmp.path().join("projects/-empty")).expect("mkdir");
        let engine = engine(tmp.path());

        let plain = engine.list_projects().expect("list");
        assert!(plain.iter().all(|p| p.lint.is_none()));
        let json = serde_json::to_value(&plain[0]).expect("json");
        assert!(
            json.get("lint").is_none(),
            "the plain listing keeps its shape: {json}"
        );

        let linted = engine.list_projects_with_lint().expect("list");
        let counts = |name: &str| {
            linted
                .iter()
                .find(|p| p.name == name)
                .and_then(|p| p.lint)
                .expect("counts")
        };
        // dangling-pointer (error); orphan-file + missing-description (warnings).
        assert_eq!(
            counts("-broken"),
            LintCounts {
                errors: 1,
                warnings: 2
            }
        );
        assert_eq!(counts("-empty"), LintCounts::default());
        assert_eq!(
            engine.lint_counts(&broken).expect("counts"),
            counts("-broken")
        );
        let json = serde_json::to_value(&linted[0]).expect("json");
        assert!(json["lint"]["errors"].is_number(), "{json}");
    }

    #[test]
    fn a_missing_projects_dir_is_empty() {
        let tmp = tempfile::tempdir().expect("tmp");
        assert!(engine(&tmp.path().join("nope"))
            .list_projects()
            .expect("list")
            .is_empty());
    }

    /// "Embed all memories" with `[llm] embeddings = "openai"`: each project's vectors are logged
    /// for that project, so `engram usage` says where the tokens went.
    #[test]
    fn embedding_every_project_through_a_server_logs_each_projects_vectors_for_it() {
        use crate::testing::{Reply, ScriptedServer};
        use serde_json::{json, Value};
        let tmp = tempfile::tempdir().expect("tmp");
        let claude = tmp.path().join("claude");
        for (project, memories) in [("-work-shop", 2), ("-work-cli", 3)] {
            for n in 0..memories {
                write_file(
                    &claude.join(format!("projects/{project}/memory/project_{n}.md")),
                    &format!("---\nname: fact {n}\ndescription: fact {n} of {project}\ntype: project\n---\nbody {n}\n"),
                );
            }
        }
        let server = ScriptedServer::handler(|request, _| {
            let inputs = request.json()["input"].as_array().map_or(0, Vec::len);
            let data: Vec<Value> = (0..inputs)
                .map(|index| json!({"object": "embedding", "index": index, "embedding": [1.0, index as f64]}))
                .collect();
            Reply::json(json!({
                "object": "list", "data": data, "model": "embedder",
                "usage": {"prompt_tokens": 10 * inputs, "total_tokens": 10 * inputs},
            }))
        });
        let home = tmp.path().join("engram");
        write_file(
            &home.join("config.toml"),
            &format!(
                "[llm]\nembeddings = \"openai\"\nmax_retries = 0\n\n[llm.openai]\nbase_url = \"{}/v1\"\n",
                server.url()
            ),
        );
        let e = Engine::builder(Environment::empty().with("OPENAI_API_KEY", "sk-test"))
            .claude_home(&claude)
            .engram_home(&home)
            .build();
        let report = e
            .embed_all_projects(&tokio_util::sync::CancellationToken::new(), &|_| {})
            .expect("embed all");
        assert_eq!((report.projects, report.embedded), (2, 5), "{report:?}");
        let rows = e.usage_report(1).expect("usage").rows;
        let logged: Vec<(&str, &str, u64)> = rows
            .iter()
            .map(|row| (row.project.as_str(), row.job.as_str(), row.input_tokens))
            .collect();
        // Every text asked for cost 10 tokens; a memory's texts are as many in either project.
        let asked: u64 = server
            .requests()
            .iter()
            .map(|r| 10 * r.json()["input"].as_array().map_or(0, Vec::len) as u64)
            .sum();
        let per_memory = asked / 5;
        assert_eq!(
            logged,
            vec![
                ("-work-cli", "recall", 3 * per_memory),
                ("-work-shop", "recall", 2 * per_memory)
            ],
            "{rows:?}"
        );
    }

    #[test]
    fn uuid_shape() {
        assert!(is_uuid("1af7fc5e-8455-4414-9ccd-011d40f70b2a"));
        assert!(is_uuid("1AF7FC5E-8455-4414-9CCD-011D40F70B2A"));
        assert!(!is_uuid("agent-test-hash-123"));
        assert!(!is_uuid("1af7fc5e-8455-4414-9ccd-011d40f70b2"));
        assert!(!is_uuid("1af7fc5e-8455-4414-9ccd-011d40f70b2g"));
    }
}

/// How far [`Engine::embed_all_projects`] is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedAllProgress {
    /// The project being embedded (its folder name).
    pub project: String,
    /// Memories of that project done, of `total`.
    pub done: usize,
    pub total: usize,
    /// Projects finished before this one, of `projects`.
    pub projects_done: usize,
    pub projects: usize,
}

/// What [`Engine::embed_all_projects`] did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedAllReport {
    pub source: String,
    pub projects: usize,
    pub files: usize,
    pub embedded: usize,
    pub cached: usize,
    pub cancelled: bool,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub elapsed_ms: u64,
}

impl Engine {
    /// Embeds the memories of every project with a memory dir (see [`crate::corpus::embed_dir`]),
    /// most recently active first, with the configured source (`[llm] embeddings`). Blocking.
    pub fn embed_all_projects(
        &self,
        cancel: &tokio_util::sync::CancellationToken,
        progress: &dyn Fn(EmbedAllProgress),
    ) -> Result<EmbedAllReport> {
        let started = std::time::Instant::now();
        let config = self.load_config()?;
        // Vectors for recall: when a server computes them, each project's are logged for it.
        let embedder_for = |project: &ProjectSummary| {
            let caller = Caller::new(
                ModelJob::Recall,
                crate::paths::project_of(&project.memory_dir),
            );
            self.embedder_in(&config, &caller)
        };
        let projects: Vec<ProjectSummary> = self
            .list_projects()?
            .into_iter()
            .filter(|p| p.memory_files > 0 && p.memory_dir.is_dir())
            .collect();
        let mut report = EmbedAllReport {
            source: self
                .embedder_in(&config, &Caller::new(ModelJob::Recall, ""))?
                .id()
                .to_owned(),
            projects: projects.len(),
            ..EmbedAllReport::default()
        };
        for (index, project) in projects.iter().enumerate() {
            if cancel.is_cancelled() {
                report.cancelled = true;
                break;
            }
            let embedder = embedder_for(project)?;
            let one =
                crate::corpus::embed_dir(&project.memory_dir, embedder.as_ref(), cancel, &|p| {
                    progress(EmbedAllProgress {
                        project: project.name.clone(),
                        done: p.done,
                        total: p.total,
                        projects_done: index,
                        projects: projects.len(),
                    })
                })?;
            report.files += one.files;
            report.embedded += one.embedded;
            report.cached += one.cached;
            report.cancelled |= one.cancelled;
        }
        report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(report)
    }
}
