//! Engram inside Claude Code, through its hooks (`FORMATS.md` §11).
//!
//! **The prompt hook.** Claude Code runs `engram hook user-prompt-submit` before each prompt,
//! with JSON on stdin (`session_id`, `transcript_path`, `cwd`, `prompt`, `hook_event_name`, …).
//! [`Engine::user_prompt_submit`] resolves the project's memory dir from `cwd` as Claude Code
//! does, recalls memories for the prompt (skipping single-word prompts, files this session has
//! already been shown, and everything once the session's budget is spent), and returns the JSON
//! Claude Code accepts from a UserPromptSubmit hook:
//! `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"…"}}`, which
//! reaches the model as `UserPromptSubmit hook additional context: …`. What it surfaced is
//! recorded under `<engram home>/sessions/<id>/surfaced.json` only once the hook has it to print
//! ([`Engine::record_prompt_hook_shown`]): by the hook itself within its budget, by the hook
//! server once the hook said it took the reply, so a hook that gave up before the answer came,
//! or refused it, does not cost the session those memories. The CLI adds the time budget and
//! the rule that any failure prints nothing.
//!
//! **Installing it.** [`Engine::install_hooks`] adds one group to `hooks.UserPromptSubmit` in the
//! user's `settings.json` under the Claude config home; [`Engine::uninstall_hooks`] removes it;
//! [`Engine::hooks_status`] reports. Edits are splices ([`crate::json_edit`]): every byte that is
//! not Engram's entry stays as it was, installing twice is installing once, and uninstalling right
//! after installing gives back the original bytes. An Engram entry is recognised by its command
//! (a program named `engram` run with `hook user-prompt-submit`), so an entry written by an older
//! install at another path is updated rather than duplicated.
//!
//! Before every change the current file is copied to
//! `<engram home>/backups/claude-settings/settings.json.<UTC timestamp>`: in Engram's own data dir,
//! not next to `settings.json`, because `~/.claude` is Claude Code's (often kept in a dotfiles
//! repository or synced) and Engram never leaves its files in another program's directories.

pub mod server;
pub mod stop;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::config::LlmOverrides;
use crate::disk;
use crate::engine::Engine;
use crate::environment::Environment;
use crate::error::{Error, Result};
use crate::json_edit::{self, Node, Style};
use crate::json_file::JsonFile;
use crate::llm::keys;
use crate::platform::Os;
use crate::recall::{additional_context, RecallReport, RecallRequest};

/// The event Engram's recall hook runs on.
pub const PROMPT_EVENT: &str = "UserPromptSubmit";
/// More Engram entries than this in one file is not something an uninstall should chase.
const MAX_ENTRIES_REMOVED: usize = 64;
/// The arguments after the program in the installed command.
pub const PROMPT_HOOK_ARGS: &str = "hook user-prompt-submit";
/// The event Engram's extraction and session-memory hook runs on.
pub const STOP_EVENT: &str = "Stop";
pub const STOP_HOOK_ARGS: &str = "hook stop";

/// One of the hooks Engram installs: the event, and the arguments after the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngramHook {
    pub event: &'static str,
    pub args: &'static str,
}

/// Every hook `install` adds: recall before each prompt, extraction after each turn.
pub const ENGRAM_HOOKS: [EngramHook; 2] = [
    EngramHook {
        event: PROMPT_EVENT,
        args: PROMPT_HOOK_ARGS,
    },
    EngramHook {
        event: STOP_EVENT,
        args: STOP_HOOK_ARGS,
    },
];

impl EngramHook {
    /// The command line Claude Code should run for this hook with `program` (the `engram`
    /// binary) on this OS: see [`EngramHook::command_on`].
    pub fn command(&self, program: &Path) -> String {
        self.command_on(Os::CURRENT, program)
    }

    /// The command line for `os`: on Unix the program quoted for a POSIX shell when it needs to
    /// be; on Windows always in double quotes with forward slashes
    /// (`"C:/Users/me/.cargo/bin/engram.exe" hook stop`), which Git Bash and `cmd` both run
    /// as written, where a backslash would be eaten by the shell.
    pub fn command_on(&self, os: Os, program: &Path) -> String {
        let program = program.to_string_lossy();
        let quoted = match os {
            Os::Unix | Os::Mac => shell_quote(&program),
            Os::Windows => format!("\"{}\"", program.replace('\\', "/")),
        };
        format!("{quoted} {}", self.args)
    }

    /// Whether `command` is this Engram hook (any install path).
    pub fn matches(&self, command: &str) -> bool {
        self.matches_on(Os::CURRENT, command)
    }

    /// [`EngramHook::matches`] reading `command` as `os` would: on Windows a backslash is a
    /// path separator, never an escape, so an entry written by hand or by an older install
    /// (`C:\Users\me\engram.exe hook stop`) is recognised and updated, not duplicated.
    pub fn matches_on(&self, os: Os, command: &str) -> bool {
        let (program, rest) = split_program_on(os, command);
        let name = match os {
            Os::Unix | Os::Mac => Path::new(&program)
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default(),
            Os::Windows => program
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase(),
        };
        let mut args = rest.split_whitespace();
        (name == "engram" || name == "engram.exe")
            && self.args.split(' ').all(|word| args.next() == Some(word))
            && args.next().is_none_or(|next| next.starts_with('-'))
    }
}

/// What Claude Code sends a UserPromptSubmit hook on stdin (fields Engram does not use are
/// ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UserPromptSubmitInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    pub cwd: PathBuf,
    pub prompt: String,
    #[serde(default)]
    pub hook_event_name: Option<String>,
}

/// Reads the hook's stdin; anything but a UserPromptSubmit payload is an error.
pub fn parse_user_prompt_submit(stdin: &str) -> Result<UserPromptSubmitInput> {
    let input: UserPromptSubmitInput = serde_json::from_str(stdin).map_err(|e| {
        Error::parse(
            "<stdin>",
            Some(e.line()),
            format!("not a UserPromptSubmit hook payload: {e}"),
        )
    })?;
    match input.hook_event_name.as_deref() {
        None | Some(PROMPT_EVENT) => Ok(input),
        Some(other) => Err(Error::InvalidInput(format!(
            "hook payload is for `{other}`, not {PROMPT_EVENT}"
        ))),
    }
}

/// Whether Claude Code would treat `prompt` as a query for recall: not a single word.
pub fn is_recall_query(prompt: &str) -> bool {
    prompt.split_whitespace().nth(1).is_some()
}

/// The JSON a UserPromptSubmit hook prints to add `context` for the model.
pub fn prompt_hook_output(context: &str) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": PROMPT_EVENT,
            "additionalContext": context,
        }
    })
    .to_string()
}

/// What the prompt hook did: the recall behind it, and the line to print (`None`: print
/// nothing). Not yet recorded as shown to the session: [`Engine::record_prompt_hook_shown`],
/// once the line is on its way to Claude Code.
#[derive(Debug, Clone)]
pub struct PromptHookOutcome {
    pub report: Option<RecallReport>,
    pub output: Option<String>,
    /// The session the prompt belongs to, when its payload said.
    pub session_id: Option<String>,
}

impl Engine {
    /// Handles one UserPromptSubmit hook call (`stdin` is its payload). Uses the configured
    /// provider unless `overrides` say otherwise. Errors are for the caller to swallow: a hook
    /// must never get in the user's way.
    pub async fn user_prompt_submit(
        &self,
        stdin: &str,
        overrides: &LlmOverrides,
        cancel: &CancellationToken,
    ) -> Result<PromptHookOutcome> {
        let config = {
            let engine = self.clone();
            tokio::task::spawn_blocking(move || engine.load_config())
                .await
                .map_err(|e| Error::InvalidInput(format!("hook worker failed: {e}")))??
        };
        self.user_prompt_submit_with(stdin, overrides, &config, cancel)
            .await
    }

    /// [`Engine::user_prompt_submit`] with `config.toml` already read (the hook reads it once).
    pub async fn user_prompt_submit_with(
        &self,
        stdin: &str,
        overrides: &LlmOverrides,
        config: &crate::config::Config,
        cancel: &CancellationToken,
    ) -> Result<PromptHookOutcome> {
        let input = parse_user_prompt_submit(stdin)?;
        let nothing = PromptHookOutcome {
            report: None,
            output: None,
            session_id: input.session_id.clone(),
        };
        let recall = self
            .prompt_recall(
                &input.cwd,
                &input.prompt,
                0,
                input.session_id.clone(),
                overrides,
                config,
                cancel,
            )
            .await?;
        let PromptRecall::Recalled { report, .. } = recall else {
            return Ok(nothing);
        };
        let report = *report;
        let output = (!report.results.is_empty())
            .then(|| prompt_hook_output(&additional_context(&report.results)));
        Ok(PromptHookOutcome {
            report: Some(report),
            output,
            session_id: input.session_id,
        })
    }

    /// Records what `outcome` prints as shown to its session, so the session's next prompts
    /// are not given it again and its budget counts it. Called once the output is the hook's
    /// to print, never before: a hook that gave up meanwhile printed nothing.
    pub fn record_prompt_hook_shown(&self, outcome: &PromptHookOutcome) -> Result<()> {
        if let (Some(session), Some(report), Some(_)) =
            (&outcome.session_id, &outcome.report, &outcome.output)
        {
            self.record_surfaced(session, &report.results)?;
        }
        Ok(())
    }
}

/// What the prompt hook recalls for one prompt, before anything is printed or recorded.
#[derive(Debug, Clone)]
pub enum PromptRecall {
    /// The hook recalls nothing for this prompt, without looking at a memory (a single word,
    /// auto-memory turned off); why, in words.
    Skipped(&'static str),
    /// The recall the hook would inject (its `results` may be empty: nothing relevant).
    Recalled {
        memory_dir: PathBuf,
        // Boxed: a report is large and `Skipped` is a word.
        report: Box<RecallReport>,
    },
}

impl Engine {
    /// What the prompt hook recalls for `prompt` in the project at `cwd`: the same gate (no
    /// single-word prompts, nothing when auto-memory is off), the project's memory dir resolved
    /// as Claude Code resolves it, the configured selector (unless `overrides` say otherwise)
    /// and at most `limit` memories (0: recall's own cap). With `session`, files that session
    /// was already shown are left out. Records nothing.
    #[allow(clippy::too_many_arguments)]
    pub async fn prompt_recall(
        &self,
        cwd: &Path,
        prompt: &str,
        limit: usize,
        session: Option<String>,
        overrides: &LlmOverrides,
        config: &crate::config::Config,
        cancel: &CancellationToken,
    ) -> Result<PromptRecall> {
        if !is_recall_query(prompt) {
            return Ok(PromptRecall::Skipped(
                "single-word prompts are not recalled for, as in Claude Code",
            ));
        }
        let engine = self.clone();
        let cwd = cwd.to_path_buf();
        let overrides = overrides.clone();
        let config = config.clone();
        // Settings, the memory dir and the API key (a keyring read may block on D-Bus) are
        // found off the async threads.
        let prepared = tokio::task::spawn_blocking(move || {
            if !engine.auto_memory_enabled(&cwd) {
                return Ok(None);
            }
            let memory_dir = engine.resolve_memory_dir(&cwd)?.memory_dir;
            let setup = engine.recall_setup_in(&config, &overrides, &memory_dir)?;
            Ok::<_, Error>(Some((memory_dir, setup)))
        })
        .await
        .map_err(|e| Error::InvalidInput(format!("hook worker failed: {e}")))??;
        let Some((memory_dir, setup)) = prepared else {
            return Ok(PromptRecall::Skipped(
                "auto-memory is turned off for this project (CLAUDE_CODE_DISABLE_AUTO_MEMORY or \
                 autoMemoryEnabled)",
            ));
        };
        let request = RecallRequest {
            query: prompt.to_owned(),
            limit,
            exclude: Vec::new(),
            session,
        };
        let report = self
            .recall_as(&memory_dir, &request, &setup, cancel)
            .await?;
        Ok(PromptRecall::Recalled {
            memory_dir,
            report: Box::new(report),
        })
    }
}

/// The command line Claude Code should run for the prompt hook with `program`.
pub fn prompt_hook_command(program: &Path) -> String {
    ENGRAM_HOOKS[0].command(program)
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The first word of a command line as `os` reads it, unquoted, and the rest. On Windows a
/// backslash is kept as it is (a path separator), not taken as an escape.
fn split_program_on(os: Os, command: &str) -> (String, &str) {
    let command = command.trim_start();
    let escapes = os != Os::Windows;
    let mut program = String::new();
    let mut chars = command.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => return (program, &command[i..]),
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') if escapes => {
                if let Some((_, next)) = chars.next() {
                    program.push(next);
                }
            }
            (_, c) => program.push(c),
        }
    }
    (program, "")
}

/// Whether `command` is Engram's prompt hook (any install path).
pub fn is_engram_prompt_command(command: &str) -> bool {
    ENGRAM_HOOKS[0].matches(command)
}

/// Where Engram's hooks stand in `settings.json`. The top-level `event`, `installed`, `command`
/// and `expectedCommand` are the prompt hook's (the first Engram installed); `upToDate` says
/// whether every hook is installed with the expected command; `hooks` has each one.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookStatus {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub settings_file: PathBuf,
    pub event: &'static str,
    pub installed: bool,
    /// The command of the installed entry.
    pub command: Option<String>,
    /// What `install` writes.
    pub expected_command: String,
    /// Every Engram hook is installed with exactly the expected command.
    pub up_to_date: bool,
    /// Backups Engram made of this file, newest first.
    #[cfg_attr(feature = "ts", ts(type = "Array<string>"))]
    pub backups: Vec<PathBuf>,
    /// Each hook Engram installs.
    pub hooks: Vec<SingleHookStatus>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleHookStatus {
    pub event: &'static str,
    pub installed: bool,
    pub command: Option<String>,
    pub expected_command: String,
    pub up_to_date: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookAction {
    Installed,
    Updated,
    Removed,
    Unchanged,
}

/// What `install` or `uninstall` did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookChange {
    pub action: HookAction,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub settings_file: PathBuf,
    /// The prompt hook's command (see `commands` for every hook's).
    pub command: String,
    /// The commands installed or removed, one per hook.
    pub commands: Vec<String>,
    /// The copy of the previous file (none when nothing changed or there was no file).
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub backup: Option<PathBuf>,
}

/// What installing Engram's hooks would do to `settings.json`, to show before doing it
/// ([`Engine::plan_hooks_install`]); [`Engine::install_planned_hooks`] then writes exactly this.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookPlan {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub settings_file: PathBuf,
    /// `installed` (added), `updated` (an older command replaced) or `unchanged` (nothing to
    /// write).
    pub action: HookAction,
    /// The commands that would be installed, one per hook.
    pub commands: Vec<String>,
    /// A unified diff of the file, before and after; empty when unchanged.
    pub diff: String,
    /// The content hash of the file the plan was made from (`None`: there is no file yet).
    pub base: Option<String>,
}

/// One Engram command found in the settings: the path of its `command` string node.
struct Found {
    /// Index of the group in `hooks.<event>`.
    group: usize,
    /// Index of the hook in the group's `hooks`.
    hook: usize,
    command: String,
}

fn engram_entries(os: Os, root: &Node, hook: EngramHook) -> Vec<Found> {
    let Some(groups) = root
        .member("hooks")
        .and_then(|h| h.value.member(hook.event))
        .and_then(|e| e.value.elements())
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let Some(hooks) = group.member("hooks").and_then(|h| h.value.elements()) else {
            continue;
        };
        for (h, entry) in hooks.iter().enumerate() {
            if let Some(command) = entry.member("command").and_then(|c| c.value.as_str()) {
                if hook.matches_on(os, command) {
                    found.push(Found {
                        group: g,
                        hook: h,
                        command: command.to_owned(),
                    });
                }
            }
        }
    }
    found
}

/// The `hooks.<event>` array and the `hooks` array of its group number `group`.
fn group_nodes<'a>(root: &'a Node, event: &str, group: usize) -> Option<(&'a Node, &'a Node)> {
    let event = &root.member("hooks")?.value.member(event)?.value;
    let hooks = &event.elements()?.get(group)?.member("hooks")?.value;
    Some((event, hooks))
}

/// The settings as values, with Engram's hook commands taken out and the groups, event
/// list and `hooks` object that leaves empty dropped: an edit is safe to write only if this is
/// the same before and after it (a safety net under the splicing).
fn without_engram(os: Os, text: &str) -> Option<Value> {
    let mut value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let Some(hooks) = value.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Some(value);
    };
    for hook in ENGRAM_HOOKS {
        let Some(groups) = hooks.get_mut(hook.event).and_then(Value::as_array_mut) else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                list.retain(|entry| {
                    !entry
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| hook.matches_on(os, c))
                });
            }
        }
        groups.retain(|group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|list| !list.is_empty())
        });
        if groups.is_empty() {
            hooks.remove(hook.event);
        }
    }
    if hooks.is_empty() {
        if let Some(root) = value.as_object_mut() {
            root.remove("hooks");
        }
    }
    Some(value)
}

/// `original` (the settings text; `None`: no file) with every Engram hook (run by `program`)
/// added or updated as `os` writes and reads commands, and what that is;
/// [`HookAction::Unchanged`] returns the text as it is.
fn installed_text(
    os: Os,
    path: &Path,
    original: Option<&str>,
    program: &Path,
) -> Result<(String, HookAction)> {
    let start = match original {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ => "{}\n".to_owned(),
    };
    let mut text = start.clone();
    let mut action = HookAction::Unchanged;
    for hook in ENGRAM_HOOKS {
        let (updated, done) = install_one(os, path, &text, hook, &hook.command_on(os, program))?;
        text = updated;
        action = match (action, done) {
            (HookAction::Installed, _) | (_, HookAction::Installed) => HookAction::Installed,
            (HookAction::Updated, _) | (_, HookAction::Updated) => HookAction::Updated,
            _ => HookAction::Unchanged,
        };
    }
    if action == HookAction::Unchanged {
        return Ok((original.unwrap_or_default().to_owned(), action));
    }
    let root = parse_settings(path, &text)?;
    if ENGRAM_HOOKS
        .iter()
        .any(|hook| engram_entries(os, &root, *hook).is_empty())
        || without_engram(os, &text) != without_engram(os, &start)
    {
        return Err(Error::InvalidInput(format!(
            "{}: the edit would change more than Engram's entries; not written",
            path.display()
        )));
    }
    Ok((text, action))
}

/// `text` with Engram's `hook` running `command` added or updated.
fn install_one(
    os: Os,
    path: &Path,
    text: &str,
    hook: EngramHook,
    command: &str,
) -> Result<(String, HookAction)> {
    let path = path.to_path_buf();
    let text = text.to_owned();
    let root = parse_settings(&path, &text)?;
    let style = Style::detect(&text, &root);
    let found = engram_entries(os, &root, hook);
    let event_name = hook.event;
    let (updated, action) = if let Some(first) = found.first() {
        if first.command == command {
            return Ok((text, HookAction::Unchanged));
        }
        let node = group_nodes(&root, event_name, first.group)
            .and_then(|(_, hooks)| hooks.elements()?.get(first.hook))
            .and_then(|hook| hook.member("command"))
            .map(|m| m.value.clone())
            .ok_or_else(|| type_error(&path, "hooks"))?;
        let replaced =
            json_edit::replace_node(&text, &node, &Value::String(command.to_owned()).to_string());
        (replaced, HookAction::Updated)
    } else {
        let group = json!({"hooks": [{"type": "command", "command": command}]});
        let inserted = match root.member("hooks") {
            None => {
                let value = json!({ event_name: [group] });
                json_edit::append_child(&text, &root, &style, |base, compact| {
                    json_edit::render_member(&style, "hooks", &value, base, compact)
                })
            }
            Some(hooks) if hooks.value.members().is_none() => {
                return Err(type_error(&path, "hooks"))
            }
            Some(hooks) => match hooks.value.member(event_name) {
                None => {
                    let value = json!([group]);
                    json_edit::append_child(&text, &hooks.value, &style, |base, compact| {
                        json_edit::render_member(&style, event_name, &value, base, compact)
                    })
                }
                Some(event) if event.value.elements().is_none() => {
                    return Err(type_error(&path, &format!("hooks.{event_name}")))
                }
                Some(event) => {
                    json_edit::append_child(&text, &event.value, &style, |base, compact| {
                        style.render(&group, base, compact)
                    })
                }
            },
        };
        (inserted, HookAction::Installed)
    };
    Ok((updated, action))
}

fn parse_settings(path: &Path, text: &str) -> Result<Node> {
    JsonFile::new(path, PathBuf::new()).parse(text, &["hooks"])
}

fn type_error(path: &Path, what: &str) -> Error {
    JsonFile::new(path, PathBuf::new()).type_error(what)
}

impl Engine {
    /// `<Claude config home>/settings.json`.
    pub fn claude_settings_path(&self) -> PathBuf {
        self.claude_home().join("settings.json")
    }

    /// `settings.json`, backed up into `<engram home>/backups/claude-settings/`.
    fn settings_file(&self) -> JsonFile {
        JsonFile::new(
            self.claude_settings_path(),
            self.engram_home().join("backups").join("claude-settings"),
        )
    }

    /// Engram's backups of `settings.json`, newest first.
    pub fn settings_backups(&self) -> Vec<PathBuf> {
        self.settings_file().backups()
    }

    fn read_settings_text(&self) -> Result<Option<String>> {
        self.settings_file().read()
    }

    /// Writes `updated` over `settings.json`, which held `original` when the edit was planned:
    /// refuses with [`Error::Conflict`] if it changed since (Claude Code may have written it),
    /// backs `original` up, and writes through a symlink rather than replacing it (dotfile
    /// managers link `settings.json` into a repository). Returns the backup.
    fn write_settings(&self, original: Option<&str>, updated: &str) -> Result<Option<PathBuf>> {
        self.settings_file()
            .write_unchanged_since(original, updated, self.clock().now())
    }

    /// Whether Engram's hooks (run by `program`) are in `settings.json`, and with which
    /// commands.
    pub fn hooks_status(&self, program: &Path) -> Result<HookStatus> {
        let path = self.claude_settings_path();
        let root = match self.read_settings_text()? {
            Some(text) if !text.trim().is_empty() => Some(parse_settings(&path, &text)?),
            _ => None,
        };
        let hooks: Vec<SingleHookStatus> = ENGRAM_HOOKS
            .iter()
            .map(|hook| {
                let command = root
                    .as_ref()
                    .and_then(|root| engram_entries(Os::CURRENT, root, *hook).into_iter().next())
                    .map(|f| f.command);
                let expected_command = hook.command(program);
                SingleHookStatus {
                    event: hook.event,
                    installed: command.is_some(),
                    up_to_date: command.as_deref() == Some(expected_command.as_str()),
                    command,
                    expected_command,
                }
            })
            .collect();
        let prompt = hooks[0].clone();
        Ok(HookStatus {
            settings_file: path,
            event: prompt.event,
            installed: prompt.installed,
            command: prompt.command,
            expected_command: prompt.expected_command,
            up_to_date: hooks.iter().all(|h| h.up_to_date),
            backups: self.settings_backups(),
            hooks,
        })
    }

    /// What [`Engine::install_hooks`] would write, as a diff, without writing anything.
    pub fn plan_hooks_install(&self, program: &Path) -> Result<HookPlan> {
        let path = self.claude_settings_path();
        let original = self.read_settings_text()?;
        let (updated, action) = installed_text(Os::CURRENT, &path, original.as_deref(), program)?;
        let name = path.display().to_string();
        Ok(HookPlan {
            diff: crate::diff::unified_diff(
                &name,
                &name,
                original.as_deref().unwrap_or_default(),
                &updated,
            ),
            base: original
                .as_deref()
                .map(|t| disk::content_hash(t.as_bytes())),
            commands: ENGRAM_HOOKS.iter().map(|h| h.command(program)).collect(),
            settings_file: path,
            action,
        })
    }

    /// Installs Engram's hooks as planned from the file whose content hash was `base` (`None`:
    /// no file): if `settings.json` changed since the plan was shown, nothing is written and
    /// [`Error::Conflict`] names the file, so what lands is exactly the diff the user saw.
    pub fn install_planned_hooks(&self, program: &Path, base: Option<&str>) -> Result<HookChange> {
        let original = self.read_settings_text()?;
        let now = original
            .as_deref()
            .map(|t| disk::content_hash(t.as_bytes()));
        if now.as_deref() != base {
            return Err(Error::Conflict(self.claude_settings_path()));
        }
        self.install_hooks_over(program, original)
    }

    /// Adds (or updates) Engram's hooks, run by `program`. Idempotent.
    pub fn install_hooks(&self, program: &Path) -> Result<HookChange> {
        let original = self.read_settings_text()?;
        self.install_hooks_over(program, original)
    }

    /// Installs Engram's hooks over `original`, the settings text just read (`write_settings`
    /// refuses if the file moves on before the write).
    fn install_hooks_over(&self, program: &Path, original: Option<String>) -> Result<HookChange> {
        let path = self.claude_settings_path();
        let commands: Vec<String> = ENGRAM_HOOKS.iter().map(|h| h.command(program)).collect();
        let change = |action, backup| HookChange {
            action,
            settings_file: path.clone(),
            command: commands[0].clone(),
            commands: commands.clone(),
            backup,
        };
        let (updated, action) = installed_text(Os::CURRENT, &path, original.as_deref(), program)?;
        if action == HookAction::Unchanged {
            return Ok(change(HookAction::Unchanged, None));
        }
        let backup = self.write_settings(original.as_deref(), &updated)?;
        Ok(change(action, backup))
    }

    /// Removes every Engram hook entry, and each event list and the `hooks` object when that
    /// leaves them empty.
    pub fn uninstall_hooks(&self) -> Result<HookChange> {
        let path = self.claude_settings_path();
        let unchanged = |path| HookChange {
            action: HookAction::Unchanged,
            settings_file: path,
            command: String::new(),
            commands: Vec::new(),
            backup: None,
        };
        let Some(original) = self.read_settings_text()? else {
            return Ok(unchanged(path));
        };
        let root = parse_settings(&path, &original)?;
        let installed: Vec<String> = ENGRAM_HOOKS
            .iter()
            .filter_map(|hook| {
                Some(
                    engram_entries(Os::CURRENT, &root, *hook)
                        .first()?
                        .command
                        .clone(),
                )
            })
            .collect();
        // Undoing exactly what install did gives the file back byte for byte — an empty file,
        // an empty `UserPromptSubmit: []` — rather than the structural removal below: when the
        // file is what installing into the last backup would make, the backup is put back.
        let program = installed
            .first()
            .map(|command| PathBuf::from(split_program_on(Os::CURRENT, command).0));
        if let (Some(program), Some(backup)) = (&program, self.settings_file().latest_backup()) {
            let reinstalled = installed_text(Os::CURRENT, &path, Some(&backup), program);
            if matches!(&reinstalled, Ok((text, HookAction::Installed)) if *text == original) {
                let saved = self.write_settings(Some(&original), &backup)?;
                return Ok(HookChange {
                    action: HookAction::Removed,
                    settings_file: path,
                    command: installed[0].clone(),
                    commands: installed,
                    backup: saved,
                });
            }
        }
        let mut text = original.clone();
        for hook in ENGRAM_HOOKS {
            text = remove_all(&path, text, hook)?;
        }
        if text == original {
            return Ok(unchanged(path));
        }
        let root = parse_settings(&path, &text)?;
        if ENGRAM_HOOKS
            .iter()
            .any(|hook| !engram_entries(Os::CURRENT, &root, *hook).is_empty())
            || without_engram(Os::CURRENT, &text) != without_engram(Os::CURRENT, &original)
        {
            return Err(Error::InvalidInput(format!(
                "{}: the edit would change more than Engram's entries; not written",
                path.display()
            )));
        }
        let backup = self.write_settings(Some(&original), &text)?;
        Ok(HookChange {
            action: HookAction::Removed,
            settings_file: path,
            command: installed.first().cloned().unwrap_or_default(),
            commands: installed,
            backup,
        })
    }
}

/// `text` without any entry of Engram's `hook`, dropping the group, the event list and the
/// `hooks` object when that leaves them empty.
fn remove_all(path: &Path, mut text: String, hook: EngramHook) -> Result<String> {
    // Each round removes one entry; the bound only guards against a bug looping forever.
    for _ in 0..MAX_ENTRIES_REMOVED {
        let root = parse_settings(path, &text)?;
        let Some(found) = engram_entries(Os::CURRENT, &root, hook).pop() else {
            break;
        };
        let (event, hooks) =
            group_nodes(&root, hook.event, found.group).ok_or_else(|| type_error(path, "hooks"))?;
        if hooks.elements().map_or(0, <[Node]>::len) > 1 {
            text = json_edit::remove_child(&text, hooks, found.hook);
            continue;
        }
        if event.elements().map_or(0, <[Node]>::len) > 1 {
            text = json_edit::remove_child(&text, event, found.group);
            continue;
        }
        // The list held only Engram's group: drop the event, then `hooks` if now empty.
        let hooks_object = &root
            .member("hooks")
            .ok_or_else(|| type_error(path, "hooks"))?
            .value;
        if hooks_object.members().map_or(0, <[json_edit::Member]>::len) > 1 {
            let index = hooks_object
                .members()
                .and_then(|m| m.iter().position(|m| m.key == hook.event))
                .unwrap_or(0);
            text = json_edit::remove_child(&text, hooks_object, index);
        } else {
            let index = root
                .members()
                .and_then(|m| m.iter().position(|m| m.key == "hooks"))
                .unwrap_or(0);
            text = json_edit::remove_child(&text, &root, index);
        }
    }
    Ok(text)
}

/// The environment a hook process run by Claude Code works in: `env`, plus
/// `ENGRAM_KEYRING=never` where reading the OS keyring could open a dialog with nobody watching
/// ([`Os::keyring_may_prompt_unattended`]: macOS) — unless the person chose themselves. Keys then
/// come from the environment only (Claude Code passes its `settings.json` `env` to hooks), and
/// without one recall ranks locally or offline and extraction uses its rules, saying why; when
/// the app is running, the prompt hook's answer comes from the app, which reads the key.
pub fn unattended_environment(env: Environment, os: Os) -> Environment {
    if os.keyring_may_prompt_unattended() && env.get(keys::KEYRING_VAR).is_none() {
        env.with(keys::KEYRING_VAR, "never")
    } else {
        env
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn home_with_settings(text: &str) -> (tempfile::TempDir, crate::Engine) {
        let home = tempfile::tempdir().expect("home");
        let engine = crate::Engine::builder(crate::Environment::empty())
            .claude_home(home.path())
            .engram_home(home.path().join("engram"))
            .build();
        fs::write(home.path().join("settings.json"), text).expect("seed");
        (home, engine)
    }

    #[test]
    fn install_then_uninstall_gives_back_an_empty_file_or_an_empty_list_byte_for_byte() {
        for original in [
            "",
            "{\n  \"hooks\": {\n    \"UserPromptSubmit\": []\n  }\n}\n",
            "{\"hooks\":{\"UserPromptSubmit\":[]},\"theme\":\"dark\"}",
        ] {
            let (home, engine) = home_with_settings(original);
            engine
                .install_hooks(Path::new("/usr/bin/engram"))
                .expect("install");
            let change = engine.uninstall_hooks().expect("uninstall");
            assert_eq!(change.action, HookAction::Removed);
            assert_eq!(
                fs::read_to_string(home.path().join("settings.json")).expect("read"),
                original,
                "round trip of {original:?}"
            );
        }
    }

    #[test]
    fn a_settings_file_with_two_hooks_keys_is_refused_not_half_edited() {
        let original = "{\"hooks\": {}, \"theme\": \"dark\", \"hooks\": {}}\n";
        let (home, engine) = home_with_settings(original);
        let err = engine
            .install_hooks(Path::new("/usr/bin/engram"))
            .expect_err("ambiguous");
        assert!(err.to_string().contains("appears twice"), "{err}");
        assert!(
            engine.hooks_status(Path::new("/usr/bin/engram")).is_err(),
            "status must not claim anything about an ambiguous file"
        );
        assert_eq!(
            fs::read_to_string(home.path().join("settings.json")).expect("read"),
            original
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_settings_file_is_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().expect("home");
        let engine = crate::Engine::builder(crate::Environment::empty())
            .claude_home(home.path())
            .engram_home(home.path().join("engram"))
            .build();
        let settings = home.path().join("settings.json");
        fs::write(&settings, "{\"theme\": \"dark\"}\n").expect("seed");
        fs::set_permissions(&settings, fs::Permissions::from_mode(0o444)).expect("chmod");
        let err = engine
            .install_hooks(Path::new("/usr/bin/engram"))
            .expect_err("read-only");
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(
            fs::read_to_string(&settings).expect("read"),
            "{\"theme\": \"dark\"}\n",
            "not replaced"
        );
    }
    use crate::environment::Environment;

    const EXE: &str = "/opt/engram/bin/engram";

    fn engine(dir: &Path) -> Engine {
        Engine::builder(Environment::empty())
            .claude_home(dir.join("claude"))
            .engram_home(dir.join("engram"))
            .build()
    }

    fn command() -> String {
        prompt_hook_command(Path::new(EXE))
    }

    #[test]
    fn commands_are_quoted_and_recognised() {
        assert_eq!(command(), "/opt/engram/bin/engram hook user-prompt-submit");
        let spaced = prompt_hook_command(Path::new("/Users/a b/it's/engram"));
        assert_eq!(
            spaced,
            r#"'/Users/a b/it'\''s/engram' hook user-prompt-submit"#
        );
        assert!(is_engram_prompt_command(&spaced));
        assert!(is_engram_prompt_command(&command()));
        assert!(is_engram_prompt_command(
            "engram  hook   user-prompt-submit --budget-ms 900"
        ));
        assert!(!is_engram_prompt_command(
            "/usr/bin/notengram hook user-prompt-submit"
        ));
        assert!(!is_engram_prompt_command("engram recall x"));
        assert!(!is_engram_prompt_command(
            "echo engram hook user-prompt-submit"
        ));
    }

    /// Platforms row 16: on Windows the command is the exe in double quotes with forward
    /// slashes, and an existing entry's backslashes are path separators, not escapes — so a
    /// reinstall finds its own (or an older, hand-written) entry instead of adding another.
    #[test]
    fn windows_commands_are_double_quoted_with_forward_slashes_and_read_literally() {
        let prompt = ENGRAM_HOOKS[0];
        let exe = Path::new(r"C:\Users\me\.cargo\bin\engram.exe");
        let written = prompt.command_on(Os::Windows, exe);
        assert_eq!(
            written,
            r#""C:/Users/me/.cargo/bin/engram.exe" hook user-prompt-submit"#
        );
        assert_eq!(
            ENGRAM_HOOKS[1].command_on(Os::Windows, Path::new(r"D:\Program Files\engram.exe")),
            r#""D:/Program Files/engram.exe" hook stop"#
        );
        for existing in [
            written.as_str(),
            r"C:\Users\me\.cargo\bin\engram.exe hook user-prompt-submit",
            r#""C:\Program Files\Engram\engram.exe" hook user-prompt-submit"#,
            r"'C:\Users\me\engram.exe' hook user-prompt-submit",
            r"C:\Users\ME\ENGRAM.EXE hook user-prompt-submit --budget-ms 900",
            "engram hook user-prompt-submit",
        ] {
            assert!(prompt.matches_on(Os::Windows, existing), "{existing}");
        }
        assert!(!prompt.matches_on(
            Os::Windows,
            r"C:\tools\notengram.exe hook user-prompt-submit"
        ));
        assert!(!ENGRAM_HOOKS[1].matches_on(Os::Windows, &written));
        // Read as a POSIX shell would, the backslashes are escapes and the program is
        // `C:Usersmeengram.exe`: the reason parsing depends on the OS.
        assert!(!prompt.matches_on(Os::Unix, r"C:\Users\me\engram.exe hook user-prompt-submit"));
        assert_eq!(
            split_program_on(Os::Windows, r#""C:\a b\engram.exe" hook stop"#).0,
            r"C:\a b\engram.exe"
        );
        // Unix is unchanged.
        assert_eq!(prompt.command_on(Os::Unix, Path::new(EXE)), command());
    }

    /// Platforms row 16, end to end through the splice: a Windows `settings.json` holding
    /// entries an older install or a person wrote with backslashes is updated in place, never
    /// given a second entry, and installing again changes nothing.
    #[test]
    fn a_windows_reinstall_updates_its_own_backslashed_entries_instead_of_adding_more() {
        let path = Path::new("settings.json");
        let original = r#"{
  "hooks": {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "C:\\Users\\me\\old\\engram.exe hook user-prompt-submit"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "'C:\\Users\\me\\old\\engram.exe' hook stop"}]}]
  }
}
"#;
        let exe = Path::new(r"C:\Users\me\.cargo\bin\engram.exe");
        let (text, action) =
            installed_text(Os::Windows, path, Some(original), exe).expect("install");
        assert_eq!(action, HookAction::Updated, "{text}");
        assert_eq!(text.matches("user-prompt-submit").count(), 1, "{text}");
        assert_eq!(text.matches("hook stop").count(), 1, "{text}");
        assert!(
            text.contains(r#""\"C:/Users/me/.cargo/bin/engram.exe\" hook user-prompt-submit""#),
            "{text}"
        );
        let (again, action) =
            installed_text(Os::Windows, path, Some(&text), exe).expect("reinstall");
        assert_eq!(action, HookAction::Unchanged);
        assert_eq!(again, text);
    }

    #[test]
    fn payloads_parse_and_single_words_are_not_queries() {
        let input = parse_user_prompt_submit(
            r#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","prompt":"hi there",
                "hook_event_name":"UserPromptSubmit","prompt_id":"x","permission_mode":"default"}"#,
        )
        .expect("payload");
        assert_eq!(input.cwd, PathBuf::from("/p"));
        assert!(parse_user_prompt_submit("{").is_err());
        assert!(
            parse_user_prompt_submit(r#"{"cwd":"/p","prompt":"x","hook_event_name":"Stop"}"#)
                .is_err()
        );
        assert!(!is_recall_query("  continue \n"));
        assert!(is_recall_query("fix the bug"));
    }

    #[test]
    fn the_plan_shows_the_diff_and_writes_nothing_then_installs_exactly_that() {
        let original = "{\n  \"theme\": \"dark\"\n}\n";
        let (home, engine) = home_with_settings(original);
        let settings = home.path().join("settings.json");
        let plan = engine.plan_hooks_install(Path::new(EXE)).expect("plan");
        assert_eq!(plan.action, HookAction::Installed);
        assert_eq!(plan.settings_file, settings);
        for command in [command(), format!("{EXE} hook stop")] {
            assert!(
                plan.diff
                    .lines()
                    .any(|line| line.starts_with('+') && line.contains(&command)),
                "{command} added: {}",
                plan.diff
            );
        }
        assert!(plan.diff.contains("\"theme\": \"dark\""), "{}", plan.diff);
        assert_eq!(
            fs::read_to_string(&settings).expect("read"),
            original,
            "a plan writes nothing"
        );

        engine
            .install_planned_hooks(Path::new(EXE), plan.base.as_deref())
            .expect("install as planned");
        let after = fs::read_to_string(&settings).expect("read");
        assert_eq!(
            crate::diff::unified_diff(
                &settings.display().to_string(),
                &settings.display().to_string(),
                original,
                &after
            ),
            plan.diff,
            "what landed is the diff that was shown"
        );
        let again = engine.plan_hooks_install(Path::new(EXE)).expect("plan");
        assert_eq!(again.action, HookAction::Unchanged);
        assert_eq!(again.diff, "");
    }

    #[test]
    fn a_planned_install_is_refused_when_the_file_changed_since_the_plan() {
        let (home, edited) = home_with_settings("{\"theme\": \"dark\"}\n");
        let settings = home.path().join("settings.json");
        let plan = edited.plan_hooks_install(Path::new(EXE)).expect("plan");
        // Claude Code writes the file while the plan is on screen.
        fs::write(&settings, "{\"theme\": \"light\"}\n").expect("edit");
        let error = edited
            .install_planned_hooks(Path::new(EXE), plan.base.as_deref())
            .expect_err("the file moved on");
        assert!(
            matches!(&error, Error::Conflict(path) if *path == settings),
            "{error}"
        );
        assert_eq!(
            fs::read_to_string(&settings).expect("read"),
            "{\"theme\": \"light\"}\n"
        );

        // A plan made when there was no file does not apply over one that appeared.
        let dir = tempfile::tempdir().expect("tempdir");
        let fresh = engine(dir.path());
        let plan = fresh.plan_hooks_install(Path::new(EXE)).expect("plan");
        assert_eq!(plan.base, None);
        fs::create_dir_all(dir.path().join("claude")).expect("home");
        fs::write(fresh.claude_settings_path(), "{}\n").expect("appears");
        assert!(fresh.install_planned_hooks(Path::new(EXE), None).is_err());
    }

    #[test]
    fn install_into_a_missing_file_creates_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        let change = engine.install_hooks(Path::new(EXE)).expect("install");
        assert_eq!(change.action, HookAction::Installed);
        assert_eq!(change.backup, None, "nothing to back up");
        let text = fs::read_to_string(engine.claude_settings_path()).expect("written");
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(
            value["hooks"]["UserPromptSubmit"][0]["hooks"][0],
            json!({"type": "command", "command": command()})
        );
        assert!(
            engine
                .hooks_status(Path::new(EXE))
                .expect("status")
                .up_to_date
        );
    }

    #[test]
    fn a_stale_install_path_is_updated_in_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        engine
            .install_hooks(Path::new("/old/place/engram"))
            .expect("install old");
        let status = engine.hooks_status(Path::new(EXE)).expect("status");
        assert!(status.installed && !status.up_to_date);
        let change = engine.install_hooks(Path::new(EXE)).expect("update");
        assert_eq!(change.action, HookAction::Updated);
        let text = fs::read_to_string(engine.claude_settings_path()).expect("read");
        assert_eq!(text.matches("user-prompt-submit").count(), 1, "{text}");
        assert_eq!(text.matches("hook stop").count(), 1, "{text}");
        assert!(!text.contains("/old/place"), "{text}");
        assert!(text.contains(EXE));
    }

    #[test]
    fn our_command_inside_a_shared_group_is_removed_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        let original = format!(
            "{{\n  \"hooks\": {{\n    \"UserPromptSubmit\": [\n      {{\n        \"hooks\": [\n          {{\"type\": \"command\", \"command\": \"/bin/lint-prompt\"}},\n          {{\"type\": \"command\", \"command\": \"{}\"}}\n        ]\n      }}\n    ]\n  }}\n}}\n",
            command()
        );
        fs::create_dir_all(dir.path().join("claude")).expect("mkdir");
        fs::write(engine.claude_settings_path(), &original).expect("seed");
        let change = engine.uninstall_hooks().expect("uninstall");
        assert_eq!(change.action, HookAction::Removed);
        let text = fs::read_to_string(engine.claude_settings_path()).expect("read");
        assert!(text.contains("/bin/lint-prompt"), "{text}");
        assert!(!text.contains("user-prompt-submit"), "{text}");
        assert!(serde_json::from_str::<Value>(&text).is_ok());
        assert_eq!(
            change
                .backup
                .map(|b| fs::read_to_string(b).expect("backup")),
            Some(original)
        );
    }

    #[test]
    fn settings_of_the_wrong_shape_are_refused_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        fs::create_dir_all(dir.path().join("claude")).expect("mkdir");
        for bad in [
            "[1]",
            "{\"hooks\": []}",
            "{\"hooks\": {\"UserPromptSubmit\": {}}}",
            "{oops",
        ] {
            fs::write(engine.claude_settings_path(), bad).expect("seed");
            let err = engine.install_hooks(Path::new(EXE)).expect_err(bad);
            assert_eq!(err.kind(), crate::ErrorKind::Parse, "{bad}: {err}");
            assert!(err.to_string().contains("settings.json"), "{err}");
            assert_eq!(
                fs::read_to_string(engine.claude_settings_path()).expect("read"),
                bad
            );
        }
        assert!(
            engine.settings_backups().is_empty(),
            "no backup for a refused edit"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_settings_file_is_edited_through_the_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        let dotfiles = dir.path().join("dotfiles");
        fs::create_dir_all(&dotfiles).expect("mkdir");
        fs::create_dir_all(dir.path().join("claude")).expect("mkdir");
        let original = "{\n  \"model\": \"opus\"\n}\n";
        fs::write(dotfiles.join("settings.json"), original).expect("seed");
        std::os::unix::fs::symlink(
            dotfiles.join("settings.json"),
            engine.claude_settings_path(),
        )
        .expect("link");
        engine.install_hooks(Path::new(EXE)).expect("install");
        let link = fs::symlink_metadata(engine.claude_settings_path()).expect("stat");
        assert!(link.file_type().is_symlink(), "the link survives");
        let through = fs::read_to_string(dotfiles.join("settings.json")).expect("read");
        assert!(through.contains("user-prompt-submit"), "{through}");
        engine.uninstall_hooks().expect("uninstall");
        assert_eq!(
            fs::read_to_string(dotfiles.join("settings.json")).expect("read"),
            original
        );
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = engine(dir.path());
        fs::create_dir_all(dir.path().join("claude")).expect("mkdir");
        fs::write(engine.claude_settings_path(), "{\"model\": \"sonnet\"}").expect("seed");
        let err = engine
            .write_settings(Some("{\"model\": \"opus\"}"), "{}")
            .expect_err("Claude Code wrote it meanwhile");
        assert_eq!(err.kind(), crate::ErrorKind::Conflict);
        assert_eq!(
            fs::read_to_string(engine.claude_settings_path()).expect("read"),
            "{\"model\": \"sonnet\"}"
        );
    }

    #[test]
    fn hooks_leave_the_keyring_alone_only_where_reading_it_could_open_a_dialog() {
        let never = |env: &Environment| env.get(keys::KEYRING_VAR) == Some("never");
        assert!(never(&unattended_environment(
            Environment::empty(),
            Os::Mac
        )));
        assert!(!never(&unattended_environment(
            Environment::empty(),
            Os::Unix
        )));
        assert!(!never(&unattended_environment(
            Environment::empty(),
            Os::Windows
        )));
        let chosen = Environment::empty().with(keys::KEYRING_VAR, "always");
        assert_eq!(
            unattended_environment(chosen, Os::Mac).get(keys::KEYRING_VAR),
            Some("always"),
            "the person's own choice stands"
        );
    }
}
