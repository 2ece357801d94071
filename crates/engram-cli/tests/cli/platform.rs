//! Operating-system rules that hold on every OS (`docs/platforms.md`), proven through the real
//! `engram` binary on Linux.

use std::fs;

use crate::support::{exit_code, stderr, Sandbox};

fn remember(s: &Sandbox, dir: &str, file: &str) -> std::process::Output {
    s.run(&[
        "remember",
        "--type",
        "project",
        "--name",
        "N",
        "--description",
        "d",
        "--file",
        file,
        "--body",
        "b",
        "--memory-dir",
        dir,
    ])
}

/// Platforms row 13: a memory dir or team repository made on Linux must check out on Windows,
/// so Engram never creates a name Windows cannot hold — and still reads one that exists.
#[test]
fn remember_and_team_check_refuse_names_windows_cannot_hold_but_existing_ones_stay_readable() {
    let s = Sandbox::in_project("windows-names").with_engram_home();
    let mem = s.root().join("mem");
    fs::create_dir_all(mem.join("team")).expect("mkdir");
    fs::write(mem.join("MEMORY.md"), "# Memory\n\n").expect("seed index");
    let dir = mem.to_string_lossy().into_owned();
    for (name, rule) in [
        ("notes:stream.md", "alternate data stream"),
        ("what?.md", "Windows forbids"),
        ("a|b.md", "Windows forbids"),
        ("say\"hi\".md", "Windows forbids"),
        ("all*.md", "Windows forbids"),
        ("con.md", "Windows device name"),
        ("NUL.md", "Windows device name"),
        ("Aux.md", "Windows device name"),
        ("com1.md", "Windows device name"),
        ("lpt9.md", "Windows device name"),
        ("prn/notes.md", "Windows device name"),
        ("notes./x.md", "ends in a dot or a space"),
        ("team/nul.md", "Windows device name"),
    ] {
        let out = remember(&s, &dir, name);
        assert_eq!(
            exit_code(&out),
            2,
            "{name:?} must be refused: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(rule), "{name:?}: {}", stderr(&out));
    }
    assert_eq!(
        fs::read_to_string(mem.join("MEMORY.md")).expect("index"),
        "# Memory\n\n",
        "nothing was written"
    );
    for (key, rule) in [
        ("aux.md", "windows-device-name"),
        ("notes:x.md", "windows-reserved-character"),
        ("notes./x.md", "windows-trailing-dot-or-space"),
        ("tab\tx.md", "windows-control-character"),
    ] {
        let out = s.run(&["team", "check", key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(rule), "{key:?}: {}", stderr(&out));
    }
    // Names that only look like devices are ordinary files.
    for name in ["console.md", "com10.md", "user_con.md"] {
        let out = remember(&s, &dir, name);
        assert_eq!(exit_code(&out), 0, "{name:?}: {}", stderr(&out));
    }

    // A file Claude Code or a person made with such a name on Linux is read as ever.
    for name in ["con.md", "a:b.md"] {
        fs::write(
            mem.join(name),
            "---\nname: Legacy\ndescription: made by hand\ntype: project\n---\nstill here\n",
        )
        .expect("write legacy file");
        let out = s.run(&["show", name, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 0, "{name:?}: {}", stderr(&out));
        assert!(
            crate::support::stdout(&out).contains("still here"),
            "{name:?}"
        );
    }
}

/// The git that `PATH` finds for the test itself: the real one the override points at.
fn real_git() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on the test's PATH")
}

/// Platforms row 17: with no git on `PATH` (the app started from macOS' Finder gets no
/// Homebrew dir there) sync says which places it looked at and how to name a git; `ENGRAM_GIT`
/// and `[sync] git` name one, and a wrong name is an error naming where it came from.
#[test]
fn sync_without_git_on_path_names_what_it_tried_and_runs_the_git_the_user_names() {
    let s = Sandbox::in_project("no-git").with_engram_home();
    let tmp = tempfile::tempdir().expect("tmp");
    let remote = tmp.path().join("memory.git");
    let init = std::process::Command::new(real_git())
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&remote)
        .output()
        .expect("git init");
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    s.json(&["sync", "remote", "set", &remote.to_string_lossy()]);

    let out = s
        .command(&["sync", "status"])
        .env("PATH", "")
        .output()
        .expect("run");
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("sync needs git"), "{err}");
    assert!(err.contains("PATH is empty"), "{err}");
    assert!(
        err.contains("ENGRAM_GIT") && err.contains("[sync]"),
        "{err}"
    );

    // The override is used with no PATH at all.
    let out = s
        .command(&["sync", "status", "--json"])
        .env("PATH", "")
        .env("ENGRAM_GIT", real_git())
        .output()
        .expect("run");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));

    // `[sync] git` naming a missing program is an error naming the setting and the file.
    let config = s.engram_home().join("config.toml");
    let text = fs::read_to_string(&config).expect("config");
    let missing = tmp.path().join("no-such-git");
    let text = text.replace(
        "[sync]\n",
        &format!("[sync]\ngit = {:?}\n", missing.to_string_lossy()),
    );
    fs::write(&config, text).expect("write config");
    let out = s.run(&["sync", "status"]);
    assert_eq!(exit_code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("[sync]") && err.contains(&*missing.to_string_lossy()),
        "{err}"
    );
}

/// Platforms row 12: on this case-sensitive disk `deploy.md` beside `Deploy.md` would be a
/// second file, which a Mac or Windows copy of the dir folds into one: refused, naming both,
/// and nothing written.
#[test]
fn remember_refuses_a_file_differing_only_in_case_from_another() {
    let s = Sandbox::in_project("case-twins").with_engram_home();
    let mem = s.root().join("mem");
    let dir = mem.to_string_lossy().into_owned();
    let out = remember(&s, &dir, "Deploy.md");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let index = fs::read_to_string(mem.join("MEMORY.md")).expect("index");
    let out = remember(&s, &dir, "deploy.md");
    assert_eq!(exit_code(&out), 2, "refused: {}", stderr(&out));
    assert!(
        stderr(&out).contains("\"deploy.md\"") && stderr(&out).contains("\"Deploy.md\""),
        "names both: {}",
        stderr(&out)
    );
    assert!(!mem.join("deploy.md").exists());
    assert_eq!(
        fs::read_to_string(mem.join("MEMORY.md")).expect("index"),
        index
    );

    // `team check` asks the same of a team key: a teammate on a Mac would get one file.
    fs::create_dir_all(mem.join("team/Notes")).expect("team");
    fs::write(mem.join("team/Notes/Deploy.md"), "x\n").expect("team file");
    for key in ["Notes/deploy.md", "notes/Deploy.md", "NOTES/new.md"] {
        let out = s.run(&["team", "check", key, "--memory-dir", &dir]);
        assert_eq!(exit_code(&out), 2, "{key:?} refused: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("{key:?}"))
                && stderr(&out).contains("differs only in case"),
            "{key:?}: {}",
            stderr(&out)
        );
    }
    let same = s.json(&["team", "check", "Notes/Deploy.md", "--memory-dir", &dir]);
    assert_eq!(same["safe"], true, "{same}");
    let new = s.json(&["team", "check", "Notes/new.md", "--memory-dir", &dir]);
    assert_eq!(new["safe"], true, "{new}");
}
