//! The desktop app's command line: `engram-app [--claude-dir DIR]`.
//!
//! One option does not justify an argument-parsing dependency, so it is parsed by hand, strictly:
//! an unknown argument is an error rather than silently ignored, because a mistyped
//! `--claude-dir` would otherwise show the user's real `~/.claude` where they expected another.
//! Without the flag the engine falls back to `$CLAUDE_CONFIG_DIR`, then `~/.claude`. When the home
//! chosen that way does not exist (Claude Code never ran here), the app shows the bundled demo
//! home instead and says so ([`LaunchOptions::open_home`]).

use std::ffi::OsString;
use std::path::PathBuf;

use memory_engine::environment::default_managed_settings_sources;
use memory_engine::{Engine, Environment};

use crate::state::DemoHome;

pub const USAGE: &str = "\
Usage: engram-app [--claude-dir DIR]

Options:
  --claude-dir DIR  Claude Code's config dir [default: $CLAUDE_CONFIG_DIR, else ~/.claude]
  -h, --help        Print this help";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Launch {
    Run(LaunchOptions),
    Help,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// `--claude-dir`, made absolute against the working directory at launch.
    pub claude_dir: Option<PathBuf>,
}

/// A command line the app does not understand.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

impl Launch {
    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Launch, UsageError> {
        let mut options = LaunchOptions::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let text = arg.to_string_lossy();
            let dir = if text == "-h" || text == "--help" {
                return Ok(Launch::Help);
            } else if text == "--claude-dir" {
                args.next()
                    .ok_or_else(|| UsageError("--claude-dir needs a directory".into()))?
            } else if let Some(value) = text.strip_prefix("--claude-dir=") {
                OsString::from(value)
            } else {
                return Err(UsageError(format!("unexpected argument '{text}'")));
            };
            if dir.is_empty() {
                return Err(UsageError("--claude-dir needs a directory".into()));
            }
            let dir = PathBuf::from(dir);
            let dir = std::path::absolute(&dir).unwrap_or(dir);
            options.claude_dir = Some(dir);
        }
        Ok(Launch::Run(options))
    }
}

impl LaunchOptions {
    /// The engine these options describe, over the given environment; the real process passes
    /// [`Environment::from_process`], so `CLAUDE_CONFIG_DIR` applies when no flag is given.
    pub fn engine(&self, env: Environment) -> Engine {
        let sources = default_managed_settings_sources(&env);
        let mut builder = Engine::builder(env).managed_sources(sources);
        if let Some(dir) = &self.claude_dir {
            builder = builder.claude_home(dir);
        }
        builder.build()
    }

    /// The engine to show: over the configured Claude home when it exists, else over the demo
    /// home (laid out in Engram's data dir on first use; the user's edits to it survive), with
    /// the home that was missing. If even the demo cannot be laid out, the missing home is kept
    /// and the window shows its empty state.
    pub fn open_home(&self, env: Environment) -> (Engine, Option<DemoHome>) {
        let engine = self.engine(env.clone());
        let missing_home = engine.claude_home();
        if missing_home.exists() {
            return (engine, None);
        }
        match engine.ensure_demo_home() {
            Ok(demo) => {
                let options = LaunchOptions {
                    claude_dir: Some(demo),
                };
                (options.engine(env), Some(DemoHome { missing_home }))
            }
            Err(error) => {
                crate::report(&engine, &format!("no demo home: {error}"));
                (engine, None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Launch, UsageError> {
        Launch::parse(args.iter().map(OsString::from))
    }

    fn run_options(args: &[&str]) -> LaunchOptions {
        match parse(args) {
            Ok(Launch::Run(options)) => options,
            other => panic!("{args:?} should launch the app, got {other:?}"),
        }
    }

    #[test]
    fn claude_dir_is_taken_in_both_spellings() {
        for args in [
            &["--claude-dir", "/tmp/home"][..],
            &["--claude-dir=/tmp/home"],
        ] {
            assert_eq!(
                run_options(args).claude_dir,
                Some(PathBuf::from("/tmp/home")),
                "{args:?}"
            );
        }
    }

    #[test]
    fn relative_claude_dir_is_made_absolute() {
        let dir = run_options(&["--claude-dir", "rel/home"])
            .claude_dir
            .unwrap_or_default();
        assert!(dir.is_absolute(), "{}", dir.display());
        assert!(dir.ends_with("rel/home"), "{}", dir.display());
    }

    #[test]
    fn no_arguments_defer_to_the_environment() {
        let options = run_options(&[]);
        assert_eq!(options.claude_dir, None);
        let env = Environment::empty()
            .with("HOME", "/home/u")
            .with("CLAUDE_CONFIG_DIR", "/from/env");
        assert_eq!(
            options.engine(env).claude_home(),
            PathBuf::from("/from/env")
        );
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let env = Environment::empty().with("CLAUDE_CONFIG_DIR", "/from/env");
        let engine = run_options(&["--claude-dir", "/from/flag"]).engine(env);
        assert_eq!(engine.claude_home(), PathBuf::from("/from/flag"));
    }

    #[test]
    fn unknown_or_incomplete_arguments_are_refused() {
        for args in [
            &["--claude-dri", "/x"][..],
            &["--claude-dir"],
            &["--claude-dir="],
            &["x"],
        ] {
            assert!(parse(args).is_err(), "{args:?} should be a usage error");
        }
    }

    #[test]
    fn a_missing_home_opens_the_demo_home_and_says_which_was_missing() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let missing = tmp.path().join("no-such-home");
        let env = Environment::empty().with(
            "ENGRAM_HOME",
            tmp.path().join("engram").display().to_string(),
        );
        let options = LaunchOptions {
            claude_dir: Some(missing.clone()),
        };
        let (engine, demo) = options.open_home(env);
        assert_eq!(
            demo,
            Some(DemoHome {
                missing_home: missing
            })
        );
        assert!(
            engine.claude_home().starts_with(tmp.path().join("engram")),
            "the demo lives in Engram's home: {}",
            engine.claude_home().display()
        );
        let projects = engine.list_projects().expect("the demo home lists");
        assert!(!projects.is_empty(), "the demo home has projects to show");
    }

    #[test]
    fn an_existing_home_is_used_as_is() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let env = Environment::empty().with(
            "ENGRAM_HOME",
            tmp.path().join("engram").display().to_string(),
        );
        let options = LaunchOptions {
            claude_dir: Some(tmp.path().to_path_buf()),
        };
        let (engine, demo) = options.open_home(env);
        assert_eq!(demo, None);
        assert_eq!(engine.claude_home(), tmp.path());
        assert!(!tmp.path().join("engram").exists(), "no demo laid out");
    }

    #[test]
    fn help_wins() {
        assert_eq!(
            parse(&["--claude-dir", "/x", "--help"]).ok(),
            Some(Launch::Help)
        );
    }
}
