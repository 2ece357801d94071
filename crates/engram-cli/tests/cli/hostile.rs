//! Hostile and broken input: every read command over a memory dir full of what real disks hold —
//! invalid UTF-8, NUL bytes, a 20 MB single line, a binary file named `.md`, a YAML bomb, deeply
//! nested YAML, frontmatter that never closes, symlink loops and links out of the dir, a CRLF
//! index — must finish (bounded: a generous timeout catches hangs), never panic, name what it
//! could not read, and leave every file as it was; `remember` still works beside them.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::support::{bounded, exit_code, stderr, Sandbox};

#[cfg(unix)]
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            out.push((
                entry.file_name().to_string_lossy().into_owned(),
                fs::read(&path).expect("read"),
            ));
        }
    }
    out.sort();
    out
}

// Unix only: the dir holds symlink loops and links out (`docs/platforms.md`, row 7).
#[cfg(unix)]
fn hostile_dir(s: &Sandbox) -> std::path::PathBuf {
    let dir = s.root().join("hostile");
    fs::create_dir_all(&dir).expect("dir");
    fs::write(
        dir.join("MEMORY.md"),
        "- [Good](good.md) — a fine memory\r\n- [Bad](bad_utf8.md) — broken\r\n",
    )
    .expect("crlf index");
    fs::write(
        dir.join("good.md"),
        "---\nname: Good\ndescription: a fine memory\ntype: user\n---\nfine\n",
    )
    .expect("good");
    fs::write(
        dir.join("bad_utf8.md"),
        b"---\nname: Bad \xff\xfe\ndescription: broken \xc3\n---\nbody \x80\n",
    )
    .expect("utf8");
    fs::write(
        dir.join("nul.md"),
        b"---\nname: N\x00UL\ndescription: nul\x00bytes\n---\n\x00\x00\n",
    )
    .expect("nul");
    fs::write(
        dir.join("binary.md"),
        (0..=255u8).cycle().take(64 * 1024).collect::<Vec<u8>>(),
    )
    .expect("binary");
    let long = format!(
        "---\nname: Long\ndescription: one very long line\ntype: project\n---\n{}\n",
        "x".repeat(20 << 20)
    );
    fs::write(dir.join("long_line.md"), long).expect("long");
    let bomb = "---\nname: Bomb\ndescription: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n---\nboom\n";
    fs::write(dir.join("yaml_bomb.md"), bomb).expect("bomb");
    let nested = format!(
        "---\nname: Deep\ndescription: {}x{}\n---\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    fs::write(dir.join("nested.md"), nested).expect("nested");
    fs::write(
        dir.join("unclosed.md"),
        "---\nname: Unclosed\ndescription: never closes\n".repeat(50),
    )
    .expect("unclosed");
    std::os::unix::fs::symlink(dir.join("loop-b.md"), dir.join("loop-a.md")).expect("loop");
    std::os::unix::fs::symlink(dir.join("loop-a.md"), dir.join("loop-b.md")).expect("loop");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("outside.md")).expect("outside");
    std::os::unix::fs::symlink("/", dir.join("root-link")).expect("root link");
    dir
}

#[cfg(unix)]
#[test]
fn every_read_command_survives_a_hostile_memory_dir_and_changes_nothing() {
    let s = Sandbox::in_project("hostile").with_engram_home();
    let dir = hostile_dir(&s);
    let before = snapshot(&dir);
    let memory_dir = dir.to_string_lossy().into_owned();
    let limit = Duration::from_secs(60);
    for args in [
        vec!["scan", "--all"],
        vec!["index"],
        vec!["lint"],
        vec!["search", "fine"],
        vec!["show", "bad_utf8.md"],
        vec!["show", "binary.md"],
        vec!["show", "loop-a.md"],
        vec!["show", "outside.md"],
        vec!["show", "long_line.md"],
        vec!["recall", "a fine memory please"],
        vec!["secrets", "scan"],
    ] {
        let mut full = args.clone();
        full.extend(["--memory-dir", &memory_dir, "--json"]);
        let out = bounded(s.command(&full), limit);
        let code = exit_code(&out);
        assert!(
            matches!(code, 0..=2),
            "{args:?}: exit {code} (a panic is 101): {}",
            stderr(&out)
        );
        if code == 2 {
            assert!(
                !stderr(&out).trim().is_empty(),
                "{args:?}: a failure names what failed"
            );
        }
    }
    // What cannot be read is named, with its file.
    let lint = bounded(
        s.command(&["lint", "--memory-dir", &memory_dir, "--json"]),
        limit,
    );
    let text = String::from_utf8_lossy(&lint.stdout);
    assert!(
        text.contains("bad_utf8.md") && text.contains("binary.md"),
        "{text}"
    );
    // The loop and the link out of the dir are refused by name, not followed.
    let outside = bounded(
        s.command(&["show", "outside.md", "--memory-dir", &memory_dir]),
        limit,
    );
    assert_eq!(exit_code(&outside), 2);
    assert!(
        !String::from_utf8_lossy(&outside.stdout).contains("root:"),
        "/etc/passwd was not shown"
    );
    let looping = bounded(
        s.command(&["show", "loop-a.md", "--memory-dir", &memory_dir]),
        limit,
    );
    assert!(stderr(&looping).contains("loop"), "{}", stderr(&looping));
    assert_eq!(snapshot(&dir), before, "reading changed nothing");
    // Writing beside them still works, and keeps the index's other lines.
    let out = bounded(
        s.command(&[
            "remember",
            "--type",
            "project",
            "--name",
            "Deploy",
            "--description",
            "how we deploy",
            "--body",
            "Fly.io",
            "--memory-dir",
            &memory_dir,
        ]),
        limit,
    );
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let index = fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert!(
        index.contains("[Good](good.md)")
            && index.contains("[Bad](bad_utf8.md)")
            && index.contains("project_deploy.md"),
        "{index}"
    );
}

#[test]
fn a_memory_dir_that_is_a_file_is_named_as_such() {
    let s = Sandbox::in_project("file-dir").with_engram_home();
    let file = s.root().join("not-a-dir");
    fs::write(&file, "just a file").expect("file");
    for args in [vec!["scan"], vec!["lint"], vec!["index"]] {
        let mut full = args.clone();
        let path = file.to_string_lossy().into_owned();
        full.extend(["--memory-dir", &path]);
        let out = bounded(s.command(&full), Duration::from_secs(30));
        assert_eq!(exit_code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not-a-dir"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(fs::read_to_string(&file).expect("read"), "just a file");
}
