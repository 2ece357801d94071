//! `make soak`: Engram left to run by itself with the real Claude Code, over real time.
//!
//! The release app runs under Xvfb on a realistic Claude home (three projects, git repos, each
//! memory dir holding a labeled set's realistic memories plus a hundred more), with Claude Code's
//! hooks installed by `engram hooks install` and background dreams on with short gates
//! (`check_every = "5s"`, `scan_throttle = "5s"`, 72 s between consolidations, 2 sessions). Then,
//! for `SOAK_MINUTES`, the real Claude Code 2.1.330 runs session after session against a scripted
//! model on loopback: prompts that state a fact ("Remember that …"), prompts that ask (the labeled
//! set's questions, questions about facts stated earlier, questions nothing relates to), and
//! sessions in which Claude Code writes a memory itself (`Write` the topic file, `Read` and `Edit`
//! `MEMORY.md`, as its own two-step protocol does).
//!
//! It prints, and checks: background dreams per project (runs, lock mtimes, change sets),
//! extractions per session, memories recalled per prompt (and whether the labeled memory was
//! among them), that no memory was lost (every stated fact, every seeded memory's text is on
//! disk, the facts with history), the app's RSS, open files and threads at the start and the end,
//! its CPU time while idle, and that no process is left once the app has been asked to quit.
//!
//! Everything is real but the model: the app, `engram` (the hooks), Claude Code, git, Xvfb and
//! D-Bus. The model is the only thing replaced, at the HTTP boundary, as everywhere in the tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use memory_engine::recall::quality::{self, LabeledPrompt};
use memory_engine::testing::fixtures::{Xorshift, VOCABULARY};
use memory_engine::testing::{wire, RecordedRequest, Reply, ScriptedServer};
use memory_engine::{Engine, Environment};
use serde_json::{json, Value};

use crate::app::{descendants, status_kib, Display, ProcessGroup};

/// The labeled set's memory dirs, one project each.
const PROJECTS: [&str; 3] = ["shopfront", "datapipe", "tidy-cli"];
/// Extra memories per project, beyond the labeled set's.
const FILLER: usize = 110;
/// How long the app is left alone to measure its idle CPU.
const IDLE: Duration = Duration::from_secs(20);
/// How long the soak waits for the Stop hook's workers to finish once the sessions end.
const DRAIN: Duration = Duration::from_secs(90);

/// A fact stated in a session, to be found on disk at the end.
#[derive(Debug, Clone)]
struct Fact {
    project: usize,
    /// What it is about (unique in the soak).
    subject: String,
    /// The word only this fact holds.
    token: String,
    /// What a question about it asks.
    question: String,
    /// How it entered memory: Engram's extraction, or Claude Code's own `Write`.
    by_claude: bool,
}

/// One question and what the prompt hook injected for it.
#[derive(Debug, Clone)]
struct Asked {
    kind: String,
    prompt: String,
    /// The memory the labeled set (or the fact) says is relevant, if any.
    relevant: Option<String>,
    injected: Vec<String>,
}

/// What the scripted model saw, per prompt: the memories injected into its request.
#[derive(Default)]
struct ModelLog {
    injected: BTreeMap<String, Vec<String>>,
}

pub fn soak(corpus: &Path, minutes: f64) -> Result<(), String> {
    let Some(app) = crate::built_binary("engram-app", "soak")? else {
        return Err("the soak needs the release app: make soak builds it".into());
    };
    let Some(engram) = crate::built_binary("engram", "soak")? else {
        return Err("the soak needs the release engram: make soak builds it".into());
    };
    let claude = claude_binary()?;
    let work = corpus.join("soak");
    let _ = fs::remove_dir_all(&work);
    let home = work.join("home");
    let claude_home = home.join(".claude");
    let engram_home = work.join("engram-home");
    fs::create_dir_all(&claude_home).map_err(|e| e.to_string())?;
    fs::create_dir_all(&engram_home).map_err(|e| e.to_string())?;
    let env = SoakEnv {
        home: home.clone(),
        claude_home: claude_home.clone(),
        engram_home: engram_home.clone(),
        engram: engram.clone(),
    };

    // The Claude home: three projects (git repos), their memory dirs seeded.
    let labeled = quality::load(Path::new(quality::RECALL_SET));
    let mut projects = Vec::new();
    for (i, name) in PROJECTS.iter().enumerate() {
        let dir = work.join("projects").join(name);
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        run_ok(Command::new("git").args(["init", "-q"]).current_dir(&dir))?;
        let where_ = env.engram_json(&dir, &["where"])?;
        let memory = PathBuf::from(where_["memoryDir"].as_str().ok_or("no memoryDir")?);
        let key = memory
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or("no project key")?;
        seed_memory(&Path::new(quality::RECALL_SET).join(name), &memory, i)?;
        projects.push(Project {
            name: (*name).to_owned(),
            dir,
            memory,
            key,
        });
    }
    let seeded: Vec<(usize, String, String)> = projects
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            distinctive_lines(&p.memory)
                .into_iter()
                .map(move |(file, line)| (i, file, line))
        })
        .collect();
    let config = dream_config(&projects);
    fs::write(engram_home.join("config.toml"), config).map_err(|e| e.to_string())?;
    let install = env.engram(&work, &["hooks", "install"])?;
    if !install.status.success() {
        return Err(format!(
            "engram hooks install: {}",
            String::from_utf8_lossy(&install.stderr)
        ));
    }

    // The model: answers every main turn, scripts Claude Code's own memory writes, and logs
    // what the prompt hook injected into each prompt's request.
    let log = Arc::new(Mutex::new(ModelLog::default()));
    let server = scripted_model(
        Arc::clone(&log),
        projects.iter().map(|p| p.memory.clone()).collect(),
    );

    // The app, left to run.
    let display = Display::ensure()?;
    let ready = work.join("ready");
    let started = Instant::now();
    let mut app_group = ProcessGroup(
        Command::new("dbus-run-session")
            .arg("--")
            .arg(&app)
            .arg("--claude-dir")
            .arg(&claude_home)
            .env("DISPLAY", &display.name)
            .env("HOME", &home)
            .env("ENGRAM_HOME", &engram_home)
            .env("ENGRAM_READY_FILE", &ready)
            .env("NO_AT_BRIDGE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(work.join("app.log")).map_err(|e| e.to_string())?)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("dbus-run-session {}: {e}", app.display()))?,
    );
    while !ready.exists() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the app never painted (no ready file after 60 s)".into());
        }
        if let Ok(Some(status)) = app_group.0.try_wait() {
            return Err(format!("the app exited before painting: {status}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let app_pid: u32 = fs::read_to_string(&ready)
        .map_err(|e| e.to_string())?
        .trim()
        .parse()
        .map_err(|e| format!("ready file: {e}"))?;
    let socket = engram_home.join("run/hook.sock");
    while !socket.exists() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the app never answered prompt hooks (no socket)".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(5));
    let at_start = Resources::of(app_pid);

    // Sessions until the time is up.
    let deadline = Instant::now() + Duration::from_secs_f64(minutes * 60.0);
    let mut rng = Xorshift(0x5EED_50A6);
    let mut facts: Vec<Fact> = Vec::new();
    let mut asked: Vec<Asked> = Vec::new();
    let mut sessions: Vec<(usize, String, &'static str)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut n = 0usize;
    while Instant::now() < deadline {
        let p = n % projects.len();
        let project = &projects[p];
        let session = uuid(n);
        let kind = match n % 6 {
            0 | 3 => "fact",
            1 | 4 => "question",
            2 => "unrelated",
            _ => "claude-writes",
        };
        let prompt = match kind {
            "fact" => {
                let fact = new_fact(p, n, false);
                let prompt = format!("Remember that {}.", fact_text(&fact));
                facts.push(fact);
                prompt
            }
            "claude-writes" => {
                let fact = new_fact(p, n, true);
                let prompt = format!("Save this to memory: {}.", fact_text(&fact));
                facts.push(fact);
                prompt
            }
            "unrelated" => UNRELATED[rng.below(UNRELATED.len())].to_owned(),
            _ => {
                // Half the questions are about a fact stated earlier here, half the labeled
                // set's questions for this project's memories.
                let earlier: Vec<&Fact> = facts.iter().filter(|f| f.project == p).collect();
                if !earlier.is_empty() && rng.below(2) == 0 {
                    earlier[rng.below(earlier.len())].question.clone()
                } else {
                    let mine: Vec<&LabeledPrompt> = labeled
                        .iter()
                        .filter(|l| l.dir == project.name && l.kind != "none")
                        .collect();
                    mine[rng.below(mine.len())].text.clone()
                }
            }
        };
        let out = claude_turn(
            &claude,
            &env,
            &project.dir,
            &server.url(),
            &prompt,
            &session,
        );
        match out {
            Ok(out) if out.status.success() => {}
            Ok(out) => failures.push(format!(
                "claude session {session} ({kind}) failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .chars()
                    .take(400)
                    .collect::<String>()
            )),
            Err(e) => failures.push(e),
        }
        let injected = log
            .lock()
            .map_err(|_| "model log poisoned")?
            .injected
            .get(&prompt)
            .cloned()
            .unwrap_or_default();
        match kind {
            "question" => {
                let relevant = labeled
                    .iter()
                    .find(|l| l.text == prompt)
                    .and_then(|l| l.relevant.first().cloned())
                    .or_else(|| {
                        facts
                            .iter()
                            .find(|f| f.question == prompt)
                            .map(|f| format!("token:{}", f.token))
                    });
                asked.push(Asked {
                    kind: "question".into(),
                    prompt: prompt.clone(),
                    relevant,
                    injected,
                });
            }
            "unrelated" => asked.push(Asked {
                kind: "unrelated".into(),
                prompt: prompt.clone(),
                relevant: None,
                injected,
            }),
            _ => {}
        }
        sessions.push((p, session, kind));
        n += 1;
        // People pause between sessions; the background scheduler gets its turns.
        std::thread::sleep(Duration::from_millis(300 + rng.below(1200) as u64));
    }

    // Let the Stop hook's workers finish, then leave the app alone.
    let drained = wait_for_workers(&engram_home, DRAIN);
    let (idle_cpu, idle_secs) = idle_cpu(app_pid, IDLE);
    let at_end = Resources::of(app_pid);

    // What happened, read from disk through the engine.
    let engine = Engine::builder(Environment::empty())
        .claude_home(&claude_home)
        .engram_home(&engram_home)
        .build();
    let mut report = String::new();
    let _ = writeln!(
        report,
        "\nsoak: {:.1} min, {} Claude Code sessions over 3 projects ({} memories seeded)",
        minutes,
        sessions.len(),
        seeded.len()
    );
    let _ = writeln!(
        report,
        "{:<12} {:>8} {:>7} {:>9} {:>10} {:>16}",
        "project", "sessions", "dreams", "applied", "waiting", "lock mtime"
    );
    let mut dreams_total = 0;
    for (i, project) in projects.iter().enumerate() {
        let past = engine
            .past_dreams(&project.key)
            .map_err(|e| e.to_string())?;
        let completed = past
            .iter()
            .filter(|t| t.status == memory_engine::dream::TaskStatus::Completed)
            .count();
        dreams_total += completed;
        let sets: Vec<_> = engine
            .staged_change_sets()
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|s| {
                s.project == project.key && s.source == memory_engine::staging::ChangeSource::Dream
            })
            .collect();
        let applied = sets
            .iter()
            .filter(|s| s.status == memory_engine::staging::SetStatus::Applied)
            .count();
        let waiting = sets.iter().map(|s| s.waiting()).sum::<usize>();
        let lock = fs::metadata(project.memory.join(".consolidate-lock"))
            .and_then(|m| m.modified())
            .map(age_words)
            .unwrap_or_else(|_| "none".into());
        let _ = writeln!(
            report,
            "{:<12} {:>8} {:>7} {:>9} {:>10} {:>16}",
            project.name,
            sessions.iter().filter(|(p, _, _)| *p == i).count(),
            completed,
            applied,
            waiting,
            lock
        );
        if completed == 0 && minutes >= 2.5 {
            failures.push(format!(
                "{}: no background dream in {minutes} min",
                project.name
            ));
        }
    }

    // Extractions per session (the Stop hook's worker records each run).
    let runs = extraction_runs(&engram_home);
    let fact_sessions: BTreeSet<&str> = sessions
        .iter()
        .filter(|(_, _, kind)| *kind == "fact")
        .map(|(_, s, _)| s.as_str())
        .collect();
    let extracted = fact_sessions
        .iter()
        .filter(|s| runs.get(**s).is_some_and(|r| r.written > 0))
        .count();
    let runs_total: usize = runs.values().map(|r| r.runs).sum();
    let _ = writeln!(
        report,
        "extraction: {runs_total} runs over {} sessions ({:.2} a session); {extracted} of {} \
         sessions stating a fact wrote a memory; workers drained: {drained}",
        runs.len(),
        runs_total as f64 / sessions.len().max(1) as f64,
        fact_sessions.len()
    );
    if !drained {
        failures.push("Stop hook workers still running after the sessions ended".into());
    }

    // Recall per prompt.
    let questions: Vec<&Asked> = asked.iter().filter(|a| a.kind == "question").collect();
    let unrelated: Vec<&Asked> = asked.iter().filter(|a| a.kind == "unrelated").collect();
    let hits = questions
        .iter()
        .filter(|a| {
            a.relevant.as_deref().is_some_and(|want| {
                a.injected
                    .iter()
                    .any(|path| match want.strip_prefix("token:") {
                        Some(token) => fs::read_to_string(path).is_ok_and(|t| t.contains(token)),
                        None => path.ends_with(&format!("/{want}")),
                    })
            })
        })
        .count();
    let per_prompt: Vec<usize> = questions.iter().map(|a| a.injected.len()).collect();
    let _ = writeln!(
        report,
        "recall: {} questions, {:.2} memories injected a prompt (max {}), the relevant one among \
         them for {hits}; {} of {} prompts nothing relates to injected something",
        questions.len(),
        per_prompt.iter().sum::<usize>() as f64 / per_prompt.len().max(1) as f64,
        per_prompt.iter().max().copied().unwrap_or(0),
        unrelated.iter().filter(|a| !a.injected.is_empty()).count(),
        unrelated.len()
    );
    // The relevance gate's promise: at most one prompt in six that nothing relates to gets a
    // memory.
    let unrelated_injected: Vec<&&Asked> = unrelated
        .iter()
        .filter(|a| !a.injected.is_empty())
        .collect();
    for asked in &unrelated_injected {
        let _ = writeln!(
            report,
            "  injected for {:?}: {:?}",
            asked.prompt, asked.injected
        );
    }
    if unrelated_injected.len() * 6 > unrelated.len() {
        failures.push(format!(
            "{} of {} prompts nothing relates to injected a memory (at most 1 in 6)",
            unrelated_injected.len(),
            unrelated.len()
        ));
    }

    // Nothing lost: every fact and every seeded memory's text is still in the memory dir.
    let mut lost = Vec::new();
    for fact in &facts {
        let memory = &projects[fact.project].memory;
        match file_holding(memory, &fact.token) {
            Some(file) => {
                let history = engine
                    .memory_dir(memory)
                    .history(Some(&file))
                    .map(|h| h.len())
                    .unwrap_or(0);
                if history == 0 && !fact.by_claude {
                    lost.push(format!("{} ({file}): no history", fact.token));
                }
            }
            None if !fact.by_claude => lost.push(format!(
                "fact {} stated in {} not on disk",
                fact.token, projects[fact.project].name
            )),
            // Claude Code's own write can fail its race with another writer (it refuses an
            // edit of a file changed since it read it); then there is nothing to lose.
            None => {}
        }
    }
    for (p, file, line) in &seeded {
        if file_holding(&projects[*p].memory, line).is_none() {
            lost.push(format!("{}/{file}: {line:?} gone", projects[*p].name));
        }
    }
    let by_claude: Vec<&Fact> = facts.iter().filter(|f| f.by_claude).collect();
    let _ = writeln!(
        report,
        "memories: {} facts stated ({} by Claude Code's own Write, {} of them on disk), {} seeded \
         memories; lost: {}",
        facts.len(),
        by_claude.len(),
        by_claude
            .iter()
            .filter(|f| file_holding(&projects[f.project].memory, &f.token).is_some())
            .count(),
        seeded.len(),
        lost.len()
    );
    for item in lost.iter().take(10) {
        let _ = writeln!(report, "  lost: {item}");
    }
    if !lost.is_empty() {
        failures.push(format!("{} memories lost", lost.len()));
    }

    // The app's resources.
    let _ = writeln!(
        report,
        "app: RSS {} → {} MiB, open files {} → {}, threads {} → {}; idle CPU {:.2} % of a core \
         over {idle_secs:.0} s",
        at_start.rss_kib / 1024,
        at_end.rss_kib / 1024,
        at_start.fds,
        at_end.fds,
        at_start.threads,
        at_end.threads,
        idle_cpu
    );
    if at_end.rss_kib > at_start.rss_kib * 3 / 2 + 30 * 1024 {
        failures.push("the app's memory grew beyond noise".into());
    }
    if at_end.fds > at_start.fds + 16 {
        failures.push("the app's open files grew".into());
    }
    if at_end.threads > at_start.threads + 8 {
        failures.push("the app's threads grew".into());
    }
    if idle_cpu > 5.0 {
        failures.push(format!(
            "the idle app used {idle_cpu:.1} % CPU: a busy loop?"
        ));
    }

    // Quit (as the system asks an app to end), then nothing of ours may be left.
    let quit = Instant::now();
    let _ = Command::new("kill")
        .args(["-TERM", &app_pid.to_string()])
        .status();
    let exited = loop {
        if let Ok(Some(_)) = app_group.0.try_wait() {
            break true;
        }
        if quit.elapsed() > Duration::from_secs(15) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // WebKit's web process ends by itself once the app's end closes its IPC socket, a moment
    // after the app: under load that moment has been seen to pass the first look. A process
    // still there after ten seconds is one the quit left behind.
    let app_gone = quit.elapsed();
    let left = loop {
        let left = processes_with_env("ENGRAM_HOME", &engram_home);
        if left.is_empty() || quit.elapsed() > app_gone + Duration::from_secs(10) {
            break left;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = writeln!(
        report,
        "quit: the app {} in {:.1} s, its helper processes gone {:.1} s later; processes left: \
         {}; hook socket removed: {}",
        if exited { "exited" } else { "did NOT exit" },
        app_gone.as_secs_f64(),
        (quit.elapsed() - app_gone).as_secs_f64(),
        left.len(),
        !socket.exists()
    );
    if !exited {
        failures.push("the app did not exit on SIGTERM".into());
    }
    if !left.is_empty() {
        failures.push(format!("processes left after quitting: {left:?}"));
    }
    if socket.exists() {
        failures.push("the hook socket outlived the app".into());
    }
    drop(app_group);
    let _ = writeln!(report, "background dreams in all: {dreams_total}");
    print!("{report}");
    for failure in &failures {
        println!("soak FAILED: {failure}");
    }
    if failures.is_empty() {
        println!("soak passed");
        let _ = fs::remove_dir_all(&work);
        Ok(())
    } else {
        Err(format!(
            "{} check(s) failed; the soak's files are kept in {}",
            failures.len(),
            work.display()
        ))
    }
}

struct Project {
    name: String,
    dir: PathBuf,
    memory: PathBuf,
    /// Its folder name under `<claude home>/projects/`.
    key: String,
}

/// What every process of the soak is given.
struct SoakEnv {
    home: PathBuf,
    claude_home: PathBuf,
    engram_home: PathBuf,
    engram: PathBuf,
}

impl SoakEnv {
    fn apply(&self, command: &mut Command) {
        command
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("CLAUDE_CONFIG_DIR", &self.claude_home)
            .env("ENGRAM_HOME", &self.engram_home);
    }

    fn engram(&self, cwd: &Path, args: &[&str]) -> Result<Output, String> {
        let mut command = Command::new(&self.engram);
        self.apply(&mut command);
        command
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("engram {args:?}: {e}"))
    }

    fn engram_json(&self, cwd: &Path, args: &[&str]) -> Result<Value, String> {
        let out = self.engram(cwd, &[args, &["--json"]].concat())?;
        serde_json::from_slice(&out.stdout).map_err(|e| {
            format!(
                "engram {args:?}: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

fn run_ok(command: &mut Command) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("{command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?}: {status}"))
    }
}

/// The real Claude Code: `ENGRAM_TEST_CLAUDE`, else the one `scripts/setup.sh --test` installs.
fn claude_binary() -> Result<PathBuf, String> {
    let path = std::env::var_os("ENGRAM_TEST_CLAUDE").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/tools/claude-code/node_modules/.bin/claude")
        },
        PathBuf::from,
    );
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "no Claude Code at {}: scripts/setup.sh --test installs it",
            path.display()
        ))
    }
}

/// The labeled set's memories for project `seed`, plus [`FILLER`] more written like notes.
fn seed_memory(from: &Path, to: &Path, seed: usize) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    let mut index = String::new();
    for entry in fs::read_dir(from).map_err(|e| e.to_string())?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let text = fs::read_to_string(entry.path()).map_err(|e| e.to_string())?;
        if name == "MEMORY.md" {
            index = text;
        } else {
            fs::write(to.join(&name), text).map_err(|e| e.to_string())?;
        }
    }
    let mut rng = Xorshift(0xF111_E400 + seed as u64);
    let word = |rng: &mut Xorshift| VOCABULARY[rng.below(VOCABULARY.len())];
    for i in 0..FILLER {
        let kind = ["project", "reference", "feedback", "user"][i % 4];
        let words: Vec<&str> = (0..6).map(|_| word(&mut rng)).collect();
        let file = format!("{kind}_note_{i}.md");
        let description = format!(
            "{} {} for {} {} (note {i})",
            words[0], words[1], words[2], words[3]
        );
        let mut body = String::new();
        for line in 0..(3 + rng.below(8)) {
            body.push_str(&format!(
                "- {} {} {} {} {} (note {i}, line {line})\n",
                word(&mut rng),
                word(&mut rng),
                word(&mut rng),
                word(&mut rng),
                word(&mut rng)
            ));
        }
        fs::write(
            to.join(&file),
            format!(
                "---\nname: {} {}\ndescription: {description}\ntype: {kind}\n---\n\n{body}",
                words[4], words[5]
            ),
        )
        .map_err(|e| e.to_string())?;
        index.push_str(&format!(
            "- [{} {}]({file}) — {description}\n",
            words[4], words[5]
        ));
    }
    fs::write(to.join("MEMORY.md"), index).map_err(|e| e.to_string())
}

/// Each topic file's longest body line: text only that memory holds, to find after the soak
/// wherever a dream may have merged it.
fn distinctive_lines(memory: &Path) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    for entry in fs::read_dir(memory).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") || name == "MEMORY.md" {
            continue;
        }
        let Ok(text) = fs::read_to_string(entry.path()) else {
            continue;
        };
        let body = text.splitn(3, "---").nth(2).unwrap_or(&text);
        if let Some(line) = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .max_by_key(|l| l.len())
        {
            // A dream may date a relative word in the line: the longest run of it without one.
            lines.push((name, stable_part(line)));
        }
    }
    lines.sort();
    lines
}

/// The longest piece of `line` that no consolidation rewrites (relative dates are).
fn stable_part(line: &str) -> String {
    const RELATIVE: [&str; 8] = [
        "yesterday",
        "today",
        "tomorrow",
        "last ",
        "next ",
        "ago",
        "this week",
        "this month",
    ];
    let lower = line.to_lowercase();
    let mut cuts = vec![0, line.len()];
    for word in RELATIVE {
        for (at, _) in lower.match_indices(word) {
            cuts.push(at);
            cuts.push((at + word.len()).min(line.len()));
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .filter_map(|w| line.get(w[0]..w[1]))
        .max_by_key(|piece| piece.len())
        .unwrap_or(line)
        .trim()
        .to_owned()
}

/// The first file under `memory` holding `text` (relative path), if any.
fn file_holding(memory: &Path, text: &str) -> Option<String> {
    let mut stack = vec![memory.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md")
                && path.file_name().is_some_and(|n| n != "MEMORY.md")
                && fs::read_to_string(&path).is_ok_and(|t| t.contains(text))
            {
                return path
                    .strip_prefix(memory)
                    .ok()
                    .map(|p| p.to_string_lossy().into_owned());
            }
        }
    }
    None
}

/// `config.toml`: background dreams on with short gates; two projects apply what their dreams
/// change (protected changes still wait), one reviews.
fn dream_config(projects: &[Project]) -> String {
    let mut config = String::from(
        "[dream]\ncheck_every = \"5s\"\nscan_throttle = \"5s\"\nmin_hours = 0.02\nmin_sessions = 2\n",
    );
    for (i, project) in projects.iter().enumerate() {
        let policy = if i == 1 { "review" } else { "auto" };
        let _ = write!(
            config,
            "\n[dream.projects.\"{}\"]\nenabled = true\npolicy = \"{policy}\"\n",
            project.key
        );
    }
    config
}

/// What the session states: its subject is its unique token.
fn fact_text(fact: &Fact) -> String {
    format!("{} is {}", fact.subject, fact.token)
}

/// What facts are about; with [`QUALIFIERS`], every fact of a soak has its own subject.
const SUBJECTS: [&str; 12] = [
    "the staging database host",
    "the name of the release train",
    "the on-call pager rotation",
    "the feature flag of the new checkout",
    "the S3 bucket of the nightly exports",
    "the Grafana dashboard of the latency alerts",
    "the codename of the billing rewrite",
    "the VPN gateway of the office",
    "the queue that carries refunds",
    "the owner of the payments runbook",
    "the cron schedule of the cleanup job",
    "the default branch of the hotfixes",
];

const QUALIFIERS: [&str; 9] = [
    "for the mobile app",
    "for the partner API",
    "in the EU region",
    "for the admin console",
    "in the US region",
    "for the data warehouse",
    "for the marketing site",
    "for the search service",
    "in the sandbox account",
];

fn new_fact(project: usize, n: usize, by_claude: bool) -> Fact {
    let subject = format!(
        "{} {}",
        SUBJECTS[n % SUBJECTS.len()],
        QUALIFIERS[(n / SUBJECTS.len()) % QUALIFIERS.len()]
    );
    Fact {
        project,
        token: format!(
            "{}{n:04}",
            ["kestrel", "osprey", "merlin", "harrier"][n % 4]
        ),
        question: format!("What is {subject}?"),
        subject,
        by_claude,
    }
}

/// Ordinary programming questions no memory answers.
const UNRELATED: [&str; 8] = [
    "what does set -euo pipefail do in a bash script?",
    "explain the difference between a Kubernetes Deployment and a StatefulSet",
    "how do I reverse a linked list in place in C?",
    "what is the difference between git merge and git rebase?",
    "how does Python's GIL affect threads?",
    "what does the CSS property z-index do?",
    "when should I use a B-tree index versus a hash index in Postgres?",
    "how do Rust lifetimes work with structs holding references?",
];

/// A session id: a UUID, one per session.
fn uuid(n: usize) -> String {
    format!("{:08x}-50a6-4c0d-8e1f-{:012x}", 0x5eed_0000 + n, n)
}

/// One headless Claude Code turn in `dir` (its hooks are Engram's).
fn claude_turn(
    claude: &Path,
    env: &SoakEnv,
    dir: &Path,
    server: &str,
    prompt: &str,
    session: &str,
) -> Result<Output, String> {
    let mut command = Command::new(claude);
    env.apply(&mut command);
    command
        .args([
            "-p",
            prompt,
            "--output-format",
            "json",
            "--session-id",
            session,
        ])
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", server)
        .env("ANTHROPIC_API_KEY", "sk-ant-soak")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_MAX_RETRIES", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("claude: {e}"))
}

/// The scripted model. A main turn (its request offers the `Write` tool) is answered by the
/// prompt: "Save this to memory: …" makes Claude Code write the memory itself — `Write` the topic
/// file, `Read` then `Edit` `MEMORY.md` — anything else gets a short answer. Every prompt's
/// injected memories (the prompt hook's context in the request) are logged.
fn scripted_model(log: Arc<Mutex<ModelLog>>, memory_dirs: Vec<PathBuf>) -> ScriptedServer {
    ScriptedServer::handler(move |request: &RecordedRequest, _| {
        if !request.path.starts_with("/v1/messages") {
            return Reply::json(json!({}));
        }
        let body = request.json();
        let offers_write = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Write"));
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let Some(prompt) = first_prompt(&messages) else {
            return wire::anthropic_stream_text("OK.");
        };
        if !offers_write {
            return wire::anthropic_stream_text("OK.");
        }
        let tool_results = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "tool_result")
            .count();
        if tool_results == 0 {
            if let Ok(mut log) = log.lock() {
                log.injected
                    .entry(prompt.clone())
                    .or_insert_with(|| injected_paths(&request.body));
            }
        }
        let Some(fact) = prompt.strip_prefix("Save this to memory: ") else {
            return wire::anthropic_stream_text("Done.");
        };
        // The project's memory dir, as Claude Code names it in its system prompt.
        let Some(memory) = memory_dirs
            .iter()
            .find(|dir| request.body.contains(&*dir.to_string_lossy()))
        else {
            return wire::anthropic_stream_text("I could not find the memory dir.");
        };
        let token = fact
            .trim_end_matches('.')
            .rsplit(' ')
            .next()
            .unwrap_or("note")
            .to_owned();
        let file = format!("project_{token}.md");
        let topic = memory.join(&file);
        let index = memory.join("MEMORY.md");
        match tool_results {
            0 => wire::anthropic_stream_tool_use(
                "toolu_write",
                "Write",
                &json!({
                    "file_path": topic,
                    "content": format!(
                        "---\nname: {token}\ndescription: {}\ntype: project\n---\n\n{fact}\n",
                        fact.trim_end_matches('.')
                    ),
                }),
            ),
            1 => {
                wire::anthropic_stream_tool_use("toolu_read", "Read", &json!({"file_path": index}))
            }
            2 => {
                let text = fs::read_to_string(&index).unwrap_or_default();
                match text.lines().find(|l| !l.trim().is_empty()) {
                    Some(first) => wire::anthropic_stream_tool_use(
                        "toolu_edit",
                        "Edit",
                        &json!({
                            "file_path": index,
                            "old_string": first,
                            "new_string": format!(
                                "{first}\n- [{token}]({file}) — {}",
                                fact.trim_end_matches('.')
                            ),
                        }),
                    ),
                    None => wire::anthropic_stream_text("Saved."),
                }
            }
            _ => wire::anthropic_stream_text("Saved to memory."),
        }
    })
}

/// The user's prompt of the conversation: its first user message's text, without the context
/// blocks Claude Code and hooks add (`<system-reminder>` …).
fn first_prompt(messages: &[Value]) -> Option<String> {
    let first = messages.iter().find(|m| m["role"] == "user")?;
    let texts: Vec<String> = match &first["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    texts
        .into_iter()
        .map(|t| t.trim().to_owned())
        .find(|t| !t.is_empty() && !t.starts_with('<') && !t.starts_with("UserPromptSubmit hook"))
}

/// The memory files the prompt hook injected into a request: the paths its headers name.
fn injected_paths(body: &str) -> Vec<String> {
    let mut paths = BTreeSet::new();
    for marker in ["Memory (saved ", "Memory: "] {
        for (at, _) in body.match_indices(marker) {
            let rest = &body[at + marker.len()..];
            let rest = if marker.starts_with("Memory (") {
                rest.split_once("): ").map_or("", |(_, r)| r)
            } else {
                rest
            };
            if let Some(end) = rest.find(".md:") {
                let path = &rest[..end + 3];
                if path.starts_with('/') && !path.contains(' ') {
                    paths.insert(path.to_owned());
                }
            }
        }
    }
    paths.into_iter().collect()
}

/// What the Stop hook's workers did for one session.
#[derive(Default)]
struct Runs {
    runs: usize,
    /// Files its extractions wrote.
    written: usize,
}

/// `runs.jsonl` by session.
fn extraction_runs(engram_home: &Path) -> BTreeMap<String, Runs> {
    let mut by_session: BTreeMap<String, Runs> = BTreeMap::new();
    let text = fs::read_to_string(engram_home.join("extract/runs.jsonl")).unwrap_or_default();
    for line in text.lines() {
        let Ok(run) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let session = Path::new(run["transcript"].as_str().unwrap_or_default())
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let entry = by_session.entry(session).or_default();
        entry.runs += 1;
        entry.written += run["extract"]["Ok"]["changeSet"]["files"]
            .as_array()
            .map_or(0, |files| {
                files
                    .iter()
                    .filter(|f| f["status"] == "applied" || f["status"] == "pending")
                    .count()
            });
    }
    by_session
}

/// Waits until no process of the soak runs `engram hook stop`'s worker; whether they all ended.
fn wait_for_workers(engram_home: &Path, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        let workers: Vec<u32> = processes_with_env("ENGRAM_HOME", engram_home)
            .into_iter()
            .filter(|(_, cmdline)| cmdline.contains("hook") && !cmdline.contains("engram-app"))
            .map(|(pid, _)| pid)
            .collect();
        if workers.is_empty() {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Every process whose environment has `name=value`, with its command line.
fn processes_with_env(name: &str, value: &Path) -> Vec<(u32, String)> {
    let wanted = format!("{name}={}", value.display());
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(environ) = fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            let cmdline = fs::read(entry.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            // A zombie (exited, not yet reaped by a parent that is going too) holds nothing.
            let zombie = fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
                })
                .is_some_and(|state| state == "Z");
            if !zombie {
                found.push((pid, cmdline));
            }
        }
    }
    found
}

/// The app's resident memory, open files and threads.
struct Resources {
    rss_kib: u64,
    fds: usize,
    threads: u64,
}

impl Resources {
    fn of(pid: u32) -> Resources {
        Resources {
            rss_kib: status_kib(pid, "VmRSS"),
            fds: fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count()),
            threads: status_kib(pid, "Threads"),
        }
    }
}

/// The CPU the app and its process tree used over `window` (percent of one core), and the
/// window's length in seconds.
fn idle_cpu(pid: u32, window: Duration) -> (f64, f64) {
    let ticks = || -> u64 {
        descendants(pid)
            .iter()
            .filter_map(|p| fs::read_to_string(format!("/proc/{p}/stat")).ok())
            .filter_map(|stat| {
                let rest = stat.rsplit_once(')')?.1.to_owned();
                let fields: Vec<&str> = rest.split_whitespace().collect();
                // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command.
                Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
            })
            .sum()
    };
    let before = ticks();
    let started = Instant::now();
    std::thread::sleep(window);
    let used = ticks().saturating_sub(before);
    let secs = started.elapsed().as_secs_f64();
    // Linux reports CPU time in clock ticks of 1/100 s (USER_HZ).
    (used as f64 / 100.0 / secs * 100.0, secs)
}

/// "42 s ago", "3 min ago".
fn age_words(time: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(time)
        .map_or(0, |d| d.as_secs());
    if secs < 120 {
        format!("{secs} s ago")
    } else {
        format!("{} min ago", secs / 60)
    }
}
