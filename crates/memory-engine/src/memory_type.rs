//! The four memory types of Claude Code's taxonomy (`FORMATS.md` §3). Anything else found in a
//! file is "no type": readers keep the file, writers refuse the value.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    User,
    Feedback,
    Project,
    Reference,
}

impl MemoryType {
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The spelling Claude Code writes in frontmatter.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    /// Reads a frontmatter value. Claude Code matches the exact lowercase words; surrounding
    /// whitespace is already gone after YAML parsing, so nothing is normalised here.
    pub fn parse(value: &str) -> Option<MemoryType> {
        MemoryType::ALL.into_iter().find(|t| t.as_str() == value)
    }
}

impl FromStr for MemoryType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemoryType::parse(s).ok_or_else(|| {
            Error::InvalidInput(format!(
                "unknown memory type {s:?}: expected one of user, feedback, project, reference"
            ))
        })
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly_the_four_lowercase_words() {
        for t in MemoryType::ALL {
            assert_eq!(t.as_str().parse::<MemoryType>().expect("known type"), t);
        }
        for bad in ["User", "PROJECT", "note", "", " user"] {
            let err = bad.parse::<MemoryType>().expect_err("must be rejected");
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput, "{bad:?}");
        }
    }

    #[test]
    fn serializes_lowercase() {
        let json = serde_json::to_string(&MemoryType::Feedback).expect("serialize");
        assert_eq!(json, "\"feedback\"");
    }
}
