//! Crash safety of large applies: a child process applying a large change set — an offline
//! dream rewriting 300 memories and deleting 40 duplicates, a lint fix touching 60 indexes, the
//! undo (a revert) of a 300-file change set, a `remember` into a 20,000-file dir — is killed with
//! SIGKILL at random points, 50 times each. After every kill: each file is entirely its old or
//! its new content (never torn, never empty, never something else), no temp file under a name
//! Claude Code would load, and no index links to a file that existed before and is now gone.
//! Then the same command, run again, recovers: it finishes and the dir is what an unkilled run
//! leaves. History stays readable throughout.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::support::{exit_code, stderr, Sandbox};
use memory_engine::testing::fixtures::Xorshift;

const KILLS: usize = 50;

/// Every file under `dir` (relative, `/`-separated) with its bytes; Claude Code's dream lock is
/// left out (it is the dream's, and taken back on the next run).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    TREE_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let mut out = BTreeMap::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(at) = pending.pop() {
            for entry in fs::read_dir(&at).expect("dir").flatten() {
                let path = entry.path();
                let meta = entry.metadata().expect("metadata");
                if meta.is_dir() {
                    pending.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(dir)
                    .expect("inside")
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel == ".consolidate-lock" {
                    continue;
                }
                // A file whose size, mtime and inode are those of the last read is not read again
                // (a 20,000-file dir is walked several times a round); any write changes them.
                let stamp = (meta.len(), meta.modified().expect("mtime"), inode(&meta));
                let bytes = match cache.get(&path) {
                    Some((seen, bytes)) if *seen == stamp => bytes.clone(),
                    _ => {
                        let bytes = fs::read(&path).expect("read");
                        cache.insert(path.clone(), (stamp, bytes.clone()));
                        bytes
                    }
                };
                out.insert(rel, bytes);
            }
        }
        out
    })
}

type Stamp = (u64, SystemTime, u64);

thread_local! {
    static TREE_CACHE: std::cell::RefCell<std::collections::HashMap<PathBuf, (Stamp, Vec<u8>)>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// Makes `files` the whole content of `dir` (anything else removed), each written file with the
/// same old mtime — the dream dates relative words from a file's mtime. Only what differs is
/// written, so a 20,000-file dir resets quickly.
fn reset(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_781_049_600); // 2026-06-10
    let current = if dir.exists() {
        tree(dir)
    } else {
        BTreeMap::new()
    };
    for rel in current.keys().filter(|k| !files.contains_key(*k)) {
        fs::remove_file(dir.join(rel)).expect("remove");
    }
    let _ = fs::remove_file(dir.join(".consolidate-lock"));
    for (rel, bytes) in files {
        if current.get(rel) == Some(bytes) {
            continue;
        }
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(&path, bytes).expect("write");
        fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(when))
            .expect("mtime");
    }
}

/// The link targets of every index in `now`, resolved against the index's folder.
fn index_targets(now: &BTreeMap<String, Vec<u8>>) -> Vec<(String, String)> {
    let mut targets = Vec::new();
    for (rel, bytes) in now {
        if !(rel == "MEMORY.md" || rel.ends_with("/MEMORY.md")) {
            continue;
        }
        let folder = rel.strip_suffix("MEMORY.md").expect("index");
        let text = String::from_utf8_lossy(bytes);
        for part in text.split("](").skip(1) {
            if let Some(end) = part.find(')') {
                targets.push((rel.clone(), format!("{folder}{}", &part[..end])));
            }
        }
    }
    targets
}

/// One kind of large apply.
struct Scenario<'a> {
    name: &'static str,
    /// The memory dir's starting state.
    start: BTreeMap<String, Vec<u8>>,
    /// Puts anything besides the dir back (a staged set, for an undo).
    prepare: Box<dyn Fn() + 'a>,
    args: Vec<String>,
    /// What a rerun may say instead of succeeding when the killed run had finished the work
    /// (a clean report, the dir as an unkilled run leaves it).
    already_done: Option<&'static str>,
}

/// Kills `scenario`'s command at random points `KILLS` times (see the module docs); returns how
/// many kills landed mid-run.
fn sweep(s: &Sandbox, dir: &Path, scenario: &Scenario<'_>, seed: u64) -> usize {
    let args: Vec<&str> = scenario.args.iter().map(String::as_str).collect();
    let name = scenario.name;
    // The reference: one unkilled run, timed.
    reset(dir, &scenario.start);
    (scenario.prepare)();
    let started = Instant::now();
    let out = s.run(&args);
    let typical = started.elapsed();
    assert_eq!(exit_code(&out), 0, "{name}: {}", stderr(&out));
    let old = &scenario.start;
    let new = tree(dir);
    assert_ne!(&new, old, "{name}: the command changes nothing");
    let changed = old
        .keys()
        .chain(new.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .count();

    let mut rng = Xorshift(seed);
    let mut killed = 0;
    for n in 1..=KILLS {
        reset(dir, old);
        (scenario.prepare)();
        let mut child = s
            .command(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let delay = Duration::from_micros(rng.next_u64() % (typical.as_micros() as u64).max(1));
        std::thread::sleep(delay);
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            killed += 1;
        }
        child.wait().expect("reap");

        let now = tree(dir);
        for key in old.keys().chain(new.keys()).chain(now.keys()) {
            if key.contains(".engram-") {
                assert!(
                    !key.ends_with(".md"),
                    "{name} kill {n}: a temp file Claude Code would load: {key}"
                );
                continue;
            }
            let here = now.get(key);
            assert!(
                here == old.get(key) || here == new.get(key),
                "{name} kill {n}: {key} is neither its old nor its new content: {:?}",
                here.map(|b| String::from_utf8_lossy(b)
                    .chars()
                    .take(200)
                    .collect::<String>())
            );
        }
        for (index, target) in index_targets(&now) {
            assert!(
                now.contains_key(&target) || !old.contains_key(&target),
                "{name} kill {n}: {index} links to {target}, which was there and is gone"
            );
        }
        // Running it again recovers (or reports, cleanly, that there is nothing left to do).
        let again = s.run(&args);
        let reported_done = scenario
            .already_done
            .is_some_and(|done| exit_code(&again) == 2 && stderr(&again).contains(done));
        assert!(
            exit_code(&again) == 0 || reported_done,
            "{name} kill {n}: the rerun failed: {}",
            stderr(&again)
        );
        let recovered: BTreeMap<String, Vec<u8>> = tree(dir)
            .into_iter()
            .filter(|(k, _)| !k.contains(".engram-"))
            .collect();
        let differ: Vec<String> = recovered
            .keys()
            .chain(new.keys())
            .filter(|k| recovered.get(*k) != new.get(*k))
            .map(|k| {
                let show = |side: Option<&Vec<u8>>| {
                    side.map_or("(absent)".to_owned(), |b| {
                        String::from_utf8_lossy(b).into_owned()
                    })
                };
                format!(
                    "{k}:\n  rerun: {}\n  unkilled: {}",
                    show(recovered.get(k)),
                    show(new.get(k))
                )
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{name} kill {n}: the rerun left {} files that differ from an unkilled run: {}",
            differ.len(),
            differ
                .iter()
                .filter(|d| !d.starts_with("MEMORY.md"))
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let history = s.run(&["history", "--memory-dir", &dir.to_string_lossy(), "--json"]);
    assert_eq!(
        exit_code(&history),
        0,
        "{name}: history: {}",
        stderr(&history)
    );
    eprintln!(
        "crash sweep, {name}: {KILLS} runs of a {changed}-file change, {killed} killed mid-run (one unkilled run: {typical:?})"
    );
    assert!(
        killed >= KILLS / 4,
        "{name}: kills landed mid-run: {killed}"
    );
    killed
}

fn memory(name: &str, body: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: about {name}\ntype: project\n---\n{body}\n")
        .into_bytes()
}

fn with_index(mut files: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let index: String = files
        .keys()
        .map(|file| format!("- [{file}]({file}) — about {file}\n"))
        .collect();
    files.insert("MEMORY.md".to_owned(), index.into_bytes());
    files
}

#[test]
fn sigkills_of_a_dream_applying_three_hundred_rewrites_and_forty_deletes_leave_every_file_whole() {
    let s = Sandbox::in_project("crash-dream").with_engram_home();
    let dir = s.root().join("mem");
    // Bodies of words no other memory uses, so no two memories but the duplicate pairs look
    // alike (random words from one small vocabulary share enough to read as near-duplicates).
    let own_words = |tag: &str, i: usize, n: usize| {
        (0..n)
            .map(|k| format!("{tag}{i}w{k}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut files = BTreeMap::new();
    for i in 0..300 {
        let body = format!("{}. Deployed build {i} yesterday.", own_words("r", i, 12));
        files.insert(
            format!("project_release_{i}.md"),
            memory(&format!("Release {i}"), &body),
        );
    }
    for i in 0..40 {
        // Pairs of exact duplicates: one of each goes.
        let body = own_words("d", i, 16);
        files.insert(
            format!("project_db_{i}.md"),
            memory(&format!("DB {i}"), &body),
        );
        files.insert(
            format!("project_db_{i}_copy.md"),
            memory(&format!("DB {i} copy"), &body),
        );
    }
    let memory_dir = dir.to_string_lossy().into_owned();
    let scenario = Scenario {
        name: "dream",
        start: with_index(files),
        prepare: Box::new(|| {}),
        already_done: None,
        args: [
            "dream",
            "run",
            "--force",
            "--apply",
            "--provider",
            "offline",
            "--memory-dir",
            &memory_dir,
        ]
        .map(str::to_owned)
        .to_vec(),
    };
    sweep(&s, &dir, &scenario, 0xd2ea_0001);
}

#[test]
fn sigkills_of_a_fix_touching_sixty_indexes_leave_every_file_whole() {
    let s = Sandbox::in_project("crash-fix").with_engram_home();
    let dir = s.root().join("mem");
    let mut files = BTreeMap::new();
    let mut root_index = String::new();
    for area in 0..60 {
        let folder = format!("area_{area}");
        let mut index = format!("- [Gone](gone_{area}.md) — a file that was deleted\n");
        for i in 0..5 {
            let file = format!("note_{i}.md");
            files.insert(
                format!("{folder}/{file}"),
                memory(&format!("Area {area} note {i}"), "x"),
            );
            if i == 0 {
                index.push_str(&format!("- [Note 0]({file}) — about note 0\n"));
            }
        }
        files.insert(format!("{folder}/MEMORY.md"), index.into_bytes());
        root_index.push_str(&format!(
            "- [Area {area}]({folder}/MEMORY.md) — area {area}\n"
        ));
    }
    files.insert("MEMORY.md".to_owned(), root_index.into_bytes());
    let memory_dir = dir.to_string_lossy().into_owned();
    let scenario = Scenario {
        name: "fix",
        start: files,
        prepare: Box::new(|| {}),
        already_done: None,
        args: ["lint", "--fix", "--memory-dir", &memory_dir]
            .map(str::to_owned)
            .to_vec(),
    };
    // `lint --fix` exits 1 when findings remain that it cannot fix; the reference run must not.
    sweep(&s, &dir, &scenario, 0xf1c5_0002);
}

#[test]
fn sigkills_of_the_undo_of_a_three_hundred_file_change_set_leave_every_file_whole() {
    let s = Sandbox::in_project("crash-undo").with_engram_home();
    let dir = s.root().join("mem");
    let memory_dir = dir.to_string_lossy().into_owned();
    // A 300-file change set, applied: the redaction of a token in each file.
    let token = format!("ghp_{}", "Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7");
    let mut leaky = BTreeMap::new();
    for i in 0..300 {
        leaky.insert(
            format!("project_ci_{i}.md"),
            memory(&format!("CI {i}"), &format!("Runner {i} uses {token}.")),
        );
    }
    reset(&dir, &with_index(leaky));
    let staged = s.json(&["secrets", "redact", "--memory-dir", &memory_dir]);
    let id = staged["id"].as_str().expect("id").to_owned();
    let applied = s.run(&["changes", "apply", &id, "--memory-dir", &memory_dir]);
    assert_eq!(exit_code(&applied), 0, "{}", stderr(&applied));
    // The undo's starting point: the redacted files and the set as applied.
    let start = tree(&dir);
    let staging: PathBuf = s.engram_home().join("staging");
    let saved_staging = tree(&staging);
    let scenario = Scenario {
        name: "undo",
        start,
        prepare: Box::new(|| reset(&staging, &saved_staging)),
        already_done: Some("has nothing applied to undo"),
        args: ["changes", "undo", &id, "--memory-dir", &memory_dir]
            .map(str::to_owned)
            .to_vec(),
    };
    sweep(&s, &dir, &scenario, 0x0d00_0003);
}

#[test]
fn sigkills_of_remember_into_a_twenty_thousand_file_dir_leave_every_file_whole() {
    let s = Sandbox::in_project("crash-20k").with_engram_home();
    let dir = s.root().join("mem");
    let mut files = BTreeMap::new();
    for i in 0..20_000 {
        files.insert(
            format!("project_n{i}.md"),
            memory(&format!("N {i}"), "body"),
        );
    }
    let memory_dir = dir.to_string_lossy().into_owned();
    let scenario = Scenario {
        name: "remember into 20,000 files",
        start: with_index(files),
        prepare: Box::new(|| {}),
        already_done: None,
        args: [
            "remember",
            "--type",
            "project",
            "--name",
            "Crash",
            "--description",
            "written while being killed",
            "--body",
            "survived",
            "--memory-dir",
            &memory_dir,
        ]
        .map(str::to_owned)
        .to_vec(),
    };
    sweep(&s, &dir, &scenario, 0x20_0004);
}
