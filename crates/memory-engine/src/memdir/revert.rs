//! Operations on a memory dir's recorded past: its versions, what one changed, and reverting to
//! one. Version ids are unique across every memory dir Engram knows, so each operation first
//! checks that the version belongs to this dir: a caller holding one project can never reach,
//! show or revert another's files through a version id.

use std::path::Path;

use super::{governing_index, MemoryDir};
use crate::actor::Actor;
use crate::changeset::{ChangeSet, FileResult};
use crate::disk::{confined_path, read_optional, resolved_path};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::frontmatter;
use crate::history::{Version, VersionChange};
use crate::index;
use crate::platform::case::fold;

impl MemoryDir {
    /// The versions of this dir (of one file if given), newest first — after recording, as
    /// `external`, whatever history has not seen yet: files written or deleted while Engram was
    /// not watching. So the list always ends in the state on disk, and every state shown can be
    /// reverted to.
    ///
    /// `file` ending in `.md` is taken as given (the index, a deleted memory); any other is a
    /// memory as [`MemoryDir::find_memory`] takes it (`feedback_tabs`, its name), or a deleted
    /// one by its file or the name it had.
    pub fn history(&self, file: Option<&str>) -> Result<Vec<Version>> {
        let file = match file {
            Some(file) if file.ends_with(".md") => Some(file.to_owned()),
            Some(memory) => Some(self.find_memory_or(memory, || self.deleted_memory(memory))?),
            None => None,
        };
        match &file {
            Some(file) => {
                let path = confined_path(self.root(), file)?;
                let current = read_optional(&path)?;
                self.engine().record_version(
                    self.root(),
                    file,
                    current.as_deref(),
                    Actor::External,
                )?;
            }
            None => {
                self.engine().baseline_history(self.root())?;
            }
        }
        self.engine().history(self.root(), file.as_deref())
    }

    /// The deleted memory `given` (a name without `.md`) names, as [`MemoryDir::find_memory`]
    /// names one on disk: its file without `.md`, or the frontmatter name it had when last
    /// recorded, compared as [`fold`] compares names. `None` when no deleted memory answers; a
    /// name two deleted memories had is refused, naming them.
    fn deleted_memory(&self, given: &str) -> Result<Option<String>> {
        let wanted = fold(given.trim());
        let wanted_file = format!("{wanted}.md");
        let engine = self.engine();
        // Newest first: a file's first version here is its latest, and the first with content
        // its last content.
        let versions = engine.history(self.root(), None)?;
        let mut seen = std::collections::HashSet::new();
        let mut answering = Vec::new();
        for version in &versions {
            if !seen.insert(version.file.as_str()) || self.root().join(&version.file).exists() {
                continue;
            }
            let last_name = versions
                .iter()
                .filter(|v| v.file == version.file)
                .find_map(|v| v.hash.as_deref())
                .and_then(|hash| engine.blob_text(hash).ok())
                .and_then(|text| frontmatter::parse_document(&text).frontmatter.name);
            if fold(&version.file) == wanted_file
                || last_name.is_some_and(|name| fold(name.trim()) == wanted)
            {
                answering.push(version.file.as_str());
            }
        }
        match answering.as_slice() {
            [] => Ok(None),
            [only] => Ok(Some((*only).to_owned())),
            several => Err(Error::InvalidInput(format!(
                "memory {given:?} is ambiguous: {} deleted memories had that name ({}); give its \
                 file",
                several.len(),
                several.join(", ")
            ))),
        }
    }

    /// What `version_id` changed in its file, for the history view; it must be a version of this
    /// dir.
    pub fn version_change(&self, version_id: &str) -> Result<VersionChange> {
        self.own_version(version_id)?;
        self.engine().version_change(version_id)
    }

    /// Puts the file of `version_id` back to that version's content (deleting it if that version
    /// is a deletion), through the same conflict-checked path as every change, and records the
    /// result as a new version by the user. A revert is itself a version and can be reverted.
    /// If the file already holds that content, nothing is written and its latest version is
    /// returned.
    pub fn revert(&self, version_id: &str) -> Result<Version> {
        let target = self.own_version(version_id)?;
        let engine = self.engine();
        let content = engine.version_content(version_id)?;
        let memory_dir = target.memory_dir.clone();
        let path = confined_path(&memory_dir, &target.file)?;
        let current = read_optional(&path)?;
        // Whatever is on disk now is a state the user may want back after the revert.
        engine.record_version(
            &memory_dir,
            &target.file,
            current.as_deref(),
            Actor::External,
        )?;

        if current == content {
            return engine
                .history(&memory_dir, Some(&target.file))?
                .into_iter()
                .next()
                .ok_or_else(|| Error::NotFound(path.clone()));
        }
        let reason = format!("revert to {version_id}");
        let mut set = ChangeSet::new(&memory_dir);
        let (recreated, deleted) = (current.is_none(), content.is_none());
        match &content {
            Some(content) => {
                set.stage_write_over(&target.file, current, content.clone(), &reason)?
            }
            None => set.stage_delete(&target.file, &reason)?,
        }
        // Bringing back a deleted memory brings back its index line, and reverting to a deletion
        // takes the line out, as creating and deleting do: no orphan, no dangling pointer.
        let is_topic_file = !index::is_index_file(&target.file);
        if is_topic_file && (recreated || deleted) {
            self.stage_restored_index_line(&mut set, &target, content.as_deref(), &reason)?;
        }
        let summary = format!("reverted to {version_id}");
        let results = engine.apply_changes(&set, Actor::User, Some(&summary), None)?;
        match results.into_iter().next() {
            Some(FileResult::Written(Ok(Some(version)))) => Ok(version),
            Some(FileResult::Written(Ok(None))) | None => engine
                .history(&memory_dir, Some(&target.file))?
                .into_iter()
                .next()
                .ok_or_else(|| Error::NotFound(path.clone())),
            Some(FileResult::Written(Err(e))) | Some(FileResult::Failed(e)) => Err(e),
        }
    }

    /// Adds (`content` given) or removes the index line of the topic file of `version` in the
    /// index that governs it. An added line is the one the index last held for the file, from
    /// the index's own history, so a curated title and hook come back as they were; failing
    /// that, one is made from the file's frontmatter.
    fn stage_restored_index_line(
        &self,
        set: &mut ChangeSet,
        version: &Version,
        content: Option<&str>,
        reason: &str,
    ) -> Result<()> {
        let (index_file, link) = governing_index(&version.memory_dir, &version.file);
        let raw = set.read(&index_file)?.unwrap_or_default();
        let listed = index::parse_entries(&raw).iter().any(|e| e.file == link);
        let updated = match content {
            None if listed => index::remove_entry(&raw, &link).0,
            Some(content) if !listed => {
                let frontmatter = frontmatter::parse_document(content).frontmatter;
                match self.last_index_line(&version.memory_dir, &index_file, &link)? {
                    Some(remembered) => {
                        restore_line(&raw, &link, &remembered, frontmatter.memory_type)
                    }
                    None => {
                        let stem = link.rsplit('/').next().unwrap_or(&link);
                        let title = frontmatter
                            .name
                            .clone()
                            .unwrap_or_else(|| stem.trim_end_matches(".md").to_owned());
                        let hook = frontmatter.description.clone().unwrap_or_default();
                        let line = index::entry_line(&title, &link, &hook);
                        index::upsert_entry(&raw, &link, &line, frontmatter.memory_type)
                    }
                }
            }
            _ => return Ok(()),
        };
        set.stage_write(&index_file, updated, reason)
    }

    /// The newest line `index_file`'s recorded versions hold for `link`, as written, with the
    /// link of the entry that followed it.
    fn last_index_line(
        &self,
        memory_dir: &Path,
        index_file: &str,
        link: &str,
    ) -> Result<Option<RememberedLine>> {
        for version in self.engine().history(memory_dir, Some(index_file))? {
            // A deletion, or a damaged blob: older versions may still tell.
            let Some(Ok(raw)) = version.hash.as_deref().map(|h| self.engine().blob_text(h)) else {
                continue;
            };
            let entries = index::parse_entries(&raw);
            if let Some(at) = entries.iter().position(|e| e.file == link) {
                let Some(line) = raw.lines().nth(entries[at].line - 1) else {
                    continue;
                };
                return Ok(Some(RememberedLine {
                    line: line.to_owned(),
                    followed_by: entries.get(at + 1).map(|e| e.file.clone()),
                }));
            }
        }
        Ok(None)
    }

    /// The version `version_id`, refused with [`Error::PathDenied`] when it is another dir's.
    fn own_version(&self, version_id: &str) -> Result<Version> {
        let version = self.engine().find_version(version_id)?;
        if resolved_path(&version.memory_dir) == resolved_path(self.root()) {
            Ok(version)
        } else {
            Err(Error::PathDenied {
                path: version.memory_dir.join(&version.file),
                root: self.root().to_path_buf(),
            })
        }
    }
}

impl Engine {
    /// Reverts to `version_id` in whichever memory dir it belongs to (the CLI names versions by
    /// id alone); see [`MemoryDir::revert`].
    pub fn revert(&self, version_id: &str) -> Result<Version> {
        let version = self.find_version(version_id)?;
        self.memory_dir(&version.memory_dir).revert(version_id)
    }
}

/// An index line as an earlier version of the index held it.
struct RememberedLine {
    line: String,
    /// The link of the entry right after it then.
    followed_by: Option<String>,
}

/// `raw` with `remembered.line` put back where it was: before the entry that followed it, if
/// that entry is still there, else where a new entry of type `section` goes.
fn restore_line(
    raw: &str,
    link: &str,
    remembered: &RememberedLine,
    section: Option<crate::MemoryType>,
) -> String {
    let next_line = remembered.followed_by.as_ref().and_then(|next| {
        index::parse_entries(raw)
            .into_iter()
            .find(|e| &e.file == next)
            .map(|e| e.line)
    });
    let Some(next_line) = next_line else {
        return index::upsert_entry(raw, link, &remembered.line, section);
    };
    let eol = index::line_ending(raw);
    let mut out = String::with_capacity(raw.len() + remembered.line.len() + 2);
    for (n, line) in raw.split_inclusive('\n').enumerate() {
        if n + 1 == next_line {
            out.push_str(&remembered.line);
            out.push_str(eol);
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::TempMemoryDir;

    fn fixture() -> TempMemoryDir {
        TempMemoryDir::project()
    }

    #[test]
    fn revert_restores_content_as_a_new_user_version() {
        let fx = fixture();
        fx.write("a.md", "good\n");
        let good = fx
            .record("a.md", Some("good\n"), Actor::External)
            .expect("good");
        let mut set = ChangeSet::new(&fx.root);
        set.stage_write("a.md", "bad dream\n".to_owned(), "consolidate")
            .expect("stage");
        fx.engine
            .apply_change_set(&set, Actor::Dream)
            .expect("apply");

        let reverted = fx.engine.revert(&good.version).expect("revert");
        assert_eq!(fx.read("a.md").as_deref(), Some("good\n"));
        assert_eq!(reverted.actor, Actor::User);
        assert_eq!(reverted.summary, format!("reverted to {}", good.version));
        assert_eq!(reverted.hash, good.hash);
        assert_eq!(
            fx.actors("a.md"),
            vec![Actor::User, Actor::Dream, Actor::External]
        );

        let again = fx.engine.revert(&good.version).expect("revert again");
        assert_eq!(
            again.version, reverted.version,
            "already there: no new version"
        );
    }

    #[test]
    fn reverting_to_a_deletion_deletes_and_reverting_past_it_recreates() {
        let fx = fixture();
        fx.write("a.md", "alive\n");
        let alive = fx
            .record("a.md", Some("alive\n"), Actor::External)
            .expect("alive");
        fs::remove_file(fx.root.join("a.md")).expect("delete");
        let deleted = fx.record("a.md", None, Actor::External).expect("deleted");
        fx.write("a.md", "recreated by Claude\n");

        let reverted = fx
            .engine
            .revert(&deleted.version)
            .expect("revert to deletion");
        assert_eq!(fx.read("a.md"), None, "reverting to a deletion deletes");
        assert_eq!(reverted.hash, None);
        let history = fx.engine.history(&fx.root, Some("a.md")).expect("history");
        assert_eq!(
            history[1].actor,
            Actor::External,
            "the unseen recreation was kept before being reverted"
        );
        assert_eq!(
            fx.engine
                .version_content(&history[1].version)
                .expect("content")
                .as_deref(),
            Some("recreated by Claude\n")
        );

        fx.engine.revert(&alive.version).expect("revert to alive");
        assert_eq!(fx.read("a.md").as_deref(), Some("alive\n"));
    }

    #[test]
    fn undoing_a_delete_brings_back_the_index_line_as_it_was_and_redoing_it_takes_it_out() {
        let fx = fixture();
        let index = "# Index\n\n## Feedback\n- [Be blunt, always](blunt.md) — hand-written hook\n- [Other](other.md) — stays\n";
        fx.write("MEMORY.md", index);
        fx.write(
            "blunt.md",
            "---\nname: blunt\ndescription: from the frontmatter\ntype: feedback\n---\nBody\n",
        );
        fx.write(
            "other.md",
            "---\nname: other\ndescription: o\ntype: user\n---\n",
        );
        fx.engine.baseline_history(&fx.root).expect("baseline");
        fx.engine
            .memory_dir(&fx.root)
            .forget("blunt.md")
            .expect("forget");
        assert!(!fx.read("MEMORY.md").expect("index").contains("blunt.md"));

        let history = fx
            .engine
            .history(&fx.root, Some("blunt.md"))
            .expect("history");
        let (deleted, alive) = (&history[0], &history[1]);
        assert_eq!(deleted.hash, None);
        fx.engine.revert(&alive.version).expect("undo the delete");
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some(index),
            "the curated line is back where it was, every other byte kept"
        );

        fx.engine.revert(&deleted.version).expect("redo the delete");
        assert_eq!(fx.read("blunt.md"), None);
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some("# Index\n\n## Feedback\n- [Other](other.md) — stays\n")
        );
    }

    #[test]
    fn a_memory_the_index_never_listed_gets_a_line_from_its_frontmatter_when_brought_back() {
        let fx = fixture();
        fx.write("MEMORY.md", "- [Other](other.md) — stays\n");
        let text =
            "---\nname: Deploy freeze\ndescription: No deploys on Fridays\ntype: project\n---\n";
        let alive = fx
            .record("deploy.md", Some(text), Actor::External)
            .expect("alive");
        fx.record("deploy.md", None, Actor::External)
            .expect("deleted");

        fx.engine.revert(&alive.version).expect("bring back");
        assert_eq!(fx.read("deploy.md").as_deref(), Some(text));
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some("- [Other](other.md) — stays\n- [Deploy freeze](deploy.md) — No deploys on Fridays\n")
        );
    }

    #[test]
    fn listing_a_dir_s_history_first_records_what_changed_behind_engram_s_back() {
        let fx = fixture();
        fx.write("a.md", "one\n");
        let dir = fx.engine.memory_dir(&fx.root);
        let listed = dir.history(None).expect("history");
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].actor, listed[0].summary.as_str()),
            (Actor::External, "created")
        );

        // Claude rewrites it; the next listing of that file ends in the disk's state.
        fx.write("a.md", "one\ntwo\n");
        let listed = dir.history(Some("a.md")).expect("history of a.md");
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].actor, Actor::External);
        assert_eq!(listed[0].summary, "+1 \u{2212}0 lines");
        assert_eq!(
            fx.engine
                .version_content(&listed[0].version)
                .expect("content")
                .as_deref(),
            Some("one\ntwo\n")
        );
        fs::remove_file(fx.root.join("a.md")).expect("rm");
        assert_eq!(
            dir.history(Some("a.md")).expect("history")[0].summary,
            "deleted"
        );
        assert_eq!(
            dir.history(Some("a.md")).expect("again").len(),
            3,
            "listing twice records nothing new"
        );
        assert_eq!(
            dir.history(Some("../x.md")).expect_err("outside").kind(),
            ErrorKind::PathDenied
        );
    }
}
