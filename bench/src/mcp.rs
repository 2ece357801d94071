//! `engram mcp` at 10,000 memories: a real server process spoken to over stdio as an MCP client
//! does (JSON-RPC lines), timing `memory_search` and `memory_recall` tool calls from the request
//! written to the answer read (p50 / p95), interleaved with `tools/list` — a round trip through
//! the same process and transport that touches no memory — as the floor.
//!
//! The server keeps the project's recall corpus in memory after the first recall (it lives for
//! a whole session), and the lowercased text of every file searched (the engine's search cache),
//! so both figures are warm: a search lists the dir (names, mtimes, sizes) and reads only the
//! files that changed and the hits.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SIZE: usize = 10_000;
const ROUNDS: usize = 40;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn request(&mut self, method: &str, params: Value) -> Result<(Value, Duration), String> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let started = Instant::now();
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        loop {
            let mut answer = String::new();
            if self
                .stdout
                .read_line(&mut answer)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err("engram mcp closed its stdout".into());
            }
            let message: Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
            if message["id"] == id {
                let elapsed = started.elapsed();
                if message["result"]["isError"] == true || message.get("error").is_some() {
                    return Err(format!("{method} failed: {message}"));
                }
                return Ok((message, elapsed));
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Result<(Value, Duration), String> {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[at.min(times.len() - 1)]
}

pub fn mcp_latency(corpus: &Path) -> Result<(), String> {
    let Some(engram) = crate::built_binary("engram", "MCP tool calls")? else {
        return Ok(());
    };
    let home = corpus.join("mcp-latency-home");
    let project = home.join("work/app");
    fs::create_dir_all(&project).map_err(|e| format!("{}: {e}", project.display()))?;
    let project = project.canonicalize().map_err(|e| e.to_string())?;
    // Where `engram mcp` started in `project` will look, found as it finds it: the corpus lives
    // inside this checkout, so Claude Code's rule keys the memory on the repository's root, not
    // on `project` (keyed on `project`, the server saw no memory at all and timed empty pages).
    let engine = memory_engine::Engine::builder(
        memory_engine::Environment::empty().with("HOME", home.to_string_lossy()),
    )
    .build();
    let memory = engine
        .resolve_memory_dir(&project)
        .map_err(|e| format!("{}: {e}", project.display()))?
        .memory_dir;
    crate::generate_corpus(&memory, SIZE).map_err(|e| format!("{}: {e}", memory.display()))?;
    // The generated memories are alike, so recall's relevance gate finds none of them related to
    // any prompt; one memory the prompt is about makes the call return what a real one would.
    let wanted = memory.join("project_parser_cache.md");
    fs::write(
        &wanted,
        "---\nname: parser cache deploys\ndescription: deploy the parser's cache only after the \
         index is rebuilt\ntype: project\n---\n\nThe parser cache is keyed on the index version; \
         deploying it before the index rebuild serves stale parses.\n",
    )
    .map_err(|e| format!("{}: {e}", wanted.display()))?;

    let mut child = Command::new(&engram)
        .arg("mcp")
        .current_dir(&project)
        .env("HOME", &home)
        .env("ENGRAM_HOME", home.join("engram"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", engram.display()))?;
    let mut server = Server {
        stdin: child.stdin.take().ok_or("stdin")?,
        stdout: BufReader::new(child.stdout.take().ok_or("stdout")?),
        child,
        next_id: 1,
    };
    server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "engram-bench", "version": "1"}}),
    )?;
    writeln!(
        server.stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .map_err(|e| e.to_string())?;

    // A word in thousands of the memories: a full first page of hits.
    let search = json!({"query": "cache"});
    let recall = json!({"prompt": "deploy the cache when the parser touches the index"});
    // The first calls load what the server keeps (the recall corpus) and warm the page cache.
    let (found, _) = server.call("memory_search", search.clone())?;
    let (recalled, _) = server.call("memory_recall", recall.clone())?;
    let hits = found["result"]["structuredContent"]["hits"]
        .as_array()
        .map_or(0, Vec::len);
    let memories = recalled["result"]["structuredContent"]["memories"]
        .as_array()
        .map_or(0, Vec::len);
    let (mut floor, mut searches, mut recalls) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        floor.push(server.request("tools/list", json!({}))?.1);
        searches.push(server.call("memory_search", search.clone())?.1);
        recalls.push(server.call("memory_recall", recall.clone())?.1);
    }
    println!();
    println!(
        "{:>7}  {:<26} {:>10} {:>10} {:>10} {:>7}",
        "files", "engram mcp (stdio)", "p50", "p95", "floor", "ratio"
    );
    let floor_p50 = percentile(&mut floor, 0.5);
    for (name, times, note) in [
        (
            "memory_search",
            &mut searches,
            format!("{hits} hits a page"),
        ),
        (
            "memory_recall",
            &mut recalls,
            format!("{memories} recalled"),
        ),
    ] {
        let p50 = percentile(times, 0.5);
        let p95 = percentile(times, 0.95);
        println!(
            "{:>7}  {:<26} {:>10} {:>10} {:>10} {:>6.1}×   ({note}; floor: tools/list round trip)",
            SIZE,
            name,
            crate::format_duration(p50),
            crate::format_duration(p95),
            crate::format_duration(floor_p50),
            p50.as_secs_f64() / floor_p50.as_secs_f64()
        );
    }
    Ok(())
}
