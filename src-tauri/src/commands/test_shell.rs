//! The shell on Tauri's mock runtime for the command tests: a temp dir holding a Claude home and an Engram home, the app's real builder,
//! configuration and capabilities (so a command the window is not allowed to call fails here
//! too), and `invoke` as the bundled UI sends it.

use std::fs;
use std::path::{Path, PathBuf};

use memory_engine::{Engine, Environment};
use serde_json::Value;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, MockRuntime};
use tauri::webview::{InvokeRequest, WebviewWindowBuilder};
use tauri::{Manager, WebviewWindow};

use crate::state::AppState;
use crate::{builder, MAIN_WINDOW};

/// The origin of the bundled UI, which the capability allows.
const APP_ORIGIN: &str = if cfg!(windows) {
    "http://tauri.localhost"
} else {
    "tauri://localhost"
};

/// The real fixtures and the way to copy them: the engine's, one helper for every test.
pub use memory_engine::testing::fixtures::{copy_tree, REAL_FIXTURES};

pub struct Shell {
    tmp: tempfile::TempDir,
    window: WebviewWindow<MockRuntime>,
}

impl Shell {
    /// An empty Claude home; no environment variables (no keys, no base URLs).
    pub fn new() -> Shell {
        Shell::with_home(|_| {})
    }

    /// A shell over a Claude home first filled by `fill`.
    pub fn with_home(fill: impl FnOnce(&Path)) -> Shell {
        Shell::with_env(Environment::empty(), fill)
    }

    /// [`Shell::with_home`] with the engine reading `env` as its process environment.
    pub fn with_env(env: Environment, fill: impl FnOnce(&Path)) -> Shell {
        let tmp = tempfile::tempdir().expect("temp dir");
        let home = tmp.path().join("claude");
        fs::create_dir_all(&home).expect("claude home");
        fill(&home);
        let engine = Engine::builder(env)
            .claude_home(&home)
            .engram_home(tmp.path().join("engram"))
            .build();
        let app = builder(tauri::test::mock_builder(), AppState::new(engine, None))
            .build(tauri::generate_context!())
            .expect("the shell builds on the mock runtime");
        let window = WebviewWindowBuilder::new(&app, MAIN_WINDOW, Default::default())
            .build()
            .expect("a mock main window");
        // The app must outlive the test's requests; leaking it is fine in a test process.
        std::mem::forget(app);
        Shell { tmp, window }
    }

    pub fn home(&self) -> PathBuf {
        self.tmp.path().join("claude")
    }

    pub fn engram_home(&self) -> PathBuf {
        self.tmp.path().join("engram")
    }

    /// Sends `cmd` with `args` as the UI would; `Err` holds the rejection.
    pub fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke(&self.window, cmd, args)
    }

    /// A handle that can invoke from another thread (to cancel a running command).
    pub fn window(&self) -> WebviewWindow<MockRuntime> {
        self.window.clone()
    }
}

pub fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    invoke_from(window, APP_ORIGIN, cmd, args)
}

/// Sends `cmd` as a page loaded from `origin` would (the capability allows only the bundled UI).
pub fn invoke_from(
    window: &WebviewWindow<MockRuntime>,
    origin: &str,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: origin.parse().expect("a valid url"),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: window.app_handle().invoke_key().to_string(),
    };
    get_ipc_response(window, request)
        .map(|body| body.deserialize::<Value>().expect("responses are JSON"))
}
