//! Where the `git` executable is on each OS, and the options every git child gets there. Team
//! sync and personal sync both start git through [`crate::git_repo`], which asks here.
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | looked for | `PATH` | `PATH`, then `/opt/homebrew/bin/git`, `/usr/local/bin/git`, `/usr/bin/git` | `PATH` (`git.exe`), then `Git\cmd\git.exe` under `%ProgramFiles%`, `%ProgramW6432%`, `%ProgramFiles(x86)%`, `%LOCALAPPDATA%\Programs` |
//! | why more than `PATH` | — | an app started from Finder gets launchd's `PATH`, without Homebrew | the installer may leave `PATH` alone |
//! | child options | — | — | `CREATE_NO_WINDOW` (no console flash); `-c core.longpaths=true` (paths over 260 characters) |
//!
//! On macOS `/usr/bin/git` is a stub until the Xcode Command Line Tools are installed: run, it
//! opens an install dialog instead of answering. So it counts, on `PATH` or not, only when
//! `/Library/Developer/CommandLineTools` exists. A program named by the user (`ENGRAM_GIT`, or
//! `[sync] git` in Engram's config) is the only candidate: a wrong name is an error, never
//! silently replaced by another git.
//!
//! The lookup is a plain function of the OS, the environment and the file system's root, so
//! Linux tests run every OS's order against temp dirs. Nothing here was run on macOS or Windows.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Os;
use crate::error::{Error, Result};

fn executable(host: Os) -> &'static str {
    match host {
        Os::Windows => "git.exe",
        Os::Unix | Os::Mac => "git",
    }
}

fn path_separator(host: Os) -> char {
    match host {
        Os::Windows => ';',
        Os::Unix | Os::Mac => ':',
    }
}

/// A git program the user named, and where they named it (for the error when it is not there).
#[derive(Debug, Clone, Copy)]
pub struct ChosenGit<'a> {
    pub source: &'a str,
    pub program: &'a str,
}

/// The git program to run: `chosen` when given (it must exist), else the first of `PATH` and the
/// OS's known places that is a file. `get` reads the environment (`PATH`, `ProgramFiles`, …);
/// `root` is the file system's root the macOS places are under (`/`; a temp dir in tests).
pub fn find_git<'a>(
    host: Os,
    chosen: Option<ChosenGit<'_>>,
    get: impl Fn(&str) -> Option<&'a str>,
    root: &Path,
) -> Result<PathBuf> {
    if let Some(chosen) = chosen {
        let program = PathBuf::from(chosen.program);
        return if program.is_file() {
            Ok(program)
        } else {
            Err(Error::InvalidInput(format!(
                "{} names {} as the git program, but there is no such file",
                chosen.source,
                program.display()
            )))
        };
    }
    let candidates = candidates(host, &get, root);
    if let Some(found) = candidates.iter().find(|candidate| candidate.is_file()) {
        return Ok(found.clone());
    }
    let tried = if candidates.is_empty() {
        "PATH is empty".to_owned()
    } else {
        candidates
            .iter()
            .map(|candidate| candidate.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(Error::InvalidInput(format!(
        "sync needs git, and none was found (looked at: {tried}); install git, or name it with \
         ENGRAM_GIT or `git = \"/path/to/git\"` under [sync] in Engram's config.toml"
    )))
}

/// Every place looked at, in order: `PATH`'s dirs, then the OS's known install places.
fn candidates<'a>(host: Os, get: impl Fn(&str) -> Option<&'a str>, root: &Path) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = path_dirs(host, get("PATH").unwrap_or(""))
        .into_iter()
        .map(|dir| Path::new(&dir).join(executable(host)))
        .collect();
    match host {
        Os::Unix => {}
        Os::Mac => {
            for place in ["opt/homebrew/bin/git", "usr/local/bin/git", "usr/bin/git"] {
                candidates.push(root.join(place));
            }
            // The stub opens a dialog: only with the Command Line Tools behind it.
            let stub = root.join("usr/bin/git");
            if !root.join("Library/Developer/CommandLineTools").is_dir() {
                candidates.retain(|candidate| *candidate != stub);
            }
        }
        Os::Windows => {
            for (variable, under) in [
                ("ProgramFiles", ""),
                ("ProgramW6432", ""),
                ("ProgramFiles(x86)", ""),
                ("LOCALAPPDATA", "Programs"),
            ] {
                if let Some(dir) = get(variable) {
                    candidates.push(Path::new(dir).join(under).join(r"Git\cmd\git.exe"));
                }
            }
            if get("ProgramFiles").is_none() {
                candidates.push(PathBuf::from(r"C:\Program Files\Git\cmd\git.exe"));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|candidate| seen.insert(candidate.clone()));
    candidates
}

/// `PATH`'s dirs, empty entries left out. On Windows a dir may be quoted to hold a `;`, as
/// `cmd` reads it.
fn path_dirs(host: Os, path: &str) -> Vec<String> {
    let mut dirs = vec![String::new()];
    let mut quoted = false;
    for c in path.chars() {
        match c {
            '"' if host == Os::Windows => quoted = !quoted,
            c if c == path_separator(host) && !quoted => dirs.push(String::new()),
            c => dirs.last_mut().expect("one dir at least").push(c),
        }
    }
    dirs.retain(|dir| !dir.trim().is_empty());
    dirs
}

/// The options git gets before its subcommand on `host`: on Windows, paths longer than 260
/// characters (a deep memory tree inside Engram's data dir) instead of "Filename too long".
pub fn leading_args(host: Os) -> &'static [&'static str] {
    match host {
        Os::Windows => &["-c", "core.longpaths=true"],
        Os::Unix | Os::Mac => &[],
    }
}

/// A command for `program` with this OS's options for a git child: no console window on Windows
/// (the app has none, and each git child would flash one), [`leading_args`] first.
pub fn command(program: &Path) -> Command {
    let mut command = Command::new(program);
    super::process::no_console(&mut command);
    command.args(leading_args(Os::CURRENT));
    command
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "").expect("write");
    }

    fn find(host: Os, vars: &HashMap<&str, String>, root: &Path) -> Result<PathBuf> {
        find_git(host, None, |k| vars.get(k).map(String::as_str), root)
    }

    #[test]
    fn path_comes_first_then_the_os_places_in_order() {
        let root = tempfile::tempdir().expect("tmp");
        let root = root.path();
        let on_path = root.join("bin");
        let vars = HashMap::from([("PATH", format!("/nonexistent:{}", on_path.display()))]);
        for place in ["opt/homebrew/bin/git", "usr/local/bin/git"] {
            touch(&root.join(place));
        }
        // Homebrew's Apple-silicon place first, then the Intel one.
        assert_eq!(
            find(Os::Mac, &vars, root).expect("found"),
            root.join("opt/homebrew/bin/git")
        );
        std::fs::remove_file(root.join("opt/homebrew/bin/git")).expect("rm");
        assert_eq!(
            find(Os::Mac, &vars, root).expect("found"),
            root.join("usr/local/bin/git")
        );
        touch(&on_path.join("git"));
        assert_eq!(
            find(Os::Mac, &vars, root).expect("found"),
            on_path.join("git")
        );
        // Linux looks at PATH only.
        std::fs::remove_file(on_path.join("git")).expect("rm");
        let error = find(Os::Unix, &vars, root).expect_err("not on PATH");
        assert!(error.to_string().contains("/nonexistent/git"), "{error}");
    }

    #[test]
    fn the_macos_stub_counts_only_with_the_command_line_tools() {
        let root = tempfile::tempdir().expect("tmp");
        let root = root.path();
        let stub = root.join("usr/bin/git");
        touch(&stub);
        // The stub is on PATH, as /usr/bin always is.
        let vars = HashMap::from([("PATH", root.join("usr/bin").display().to_string())]);
        let error = find(Os::Mac, &vars, root).expect_err("the stub alone is no git");
        assert!(
            !error.to_string().contains(&stub.display().to_string()),
            "{error}"
        );
        assert!(
            error.to_string().contains("opt/homebrew/bin/git"),
            "{error}"
        );
        std::fs::create_dir_all(root.join("Library/Developer/CommandLineTools")).expect("mkdir");
        assert_eq!(find(Os::Mac, &vars, root).expect("found"), stub);
    }

    #[test]
    fn windows_looks_for_git_exe_on_path_then_under_program_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let dir = dir.path().display().to_string();
        let program_files = format!("{dir}/Program Files");
        let local = format!("{dir}/Local");
        let mut vars = HashMap::from([
            ("PATH", format!(r#""{dir}/a;b";{dir}/cmd"#)),
            ("ProgramFiles", program_files.clone()),
            ("LOCALAPPDATA", local.clone()),
        ]);
        let root = Path::new("/");
        let per_user = Path::new(&local).join("Programs").join(r"Git\cmd\git.exe");
        touch(&per_user);
        assert_eq!(find(Os::Windows, &vars, root).expect("found"), per_user);
        let machine = Path::new(&program_files).join(r"Git\cmd\git.exe");
        touch(&machine);
        assert_eq!(find(Os::Windows, &vars, root).expect("found"), machine);
        let on_path = Path::new(&dir).join("cmd").join("git.exe");
        touch(&on_path);
        assert_eq!(find(Os::Windows, &vars, root).expect("found"), on_path);
        // A quoted PATH entry holding the separator is one dir.
        let quoted = Path::new(&format!("{dir}/a;b")).join("git.exe");
        touch(&quoted);
        assert_eq!(find(Os::Windows, &vars, root).expect("found"), quoted);
        // With no ProgramFiles, the default drive's place is still tried, and named.
        vars.clear();
        let error = find(Os::Windows, &vars, root).expect_err("nothing");
        assert!(
            error
                .to_string()
                .contains(r"C:\Program Files\Git\cmd\git.exe"),
            "{error}"
        );
    }

    #[test]
    fn a_chosen_program_is_the_only_candidate_and_must_exist() {
        let root = tempfile::tempdir().expect("tmp");
        let on_path = root.path().join("bin/git");
        touch(&on_path);
        let vars = HashMap::from([("PATH", root.path().join("bin").display().to_string())]);
        let chosen = root.path().join("mine/git");
        let choose = |program: &str| {
            find_git(
                Os::Unix,
                Some(ChosenGit {
                    source: "ENGRAM_GIT",
                    program,
                }),
                |k| vars.get(k).map(String::as_str),
                root.path(),
            )
        };
        let error = choose(&chosen.display().to_string()).expect_err("missing");
        assert!(error.to_string().contains("ENGRAM_GIT"), "{error}");
        assert!(
            error.to_string().contains(&chosen.display().to_string()),
            "{error}"
        );
        touch(&chosen);
        assert_eq!(
            choose(&chosen.display().to_string()).expect("found"),
            chosen
        );
    }

    #[test]
    fn nothing_found_names_what_was_tried_and_how_to_choose() {
        let root = tempfile::tempdir().expect("tmp");
        let error = find(Os::Unix, &HashMap::new(), root.path()).expect_err("none");
        let message = error.to_string();
        assert!(message.contains("PATH is empty"), "{message}");
        assert!(
            message.contains("ENGRAM_GIT") && message.contains("[sync]"),
            "{message}"
        );
    }

    #[test]
    fn windows_children_allow_long_paths() {
        assert_eq!(leading_args(Os::Windows), ["-c", "core.longpaths=true"]);
        assert!(leading_args(Os::Unix).is_empty());
        assert!(leading_args(Os::Mac).is_empty());
    }
}
