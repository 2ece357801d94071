//! The session side's hot paths (issue #10):
//! - transcript parse to a chain (`Transcript::open` + the message count) at 1 / 50 / 500 MB,
//!   against `serde_json` skipping every value (`IgnoredAny`) over the same lines — the floor of
//!   any JSON reader — with each one's peak RSS measured in a fresh child process;
//! - listing 5,000 transcripts (`Engine::list_sessions`) against a `stat` + 4 KiB read of each;
//! - search over ~1 GB of transcripts: the first index build, an update after an append, and the
//!   p50 / p95 of 20 typical queries (the index and reader kept open, as the app does);
//! - the Stop hook's wall time (`engram hook stop`, release binary), which must return at once.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memory_engine::session_search::SessionIndex;
use memory_engine::transcript::Transcript;
use memory_engine::{Engine, Environment};
use serde_json::json;

use crate::{format_duration, median, peak_rss_kib, time};

const TEXT: &str = "The failing test reads the config before the migration runs; moving the \
migration first fixes it. Next I will check the other fixtures that load the same config. ";

/// A realistic transcript of about `bytes`: prompts, streamed assistant records (text, then a
/// tool use) sharing `message.id`, tool results with sizeable output, a compact boundary halfway.
fn generate(path: &Path, bytes: usize, session: &str) -> std::io::Result<()> {
    if fs::metadata(path).is_ok_and(|m| m.len() as usize >= bytes) {
        return Ok(());
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 20, fs::File::create(path)?);
    let (mut written, mut i, mut parent) = (0usize, 0u64, serde_json::Value::Null);
    let output = "test result: ok. 42 passed; 0 failed\n".repeat(40);
    while written < bytes {
        let uuid = format!("{:08x}-1111-4222-8333-{:012x}", i, i);
        let line = match i % 5 {
            _ if written >= bytes / 2 && written < bytes / 2 + 2_000 && i % 5 == 0 => json!({
                "type": "system", "subtype": "compact_boundary", "uuid": uuid, "parentUuid": null,
                "logicalParentUuid": parent, "sessionId": session, "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 155000}}),
            0 => json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session, "cwd": "/home/u/app",
                "timestamp": "2026-11-23T10:00:00.000Z", "message": {"role": "user", "content": format!("{TEXT} step {i}")}}),
            1 => json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-11-23T10:00:01.000Z", "message": {"id": format!("msg_{}", i / 5), "role": "assistant",
                "content": [{"type": "text", "text": TEXT.repeat(3)}]}}),
            2 => json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-11-23T10:00:02.000Z", "message": {"id": format!("msg_{}", i / 5), "role": "assistant",
                "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash", "input": {"command": "cargo test -p app"}}]}}),
            3 => json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-11-23T10:00:09.000Z", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": format!("toolu_{}", i - 1), "content": output}]}}),
            _ => json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-11-23T10:00:10.000Z", "message": {"id": format!("msg_{}b", i / 5), "role": "assistant",
                "content": [{"type": "text", "text": format!("All green at step {i}.")}],
                "usage": {"input_tokens": 12, "output_tokens": 80, "cache_read_input_tokens": 40000}}}),
        }
        .to_string();
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        written += line.len() + 1;
        parent = json!(uuid);
        i += 1;
    }
    out.flush()
}

/// `serde_json` skipping every value of every line: the floor of reading the file as JSON.
fn ignored_any(path: &Path) -> std::io::Result<usize> {
    let mut reader = BufReader::with_capacity(1 << 20, fs::File::open(path)?);
    let mut line = Vec::new();
    let mut count = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(count);
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            count += 1;
        }
    }
}

/// Runs this binary as `--child-parse KIND PATH` and returns the child's peak RSS in KiB.
fn child_peak(kind: &str, path: &Path) -> Result<u64, String> {
    let out = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(["--child-parse", kind])
        .arg(path)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| format!("child {kind}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The child side of [`child_peak`]: parse, then print the peak RSS.
pub fn child_parse(kind: &str, path: &Path) -> Result<(), String> {
    match kind {
        "chain" => {
            let t = Transcript::open(path).map_err(|e| e.to_string())?;
            std::hint::black_box(t.message_count());
        }
        "secrets" => {
            std::hint::black_box(memory_engine::secrets::scan_tree(path));
        }
        _ => {
            std::hint::black_box(ignored_any(path).map_err(|e| e.to_string())?);
        }
    }
    println!("{}", peak_rss_kib());
    Ok(())
}

/// Reads `path` once so the timed passes are warm-cache passes.
fn warm(path: &Path) {
    let mut buf = vec![0u8; 1 << 20];
    if let Ok(mut f) = fs::File::open(path) {
        while f.read(&mut buf).is_ok_and(|n| n > 0) {}
    }
}

pub fn session_benches(corpus: &Path, rounds: usize) -> Result<(), String> {
    let dir = corpus.join("transcripts");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    println!("\ntranscript parse to a chain vs serde_json IgnoredAny (warm cache)");
    println!(
        "{:>8} {:>12} {:>12} {:>7} {:>10} {:>10}",
        "size", "chain MB/s", "floor MB/s", "ratio", "chain RSS", "floor RSS"
    );
    for mb in [1usize, 50, 500] {
        let path = dir.join(format!("parse-{mb}mb.jsonl"));
        generate(&path, mb << 20, "bench").map_err(|e| e.to_string())?;
        let bytes = fs::metadata(&path).map_err(|e| e.to_string())?.len() as f64;
        let rounds = if mb >= 500 { 3 } else { rounds };
        let (mut chain, mut floor) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            warm(&path);
            floor.push(time(|| ignored_any(&path)));
            warm(&path);
            chain.push(time(|| Transcript::open(&path).map(|t| t.message_count())));
        }
        let rate = |d: Duration| bytes / 1e6 / d.as_secs_f64();
        let (c, f) = (median(&mut chain), median(&mut floor));
        println!(
            "{:>6}MB {:>12.0} {:>12.0} {:>6.0}% {:>8}MB {:>8}MB",
            mb,
            rate(c),
            rate(f),
            100.0 * f.as_secs_f64() / c.as_secs_f64(),
            child_peak("chain", &path)? / 1024,
            child_peak("floor", &path)? / 1024,
        );
    }

    // The reader's last page of a long session (the app opens the transcript per page).
    let path = dir.join("parse-50mb.jsonl");
    let (mut opening, mut paging) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        warm(&path);
        let mut opened = None;
        opening.push(time(|| opened = Transcript::open(&path).ok()));
        let transcript = opened.ok_or("the 50 MB transcript does not open")?;
        let total = transcript.message_count();
        paging.push(time(|| transcript.page(total.saturating_sub(50), 50)));
    }
    println!(
        "\nlast page (50 messages) of the 50 MB session: open {} + page {}",
        format_duration(median(&mut opening)),
        format_duration(median(&mut paging))
    );

    // `engram secrets scan` over the 500 MB transcript: a piece at a time.
    let path = dir.join("parse-500mb.jsonl");
    warm(&path);
    let scan = time(|| memory_engine::secrets::scan_tree(&path));
    println!(
        "secrets scan of the 500 MB transcript: {} ({:.0} MB/s), peak RSS {} MB",
        format_duration(scan),
        fs::metadata(&path).map_err(|e| e.to_string())?.len() as f64 / 1e6 / scan.as_secs_f64(),
        child_peak("secrets", &path)? / 1024
    );

    // Listing 5,000 transcripts (small sessions, as most are).
    let home = corpus.join("claude-home-5000");
    let project = home.join("projects").join("-home-u-app");
    fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    for i in 0..5_000 {
        let path = project.join(format!("{i:08x}-2222-4333-8444-555555555555.jsonl"));
        generate(&path, 8_000 + (i % 7) * 3_000, &format!("s{i}")).map_err(|e| e.to_string())?;
        files.push(path);
    }
    let engine = Engine::builder(Environment::from_process())
        .claude_home(&home)
        .build();
    let (mut listing, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        floor.push(time(|| stat_and_head(&files)));
        let mut outcome = Ok(0);
        listing.push(time(|| {
            outcome = engine
                .list_sessions(Some("-home-u-app"))
                .map(|l| l.sessions.len())
        }));
        let listed = outcome.map_err(|e| e.to_string())?;
        if listed != 5_000 {
            return Err(format!("listed {listed} of 5,000"));
        }
    }
    let (l, f) = (median(&mut listing), median(&mut floor));
    println!(
        "\nsession listing, 5,000 transcripts: {} (floor: stat + read 4 KiB each {}) {:.1}×",
        format_duration(l),
        format_duration(f),
        l.as_secs_f64() / f.as_secs_f64()
    );

    // Search over ~1 GB: 20 sessions of 50 MB.
    let search_home = corpus.join("claude-home-search");
    let search_project = search_home.join("projects").join("-home-u-big");
    fs::create_dir_all(&search_project).map_err(|e| e.to_string())?;
    let mut transcripts = Vec::new();
    for i in 0..20 {
        let path = search_project.join(format!("{i:08x}-3333-4444-8555-666666666666.jsonl"));
        generate(&path, 50 << 20, &format!("big{i}")).map_err(|e| e.to_string())?;
        transcripts.push(("-home-u-big".to_owned(), path));
    }
    let total: u64 = transcripts
        .iter()
        .map(|(_, p)| fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let index_dir = corpus.join("session-index");
    let _ = fs::remove_dir_all(&index_dir);
    let index = SessionIndex::open(&index_dir).map_err(|e| e.to_string())?;
    let started = Instant::now();
    index
        .update(&transcripts, None)
        .map_err(|e| e.to_string())?;
    let build = started.elapsed();
    let appended = &transcripts[0].1;
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(appended)
        .map_err(|e| e.to_string())?;
    writeln!(
        file,
        "{}",
        json!({"type": "user", "uuid": "appended-1", "parentUuid": null, "sessionId": "big0",
        "message": {"role": "user", "content": "wire the flamingo exporter"}})
    )
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    index
        .update(&transcripts, None)
        .map_err(|e| e.to_string())?;
    let incremental = started.elapsed();
    let started = Instant::now();
    index
        .update(&transcripts, None)
        .map_err(|e| e.to_string())?;
    let unchanged = started.elapsed();
    let queries = [
        "migration",
        "failing test",
        "config",
        "fixtures",
        "cargo test",
        "Bash",
        "flamingo",
        "\"moving the migration\"",
        "green step",
        "other fixtures",
        "compacted",
        "passed failed",
        "check",
        "reads config",
        "step 1234",
        "mig*",
        "nothing-matches-this",
        "test result",
        "exporter",
        "next",
    ];
    let mut times = Vec::new();
    for _ in 0..3 {
        for q in queries {
            times.push(time(|| index.search(q, None, 20)));
        }
    }
    times.sort();
    let p95 = times[times.len() * 95 / 100];
    println!(
        "search over {:.2} GB of transcripts: build {}, update after an append {}, update with nothing new {}, query p50 {} p95 {}",
        total as f64 / 1e9,
        format_duration(build),
        format_duration(incremental),
        format_duration(unchanged),
        format_duration(median(&mut times.clone())),
        format_duration(p95)
    );
    stop_hook_latency(corpus)?;
    Ok(())
}

fn stat_and_head(files: &[PathBuf]) -> usize {
    let mut buf = [0u8; 4096];
    let mut total = 0;
    for path in files {
        if let Ok(meta) = fs::metadata(path) {
            total += meta.len() as usize;
        }
        if let Ok(mut f) = fs::File::open(path) {
            total += f.read(&mut buf).unwrap_or(0);
        }
    }
    total
}

/// `engram hook stop` from a payload to its exit (the worker it starts runs on, detached).
fn stop_hook_latency(corpus: &Path) -> Result<(), String> {
    let Some(engram) = crate::built_binary("engram", "stop hook")? else {
        return Ok(());
    };
    let home = corpus.join("stop-hook-home");
    let project = home.join(".claude/projects/-home-u-app");
    fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    let transcript = project.join("77777777-0000-4000-8000-000000000000.jsonl");
    generate(&transcript, 200_000, "77777777-0000-4000-8000-000000000000")
        .map_err(|e| e.to_string())?;
    let payload =
        json!({"session_id": "77777777-0000-4000-8000-000000000000", "transcript_path": transcript,
        "cwd": "/home/u/app", "hook_event_name": "Stop", "stop_hook_active": false})
        .to_string();
    let mut times = Vec::new();
    for _ in 0..15 {
        times.push(crate::time_engram(
            &engram,
            &home,
            &["hook", "stop"],
            Some(&payload),
        )?);
        std::thread::sleep(Duration::from_millis(100));
    }
    let p50 = median(&mut times);
    println!(
        "stop hook (engram hook stop, start to exit): p50 {} max {}",
        format_duration(p50),
        format_duration(*times.iter().max().ok_or("no runs")?)
    );
    Ok(())
}
