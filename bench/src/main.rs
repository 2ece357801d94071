//! `make bench`: builds synthetic memory dirs (200 / 2,000 / 20,000 topic files), then times the
//! engine's `scan`, `index` and `lint` against the raw-read floor — a minimal open + read 4 KiB +
//! close loop over the same files — in the same run, and prints the ratio.
//!
//! The machines here are shared and noisy, and drop files from the page cache within seconds, so
//! every measurement is interleaved with the floor (floor, op, floor, op, …), each preceded by a
//! warming pass over the corpus, and the report gives medians and the ratio of medians. Figures are
//! warm-cache figures.
//!
//! `open` and `reopen` time what the app does before a project's live view starts: bringing
//! Engram's history up to date with the dir (`baseline_history`), into a fresh history store
//! (first open: every file is recorded) and then into the same store again (nothing changed).
//! A first open writes every file's content into the store, so its floor is the raw-create limit
//! (create, write 1 KiB, close, for as many files, in 256 sub-dirs like the history's blob store);
//! a reopen only reads, so its floor is the raw-read limit. Both run fewer rounds.
//!
//! Usage: `engram-bench [--sizes 200,2000,20000] [--rounds N] [--corpus DIR] [--only memory|sessions|recall|dream|extract|mcp|app|budget]`,
//! or `engram-bench --soak MINUTES` for the soak (`soak.rs`, `make soak`).
//! The session benches (transcripts, listing, search, the Stop hook) are in `sessions.rs`; the
//! dream's quality (labeled pairs, the messy dir's criteria) in `dream.rs`; the MCP server's tool
//! calls at 10,000 memories in `mcp.rs`; the daily token budget at work (extractions switching to
//! offline, a forced dream skipped, what the check costs) in `budget.rs`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

// The app's cold start and the soak read `/proc`, start Xvfb and use Unix process groups: Linux
// only. Elsewhere they are refused with a message saying so, and a full run skips the app start.
#[cfg(target_os = "linux")]
mod app;
mod budget;
mod dream;
mod extract;
mod mcp;
mod recall;
mod sessions;
#[cfg(target_os = "linux")]
mod soak;

#[cfg(not(target_os = "linux"))]
mod app {
    pub fn app_start(_corpus: &std::path::Path) -> Result<(), String> {
        Err(crate::LINUX_ONLY.replace("{what}", "the app-start bench"))
    }
}

#[cfg(not(target_os = "linux"))]
mod soak {
    pub fn soak(_corpus: &std::path::Path, _minutes: f64) -> Result<(), String> {
        Err(crate::LINUX_ONLY.replace("{what}", "the soak"))
    }
}

/// Why a Linux-only part of the benches does not run here.
#[cfg_attr(target_os = "linux", allow(dead_code))]
const LINUX_ONLY: &str = "{what} runs on Linux only: it reads /proc, starts Xvfb and uses Unix \
                          process groups (docs/platforms.md, row 6)";

use memory_engine::recall::Selector;
use memory_engine::testing::fixtures::{Xorshift, VOCABULARY};
use memory_engine::{Engine, Environment, MemoryType};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("engram-bench: {message}");
            ExitCode::from(2)
        }
    }
}

struct Options {
    sizes: Vec<usize>,
    rounds: usize,
    corpus: PathBuf,
    /// `memory` or `sessions`: run only that group.
    only: Option<String>,
    /// `--soak MINUTES`: the soak instead of the benches (`make soak`).
    soak_minutes: Option<f64>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        sizes: vec![200, 2_000, 20_000],
        rounds: 7,
        corpus: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        only: None,
        soak_minutes: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--sizes" => {
                options.sizes = value()?
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|_| format!("bad size {s:?}")))
                    .collect::<Result<_, _>>()?
            }
            "--rounds" => {
                options.rounds = value()?.parse().map_err(|_| "bad --rounds".to_string())?
            }
            "--corpus" => options.corpus = PathBuf::from(value()?),
            "--only" => options.only = Some(value()?),
            "--soak" => {
                options.soak_minutes = Some(
                    value()?
                        .parse()
                        .map_err(|_| "bad --soak minutes".to_string())?,
                )
            }
            "--child-parse" => {
                let kind = value()?;
                let path = PathBuf::from(value()?);
                sessions::child_parse(&kind, &path)?;
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

/// One engine operation under test; returns how many items it produced.
type Operation<'a> = dyn Fn() -> Result<usize, String> + 'a;

fn run() -> Result<(), String> {
    let options = parse_options()?;
    if let Some(minutes) = options.soak_minutes {
        return soak::soak(&options.corpus, minutes);
    }
    if options.only.as_deref() == Some("sessions") {
        return sessions::session_benches(&options.corpus, options.rounds);
    }
    let engine = Engine::builder(Environment::from_process()).build();
    if options.only.as_deref() == Some("app") {
        return app::app_start(&options.corpus);
    }
    if options.only.as_deref() == Some("mcp") {
        return mcp::mcp_latency(&options.corpus);
    }
    if matches!(options.only.as_deref(), None | Some("extract")) {
        extract::extract_quality()?;
        if options.only.is_some() {
            return Ok(());
        }
    }
    if matches!(options.only.as_deref(), None | Some("dream")) {
        // Its own data dir: the embedding cache starts empty and never touches the user's.
        let home = options.corpus.join("engram-home-dream");
        let _ = fs::remove_dir_all(&home);
        let engine = Engine::builder(Environment::from_process())
            .engram_home(&home)
            .build();
        dream::dream_quality(&engine, &options.corpus)?;
        if options.only.is_some() {
            return Ok(());
        }
    }
    if matches!(options.only.as_deref(), None | Some("recall")) {
        // Its own data dir: the embedding cache starts empty and never touches the user's.
        let home = options.corpus.join("engram-home-recall");
        let _ = fs::remove_dir_all(&home);
        let engine = Engine::builder(Environment::from_process())
            .engram_home(&home)
            .build();
        let mut selectors = vec![("offline", Selector::Lexical)];
        match engine.embeddings().local_model() {
            Ok(_) => selectors.push(("local", Selector::Semantic(engine.embeddings().clone()))),
            Err(e) => println!("local recall not measured: {e}"),
        }
        recall::recall_quality(&engine, &selectors)?;
        recall::recall_latency(&options.corpus)?;
        recall::embedding_throughput(&options.corpus)?;
        mcp::mcp_latency(&options.corpus)?;
        if options.only.is_some() {
            return Ok(());
        }
    }
    if matches!(options.only.as_deref(), None | Some("budget")) {
        budget::budget_behaviour(&options.corpus)?;
        if options.only.is_some() {
            return Ok(());
        }
    }
    println!(
        "{:>7}  {:<6} {:>10} {:>10} {:>12} {:>7}",
        "files", "op", "median", "floor", "files/s", "ratio"
    );
    for &size in &options.sizes {
        let dir = options.corpus.join(format!("memdir-{size}"));
        generate_corpus(&dir, size).map_err(|e| format!("{}: {e}", dir.display()))?;
        let files = topic_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let memdir = engine.memory_dir(&dir);
        let ops: [(&str, &Operation<'_>); 3] = [
            ("scan", &|| {
                memdir
                    .scan(None)
                    .map(|h| h.len())
                    .map_err(|e| e.to_string())
            }),
            ("index", &|| {
                memdir
                    .load_index()
                    .map(|i| i.entries.len())
                    .map_err(|e| e.to_string())
            }),
            ("lint", &|| {
                memdir
                    .lint()
                    .map(|r| r.findings.len())
                    .map_err(|e| e.to_string())
            }),
        ];
        for (name, op) in ops {
            let mut op_times = Vec::new();
            let mut floor_times = Vec::new();
            for _ in 0..options.rounds {
                std::hint::black_box(raw_read_floor(&files));
                floor_times.push(time(|| raw_read_floor(&files)));
                std::hint::black_box(raw_read_floor(&files));
                let mut outcome = Ok(0);
                op_times.push(time(|| outcome = op()));
                outcome?;
            }
            let op_median = median(&mut op_times);
            let floor_median = median(&mut floor_times);
            println!(
                "{:>7}  {:<6} {:>10} {:>10} {:>12.0} {:>6.1}×",
                size,
                name,
                format_duration(op_median),
                format_duration(floor_median),
                size as f64 / op_median.as_secs_f64(),
                op_median.as_secs_f64() / floor_median.as_secs_f64()
            );
        }
    }
    for &size in &options.sizes {
        let dir = options.corpus.join(format!("memdir-{size}"));
        let files = topic_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let read_floor = {
            raw_read_floor(&files);
            let mut times: Vec<Duration> =
                (0..3).map(|_| time(|| raw_read_floor(&files))).collect();
            median(&mut times)
        };
        let create_floor = {
            let scratch = options.corpus.join(format!("create-floor-{size}"));
            let mut times = Vec::new();
            for _ in 0..options.rounds.clamp(1, 3) {
                let _ = fs::remove_dir_all(&scratch);
                let mut outcome = Ok(());
                times.push(time(|| {
                    outcome = raw_create_floor(&scratch, files.len() + 1)
                }));
                outcome.map_err(|e| format!("{}: {e}", scratch.display()))?;
            }
            fs::remove_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
            median(&mut times)
        };
        let (mut first, mut again) = (Vec::new(), Vec::new());
        for round in 0..options.rounds.clamp(1, 3) {
            let home = options.corpus.join(format!("engram-home-{size}-{round}"));
            let _ = fs::remove_dir_all(&home);
            let engine = Engine::builder(Environment::from_process())
                .engram_home(&home)
                .build();
            let mut outcome = Ok(Vec::new());
            first.push(time(|| outcome = engine.baseline_history(&dir)));
            let recorded = std::mem::replace(&mut outcome, Ok(Vec::new()))
                .map_err(|e| e.to_string())?
                .len();
            // Every topic file plus MEMORY.md.
            if recorded != files.len() + 1 {
                return Err(format!(
                    "first open recorded {recorded} of {} files",
                    files.len() + 1
                ));
            }
            again.push(time(|| outcome = engine.baseline_history(&dir)));
            outcome.map_err(|e| e.to_string())?;
            fs::remove_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        }
        for (name, times, floor) in [
            ("open", &mut first, create_floor),
            ("reopen", &mut again, read_floor),
        ] {
            let op_median = median(times);
            println!(
                "{:>7}  {:<6} {:>10} {:>10} {:>12.0} {:>6.1}×",
                size,
                name,
                format_duration(op_median),
                format_duration(floor),
                size as f64 / op_median.as_secs_f64(),
                op_median.as_secs_f64() / floor.as_secs_f64()
            );
        }
    }
    if let Some(&largest) = options.sizes.iter().max() {
        node_peer(
            &options.corpus.join(format!("memdir-{largest}")),
            options.rounds,
        )?;
    }
    dream_benches(&engine, &options)?;
    println!("peak RSS: {} MiB", peak_rss_kib() / 1024);
    if cfg!(target_os = "linux") {
        app::app_start(&options.corpus)?;
    } else {
        println!("app start: skipped: {}", LINUX_ONLY.replace("{what}", "it"));
    }
    if options.only.is_none() {
        sessions::session_benches(&options.corpus, options.rounds)?;
    }
    Ok(())
}

/// The dream's hot paths: the sessions gate over 5,000 transcripts against one `stat` per file
/// (its floor: the gate reads only names and mtimes), and the offline dream of a 2,000-file dir
/// (planning only: it writes nothing).
fn dream_benches(engine: &Engine, options: &Options) -> Result<(), String> {
    use memory_engine::dream::gates::sessions_touched_since;
    const TRANSCRIPTS: usize = 5_000;
    let transcripts = options.corpus.join("transcripts-5000");
    if !transcripts.is_dir() {
        fs::create_dir_all(&transcripts).map_err(|e| format!("{}: {e}", transcripts.display()))?;
        for n in 0..TRANSCRIPTS {
            let name = format!("{n:08x}-0000-4000-8000-{n:012x}.jsonl");
            fs::write(transcripts.join(name), "{}\n").map_err(|e| e.to_string())?;
        }
        for n in 0..50 {
            fs::write(transcripts.join(format!("agent-{n}.jsonl")), "{}\n")
                .map_err(|e| e.to_string())?;
        }
    }
    let stat_floor = || -> usize {
        fs::read_dir(&transcripts)
            .map(|entries| entries.flatten().filter(|e| e.metadata().is_ok()).count())
            .unwrap_or(0)
    };
    let (mut gate, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..options.rounds.max(5) {
        std::hint::black_box(stat_floor());
        floor.push(time(stat_floor));
        let mut outcome = Ok(Vec::new());
        gate.push(time(|| {
            outcome = sessions_touched_since(&transcripts, 0, None)
        }));
        let counted = outcome.map_err(|e| e.to_string())?.len();
        if counted != TRANSCRIPTS {
            return Err(format!(
                "the gate counted {counted} of {TRANSCRIPTS} sessions"
            ));
        }
    }
    let (gate, floor) = (median(&mut gate), median(&mut floor));
    println!(
        "{:>7}  {:<6} {:>10} {:>10} {:>12.0} {:>6.1}×   (sessions gate vs one stat per file)",
        TRANSCRIPTS,
        "gate",
        format_duration(gate),
        format_duration(floor),
        TRANSCRIPTS as f64 / gate.as_secs_f64(),
        gate.as_secs_f64() / floor.as_secs_f64()
    );

    const DREAM_FILES: usize = 2_000;
    let dir = options.corpus.join(format!("memdir-{DREAM_FILES}"));
    generate_corpus(&dir, DREAM_FILES).map_err(|e| format!("{}: {e}", dir.display()))?;
    let memdir = engine.memory_dir(&dir);
    let mut times = Vec::new();
    let mut planned = 0;
    for _ in 0..options.rounds.clamp(1, 5) {
        let mut outcome = Ok(0);
        times.push(time(|| {
            outcome = memory_engine::dream::offline::plan_offline_dream(&memdir, &chrono_local())
                .map(|d| d.changes.len())
        }));
        planned = outcome.map_err(|e| e.to_string())?;
    }
    println!(
        "{:>7}  {:<6} {:>10} {:>10} {:>12.0} {:>7}   (offline dream, {planned} files changed)",
        DREAM_FILES,
        "dream",
        format_duration(median(&mut times)),
        "-",
        DREAM_FILES as f64 / median(&mut times).as_secs_f64(),
        "-"
    );
    Ok(())
}

fn chrono_local() -> chrono::Local {
    chrono::Local
}

/// The floor any scanner pays: open, read up to 4 KiB, close, for every topic file.
fn raw_read_floor(files: &[PathBuf]) -> usize {
    let mut buffer = [0u8; 4096];
    let mut total = 0;
    for path in files {
        if let Ok(mut file) = fs::File::open(path) {
            total += file.read(&mut buffer).unwrap_or(0);
        }
    }
    total
}

/// The floor any store of `count` new files pays: create, write 1 KiB, close, spread over 256
/// sub-directories.
fn raw_create_floor(dir: &Path, count: usize) -> std::io::Result<()> {
    for shard in 0..256 {
        fs::create_dir_all(dir.join(format!("{shard:02x}")))?;
    }
    let content = [b'x'; 1024];
    for i in 0..count {
        fs::write(dir.join(format!("{:02x}/{i}", i % 256)), content)?;
    }
    Ok(())
}

/// How long `work` takes; its result goes through `black_box` so it cannot be optimised away.
fn time<T>(mut work: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    std::hint::black_box(work());
    start.elapsed()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn format_duration(d: Duration) -> String {
    if d.as_secs_f64() >= 1.0 {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}

/// The process's peak resident memory (`VmHWM`); 0 where there is no `/proc` (not Linux).
fn peak_rss_kib() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn topic_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") && !path.ends_with("MEMORY.md") {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// Writes `count` topic files (some in sub-dirs, a few with malformed YAML, mixed flat and nested
/// `metadata.type`) plus a `MEMORY.md` indexing them all. Idempotent: an existing complete corpus is
/// reused, so repeated runs measure the same bytes.
fn generate_corpus(dir: &Path, count: usize) -> std::io::Result<()> {
    let marker = dir.join(".complete");
    if marker.exists() {
        return Ok(());
    }
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir)?;
    let mut index = String::from("# Memory index\n\n");
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    let word = |rng: &mut Xorshift| VOCABULARY[rng.below(VOCABULARY.len())];
    for i in 0..count {
        let kind = MemoryType::ALL[i % MemoryType::ALL.len()].as_str();
        let words: Vec<&str> = (0..6).map(|_| word(&mut rng)).collect();
        let name = format!("{} {} {i}", words[0], words[1]);
        let description = format!(
            "{} when {} touches {} and {} ({i})",
            words[2], words[3], words[4], words[5]
        );
        let file = if i % 10 == 0 {
            format!("topics/{kind}_{i}.md")
        } else {
            format!("{kind}_{i}.md")
        };
        let frontmatter = match i % 50 {
            0 => format!("---\nname: {name}\ndescription: {description}: with: colons\ntype: {kind}\n---\n"),
            1 => format!(
                "---\nname: {name}\ndescription: {description}\nmetadata:\n  node_type: memory\n  type: {kind}\n  originSessionId: 3ed04df3-3a97-4f9b-a2a3-a2a120610cb7\n---\n"
            ),
            _ => format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n"),
        };
        let body_lines = 5 + rng.below(35);
        let mut body = String::new();
        for line in 0..body_lines {
            body.push_str(&format!(
                "- {} {} {} {} line {line}\n",
                word(&mut rng),
                word(&mut rng),
                word(&mut rng),
                word(&mut rng)
            ));
        }
        let path = dir.join(&file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, format!("{frontmatter}\n{body}"))?;
        index.push_str(&format!("- [{name}]({file}) — {description}\n"));
    }
    fs::write(dir.join("MEMORY.md"), index)?;
    fs::write(marker, "")?;
    Ok(())
}

/// Whole-process `engram scan --all --json` against the Node + js-yaml peer in `bench/node-scan`
/// (same output, written as a Node tool would), interleaved, medians of `rounds`.
fn node_peer(dir: &Path, rounds: usize) -> Result<(), String> {
    use std::process::{Command, Stdio};
    let Some(engram) = built_binary("engram", "node peer")? else {
        return Ok(());
    };
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("node-scan");
    if !peer.join("node_modules/js-yaml").is_dir() {
        println!("node peer: skipped (js-yaml not installed: make bench installs it)");
        return Ok(());
    }
    let run = |command: &mut Command| -> Result<Duration, String> {
        let started = Instant::now();
        let status = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("{command:?} failed: {status}"));
        }
        Ok(started.elapsed())
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        theirs.push(run(Command::new("node")
            .arg(peer.join("scan.js"))
            .arg(dir))?);
        ours.push(run(Command::new(&engram)
            .arg("--memory-dir")
            .arg(dir)
            .args(["scan", "--all", "--json"]))?);
    }
    let (ours, theirs) = (median(&mut ours), median(&mut theirs));
    let files = topic_files(dir).map_err(|e| e.to_string())?.len();
    println!(
        "{:>7}  {:<6} {:>10} {:>10} {:>12.0} {:>6.1}×   (engram scan --all --json vs Node + js-yaml, whole process; ratio = Node / engram)",
        files,
        "peer",
        format_duration(ours),
        format_duration(theirs),
        files as f64 / ours.as_secs_f64(),
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
    Ok(())
}

/// How long the built `engram` takes from spawn to exit running `args` with `stdin` (closed
/// after it), with `HOME` and Engram's data dir under `home`, no output kept.
fn time_engram(
    engram: &Path,
    home: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<std::time::Duration, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let started = std::time::Instant::now();
    let mut child = Command::new(engram)
        .args(args)
        .env("HOME", home)
        .env("ENGRAM_HOME", home.join("engram"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", engram.display()))?;
    let mut pipe = child.stdin.take().ok_or("stdin")?;
    if let Some(stdin) = stdin {
        pipe.write_all(stdin.as_bytes())
            .map_err(|e| e.to_string())?;
    }
    drop(pipe);
    child.wait().map_err(|e| e.to_string())?;
    Ok(started.elapsed())
}

/// A binary of this workspace built beside the bench (`make bench` builds `engram` and
/// `engram-app`), or `None` after saying that `what` is skipped.
fn built_binary(name: &str, what: &str) -> Result<Option<PathBuf>, String> {
    let path = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name(name);
    if path.is_file() {
        return Ok(Some(path));
    }
    println!(
        "{what}: skipped ({} not built: make bench builds it)",
        path.display()
    );
    Ok(None)
}
