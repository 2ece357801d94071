//! The memory editor's operations: open, save, create, rename and delete a memory from a form
//! (name, description, type, body), each planned as a [`ChangeSet`] — so it can be previewed as a
//! diff — and applied as [`Actor::User`], so it lands in history and the watcher does not report
//! it back as an external change.
//!
//! Contract:
//! - Saves never overwrite what the editor did not see: a save is staged over the content the
//!   editor opened (`opened`), and applying it fails with [`Error::Conflict`], writing nothing, if
//!   the disk moved on since. [`MemoryDir::memory_conflict`] then shows both sides and
//!   [`MemoryDir::resolve_memory_conflict`] keeps mine (the form written over what is on disk now)
//!   or theirs (nothing written).
//! - The form only owns `name`, `description`, `type` and the body; every other frontmatter key
//!   (the 2.1.330 `metadata:` stamp, `originSessionId`, …) is kept exactly as it was, and the type
//!   stays where the file keeps it (top level or under `metadata:`).
//! - The index line follows the file (`FORMATS.md` §7's two-step protocol), in the nearest
//!   `MEMORY.md` at or above it: a save adds the line when the file has none, refreshes the hook
//!   when the description changed and the title when it was the old name (a curated title stays);
//!   a rename rewrites the link in place, keeping title and hook; a delete removes the line.
//! - File and index change in one change set: both land or neither does.

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::changeset::{ApplyReport, ChangeSet, ConflictDetails};
use crate::disk::read_optional;
use crate::error::{Error, IoResultExt, Result};
use crate::frontmatter::{self, FieldEdit, Frontmatter};
use crate::index;
use crate::memdir::{
    check_linkable_name, check_team_key, governing_index, slug, validate_file_name, Memory,
    MemoryDir,
};
use crate::memory_type::MemoryType;

/// The editor form: the four fields of a memory Engram owns.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryForm {
    pub name: String,
    /// One line; recall selects memories by it.
    pub description: String,
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The Markdown after the frontmatter.
    pub body: String,
}

/// What an editor operation left behind, for the editor to show and keep editing.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditOutcome {
    /// The memory's file after the operation (the new name after a rename).
    pub file: String,
    /// The file as it is now on disk; `None` after a delete (or when theirs was a deletion). Its
    /// `content` is what the editor passes as `opened` to its next save.
    pub memory: Option<Memory>,
    /// The index that governs the file (`MEMORY.md`, `team/MEMORY.md`, …).
    pub index_file: String,
    /// The file's line in that index now, if it has one.
    pub index_line: Option<String>,
    /// What was written, file by file, with the history versions recorded.
    pub applied: ApplyReport,
}

/// How the user settles a save that hit [`Error::Conflict`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "keep")]
pub enum ConflictResolution {
    /// Write the form over `disk` — the content the conflict view showed as on disk
    /// ([`ConflictDetails::disk`]); if the disk moved again since, this is a conflict again.
    Mine {
        disk: Option<String>,
        form: MemoryForm,
    },
    /// Drop the edit; write nothing.
    Theirs,
}

impl MemoryForm {
    /// The form with its one-line fields flattened, refused when name or description is empty.
    fn normalized(&self) -> Result<MemoryForm> {
        let name = index::one_line(&self.name);
        let description = index::one_line(&self.description);
        if name.is_empty() {
            return Err(Error::InvalidInput("a memory needs a name".to_owned()));
        }
        if description.is_empty() {
            return Err(Error::InvalidInput(
                "a memory needs a one-line description: recall selects memories by it".to_owned(),
            ));
        }
        Ok(MemoryForm {
            name,
            description,
            memory_type: self.memory_type,
            body: self.body.trim_end().to_owned(),
        })
    }

    fn edit(&self) -> FieldEdit<'_> {
        FieldEdit {
            name: Some(&self.name),
            description: Some(&self.description),
            memory_type: Some(self.memory_type),
            body: Some(&self.body),
        }
    }

    /// This form written over `base` (the whole file; `None`: a new file).
    fn render_over(&self, base: Option<&str>) -> String {
        match base {
            Some(base) => frontmatter::apply_edit(base, &self.edit()),
            None => {
                frontmatter::render_new(&self.name, &self.description, self.memory_type, &self.body)
            }
        }
    }
}

impl MemoryDir {
    /// One memory for the editor. Its current content is recorded in history (as `external`)
    /// when history has not seen it, so the first save has a version to diff against and revert
    /// to.
    pub fn open_memory(&self, file: &str) -> Result<Memory> {
        let memory = self.show(file)?;
        self.engine().record_version(
            self.root(),
            &memory.header.file,
            Some(&memory.content),
            Actor::External,
        )?;
        Ok(memory)
    }

    /// Plans saving `form` over `opened` (the whole file as the editor loaded it), with the index
    /// line following. Empty when nothing changes.
    pub fn plan_save_memory(
        &self,
        file: &str,
        opened: &str,
        form: &MemoryForm,
    ) -> Result<ChangeSet> {
        let (rel, _) = self.resolve(file)?;
        let form = form.normalized()?;
        let mut set = ChangeSet::new(self.root());
        let after = form.render_over(Some(opened));
        if after == opened {
            // Nothing of the file to write, so applying would not compare it with the disk:
            // a stale editor is told here instead of being shown success over a moved file.
            if set.read(&rel)?.as_deref() != Some(opened) {
                return Err(Error::Conflict(self.root().join(&rel)));
            }
        } else {
            set.stage_write_over(
                &rel,
                Some(opened.to_owned()),
                after,
                &format!("edit {}", form.name),
            )?;
        }
        let previous = frontmatter::parse_document(opened).frontmatter;
        self.stage_index_line(&mut set, &rel, Some(&previous), &form)?;
        Ok(set)
    }

    /// Saves `form` over `opened`; [`Error::Conflict`] (nothing written) when the file changed on
    /// disk since the editor opened it.
    pub fn save_memory(&self, file: &str, opened: &str, form: &MemoryForm) -> Result<EditOutcome> {
        let set = self.plan_save_memory(file, opened, form)?;
        let (rel, _) = self.resolve(file)?;
        self.apply_edit_set(&set, &rel)
    }

    /// Both sides of a conflicted save: the disk as it is now, and the form written over it
    /// (what keeping mine would write), with the diff from disk to mine.
    pub fn memory_conflict(&self, file: &str, form: &MemoryForm) -> Result<ConflictDetails> {
        let (rel, path) = self.resolve(file)?;
        let form = form.normalized()?;
        let disk = read_optional(&path)?;
        let mine = match disk {
            Some(disk) => form.render_over(Some(&disk)),
            None => form.render_over(self.last_recorded_content(&rel)?.as_deref()),
        };
        self.engine().conflict_details(self.root(), &rel, &mine)
    }

    /// The newest content history holds for `rel` (opening a memory records it), so a memory
    /// brought back after a delete keeps the frontmatter keys the form does not show
    /// (`metadata`, `originSessionId`, …).
    fn last_recorded_content(&self, rel: &str) -> Result<Option<String>> {
        match self
            .engine()
            .history(self.root(), Some(rel))?
            .into_iter()
            .find(|v| v.hash.is_some())
        {
            Some(version) => self.engine().version_content(&version.version),
            None => Ok(None),
        }
    }

    /// Settles a conflicted save: keep mine (save the form over the disk content the user saw)
    /// or keep theirs (write nothing and hand back the disk version).
    pub fn resolve_memory_conflict(
        &self,
        file: &str,
        resolution: &ConflictResolution,
    ) -> Result<EditOutcome> {
        let (rel, path) = self.resolve(file)?;
        match resolution {
            ConflictResolution::Mine {
                disk: Some(disk),
                form,
            } => self.save_memory(&rel, disk, form),
            ConflictResolution::Mine { disk: None, form } => {
                // Deleted on disk: keeping mine brings the memory back, unless it reappeared.
                let form = form.normalized()?;
                let base = self.last_recorded_content(&rel)?;
                let mut set = ChangeSet::new(self.root());
                set.stage_write_over(
                    &rel,
                    None,
                    form.render_over(base.as_deref()),
                    &format!("restore {}", form.name),
                )?;
                self.stage_index_line(&mut set, &rel, None, &form)?;
                crate::disk::create_dir_all(self.root()).at(self.root())?;
                self.apply_edit_set(&set, &rel)
            }
            ConflictResolution::Theirs => {
                let memory = match read_optional(&path)? {
                    Some(_) => Some(self.open_memory(&rel)?),
                    None => None,
                };
                let (index_file, index_line) = self.index_line_of(&rel)?;
                Ok(EditOutcome {
                    file: rel,
                    memory,
                    index_file,
                    index_line,
                    applied: ApplyReport {
                        root: self.root().to_path_buf(),
                        actor: Actor::User,
                        files: Vec::new(),
                    },
                })
            }
        }
    }

    /// Plans a new memory from `form` in `file` (default `{type}_{slug}.md`) with its index line.
    /// A file that already exists is refused: the editor opens it instead.
    pub fn plan_create_memory(&self, file: Option<&str>, form: &MemoryForm) -> Result<ChangeSet> {
        let form = form.normalized()?;
        let rel = self.new_memory_file(file, &form)?;
        let mut set = ChangeSet::new(self.root());
        if set.read(&rel)?.is_some() {
            return Err(Error::InvalidInput(format!(
                "{rel}: a memory with this file name already exists; open it to edit it"
            )));
        }
        set.stage_write_over(
            &rel,
            None,
            form.render_over(None),
            &format!("create {}", form.name),
        )?;
        self.stage_index_line(&mut set, &rel, None, &form)?;
        Ok(set)
    }

    /// Creates a memory; see [`MemoryDir::plan_create_memory`].
    pub fn create_memory(&self, file: Option<&str>, form: &MemoryForm) -> Result<EditOutcome> {
        let set = self.plan_create_memory(file, form)?;
        let rel = self.new_memory_file(file, &form.normalized()?)?;
        crate::disk::create_dir_all(self.root()).at(self.root())?;
        self.apply_edit_set(&set, &rel)
    }

    /// The file a new memory goes to: `file` checked, else `{type}_{slug}.md` — the form most
    /// common in real memory dirs.
    fn new_memory_file(&self, file: Option<&str>, form: &MemoryForm) -> Result<String> {
        match file {
            Some(file) => {
                let rel = validate_file_name(self.root(), file)?;
                check_linkable_name(&rel)?;
                if self.is_team_file(&rel) {
                    check_team_key(&rel)?;
                }
                crate::platform::case::new_key_on_disk(self.root(), &rel)
            }
            None => crate::platform::case::new_key_on_disk(
                self.root(),
                &format!("{}_{}.md", form.memory_type.as_str(), slug(&form.name)),
            ),
        }
    }

    /// Plans renaming `file` to `new_file`: the new file with the same content, the old one
    /// deleted and the index link rewritten, in one change set. With `opened`, the disk must still
    /// hold what the editor loaded ([`Error::Conflict`] otherwise).
    pub fn plan_rename_memory(
        &self,
        file: &str,
        new_file: &str,
        opened: Option<&str>,
    ) -> Result<ChangeSet> {
        let (rel, path) = self.resolve(file)?;
        let (new_rel, _) = self.resolve(new_file)?;
        check_linkable_name(&new_rel)?;
        if self.is_team_file(&new_rel) {
            check_team_key(&new_rel)?;
        }
        if new_rel == rel {
            return Err(Error::InvalidInput(format!(
                "{rel}: the new name is the same as the old one"
            )));
        }
        // A case twin of another file is refused (or, on a case-insensitive volume, is that
        // file: "already exists" below). A rename of this file to another case is fine on a
        // case-sensitive volume; on a case-insensitive one the new name *is* this file, and
        // writing it then deleting the old name would delete the memory.
        let new_rel = match crate::platform::case::spelling_on_disk(self.root(), &new_rel)
            .map_err(|e| Error::io(self.root(), e))?
        {
            Some(on_disk) if on_disk == rel => {
                if crate::platform::case::folds_case(&self.root().join(index::parent_of(&rel)))
                    .unwrap_or(true)
                {
                    return Err(Error::InvalidInput(format!(
                        "{rel}: renaming it to {new_rel:?} changes only the case, which this \
                         case-insensitive volume takes for the same name; rename it to another \
                         name first, then to {new_rel:?}"
                    )));
                }
                new_rel
            }
            _ => crate::platform::case::new_key_on_disk(self.root(), &new_rel)?,
        };
        let mut set = ChangeSet::new(self.root());
        let content = set
            .read(&rel)?
            .ok_or_else(|| Error::NotFound(path.clone()))?;
        if opened.is_some_and(|opened| opened != content) {
            return Err(Error::Conflict(path));
        }
        if set.read(&new_rel)?.is_some() {
            return Err(Error::InvalidInput(format!(
                "{new_rel}: already exists; choose another name"
            )));
        }
        set.stage_delete(&rel, &format!("rename to {new_rel}"))?;
        set.stage_write_over(&new_rel, None, content, &format!("rename from {rel}"))?;

        let (old_index, old_link) = governing_index(self.root(), &rel);
        let (new_index, new_link) = governing_index(self.root(), &new_rel);
        let Some(raw_old) = set.read(&old_index)? else {
            return Ok(set);
        };
        let entries = index::parse_entries(&raw_old);
        let Some(entry) = entries.iter().find(|e| e.file == old_link) else {
            return Ok(set);
        };
        let reason = format!("relink {old_link} → {new_link}");
        if old_index == new_index {
            let raw_line = raw_old.lines().nth(entry.line - 1).unwrap_or_default();
            let line = relinked(raw_line, &new_link).unwrap_or_else(|| {
                index::entry_line(&entry.title, &new_link, entry.hook.as_deref().unwrap_or(""))
            });
            let updated = index::upsert_entry(&raw_old, &old_link, &line, None);
            // Any further line for the old name would dangle now.
            let (updated, _) = index::remove_entry(&updated, &old_link);
            set.stage_write(&old_index, updated, &reason)?;
        } else {
            let (without, _) = index::remove_entry(&raw_old, &old_link);
            set.stage_write(&old_index, without, &reason)?;
            let raw_new = set.read(&new_index)?.unwrap_or_default();
            let line =
                index::entry_line(&entry.title, &new_link, entry.hook.as_deref().unwrap_or(""));
            let section = frontmatter::parse_document(set.read(&new_rel)?.as_deref().unwrap_or(""))
                .frontmatter
                .memory_type;
            set.stage_write(
                &new_index,
                index::upsert_entry(&raw_new, &new_link, &line, section),
                &reason,
            )?;
        }
        Ok(set)
    }

    /// Renames a memory; see [`MemoryDir::plan_rename_memory`].
    pub fn rename_memory(
        &self,
        file: &str,
        new_file: &str,
        opened: Option<&str>,
    ) -> Result<EditOutcome> {
        let set = self.plan_rename_memory(file, new_file, opened)?;
        // The new file as the plan spells it: on a case-insensitive volume a folder part may
        // be spelled as on disk rather than as given.
        let new_rel = match set
            .changes
            .iter()
            .find(|c| c.before.is_none() && c.after.is_some() && !index::is_index_file(&c.file))
        {
            Some(created) => created.file.clone(),
            None => self.resolve(new_file)?.0,
        };
        self.apply_edit_set(&set, &new_rel)
    }

    /// Plans deleting a memory and its index line(s). With `opened`, the disk must still hold
    /// what the editor loaded ([`Error::Conflict`] otherwise): a memory Claude Code just rewrote
    /// is not deleted unseen.
    pub fn plan_delete_memory(&self, file: &str, opened: Option<&str>) -> Result<ChangeSet> {
        let (rel, path) = self.resolve(file)?;
        let mut set = ChangeSet::new(self.root());
        self.plan_forget(&rel, &mut set)?;
        if let Some(opened) = opened {
            let before = set
                .changes
                .iter()
                .find(|c| c.file == rel)
                .and_then(|c| c.before.as_deref());
            if before != Some(opened) {
                return Err(Error::Conflict(path));
            }
        }
        Ok(set)
    }

    /// Deletes a memory; see [`MemoryDir::plan_delete_memory`].
    pub fn delete_memory(&self, file: &str, opened: Option<&str>) -> Result<EditOutcome> {
        let set = self.plan_delete_memory(file, opened)?;
        let (rel, _) = self.resolve(file)?;
        self.apply_edit_set(&set, &rel)
    }

    /// Stages the index line of `rel` for `form`: added when missing; otherwise the hook follows
    /// a changed description and the title follows a changed name when it was the old name.
    /// `previous` is the file's frontmatter before the edit (`None` for a new file).
    fn stage_index_line(
        &self,
        set: &mut ChangeSet,
        rel: &str,
        previous: Option<&Frontmatter>,
        form: &MemoryForm,
    ) -> Result<()> {
        let (index_file, link) = governing_index(self.root(), rel);
        let raw = set.read(&index_file)?.unwrap_or_default();
        let entries = index::parse_entries(&raw);
        let line = match entries.iter().find(|e| e.file == link) {
            Some(entry) => {
                let old_name = previous.and_then(|p| p.name.as_deref());
                let old_description = previous.and_then(|p| p.description.as_deref());
                let title_follows =
                    old_name == Some(entry.title.as_str()) && old_name != Some(&form.name);
                let hook_follows = old_description != Some(&form.description);
                if !title_follows && !hook_follows {
                    return Ok(());
                }
                let title = if title_follows {
                    &form.name
                } else {
                    &entry.title
                };
                let hook = if hook_follows {
                    form.description.as_str()
                } else {
                    entry.hook.as_deref().unwrap_or("")
                };
                index::entry_line(title, &link, hook)
            }
            None => index::entry_line(&form.name, &link, &form.description),
        };
        let updated = index::upsert_entry(&raw, &link, &line, Some(form.memory_type));
        if updated != raw {
            set.stage_write(&index_file, updated, &format!("index {link}"))?;
        }
        Ok(())
    }

    /// Applies an editor change set as the user and reports the state of `rel` afterwards. A
    /// file that failed to land is an error naming it.
    fn apply_edit_set(&self, set: &ChangeSet, rel: &str) -> Result<EditOutcome> {
        let applied = self.engine().apply_change_set(set, Actor::User)?;
        applied.first_failure()?;
        let memory = match read_optional(&self.root().join(rel))? {
            Some(_) => Some(self.show(rel)?),
            None => None,
        };
        let (index_file, index_line) = self.index_line_of(rel)?;
        Ok(EditOutcome {
            file: rel.to_owned(),
            memory,
            index_file,
            index_line,
            applied,
        })
    }

    /// The index governing `rel` and `rel`'s line in it, as written.
    fn index_line_of(&self, rel: &str) -> Result<(String, Option<String>)> {
        let (index_file, link) = governing_index(self.root(), rel);
        let raw = read_optional(&self.root().join(&index_file))?.unwrap_or_default();
        let line = index::parse_entries(&raw)
            .into_iter()
            .find(|e| e.file == link)
            .and_then(|e| raw.lines().nth(e.line - 1).map(str::to_owned));
        Ok((index_file, line))
    }
}

/// `line` (an index entry as written) with its link target replaced by `target`, keeping the
/// bullet, title, separator and hook; `None` when the line does not have the plain
/// `[title](target)` shape this can rewrite safely.
fn relinked(line: &str, target: &str) -> Option<String> {
    let open = line.find("](")? + 2;
    let close = open + line[open..].find(')')?;
    let rewritten = format!("{}{target}{}", &line[..open], &line[close..]);
    match index::parse_entry_line(&rewritten) {
        Some((_, file, _)) if file == target => Some(rewritten),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::changeset::ChangeKind;
    use crate::engine::Engine;
    use crate::environment::Environment;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::TempMemoryDir;
    use crate::watch::{MemoryDirEvent, WatchOptions};

    /// A copy of a real memory dir (`stockerly`, `claude-code-2.1.330`) where Claude Code keeps
    /// a project's, and an engine whose history lives in the same temp dir.
    fn fixture(real: &str) -> TempMemoryDir {
        TempMemoryDir::real("projects/-home-u-app/memory", real)
    }

    fn form_of(memory: &Memory) -> MemoryForm {
        MemoryForm {
            name: memory.header.name.clone().expect("name"),
            description: memory.header.description.clone().expect("description"),
            memory_type: memory.header.memory_type.expect("type"),
            body: memory.body.clone(),
        }
    }

    #[test]
    fn a_save_rewrites_only_the_form_fields_and_the_hook_follows_the_description() {
        let fx = fixture("stockerly");
        let opened = fx
            .dir
            .open_memory("feedback_brutal_honesty.md")
            .expect("open");
        let index_before = fx.read("MEMORY.md").expect("index");
        let mut form = form_of(&opened);
        form.body = opened
            .body
            .replace("EVERY interaction", "every interaction");

        let outcome = fx
            .dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect("body-only save");
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some(index_before.as_str()),
            "a body edit leaves the curated index line alone"
        );
        let saved = outcome.memory.expect("memory after save");
        assert!(saved.content.contains("every interaction"));
        assert_eq!(saved.content, fx.read(&opened.header.file).expect("file"));
        assert_eq!(
            outcome.index_line.as_deref(),
            Some("- [Brutal honesty mandate](feedback_brutal_honesty.md) — Adrian's explicit ask, applies to all responses")
        );
        assert_eq!(outcome.applied.files.len(), 1);

        form.description = "Be blunt; Adrian asked for it".to_owned();
        let outcome = fx
            .dir
            .save_memory(&opened.header.file, &saved.content, &form)
            .expect("description save");
        assert_eq!(
            outcome.index_line.as_deref(),
            Some("- [Brutal honesty mandate](feedback_brutal_honesty.md) — Be blunt; Adrian asked for it")
        );
        let index = fx.read("MEMORY.md").expect("index");
        assert_eq!(
            index.lines().count(),
            index_before.lines().count(),
            "refreshed in place, not appended"
        );
        assert!(index.starts_with("# Stockerly Memory Index\n"));

        assert_eq!(
            fx.actors(&opened.header.file),
            [Actor::User, Actor::User, Actor::External],
            "opening recorded the original, each save a user version"
        );
    }

    #[test]
    fn a_save_keeps_the_2_1_330_metadata_stamp_and_nested_type() {
        let fx = fixture("claude-code-2.1.330");
        let opened = fx.dir.open_memory("prefers-tabs-default.md").expect("open");
        let mut form = form_of(&opened);
        form.memory_type = MemoryType::User;
        form.body = "Use tabs.\n".to_owned();
        fx.dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect("save");
        let text = fx.read("prefers-tabs-default.md").expect("file");
        assert_eq!(
            text,
            "---\nname: prefers-tabs\ndescription: User prefers tabs over spaces WRITTEN-555\nmetadata:\n  node_type: memory\n  type: user\n  originSessionId: 3ed04df3-3a97-4f9b-a2a3-a2a120610cb7\n  modified: 2026-11-22T08:38:28.099Z\n---\n\nUse tabs.\n"
        );
        // The file had no index line: the save adds one (the two-step protocol).
        assert_eq!(
            fx.read("MEMORY.md").expect("index"),
            "- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays MEMIDX-777\n- [prefers-tabs](prefers-tabs-default.md) — User prefers tabs over spaces WRITTEN-555\n"
        );
    }

    #[test]
    fn the_title_follows_a_renamed_memory_only_when_it_was_the_old_name() {
        let fx = fixture("stockerly");
        let opened = fx
            .dir
            .open_memory("feedback_brutal_honesty.md")
            .expect("open");
        assert_eq!(
            opened.header.name.as_deref(),
            Some("Brutal honesty mandate")
        );
        let mut form = form_of(&opened);
        form.name = "Brutal honesty, always".to_owned();
        let outcome = fx
            .dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect("save");
        assert_eq!(
            outcome.index_line.as_deref(),
            Some("- [Brutal honesty, always](feedback_brutal_honesty.md) — Adrian's explicit ask, applies to all responses"),
            "title was the name: it follows; the curated hook stays"
        );

        let fx = fixture("stockerly");
        let opened = fx.dir.open_memory("project_vision.md").expect("open");
        let mut form = form_of(&opened);
        let curated = "- [Vision & audience](project_vision.md) — North star + beta cerrada B+ (≤20 invited friends), decided 2026-05-14";
        assert_eq!(
            opened.header.name.as_deref(),
            Some("Stockerly vision & audience")
        );
        form.name = "Vision".to_owned();
        let outcome = fx
            .dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect("save");
        assert_eq!(outcome.index_line.as_deref(), Some(curated));
    }

    #[test]
    fn a_save_over_a_file_claude_changed_is_a_conflict_then_resolved_either_way() {
        let fx = fixture("stockerly");
        let opened = fx.dir.open_memory("user_adrian.md").expect("open");
        let mut form = form_of(&opened);
        form.body = "Mine.\n".to_owned();
        form.description = "Adrian, investor".to_owned();
        let theirs = opened
            .content
            .replace("Demands brutal honesty.", "Prefers brevity.");
        assert_ne!(theirs, opened.content);
        fx.write("user_adrian.md", &theirs);
        let index_before = fx.read("MEMORY.md").expect("index");

        let err = fx
            .dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect_err("the disk moved on");
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert!(err.to_string().contains("user_adrian.md"), "{err}");
        assert_eq!(fx.read("user_adrian.md").as_deref(), Some(theirs.as_str()));
        assert_eq!(
            fx.read("MEMORY.md").as_deref(),
            Some(index_before.as_str()),
            "the index line did not move either"
        );

        let conflict = fx
            .dir
            .memory_conflict(&opened.header.file, &form)
            .expect("conflict details");
        assert_eq!(conflict.disk.as_deref(), Some(theirs.as_str()));
        assert!(
            conflict.mine.ends_with("---\n\nMine.\n"),
            "{}",
            conflict.mine
        );
        assert!(conflict.diff.contains("+Mine."), "{}", conflict.diff);

        let kept = fx
            .dir
            .resolve_memory_conflict(&opened.header.file, &ConflictResolution::Theirs)
            .expect("keep theirs");
        assert!(
            kept.applied.files.is_empty(),
            "keeping theirs writes nothing"
        );
        assert_eq!(
            kept.memory.expect("disk version").content,
            theirs,
            "the editor reloads the disk version"
        );

        let resolved = fx
            .dir
            .resolve_memory_conflict(
                &opened.header.file,
                &ConflictResolution::Mine {
                    disk: conflict.disk.clone(),
                    form: form.clone(),
                },
            )
            .expect("keep mine");
        assert_eq!(
            fx.read("user_adrian.md").as_deref(),
            Some(conflict.mine.as_str())
        );
        assert_eq!(
            resolved.index_line.as_deref(),
            Some("- [Adrian profile](user_adrian.md) — Adrian, investor")
        );
        // Claude's version is in history, so keeping mine lost nothing.
        let history = fx
            .dir
            .engine()
            .history(fx.dir.root(), Some("user_adrian.md"))
            .expect("history");
        let theirs_version = history
            .iter()
            .find(|v| {
                v.actor == Actor::External
                    && v.hash.as_deref() == Some(&crate::disk::content_hash(theirs.as_bytes()))
            })
            .expect("their version recorded");
        assert_eq!(
            fx.dir
                .engine()
                .version_content(&theirs_version.version)
                .expect("content")
                .as_deref(),
            Some(theirs.as_str())
        );

        // Keeping mine over a disk that moved again is a conflict again.
        fx.write("user_adrian.md", "moved again\n");
        let err = fx
            .dir
            .resolve_memory_conflict(
                &opened.header.file,
                &ConflictResolution::Mine {
                    disk: conflict.disk,
                    form,
                },
            )
            .expect_err("moved again");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(fx.read("user_adrian.md").as_deref(), Some("moved again\n"));
    }

    #[test]
    fn a_memory_deleted_while_open_can_be_restored_by_keeping_mine() {
        let fx = fixture("claude-code-2.1.330");
        let opened = fx.dir.open_memory("deploy-freeze.md").expect("open");
        fs::remove_file(fx.path("deploy-freeze.md")).expect("Claude deletes it");
        let form = form_of(&opened);
        let err = fx
            .dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect_err("deleted on disk");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        let conflict = fx
            .dir
            .memory_conflict(&opened.header.file, &form)
            .expect("details");
        assert_eq!(conflict.disk, None);
        fx.dir
            .resolve_memory_conflict(
                &opened.header.file,
                &ConflictResolution::Mine { disk: None, form },
            )
            .expect("restore");
        assert_eq!(
            fx.read("deploy-freeze.md").as_deref(),
            Some(conflict.mine.as_str())
        );
        assert_eq!(
            conflict.mine, opened.content,
            "an unchanged form brings back every byte, the keys the form does not show included"
        );
    }

    #[test]
    fn a_memory_brought_back_keeps_the_frontmatter_keys_the_form_does_not_show() {
        let fx = fixture("claude-code-2.1.330");
        let stamped = "---\nname: release-notes\ndescription: Notes go in CHANGES.md\nmetadata:\n  node_type: memory\n  type: project\n  originSessionId: 3ed04df3-3a97-4f9b-a2a3-a2a120610cb7\n---\n\nBody.\n";
        fs::write(fx.path("release-notes.md"), stamped).expect("Claude writes it");
        let opened = fx.dir.open_memory("release-notes.md").expect("open");
        fs::remove_file(fx.path("release-notes.md")).expect("Claude deletes it");
        let mut form = form_of(&opened);
        form.body = "Body, edited.".to_owned();
        fx.dir
            .resolve_memory_conflict(
                &opened.header.file,
                &ConflictResolution::Mine { disk: None, form },
            )
            .expect("restore");
        let restored = fx.read("release-notes.md").expect("restored");
        assert!(
            restored.contains("originSessionId: 3ed04df3-3a97-4f9b-a2a3-a2a120610cb7")
                && restored.contains("Body, edited."),
            "{restored}"
        );
    }

    #[test]
    fn create_adds_the_file_and_its_line_under_the_type_s_section() {
        let fx = fixture("stockerly");
        let form = MemoryForm {
            name: "Release cadence".to_owned(),
            description: "Ship on Tuesdays,\n after the review".to_owned(),
            memory_type: MemoryType::Project,
            body: "Ship on Tuesdays.\n\n".to_owned(),
        };
        let plan = fx.dir.plan_create_memory(None, &form).expect("plan");
        let kinds: Vec<(&str, ChangeKind)> = plan
            .changes
            .iter()
            .map(|c| (c.file.as_str(), c.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("project_release_cadence.md", ChangeKind::Add),
                ("MEMORY.md", ChangeKind::Modify)
            ]
        );
        assert!(plan.changes[1].diff.contains("+- [Release cadence](project_release_cadence.md) — Ship on Tuesdays, after the review"), "{}", plan.changes[1].diff);
        assert!(
            !fx.path("project_release_cadence.md").exists(),
            "planning writes nothing"
        );

        let outcome = fx.dir.create_memory(None, &form).expect("create");
        assert_eq!(outcome.file, "project_release_cadence.md");
        assert_eq!(
            fx.read("project_release_cadence.md").as_deref(),
            Some("---\nname: Release cadence\ndescription: Ship on Tuesdays, after the review\ntype: project\n---\n\nShip on Tuesdays.\n")
        );
        let index = fx.read("MEMORY.md").expect("index");
        let lines: Vec<&str> = index.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("project_release_cadence.md"))
            .expect("indexed");
        assert!(
            lines[at - 1].contains("project_expert_panel_v2.md"),
            "after the last Project entry"
        );
        assert_eq!(
            lines[at + 1],
            "",
            "before the blank line ending the section"
        );

        let err = fx.dir.create_memory(None, &form).expect_err("exists");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.to_string().contains("project_release_cadence.md"),
            "{err}"
        );
        let err = fx
            .dir
            .create_memory(Some("../escape.md"), &form)
            .expect_err("outside");
        assert_eq!(err.kind(), ErrorKind::PathDenied);
        let mut nameless = form.clone();
        nameless.description = "  ".to_owned();
        assert_eq!(
            fx.dir
                .create_memory(Some("x.md"), &nameless)
                .expect_err("no description")
                .kind(),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn create_in_a_missing_memory_dir_creates_it_with_its_index() {
        let temp = tempfile::tempdir().expect("temp");
        let engine = Engine::builder(Environment::empty())
            .engram_home(temp.path().join("engram"))
            .build();
        let dir = engine.memory_dir(temp.path().join("projects/-new/memory"));
        let form = MemoryForm {
            name: "Role".to_owned(),
            description: "Senior Rust dev".to_owned(),
            memory_type: MemoryType::User,
            body: String::new(),
        };
        let outcome = dir.create_memory(None, &form).expect("create");
        assert_eq!(
            outcome.index_line.as_deref(),
            Some("- [Role](user_role.md) — Senior Rust dev")
        );
        assert_eq!(
            fs::read_to_string(dir.root().join("user_role.md")).expect("file"),
            "---\nname: Role\ndescription: Senior Rust dev\ntype: user\n---\n"
        );
    }

    #[test]
    fn rename_moves_the_file_and_rewrites_the_link_in_place() {
        let fx = fixture("stockerly");
        let opened = fx.dir.open_memory("project_decision.md").expect("open");
        let index_before = fx.read("MEMORY.md").expect("index");
        let plan = fx
            .dir
            .plan_rename_memory(
                "project_decision.md",
                "project_fix_not_rewrite.md",
                Some(&opened.content),
            )
            .expect("plan");
        assert_eq!(
            plan.len(),
            3,
            "old deleted, new added, index modified: {plan:?}"
        );

        let outcome = fx
            .dir
            .rename_memory(
                "project_decision.md",
                "project_fix_not_rewrite.md",
                Some(&opened.content),
            )
            .expect("rename");
        assert_eq!(outcome.file, "project_fix_not_rewrite.md");
        assert!(!fx.path("project_decision.md").exists());
        assert_eq!(
            fx.read("project_fix_not_rewrite.md").as_deref(),
            Some(opened.content.as_str())
        );
        assert_eq!(
            fx.read("MEMORY.md").expect("index"),
            index_before.replace("](project_decision.md)", "](project_fix_not_rewrite.md)"),
            "only the link changed; title, hook and position kept"
        );
        assert!(fx
            .dir
            .lint()
            .expect("lint")
            .by_rule(crate::lint::DANGLING_POINTER)
            .next()
            .is_none());

        let err = fx
            .dir
            .rename_memory("project_vision.md", "user_adrian.md", None)
            .expect_err("target exists");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        fx.write("project_vision.md", "changed by Claude\n");
        let err = fx
            .dir
            .rename_memory(
                "project_vision.md",
                "vision.md",
                Some("what the editor had"),
            )
            .expect_err("stale editor");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert!(fx.path("project_vision.md").exists() && !fx.path("vision.md").exists());
    }

    /// Platforms row 13: the editor neither creates nor renames to a name Windows cannot hold,
    /// and says which rule; a memory that already has such a name opens and renames away.
    #[test]
    fn the_editor_refuses_names_windows_cannot_hold_and_renames_them_away() {
        let fx = fixture("stockerly");
        let form = MemoryForm {
            name: "Release cadence".to_owned(),
            description: "Ship on Tuesdays".to_owned(),
            memory_type: MemoryType::Project,
            body: "Ship on Tuesdays.\n".to_owned(),
        };
        for (file, rule) in [
            ("con.md", "Windows device name"),
            ("notes:ads.md", "alternate data stream"),
            ("notes./x.md", "ends in a dot or a space"),
        ] {
            let err = fx
                .dir
                .plan_create_memory(Some(file), &form)
                .expect_err(file);
            assert!(err.to_string().contains(rule), "{file}: {err}");
            let err = fx
                .dir
                .plan_rename_memory("project_vision.md", file, None)
                .expect_err(file);
            assert!(err.to_string().contains(rule), "{file}: {err}");
        }
        fx.write("nul.md", "---\nname: Legacy\ntype: project\n---\nkept\n");
        assert!(fx.dir.open_memory("nul.md").is_ok(), "still opens");
        fx.dir
            .rename_memory("nul.md", "project_legacy.md", None)
            .expect("renamed away");
        assert_eq!(
            fx.read("project_legacy.md").as_deref(),
            Some("---\nname: Legacy\ntype: project\n---\nkept\n")
        );
    }

    /// Platforms row 12: the editor creates no file, and renames none to a name, that differs
    /// only in case from another memory's (one file on macOS and Windows); renaming a memory
    /// to another case of its own name is fine on this case-sensitive disk.
    #[test]
    fn the_editor_refuses_case_twins_of_other_memories() {
        let fx = fixture("stockerly");
        let form = MemoryForm {
            name: "Vision".to_owned(),
            description: "Another vision".to_owned(),
            memory_type: MemoryType::Project,
            body: "x\n".to_owned(),
        };
        let vision = fx.read("project_vision.md").expect("fixture");
        let err = fx
            .dir
            .plan_create_memory(Some("Project_Vision.md"), &form)
            .expect_err("a case twin");
        let text = err.to_string();
        assert!(
            text.contains("\"Project_Vision.md\"") && text.contains("\"project_vision.md\""),
            "names both: {text}"
        );
        let err = fx
            .dir
            .plan_rename_memory("feedback_brutal_honesty.md", "PROJECT_VISION.md", None)
            .expect_err("a case twin of another memory");
        assert!(err.to_string().contains("\"project_vision.md\""), "{err}");
        assert_eq!(
            fx.read("project_vision.md").as_deref(),
            Some(vision.as_str())
        );

        fx.dir
            .rename_memory("project_vision.md", "Project_Vision.md", None)
            .expect("its own name in another case");
        assert_eq!(
            fx.read("Project_Vision.md").as_deref(),
            Some(vision.as_str())
        );
        assert!(!fx.path("project_vision.md").exists());
        let index = fx.read("MEMORY.md").expect("index");
        assert!(
            index.contains("(Project_Vision.md)") && !index.contains("(project_vision.md)"),
            "{index}"
        );
    }

    /// Platforms row 12 on a real case-insensitive directory: a rename that changes only the
    /// case is refused with why (the new name *is* the file: writing it, then deleting the old
    /// name, would delete the memory), and a new memory under another case of an existing file's
    /// name is refused as the file that exists.
    #[test]
    fn on_a_case_insensitive_volume_the_editor_keeps_one_file_per_name() {
        let fat = match crate::platform::case::fat::CaseInsensitiveDir::mount() {
            Ok(fat) => fat,
            Err(why) => {
                eprintln!("skipped: no case-insensitive directory here: {why}");
                return;
            }
        };
        let engram_home = tempfile::tempdir().expect("engram home");
        let engine = crate::Engine::builder(crate::Environment::empty())
            .engram_home(engram_home.path())
            .build();
        let dir = engine.memory_dir(fat.path());
        let text = "---\nname: Vision\ndescription: where\ntype: project\n---\nfar\n";
        fs::write(fat.path().join("Vision.md"), text).expect("write");
        fs::write(
            fat.path().join("MEMORY.md"),
            "- [Vision](Vision.md) — where\n",
        )
        .expect("index");
        let err = dir
            .plan_rename_memory("Vision.md", "vision.md", None)
            .expect_err("case only");
        assert!(err.to_string().contains("changes only the case"), "{err}");
        let form = MemoryForm {
            name: "Vision".to_owned(),
            description: "again".to_owned(),
            memory_type: MemoryType::Project,
            body: "x\n".to_owned(),
        };
        let err = dir
            .plan_create_memory(Some("VISION.md"), &form)
            .expect_err("exists");
        assert!(err.to_string().contains("Vision.md: a memory"), "{err}");
        assert_eq!(
            fs::read_to_string(fat.path().join("Vision.md")).expect("read"),
            text
        );
        // Into a folder given in another case: it is that folder, and the outcome says so.
        fs::create_dir(fat.path().join("Notes")).expect("mkdir");
        let outcome = dir
            .rename_memory("Vision.md", "notes/vision.md", None)
            .expect("rename into Notes/");
        assert_eq!(outcome.file, "Notes/vision.md");
        assert!(
            outcome
                .index_line
                .as_deref()
                .is_some_and(|line| line.contains("(Notes/vision.md)")),
            "{:?}",
            outcome.index_line
        );
    }

    #[test]
    fn rename_into_a_dir_with_its_own_index_moves_the_line_there() {
        let fx = fixture("claude-code-2.1.330");
        fs::create_dir_all(fx.path("team")).expect("team dir");
        fx.write("team/MEMORY.md", "# Team\n");
        fx.dir
            .rename_memory("deploy-freeze.md", "team/deploy-freeze.md", None)
            .expect("rename");
        assert_eq!(fx.read("MEMORY.md").as_deref(), Some(""));
        assert_eq!(
            fx.read("team/MEMORY.md").as_deref(),
            Some(
                "# Team\n- [Deploy freeze](deploy-freeze.md) — no deploys on Fridays MEMIDX-777\n"
            )
        );
    }

    #[test]
    fn delete_removes_the_file_and_its_line_unless_the_editor_is_stale() {
        let fx = fixture("stockerly");
        let opened = fx
            .dir
            .open_memory("feedback_anti_patterns.md")
            .expect("open");
        fx.write("feedback_anti_patterns.md", "rewritten by Claude\n");
        let err = fx
            .dir
            .delete_memory(&opened.header.file, Some(&opened.content))
            .expect_err("stale");
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert!(fx.path("feedback_anti_patterns.md").exists());

        let outcome = fx
            .dir
            .delete_memory(&opened.header.file, Some("rewritten by Claude\n"))
            .expect("delete");
        assert!(outcome.memory.is_none() && outcome.index_line.is_none());
        assert!(!fx.path("feedback_anti_patterns.md").exists());
        assert!(!fx
            .read("MEMORY.md")
            .expect("index")
            .contains("feedback_anti_patterns.md"));
        let history = fx
            .dir
            .engine()
            .history(fx.dir.root(), Some("feedback_anti_patterns.md"))
            .expect("history");
        assert_eq!(history[0].summary, "deleted");
        assert_eq!(history[0].actor, Actor::User);
        assert_eq!(history[1].actor, Actor::External, "Claude's rewrite kept");

        assert_eq!(
            fx.dir
                .delete_memory("nothing.md", None)
                .expect_err("missing")
                .kind(),
            ErrorKind::NotFound
        );
    }

    #[test]
    fn edits_are_not_echoed_by_the_watcher_but_an_external_write_is() {
        let fx = fixture("stockerly");
        let (sender, receiver) = mpsc::channel::<Vec<MemoryDirEvent>>();
        let options = WatchOptions {
            debounce: Duration::from_millis(50),
            ..WatchOptions::default()
        };
        let _watch = fx
            .dir
            .engine()
            .watch_memory_dir(fx.dir.root(), options, move |batch| {
                let _ = sender.send(batch);
            })
            .expect("watch");
        let opened = fx.dir.open_memory("user_adrian.md").expect("open");
        let mut form = form_of(&opened);
        form.description = "changed in the editor".to_owned();
        fx.dir
            .save_memory(&opened.header.file, &opened.content, &form)
            .expect("save");
        fx.dir
            .rename_memory("project_vision.md", "vision.md", None)
            .expect("rename");
        // Let the own writes settle, then change a file behind Engram's back.
        std::thread::sleep(Duration::from_millis(300));
        fx.write("project_working_method.md", "edited in vim\n");

        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !seen
            .iter()
            .any(|e: &MemoryDirEvent| e.file == "project_working_method.md")
        {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            seen.extend(
                receiver
                    .recv_timeout(left)
                    .expect("the external write is reported"),
            );
        }
        let files: Vec<&str> = seen.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            ["project_working_method.md"],
            "no echo of save or rename: {seen:?}"
        );
        let version = seen[0].version.as_deref().expect("recorded");
        let recorded = fx.dir.engine().find_version(version).expect("version");
        assert_eq!(recorded.actor, Actor::External);
    }
}
