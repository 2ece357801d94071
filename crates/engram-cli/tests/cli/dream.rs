//! `engram dream` and `engram changes` end to end: real processes, real files, a scripted model
//! on loopback speaking the Anthropic wire format, real signals.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use memory_engine::testing::{wire, Reply, ScriptedServer};
use serde_json::{json, Value};

use crate::support::{assert_has_keys, exit_code, stderr, stdout, Sandbox};

/// A messy memory dir in the sandbox project's memory dir: an exact duplicate, a relative date,
/// a dangling index line, an orphan, a user memory.
fn messy(s: &Sandbox) -> PathBuf {
    let dir = s.memory_dir();
    fs::create_dir_all(&dir).expect("memory dir");
    fs::write(
        dir.join("MEMORY.md"),
        "# Memory\n\n- [Deploy](project_deploy.md) \u{2014} how we deploy\n- [Gone](gone.md) \u{2014} missing\n- [Adrian](user_adrian.md) \u{2014} who the user is\n",
    )
    .expect("index");
    let deploy = "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nWe moved to Fly.io yesterday.\n";
    fs::write(dir.join("project_deploy.md"), deploy).expect("deploy");
    fs::write(
        dir.join("project_deploy_copy.md"),
        deploy.replace("name: Deploy", "name: Deploy copy"),
    )
    .expect("copy");
    fs::write(
        dir.join("user_adrian.md"),
        "---\nname: Adrian\ndescription: who the user is\ntype: user\n---\nSenior engineer, likes brutal honesty.\n",
    )
    .expect("user");
    fs::write(
        dir.join("feedback_tabs.md"),
        "---\nname: Tabs\ndescription: tabs not spaces\ntype: feedback\n---\nUse tabs.\n",
    )
    .expect("feedback");
    dir
}

fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = fs::read_dir(dir)
        .expect("list")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read_to_string(e.path()).expect("read"),
            )
        })
        .collect();
    files.sort();
    files
}

fn with_model(mut command: Command, server: &ScriptedServer) -> Command {
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key");
    command
}

#[test]
fn dream_status_prints_every_gate_as_json() {
    let s = Sandbox::in_project("status").with_engram_home();
    messy(&s);
    let v = s.json(&["dream", "status"]);
    assert_has_keys(
        &v,
        &[
            "project",
            "memoryDir",
            "enabled",
            "hoursSince",
            "minHours",
            "sessionsSince",
            "minSessions",
            "lock",
            "blockedBy",
            "due",
        ],
    );
    assert_has_keys(&v["lock"], &["path", "exists", "pid", "alive", "mtime"]);
    assert_eq!(v["blockedBy"], "disabled", "off unless enabled");
    assert_eq!(v["hoursSince"], Value::Null, "no lock: never consolidated");
    s.json(&["dream", "set", "--enabled", "true"]);
    let v = s.json(&["dream", "status"]);
    assert_eq!(v["enabled"], true);
    assert_eq!(v["blockedBy"], "sessions", "{v}");
    let all = s.json(&["dream", "status", "--all-projects"]);
    assert!(all.as_array().is_some_and(|a| !a.is_empty()), "{all}");
}

/// `--memory-dir` naming a project's memory dir, asked from anywhere, reads that project's gates
/// (its name, its sessions), not those of the project the command runs in.
#[test]
fn dream_status_of_a_projects_memory_dir_reads_that_projects_gates() {
    let s = Sandbox::in_project("named").with_engram_home();
    let dir = messy(&s);
    sessions(&s, 6);
    let own = s.json(&["dream", "status"]);
    let elsewhere = s.root().join("elsewhere");
    fs::create_dir_all(&elsewhere).expect("another dir");
    let from_elsewhere = |args: &[&str]| -> Value {
        let out = s
            .command(args)
            .current_dir(&elsewhere)
            .output()
            .expect("run");
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let dir_arg = dir.to_str().expect("utf-8");
    let status = from_elsewhere(&["dream", "status", "--json", "--memory-dir", dir_arg]);
    assert_eq!(status["project"], own["project"], "{status}");
    assert_eq!(status["sessionsSince"], 6, "{status}");
    #[cfg(unix)]
    {
        // Named through a symlink, the same project.
        let link = s.root().join("link-to-memory");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        let linked = from_elsewhere(&[
            "dream",
            "status",
            "--json",
            "--memory-dir",
            link.to_str().expect("utf-8"),
        ]);
        assert_eq!(linked["project"], own["project"], "{linked}");
    }
    // A dir no project uses stands in for the memory dir of the project asked from.
    let loose = s.root().join("loose-memory");
    fs::create_dir_all(&loose).expect("loose dir");
    let status = s.json(&[
        "dream",
        "status",
        "--memory-dir",
        loose.to_str().expect("utf-8"),
    ]);
    assert_eq!(status["project"], own["project"], "{status}");
    assert_eq!(
        status["memoryDir"],
        loose.to_str().expect("utf-8"),
        "{status}"
    );
}

#[test]
fn an_offline_dream_is_staged_reviewed_file_by_file_and_undone() {
    let s = Sandbox::in_project("offline").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    let out = s.run(&["dream", "run", "--force", "--stage", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_has_keys(
        &outcome,
        &[
            "taskId",
            "status",
            "blockedBy",
            "changeSet",
            "summary",
            "tokens",
        ],
    );
    assert_eq!(outcome["status"], "completed");
    // Progress: one JSON event per line on stderr.
    let events: Vec<Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event per line"))
        .collect();
    assert_eq!(
        events.first().map(|e| e["kind"].clone()),
        Some(json!("started"))
    );
    assert_eq!(
        events.last().map(|e| e["kind"].clone()),
        Some(json!("finished"))
    );
    assert_eq!(snapshot(&dir), before, "--stage writes nothing");

    let id = outcome["changeSet"]
        .as_str()
        .expect("a change set")
        .to_owned();
    let listed = s.json(&["changes", "list"]);
    assert_has_keys(
        &listed[0],
        &["id", "source", "project", "createdAt", "status", "files"],
    );
    assert_has_keys(
        &listed[0]["files"][0],
        &["file", "kind", "reason", "status", "protected"],
    );
    assert_eq!(listed[0]["id"], id.as_str());
    let files: Vec<&str> = listed[0]["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file"))
        .collect();
    assert!(
        files.contains(&"project_deploy_copy.md") && files.contains(&"project_deploy.md"),
        "{files:?}"
    );

    // Accept the date fix, reject the duplicate's deletion.
    s.json(&[
        "changes",
        "apply",
        &id,
        "--file",
        "project_deploy.md",
        "--file",
        "MEMORY.md",
    ]);
    let shown = s.json(&["changes", "reject", &id, "--file", "project_deploy_copy.md"]);
    assert_eq!(shown["status"], "applied", "{shown}");
    let deploy = fs::read_to_string(dir.join("project_deploy.md")).expect("deploy");
    assert!(
        !deploy.contains("yesterday") && deploy.contains("We moved to Fly.io"),
        "{deploy}"
    );
    assert!(
        dir.join("project_deploy_copy.md").is_file(),
        "rejected: kept"
    );
    let index = fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert!(
        !index.contains("gone.md") && index.contains("feedback_tabs.md"),
        "{index}"
    );

    let undone = s.json(&["changes", "undo", &id]);
    assert_eq!(undone["status"], "undone");
    assert_eq!(
        snapshot(&dir),
        before,
        "undo restores every file byte for byte"
    );
}

/// The scripted model's consolidation: merge the duplicate, fix the date, drop the dead line.
fn model_replies() -> Vec<Reply> {
    vec![
        Reply::json(wire::anthropic_tools(
            &[("r1", "read", json!({"path": "MEMORY.md"}))],
            (1200, 40, 800, 0),
        )),
        Reply::json(wire::anthropic_tools(
            &[
                (
                    "w1",
                    "edit",
                    json!({"path": "project_deploy.md", "old_string": "yesterday", "new_string": "on 2026-11-22"}),
                ),
                ("w2", "delete", json!({"path": "project_deploy_copy.md"})),
                (
                    "w3",
                    "edit",
                    json!({"path": "MEMORY.md", "old_string": "- [Gone](gone.md) \u{2014} missing\n", "new_string": ""}),
                ),
            ],
            (1500, 120, 900, 0),
        )),
        Reply::json(wire::anthropic_text(
            "Merged the deploy duplicate, dated the move, removed a dead index line.",
            (1600, 30, 900, 0),
        )),
    ]
}

#[test]
fn a_model_dream_stages_what_the_model_wrote_and_a_moved_base_is_a_conflict() {
    let s = Sandbox::in_project("model").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    let server = ScriptedServer::queue(model_replies());
    let out = with_model(
        s.command(&[
            "dream",
            "run",
            "--force",
            "--stage",
            "--provider",
            "anthropic",
            "--json",
        ]),
        &server,
    )
    .output()
    .expect("run");
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["tokens"]["inputTokens"], 4300, "{outcome}");
    assert_eq!(outcome["tokens"]["cacheReadTokens"], 2600);
    let turns = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["kind"] == "turn")
        .count();
    assert_eq!(turns, 3, "each model turn is an event");
    assert_eq!(snapshot(&dir), before, "staged only");
    let first: Value = serde_json::from_str(&server.requests()[0].body).expect("request");
    let brief = first["messages"][0]["content"].to_string();
    assert!(
        brief.contains("project_deploy_copy.md") && brief.contains("dangling-pointer"),
        "{brief}"
    );

    let id = outcome["changeSet"]
        .as_str()
        .expect("change set")
        .to_owned();
    let set = s.json(&["changes", "show", &id]);
    let files: Vec<(String, String)> = set["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap_or_default().to_owned(),
                f["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("project_deploy.md".to_owned(), "modify".to_owned()),
            ("project_deploy_copy.md".to_owned(), "delete".to_owned()),
            ("MEMORY.md".to_owned(), "modify".to_owned()),
        ]
    );

    // Claude Code edits a base between the run and the review: that file is a conflict.
    fs::write(dir.join("project_deploy.md"), "edited meanwhile\n").expect("edit");
    // Exit 1: a file it was asked to apply did not land; the set is printed all the same.
    let applied = s.json_with_code(&["changes", "apply", &id], 1);
    let status = |file: &str| {
        applied["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["file"] == file)
            .map(|f| f["status"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(status("project_deploy.md").as_deref(), Some("conflict"));
    assert_eq!(status("project_deploy_copy.md").as_deref(), Some("applied"));
    assert_eq!(
        fs::read_to_string(dir.join("project_deploy.md")).expect("read"),
        "edited meanwhile\n",
        "the conflict loses nothing"
    );
    assert!(!fs::read_to_string(dir.join("MEMORY.md"))
        .expect("index")
        .contains("gone.md"));

    let history = s.json(&["history"]);
    assert!(
        history
            .as_array()
            .expect("versions")
            .iter()
            .any(|v| v["actor"] == "dream" && v["changeSet"] == id.as_str()),
        "applied versions name the change set: {history}"
    );
    s.json(&["changes", "undo", &id]);
    assert!(dir.join("project_deploy_copy.md").is_file(), "undone");
}

#[test]
fn a_dream_past_its_token_budget_fails_and_applies_nothing() {
    let s = Sandbox::in_project("budget").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    fs::create_dir_all(s.engram_home()).expect("engram home");
    fs::write(
        s.engram_home().join("config.toml"),
        "[dream]\ntoken_budget = 2000\n",
    )
    .expect("config");
    let server = ScriptedServer::queue(model_replies());
    let out = with_model(
        s.command(&[
            "dream",
            "run",
            "--force",
            "--apply",
            "--provider",
            "anthropic",
            "--json",
        ]),
        &server,
    )
    .output()
    .expect("run");
    assert_eq!(exit_code(&out), 1, "failed: {}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(outcome["status"], "failed");
    assert!(
        outcome["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("token budget"),
        "{outcome}"
    );
    assert_eq!(snapshot(&dir), before);
    assert!(
        !dir.join(".consolidate-lock").exists(),
        "rolled back: no lock before, none after"
    );
}

/// A model that takes `delay` to answer, then says it is done.
fn slow_model(delay: Duration) -> ScriptedServer {
    ScriptedServer::handler(move |_, _| {
        thread::sleep(delay);
        Reply::json(wire::anthropic_text("Nothing to change.", (10, 5, 0, 0)))
    })
}

/// Waits until process `pid` holds `lock` (its PID in the body).
fn wait_until_it_holds(lock: &Path, pid: u32) {
    let start = Instant::now();
    while fs::read_to_string(lock).unwrap_or_default().trim() != pid.to_string() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{pid} never took the lock"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_dream(s: &Sandbox, server: &ScriptedServer) -> Child {
    with_model(
        s.command(&[
            "dream",
            "run",
            "--force",
            "--provider",
            "anthropic",
            "--json",
        ]),
        server,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("start engram dream run")
}

#[test]
fn fifty_processes_racing_for_one_project_dream_exactly_once_each_round() {
    let s = Sandbox::in_project("race").with_engram_home();
    messy(&s);
    let server = slow_model(Duration::from_secs(4));
    for round in 0..10 {
        let children: Vec<Child> = (0..50).map(|_| spawn_dream(&s, &server)).collect();
        let statuses: Vec<String> = children
            .into_iter()
            .map(|child| {
                let out = child.wait_with_output().expect("wait");
                let v: Value = serde_json::from_slice(&out.stdout).expect("outcome json");
                v["status"].as_str().unwrap_or_default().to_owned()
            })
            .collect();
        let completed = statuses.iter().filter(|s| *s == "completed").count();
        let skipped = statuses.iter().filter(|s| *s == "skipped").count();
        assert_eq!((completed, skipped), (1, 49), "round {round}: {statuses:?}");
    }
}

#[cfg(unix)]
#[test]
fn sigterm_and_engram_dream_kill_stop_a_dream_and_roll_its_lock_back() {
    let s = Sandbox::in_project("kill").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    let server = slow_model(Duration::from_secs(30));
    // A consolidation three days ago: the kill must put this mtime back, to the second.
    let lock = dir.join(".consolidate-lock");
    fs::write(&lock, "").expect("lock");
    let prior = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    fs::File::options()
        .write(true)
        .open(&lock)
        .and_then(|f| f.set_times(fs::FileTimes::new().set_modified(prior)))
        .expect("mtime");

    for how in ["SIGTERM", "engram dream kill"] {
        let child = spawn_dream(&s, &server);
        let pid = child.id();
        wait_until_it_holds(&lock, pid);
        if how == "SIGTERM" {
            Command::new("kill")
                .arg(pid.to_string())
                .status()
                .expect("kill");
        } else {
            let out = s.run(&["dream", "kill"]);
            assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        }
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(130), "{how}: killed");
        let v: Value = serde_json::from_slice(&out.stdout).expect("outcome");
        assert_eq!(v["status"], "killed", "{how}: {v}");
        assert_eq!(v["changeSet"], Value::Null);
        assert_eq!(
            fs::read_to_string(&lock).expect("lock"),
            "",
            "{how}: body emptied"
        );
        assert_eq!(
            fs::metadata(&lock)
                .expect("stat")
                .modified()
                .expect("mtime"),
            prior,
            "{how}: the mtime is back"
        );
        assert_eq!(snapshot(&dir), before, "{how}: nothing landed");
    }
    assert_eq!(s.json(&["changes", "list"]), json!([]), "nothing staged");
}

#[cfg(unix)]
#[test]
fn a_dream_killed_with_sigkill_leaves_the_memory_untouched_and_its_lock_is_recovered() {
    let s = Sandbox::in_project("crash").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    let lock = dir.join(".consolidate-lock");
    let server = slow_model(Duration::from_secs(30));
    let mut child = spawn_dream(&s, &server);
    let pid = child.id();
    wait_until_it_holds(&lock, pid);
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill -9");
    child.wait().expect("wait");
    assert_eq!(snapshot(&dir), before, "a crash mid-run changes nothing");
    // The next look cleans up: the crash was no consolidation.
    let status = s.json(&["dream", "status"]);
    assert_eq!(status["hoursSince"], Value::Null, "{status}");
    assert!(!lock.exists(), "no lock before the crashed run, none after");
    assert_eq!(s.json(&["changes", "list"]), json!([]));
}

/// A `.consolidate-lock` that is a FIFO nothing writes to used to hang every dream command (an
/// ordinary open waits for a writer, and SIGTERM does not end that wait): each now finishes,
/// names the lock as not a regular file, and leaves it where it is. A 200 MB lock is read no
/// further than a PID's length: its body is a live PID padded with spaces, then NULs and a final
/// digit — read whole, it would parse as no PID at all.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_200_mb_lock_never_hangs_a_dream_command() {
    use std::os::unix::fs::FileTypeExt;

    let s = Sandbox::in_project("fifo-lock").with_engram_home();
    let dir = messy(&s);
    let before = snapshot(&dir);
    let lock = dir.join(".consolidate-lock");
    let made = Command::new("mkfifo").arg(&lock).status().expect("mkfifo");
    assert!(made.success(), "mkfifo");
    // A generous guard: a hang fails the test instead of stalling it.
    let limit = Duration::from_secs(120);
    for args in [
        &["dream", "status"][..],
        &["dream", "status", "--all-projects"],
        &["dream", "run", "--force"],
        &["dream", "kill"],
    ] {
        let out = crate::support::bounded(s.command(args), limit);
        assert_ne!(exit_code(&out), 0, "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("not a regular file (a FIFO)") && err.contains(&*lock.to_string_lossy()),
            "{args:?} names the lock and what it is: {err}"
        );
    }
    let kind = fs::symlink_metadata(&lock)
        .expect("still there")
        .file_type();
    assert!(kind.is_fifo(), "left as it was: {kind:?}");
    assert_eq!(snapshot(&dir), before, "nothing dreamed");

    fs::remove_file(&lock).expect("remove the FIFO");
    let pid = std::process::id().to_string();
    let mut body = format!("{pid:<64}").into_bytes();
    body.resize(200 << 20, 0);
    *body.last_mut().expect("a last byte") = b'9';
    fs::write(&lock, &body).expect("a 200 MB lock");
    drop(body);
    let out = crate::support::bounded(s.command(&["dream", "status", "--json"]), limit);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        status["lock"]["pid"],
        json!(std::process::id()),
        "the first bytes hold the PID: {status}"
    );
    assert_eq!(status["blockedBy"], "disabled", "{status}");
}

/// Provider `local`: the offline dream also finds memories that say the same thing in other words
/// (the real all-MiniLM-L6-v2's vectors of their whole text, confirmed by the facts they share),
/// merges them with every fact kept, and says which and how alike; offline, the facts alone do
/// not make them duplicates, and the same dir has nothing to merge.
#[test]
fn a_local_dream_merges_memories_that_mean_the_same_in_other_words() {
    let Some(models) = memory_engine::testing::fixtures::test_models_dir() else {
        eprintln!("skipped: no local model (set ENGRAM_TEST_MODELS; make test does)");
        return;
    };
    let dream = |provider: &str| {
        let s = Sandbox::in_project(&format!("alike-{provider}")).with_engram_home();
        let dir = s.memory_dir();
        fs::create_dir_all(&dir).expect("memory dir");
        // A pair from the dream set's messy dir (bench/dream-set/messy): the same schedule in
        // other words, which the facts alone leave apart.
        fs::write(
            dir.join("MEMORY.md"),
            "- [Release schedule](project_release_schedule.md) \u{2014} every other Wednesday\n- [release train](project_release_train.md) \u{2014} alternate Wednesdays\n- [Tabs](feedback_tabs.md) \u{2014} tabs\n",
        )
        .expect("index");
        fs::write(
            dir.join("project_release_schedule.md"),
            "---\nname: Release schedule\ndescription: Ledgerly releases every other Wednesday from main\ntype: project\n---\n\nLedgerly ships a release every second Wednesday, cut from `main` and tagged `vYYYY.MM.DD`.\n",
        )
        .expect("one");
        fs::write(
            dir.join("project_release_train.md"),
            "---\nname: release train\ndescription: The release train leaves on alternate Wednesdays\ntype: project\n---\n\nThe release train departs fortnightly on Wednesday: tag main as vYYYY.MM.DD and post the notes in #ledgerly-releases.\n",
        )
        .expect("two");
        fs::write(
            dir.join("feedback_tabs.md"),
            "---\nname: Tabs\ndescription: Indent with tabs, not spaces\ntype: feedback\n---\n\nIndent with tabs.\n",
        )
        .expect("three");
        let out = s
            .command(&[
                "dream",
                "run",
                "--force",
                "--stage",
                "--json",
                "--provider",
                provider,
            ])
            .env("ENGRAM_MODELS_DIR", &models)
            .output()
            .expect("dream");
        assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
        let outcome: Value = serde_json::from_str(&stdout(&out)).expect("json");
        let set = match outcome["changeSet"].as_str() {
            Some(id) => s.json(&["changes", "show", id]),
            None => Value::Null,
        };
        (outcome, set)
    };

    let (local, set) = dream("local");
    let summary = local["summary"].as_str().expect("summary");
    assert!(
        summary.contains("alike: ") && summary.contains("project_release_train.md"),
        "{summary}"
    );
    let files = set["files"].as_array().expect("files");
    let change = |file: &str| files.iter().find(|f| f["file"] == file);
    let deleted = ["project_release_train.md", "project_release_schedule.md"]
        .into_iter()
        .filter(|f| change(f).is_some_and(|c| c["after"].is_null()))
        .count();
    assert_eq!(deleted, 1, "one of the two goes: {files:?}");
    let merged: String = files.iter().filter_map(|f| f["after"].as_str()).collect();
    assert!(merged.contains("#ledgerly-releases"), "its fact is kept");
    assert!(
        merged.contains("Ledgerly ships a release"),
        "and the other's"
    );
    assert!(
        change("feedback_tabs.md").is_none(),
        "unrelated memory untouched"
    );

    let (offline, set) = dream("offline");
    let summary = offline["summary"].as_str().expect("summary");
    assert!(!summary.contains("alike: "), "{summary}");
    assert!(
        set.is_null()
            || set["files"]
                .as_array()
                .is_some_and(|f| f.iter().all(|c| c["file"] == "MEMORY.md")),
        "{set}"
    );
}

/// `n` session transcripts (`<uuid>.jsonl`) in the sandbox project's transcripts dir, as Claude
/// Code leaves them after `n` sessions.
fn sessions(s: &Sandbox, n: usize) {
    let transcripts = PathBuf::from(
        s.json(&["where"])["transcriptsDir"]
            .as_str()
            .expect("transcriptsDir"),
    );
    fs::create_dir_all(&transcripts).expect("transcripts dir");
    for i in 0..n {
        fs::write(
            transcripts.join(format!("{i:08}-1111-4111-8111-111111111111.jsonl")),
            "{\"type\":\"user\"}\n",
        )
        .expect("transcript");
    }
}

/// The whole scheduled path in one process, with the real clock: a project with dreams on, six
/// sessions since, no lock, a fresh data dir. The scheduler's own gate check records the scan
/// time; the run it starts must not then stop at the throttle that check just wrote.
#[test]
fn if_due_all_projects_dreams_a_due_project_then_waits_for_the_next_period() {
    let s = Sandbox::in_project("due").with_engram_home();
    let dir = messy(&s);
    sessions(&s, 6);
    s.json(&["dream", "set", "--enabled", "true"]);
    let status = s.json(&["dream", "status"]);
    assert_eq!(status["due"], true, "{status}");

    let out = s.run(&["dream", "run", "--if-due", "--all-projects", "--json"]);
    assert_eq!(exit_code(&out), 0, "{}", stderr(&out));
    let outcomes: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let ran: Vec<&Value> = outcomes
        .as_array()
        .expect("one outcome per due project")
        .iter()
        .filter(|o| o["status"] != "skipped")
        .collect();
    assert_eq!(ran.len(), 1, "the due project dreams: {outcomes}");
    assert_eq!(ran[0]["status"], "completed", "{outcomes}");
    assert!(
        ran[0]["changeSet"].is_string(),
        "its changes are staged: {outcomes}"
    );
    assert!(dir.join(".consolidate-lock").is_file(), "consolidated now");

    // Consolidated a moment ago: nothing is due until min_hours have passed.
    let again = s.json(&["dream", "run", "--if-due", "--all-projects"]);
    assert!(
        again
            .as_array()
            .expect("outcomes")
            .iter()
            .all(|o| o["status"] == "skipped"),
        "{again}"
    );
    assert_eq!(s.json(&["dream", "status"])["blockedBy"], "time");
}

/// Claude Code's auto-dream opens only while its auto memory is on (its master gate checks
/// `isAutoMemoryEnabled()` first); Engram's scheduler does the same, even for a project whose
/// dreams Engram itself turned on. The environment switch forces memory back on.
#[test]
fn no_dream_is_due_while_claude_codes_auto_memory_is_off() {
    let s = Sandbox::in_project("memory-off").with_engram_home();
    let dir = messy(&s);
    sessions(&s, 6);
    fs::create_dir_all(s.claude()).expect("claude dir");
    fs::write(s.settings(), r#"{"autoMemoryEnabled": false}"#).expect("settings");
    let set = s.json(&["dream", "set", "--enabled", "true"]);
    assert_eq!(set["enabled"], false, "{set}");
    assert_eq!(set["enabledSource"], "autoMemory", "{set}");
    let status = s.json(&["dream", "status"]);
    assert_eq!(
        (&status["due"], &status["blockedBy"]),
        (&json!(false), &json!("disabled")),
        "{status}"
    );
    // The scheduler's path, where the project's working dir comes from its transcripts (these
    // name none): the user's settings still speak.
    let outcomes = s.json(&["dream", "run", "--if-due", "--all-projects"]);
    assert!(
        outcomes
            .as_array()
            .expect("outcomes")
            .iter()
            .all(|o| o["status"] == "skipped"),
        "{outcomes}"
    );
    assert!(
        !dir.join(".consolidate-lock").exists(),
        "nothing consolidated"
    );

    let mut forced_on = s.command(&["dream", "status", "--json"]);
    forced_on.env("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "0");
    let out = forced_on.output().expect("status");
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["due"], true, "{status}");
}
