//! `engram where`: the project's memory dir, which rule chose it, its canonical git root and its
//! transcripts dir.

use memory_engine::{MemoryDirSource, Result};
use serde::Serialize;

use super::{absolute, Context, Status};
use crate::output::{self, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {}

/// `where`'s JSON: the engine's resolution, except that `--memory-dir` wins and says so.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    memory_dir: &'a std::path::Path,
    /// `env`, `settings`, `default`, or `flag` for `--memory-dir`.
    source: &'static str,
    git_root: Option<&'a std::path::Path>,
    transcripts_dir: &'a std::path::Path,
    settings_file: Option<&'a std::path::Path>,
    warnings: &'a [String],
}

pub fn run(context: &Context, _args: Args) -> Result<Status> {
    let resolution = context.resolution()?;
    let flag_dir = context.global.memory_dir.as_deref().map(absolute);
    let (source, why) = match (&flag_dir, resolution.source) {
        (Some(_), _) => ("flag", "given with --memory-dir".to_string()),
        (None, MemoryDirSource::Env) => {
            ("env", "from CLAUDE_COWORK_MEMORY_PATH_OVERRIDE".to_string())
        }
        (None, MemoryDirSource::Settings) => (
            "settings",
            match &resolution.settings_file {
                Some(file) => format!("autoMemoryDirectory in {}", file.display()),
                None => "autoMemoryDirectory in settings".to_string(),
            },
        ),
        (None, MemoryDirSource::Default) => (
            "default",
            "Claude Code's default for this project".to_string(),
        ),
    };
    let location = Location {
        memory_dir: flag_dir.as_deref().unwrap_or(&resolution.memory_dir),
        source,
        git_root: resolution.git_root.as_deref(),
        transcripts_dir: &resolution.transcripts_dir,
        settings_file: resolution.settings_file.as_deref(),
        warnings: &resolution.warnings,
    };
    if context.json() {
        output::print_json(&location)?;
        return Ok(Status::Success);
    }

    let style = Style::detect();
    let label = |text: &str| style.paint(Color::Bold, &format!("{text:<11}"));
    let missing = if location.memory_dir.is_dir() {
        String::new()
    } else {
        format!("  {}", style.paint(Color::Yellow, "(does not exist yet)"))
    };
    let git_root = location.git_root.map_or_else(
        || style.paint(Color::Dim, "not in a git repository"),
        |p| p.display().to_string(),
    );
    output::print(&format!(
        "{}  {}{missing}\n{}  {}\n{}  {git_root}\n{}  {}\n",
        label("memory dir"),
        location.memory_dir.display(),
        label(""),
        style.paint(Color::Dim, &why),
        label("git root"),
        label("transcripts"),
        location.transcripts_dir.display(),
    ));
    Ok(Status::Success)
}
