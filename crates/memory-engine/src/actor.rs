//! Who made a change: the [`Actor`] every history version and every applied change set names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Who made a change, as recorded in history.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    /// The person, through the app or the CLI (edits, accepted reviews, reverts).
    User,
    /// Anything Engram did not do itself: Claude Code, an editor, git.
    External,
    /// A consolidation run.
    Dream,
    /// Memory extraction after a turn.
    Extract,
    /// An agent-memory snapshot initialisation or merge.
    Snapshot,
    /// A teammate's change, pulled through team sync.
    Team,
    /// Claude Code's own dream: what changed while another process held `.consolidate-lock`.
    #[serde(rename = "claude-dream")]
    ClaudeDream,
    /// An agent saving through Engram's MCP server (`memory_remember`).
    Mcp,
    /// This person's own memory from another machine, pulled through personal sync.
    Sync,
}

impl Actor {
    pub const ALL: [Actor; 9] = [
        Actor::User,
        Actor::External,
        Actor::Dream,
        Actor::Extract,
        Actor::Snapshot,
        Actor::Team,
        Actor::ClaudeDream,
        Actor::Mcp,
        Actor::Sync,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::External => "external",
            Actor::Dream => "dream",
            Actor::Extract => "extract",
            Actor::Snapshot => "snapshot",
            Actor::Team => "team",
            Actor::ClaudeDream => "claude-dream",
            Actor::Mcp => "mcp",
            Actor::Sync => "sync",
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Actor {
    type Err = Error;

    fn from_str(s: &str) -> Result<Actor> {
        Actor::ALL
            .into_iter()
            .find(|actor| actor.as_str() == s)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown actor `{s}` (expected user, external, dream, extract, snapshot, team, claude-dream, mcp or sync)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn actors_parse_and_serialize_in_lowercase() {
        for actor in Actor::ALL {
            assert_eq!(actor.as_str().parse::<Actor>().expect("parse"), actor);
            assert_eq!(
                serde_json::to_value(actor).expect("serialize"),
                serde_json::Value::String(actor.as_str().to_owned())
            );
        }
        assert_eq!(
            "robot".parse::<Actor>().expect_err("unknown").kind(),
            ErrorKind::InvalidInput
        );
    }
}
