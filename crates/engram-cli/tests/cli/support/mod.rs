//! What the end-to-end tests of the `engram` binary share: a sandbox (a temp HOME, and nothing
//! from the real machine), copies of the real fixtures, the binary run with a hand-made
//! environment (`env_clear`), and the real Claude Code CLI run offline against a scripted model.

#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use memory_engine::testing::fixtures::{copy_tree, real_memory};
use memory_engine::testing::RecordedRequest;
use serde_json::Value;

/// A temp root holding HOME (`home/`), and optionally a project dir the binary runs in.
///
/// - [`Sandbox::new`]: HOME only; the binary runs in the root.
/// - [`Sandbox::in_project`]: also a Claude config dir (`~/.claude`) and a project
///   (`work/<name>`) the binary runs in, so it resolves that project's memory dir.
/// - [`Sandbox::with_engram_home`]: Engram's data dir is `<root>/engram-data` through
///   `ENGRAM_HOME`, instead of the default `~/.local/share/engram` under the sandbox's HOME.
pub struct Sandbox {
    tmp: tempfile::TempDir,
    project: Option<String>,
    engram_home_env: bool,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let sandbox = Sandbox {
            tmp: tempfile::tempdir().expect("temp dir"),
            project: None,
            engram_home_env: false,
        };
        fs::create_dir_all(sandbox.home()).expect("home");
        sandbox
    }

    pub fn in_project(name: &str) -> Sandbox {
        let sandbox = Sandbox {
            project: Some(name.to_owned()),
            ..Sandbox::new()
        };
        fs::create_dir_all(sandbox.project()).expect("project dir");
        fs::create_dir_all(sandbox.claude()).expect("claude dir");
        sandbox
    }

    pub fn with_engram_home(self) -> Sandbox {
        Sandbox {
            engram_home_env: true,
            ..self
        }
    }

    /// The real (symlink-free) temp root, so paths compare equal to what the binary resolves.
    pub fn root(&self) -> PathBuf {
        fs::canonicalize(self.tmp.path()).expect("canonical temp dir")
    }

    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    pub fn claude(&self) -> PathBuf {
        self.home().join(".claude")
    }

    /// The user's Claude Code settings file.
    pub fn settings(&self) -> PathBuf {
        self.claude().join("settings.json")
    }

    /// The dir the binary runs in: the project's, or the root.
    pub fn project(&self) -> PathBuf {
        match &self.project {
            Some(name) => self.root().join("work").join(name),
            None => self.root(),
        }
    }

    /// Engram's data dir as the binary resolves it.
    pub fn engram_home(&self) -> PathBuf {
        if self.engram_home_env {
            self.root().join("engram-data")
        } else {
            self.home().join(".local/share/engram")
        }
    }

    /// A writable copy of a real memory dir (`stockerly`, `claude-code-2.1.330`) at `to`.
    pub fn copy_real_memory(&self, name: &str, to: &Path) -> PathBuf {
        copy_tree(&real_memory(name), to);
        to.to_path_buf()
    }

    /// A writable copy of a real memory dir at `<root>/mem/<name>`, for `--memory-dir`.
    pub fn real_memory(&self, name: &str) -> PathBuf {
        self.copy_real_memory(name, &self.root().join("mem").join(name))
    }

    /// The project's memory dir as the binary resolves it (`engram where`).
    pub fn memory_dir(&self) -> PathBuf {
        PathBuf::from(
            self.json(&["where"])["memoryDir"]
                .as_str()
                .expect("memoryDir"),
        )
    }

    /// Marks the project trusted in Claude Code's global config (`~/.claude.json`), as accepting
    /// its trust dialog does.
    pub fn trust_project(&self) {
        let project = fs::canonicalize(self.project()).expect("the project exists");
        let trust = serde_json::json!({"projects": {project.to_string_lossy(): {"hasTrustDialogAccepted": true}}});
        fs::write(self.home().join(".claude.json"), trust.to_string()).expect("trust");
    }

    /// `engram ARGS`, to run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
        command
            .args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1")
            .current_dir(self.project());
        if self.engram_home_env {
            command.env("ENGRAM_HOME", self.engram_home());
        }
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run engram")
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        output_with_stdin(self.command(args), stdin).0
    }

    /// Makes the sandbox project one Claude Code lists: a session transcript in
    /// `~/.claude/projects/<sanitized project>/` naming it as its working dir.
    pub fn list_project(&self) {
        let dir = self
            .claude()
            .join("projects")
            .join(memory_engine::paths::sanitize_path(
                &self.project().to_string_lossy(),
            ));
        fs::create_dir_all(&dir).expect("transcripts dir");
        let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
            "cwd": self.project(), "sessionId": "s",
            "message": {"role": "user", "content": "hi"}});
        fs::write(
            dir.join("11111111-1111-4111-8111-111111111111.jsonl"),
            format!("{line}\n"),
        )
        .expect("transcript");
    }

    /// Runs with `--json`, expecting `code`, and parses stdout.
    pub fn json_with_code(&self, args: &[&str], code: i32) -> Value {
        let out = self.run(&[args, &["--json"]].concat());
        assert_eq!(
            exit_code(&out),
            code,
            "engram {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        serde_json::from_slice(&out.stdout).expect("stdout is JSON")
    }

    pub fn json(&self, args: &[&str]) -> Value {
        self.json_with_code(args, 0)
    }

    /// One headless turn of the real Claude Code CLI (`claude -p PROMPT`, JSON output, then
    /// `args`) in the project, offline: its model is `server_url`, everything that would phone
    /// home is off. It must succeed.
    pub fn claude_turn(
        &self,
        claude: &Path,
        server_url: &str,
        prompt: &str,
        args: &[&str],
    ) -> Output {
        let mut command = Command::new(claude);
        command
            .args(["-p", prompt, "--output-format", "json"])
            .args(args)
            .current_dir(self.project())
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("CLAUDE_CONFIG_DIR", self.claude())
            .env("ANTHROPIC_BASE_URL", server_url)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "1")
            .stdin(Stdio::null());
        // Hooks Claude Code runs (`engram hook …`) must find the same data dir.
        if self.engram_home_env {
            command.env("ENGRAM_HOME", self.engram_home());
        }
        let out = command.output().expect("run claude");
        assert_eq!(
            exit_code(&out),
            0,
            "claude failed: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        out
    }
}

/// The model request of the user's turn: the one whose body carries the prompt.
pub fn turn_request<'a>(requests: &'a [RecordedRequest], prompt: &str) -> &'a RecordedRequest {
    requests
        .iter()
        .filter(|r| r.path.starts_with("/v1/messages"))
        .find(|r| r.body.contains(prompt))
        .unwrap_or_else(|| {
            panic!(
                "no model request carried the prompt {prompt:?}: {:#?}",
                requests.iter().map(|r| &r.path).collect::<Vec<_>>()
            )
        })
}

/// Runs `command` with `stdin` piped in; returns its output and how long it took.
pub fn output_with_stdin(mut command: Command, stdin: &str) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    // A process that gives up early (a hook past its budget) closes its end; that is not the
    // test's failure, and what it printed is what the test checks.
    let _ = pipe.write_all(stdin.as_bytes());
    drop(pipe);
    let out = child.wait_with_output().expect("wait");
    (out, started.elapsed())
}

/// The real Claude Code CLI: `ENGRAM_TEST_CLAUDE` (set by `make test`, so there a missing binary
/// fails), else `claude` on PATH; `None` skips the test.
pub fn claude_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ENGRAM_TEST_CLAUDE") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "ENGRAM_TEST_CLAUDE={} is not a file: run scripts/setup.sh --test",
            path.display()
        );
        return Some(path);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("claude"))
            .find(|p| p.is_file())
    })
}

/// Runs `command`, killing it if it outlives `limit`: a hang fails the test, not CI's clock.
/// Output goes to files (a 20 MB answer would fill a pipe nobody reads while we wait).
pub fn bounded(mut command: Command, limit: Duration) -> Output {
    let out = tempfile::tempfile().expect("stdout file");
    let err = tempfile::tempfile().expect("stderr file");
    let mut child = command
        .stdout(out.try_clone().expect("clone"))
        .stderr(err.try_clone().expect("clone"))
        .spawn()
        .expect("spawn");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |mut file: fs::File| {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        file.rewind().expect("rewind");
        file.read_to_end(&mut bytes).expect("read");
        bytes
    };
    Output {
        status,
        stdout: read(out),
        stderr: read(err),
    }
}

/// Whether the tests run as root, who can run a process as a second user (`nobody`).
pub fn is_root() -> bool {
    // `id -u` rather than libc, as the tests have no libc dependency.
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

pub fn exit_code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The object's keys, sorted, to compare a JSON shape exactly.
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("expected an object, got {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The contract's keys must all be there; the engine may add more.
pub fn assert_has_keys(value: &Value, wanted: &[&str]) {
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("expected an object, got {value}"));
    for key in wanted {
        assert!(object.contains_key(*key), "missing key {key:?} in {value}");
    }
}

/// The `file` of each result of a JSON array (search hits, recalled memories).
pub fn files(results: &Value) -> Vec<&str> {
    results
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {results}"))
        .iter()
        .map(|r| r["file"].as_str().expect("file"))
        .collect()
}
