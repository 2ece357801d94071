//! Engram's MCP server in Claude Code's configuration, written as `claude mcp add` writes it
//! (checked against Claude Code 2.1.330): `"mcpServers": {"engram": {"type": "stdio",
//! "command": "<absolute path of engram>", "args": ["mcp"], "env": {}}}`.
//!
//! - **User scope**: Claude Code's global config file ([`Engine::claude_global_config_path`]:
//!   `~/.claude.json`, or `.claude.json` in a chosen config dir), which Claude Code rewrites at
//!   every start: the entry is spliced in ([`crate::json_edit`]) keeping every other byte, and
//!   written merged with what the disk holds at the moment of writing
//!   ([`JsonFile::write_merged`]), so a newer version written meanwhile is never clobbered.
//! - **Project scope**: `.mcp.json` in the project root, shared with the team through git.
//! - Uninstall removes Engram's entry only (an emptied `mcpServers` stays, as `claude mcp remove`
//!   leaves it). An `engram` entry that runs something else (another program called engram) is
//!   never replaced or removed: the error names it.
//! - Each change backs the file up first (`<engram home>/backups/claude-json/` for the user
//!   scope, `<engram home>/backups/mcp-json/<project>/` for a project) and reports the diff.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::diff::unified_diff;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::json_edit::{self, Node, Style};
use crate::json_file::JsonFile;

use super::SERVER_NAME;

/// The key the servers live under, in both files.
const SERVERS: &str = "mcpServers";

/// Where the server is configured.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpScope {
    /// Every project, through Claude Code's global config file.
    User,
    /// One project, through its `.mcp.json`.
    Project,
}

impl std::str::FromStr for McpScope {
    type Err = Error;

    fn from_str(s: &str) -> Result<McpScope> {
        match s {
            "user" => Ok(McpScope::User),
            "project" => Ok(McpScope::Project),
            _ => Err(Error::InvalidInput(format!(
                "unknown scope `{s}` (expected user or project)"
            ))),
        }
    }
}

/// Where Engram's MCP entry stands in one scope's file.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpStatus {
    pub scope: McpScope,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub file: PathBuf,
    /// An `engram` entry is there.
    pub installed: bool,
    /// It runs this Engram exactly as `install` writes it.
    pub up_to_date: bool,
    /// The entry's command, when there is one.
    pub command: Option<String>,
    /// The command `install` writes.
    pub expected_command: String,
    /// The `engram` entry runs another program: install and uninstall leave it alone.
    pub foreign: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum McpAction {
    Installed,
    Updated,
    Removed,
    Unchanged,
}

/// What an install or uninstall did (or, previewed, would do).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpChange {
    pub action: McpAction,
    pub scope: McpScope,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub file: PathBuf,
    /// The command of the entry installed or removed.
    pub command: String,
    /// The file's change as a unified diff (empty when unchanged).
    pub diff: String,
    /// The copy of the file as it was (none when nothing changed or there was no file).
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub backup: Option<PathBuf>,
}

/// The entry `install` writes for `program`.
pub fn entry(program: &Path) -> Value {
    json!({
        "type": "stdio",
        "command": program.to_string_lossy(),
        "args": ["mcp"],
        "env": {},
    })
}

/// Whether `entry` is Engram's server, wherever its binary is: a program named `engram` run
/// with the one argument `mcp`.
fn is_engram_entry(entry: &Value) -> bool {
    let name = entry
        .get("command")
        .and_then(Value::as_str)
        .and_then(|c| Path::new(c).file_name())
        .map(|n| n.to_string_lossy().to_ascii_lowercase());
    matches!(name.as_deref(), Some("engram" | "engram.exe"))
        && entry.get("args") == Some(&json!(["mcp"]))
}

fn command_of(entry: &Value) -> String {
    let mut words = vec![entry
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()];
    if let Some(args) = entry.get("args").and_then(Value::as_array) {
        words.extend(
            args.iter()
                .map(|a| a.as_str().unwrap_or_default().to_owned()),
        );
    }
    words.join(" ")
}

/// The `engram` member of `mcpServers` in `root`: its value node and its JSON value.
fn engram_member<'a>(
    file: &JsonFile,
    root: &'a Node,
    text: &str,
) -> Result<Option<(&'a Node, Value)>> {
    let Some(servers) = root.member(SERVERS) else {
        return Ok(None);
    };
    if servers.value.members().is_none() {
        return Err(file.type_error(SERVERS));
    }
    let Some(member) = servers.value.member(SERVER_NAME) else {
        return Ok(None);
    };
    let value: Value = serde_json::from_str(&text[member.value.start..member.value.end])
        .map_err(|e| Error::parse(&file.path, None, format!("{SERVERS}.{SERVER_NAME}: {e}")))?;
    Ok(Some((&member.value, value)))
}

fn foreign_error(file: &JsonFile, found: &Value) -> Error {
    Error::InvalidInput(format!(
        "{}: the MCP server \"{SERVER_NAME}\" there runs `{}`, not Engram; left as it is \
         (remove or rename it first)",
        file.path.display(),
        command_of(found)
    ))
}

/// `text` (`None`: no file) with Engram's entry for `program` added or updated; `None` when it
/// is already there as it should be.
fn installed_text(file: &JsonFile, text: Option<&str>, program: &Path) -> Result<Option<String>> {
    let text = match text {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        // What `claude mcp add` starts a new file from.
        _ => "{}".to_owned(),
    };
    let root = file.parse(&text, &[SERVERS])?;
    let style = Style::detect(&text, &root);
    let wanted = entry(program);
    let updated = match engram_member(file, &root, &text)? {
        Some((_, found)) if found == wanted => return Ok(None),
        Some((_, found)) if !is_engram_entry(&found) => return Err(foreign_error(file, &found)),
        Some((node, _)) => {
            let one_line = !text[node.start..node.end].contains('\n');
            let base = indentation_at(&text, node.start);
            json_edit::replace_node(&text, node, &style.render(&wanted, base, one_line))
        }
        None => match root.member(SERVERS) {
            Some(servers) => {
                json_edit::append_child(&text, &servers.value, &style, |base, compact| {
                    json_edit::render_member(&style, SERVER_NAME, &wanted, base, compact)
                })
            }
            None => {
                let servers = json!({ SERVER_NAME: wanted });
                json_edit::append_child(&text, &root, &style, |base, compact| {
                    json_edit::render_member(&style, SERVERS, &servers, base, compact)
                })
            }
        },
    };
    check_only_engram_changed(file, &text, &updated)?;
    Ok(Some(updated))
}

/// `text` without Engram's entry; `None` when there is none.
fn uninstalled_text(file: &JsonFile, text: Option<&str>) -> Result<Option<String>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let root = file.parse(text, &[SERVERS])?;
    let Some((_, found)) = engram_member(file, &root, text)? else {
        return Ok(None);
    };
    if !is_engram_entry(&found) {
        return Err(foreign_error(file, &found));
    }
    let servers = &root
        .member(SERVERS)
        .ok_or_else(|| file.type_error(SERVERS))?
        .value;
    let index = servers
        .members()
        .and_then(|m| m.iter().position(|m| m.key == SERVER_NAME))
        .ok_or_else(|| file.type_error(SERVERS))?;
    let updated = json_edit::remove_child(text, servers, index);
    check_only_engram_changed(file, text, &updated)?;
    Ok(Some(updated))
}

/// A safety net under the splicing: with Engram's entry taken out of both, the file must read
/// the same before and after.
fn check_only_engram_changed(file: &JsonFile, before: &str, after: &str) -> Result<()> {
    let strip = |text: &str| -> Option<Value> {
        let mut value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
        let root = value.as_object_mut()?;
        if let Some(servers) = root.get_mut(SERVERS).and_then(Value::as_object_mut) {
            servers.remove(SERVER_NAME);
            if servers.is_empty() {
                root.remove(SERVERS);
            }
        }
        Some(value)
    };
    if strip(before).is_none() || strip(before) != strip(after) {
        return Err(Error::InvalidInput(format!(
            "{}: the edit would change more than Engram's entry; not written",
            file.path.display()
        )));
    }
    Ok(())
}

/// The whitespace at the start of the line holding byte `pos`.
fn indentation_at(text: &str, pos: usize) -> &str {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

impl Engine {
    /// The file a scope's entry lives in, and where its backups go.
    fn mcp_config_file(&self, scope: McpScope, project: &Path) -> JsonFile {
        let backups = self.engram_home().join("backups");
        match scope {
            McpScope::User => JsonFile::new(
                self.claude_global_config_path(),
                backups.join("claude-json"),
            ),
            McpScope::Project => {
                let key = crate::paths::sanitize_path(&project.to_string_lossy());
                JsonFile::new(
                    project.join(".mcp.json"),
                    backups.join("mcp-json").join(key),
                )
            }
        }
    }

    /// Where Engram's MCP entry stands in `scope`'s file (`project` for the project scope).
    pub fn mcp_status(&self, program: &Path, scope: McpScope, project: &Path) -> Result<McpStatus> {
        let file = self.mcp_config_file(scope, project);
        let expected = entry(program);
        let found = match file.read()? {
            Some(text) if !text.trim().is_empty() => {
                let root = file.parse(&text, &[SERVERS])?;
                engram_member(&file, &root, &text)?.map(|(_, value)| value)
            }
            _ => None,
        };
        Ok(McpStatus {
            scope,
            installed: found.is_some(),
            up_to_date: found.as_ref() == Some(&expected),
            command: found.as_ref().map(command_of),
            expected_command: command_of(&expected),
            foreign: found.as_ref().is_some_and(|f| !is_engram_entry(f)),
            file: file.path,
        })
    }

    /// What [`Engine::install_mcp`] would write, as a diff, writing nothing.
    pub fn preview_mcp_install(
        &self,
        program: &Path,
        scope: McpScope,
        project: &Path,
    ) -> Result<McpChange> {
        let file = self.mcp_config_file(scope, project);
        let before = file.read()?;
        let after = installed_text(&file, before.as_deref(), program)?;
        Ok(change(
            &file,
            scope,
            program,
            before.as_deref(),
            after.as_deref(),
            None,
        ))
    }

    /// Adds (or updates) Engram's server, run by `program`, in `scope`'s file. Idempotent.
    pub fn install_mcp(
        &self,
        program: &Path,
        scope: McpScope,
        project: &Path,
    ) -> Result<McpChange> {
        let file = self.mcp_config_file(scope, project);
        let written = file.write_merged(
            |text| installed_text(&file, text, program),
            self.clock().now(),
        )?;
        Ok(match written {
            Some(w) => change(
                &file,
                scope,
                program,
                w.before.as_deref(),
                Some(&w.after),
                w.backup,
            ),
            None => change(&file, scope, program, None, None, None),
        })
    }

    /// Removes Engram's server from `scope`'s file, leaving everything else as it is.
    pub fn uninstall_mcp(&self, scope: McpScope, project: &Path) -> Result<McpChange> {
        let file = self.mcp_config_file(scope, project);
        let mut removed = String::new();
        let written = file.write_merged(
            |text| {
                if let Some(text) = text {
                    if let Ok(root) = file.parse(text, &[SERVERS]) {
                        if let Ok(Some((_, found))) = engram_member(&file, &root, text) {
                            removed = command_of(&found);
                        }
                    }
                }
                uninstalled_text(&file, text)
            },
            self.clock().now(),
        )?;
        let (action, diff, backup) = match written {
            Some(w) => (
                McpAction::Removed,
                diff_of(&file, w.before.as_deref(), &w.after),
                w.backup,
            ),
            None => (McpAction::Unchanged, String::new(), None),
        };
        Ok(McpChange {
            action,
            scope,
            file: file.path,
            command: removed,
            diff,
            backup,
        })
    }
}

/// The change of `file` from `before` (`None`: no file) to `after`, as a unified diff.
fn diff_of(file: &JsonFile, before: Option<&str>, after: &str) -> String {
    let label = file.path.display().to_string();
    unified_diff(&label, &label, before.unwrap_or(""), after)
}

fn change(
    file: &JsonFile,
    scope: McpScope,
    program: &Path,
    before: Option<&str>,
    after: Option<&str>,
    backup: Option<PathBuf>,
) -> McpChange {
    let (action, diff) = match after {
        None => (McpAction::Unchanged, String::new()),
        Some(after) => {
            let action = match before {
                Some(before)
                    if file.parse(before, &[SERVERS]).is_ok_and(|root| {
                        engram_member(file, &root, before).is_ok_and(|m| m.is_some())
                    }) =>
                {
                    McpAction::Updated
                }
                _ => McpAction::Installed,
            };
            (action, diff_of(file, before, after))
        }
    };
    McpChange {
        action,
        scope,
        file: file.path.clone(),
        command: command_of(&entry(program)),
        diff,
        backup,
    }
}
