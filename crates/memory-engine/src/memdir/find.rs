//! Naming a memory as a person does. `engram show`, `engram forget`, `engram history FILE` and
//! the MCP read tool take the memory's file as its index links it (`feedback_tabs.md`), the same
//! without `.md` (`feedback_tabs`), or the `name` in its frontmatter (`"Tabs"`), letter case and
//! the encoding of accents aside ([`fold`]): people remember what a memory is called, not the
//! file Claude Code derived from it.
//! Only whole names are matched, never a part of one — `forget` deletes what it finds.

use super::{validate_file_name, MemoryDir};
use crate::error::{Error, IoResultExt, Result};
use crate::platform::case::{fold, spelling_on_disk};

/// How many memories an error names when a name is ambiguous or near to others.
const NAMED_IN_ERRORS: usize = 5;

impl MemoryDir {
    /// The memory file `given` names: the file `given` is, with `.md` added when it lacks it
    /// and spelled as on disk, when it exists; else the one memory whose frontmatter name or
    /// title in `MEMORY.md` is `given` (case aside). A name two memories share is refused,
    /// naming them. A `.md` name nothing answers to comes back as given, for the caller to say
    /// it is not found (or, for `forget`, to find its index line); any other name nothing
    /// answers to is refused, naming the memories whose file or names contain it.
    pub fn find_memory(&self, given: &str) -> Result<String> {
        self.find_memory_or(given, || Ok(None))
    }

    /// [`MemoryDir::find_memory`], asking `otherwise` (a deleted memory, for history) before
    /// refusing a name no memory on disk answers to.
    pub(crate) fn find_memory_or(
        &self,
        given: &str,
        otherwise: impl FnOnce() -> Result<Option<String>>,
    ) -> Result<String> {
        if given.trim().is_empty() {
            return Err(Error::InvalidInput(
                "no memory named: give its file or its name".to_owned(),
            ));
        }
        // Whatever the name, the file it would be passes the path checks first, so a name
        // never reaches outside the dir nor names the index.
        let given_as_file = if given.ends_with(".md") {
            given.to_owned()
        } else {
            format!("{given}.md")
        };
        let rel = validate_file_name(self.root(), &given_as_file)?;
        // As spelled on disk: `Feedback_Tabs` is `feedback_tabs.md`, on every volume.
        let rel = spelling_on_disk(self.root(), &rel)
            .at(self.root())?
            .unwrap_or(rel);
        if self.root().join(&rel).exists() {
            return Ok(rel);
        }
        // Case aside, and an accent typed composed or not ("Café" either way).
        let wanted = fold(given.trim());
        let names = self.names()?;
        let mut answering: Vec<&str> = names
            .iter()
            .filter(|(_, name)| fold(name.trim()) == wanted)
            .map(|(file, _)| file.as_str())
            .collect();
        answering.dedup();
        match answering.as_slice() {
            [only] => Ok((*only).to_owned()),
            [] if given.ends_with(".md") => Ok(rel),
            [] => otherwise()?.ok_or_else(|| self.nothing_answers(given, &wanted, &names)),
            several => Err(Error::InvalidInput(format!(
                "memory {given:?} is ambiguous: {} memories have that name ({}); give its file",
                several.len(),
                listed(several)
            ))),
        }
    }

    /// Every memory's file with each name a person knows it by: the name in its frontmatter and
    /// its title in `MEMORY.md`, sorted by file.
    fn names(&self) -> Result<Vec<(String, String)>> {
        let mut names: Vec<(String, String)> = self
            .scan(None)?
            .into_iter()
            .filter_map(|header| Some((header.file, header.name?)))
            .chain(
                self.load_index()?
                    .entries
                    .into_iter()
                    .map(|entry| (entry.file, entry.title)),
            )
            .collect();
        names.sort();
        Ok(names)
    }

    fn nothing_answers(&self, given: &str, wanted: &str, names: &[(String, String)]) -> Error {
        let mut near: Vec<&str> = names
            .iter()
            .filter(|(file, name)| fold(file).contains(wanted) || fold(name).contains(wanted))
            .map(|(file, _)| file.as_str())
            .collect();
        near.dedup();
        let hint = if near.is_empty() {
            "`engram scan` lists them".to_owned()
        } else {
            format!("did you mean {}?", listed(&near))
        };
        Error::InvalidInput(format!(
            "no memory {given:?} in {}: no file or memory name is that; {hint}",
            self.root().display()
        ))
    }
}

/// The first few of `files`, then how many more.
fn listed(files: &[&str]) -> String {
    let mut text = files
        .iter()
        .take(NAMED_IN_ERRORS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > NAMED_IN_ERRORS {
        text.push_str(&format!(" and {} more", files.len() - NAMED_IN_ERRORS));
    }
    text
}

#[cfg(test)]
mod tests {
    use crate::testing::fixtures::{copy_tree, real_memory};
    use crate::{Engine, Environment, Error};

    fn stockerly() -> (tempfile::TempDir, tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().expect("memory dir");
        copy_tree(&real_memory("stockerly"), dir.path());
        let engram_home = tempfile::tempdir().expect("engram home");
        let engine = Engine::builder(Environment::empty())
            .engram_home(engram_home.path())
            .build();
        (dir, engram_home, engine)
    }

    #[test]
    fn a_memory_is_found_by_its_file_with_or_without_md_or_by_its_name() {
        let (dir, _home, engine) = stockerly();
        let memories = engine.memory_dir(dir.path());
        for given in [
            "feedback_brutal_honesty.md",
            "feedback_brutal_honesty",
            "Feedback_Brutal_Honesty",
            "Brutal honesty mandate",
            "  brutal HONESTY mandate ",
        ] {
            assert_eq!(
                memories.find_memory(given).expect(given),
                "feedback_brutal_honesty.md",
                "{given}"
            );
        }
        // Named "Stockerly vision & audience", titled "Vision & audience" in MEMORY.md.
        for given in ["stockerly vision & audience", "Vision & Audience"] {
            assert_eq!(
                memories.find_memory(given).expect(given),
                "project_vision.md",
                "{given}"
            );
        }
        // A name with an accent, typed composed or as a letter and a combining accent.
        std::fs::write(
            memories.root().join("project_cafe.md"),
            "---\nname: Caf\u{e9} opening hours\ndescription: When the café opens\ntype: project\n---\n\nFrom 8.\n",
        )
        .expect("write");
        for given in ["caf\u{e9} opening hours", "CAFE\u{301} opening hours"] {
            assert_eq!(
                memories.find_memory(given).expect(given),
                "project_cafe.md",
                "{given}"
            );
        }
    }

    #[test]
    fn a_part_of_a_name_is_refused_naming_the_memories_it_is_part_of() {
        let (dir, _home, engine) = stockerly();
        let memories = engine.memory_dir(dir.path());
        let error = memories
            .find_memory("honesty")
            .expect_err("a part of a name");
        let message = error.to_string();
        assert!(matches!(error, Error::InvalidInput(_)), "{message}");
        assert!(
            message.contains("no memory \"honesty\"")
                && message.contains("did you mean feedback_brutal_honesty.md?"),
            "{message}"
        );
        let unknown = memories
            .find_memory("kubernetes")
            .expect_err("nothing near");
        assert!(
            unknown.to_string().ends_with("`engram scan` lists them"),
            "{unknown}"
        );
    }

    #[test]
    fn a_name_two_memories_share_is_refused_naming_both_and_a_file_is_never_ambiguous() {
        let (dir, _home, engine) = stockerly();
        // A second memory named as the profile is, and one named as the profile's file.
        std::fs::write(
            dir.path().join("project_adrian.md"),
            "---\nname: adrian profile\ndescription: d\ntype: project\n---\nbody\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join("project_profile.md"),
            "---\nname: User_Adrian\ndescription: d\ntype: project\n---\nbody\n",
        )
        .expect("write");
        let memories = engine.memory_dir(dir.path());
        let message = memories
            .find_memory("Adrian Profile")
            .expect_err("ambiguous")
            .to_string();
        assert!(
            message.contains("is ambiguous: 2 memories have that name")
                && message.contains("user_adrian.md")
                && message.contains("project_adrian.md"),
            "{message}"
        );
        // A file, in any case, is the file: a name is looked for only when no file is.
        for given in ["user_adrian.md", "user_adrian", "USER_ADRIAN"] {
            assert_eq!(memories.find_memory(given).expect(given), "user_adrian.md");
        }
    }

    #[test]
    fn a_missing_md_file_comes_back_as_given_and_an_escape_is_still_denied() {
        let (dir, _home, engine) = stockerly();
        let memories = engine.memory_dir(dir.path());
        assert_eq!(
            memories.find_memory("./gone.md").expect("as given"),
            "gone.md"
        );
        assert!(matches!(
            memories.find_memory("../outside.md"),
            Err(Error::PathDenied { .. })
        ));
        assert!(matches!(
            memories.find_memory(" "),
            Err(Error::InvalidInput(_))
        ));
        let index = memories.find_memory("MEMORY").expect_err("the index");
        assert!(index.to_string().contains("is the index"), "{index}");
    }
}
