//! Engram's memory as a Model Context Protocol server (`engram mcp`), so any agent — Claude Code,
//! Codex, Cursor, Claude Desktop — can search, recall, read and save memory mid-task, and search
//! and read past sessions.
//!
//! Contract:
//! - One project per server: the working directory it was started in (Claude Code starts
//!   servers in the project) or the one given. Its memory dir is resolved as Claude Code
//!   resolves it, at every call (settings may change while a session runs).
//! - JSON-RPC over stdio, protocol revision 2025-06-18 (older revisions a client asks for are
//!   spoken too; a newer one is answered with 2025-06-18), through the official SDK (`rmcp`).
//! - Six tools ([`tools`]), each with an input schema, an output schema, and an answer carrying
//!   both `structuredContent` (the schema's shape) and plain text for the model. Each goes
//!   through the engine call the CLI makes for the same thing, so the same rules hold:
//!   confinement of every path to its memory dir, secrets refused in `team/` and warned about
//!   elsewhere, history (actor `mcp`), and the project's review policy for what an agent
//!   rewrites.
//! - Every failure of a call — bad arguments, a path out of the memory dir, an unknown session,
//!   a refused secret, even a panic — is a tool error (`isError: true`, the reason as text),
//!   never a crash or a hang; only an unknown tool name is a protocol error, as the
//!   specification says. Answers are bounded: at most 64 KiB of text, long lists and long
//!   bodies paged (`page` / `nextPage`).
//! - [`install`]: the server's entry in Claude Code's `.claude.json` (user scope) or a project's
//!   `.mcp.json`, exactly as `claude mcp add` writes it.

pub mod install;
pub mod tools;

use std::borrow::Cow;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::engine::Engine;
use crate::error::{Error, Result};
// rmcp cancels a request's token on `notifications/cancelled`; the engine takes the same type.
use crate::job::CancellationToken;
use tools::Project;

/// The protocol revision Engram speaks (structured tool output arrived with it).
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_06_18;
/// The server's name, as clients show it and prefix its tools (`mcp__engram__memory_search`).
pub const SERVER_NAME: &str = "engram";

/// What the server tells a client about itself at the handshake.
const INSTRUCTIONS: &str = "Engram serves this project's Claude Code memory (MEMORY.md and its \
topic files) and past session transcripts. Use memory_search or memory_recall before deciding \
something the user may have settled before; memory_read to read one memory in full; \
memory_remember to save what is worth keeping across sessions (the user's preferences and \
corrections, project facts not in the code); session_search and session_read to look through \
earlier sessions. Memories are point-in-time notes: verify file paths and code facts against \
the current state before acting on them.";

/// The MCP server of one project.
#[derive(Debug, Clone)]
pub struct McpServer {
    project: Project,
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    pub fn new(engine: Engine, project_dir: PathBuf) -> McpServer {
        McpServer {
            project: Project {
                engine,
                dir: project_dir,
            },
            tools: Arc::new(tool_list()),
        }
    }

    /// The tools announced in `tools/list`.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    async fn call(&self, name: &str, arguments: JsonObject, cancel: CancellationToken) -> Answer {
        let project = self.project.clone();
        match name {
            "memory_search" => blocking(project, arguments, tools::memory_search).await,
            "memory_read" => blocking(project, arguments, tools::memory_read).await,
            "memory_remember" => blocking(project, arguments, tools::memory_remember).await,
            "session_search" => blocking(project, arguments, tools::session_search).await,
            "session_read" => blocking(project, arguments, tools::session_read).await,
            "memory_recall" => {
                let input = match parse_arguments::<tools::RecallInput>(arguments) {
                    Ok(input) => input,
                    Err(e) => return Answer::Failed(e),
                };
                // A task of its own, so a panic inside becomes an answer, not a lost request.
                let task = tokio::spawn(async move {
                    tools::memory_recall(&project, input, &cancel)
                        .await
                        .map(|(output, text)| (serde_json::to_value(output), text))
                });
                settle(task.await)
            }
            _ => Answer::Unknown,
        }
    }
}

/// What a tool call came to.
enum Answer {
    Done(serde_json::Value, String),
    Failed(Error),
    Unknown,
}

/// Runs a tool whose engine calls block (file reads, the session index) on the blocking pool.
async fn blocking<I, O>(
    project: Project,
    arguments: JsonObject,
    tool: fn(&Project, I) -> Result<(O, String)>,
) -> Answer
where
    I: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
{
    let input = match parse_arguments::<I>(arguments) {
        Ok(input) => input,
        Err(e) => return Answer::Failed(e),
    };
    let task = tokio::task::spawn_blocking(move || {
        tool(&project, input).map(|(output, text)| (serde_json::to_value(output), text))
    });
    settle(task.await)
}

type Settled = Result<(serde_json::Result<serde_json::Value>, String)>;

fn settle(joined: std::result::Result<Settled, tokio::task::JoinError>) -> Answer {
    match joined {
        Ok(Ok((Ok(value), text))) => Answer::Done(value, text),
        Ok(Ok((Err(e), _))) => Answer::Failed(Error::InvalidInput(format!(
            "the answer could not be encoded: {e}"
        ))),
        Ok(Err(e)) => Answer::Failed(e),
        Err(e) => Answer::Failed(Error::InvalidInput(format!("the tool failed: {e}"))),
    }
}

/// The call's arguments as the tool's input; a mismatch names the argument and what was wrong.
fn parse_arguments<I: DeserializeOwned>(arguments: JsonObject) -> Result<I> {
    serde_json::from_value(serde_json::Value::Object(arguments))
        .map_err(|e| Error::InvalidInput(format!("invalid arguments: {e}")))
}

fn result_of(answer: Answer) -> CallToolResult {
    match answer {
        Answer::Done(value, text) => {
            let mut result =
                CallToolResult::success(vec![ContentBlock::text(tools::bounded_text(text))]);
            result.structured_content = Some(value);
            result
        }
        Answer::Failed(error) => CallToolResult::error(vec![ContentBlock::text(
            tools::bounded_text(error.to_string()),
        )]),
        // Handled before: an unknown tool is a protocol error.
        Answer::Unknown => CallToolResult::error(vec![ContentBlock::text("unknown tool")]),
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = PROTOCOL_VERSION;
        info.server_info = Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.to_owned());
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&PROTOCOL_VERSION))
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = std::result::Result<ListToolsResult, McpError>> + Send + '_ {
        std::future::ready(Ok(ListToolsResult::with_all_items(self.tools.to_vec())))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        match self.call(&name, arguments, context.ct.clone()).await {
            Answer::Unknown => Err(McpError::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            )),
            answer => Ok(result_of(answer).into()),
        }
    }
}

/// The six tools, with their schemas derived from the input and output types.
fn tool_list() -> Vec<Tool> {
    fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
        name: &'static str,
        title: &str,
        description: &'static str,
        read_only: bool,
    ) -> Tool {
        let annotations = ToolAnnotations::with_title(title)
            .read_only(read_only)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        Tool::new(name, description, Arc::new(JsonObject::new()))
            .with_input_schema::<I>()
            .with_output_schema::<O>()
            .with_title(title)
            .with_annotations(annotations)
    }
    vec![
        tool::<tools::SearchInput, tools::SearchOutput>(
            "memory_search",
            "Search memory",
            "Search this project's memory (or every project's, with allProjects) for memories \
             holding all the words of the query; best first, with file, name, description, type, \
             project and a snippet. Read one in full with memory_read.",
            true,
        ),
        tool::<tools::RecallInput, tools::RecallOutput>(
            "memory_recall",
            "Recall memories for a prompt",
            "What Engram's prompt hook would inject for this prompt: the relevant memories with \
             their contents and staleness caveats (at most 5). Use it to ask memory a question \
             mid-task (\"what did we decide about retries?\").",
            true,
        ),
        tool::<tools::ReadInput, tools::ReadOutput>(
            "memory_read",
            "Read a memory",
            "One memory file of this project's memory dir (or of the store a search hit names), \
             with its frontmatter and staleness caveat; a long body comes in pages.",
            true,
        ),
        tool::<tools::RememberInput, tools::RememberOutput>(
            "memory_remember",
            "Save a memory",
            "Create or update a memory (a topic file and its MEMORY.md line). A memory with the \
             same name is updated, not duplicated. Save what is worth keeping across sessions: \
             the user's role and preferences, corrections, project facts not in the code; never \
             credentials (refused in team/ memory). Rewriting a user or feedback memory waits \
             for the user's review.",
            false,
        ),
        tool::<tools::SessionSearchInput, tools::SessionSearchOutput>(
            "session_search",
            "Search past sessions",
            "Search this project's past Claude Code sessions (or every project's) — prompts, \
             replies, tool names and file paths — best first. Read one with session_read.",
            true,
        ),
        tool::<tools::SessionReadInput, tools::SessionReadOutput>(
            "session_read",
            "Read a past session",
            "One past session's conversation as Claude Code resumes it, in pages of messages \
             (long messages and tool results cut).",
            true,
        ),
    ]
}

impl Engine {
    /// Serves the project at `project_dir` over `reader` / `writer` (stdin and stdout for
    /// `engram mcp`) until the client closes the connection.
    pub async fn serve_mcp<R, W>(&self, project_dir: PathBuf, reader: R, writer: W) -> Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let server = McpServer::new(self.clone(), project_dir);
        let running = server
            .serve((reader, writer))
            .await
            .map_err(|e| Error::InvalidInput(format!("MCP handshake failed: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::InvalidInput(format!("MCP server stopped: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_announces_object_schemas_for_input_and_output() {
        let server = McpServer::new(
            Engine::builder(crate::Environment::empty()).build(),
            PathBuf::from("/p"),
        );
        let names: Vec<&str> = server.tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "memory_search",
                "memory_recall",
                "memory_read",
                "memory_remember",
                "session_search",
                "session_read"
            ]
        );
        for tool in server.tools() {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("output schema");
            assert_eq!(output["type"], "object", "{}", tool.name);
        }
        let search = server.get_tool("memory_search").expect("search");
        assert_eq!(
            search.input_schema["required"],
            serde_json::json!(["query"])
        );
    }
}
