//! Concurrent writers: a process imitating Claude Code saves memories (its two-step protocol: the
//! topic file with `Write`, then the index line with `Edit` after reading `MEMORY.md`, refused
//! and retried when the file changed since that read) while Engram, in other processes, writes
//! two new memories, updates an existing one and applies a dream's change set to the same dir —
//! all started together, 200 rounds. Zero lost writes: after each round every write either side
//! reported done is on disk (the index keeps every line anyone wrote), and anything not done was
//! reported as a conflict by whoever could not do it.
//!
//! The imitator is this test binary run as a child (`claude_code_imitator_child`, a no-op unless
//! `IMITATOR_DIR` is set), so it is a separate OS process with its own timing, as Claude Code is.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::support::{exit_code, stderr, Sandbox};
use memory_engine::testing::fixtures::Xorshift;

const ROUNDS: usize = 200;

fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no {path:?}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn mtime(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Claude Code's `Write` and `Edit` write the file in place (truncate, then write), not through
/// a rename.
fn write_in_place(path: &Path, text: &str) {
    let mut file = fs::File::create(path).expect("open for write");
    file.write_all(text.as_bytes()).expect("write");
}

/// The imitator: one memory saved the way Claude Code's model saves it. Its steps and timing:
/// `Write` the topic file; think; `Read` MEMORY.md (remembering its mtime); think; `Edit` it —
/// refused when the file's mtime moved since the read ("File has been modified since read"),
/// and then read again and retried, as the model does; otherwise `old_string` (the last line)
/// replaced by itself plus the new line in the file as it is now, written in place.
///
/// Claude Code compares mtimes in milliseconds; the imitator compares them exactly, so a write
/// landing in the same millisecond as the one it read is still seen (Claude Code would miss it:
/// that window is Claude Code's, not Engram's).
#[test]
fn claude_code_imitator_child() {
    let Some(dir) = std::env::var_os("IMITATOR_DIR").map(PathBuf::from) else {
        return;
    };
    let round: usize = std::env::var("IMITATOR_ROUND")
        .expect("round")
        .parse()
        .expect("number");
    let memory = dir.join("mem");
    let mut rng = Xorshift(0xc1a0_de00 ^ round as u64);
    // A model's pauses between tool calls, compressed to milliseconds so they overlap Engram's
    // writes (Engram's processes take 10–100 ms).
    let mut think = || std::thread::sleep(Duration::from_micros(rng.next_u64() % 25_000));
    fs::write(dir.join(format!("ready-{round}")), "").expect("ready");
    wait_for(&dir.join("go"));
    think();
    let file = format!("project_claude_{round}.md");
    let body = coined_words(&mut Xorshift(0xb0d7 ^ round as u64), 14);
    write_in_place(
        &memory.join(&file),
        &format!(
            "---\nname: Claude {round}\ndescription: saved by Claude Code in round {round}\n\
             type: project\n---\n{body}, written yesterday.\n"
        ),
    );
    let index = memory.join("MEMORY.md");
    let line = format!("- [Claude {round}]({file}) — saved by Claude Code in round {round}");
    let mut refused = 0;
    loop {
        think();
        let read_at = mtime(&index);
        let read = fs::read_to_string(&index).unwrap_or_default();
        think();
        if mtime(&index) != read_at {
            refused += 1; // "File has been modified since read": read it again
            assert!(refused < 200, "round {round}: refused 200 times");
            continue;
        }
        let current = fs::read_to_string(&index).unwrap_or_default();
        let Some(old_string) = read.lines().last().filter(|l| current.contains(*l)) else {
            refused += 1; // "old_string not found": read it again
            continue;
        };
        let updated = current.replacen(old_string, &format!("{old_string}\n{line}"), 1);
        write_in_place(&index, &updated);
        fs::write(
            dir.join(format!("imitator-{round}.log")),
            format!("CURRENT\n{current}\nWROTE\n{updated}"),
        )
        .expect("log");
        break;
    }
    println!("IMITATOR DONE {round} refused {refused}");
}

fn imitator(dir: &Path, round: usize) -> Child {
    Command::new(std::env::current_exe().expect("exe"))
        .args([
            "claude_code_writer::claude_code_imitator_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("IMITATOR_DIR", dir)
        .env("IMITATOR_ROUND", round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the imitator")
}

fn debug_history(s: &Sandbox, memory: &Path, marker: &str) -> String {
    let engine = memory_engine::Engine::builder(
        memory_engine::environment::Environment::empty()
            .with("HOME", s.home().to_string_lossy())
            .with("ENGRAM_HOME", s.engram_home().to_string_lossy()),
    )
    .build();
    let versions = engine.history(memory, Some("MEMORY.md")).expect("history");
    versions
        .iter()
        .take(12)
        .map(|v| {
            let text = engine
                .version_content(&v.version)
                .ok()
                .flatten()
                .unwrap_or_default();
            format!(
                "{} {:?} {} {} has-marker={} lines={}",
                v.version,
                v.actor,
                v.time,
                v.summary,
                text.contains(marker),
                text.lines().count()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `n` made-up words (three random syllables each), so no two memories share their vocabulary:
/// memories drawn from one small word list read as near-duplicates, and the dream would rightly
/// fold them — which is not what this test is about.
fn coined_words(rng: &mut Xorshift, n: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "bo", "di", "fa", "gu", "he",
        "jo",
    ];
    (0..n)
        .map(|_| {
            (0..3)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn topic(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}\n")
}

/// Whether `index` links to `file`.
fn links(index: &str, file: &str) -> bool {
    index.contains(&format!("]({file})"))
}

#[test]
fn claude_code_and_engram_writing_at_once_lose_nothing_in_two_hundred_rounds() {
    let s = Sandbox::in_project("writers").with_engram_home();
    let work = s.root().join("writers");
    let memory = work.join("mem");
    fs::create_dir_all(&memory).expect("mem");
    // Every body is words of its own: the dream finds no duplicates to fold.
    let mut words = Xorshift(0x5eed_5eed);
    let mut index = String::new();
    for i in 0..20 {
        let file = format!("project_seed_{i}.md");
        let body = coined_words(&mut words, 14);
        fs::write(
            memory.join(&file),
            topic(&format!("Seed {i}"), "a seed", &body),
        )
        .expect("seed");
        index.push_str(&format!("- [Seed {i}]({file}) — a seed\n"));
    }
    fs::write(memory.join("MEMORY.md"), index).expect("index");
    let dir = memory.to_string_lossy().into_owned();
    let (mut conflicts, mut refusals) = (0, 0);
    for round in 0..ROUNDS {
        let _ = fs::remove_file(work.join("go"));
        let before = fs::read_to_string(memory.join("MEMORY.md")).expect("index");
        let claude = imitator(&work, round);
        wait_for(&work.join(format!("ready-{round}")));
        // Engram's writers, each a process: two new memories, an update of a seed memory (its
        // body and description), and a dream applying its change set (the imitator's
        // "yesterday" is one of the changes it may find).
        let seed = round % 20;
        let edited = format!("edited in round {round}");
        let (body_a, body_b, body_seed) = (
            coined_words(&mut words, 14),
            coined_words(&mut words, 14),
            coined_words(&mut words, 14),
        );
        let remember = |name: &str, description: &str, body: &str| {
            s.command(&[
                "remember",
                "--type",
                "project",
                "--name",
                name,
                "--description",
                description,
                "--body",
                body,
                "--memory-dir",
                &dir,
            ])
        };
        let mut engram = [
            remember(&format!("Engram A {round}"), "written by Engram", &body_a),
            remember(&format!("Engram B {round}"), "written by Engram", &body_b),
            remember(
                &format!("Seed {seed}"),
                &edited,
                &format!("{body_seed} ({edited})"),
            ),
            s.command(&[
                "dream",
                "run",
                "--force",
                "--apply",
                "--provider",
                "offline",
                "--memory-dir",
                &dir,
            ]),
        ]
        .map(|mut command| {
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn engram")
        });
        fs::write(work.join("go"), "").expect("go");
        let claude = claude.wait_with_output().expect("imitator");
        assert!(
            claude.status.success(),
            "round {round}: the imitator failed: {}",
            String::from_utf8_lossy(&claude.stderr)
        );
        let said = String::from_utf8_lossy(&claude.stdout);
        refusals += said
            .split("refused ")
            .nth(1)
            .and_then(|n| n.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        let outcomes: Vec<(i32, String)> = engram
            .iter_mut()
            .map(|child| {
                let status = child.wait().expect("engram");
                let mut err = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    use std::io::Read as _;
                    let _ = pipe.read_to_string(&mut err);
                }
                (status.code().unwrap_or(-1), err)
            })
            .collect();

        let index = fs::read_to_string(memory.join("MEMORY.md")).expect("index");
        // Claude Code's save: its file and its line.
        let claude_file = format!("project_claude_{round}.md");
        assert!(
            memory.join(&claude_file).is_file(),
            "round {round}: Claude's file"
        );
        assert!(
            links(&index, &claude_file),
            "round {round}: Claude's line is lost:\n{index}"
        );
        // Engram's: done, or refused as a conflict that says so.
        for (i, (code, err)) in outcomes.iter().enumerate() {
            if *code != 0 {
                assert!(
                    err.contains("changed on disk") || err.contains("conflict"),
                    "round {round}: writer {i} failed without a conflict: {err}"
                );
                conflicts += 1;
            }
        }
        for (i, who) in ["a", "b"].iter().enumerate() {
            let file = format!("project_engram_{who}_{round}.md");
            if outcomes[i].0 == 0 {
                assert!(memory.join(&file).is_file(), "round {round}: {file}");
                assert!(
                    links(&index, &file),
                    "round {round}: the line of {file} is lost:\n{index}\nIMITATOR LOG {}",
                    fs::read_to_string(work.join(format!("imitator-{round}.log")))
                        .unwrap_or_default()
                );
            }
        }
        if outcomes[2].0 == 0 {
            let seed_file = format!("project_seed_{seed}.md");
            let text = fs::read_to_string(memory.join(&seed_file)).expect("seed");
            assert!(
                text.contains(&edited),
                "round {round}: the update of {seed_file} is lost"
            );
            assert!(
                index.contains(&format!("]({seed_file}) — {edited}")),
                "round {round}: the updated line of {seed_file} is lost:\n{index}\nIMITATOR LOG {}\nHISTORY {}",
                fs::read_to_string(work.join(format!("imitator-{round}.log"))).unwrap_or_default(),
                debug_history(&s, &memory, &edited)
            );
        }
        // No line anyone wrote before the round is gone.
        for line in before.lines() {
            if let Some(target) = line.split("](").nth(1).and_then(|t| t.split(')').next()) {
                assert!(
                    links(&index, target),
                    "round {round}: the line of {target} is gone"
                );
            }
        }
        // Between rounds (nothing running), the round's new memories go again, so the index
        // stays under Claude Code's 200 lines — past them the dream would lay it out anew.
        let added = [
            claude_file,
            format!("project_engram_a_{round}.md"),
            format!("project_engram_b_{round}.md"),
        ];
        for file in &added {
            let _ = fs::remove_file(memory.join(file));
        }
        let kept: String = index
            .lines()
            .filter(|line| !added.iter().any(|file| links(line, file)))
            .map(|line| format!("{line}\n"))
            .collect();
        fs::write(memory.join("MEMORY.md"), kept).expect("index");
    }
    let history = s.run(&["history", "--memory-dir", &dir, "--json"]);
    assert_eq!(exit_code(&history), 0, "{}", stderr(&history));
    eprintln!(
        "concurrent writers: {ROUNDS} rounds, Claude Code's edit refused as stale {refusals} times, \
         {conflicts} Engram writes refused as conflicts"
    );
}
