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

#[cfg(test)]
mod tests {
    use super::super::tests::plan;
    use crate::lint::BAD_FRONTMATTER;
    use crate::testing::fixtures::TempMemoryDir;

    #[test]
    fn a_dream_repairs_certain_frontmatter_and_names_the_rest() {
        let fx = TempMemoryDir::new("memory");
        fx.write(
            "feedback_quote.md",
            "---\nname: Terse\ndescription: \"Lead with the answer\ntype: feedback\n---\n\nNo preamble.\n",
        );
        fx.write(
            "project_fence.md",
            "---\nname: Dunning\ndescription: Reminders at 7, 14 and 30 days\ntype: project\n\nReminders go out 7, 14 and 30 days after the due date.\n",
        );
        fx.write("project_prose.md", "Just a note, no frontmatter.\n");
        fx.write(
            "MEMORY.md",
            "- [Terse](feedback_quote.md) — no preamble\n- [Dunning](project_fence.md) — reminders\n- [Note](project_prose.md) — a note\n",
        );
        let dream = plan(&fx);
        let after = |file: &str| dream.changes.peek(file).expect("read").expect("file");
        assert!(
            after("feedback_quote.md").contains("description: \"Lead with the answer\"\n"),
            "{}",
            dream.summary
        );
        assert!(
            after("project_fence.md")
                .starts_with("---\nname: Dunning\ndescription: Reminders at 7, 14 and 30 days\ntype: project\n---\n\nReminders"),
            "{}",
            dream.summary
        );
        assert!(
            dream.is_protected("feedback_quote.md"),
            "a repaired feedback memory is reviewed like any other"
        );
        assert_eq!(
            dream.changes.staged_content("project_prose.md"),
            None,
            "nothing is guessed"
        );
        let flags: Vec<_> = dream
            .flagged
            .iter()
            .map(|f| (f.rule, f.file.as_str()))
            .collect();
        assert_eq!(flags, [(BAD_FRONTMATTER, "project_prose.md")]);
    }
}
