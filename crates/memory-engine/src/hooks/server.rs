//! The prompt hook's fast path: a long-lived Engram process (the app, the tray, or
//! `engram hook serve`) answers the hook over a Unix socket private to the user, from recall
//! corpora it keeps in memory and current through file watchers ([`crate::corpus`]). The hook
//! process then only reads stdin, connects, and prints the answer: no walk of the memory dir, no
//! model to load. With no server running, the hook takes the direct path; the answer is the same.
//!
//! - The socket is `<engram home>/run/hook.sock`, in a directory only the user can enter (0700)
//!   and itself 0600. A server finding a live socket leaves it to the process answering on it; a
//!   dead one (a crashed app) is replaced.
//! - One request per connection, one JSON line each way: [`HookRequest`] (the hook's stdin as
//!   received, the command-line overrides, and the Claude config dir the hook resolves against)
//!   and [`HookReply`]. A server whose Claude config dir differs answers `served: false`, and the
//!   hook takes the direct path: it never answers for another configuration.
//! - After answering, the server keeps the prompt's memory dir warm, so the first prompt of a
//!   project pays a load and the following ones only the ranking.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use crate::config::{LlmOverrides, ProviderKind};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The most a request line may hold: the hook's own stdin cap (4 MiB) and some JSON around it.
const MAX_REQUEST: u64 = 5 * 1024 * 1024;

/// What the hook asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRequest {
    /// The hook's stdin, as Claude Code sent it.
    pub stdin: String,
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    /// The Claude config dir the hook resolves the project against.
    pub claude_home: PathBuf,
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookReply {
    /// False when this server does not answer for the request's configuration.
    pub served: bool,
    /// The line the hook prints (`None`: print nothing).
    pub output: Option<String>,
    /// Why nothing is printed, when something failed (for `--verbose`).
    pub error: Option<String>,
    /// The answering process, for `--verbose`.
    pub pid: u32,
}

fn socket_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{}: {e}", path.display()))
}

impl Engine {
    /// Where the hook server listens.
    pub fn hook_socket_path(&self) -> PathBuf {
        self.engram_home().join("run").join("hook.sock")
    }

    /// Answers prompt hooks on [`Engine::hook_socket_path`] until `cancel` fires. Returns at once
    /// with `Ok(false)` when another live process already answers there.
    pub async fn serve_prompt_hook(&self, cancel: CancellationToken) -> Result<bool> {
        let path = self.hook_socket_path();
        let Some(listener) = bind(&path)? else {
            return Ok(false);
        };
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
                () = cancel.cancelled() => break,
            };
            let engine = self.clone();
            let cancel = cancel.child_token();
            tokio::spawn(async move {
                let _ = engine.answer(stream, cancel).await;
            });
        }
        let _ = std::fs::remove_file(&path);
        Ok(true)
    }

    async fn answer(&self, stream: UnixStream, cancel: CancellationToken) -> std::io::Result<()> {
        let (read, mut write) = stream.into_split();
        let mut line = String::new();
        AsyncBufReader::new(read.take(MAX_REQUEST))
            .read_line(&mut line)
            .await?;
        let reply = match serde_json::from_str::<HookRequest>(&line) {
            Err(e) => HookReply {
                served: true,
                output: None,
                error: Some(format!("a malformed request: {e}")),
                pid: std::process::id(),
            },
            Ok(request) if request.claude_home != self.claude_home() => HookReply {
                served: false,
                output: None,
                error: None,
                pid: std::process::id(),
            },
            Ok(request) => {
                let overrides = LlmOverrides {
                    provider: request.provider,
                    model: request.model,
                    ..LlmOverrides::default()
                };
                let outcome = self
                    .user_prompt_submit(&request.stdin, &overrides, &cancel)
                    .await;
                match outcome {
                    Ok(outcome) => {
                        if let Some(report) = &outcome.report {
                            let engine = self.clone();
                            let dir = report.memory_dir.clone();
                            // A dir that cannot be watched is answered cold, still correctly.
                            let _ = tokio::task::spawn_blocking(move || {
                                engine.warm_corpora().keep(&dir)
                            })
                            .await;
                        }
                        HookReply {
                            served: true,
                            output: outcome.output,
                            error: None,
                            pid: std::process::id(),
                        }
                    }
                    Err(e) => HookReply {
                        served: true,
                        output: None,
                        error: Some(e.to_string()),
                        pid: std::process::id(),
                    },
                }
            }
        };
        let mut text = serde_json::to_string(&reply).map_err(std::io::Error::other)?;
        text.push('\n');
        write.write_all(text.as_bytes()).await?;
        write.shutdown().await
    }
}

/// Binds the socket at `path` (its directory made private), or `None` when a live process
/// already answers there.
fn bind(path: &Path) -> Result<Option<UnixListener>> {
    let dir = path
        .parent()
        .ok_or_else(|| socket_error(path, "no parent directory"))?;
    crate::disk::create_dir_all(dir).map_err(|e| socket_error(dir, e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| socket_error(dir, e))?;
    if path.exists() {
        if StdUnixStream::connect(path).is_ok() {
            return Ok(None);
        }
        // Left by a process that died: nobody answers on it.
        std::fs::remove_file(path).map_err(|e| socket_error(path, e))?;
    }
    let listener = UnixListener::bind(path).map_err(|e| socket_error(path, e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| socket_error(path, e))?;
    Ok(Some(listener))
}

/// Asks the server at `socket`, waiting at most `timeout` in all. `Ok(None)`: no server there.
/// Blocking, and plain `std`: the hook must not pay for more than a connect.
pub fn ask_server(
    socket: &Path,
    request: &HookRequest,
    timeout: Duration,
) -> Result<Option<HookReply>> {
    let mut stream = match StdUnixStream::connect(socket) {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(socket_error(socket, e)),
    };
    let io = |e: std::io::Error| socket_error(socket, e);
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut text = serde_json::to_string(request).map_err(|e| socket_error(socket, e))?;
    text.push('\n');
    stream.write_all(text.as_bytes()).map_err(io)?;
    stream.shutdown(std::net::Shutdown::Write).map_err(io)?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).map_err(io)?;
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| socket_error(socket, format!("a malformed reply: {e}")))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use serde_json::json;

    use super::*;
    use crate::testing::fixtures::{write_file, TempMemoryDir};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_server_answers_as_the_direct_path_does_and_keeps_the_dir_warm() {
        let fx = TempMemoryDir::new("claude/projects/-work-app/memory");
        let claude = fx.temp.path().join("claude");
        let engine = Engine::builder(crate::environment::Environment::empty())
            .claude_home(&claude)
            .engram_home(fx.temp.path().join("engram"))
            .build();
        write_file(
            &fx.root.join("deploy_freeze.md"),
            "---\nname: deploy freeze\ndescription: No deploys on Fridays\ntype: project\n---\n\nThe release train stops on Fridays.\n",
        );
        write_file(
            &fx.root.join("MEMORY.md"),
            "- [deploy freeze](deploy_freeze.md) — No deploys on Fridays\n",
        );
        let stdin = json!({
            "session_id": "s1", "cwd": "/work/app", "hook_event_name": "UserPromptSubmit",
            "prompt": "can we deploy on friday?"
        })
        .to_string();
        let direct = engine
            .user_prompt_submit(&stdin, &LlmOverrides::default(), &CancellationToken::new())
            .await
            .expect("direct")
            .output
            .expect("recalled");

        let cancel = CancellationToken::new();
        let server = tokio::spawn({
            let engine = engine.clone();
            let cancel = cancel.clone();
            async move { engine.serve_prompt_hook(cancel).await }
        });
        let socket = engine.hook_socket_path();
        let request = HookRequest {
            stdin: stdin.replace("s1", "s2"),
            provider: None,
            model: None,
            claude_home: claude.clone(),
        };
        let reply = loop {
            let ask = {
                let (socket, request) = (socket.clone(), request.clone());
                tokio::task::spawn_blocking(move || {
                    ask_server(&socket, &request, Duration::from_secs(5))
                })
                .await
                .expect("join")
                .expect("ask")
            };
            if let Some(reply) = ask {
                break reply;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(reply.served);
        assert_eq!(reply.output.as_deref(), Some(direct.as_str()));
        assert_eq!(reply.pid, std::process::id());
        assert!(engine.warm_corpora().is_kept(&fx.root));
        let mode = std::fs::metadata(&socket)
            .expect("socket")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(socket.parent().expect("dir"))
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);

        // Another Claude config dir: not this server's to answer.
        let other = HookRequest {
            claude_home: fx.temp.path().join("elsewhere"),
            ..request.clone()
        };
        let reply = tokio::task::spawn_blocking({
            let socket = socket.clone();
            move || ask_server(&socket, &other, Duration::from_secs(5))
        })
        .await
        .expect("join")
        .expect("ask")
        .expect("a server");
        assert!(!reply.served && reply.output.is_none());

        // A second server leaves the live socket alone.
        let second = engine
            .serve_prompt_hook(CancellationToken::new())
            .await
            .expect("second");
        assert!(!second);

        cancel.cancel();
        assert!(server.await.expect("join").expect("serve"));
        assert!(!socket.exists(), "the socket goes with the server");
        let none = ask_server(&socket, &request, Duration::from_secs(1)).expect("ask");
        assert!(none.is_none(), "no server: the hook takes the direct path");
    }
}
