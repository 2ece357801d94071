//! Engram's desktop shell: a thin Tauri adapter over [`memory_engine::Engine`].
//!
//! [`builder`] assembles everything a window talks to — the managed [`AppState`] and the IPC
//! commands — generic over the runtime, so tests drive the very same handlers on Tauri's mock
//! runtime. [`run`] adds what needs a real desktop (single instance, the tray, the remembered
//! window size) and starts the event loop.
//!
//! Wire contract with `ui/src/ipc/`: commands take and return the engine's own serializable types
//! (camelCase keys), whose TypeScript shapes are generated into `ui/src/ipc/bindings/`
//! ([`bindings`]); failures are [`error::Error`], serialized as `{ kind, message }`; live updates
//! arrive as the events of [`events`].

pub mod background;
pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod launch;
pub mod prefs;
pub mod state;
pub mod tray;

use std::time::Duration;

use tauri::{Builder, LogicalSize, Manager, Runtime, WindowEvent};

use crate::launch::LaunchOptions;
use crate::state::AppState;
use memory_engine::Engine;

/// The label of the app's one window (`tauri.conf.json`).
pub const MAIN_WINDOW: &str = "main";

/// Adds the shell's state and commands to `base` (Tauri's default builder in the app,
/// `tauri::test::mock_builder()` in tests). Add nothing here that needs a desktop (GTK).
pub fn builder<R: Runtime>(base: Builder<R>, state: AppState) -> Builder<R> {
    base.manage(state).invoke_handler(tauri::generate_handler![
        commands::home::app_info,
        commands::onboarding::first_run,
        commands::onboarding::plan_hooks_install,
        commands::onboarding::install_planned_hooks,
        commands::onboarding::uninstall_hooks,
        commands::onboarding::set_onboarded,
        commands::settings::local_model_status,
        commands::settings::fetch_local_model,
        commands::settings::embed_all_memories,
        commands::settings::stop_model_work,
        commands::home::ui_ready,
        commands::projects::list_projects,
        commands::projects::search_memories,
        commands::memory::open_project,
        commands::memory::lint_project,
        commands::memory::read_memory,
        commands::editor::save_memory,
        commands::editor::memory_conflict,
        commands::editor::resolve_memory_conflict,
        commands::editor::create_memory,
        commands::editor::rename_memory,
        commands::editor::delete_memory,
        commands::fix::plan_fix,
        commands::fix::apply_fix,
        commands::history::file_history,
        commands::history::version_change,
        commands::history::revert_version,
        commands::watch::watch_project,
        commands::watch::unwatch_project,
        commands::settings::llm_setup,
        commands::settings::save_llm_setup,
        commands::settings::store_api_key,
        commands::settings::delete_api_key,
        commands::settings::test_connection,
        commands::settings::start_at_login,
        commands::settings::set_start_at_login,
        commands::settings::token_usage,
        commands::settings::set_daily_budget,
        commands::settings::mcp_server_status,
        commands::settings::preview_mcp_server,
        commands::settings::install_mcp_server,
        commands::settings::uninstall_mcp_server,
        commands::recall::recall_preview,
        commands::recall::cancel_recall,
        commands::dreams::dream_overview,
        commands::dreams::set_dream_settings,
        commands::dreams::start_dream,
        commands::dreams::kill_dream,
        commands::changes::list_change_sets,
        commands::changes::change_set,
        commands::changes::accept_changes,
        commands::changes::reject_changes,
        commands::changes::undo_changes,
        commands::changes::change_conflict,
        commands::sessions::list_sessions,
        commands::sessions::read_transcript,
        commands::sessions::extract_session,
        commands::sessions::session_summary,
        commands::sessions::update_session_summary,
        commands::sessions::search_sessions,
        commands::agents::list_agents,
        commands::agents::initialize_agent,
        commands::agents::stage_snapshot_merge,
        commands::team::team_status,
        commands::team::team_pull,
        commands::team::team_push,
        commands::team::set_team_remote,
        commands::team::team_secrets,
        commands::team::redact_team_secrets,
        commands::sync::sync_settings,
        commands::sync::sync_status,
        commands::sync::sync_pull,
        commands::sync::sync_push,
        commands::sync::set_sync_remote,
        commands::sync::set_sync_auto,
    ])
}

/// Runs the desktop app until its last window closes or the tray's Quit is chosen.
pub fn run(options: &LaunchOptions) -> tauri::Result<()> {
    let (engine, demo) = options.open_home(memory_engine::Environment::from_process());
    // First, so a second launch hands over to the running app before anything else starts.
    let single_instance = tauri_plugin_single_instance::init(|app, _args, _cwd| {
        tray::show_main_window(app);
    });
    builder(
        Builder::default()
            .plugin(single_instance)
            .plugin(tauri_plugin_notification::init())
            .plugin(tauri_plugin_autostart::init(
                tauri_plugin_autostart::MacosLauncher::LaunchAgent,
                None,
            )),
        AppState::new(engine, demo),
    )
    .setup(|app| {
        restore_window(app.handle());
        background::start(app.handle());
        install_tray(app.handle());
        Ok(())
    })
    .on_window_event(remember_window)
    .build(tauri::generate_context!())?
    .run(|app, event| match event {
        // However the app ends (the tray's Quit, a signal, the last window closed), the hook
        // socket goes and a dream in progress rolls back before the process exits.
        tauri::RunEvent::Exit => background::stop(app),
        // macOS: closing the window hides it while the tray runs; a click on the Dock icon
        // brings it back, as Mac apps do. (The variant exists on macOS only.)
        #[cfg(target_os = "macos")]
        tauri::RunEvent::Reopen {
            has_visible_windows: false,
            ..
        } => tray::show_main_window(app),
        _ => {}
    });
    Ok(())
}

/// The name of the app's log in Engram's data dir (`logs/engram-app.log`).
pub const APP_LOG: &str = "engram-app";

/// A warning or error of the app: on stderr, and in `<data dir>/logs/engram-app.log`, since a
/// Windows release build has no console (`windows_subsystem`) and a desktop launch shows no
/// stderr anywhere ([`memory_engine::problem_log`]).
pub fn report(engine: &Engine, message: &str) {
    memory_engine::problem_log::report(engine, APP_LOG, message);
}

/// Adds the tray icon where the system can show one. Where its library is missing (building the
/// tray would panic) or building it fails, the app runs without it — closing the window then
/// quits — and says why on stderr, in the app's log and in the window ([`AppState::no_tray`]).
/// A desktop without a tray host (some Linux sessions, Xvfb) builds the tray fine and simply
/// does not show it.
fn install_tray<R: Runtime>(app: &tauri::AppHandle<R>) {
    let why = match tray::missing_library() {
        Some(why) => why,
        None => match tray::install(app) {
            Ok(()) => return,
            Err(error) => {
                format!("No tray icon: {error}. Engram runs only while this window is open.")
            }
        },
    };
    report(app.state::<AppState>().engine(), &why);
    app.state::<AppState>().set_no_tray(why);
}

/// Gives the main window the size it had when the app last closed.
fn restore_window<R: Runtime>(app: &tauri::AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
        return;
    };
    let prefs = app.state::<AppState>().prefs().clone();
    if let Some(size) = prefs.window {
        let _ = window.set_size(LogicalSize::new(size.width, size.height));
        let _ = window.center();
    }
    if prefs.maximized {
        let _ = window.maximize();
    }
}

/// How long the window must keep a size before it is written: a drag emits dozens of resizes.
const WINDOW_SAVE_DELAY: Duration = Duration::from_millis(500);

/// Notes the main window's size as it changes and writes it once the resizing stops, and when
/// the window closes. Not only on close: the app can end without a close request (the tray's
/// Quit, a session logout, a kill), and the size must survive that too.
fn remember_window<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    if window.label() != MAIN_WINDOW {
        return;
    }
    let state = window.state::<AppState>();
    match event {
        WindowEvent::Resized(size) => {
            let maximized = window.is_maximized().unwrap_or(false);
            {
                let mut prefs = state.prefs();
                prefs.maximized = maximized;
                // A maximised size is the screen's, not a choice to restore un-maximised.
                if !maximized {
                    let scale = window.scale_factor().unwrap_or(1.0);
                    let logical = size.to_logical::<u32>(scale);
                    prefs.set_window(logical.width, logical.height);
                }
            }
            let ticket = state.note_window_change();
            let app = window.app_handle().clone();
            tauri::async_runtime::spawn_blocking(move || {
                std::thread::sleep(WINDOW_SAVE_DELAY);
                let state = app.state::<AppState>();
                if state.is_latest_window_change(ticket) {
                    save_prefs(&state);
                }
            });
        }
        WindowEvent::CloseRequested { api, .. } => {
            save_prefs(&state);
            // With a tray to come back from, closing keeps Engram running (background dreams);
            // the tray's Quit really quits.
            if tray::is_installed(window.app_handle()) {
                api.prevent_close();
                let _ = window.hide();
            }
        }
        _ => {}
    }
}

fn save_prefs(state: &AppState) {
    if let Err(error) = state.prefs().save() {
        report(
            state.engine(),
            &format!("could not remember the window: {error}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::sync::mpsc;
    use std::time::Duration;

    use serde_json::{json, Value};
    use tauri::Listener;

    use super::*;
    use crate::commands::test_shell::{invoke_from, Shell};
    use memory_engine::testing::fixtures::write_file as write;

    /// The memory dir of [`demo_project`].
    fn demo_memory_dir(shell: &Shell) -> std::path::PathBuf {
        shell.home().join("projects/-work-demo/memory")
    }

    const TESTING: &str =
        "---\nname: Testing policy\ndescription: Integration tests hit a real DB\n\
                           type: feedback\n---\nNo mocks. <script>alert(1)</script>\n";

    /// One project, `-work-demo`, with one indexed memory.
    fn demo_project(home: &Path) {
        let memory = home.join("projects/-work-demo/memory");
        write(
            &memory.join("MEMORY.md"),
            "- [Testing policy](feedback_testing.md) — Integration tests hit a real DB\n",
        );
        write(&memory.join("feedback_testing.md"), TESTING);
    }

    fn form(description: &str, body: &str) -> Value {
        json!({ "name": "Testing policy", "description": description, "type": "feedback", "body": body })
    }

    #[test]
    fn list_projects_sends_the_engines_summaries_in_camel_case() {
        let shell = Shell::with_home(|home| {
            demo_project(home);
            write(
                &home.join("projects/-work-demo/memory/b.md"),
                "no frontmatter\n",
            );
        });
        let projects = shell.invoke("list_projects", json!({})).expect("listed");
        let projects = projects.as_array().expect("a JSON array");
        assert_eq!(projects.len(), 1, "{projects:?}");
        assert_eq!(projects[0]["name"], "-work-demo");
        assert_eq!(
            projects[0]["memoryFiles"], 2,
            "MEMORY.md is the index, not a memory: {projects:?}"
        );
        assert!(
            projects[0]["lastActivity"].is_string(),
            "keys are camelCase and times are ISO strings: {projects:?}"
        );
        assert!(
            projects[0]["lint"]["errors"].as_u64() > Some(0),
            "b.md has no frontmatter, which lint counts as an error: {projects:?}"
        );
    }

    #[test]
    fn engine_failures_arrive_as_kind_and_message() {
        // `projects` is a file, so listing it fails with an I/O error naming the path.
        let shell = Shell::with_home(|home| write(&home.join("projects"), "not a directory"));
        let error = shell
            .invoke("list_projects", json!({}))
            .expect_err("listing a file must fail");
        assert_eq!(error["kind"], "io", "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&shell.home().join("projects").display().to_string()),
            "the message names the path: {message}"
        );
    }

    #[test]
    fn app_info_reports_the_homes_in_use() {
        let shell = Shell::new();
        let info = shell.invoke("app_info", json!({})).expect("answered");
        assert_eq!(info["claudeHome"], shell.home().display().to_string());
        assert_eq!(
            info["engramHome"],
            shell.engram_home().display().to_string()
        );
        assert_eq!(info["demo"], Value::Null, "the home exists: no demo");
    }

    #[test]
    fn remote_pages_cannot_call_commands() {
        let shell = Shell::new();
        let refused = invoke_from(
            &shell.window(),
            "https://example.com",
            "list_projects",
            json!({}),
        )
        .expect_err("only the bundled UI may call the shell");
        assert!(
            refused
                .as_str()
                .is_some_and(|text| text.contains("not allowed")),
            "{refused}"
        );
        assert!(
            shell.invoke("list_projects", json!({})).is_ok(),
            "the same window's bundled UI may"
        );
    }

    #[test]
    fn a_project_is_a_name_never_a_path() {
        let shell = Shell::with_home(demo_project);
        for project in ["../claude/projects/-work-demo", "/etc", ".."] {
            let error = shell
                .invoke("open_project", json!({ "project": project }))
                .expect_err("a path is not a project");
            assert_eq!(error["kind"], "pathDenied", "{project}: {error}");
        }
    }

    /// Every command that names a project, a file, a session or an agent dir, called with names
    /// that lead out of the Claude home (traversal, absolute paths, an agent store name aimed
    /// at `/etc`): each refused, and nothing outside the home read into the answer or written.
    #[test]
    fn no_command_reaches_a_path_outside_the_claude_home() {
        let shell = Shell::with_home(demo_project);
        let outside = shell.home().parent().expect("temp root").join("outside.md");
        write(&outside, "---\nname: Outside\n---\nnot yours\n");
        let outside_text = outside.to_string_lossy().into_owned();
        let projects = [
            "../claude/projects/-work-demo".to_owned(),
            "/etc".to_owned(),
            "..".to_owned(),
            "agent:user:../../x:".to_owned(),
            "agent:project:x:/etc".to_owned(),
            "agent:user:x:/tmp".to_owned(),
        ];
        let files = [
            "../../../outside.md".to_owned(),
            outside_text.clone(),
            "../MEMORY.md".to_owned(),
            "a/../../x.md".to_owned(),
        ];
        let form = form("d", "b");
        let mut calls: Vec<(&str, Value)> = Vec::new();
        for project in &projects {
            for command in [
                "open_project",
                "lint_project",
                "list_sessions",
                "team_status",
                "team_secrets",
                "redact_team_secrets",
                "watch_project",
            ] {
                calls.push((command, json!({ "project": project })));
            }
            calls.push((
                "read_memory",
                json!({ "project": project, "file": "feedback_testing.md" }),
            ));
        }
        for file in &files {
            let project = "-work-demo";
            calls.push(("read_memory", json!({ "project": project, "file": file })));
            calls.push(("file_history", json!({ "project": project, "file": file })));
            calls.push((
                "save_memory",
                json!({ "project": project, "file": file, "opened": "", "form": form }),
            ));
            calls.push((
                "create_memory",
                json!({ "project": project, "file": file, "form": form }),
            ));
            calls.push((
                "delete_memory",
                json!({ "project": project, "file": file, "opened": null }),
            ));
            calls.push((
                "rename_memory",
                json!({ "project": project, "file": "feedback_testing.md", "newFile": file, "opened": null }),
            ));
            calls.push((
                "read_transcript",
                json!({ "project": project, "session": file, "offset": 0, "limit": 10 }),
            ));
        }
        for project in ["/etc", "/", "../x"] {
            calls.push((
                "initialize_agent",
                json!({ "agentType": "x", "scope": "project", "project": project }),
            ));
            calls.push((
                "stage_snapshot_merge",
                json!({ "agentType": "x", "scope": "project", "project": project, "propose": false }),
            ));
        }
        calls.push((
            "initialize_agent",
            json!({ "agentType": "../../x", "scope": "user", "project": "/" }),
        ));
        for (command, args) in &calls {
            let error = shell
                .invoke(command, args.clone())
                .expect_err(&format!("{command} {args} was accepted"));
            assert!(
                matches!(
                    error["kind"].as_str(),
                    Some("pathDenied" | "invalidInput" | "notFound")
                ),
                "{command} {args}: {error}"
            );
            assert!(
                !error.to_string().contains("not yours"),
                "{command}: {error}"
            );
        }
        assert_eq!(
            fs::read_to_string(&outside).expect("outside"),
            "---\nname: Outside\n---\nnot yours\n",
            "nothing outside was written"
        );
        let root = shell.home().parent().expect("temp root").to_path_buf();
        let names: Vec<String> = fs::read_dir(&root)
            .expect("root")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| ["claude", "engram", "outside.md"].contains(&n.as_str())),
            "nothing created beside the home: {names:?}"
        );
        assert!(!root.join("x.md").exists() && !Path::new("/etc/x").exists());
    }

    #[test]
    fn open_project_sends_the_index_and_every_memory_and_is_remembered() {
        let shell = Shell::with_home(demo_project);
        let snapshot = shell
            .invoke("open_project", json!({ "project": "-work-demo" }))
            .expect("opened");
        assert_eq!(snapshot["exists"], true);
        assert_eq!(snapshot["index"]["lines"], 1);
        assert_eq!(
            snapshot["index"]["entries"][0]["file"],
            "feedback_testing.md"
        );
        assert_eq!(snapshot["memories"][0]["type"], "feedback");
        let info = shell.invoke("app_info", json!({})).expect("answered");
        assert_eq!(info["lastProject"], "-work-demo", "reopened at next start");
    }

    #[test]
    fn read_memory_renders_the_body_without_live_html() {
        let shell = Shell::with_home(demo_project);
        let document = shell
            .invoke(
                "read_memory",
                json!({ "project": "-work-demo", "file": "feedback_testing.md" }),
            )
            .expect("read");
        assert_eq!(document["memory"]["content"], TESTING);
        let html = document["html"].as_str().unwrap_or_default();
        assert!(html.contains("No mocks."), "{html}");
        assert!(
            !html.contains("<script>"),
            "raw HTML is shown as text: {html}"
        );
    }

    #[test]
    fn save_writes_the_file_and_its_index_line_and_refuses_a_stale_buffer() {
        let shell = Shell::with_home(demo_project);
        let args = |opened: &str, description: &str| {
            json!({
                "project": "-work-demo",
                "file": "feedback_testing.md",
                "opened": opened,
                "form": form(description, "Hit a real database."),
            })
        };
        let saved = shell
            .invoke("save_memory", args(TESTING, "Tests use a real database"))
            .expect("saved");
        assert_eq!(saved["file"], "feedback_testing.md");
        let index = fs::read_to_string(demo_memory_dir(&shell).join("MEMORY.md")).expect("index");
        assert!(
            index.contains("(feedback_testing.md) — Tests use a real database"),
            "the index line follows the description: {index}"
        );
        let on_disk = fs::read_to_string(demo_memory_dir(&shell).join("feedback_testing.md"))
            .expect("memory file");
        assert!(on_disk.contains("Hit a real database."), "{on_disk}");

        // The editor still holds the first version: its save must not overwrite the second.
        let error = shell
            .invoke("save_memory", args(TESTING, "Stale"))
            .expect_err("the disk moved since the buffer was opened");
        assert_eq!(error["kind"], "conflict", "{error}");
        let after = fs::read_to_string(demo_memory_dir(&shell).join("feedback_testing.md"))
            .expect("memory file");
        assert_eq!(after, on_disk, "a refused save writes nothing");

        let details = shell
            .invoke(
                "memory_conflict",
                json!({ "project": "-work-demo", "file": "feedback_testing.md",
                        "form": form("Stale", "Hit a real database.") }),
            )
            .expect("both sides");
        assert_eq!(details["disk"], on_disk);
        assert!(details["mine"]
            .as_str()
            .unwrap_or_default()
            .contains("Stale"));
    }

    #[test]
    fn revert_puts_an_old_version_back_as_a_new_version() {
        let shell = Shell::with_home(demo_project);
        let file = demo_memory_dir(&shell).join("feedback_testing.md");
        shell
            .invoke(
                "save_memory",
                json!({ "project": "-work-demo", "file": "feedback_testing.md",
                        "opened": TESTING, "form": form("Changed", "Changed body.") }),
            )
            .expect("saved");
        let versions = shell
            .invoke(
                "file_history",
                json!({ "project": "-work-demo", "file": "feedback_testing.md" }),
            )
            .expect("history");
        let versions = versions.as_array().cloned().unwrap_or_default();
        assert_eq!(versions.len(), 2, "the original and the save: {versions:?}");
        let original = versions[1]["version"]
            .as_str()
            .unwrap_or_default()
            .to_owned();

        let change = shell
            .invoke(
                "version_change",
                json!({ "project": "-work-demo", "version": versions[0]["version"] }),
            )
            .expect("what the save changed");
        assert!(
            change["diff"]
                .as_str()
                .unwrap_or_default()
                .contains("+Changed body."),
            "{change}"
        );

        let reverted = shell
            .invoke(
                "revert_version",
                json!({ "project": "-work-demo", "version": original }),
            )
            .expect("reverted");
        assert_eq!(reverted["actor"], "user");
        assert_eq!(fs::read_to_string(&file).expect("file"), TESTING);
    }

    #[test]
    fn versions_of_another_project_are_out_of_reach() {
        let shell = Shell::with_home(|home| {
            demo_project(home);
            write(
                &home.join("projects/-work-other/memory/x.md"),
                "---\nname: x\ndescription: x\ntype: user\n---\nx\n",
            );
        });
        let other = shell
            .invoke(
                "file_history",
                json!({ "project": "-work-other", "file": "x.md" }),
            )
            .expect("history of the other project");
        let version = other[0]["version"].clone();
        let error = shell
            .invoke(
                "revert_version",
                json!({ "project": "-work-demo", "version": version }),
            )
            .expect_err("a version of -work-other, asked for as -work-demo");
        assert_eq!(error["kind"], "pathDenied", "{error}");
    }

    #[test]
    fn a_fix_is_planned_then_applied_to_the_named_projects_dir_only() {
        let shell = Shell::with_home(|home| {
            demo_project(home);
            // A dangling pointer: the index links a file that does not exist.
            write(
                &home.join("projects/-work-demo/memory/MEMORY.md"),
                "- [Testing policy](feedback_testing.md) — Integration tests hit a real DB\n\
                 - [Gone](gone.md) — no such file\n",
            );
        });
        let plan = shell
            .invoke(
                "plan_fix",
                json!({ "project": "-work-demo",
                        "target": { "rule": "dangling-pointer", "file": "MEMORY.md", "line": 2 } }),
            )
            .expect("planned");
        let changes = plan["changes"].clone();
        assert!(
            changes[0]["diff"]
                .as_str()
                .unwrap_or_default()
                .contains("-- [Gone](gone.md)"),
            "the plan shows its diff before anything is written: {plan}"
        );
        let index = demo_memory_dir(&shell).join("MEMORY.md");
        assert!(fs::read_to_string(&index)
            .unwrap_or_default()
            .contains("gone.md"));

        shell
            .invoke(
                "apply_fix",
                json!({ "project": "-work-demo", "changes": changes }),
            )
            .expect("applied");
        assert!(
            !fs::read_to_string(&index)
                .unwrap_or_default()
                .contains("gone.md"),
            "the dangling line is gone"
        );
    }

    #[test]
    fn external_changes_to_the_watched_project_reach_the_window() {
        let shell = Shell::with_home(demo_project);
        let (sender, changes) = mpsc::channel();
        shell
            .window()
            .app_handle()
            .listen(events::MEMORY_DIR_CHANGED, move |event| {
                let _ = sender.send(event.payload().to_owned());
            });
        let watching = shell
            .invoke("watch_project", json!({ "project": "-work-demo" }))
            .expect("watching");
        assert_eq!(watching, true);

        write(
            &demo_memory_dir(&shell).join("project_new.md"),
            "---\nname: New\ndescription: from outside\ntype: project\n---\nx\n",
        );
        let payload = changes
            .recv_timeout(Duration::from_secs(5))
            .expect("an event within the debounce window");
        let payload: Value = serde_json::from_str(&payload).expect("JSON payload");
        assert_eq!(payload["project"], "-work-demo");
        assert_eq!(payload["changes"][0]["file"], "project_new.md");
        assert_eq!(payload["changes"][0]["kind"], "created");

        // Engram's own writes are not echoed back.
        shell
            .invoke(
                "save_memory",
                json!({ "project": "-work-demo", "file": "feedback_testing.md",
                        "opened": TESTING, "form": form("Own write", "Own body.") }),
            )
            .expect("saved");
        assert!(
            changes.recv_timeout(Duration::from_secs(1)).is_err(),
            "the app's own save must not come back as an external change"
        );
        shell.invoke("unwatch_project", json!({})).expect("stopped");
    }
}
