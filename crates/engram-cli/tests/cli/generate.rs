//! `engram generate`: the completions and the man page the packages install, checked by the
//! programs that read them (bash completes a real command line, groff renders the page).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{exit_code, stderr, stdout, Sandbox};

/// The visible subcommands, as `engram --help` lists them.
fn subcommands(sandbox: &Sandbox) -> Vec<String> {
    let help = stdout(&sandbox.run(&["--help"]));
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_subcommands_and_flags_from_the_generated_script() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["generate", "bash"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let script = sandbox.root().join("engram.bash");
    fs::write(&script, stdout(&out)).expect("write the script");

    // What bash does on `engram dr<TAB>` and `engram dream run --<TAB>`.
    let complete = |words: &str| {
        let program = format!(
            "source {script}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; \
             _engram engram \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = script.display()
        );
        let out = Command::new("bash")
            .args(["--norc", "-c", &program])
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "bash: {}", stderr(&out));
        stdout(&out)
    };
    let replies = complete("engram dr");
    assert_eq!(replies.trim(), "dream", "{replies}");
    let replies = complete("engram dream run --");
    for flag in ["--force", "--apply", "--stage", "--claude-dir", "--json"] {
        assert!(
            replies.lines().any(|line| line == flag),
            "{flag} missing: {replies}"
        );
    }
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    let sandbox = Sandbox::new();
    let names = subcommands(&sandbox);
    assert!(names.len() > 20, "{names:?}");
    let zsh = stdout(&sandbox.run(&["generate", "zsh"]));
    assert!(zsh.starts_with("#compdef engram"), "{}", &zsh[..80]);
    let fish = stdout(&sandbox.run(&["generate", "fish"]));
    for name in &names {
        assert!(zsh.contains(&format!("'{name}:")), "zsh lacks {name}");
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "fish lacks {name}"
        );
    }
}

/// groff's plain-text rendering of a man page (UTF-8 input, as `man` reads it through
/// preconv), failing on any warning.
fn render(page: &Path) -> String {
    let checked = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .arg(page)
        .output()
        .expect("groff runs");
    assert!(
        checked.status.success() && checked.stderr.is_empty(),
        "groff warns about {}: {}",
        page.display(),
        stderr(&checked)
    );
    let text = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-P", "-cbou"])
        .arg(page)
        .output()
        .expect("groff runs");
    stdout(&text)
}

#[test]
fn the_man_pages_render_and_every_page_named_exists() {
    let sandbox = Sandbox::new();
    let dir = sandbox.root().join("man");
    fs::create_dir_all(&dir).expect("mkdir");
    let out = sandbox.run(&["generate", "man", "--dir", dir.to_str().expect("UTF-8")]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));

    let text = render(&dir.join("engram.1"));
    assert!(
        text.contains("engram - See and manage Claude Code"),
        "{text}"
    );
    let section = text
        .split("SUBCOMMANDS")
        .nth(1)
        .unwrap_or_else(|| panic!("no SUBCOMMANDS section: {text}"));
    for name in subcommands(&sandbox) {
        assert!(
            section.contains(&format!("engram-{name}(1)")),
            "{name} missing: {section}"
        );
    }
    assert!(
        !text.contains("generate"),
        "the hidden command stays hidden"
    );

    // Every page renders cleanly, and every page one of them refers to is there.
    let pages: Vec<_> = fs::read_dir(&dir)
        .expect("list")
        .flatten()
        .map(|entry| entry.path())
        .collect();
    assert!(pages.len() > 40, "one page per subcommand: {pages:?}");
    for page in &pages {
        let text = render(page);
        for word in text.split_whitespace() {
            if let Some(name) = word
                .strip_suffix("(1)")
                .filter(|w| w.starts_with("engram-"))
            {
                assert!(
                    dir.join(format!("{name}.1")).is_file(),
                    "{} refers to {name}(1), which was not written",
                    page.display()
                );
            }
        }
    }
    assert!(!dir.join("engram-generate.1").exists());
    // The newest commands have their pages too (the list above comes from --help).
    for name in ["engram-mcp.1", "engram-mcp-install.1", "engram-usage.1"] {
        assert!(dir.join(name).is_file(), "{name} missing");
    }

    let refused = sandbox.run(&["generate", "man"]);
    assert_eq!(exit_code(&refused), 2, "man pages need --dir");
}
