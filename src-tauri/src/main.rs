//! `engram-app`: the desktop app's entry point. Everything but argument handling and exit codes
//! lives in the library (`engram_app`), so tests can build the same shell without a process.

// No console window behind the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::process::ExitCode;

use engram_app::launch::{Launch, USAGE};
use memory_engine::Environment;

fn main() -> ExitCode {
    match Launch::parse(std::env::args_os().skip(1)) {
        Ok(Launch::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Launch::Run(options)) => match engram_app::run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                // A failed start (no WebView, no display) must be findable without a console.
                let engine = options.engine(Environment::from_process());
                engram_app::report(&engine, &error.to_string());
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            eprintln!("engram-app: {error}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
