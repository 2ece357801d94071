//! `engram search QUERY…`: memories of every project under the Claude home, and of every agent's
//! memory dir, matching all the words (case-insensitive; name, description, body, file name),
//! best first.

use memory_engine::{Result, SearchOptions};

use super::{Context, Status};
use crate::output::{self, type_color, type_label, Color, Style};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Words to look for; a memory must contain all of them
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// Show at most this many hits
    #[arg(long, default_value_t = SearchOptions::default().limit, value_name = "N")]
    pub limit: usize,
}

pub fn run(context: &Context, args: Args) -> Result<Status> {
    let query = args.query.join(" ");
    let hits = context
        .engine
        .search_memories(&query, &SearchOptions { limit: args.limit })?;
    if context.json() {
        output::print_json(&hits)?;
        return Ok(Status::Success);
    }
    let style = Style::detect();
    if hits.is_empty() {
        output::print(&format!(
            "no memory matches {query:?} in {}\n",
            context.engine.claude_home().join("projects").display()
        ));
        return Ok(Status::Success);
    }
    let mut text = String::new();
    for hit in &hits {
        let mut project = hit
            .project_path
            .as_ref()
            .map_or_else(|| hit.project.clone(), |p| p.display().to_string());
        if let Some(agent) = &hit.agent {
            let scope = format!("{:?}", agent.scope).to_lowercase();
            project = match &hit.project_path {
                Some(path) => format!(
                    "{} ({scope} agent memory) · {}",
                    agent.agent_type,
                    path.display()
                ),
                None => format!("{} ({scope} agent memory)", agent.agent_type),
            };
        }
        let title = hit.name.as_deref().unwrap_or(&hit.file);
        text.push_str(&format!(
            "{}  {}  {}\n",
            style.paint(Color::Bold, title),
            style.paint(type_color(hit.memory_type), type_label(hit.memory_type)),
            style.paint(Color::Dim, &format!("{project} · {}", hit.file)),
        ));
        text.push_str(&format!("    {}\n", style.clip(&hit.snippet, 160)));
    }
    output::print(&text);
    Ok(Status::Success)
}
