//! Step 2, first half, of the offline dream: contradictions between memories of one index (see
//! the module docs of [`super`] and [`super::likeness`]).
//!
//! Where the evidence is plain — two memories on one subject, the newer saying the older's state
//! changed ("moved from Heroku to Fly.io", "the Heroku app was deleted", "no longer", the same
//! sentence with a later date) and the older stating that state — the older is merged into the
//! newer as history: each of its paragraphs or items that says what no longer holds is kept
//! marked "Until 2026-06: …", the rest as it is, and the older file and its index line go (a
//! line that still says the old state would tell it to every conversation). Staged like every
//! change, protected for `user` and `feedback` memories. Where it is not plain — one says
//! something changed, the other does not plainly say the old state — nothing changes and the
//! pair is flagged `possibly-contradictory`, both files named, for a person to read side by side.

use chrono::TimeZone;

use super::duplicates::History;
use super::index::IndexEdits;
use super::likeness::{change_statements, verdict, Verdict};
use super::{Planner, POSSIBLY_CONTRADICTORY};
use crate::error::Result;
use crate::lint::Severity;

impl<Tz: TimeZone> Planner<'_, Tz> {
    /// Step 2, first half.
    pub(super) fn resolve_contradictions(&mut self) -> Result<()> {
        let mut edits = IndexEdits::default();
        for members in self.memories_by_index() {
            let comparison = self.compare(&members)?;
            // Oldest first: a memory superseded twice is folded along the chain.
            let mut pairs = Vec::new();
            for (a, b) in comparison.candidate_pairs() {
                let (older, newer) = self.older_newer(members[a], members[b]);
                pairs.push((older, newer, comparison.likeness(a, b)));
            }
            pairs.sort_by_key(|&(older, newer, _)| (self.files[older].mtime, older, newer));
            for (older, newer, likeness) in pairs {
                let gone = |i: usize| self.set.staged_content(&self.files[i].rel) == Some(None);
                if gone(older) || gone(newer) {
                    continue;
                }
                let (older_text, newer_text) = (
                    comparison.text(comparison.position(older)),
                    comparison.text(comparison.position(newer)),
                );
                match verdict(&likeness, older_text, newer_text) {
                    Verdict::Update { stale } => {
                        // The sentence that names what changed, for the reason.
                        let changes = change_statements(newer_text);
                        let change = changes
                            .iter()
                            .find(|c| c.old.is_some())
                            .or(changes.first())
                            .map_or_else(String::new, |c| c.sentence.clone());
                        self.keep_as_history(older, newer, stale, &change, &mut edits)?;
                    }
                    Verdict::PossiblyContradictory => {
                        let told = change_statements(newer_text)
                            .into_iter()
                            .chain(change_statements(older_text))
                            .next()
                            .map_or_else(String::new, |c| format!(": \"{}\"", c.sentence));
                        let message = format!(
                            "possibly contradicts {} (older) on the same subject ({}){told}; read them side by side",
                            self.files[older].rel,
                            likeness.describe()
                        );
                        let rel = self.files[newer].rel.clone();
                        self.flag(
                            POSSIBLY_CONTRADICTORY,
                            Severity::Warning,
                            &rel,
                            None,
                            message,
                        );
                    }
                    _ => {}
                }
            }
        }
        edits.stage(&mut self.set)
    }

    /// Merges `older` into `newer` as history (see the module docs).
    fn keep_as_history(
        &mut self,
        older: usize,
        newer: usize,
        stale: Vec<String>,
        change: &str,
        edits: &mut IndexEdits,
    ) -> Result<()> {
        let until = self.written_on(newer).date.format("%Y-%m").to_string();
        let history = History {
            stale,
            until: until.clone(),
        };
        let (older_rel, newer_rel) = (self.files[older].rel.clone(), self.files[newer].rel.clone());
        self.fold_into(newer, &[older], Some(&history), |kept| {
            format!(
                "keep {older_rel} here as history ({kept} {} appended, what no longer holds marked \"Until {until}\"): this newer memory says \"{change}\"",
                if kept == 1 { "fact" } else { "facts" }
            )
        })?;
        self.set.stage_delete(
            &older_rel,
            &format!(
                "superseded by {newer_rel} (\"{change}\"): kept there as history, until {until}"
            ),
        )?;
        self.protect(older);
        let link = self.files[older].link.clone();
        let listing = self.listing_files(&self.files[older].index);
        let note = format!("remove the line of superseded {link}, which told its old state");
        edits.remove(&self.set, &listing, &link, &note)?;
        self.notes.push(format!(
            "contradiction: {older_rel} is superseded by {newer_rel} (\"{change}\"): merged into it as history, until {until}"
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{memory, plan, write_at};
    use super::super::POSSIBLY_CONTRADICTORY;
    use crate::actor::Actor;
    use crate::testing::fixtures::TempMemoryDir;

    #[test]
    fn a_newer_memory_saying_the_state_changed_keeps_the_older_as_history() {
        let fx = TempMemoryDir::new("memory");
        write_at(
            &fx,
            "project_api_host.md",
            &memory(
                "API hosting",
                "The API runs on Heroku",
                "project",
                "The API runs on Heroku, app `acme-api`.\n\nDeploy the API with `git push heroku main`.\n\nThe API base URL is https://api.acme.example.\n",
            ),
            "2026-01-15",
        );
        write_at(
            &fx,
            "project_api_fly.md",
            &memory(
                "API on Fly.io",
                "The API moved to Fly.io",
                "project",
                "The API moved to Fly.io (app acme-api-fly); the Heroku app was deleted.\n",
            ),
            "2026-06-10",
        );
        fx.write(
            "MEMORY.md",
            "- [API hosting](project_api_host.md) — the API runs on Heroku\n- [API on Fly.io](project_api_fly.md) — where the API runs now\n",
        );
        let dream = plan(&fx);
        assert!(
            dream
                .summary
                .contains("contradiction: project_api_host.md is superseded by project_api_fly.md"),
            "{}",
            dream.summary
        );
        fx.engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        assert_eq!(
            fx.read("project_api_host.md"),
            None,
            "merged, not kept as current"
        );
        let newer = fx.read("project_api_fly.md").expect("newer");
        for kept in [
            "Until 2026-06: The API runs on Heroku, app `acme-api`.",
            "Until 2026-06: Deploy the API with `git push heroku main`.",
            "\nThe API base URL is https://api.acme.example.\n",
        ] {
            assert!(newer.contains(kept), "{kept:?} in {newer}");
        }
        assert_eq!(
            fx.read("MEMORY.md").expect("index"),
            "- [API on Fly.io](project_api_fly.md) — where the API runs now\n",
            "the line that told the old state goes"
        );
    }

    #[test]
    fn a_later_date_for_the_same_thing_supersedes_the_earlier() {
        let fx = TempMemoryDir::new("memory");
        let freeze = |day: &str| {
            memory(
                "Code freeze",
                "When the code freeze starts",
                "project",
                &format!("The code freeze starts {day}; only hotfixes merge after it.\n"),
            )
        };
        write_at(
            &fx,
            "project_freeze.md",
            &freeze("2026-03-01"),
            "2026-02-01",
        );
        write_at(
            &fx,
            "project_freeze_moved.md",
            &freeze("2026-04-15"),
            "2026-03-20",
        );
        fx.write(
            "MEMORY.md",
            "- [Code freeze](project_freeze.md) — from 2026-03-01\n- [Code freeze](project_freeze_moved.md) — from 2026-04-15\n",
        );
        fx.engine
            .apply_change_set(&plan(&fx).changes, Actor::Dream)
            .expect("apply");
        assert_eq!(fx.read("project_freeze.md"), None);
        let newer = fx.read("project_freeze_moved.md").expect("newer");
        assert!(
            newer.contains("The code freeze starts 2026-04-15;")
                && newer.contains("Until 2026-03: The code freeze starts 2026-03-01;"),
            "{newer}"
        );
    }

    #[test]
    fn a_change_that_does_not_plainly_meet_the_older_memory_is_flagged_not_changed() {
        let fx = TempMemoryDir::new("memory");
        write_at(
            &fx,
            "project_staging.md",
            &memory(
                "Staging access",
                "How to reach the staging cluster",
                "project",
                "Reach the staging cluster through the bastion host bastion.acme.example; staging runs in eu-west-1.\n",
            ),
            "2026-01-15",
        );
        write_at(
            &fx,
            "project_staging_vpn.md",
            &memory(
                "Staging cluster access",
                "Reaching the staging cluster",
                "project",
                "The staging cluster no longer needs the VPN; reach it with the acme CLI.\n",
            ),
            "2026-06-10",
        );
        fx.write(
            "MEMORY.md",
            "- [Staging access](project_staging.md) — bastion\n- [Staging cluster access](project_staging_vpn.md) — no VPN\n",
        );
        let dream = plan(&fx);
        assert!(dream.changes.is_empty(), "{}", dream.summary);
        let flags: Vec<_> = dream
            .flagged
            .iter()
            .map(|f| (f.rule, f.file.as_str()))
            .collect();
        assert_eq!(flags, [(POSSIBLY_CONTRADICTORY, "project_staging_vpn.md")]);
        assert!(
            dream.flagged[0]
                .message
                .contains("possibly contradicts project_staging.md"),
            "{}",
            dream.flagged[0].message
        );
    }
}
