//! Automatic fixes for lint findings, planned as a [`ChangeSet`] whose diffs are shown before
//! anything is written, then applied as [`Actor::User`].
//!
//! Only findings with one obviously right, content-preserving fix are fixable:
//!
//! | rule | fix |
//! |---|---|
//! | `dangling-pointer` | remove the index line(s) linking to the missing file |
//! | `orphan-file` | add the file's index line (title = `name`, hook = `description`) to the nearest `MEMORY.md`, under its type's section when the index has one — unless that would take the index over the lines or bytes Claude Code loads, which would hide its last entries instead (lines are removed and shortened first) |
//! | `long-index-line` | rewrite the entry as `- [Title](file) — hook`, the hook (then the title) shortened with `…` to fit 150 characters |
//!
//! Everything else (secrets, bad frontmatter, duplicates, an index over budget) needs a person's
//! judgement and is never touched; nor, when every finding is fixed at once, is an orphan that
//! nearly duplicates another memory (it wants a merge, not an index line of its own). A finding's
//! `line` refers to the disk as it was linted: each target is resolved against the disk first
//! (which entry, which file), and a finding that no longer holds (the file came back, the line was
//! already shortened) is skipped with a reason rather than "fixed" into something else. Several
//! fixes compose in one change set — they read each other's staged index — and applying it is
//! refused as a conflict if any file moved since.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::changeset::{ApplyReport, ChangeSet};
use crate::error::{Error, Result};
use crate::frontmatter;
use crate::index::{self, MAX_ENTRY_CHARS};
use crate::lint::{Finding, DANGLING_POINTER, DUPLICATE_MEMORY, LONG_INDEX_LINE, ORPHAN_FILE};
use crate::memdir::governing_index;
use crate::memdir::MemoryDir;

/// The rules [`MemoryDir::plan_fix`] can fix.
pub const FIXABLE_RULES: [&str; 3] = [DANGLING_POINTER, ORPHAN_FILE, LONG_INDEX_LINE];

/// Whether findings of `rule` have an automatic fix.
pub fn is_fixable(rule: &str) -> bool {
    FIXABLE_RULES.contains(&rule)
}

/// The finding to fix, as the UI sends it back: a [`Finding`]'s JSON deserializes into it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixTarget {
    pub rule: String,
    /// Relative to the memory dir, as in the finding.
    pub file: String,
    pub line: Option<usize>,
}

impl From<&Finding> for FixTarget {
    fn from(finding: &Finding) -> Self {
        FixTarget {
            rule: finding.rule.to_owned(),
            file: finding.file.clone(),
            line: finding.line,
        }
    }
}

/// A finding left unfixed, and why.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFix {
    pub target: FixTarget,
    pub reason: String,
}

/// Fixes planned together: one change set for all of them, to review and apply.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FixPlan {
    pub changes: ChangeSet,
    /// The findings the change set fixes.
    pub fixed: Vec<FixTarget>,
    pub skipped: Vec<SkippedFix>,
}

/// A fix resolved against the disk, independent of line numbers (so it still applies once
/// earlier fixes moved lines around).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Remove every line of `index_file` linking to `link` (a missing file).
    Unindex { index_file: String, link: String },
    /// Add `file`'s index line.
    Index { file: String },
    /// Replace the line reading exactly `old` with `new`.
    ReplaceLine {
        index_file: String,
        old: String,
        new: String,
    },
}

impl MemoryDir {
    /// Plans the fix of one finding; [`Error::InvalidInput`] when its rule has no automatic fix
    /// or the finding no longer holds.
    pub fn plan_fix(&self, target: &FixTarget) -> Result<ChangeSet> {
        let action = self.resolve_fix(target).map_err(Error::InvalidInput)?;
        let mut set = ChangeSet::new(self.root());
        self.stage_fix(&mut set, &action)?;
        Ok(set)
    }

    /// Plans the fixes of several findings in one change set; unfixable ones are skipped.
    pub fn plan_fixes(&self, targets: &[FixTarget]) -> Result<FixPlan> {
        let mut resolved = Vec::new();
        let mut skipped = Vec::new();
        for target in targets {
            match self.resolve_fix(target) {
                // Two findings can ask for the same fix (a long line that also dangles).
                Ok(action) if resolved.iter().any(|(_, a)| *a == action) => {}
                Ok(action) => resolved.push((target.clone(), action)),
                Err(reason) => skipped.push(SkippedFix {
                    target: target.clone(),
                    reason,
                }),
            }
        }
        // Lines come out and get shorter before any goes in, so an index near its cap makes
        // what room it can before an orphan's line is weighed against it.
        resolved.sort_by_key(|(_, action)| matches!(action, Action::Index { .. }));
        let mut set = ChangeSet::new(self.root());
        let mut fixed = Vec::new();
        for (target, action) in resolved {
            match self.stage_fix(&mut set, &action) {
                Ok(true) => fixed.push(target),
                Ok(false) => skipped.push(SkippedFix {
                    target,
                    reason: "already fixed by another fix in this plan".to_owned(),
                }),
                // One file that cannot be read or staged does not sink the other fixes.
                Err(e) => skipped.push(SkippedFix {
                    target,
                    reason: e.to_string(),
                }),
            }
        }
        Ok(FixPlan {
            changes: set,
            fixed,
            skipped,
        })
    }

    /// Lints the dir and plans every fixable finding.
    ///
    /// An orphan that nearly duplicates another memory is left out: the fix it wants is a
    /// merge (a person's, or the dream's), not a second index line for the same thing.
    pub fn plan_all_fixes(&self) -> Result<FixPlan> {
        let report = self.lint()?;
        let duplicate_of = |file: &str| {
            report.by_rule(DUPLICATE_MEMORY).find_map(|f| {
                let other = f.other_file.as_deref()?;
                if f.file == file {
                    Some(other)
                } else if other == file {
                    Some(f.file.as_str())
                } else {
                    None
                }
            })
        };
        let mut duplicates = Vec::new();
        let mut targets = Vec::new();
        for finding in report.findings.iter().filter(|f| is_fixable(f.rule)) {
            match duplicate_of(&finding.file).filter(|_| finding.rule == ORPHAN_FILE) {
                Some(other) => duplicates.push(SkippedFix {
                    target: FixTarget::from(finding),
                    reason: format!(
                        "a near-duplicate of {other} ({DUPLICATE_MEMORY}): merge the two rather \
                         than index both"
                    ),
                }),
                None => targets.push(FixTarget::from(finding)),
            }
        }
        let mut plan = self.plan_fixes(&targets)?;
        plan.skipped.extend(duplicates);
        Ok(plan)
    }

    /// Applies a reviewed fix as the user; [`Error::Conflict`] (nothing written) when a file
    /// changed since it was planned.
    pub fn apply_fix(&self, set: &ChangeSet) -> Result<ApplyReport> {
        if set.root != self.root() {
            return Err(Error::InvalidInput(format!(
                "the fix was planned for {}, not {}",
                set.root.display(),
                self.root().display()
            )));
        }
        self.engine().apply_change_set(set, Actor::User)
    }

    /// What fixing `target` means on the disk as it is now; the reason it cannot be fixed
    /// otherwise.
    fn resolve_fix(&self, target: &FixTarget) -> std::result::Result<Action, String> {
        let rule = target.rule.as_str();
        if !is_fixable(rule) {
            return Err(format!(
                "`{rule}` has no automatic fix; edit the file by hand"
            ));
        }
        if rule == ORPHAN_FILE {
            return self.resolve_orphan(&target.file);
        }
        let index_file = &target.file;
        let line_no = target
            .line
            .ok_or_else(|| format!("{index_file}: the finding has no line"))?;
        let raw = self
            .read_disk(index_file)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{index_file}: no longer exists"))?;
        // A topic index lists entries as the index does: its dangling lines are fixed alike.
        if !index::is_index_file(index_file) && !index::is_topic_index(index_file, &raw) {
            return Err(format!("{index_file}: not an index file"));
        }
        let line = raw
            .lines()
            .nth(line_no.wrapping_sub(1))
            .ok_or_else(|| format!("{index_file}:{line_no}: no such line any more"))?;
        let entry = index::parse_entries(&raw)
            .into_iter()
            .find(|e| e.line == line_no);
        if rule == DANGLING_POINTER {
            let entry =
                entry.ok_or_else(|| format!("{index_file}:{line_no}: no longer an index entry"))?;
            let dir = index::parent_of(index_file);
            if link_exists(self.root(), dir, &entry.file) {
                return Err(format!(
                    "{index_file}:{line_no}: {} exists now; nothing to fix",
                    entry.file
                ));
            }
            return Ok(Action::Unindex {
                index_file: index_file.clone(),
                link: entry.file,
            });
        }
        // LONG_INDEX_LINE
        if line.chars().count() <= MAX_ENTRY_CHARS {
            return Err(format!(
                "{index_file}:{line_no}: already {MAX_ENTRY_CHARS} characters or fewer"
            ));
        }
        let entry = entry.ok_or_else(|| {
            format!("{index_file}:{line_no}: not an index entry (a heading or prose); shorten it by hand")
        })?;
        let new = index::entry_line(
            &entry.title,
            &entry.file,
            entry.hook.as_deref().unwrap_or(""),
        );
        if new.chars().count() > MAX_ENTRY_CHARS {
            return Err(format!(
                "{index_file}:{line_no}: the link alone is too long to fit {MAX_ENTRY_CHARS} characters; rename the file"
            ));
        }
        Ok(Action::ReplaceLine {
            index_file: index_file.clone(),
            old: line.trim_end_matches('\r').to_owned(),
            new,
        })
    }

    fn resolve_orphan(&self, file: &str) -> std::result::Result<Action, String> {
        let (rel, _) = self.resolve(file).map_err(|e| e.to_string())?;
        if self.read_disk(&rel).map_err(|e| e.to_string())?.is_none() {
            return Err(format!("{rel}: no longer exists"));
        }
        let (index_file, link) = governing_index(self.root(), &rel);
        let raw = self
            .read_disk(&index_file)
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        if index::parse_entries(&raw).iter().any(|e| e.file == link) {
            return Err(format!("{rel}: already listed in {index_file}"));
        }
        Ok(Action::Index { file: rel })
    }

    /// Stages `action` into `set`, reading through it; false when there was nothing left to do.
    fn stage_fix(&self, set: &mut ChangeSet, action: &Action) -> Result<bool> {
        match action {
            Action::Unindex { index_file, link } => {
                let raw = set.read(index_file)?.unwrap_or_default();
                let (updated, removed) = index::remove_entry(&raw, link);
                if removed {
                    set.stage_write(
                        index_file,
                        updated,
                        &format!("remove the line linking to missing {link}"),
                    )?;
                }
                Ok(removed)
            }
            Action::Index { file } => {
                let text = set.read(file)?.unwrap_or_default();
                let fm =
                    frontmatter::parse_document_within(&text, Some(crate::scan::SCAN_LINE_LIMIT))
                        .frontmatter;
                let (index_file, link) = governing_index(self.root(), file);
                let raw = set.read(&index_file)?.unwrap_or_default();
                if index::parse_entries(&raw).iter().any(|e| e.file == link) {
                    return Ok(false);
                }
                let title = fm
                    .name
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| file_stem(file));
                let line =
                    index::entry_line(&title, &link, fm.description.as_deref().unwrap_or(""));
                let updated = index::upsert_entry(&raw, &link, &line, fm.memory_type);
                if index::is_index_file(&index_file) && index::load_index_text(&updated).truncated {
                    return Err(Error::InvalidInput(format!(
                        "{index_file} has no room for {file}'s line: it would be over the {} \
                         lines or {} bytes Claude Code loads, and its last entries would no \
                         longer be seen; make room first (shorten or fold entries: `engram \
                         dream` moves old ones into topic files)",
                        index::MAX_INDEX_LINES,
                        index::MAX_INDEX_BYTES
                    )));
                }
                set.stage_write(&index_file, updated, &format!("index orphan {file}"))?;
                Ok(true)
            }
            Action::ReplaceLine {
                index_file,
                old,
                new,
            } => {
                let raw = set.read(index_file)?.unwrap_or_default();
                let Some(updated) = replace_line(&raw, old, new) else {
                    return Ok(false);
                };
                set.stage_write(
                    index_file,
                    updated,
                    &format!("shorten a long line of {index_file}"),
                )?;
                Ok(true)
            }
        }
    }

    fn read_disk(&self, rel: &str) -> Result<Option<String>> {
        let path = crate::disk::confined_path(self.root(), rel)?;
        crate::disk::read_optional(&path)
    }
}

/// `raw` with the first line reading exactly `old` (line break aside) replaced by `new`, keeping
/// the line's own ending; `None` when no line reads `old`.
fn replace_line(raw: &str, old: &str, new: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut replaced = false;
    for line in raw.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !replaced && body == old {
            out.push_str(new);
            out.push_str(&line[body.len()..]);
            replaced = true;
        } else {
            out.push_str(line);
        }
    }
    replaced.then_some(out)
}

/// Whether an index entry in `dir` linking to `link` points at an existing file inside the root
/// (the test lint applies).
fn link_exists(root: &Path, dir: &str, link: &str) -> bool {
    index::link_stays_inside(link) && root.join(index::join_rel(dir, link)).is_file()
}

/// `team/deploy-freeze.md` → `deploy-freeze`.
pub(crate) fn file_stem(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_suffix(".md").unwrap_or(name).to_owned()
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::changeset::ChangeKind;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::TempMemoryDir;

    /// A copy of a real memory dir, and an engine whose history lives in the same temp dir.
    fn fixture(real: &str) -> TempMemoryDir {
        TempMemoryDir::real("memory", real)
    }

    /// (file, rule) of every finding lint reports now.
    fn rules(fx: &TempMemoryDir) -> Vec<(String, &'static str)> {
        fx.dir
            .lint()
            .expect("lint")
            .findings
            .iter()
            .map(|f| (f.file.clone(), f.rule))
            .collect()
    }

    const LONG_LINE: &str = "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays, nor on the eve of a public holiday, nor during the quarterly close, nor when the on-call engineer is away";

    #[test]
    fn every_fixable_finding_of_a_real_dir_is_fixed_in_one_reviewed_change_set() {
        let fx = fixture("claude-code-2.1.330");
        // The real index, plus a line to a file that is gone and an over-long entry.
        fx.write(
            "MEMORY.md",
            &format!(
                "{}- [Old notes](old-notes.md) — superseded\n{LONG_LINE}\n",
                fx.read("MEMORY.md").expect("index")
            ),
        );
        let before = rules(&fx);
        for rule in [DANGLING_POINTER, ORPHAN_FILE, LONG_INDEX_LINE] {
            assert!(
                before.iter().any(|(_, r)| *r == rule),
                "{rule} in {before:?}"
            );
        }

        let plan = fx.dir.plan_all_fixes().expect("plan");
        assert!(plan.skipped.is_empty(), "{:?}", plan.skipped);
        assert_eq!(
            plan.fixed.len(),
            4,
            "dangling, long line, two orphans: {:?}",
            plan.fixed
        );
        assert_eq!(plan.changes.len(), 1, "all in the one index");
        let change = &plan.changes.changes[0];
        assert_eq!(
            (change.file.as_str(), change.kind),
            ("MEMORY.md", ChangeKind::Modify)
        );
        assert_eq!(
            change.after.as_deref(),
            Some(concat!(
                "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays MEMIDX-777\n",
                "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays, nor on the eve of a public holiday, nor during the quarterly close, nor when the on-call…\n",
                "- [hook-test](hook-test.md) — hook test memory\n",
                "- [prefers-tabs](prefers-tabs-default.md) — User prefers tabs over spaces WRITTEN-555\n",
            ))
        );
        let shortened = change
            .after
            .as_deref()
            .and_then(|a| a.lines().nth(1))
            .expect("line 2");
        assert_eq!(shortened.chars().count(), MAX_ENTRY_CHARS, "{shortened}");
        assert!(
            change
                .diff
                .starts_with("--- a/MEMORY.md\n+++ b/MEMORY.md\n"),
            "{}",
            change.diff
        );
        assert!(
            change
                .diff
                .contains("-- [Old notes](old-notes.md) — superseded\n"),
            "{}",
            change.diff
        );
        assert!(
            fx.read("MEMORY.md")
                .expect("index")
                .contains("old-notes.md"),
            "planning writes nothing"
        );

        let report = fx.dir.apply_fix(&plan.changes).expect("apply");
        assert!(report.all_applied());
        assert_eq!(report.actor, Actor::User);
        let after = rules(&fx);
        assert!(
            after
                .iter()
                .all(|(_, r)| ![DANGLING_POINTER, ORPHAN_FILE, LONG_INDEX_LINE].contains(r)),
            "{after:?}"
        );
        let history = fx
            .dir
            .engine()
            .history(fx.dir.root(), Some("MEMORY.md"))
            .expect("history");
        assert_eq!(history[0].actor, Actor::User);
        assert_eq!(
            history[1].actor,
            Actor::External,
            "the index before the fix is kept"
        );
    }

    #[test]
    fn one_finding_is_planned_alone_and_a_stale_or_unfixable_one_is_refused() {
        let fx = fixture("claude-code-2.1.330");
        fx.write("MEMORY.md", "# Index\n- [Gone](gone.md) — x\n");
        let report = fx.dir.lint().expect("lint");
        let dangling = report.by_rule(DANGLING_POINTER).next().expect("dangling");
        let plan = fx.dir.plan_fix(&FixTarget::from(dangling)).expect("plan");
        assert_eq!(plan.changes[0].after.as_deref(), Some("# Index\n"));

        fx.write("gone.md", "---\nname: back\n---\n");
        let err = fx
            .dir
            .plan_fix(&FixTarget::from(dangling))
            .expect_err("the file came back");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("gone.md exists now"), "{err}");

        let secret = FixTarget {
            rule: "secret".to_owned(),
            file: "a.md".to_owned(),
            line: Some(1),
        };
        let err = fx.dir.plan_fix(&secret).expect_err("never automatic");
        assert!(err.to_string().contains("no automatic fix"), "{err}");
        let outside = FixTarget {
            rule: ORPHAN_FILE.to_owned(),
            file: "../x.md".to_owned(),
            line: None,
        };
        assert_eq!(
            fx.dir.plan_fix(&outside).expect_err("outside").kind(),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn a_long_line_that_is_not_an_entry_is_skipped_with_a_reason() {
        let fx = fixture("stockerly");
        let prose = format!(
            "> {}",
            "Persistent memory for future conversations. ".repeat(4)
        );
        let index = fx.read("MEMORY.md").expect("index");
        fx.write("MEMORY.md", &format!("{index}{prose}\n"));
        let plan = fx.dir.plan_all_fixes().expect("plan");
        assert!(plan.changes.is_empty(), "{:?}", plan.changes);
        assert_eq!(plan.skipped.len(), 1, "{:?}", plan.skipped);
        assert!(
            plan.skipped[0].reason.contains("shorten it by hand"),
            "{:?}",
            plan.skipped
        );
    }

    #[test]
    fn orphans_go_to_their_nearest_index_and_a_missing_root_index_is_created() {
        let fx = fixture("claude-code-2.1.330");
        fs::remove_file(fx.dir.root().join("MEMORY.md")).expect("rm index");
        fx.write("team/MEMORY.md", "# Team\n\n## Project\n");
        fx.write(
            "team/release.md",
            "---\nname: Release train\ndescription: Ship Tuesdays\ntype: project\n---\nbody\n",
        );
        fx.write("team/notes/raw.md", "no frontmatter\n");
        let plan = fx.dir.plan_all_fixes().expect("plan");
        let files: Vec<(&str, ChangeKind)> = plan
            .changes
            .changes
            .iter()
            .map(|c| (c.file.as_str(), c.kind))
            .collect();
        assert_eq!(
            files,
            [
                ("MEMORY.md", ChangeKind::Add),
                ("team/MEMORY.md", ChangeKind::Modify)
            ]
        );
        assert_eq!(
            plan.changes.changes[1].after.as_deref(),
            Some("# Team\n\n## Project\n- [raw](notes/raw.md)\n- [Release train](release.md) — Ship Tuesdays\n")
        );
        fx.dir.apply_fix(&plan.changes).expect("apply");
        assert!(
            rules(&fx).iter().all(|(_, r)| *r != ORPHAN_FILE),
            "{:?}",
            rules(&fx)
        );
    }

    #[test]
    fn an_orphan_nearly_duplicating_another_memory_is_left_for_a_merge() {
        let fx = TempMemoryDir::new("memory");
        let terse = "---\nname: Terse answers\ndescription: Lead with the answer\ntype: \
                     feedback\n---\nLead with the answer, no preamble or recap.\n";
        fx.write("feedback_terse.md", terse);
        fx.write("feedback_terse_copy.md", terse);
        fx.write(
            "project_exports.md",
            "---\nname: Exports\ndescription: CSV exports\ntype: project\n---\nInvoices \
             export as CSV.\n",
        );
        fx.write(
            "MEMORY.md",
            "- [Terse answers](feedback_terse.md) — Lead with the answer\n",
        );
        let plan = fx.dir.plan_all_fixes().expect("plan");
        let fixed: Vec<&str> = plan.fixed.iter().map(|t| t.file.as_str()).collect();
        assert_eq!(fixed, ["project_exports.md"]);
        let [skipped] = plan.skipped.as_slice() else {
            panic!("one skipped: {:?}", plan.skipped);
        };
        assert_eq!(
            (skipped.target.file.as_str(), skipped.reason.as_str()),
            (
                "feedback_terse_copy.md",
                "a near-duplicate of feedback_terse.md (duplicate-memory): merge the two rather \
                 than index both"
            )
        );
        // Asked for by itself (the app's fix button on that finding), it is the person's call.
        let finding = fx
            .dir
            .lint()
            .expect("lint")
            .by_rule(ORPHAN_FILE)
            .find(|f| f.file == "feedback_terse_copy.md")
            .map(FixTarget::from)
            .expect("orphan");
        assert!(!fx.dir.plan_fix(&finding).expect("plan one").is_empty());
    }

    /// Indexing an orphan into a full index would hide its last entry from Claude Code instead:
    /// the orphan is skipped, saying so, once the room the other fixes made is used up.
    #[test]
    fn an_orphan_is_not_indexed_past_the_lines_claude_code_loads() {
        let fx = TempMemoryDir::new("memory");
        let memory = |name: &str| {
            format!("---\nname: {name}\ndescription: about {name}\ntype: project\n---\nbody\n")
        };
        // 199 lines: a title, a section, 196 entries and one whose file is gone.
        let mut index = "# Index\n## Project\n".to_owned();
        for n in 0..196 {
            let file = format!("project_n{n}.md");
            fx.write(&file, &memory(&format!("n{n}")));
            index.push_str(&format!("- [n{n}]({file}) — about n{n}\n"));
        }
        index.push_str("- [Gone](project_gone.md) — removed\n");
        fx.write("MEMORY.md", &index);
        for orphan in ["a", "b", "c"] {
            fx.write(&format!("project_orphan_{orphan}.md"), &memory(orphan));
        }

        let plan = fx.dir.plan_all_fixes().expect("plan");
        let indexed: Vec<&str> = plan
            .fixed
            .iter()
            .filter(|t| t.rule == ORPHAN_FILE)
            .map(|t| t.file.as_str())
            .collect();
        assert_eq!(indexed, ["project_orphan_a.md", "project_orphan_b.md"]);
        assert!(plan.fixed.iter().any(|t| t.rule == DANGLING_POINTER));
        let [skipped] = plan.skipped.as_slice() else {
            panic!("one skipped: {:?}", plan.skipped);
        };
        assert_eq!(skipped.target.file, "project_orphan_c.md");
        assert!(
            skipped.reason.starts_with(
                "MEMORY.md has no room for project_orphan_c.md's line: it would be over the 200 \
                 lines"
            ),
            "{}",
            skipped.reason
        );
        fx.dir.apply_fix(&plan.changes).expect("apply");
        let after = index::load_index_text(&fx.read("MEMORY.md").expect("index"));
        assert_eq!((after.lines, after.truncated), (200, false));
    }

    #[test]
    fn a_fix_is_not_applied_over_an_index_that_moved_since_planning() {
        let fx = fixture("claude-code-2.1.330");
        let plan = fx.dir.plan_all_fixes().expect("plan");
        assert!(!plan.changes.is_empty());
        fx.write("MEMORY.md", "rewritten by Claude\n");
        let err = fx.dir.apply_fix(&plan.changes).expect_err("moved");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some("rewritten by Claude\n")
        );

        let elsewhere = fixture("stockerly");
        let err = elsewhere
            .dir
            .apply_fix(&plan.changes)
            .expect_err("other dir");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn a_finding_round_trips_through_json_into_a_target() {
        let fx = fixture("claude-code-2.1.330");
        let report = fx.dir.lint().expect("lint");
        let finding = report.by_rule(ORPHAN_FILE).next().expect("orphan");
        let json = serde_json::to_string(finding).expect("serialize");
        let target: FixTarget = serde_json::from_str(&json).expect("a finding is a target");
        assert_eq!(target, FixTarget::from(finding));
    }
}
