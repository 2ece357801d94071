//! `engram agents`: every subagent's memory — user, project and local scopes — with the state of
//! its team snapshot (`none` | `initialize` | `prompt-update`); `--json` prints `[{"agentType",
//! "scope", "dir", "files", "snapshot", "snapshotUpdatedAt", "syncedFrom", …}]`.
//! `engram agents sync AGENT [--scope S] --initialize | --merge | --replace` takes the team's
//! snapshot in (`--merge` stages a change set for `engram changes`; with `--propose`, the
//! configured model proposes a merge of each file both sides changed); `engram agents publish
//! AGENT` writes local memory out as a snapshot for the team to commit.

use memory_engine::agent_memory::{AgentScope, SnapshotAction};
use memory_engine::llm::{Caller, ModelJob};
use memory_engine::Result;

use super::{Context, Status};
use crate::output::{self, Align, Cell, Color, Style, Table};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum AgentsCommand {
    /// Take the team's snapshot of AGENT into its memory
    Sync(SyncArgs),
    /// Write AGENT's memory out as a snapshot (files + snapshot.json) for the team to commit
    Publish(PublishArgs),
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("how").required(true).multiple(false)))]
pub struct SyncArgs {
    /// The agent type (as in `.claude/agents/<type>.md`)
    pub agent: String,
    /// The scope of the memory to sync: user, project or local
    #[arg(long, default_value = "project")]
    pub scope: String,
    /// Copy the snapshot into an agent memory that has none yet
    #[arg(long, group = "how")]
    pub initialize: bool,
    /// Prepare a merge for review (`engram changes show ID`); nothing is overwritten
    #[arg(long, group = "how")]
    pub merge: bool,
    /// Delete the local memory files, then copy the snapshot
    #[arg(long, group = "how")]
    pub replace: bool,
    /// With --merge: the model proposes a merge of each file both sides changed (still
    /// reviewed); without it, the snapshot's version is proposed and yours shown beside it
    #[arg(long, requires = "merge")]
    pub propose: bool,
    #[command(flatten)]
    pub llm: super::recall::LlmArgs,
}

#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    pub agent: String,
    #[arg(long, default_value = "project")]
    pub scope: String,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let engine = &context.engine;
    let cwd = context.project()?;
    match args.command {
        None => {
            let agents = engine.list_agent_memories(std::slice::from_ref(&cwd))?;
            if context.json() {
                output::print_json(&agents)?;
                return Ok(Status::Success);
            }
            if agents.is_empty() {
                output::print("no agent memory\n");
                return Ok(Status::Success);
            }
            let style = Style::detect();
            let mut table = Table::new(&[
                ("AGENT", Align::Left),
                ("SCOPE", Align::Left),
                ("FILES", Align::Right),
                ("SNAPSHOT", Align::Left),
                ("DIR", Align::Left),
            ]);
            for agent in &agents {
                let snapshot = match agent.snapshot {
                    SnapshotAction::None => Cell::colored("-", Color::Dim),
                    SnapshotAction::Initialize => Cell::colored("initialize", Color::Cyan),
                    SnapshotAction::PromptUpdate => {
                        Cell::colored("update available", Color::Yellow)
                    }
                };
                table.row(vec![
                    Cell::new(agent.agent_type.clone()),
                    Cell::new(format!("{:?}", agent.scope).to_lowercase()),
                    Cell::new(agent.files.to_string()),
                    snapshot,
                    Cell::colored(agent.dir.display().to_string(), Color::Dim),
                ]);
            }
            output::print(&table.render(style));
            Ok(Status::Success)
        }
        Some(AgentsCommand::Sync(args)) => {
            let scope: AgentScope = args.scope.parse()?;
            if args.merge {
                let project = context.transcripts_project()?;
                let staged = if args.propose {
                    let caller = Caller::new(ModelJob::Merge, &project);
                    let Some(client) = engine
                        .llm_client_for(&args.llm.overrides()?, &caller)?
                        .client
                    else {
                        return Err(memory_engine::Error::InvalidInput(
                            "--propose needs a model: set [llm] provider in config.toml, or pass \
                             --provider"
                                .to_owned(),
                        ));
                    };
                    let (staged, proposals) = super::recall::runtime()?.block_on(
                        engine.stage_snapshot_merge_proposed(
                            &args.agent,
                            scope,
                            &cwd,
                            &project,
                            client.as_ref(),
                            &memory_engine::llm::CancellationToken::new(),
                        ),
                    )?;
                    if proposals.refused > 0 {
                        output::warning_line(&format!(
                            "{} proposed merge(s) were not memory files: the snapshot's version \
                             is proposed for those",
                            proposals.refused
                        ));
                    }
                    staged
                } else {
                    engine.stage_snapshot_merge(&args.agent, scope, &cwd, &project)?
                };
                if context.json() {
                    output::print_json(&staged)?;
                } else {
                    match &staged {
                        Some(set) => output::print(&format!(
                            "{}\nreview it: engram changes show {}\n",
                            set.summary, set.id
                        )),
                        None => output::print(
                            "nothing to merge: the snapshot matches; marked as synced\n",
                        ),
                    }
                }
                return Ok(Status::Success);
            }
            let agent = if args.initialize {
                engine.initialize_agent_memory(&args.agent, scope, &cwd)?
            } else {
                engine.replace_agent_memory(&args.agent, scope, &cwd)?
            };
            if context.json() {
                output::print_json(&agent)?;
            } else {
                output::print(&format!(
                    "{} {} from the snapshot of {}\n",
                    agent.dir.display(),
                    if args.initialize {
                        "initialized"
                    } else {
                        "replaced"
                    },
                    agent.synced_from.as_deref().unwrap_or("?")
                ));
            }
            Ok(Status::Success)
        }
        Some(AgentsCommand::Publish(args)) => {
            let report = engine.publish_agent_memory(&args.agent, args.scope.parse()?, &cwd)?;
            if context.json() {
                output::print_json(&report)?;
            } else {
                let mut text = format!(
                    "published {} to {} ({})\n",
                    output::plural(report.published.len(), "file"),
                    report.snapshot.display(),
                    report.updated_at
                );
                for refused in &report.refused {
                    let place = if refused.in_name {
                        "its name".to_owned()
                    } else {
                        format!("line {}", refused.line)
                    };
                    text.push_str(&format!(
                        "  refused {}: {place} matches secret rule {}\n",
                        refused.file, refused.rule
                    ));
                }
                output::print(&text);
            }
            Ok(Status::Success)
        }
    }
}
