//! A confined agent loop, for the jobs that let a model work on a memory dir (extraction,
//! dreams): the model gets Engram's native tools only — `list`, `read`, `grep`, `glob`, `write`,
//! `edit`, `delete` — and every path is checked against one root before anything is touched.
//!
//! Contract:
//! - A path is accepted only if it is relative to the root (or absolute and lexically inside it),
//!   has no `..`, NUL or backslash, and — symlinks followed — its deepest existing ancestor lies
//!   inside the real root ([`confined_path`]). Walks (`list`, `grep`, `glob`) never descend into
//!   symlinked directories and skip symlinked files that lead outside.
//! - A call with a path outside the root, or to any tool not in [`TOOL_NAMES`], is *denied*: it
//!   is never executed, and the model receives a `tool_result` with `is_error` saying why.
//! - `write`, `edit` and `delete` are staged in a [`ChangeSet`]; nothing reaches the disk. Reads
//!   see staged content ([`ChangeSet::read`]), so the model can read what it just wrote. The
//!   caller reviews the set and applies it with [`Engine::apply_change_set`].
//! - At most `max_turns` model calls. Every model reply and every tool call is reported as an
//!   [`AgentEvent`] through the caller's callback, denied calls included.
//! - The loop checks its [`CancellationToken`] before every turn and races it against every model
//!   call; a cancelled run returns [`Error::Cancelled`] and its staged changes are dropped.
//!
//! [`Engine::apply_change_set`]: crate::Engine::apply_change_set

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::changeset::ChangeSet;
use crate::error::{Error, Result};
use crate::llm::{clip, Client, ContentBlock, Message, Request, Role, Usage};
mod glob;
mod tools;

pub use glob::glob_match;
pub use tools::tool_specs;
use tools::Workspace;

/// The only tools a confined agent has.
pub const TOOL_NAMES: [&str; 7] = ["list", "read", "grep", "glob", "write", "edit", "delete"];
/// Lines `read` returns at most by default.
const READ_DEFAULT_LINES: usize = 2000;
/// Matches `grep` returns at most.
const GREP_MAX_MATCHES: usize = 200;
/// Characters of tool output sent back to the model, at most.
const OUTPUT_MAX_CHARS: usize = 100_000;
/// Characters of tool output copied into an event.
const EVENT_OUTPUT_CHARS: usize = 2_000;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOptions {
    /// The job's instructions; a preamble describing the tools and the root is put before it.
    pub system: String,
    /// The first user message.
    pub task: String,
    /// Model calls at most.
    pub max_turns: usize,
    /// Output tokens per model call.
    pub max_tokens: u32,
    /// Recorded as the reason of every staged change (e.g. `extract`).
    pub reason: String,
    /// Session transcripts the agent may read and grep (`transcript_read`, `transcript_grep`),
    /// never write. Empty: those tools are not offered.
    pub transcripts: Vec<TranscriptSource>,
    /// Tokens (input + output, cache included) the run may spend; past it the loop stops with
    /// [`FinishReason::TokenBudget`] before calling the model again.
    pub token_budget: Option<u64>,
    /// A one-file job: the only tool offered is `edit`, and only on this file (relative to the
    /// root); every other call is denied.
    pub single_file: Option<String>,
}

/// A transcript offered read-only to the agent, by session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptSource {
    pub session: String,
    pub path: std::path::PathBuf,
}

/// Whether a tool call was executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolDecision {
    /// Executed (it may still have failed: see `is_error`).
    Allowed,
    /// Refused without executing: outside the root, or not a tool the agent has.
    Denied,
}

/// One tool call, as reported to the caller.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    pub turn: usize,
    pub id: String,
    pub name: String,
    pub input: Value,
    pub decision: ToolDecision,
    /// The file or directory the call resolved to, relative to the root (allowed calls).
    pub path: Option<String>,
    /// What the model was told (clipped).
    pub output: String,
    pub is_error: bool,
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FinishReason {
    /// The model answered without calling a tool.
    Done,
    /// The turn budget ran out while the model still wanted tools.
    MaxTurns,
    /// The token budget was spent.
    TokenBudget,
}

/// Progress of a run, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AgentEvent {
    TurnStarted {
        turn: usize,
    },
    ModelReplied {
        turn: usize,
        text: String,
        tool_calls: usize,
        usage: Usage,
    },
    ToolCall(ToolCallEvent),
    Finished {
        turns: usize,
        reason: FinishReason,
        usage: Usage,
    },
}

/// What a run produced. Nothing of it is on disk.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    pub changes: ChangeSet,
    pub turns: usize,
    pub finish: FinishReason,
    /// The model's last text.
    pub final_text: String,
    pub usage: Usage,
    pub tool_calls: usize,
    pub denied: usize,
}

/// Runs the loop over `root` until the model stops calling tools, the turns run out, or `cancel`
/// fires.
pub async fn run_agent(
    client: &dyn Client,
    root: &Path,
    options: &AgentOptions,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(AgentEvent) + Send,
) -> Result<AgentOutcome> {
    let mut workspace = Workspace::new(root, &options.reason, &options.transcripts);
    workspace.single_file = options.single_file.clone();
    let mut request = Request::new(options.max_tokens);
    let preamble = match &options.single_file {
        Some(file) => single_file_preamble(root, file),
        None => preamble(root),
    };
    request.system = Some(format!("{preamble}\n\n{}", options.system));
    request.tools = tool_specs();
    if options.single_file.is_some() {
        request.tools.retain(|tool| tool.name == "edit");
    }
    if !options.transcripts.is_empty() {
        request.tools.extend(tools::transcript_tool_specs());
    }
    request.messages.push(Message::user(options.task.clone()));
    let mut usage = Usage::default();
    let mut turns = 0;
    let mut final_text = String::new();
    let mut finish = FinishReason::MaxTurns;
    let (mut tool_calls, mut denied) = (0, 0);
    while turns < options.max_turns {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if options
            .token_budget
            .is_some_and(|budget| usage.total_tokens() >= budget)
        {
            finish = FinishReason::TokenBudget;
            break;
        }
        turns += 1;
        on_event(AgentEvent::TurnStarted { turn: turns });
        let response = client.complete(&request, cancel).await?;
        usage += response.usage;
        let calls: Vec<(String, String, Value)> = response
            .tool_uses()
            .into_iter()
            .map(|(id, name, input)| (id.to_owned(), name.to_owned(), input.clone()))
            .collect();
        final_text = response.text();
        on_event(AgentEvent::ModelReplied {
            turn: turns,
            text: final_text.clone(),
            tool_calls: calls.len(),
            usage: response.usage,
        });
        request.messages.push(Message::assistant(response.content));
        if calls.is_empty() {
            finish = FinishReason::Done;
            break;
        }
        let mut results = Vec::with_capacity(calls.len());
        for (id, name, input) in calls {
            let outcome = workspace.run(&name, &input);
            tool_calls += 1;
            if outcome.decision == ToolDecision::Denied {
                denied += 1;
            }
            on_event(AgentEvent::ToolCall(ToolCallEvent {
                turn: turns,
                id: id.clone(),
                name,
                input,
                decision: outcome.decision,
                path: outcome.path,
                output: clip(&outcome.output, EVENT_OUTPUT_CHARS),
                is_error: outcome.is_error,
            }));
            results.push(ContentBlock::ToolResult {
                tool_use_id: id,
                content: clip(&outcome.output, OUTPUT_MAX_CHARS),
                is_error: outcome.is_error,
            });
        }
        request.messages.push(Message {
            role: Role::User,
            content: results,
        });
    }
    on_event(AgentEvent::Finished {
        turns,
        reason: finish,
        usage,
    });
    Ok(AgentOutcome {
        changes: workspace.set,
        turns,
        finish,
        final_text,
        usage,
        tool_calls,
        denied,
    })
}

fn single_file_preamble(root: &Path, file: &str) -> String {
    format!(
        "You edit one file, {file} (in {root}), with the `edit` tool only (old_string → \
         new_string; give the path `{file}`). No other tool or file is available.",
        root = root.display()
    )
}

fn preamble(root: &Path) -> String {
    format!(
        "You work on the files of one directory, {root}, through these tools only: list, read, \
         grep, glob, write, edit, delete. Give paths relative to that directory. Anything outside \
         it is refused. Writes, edits and deletes are staged for the user's review, not applied \
         immediately; reads see the staged content.",
        root = root.display()
    )
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("memory");
        fs::create_dir_all(root.join("team")).expect("mkdir");
        fs::write(root.join("a.md"), "alpha\nbeta\n").expect("write");
        fs::write(root.join("team/b.md"), "gamma beta\n").expect("write");
        let ws = Workspace::new(&root, "test", &[]);
        (dir, ws)
    }

    #[test]
    fn reads_lists_and_greps_see_staged_changes() {
        let (_dir, mut ws) = workspace();
        let out = ws.run(
            "write",
            &json!({"path": "new/c.md", "content": "beta three\n"}),
        );
        assert!(!out.is_error, "{}", out.output);
        let out = ws.run("delete", &json!({"path": "a.md"}));
        assert!(!out.is_error, "{}", out.output);
        assert_eq!(ws.run("list", &json!({})).output, "new/\nteam/");
        let out = ws.run("read", &json!({"path": "./new/c.md"}));
        assert_eq!(out.output, "beta three\n");
        let out = ws.run("read", &json!({"path": "a.md"}));
        assert!(
            out.is_error && out.decision == ToolDecision::Allowed,
            "deleted: {}",
            out.output
        );
        let out = ws.run("grep", &json!({"pattern": "beta"}));
        assert_eq!(
            out.output,
            "new/c.md:1: beta three\nteam/b.md:1: gamma beta"
        );
        let out = ws.run("glob", &json!({"pattern": "**/*.md"}));
        assert_eq!(out.output, "new/c.md\nteam/b.md");
        let out = ws.run(
            "edit",
            &json!({"path": "team/b.md", "old_string": "gamma", "new_string": "delta"}),
        );
        assert!(!out.is_error, "{}", out.output);
        assert_eq!(
            ws.run("read", &json!({"path": "team/b.md"})).output,
            "delta beta\n"
        );
        assert_eq!(
            fs::read_to_string(ws.root.join("team/b.md")).expect("disk"),
            "gamma beta\n",
            "nothing reaches the disk"
        );
    }

    /// Platforms row 13: a model may not create a file Windows cannot hold; a file that already
    /// has such a name (made on Linux) is still read and edited.
    #[test]
    fn a_new_file_windows_cannot_hold_is_denied_but_an_existing_one_is_edited() {
        let (_dir, mut ws) = workspace();
        for path in [
            "con.md",
            "notes:ads.md",
            "why?.md",
            "notes./x.md",
            "team/LPT1.md",
        ] {
            let out = ws.run("write", &json!({"path": path, "content": "x\n"}));
            assert_eq!(out.decision, ToolDecision::Denied, "{path}: {}", out.output);
            assert!(out.output.contains("Windows"), "{path}: {}", out.output);
        }
        assert!(ws.set.changes.is_empty(), "nothing staged");
        fs::write(ws.root.join("aux.md"), "old\n").expect("legacy file");
        let out = ws.run("read", &json!({"path": "aux.md"}));
        assert_eq!(out.output, "old\n");
        let out = ws.run(
            "edit",
            &json!({"path": "aux.md", "old_string": "old", "new_string": "new"}),
        );
        assert!(!out.is_error, "{}", out.output);
        let out = ws.run("write", &json!({"path": "aux.md", "content": "again\n"}));
        assert!(!out.is_error, "{}", out.output);
    }

    /// Platforms row 12: a model's new file may not differ only in case from a file on disk or
    /// one it staged already (one file on macOS and Windows: it would replace the other).
    #[test]
    fn a_new_file_differing_only_in_case_from_another_is_denied() {
        let (_dir, mut ws) = workspace();
        fs::write(ws.root.join("Deploy.md"), "ours\n").expect("existing");
        let out = ws.run("write", &json!({"path": "deploy.md", "content": "x\n"}));
        assert_eq!(out.decision, ToolDecision::Denied, "{}", out.output);
        assert!(
            out.output.contains("\"deploy.md\"") && out.output.contains("\"Deploy.md\""),
            "{}",
            out.output
        );
        let out = ws.run("write", &json!({"path": "new.md", "content": "x\n"}));
        assert!(!out.is_error, "{}", out.output);
        let out = ws.run("write", &json!({"path": "NEW.md", "content": "y\n"}));
        assert_eq!(out.decision, ToolDecision::Denied, "{}", out.output);
        assert!(out.output.contains("\"new.md\""), "{}", out.output);
        // The file under its own name is written as before.
        let out = ws.run("write", &json!({"path": "Deploy.md", "content": "new\n"}));
        assert!(!out.is_error, "{}", out.output);
        let staged: Vec<_> = ws.set.changes.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(staged, ["new.md", "Deploy.md"]);
    }

    #[test]
    fn edits_need_a_unique_match_unless_replacing_all() {
        let (_dir, mut ws) = workspace();
        ws.run("write", &json!({"path": "x.md", "content": "a a a"}));
        let out = ws.run(
            "edit",
            &json!({"path": "x.md", "old_string": "a", "new_string": "b"}),
        );
        assert!(
            out.is_error && out.output.contains("occurs 3 times"),
            "{}",
            out.output
        );
        let out = ws.run(
            "edit",
            &json!({"path": "x.md", "old_string": "a", "new_string": "b", "replace_all": true}),
        );
        assert!(!out.is_error, "{}", out.output);
        assert_eq!(ws.run("read", &json!({"path": "x.md"})).output, "b b b");
        let out = ws.run(
            "edit",
            &json!({"path": "x.md", "old_string": "zzz", "new_string": "b"}),
        );
        assert!(out.output.contains("not found"), "{}", out.output);
    }

    #[test]
    fn absolute_paths_inside_the_root_are_accepted_and_outside_denied() {
        let (_dir, mut ws) = workspace();
        let inside = ws.root.join("a.md").to_string_lossy().into_owned();
        let out = ws.run("read", &json!({"path": inside}));
        assert_eq!(out.output, "alpha\nbeta\n");
        let sneaky = format!("{}/../memory-evil/x.md", ws.root.display());
        let out = ws.run("write", &json!({"path": sneaky, "content": "x"}));
        assert_eq!(out.decision, ToolDecision::Denied, "{}", out.output);
        let out = ws.run("glob", &json!({"pattern": "../*"}));
        assert_eq!(out.decision, ToolDecision::Denied);
        let out = ws.run("read", &json!({"path": "a.md", "offset": 2, "limit": 1}));
        assert!(out.output.starts_with("beta\n"), "{}", out.output);
        let out = ws.run("read", &json!({}));
        assert!(out.is_error && out.output.contains("missing string argument `path`"));
    }

    // Every test here works on `tree()`, whose memory dir links out with Unix symlinks.
    #[cfg(unix)]
    mod loopback {
        use std::sync::{Arc, Mutex};
        use std::time::Duration;

        use super::*;
        use crate::llm::anthropic::AnthropicClient;
        use crate::llm::openai::OpenAiClient;
        use crate::llm::{ClientOptions, RetryPolicy};
        use crate::testing::{wire, RecordedRequest, Reply, ScriptedServer};

        fn client_options(server: &ScriptedServer, suffix: &str) -> ClientOptions {
            ClientOptions {
                base_url: format!("{}{suffix}", server.url()),
                model: "scripted".into(),
                api_key: Some("k".into()),
                timeout: Duration::from_secs(5),
                retry: RetryPolicy::default(),
            }
        }

        fn options(max_turns: usize) -> AgentOptions {
            AgentOptions {
                transcripts: Vec::new(),
                token_budget: None,
                single_file: None,
                system: "Tidy the memory dir.".into(),
                task: "Go.".into(),
                max_turns,
                max_tokens: 1024,
                reason: "extract".into(),
            }
        }

        /// A memory dir next to a directory it must never reach, with a symlink leading there.
        struct Tree {
            _dir: tempfile::TempDir,
            root: PathBuf,
            outside: PathBuf,
        }

        fn tree() -> Tree {
            let dir = tempfile::tempdir().expect("tempdir");
            let base = dir.path().canonicalize().expect("canonical");
            let root = base.join("memory");
            let outside = base.join("outside");
            fs::create_dir_all(&root).expect("root");
            fs::create_dir_all(&outside).expect("outside");
            fs::write(root.join("MEMORY.md"), "- [Tabs](tabs.md) — tabs\n").expect("index");
            fs::write(root.join("tabs.md"), "---\nname: tabs\n---\nUse tabs.\n").expect("topic");
            fs::write(outside.join("secret.md"), "the secret\n").expect("secret");
            std::os::unix::fs::symlink(&outside, root.join("escape")).expect("dir symlink");
            std::os::unix::fs::symlink(outside.join("secret.md"), root.join("leak.md"))
                .expect("file symlink");
            Tree {
                _dir: dir,
                root,
                outside,
            }
        }

        fn snapshot(dir: &Path) -> Vec<(String, String)> {
            let mut out = Vec::new();
            let mut pending = vec![dir.to_path_buf()];
            while let Some(d) = pending.pop() {
                for entry in fs::read_dir(&d).expect("read dir").flatten() {
                    let kind = entry.file_type().expect("type");
                    let name = entry.path().to_string_lossy().into_owned();
                    if kind.is_dir() {
                        pending.push(entry.path());
                    } else if kind.is_symlink() {
                        out.push((name, "symlink".into()));
                    } else {
                        out.push((name, fs::read_to_string(entry.path()).expect("read")));
                    }
                }
            }
            out.sort();
            out
        }

        fn tool_results(request: &RecordedRequest) -> Vec<(String, String, bool)> {
            let body = request.json();
            let messages = body["messages"].as_array().expect("messages");
            let last = messages.last().expect("a last message");
            last["content"]
                .as_array()
                .expect("blocks")
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| {
                    (
                        b["tool_use_id"].as_str().expect("id").to_owned(),
                        b["content"].as_str().expect("content").to_owned(),
                        b["is_error"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        }

        #[tokio::test]
        async fn escapes_and_unknown_tools_are_denied_and_writes_only_staged() {
            let tree = tree();
            let root_before = snapshot(&tree.root);
            let outside_before = snapshot(&tree.outside);
            let parent_before = snapshot(tree.root.parent().expect("parent"));
            let server = ScriptedServer::queue(vec![
                Reply::json(wire::anthropic_tools(
                    &[
                        ("t1", "read", json!({"path": "/etc/passwd"})),
                        (
                            "t2",
                            "write",
                            json!({"path": "../outside.md", "content": "escaped"}),
                        ),
                        ("t3", "read", json!({"path": "escape/secret.md"})),
                        (
                            "t4",
                            "write",
                            json!({"path": "escape/planted.md", "content": "x"}),
                        ),
                        ("t5", "read", json!({"path": "leak.md"})),
                        ("t6", "bash", json!({"command": "cat /etc/passwd"})),
                        ("t7", "grep", json!({"pattern": "secret"})),
                        (
                            "t8",
                            "write",
                            json!({"path": "feedback_tabs.md",
                            "content": "---\nname: tabs\ntype: feedback\n---\nAlways tabs.\n"}),
                        ),
                    ],
                    (100, 50, 0, 900),
                )),
                Reply::json(wire::anthropic_tools(
                    &[
                        (
                            "t9",
                            "edit",
                            json!({"path": "feedback_tabs.md",
                            "old_string": "Always tabs.", "new_string": "Always tabs, width 4."}),
                        ),
                        ("t10", "read", json!({"path": "feedback_tabs.md"})),
                        ("t11", "delete", json!({"path": "tabs.md"})),
                    ],
                    (20, 30, 1000, 0),
                )),
                Reply::json(wire::anthropic_text(
                    "Merged the tabs memories.",
                    (10, 5, 1000, 0),
                )),
            ]);
            let client = AnthropicClient::new(client_options(&server, "")).expect("client");
            let events = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&events);
            let outcome = run_agent(
                &client,
                &tree.root,
                &options(10),
                &CancellationToken::new(),
                move |e| {
                    sink.lock().expect("events").push(e);
                },
            )
            .await
            .expect("run");

            // The model was told each denial, as an error result, and nothing ran.
            let requests = server.requests();
            assert_eq!(requests.len(), 3);
            let first = tool_results(&requests[1]);
            let denied: Vec<&str> = first
                .iter()
                .filter(|(_, text, err)| *err && text.starts_with("Denied:"))
                .map(|(id, _, _)| id.as_str())
                .collect();
            assert_eq!(denied, ["t1", "t2", "t3", "t4", "t5", "t6"], "{first:#?}");
            assert!(first[5].1.contains("no tool `bash`"), "{}", first[5].1);
            let grep = &first[6];
            assert!(
                !grep.2 && grep.1 == "No matches.",
                "grep must not see outside: {grep:?}"
            );
            assert!(!first[7].2, "the legit write is staged: {:?}", first[7]);
            let second = tool_results(&requests[2]);
            assert_eq!(
                second[1].1,
                "---\nname: tabs\ntype: feedback\n---\nAlways tabs, width 4.\n"
            );
            assert!(second.iter().all(|(_, _, err)| !err), "{second:#?}");

            // Every call was reported, with the decision.
            let events = events.lock().expect("events");
            let calls: Vec<(&str, ToolDecision)> = events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::ToolCall(call) => Some((call.id.as_str(), call.decision)),
                    _ => None,
                })
                .collect();
            assert_eq!(calls.len(), 11);
            assert_eq!(
                calls
                    .iter()
                    .filter(|(_, d)| *d == ToolDecision::Denied)
                    .count(),
                6
            );
            assert!(matches!(
                events.last(),
                Some(AgentEvent::Finished {
                    turns: 3,
                    reason: FinishReason::Done,
                    ..
                })
            ));

            // Nothing on disk moved, inside or out.
            assert_eq!(snapshot(&tree.root), root_before);
            assert_eq!(snapshot(&tree.outside), outside_before);
            assert_eq!(snapshot(tree.root.parent().expect("parent")), parent_before);
            assert!(!Path::new("/etc/passwd.md").exists());

            // The legit work is in the change set, ready for review.
            let files: Vec<(&str, crate::ChangeKind)> = outcome
                .changes
                .changes
                .iter()
                .map(|c| (c.file.as_str(), c.kind))
                .collect();
            assert_eq!(
                files,
                [
                    ("feedback_tabs.md", crate::ChangeKind::Add),
                    ("tabs.md", crate::ChangeKind::Delete)
                ]
            );
            assert!(outcome
                .changes
                .changes
                .iter()
                .all(|c| c.reason == "extract"));
            assert_eq!(outcome.denied, 6);
            assert_eq!(outcome.tool_calls, 11);
            assert_eq!(outcome.final_text, "Merged the tabs memories.");
            assert_eq!(
                outcome.usage,
                Usage {
                    input_tokens: 130,
                    output_tokens: 85,
                    cache_read_tokens: 2000,
                    cache_creation_tokens: 900,
                    calls: 3
                },
                "token accounting is summed over the job"
            );
            // The tools were offered natively and the system prompt names the root.
            let body = requests[0].json();
            let tools: Vec<&str> = body["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|t| t["name"].as_str().expect("name"))
                .collect();
            assert_eq!(tools, TOOL_NAMES);
            assert!(body["system"][0]["text"]
                .as_str()
                .expect("system")
                .contains(&tree.root.display().to_string()));
        }

        #[tokio::test]
        async fn the_turn_budget_ends_a_model_that_never_stops() {
            let tree = tree();
            let server = ScriptedServer::queue(vec![Reply::json(wire::anthropic_tools(
                &[("t", "list", json!({}))],
                (1, 1, 0, 0),
            ))]);
            let client = AnthropicClient::new(client_options(&server, "")).expect("client");
            let outcome = run_agent(
                &client,
                &tree.root,
                &options(3),
                &CancellationToken::new(),
                |_| {},
            )
            .await
            .expect("run");
            assert_eq!(outcome.finish, FinishReason::MaxTurns);
            assert_eq!(outcome.turns, 3);
            assert_eq!(server.requests().len(), 3);
            assert!(outcome.changes.is_empty());
        }

        #[tokio::test]
        async fn the_token_budget_stops_the_run_before_the_next_model_call() {
            let tree = tree();
            let server = ScriptedServer::queue(vec![Reply::json(wire::anthropic_tools(
                &[("t", "list", json!({}))],
                (600, 500, 0, 0),
            ))]);
            let client = AnthropicClient::new(client_options(&server, "")).expect("client");
            let mut opts = options(10);
            opts.token_budget = Some(2_000);
            let outcome = run_agent(
                &client,
                &tree.root,
                &opts,
                &CancellationToken::new(),
                |_| {},
            )
            .await
            .expect("run");
            assert_eq!(outcome.finish, FinishReason::TokenBudget);
            assert_eq!(
                outcome.turns, 2,
                "1,100 tokens a turn: the third call would pass 2,000"
            );
            assert_eq!(server.requests().len(), 2);
        }

        #[tokio::test]
        async fn offered_transcripts_are_read_and_grepped_and_nothing_else_is() {
            let tree = tree();
            let transcript = tree
                .outside
                .join("11111111-2222-3333-4444-555555555555.jsonl");
            fs::write(
                &transcript,
                concat!(
                    r#"{"type":"user","message":{"role":"user","content":"we deploy with Fly.io"}}"#,
                    "\n",
                    r#"{"type":"summary","summary":"x"}"#,
                    "\nnot json\n",
                    r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Noted: Fly.io"},{"type":"tool_use","id":"a","name":"Bash","input":{}}]}}"#,
                    "\n"
                ),
            )
            .expect("transcript");
            let session = "11111111-2222-3333-4444-555555555555";
            let server = ScriptedServer::queue(vec![
                Reply::json(wire::anthropic_tools(
                    &[
                        ("r", "transcript_read", json!({"session": session})),
                        ("g", "transcript_grep", json!({"pattern": "fly\\.io"})),
                        ("x", "transcript_read", json!({"session": "other"})),
                        (
                            "w",
                            "write",
                            json!({"path": transcript.to_string_lossy(), "content": "x"}),
                        ),
                    ],
                    (1, 1, 0, 0),
                )),
                Reply::json(wire::anthropic_text("done", (1, 1, 0, 0))),
            ]);
            let client = AnthropicClient::new(client_options(&server, "")).expect("client");
            let mut opts = options(4);
            opts.transcripts = vec![TranscriptSource {
                session: session.into(),
                path: transcript.clone(),
            }];
            let outcome = run_agent(
                &client,
                &tree.root,
                &opts,
                &CancellationToken::new(),
                |_| {},
            )
            .await
            .expect("run");
            let first: Value = serde_json::from_str(&server.requests()[0].body).expect("json");
            let offered: Vec<String> = first["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect();
            assert!(
                offered.contains(&"transcript_grep".to_owned()),
                "{offered:?}"
            );
            let results = tool_results(&server.requests()[1]);
            assert_eq!(
                results[0].1,
                "1: user: we deploy with Fly.io\n2: assistant: Noted: Fly.io [tool Bash]"
            );
            assert!(!results[0].2);
            assert!(
                results[1].1.contains(&format!("{session}:1:"))
                    && results[1].1.contains(&format!("{session}:2:")),
                "{}",
                results[1].1
            );
            assert!(
                results[2].2 && results[2].1.contains("not a session offered"),
                "{:?}",
                results[2]
            );
            assert!(
                results[3].2,
                "writing a transcript is denied: {:?}",
                results[3]
            );
            assert!(outcome.changes.is_empty());
            assert!(
                fs::read_to_string(&transcript)
                    .expect("read")
                    .contains("Fly.io"),
                "untouched"
            );
        }

        #[tokio::test]
        async fn a_cancelled_run_returns_cancelled_and_stages_nothing() {
            let tree = tree();
            let server = ScriptedServer::queue(vec![Reply::Hang(Duration::from_secs(20))]);
            let client = AnthropicClient::new(client_options(&server, "")).expect("client");
            let cancel = CancellationToken::new();
            let trigger = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                trigger.cancel();
            });
            let err = run_agent(&client, &tree.root, &options(5), &cancel, |_| {})
                .await
                .expect_err("cancelled");
            assert_eq!(err.kind(), crate::ErrorKind::Cancelled);
        }

        #[tokio::test]
        async fn the_loop_speaks_openai_tool_calls_too() {
            let tree = tree();
            let server = ScriptedServer::queue(vec![
                Reply::json(wire::openai_tools(
                    &[
                        ("c1", "read", json!({"path": "../../etc/passwd"})),
                        (
                            "c2",
                            "write",
                            json!({"path": "user_role.md", "content": "role\n"}),
                        ),
                    ],
                    10,
                    5,
                )),
                Reply::json(wire::openai_text("ok", 20, 2, 0)),
            ]);
            let client = OpenAiClient::new(client_options(&server, "/v1")).expect("client");
            let outcome = run_agent(
                &client,
                &tree.root,
                &options(4),
                &CancellationToken::new(),
                |_| {},
            )
            .await
            .expect("run");
            let messages = server.requests()[1].json()["messages"].clone();
            let tool_messages: Vec<&serde_json::Value> = messages
                .as_array()
                .expect("messages")
                .iter()
                .filter(|m| m["role"] == "tool")
                .collect();
            assert_eq!(tool_messages.len(), 2);
            assert!(tool_messages[0]["content"]
                .as_str()
                .expect("text")
                .starts_with("Error: Denied:"));
            assert_eq!(outcome.changes.len(), 1);
            assert!(!tree.root.join("user_role.md").exists());
            assert_eq!(outcome.usage.calls, 2);
        }
    }
}
