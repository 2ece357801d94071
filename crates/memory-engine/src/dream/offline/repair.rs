//! Step 0 of the offline dream: broken frontmatter repaired where the fix is certain
//! ([`crate::frontmatter::repair`]: a quote closed, a block closed before its first blank line or
//! heading), so Claude Code and every later step read the memory's name, description and type;
//! anything else is named for a person, never guessed.

use chrono::TimeZone;

use super::{names, plural, Planner};
use crate::error::Result;
use crate::frontmatter::{self, Repair};
use crate::lint::{Severity, BAD_FRONTMATTER};

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 0.
    pub(super) fn repair_frontmatter(&mut self) -> Result<()> {
        let mut repaired = Vec::new();
        for i in self.live() {
            let rel = self.files[i].rel.clone();
            let Some(text) = self.set.read(&rel)? else {
                continue;
            };
            match frontmatter::repair(&text) {
                Repair::Sound => {}
                Repair::Fixed { text, what } => {
                    let fm = frontmatter::parse_document(&text).frontmatter;
                    self.set
                        .stage_write(&rel, text, &format!("frontmatter repaired: {what}"))?;
                    // What it was all along, now that it can be read: a repaired feedback
                    // memory is protected like any other.
                    self.files[i].memory_type = fm.memory_type;
                    self.protect(i);
                    repaired.push(rel);
                }
                Repair::NeedsPerson(why) => {
                    self.flag(BAD_FRONTMATTER, Severity::Error, &rel, Some(1), why);
                }
            }
        }
        if !repaired.is_empty() {
            self.notes.push(format!(
                "frontmatter repaired in {} {} ({})",
                repaired.len(),
                plural(repaired.len(), "file", "files"),
                names(&repaired)
            ));
        }
        Ok(())
    }
}
