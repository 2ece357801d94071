//! `engram generate bash|zsh|fish` and `engram generate man --dir DIR` (hidden): the shell
//! completions (on stdout) and the man pages (`engram.1` and one per subcommand, as
//! `engram.1` refers to them: `engram-dream.1`, `engram-dream-run.1`, …), made from this very
//! command definition. `make package` puts them into the packages, so they never drift from the
//! flags the binary really takes.

use std::path::PathBuf;

use clap::ValueEnum;
use clap_complete::Shell;

use super::Status;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to print
    #[arg(value_enum)]
    pub what: Generated,
    /// Where the man pages go (an existing directory)
    #[arg(long, value_name = "DIR", required_if_eq("what", "man"))]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generated {
    /// Completions for bash (`/usr/share/bash-completion/completions/engram`)
    Bash,
    /// Completions for zsh (`/usr/share/zsh/vendor-completions/_engram`)
    Zsh,
    /// Completions for fish (`/usr/share/fish/vendor_completions.d/engram.fish`)
    Fish,
    /// The man pages, roff (`/usr/share/man/man1/`), written into --dir
    Man,
}

/// Prints `what` for `command`, the `engram` command as clap defines it.
pub fn run(mut command: clap::Command, args: Args) -> memory_engine::Result<Status> {
    let mut text = Vec::new();
    let name = command.get_name().to_owned();
    let shell = match args.what {
        Generated::Bash => Shell::Bash,
        Generated::Zsh => Shell::Zsh,
        Generated::Fish => Shell::Fish,
        Generated::Man => {
            let dir = args.dir.unwrap_or_default();
            clap_mangen::generate_to(command, &dir)
                .map_err(|e| memory_engine::Error::io(&dir, e))?;
            return Ok(Status::Success);
        }
    };
    clap_complete::generate(shell, &mut command, name, &mut text);
    output::print(&String::from_utf8_lossy(&text));
    Ok(Status::Success)
}
