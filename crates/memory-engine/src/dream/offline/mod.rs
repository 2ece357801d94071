//! The offline dream: a deterministic consolidation of one memory dir, with no model. It plans a
//! [`ChangeSet`] and writes nothing; the caller reviews, stages or applies it (as
//! [`Actor::Dream`](crate::actor::Actor::Dream)).
//!
//! Steps, in order, each staging into the same change set and reading the earlier steps' staged
//! content through [`ChangeSet::read`]:
//!
//! 0. **Broken frontmatter repaired** where the fix is certain (`repair.rs`: a quote closed, a
//!    block closed before its first blank line or heading); anything else named, never guessed.
//! 1. **Exact duplicates** — topic files whose bodies are equal once whitespace is normalised
//!    (frontmatter aside): the copy with the best claim stays — the one the index links to, then
//!    the one whose index line has a hook, then a name that is not a copy's (`_copy`, `-backup`,
//!    ` (1)`), then the newest — the others are deleted and their index lines point at the
//!    survivor (or go, when it already has one).
//! 2. **Contradictions, then near-duplicates**, among the memories of one index, as
//!    `likeness.rs` decides them (by the facts two memories share, and by the vectors of their
//!    whole text when the dream has them, provider `local`; calibrated on the labeled pairs of
//!    `bench/dream-set/`, see `quality.rs`). A newer memory saying the older's state changed
//!    keeps the older as history (`contradictions.rs`: merged into it, what no longer holds
//!    marked "Until 2026-06: …", the older's line gone); one that does not plainly meet it is
//!    flagged `possibly-contradictory`. Near-duplicates (with lint's `duplicate-memory` pairs)
//!    are clustered: the newest file stays with its frontmatter and body first, every paragraph
//!    or list item of the others it does not already hold is appended (unique facts are kept),
//!    the best index line of the cluster is kept for it, and the others are deleted and
//!    unindexed as in step 1.
//! 3. **Relative dates → absolute** in bodies, descriptions and index lines, in every common
//!    English form (`dates.rs`: yesterday, last Thursday, next week, three weeks ago, earlier
//!    this month, …), from the day the words were written: the day the memory's session wrote
//!    it when its transcript says, else the file's mtime (an index line: its file's; a note in
//!    the index: the index's). Never inside other frontmatter, code, URLs, link targets or
//!    quotations; a phrase with no one date ("the other day") is left and named. Facts merged in
//!    step 2 are dated from the file they came from.
//! 4. **The index repaired** — what `fix.rs` fixes, computed on the staged state (its planner
//!    reads the disk): lines linking to missing files removed, orphans indexed (under their
//!    type's section), entries over 150 characters rewritten as `- [Title](file) — hook`.
//! 5. **The index laid out under its caps** (200 lines, 25,000 UTF-16 units): only when over
//!    them — blank-line runs collapsed, then blank lines dropped; still too many lines, what is
//!    not an entry goes as Claude Code's own warning asks (an entry listed twice; details under
//!    an entry, into its memory; blocks of notes, into a memory of their own, linked), then the
//!    oldest entries of one type at a time (the type with the most first; never a `user` or
//!    `feedback` memory's, which Claude Code must always see) move into that type's topic index
//!    beside it (`index-project.md`, linked from the index, see `index::is_topic_index`); then
//!    hooks shortened, then more entries moved while it is still too large. Headings and intro
//!    lines stay, and no entry is ever dropped: every memory stays reachable from the index,
//!    directly or through its topic index, and an index still over is flagged. Topic indexes
//!    are never merged or dated as memories; their dangling lines go in step 4.
//! 6. **Secrets redacted** (`secrets.rs`) in every file as it will be, as `engram secrets
//!    redact` does, the rule named in the reason; one redaction cannot reach is flagged.
//! 7. **Protection** — a change that deletes or rewrites the body of a `user` or `feedback`
//!    memory is planned like any other but listed in [`OfflineDream::protected_files`], so it is
//!    never applied without a person seeing it.
//!
//! Deliberately not done: merging across indexes (a `team/` memory is never folded into a
//! private one), deciding a contradiction the words do not plainly settle, touching daily logs
//! (`logs/`, only redacted), or guessing ambiguous dates ("next Friday" on a Monday) or a
//! memory's type.
//!
//! This file is the planner, top to bottom; each rule is its own file: `repair.rs` (step 0),
//! `duplicates.rs` (1 and 2), `contradictions.rs` (2), `dates.rs` (3), `index.rs` (4 and 5:
//! repair, layout, caps), `secrets.rs` (6); `likeness.rs` decides how two memories relate,
//! `markdown.rs` holds the bits of Markdown they read, and `quality.rs` scores the dream on the
//! labeled set and the messy dir of `bench/dream-set/`.
//!
//! Same input, same plan: files are visited in path order, ties between equal mtimes go to the
//! first path, and nothing depends on the clock but the clamp of a future mtime to now. A plan
//! applied, the next dream finds nothing to do.

mod contradictions;
mod dates;
mod duplicates;
mod index;
pub mod likeness;
mod markdown;
pub mod quality;
mod repair;
mod secrets;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::TimeZone;
use serde::Serialize;

use crate::changeset::ChangeSet;
use crate::embed::Embedder;
use crate::error::Result;
use crate::frontmatter;
use crate::index::{join_rel, link_stays_inside, parent_of, INDEX_FILE};
use crate::lint::{Finding, Severity};
use crate::memdir::{governing_index, MemoryDir};
use crate::memory_type::MemoryType;
use crate::scan;
use crate::transcript::SessionWrites;

/// The rule of a flag for a file the dream could not read (not UTF-8, no permission): it is left
/// out of every step.
pub const UNREADABLE_FILE: &str = "unreadable-file";

/// The rule of a flag for two memories on one subject where one says something changed that the
/// other does not plainly state: for a person to read side by side.
pub const POSSIBLY_CONTRADICTORY: &str = "possibly-contradictory";

/// What the offline dream plans for one memory dir.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfflineDream {
    /// Every planned change, each with a one-line reason. Nothing is written until it is applied.
    pub changes: ChangeSet,
    /// What needs a person and was left as it is: likely secrets (with their line in the file
    /// as it will be), an index still over its caps, index lines that cannot be shortened
    /// automatically, files that could not be read.
    pub flagged: Vec<Finding>,
    /// The files of `changes` that delete or rewrite a `user` or `feedback` memory, sorted.
    pub protected_files: Vec<String>,
    /// What the dream did, a few lines for a log, a notification or the CLI.
    pub summary: String,
}

impl OfflineDream {
    /// Whether the change of `file` deletes or rewrites a `user` or `feedback` memory.
    pub fn is_protected(&self, file: &str) -> bool {
        self.protected_files.iter().any(|f| f == file)
    }
}

/// Plans the offline dream of `dir` (see the module docs). `zone` is the time zone the files'
/// mtimes are read in to date their relative words: `&chrono::Local` for the person's own
/// dates; tests pass `&chrono::Utc`.
pub fn plan_offline_dream<Tz: TimeZone>(dir: &MemoryDir, zone: &Tz) -> Result<OfflineDream> {
    plan_offline_dream_with(dir, zone, DreamSources::default())
}

/// What the offline dream may draw on besides the memory dir.
#[derive(Debug, Clone, Copy, Default)]
pub struct DreamSources<'a> {
    /// Sentence vectors, to find near-duplicates by meaning too. Blocking (the embedder may
    /// compute or ask a server); an embedder that fails leaves the lexical detection alone, and
    /// the summary says so.
    pub embedder: Option<&'a dyn Embedder>,
    /// The project's transcripts dir: a memory's session (`originSessionId`) dates its relative
    /// words.
    pub transcripts: Option<&'a Path>,
}

/// [`plan_offline_dream`] with more to draw on (see [`DreamSources`]).
pub fn plan_offline_dream_with<Tz: TimeZone>(
    dir: &MemoryDir,
    zone: &Tz,
    sources: DreamSources<'_>,
) -> Result<OfflineDream> {
    let mut planner = Planner::new(dir.root(), zone, dir.engine().clock().now())?;
    planner.embedder = sources.embedder;
    planner.transcripts = sources.transcripts.map(Path::to_path_buf);
    planner.repair_frontmatter()?;
    planner.remove_exact_duplicates()?;
    planner.resolve_contradictions()?;
    planner.merge_near_duplicates()?;
    planner.make_dates_absolute()?;
    planner.repair_indexes()?;
    planner.fit_indexes_under_caps()?;
    planner.redact_secrets()?;
    Ok(planner.finish())
}

/// A topic file as found on disk when planning started.
struct TopicFile {
    rel: String,
    mtime: SystemTime,
    /// The type its frontmatter had before the dream (protection is about what was there).
    memory_type: Option<MemoryType>,
    /// Its governing index, and the link that index uses for it.
    index: String,
    link: String,
    /// The session that wrote it (`originSessionId`), when that is a plain session id.
    origin_session: Option<String>,
    /// A topic index next to its `MEMORY.md` (`index::is_topic_index`): entries, not a memory.
    topic_index: bool,
}

struct Planner<'a, Tz: TimeZone> {
    root: &'a Path,
    /// Sentence vectors for near-duplicates by meaning, when the dream has them.
    embedder: Option<&'a dyn Embedder>,
    /// Where the sessions that wrote memories are, when known.
    transcripts: Option<PathBuf>,
    /// Each session read so far: when it wrote which file (`None`: no transcript to read).
    sessions: BTreeMap<String, Option<SessionWrites>>,
    zone: &'a Tz,
    now: SystemTime,
    set: ChangeSet,
    /// Topic files (daily logs excluded), sorted by path.
    files: Vec<TopicFile>,
    /// Daily logs: only scanned for secrets.
    logs: Vec<String>,
    /// The index files that exist, or that orphans will create.
    indexes: BTreeSet<String>,
    protected: BTreeSet<String>,
    flagged: Vec<Finding>,
    /// One line per thing done, for the summary.
    notes: Vec<String>,
}

impl<'a, Tz: TimeZone> Planner<'a, Tz> {
    fn new(root: &'a Path, zone: &'a Tz, now: SystemTime) -> Result<Self> {
        let mut planner = Planner {
            root,
            embedder: None,
            transcripts: None,
            sessions: BTreeMap::new(),
            zone,
            now,
            set: ChangeSet::new(root),
            files: Vec::new(),
            logs: Vec::new(),
            indexes: BTreeSet::new(),
            protected: BTreeSet::new(),
            flagged: Vec::new(),
            notes: Vec::new(),
        };
        let mut found = scan::list_files(root)?;
        found.sort_by(|a, b| a.rel.cmp(&b.rel));
        planner.indexes.insert(INDEX_FILE.to_owned());
        for file in found {
            let nearest = join_rel(parent_of(&file.rel), INDEX_FILE);
            if root.join(&nearest).is_file() {
                planner.indexes.insert(nearest);
            }
            if file.rel.starts_with("logs/") {
                planner.logs.push(file.rel);
                continue;
            }
            let text = match planner.set.read(&file.rel) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    planner.flag(
                        UNREADABLE_FILE,
                        Severity::Warning,
                        &file.rel,
                        None,
                        format!("left alone: {e}"),
                    );
                    continue;
                }
            };
            let (index, link) = governing_index(root, &file.rel);
            planner.indexes.insert(index.clone());
            let frontmatter = frontmatter::parse_document(&text).frontmatter;
            let topic_index = crate::index::is_topic_index(&file.rel, &text)
                && parent_of(&file.rel) == parent_of(&index);
            planner.files.push(TopicFile {
                topic_index,
                memory_type: frontmatter.memory_type,
                rel: file.rel,
                mtime: file.mtime,
                index,
                link,
                // It names a file in the transcripts dir: nothing but a plain id may.
                origin_session: frontmatter.origin_session_id.filter(|id| {
                    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                }),
            });
        }
        Ok(planner)
    }

    fn finish(mut self) -> OfflineDream {
        self.flagged.sort_by(|a, b| {
            (a.file.as_str(), a.line, a.rule).cmp(&(b.file.as_str(), b.line, b.rule))
        });
        let protected_files: Vec<String> = self
            .protected
            .into_iter()
            .filter(|f| self.set.staged_content(f).is_some())
            .collect();
        let mut summary = if self.set.is_empty() {
            "offline dream: nothing to change".to_owned()
        } else {
            format!("offline dream: {}", self.set.summary())
        };
        for note in &self.notes {
            summary.push_str(&format!("\n- {note}"));
        }
        if !protected_files.is_empty() {
            summary.push_str(&format!(
                "\n- protected (user/feedback memories deleted or rewritten, review before applying): {}",
                protected_files.join(", ")
            ));
        }
        for flag in &self.flagged {
            let place = match flag.line {
                Some(line) => format!("{}:{line}", flag.file),
                None => flag.file.clone(),
            };
            summary.push_str(&format!(
                "\n- needs a person: {place} {}: {}",
                flag.rule, flag.message
            ));
        }
        OfflineDream {
            changes: self.set,
            flagged: self.flagged,
            protected_files,
            summary,
        }
    }

    /// Indices of the topic files not staged for deletion, in path order.
    fn live(&self) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| self.set.staged_content(&self.files[i].rel) != Some(None))
            .collect()
    }

    /// [`Planner::live`] without topic indexes: the memories.
    fn live_memories(&self) -> Vec<usize> {
        self.live()
            .into_iter()
            .filter(|&i| !self.files[i].topic_index)
            .collect()
    }

    /// The live memories of `index_file`'s dir, by path relative to the memory dir.
    fn memories_of_index(&self, index_file: &str) -> BTreeMap<String, usize> {
        self.live_memories()
            .into_iter()
            .filter(|&i| self.files[i].index == index_file)
            .map(|i| (self.files[i].rel.clone(), i))
            .collect()
    }

    /// `index_file` and the topic indexes beside it, the files that list its dir's memories.
    fn listing_files(&self, index_file: &str) -> Vec<String> {
        let mut files = vec![index_file.to_owned()];
        files.extend(
            self.live()
                .into_iter()
                .filter(|&i| self.files[i].topic_index && self.files[i].index == index_file)
                .map(|i| self.files[i].rel.clone()),
        );
        files
    }

    /// `members` newest first (mtime), ties in path order.
    fn newest_first(&self, members: &[usize]) -> Vec<usize> {
        let mut order = members.to_vec();
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.files[a], &self.files[b]);
            b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel))
        });
        order
    }

    /// Marks file `i`'s change as protected when it is a `user` or `feedback` memory.
    fn protect(&mut self, i: usize) {
        if matches!(
            self.files[i].memory_type,
            Some(MemoryType::User | MemoryType::Feedback)
        ) {
            self.protected.insert(self.files[i].rel.clone());
        }
    }

    /// Whether an entry of the index in `dir` linking to `link` points at a file that will exist
    /// (the test lint applies, on the staged state).
    fn link_exists(&self, dir: &str, link: &str) -> bool {
        if !link_stays_inside(link) {
            return false;
        }
        let target = join_rel(dir, link);
        match self.set.staged_content(&target) {
            Some(content) => content.is_some(),
            None => self.root.join(&target).is_file(),
        }
    }

    fn flag(
        &mut self,
        rule: &'static str,
        severity: Severity,
        file: &str,
        line: Option<usize>,
        message: String,
    ) {
        self.flagged.push(Finding {
            rule,
            severity,
            file: file.to_owned(),
            line,
            message,
            other_file: None,
        });
    }
}

/// Names for a reason or the summary: all of them up to three, else three and a count.
pub(super) fn names(items: &[String]) -> String {
    match items.len() {
        0..=3 => items.join(", "),
        n => format!("{} and {} more", items[..3].join(", "), n - 3),
    }
}

pub(super) fn plural<'s>(n: usize, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use std::fs::{File, FileTimes};

    use chrono::{NaiveDate, NaiveTime, Utc};

    use super::dates::rewrite_relative_dates;
    use super::markdown::body_start;
    use super::*;
    use crate::actor::Actor;
    use crate::changeset::ChangeKind;
    use crate::lint::{
        DANGLING_POINTER, DUPLICATE_MEMORY, INDEX_TOO_LARGE, INDEX_TOO_LONG, LONG_INDEX_LINE,
        ORPHAN_FILE, SECRET,
    };
    use crate::testing::fixtures::{real_memory, TempMemoryDir};

    pub(super) fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a YYYY-MM-DD date")
    }

    /// Noon UTC of `day`: the same date in every zone from UTC−11 to UTC+11.
    pub(super) fn noon(day: &str) -> SystemTime {
        let at = date(day).and_time(NaiveTime::from_hms_opt(12, 0, 0).expect("noon"));
        SystemTime::from(at.and_utc())
    }

    /// Writes `file` with its mtime at noon of `day`.
    pub(super) fn write_at(fx: &TempMemoryDir, file: &str, text: &str, day: &str) {
        fx.write(file, text);
        File::options()
            .write(true)
            .open(fx.path(file))
            .and_then(|f| f.set_times(FileTimes::new().set_modified(noon(day))))
            .expect("set mtime");
    }

    pub(super) fn memory(name: &str, description: &str, memory_type: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n\n{body}")
    }

    pub(super) fn plan(fx: &TempMemoryDir) -> OfflineDream {
        plan_offline_dream(&fx.dir, &Utc).expect("plan")
    }

    /// The dream as a reviewer sees it: the summary, then each change with its reason and diff.
    /// Runs of one repeated diff line (a block of blank lines) are shown once with a count.
    fn rendered(dream: &OfflineDream) -> String {
        let mut out = format!("{}\n", dream.summary);
        for change in &dream.changes.changes {
            let protected = if dream.is_protected(&change.file) {
                " [protected]"
            } else {
                ""
            };
            out.push_str(&format!(
                "\n{:?} {}{protected} — {}\n",
                change.kind, change.file, change.reason
            ));
            let lines: Vec<&str> = change.diff.lines().collect();
            for run in lines.chunk_by(|a, b| a == b) {
                match run.len() {
                    1 | 2 => run.iter().for_each(|l| out.push_str(&format!("{l}\n"))),
                    n => out.push_str(&format!("{}  … ×{n}\n", run[0])),
                }
            }
        }
        out
    }

    const SHARED_TESTING: &str = "Integration tests must hit a real database, never mocks.\n\n\
        **Why:** last quarter a mocked migration passed in CI while the production migration \
        broke, and it took two days to find out which schema change caused it.\n\n\
        **How to apply:**\n\
        - every new integration test opens a connection to the shared test database\n\
        - fixtures are loaded through the seed scripts, never built in memory by hand\n\
        - a test that needs a mock must say why in a comment next to it\n";
    const FACT_OLD: &str = "- seed data was refreshed 3 days ago from the staging snapshot";
    const FACT_NEW: &str = "- run them with `make test-db`, which starts the database container";

    /// A memory dir with everything the offline dream fixes, and one thing it must not.
    fn messy_dir() -> TempMemoryDir {
        let fx = TempMemoryDir::new("memory");
        let release = "Releases ship from the main branch every Tuesday.\n\n- tag with vX.Y.Z\n- announce in #releases\n";
        write_at(
            &fx,
            "project_release.md",
            &memory("Release process", "How releases ship", "project", release),
            "2026-06-08",
        );
        write_at(
            &fx,
            "project_release_copy.md",
            &memory(
                "release-process",
                "How releases ship (saved again)",
                "project",
                &release
                    .replace("main branch", "main  branch\n")
                    .replace("\n- tag", "\n\n- tag"),
            ),
            "2026-06-10",
        );
        write_at(
            &fx,
            "feedback_real_db.md",
            &memory(
                "Real database in tests",
                "Integration tests must hit a real database, not mocks",
                "feedback",
                &format!("{SHARED_TESTING}{FACT_OLD}\n"),
            ),
            "2026-06-05",
        );
        write_at(
            &fx,
            "feedback_testing.md",
            &memory(
                "Testing policy",
                "Integration tests must hit a real database, not mocks",
                "feedback",
                &format!("{SHARED_TESTING}{FACT_NEW}\n"),
            ),
            "2026-06-12",
        );
        write_at(
            &fx,
            "user_profile.md",
            &memory(
                "Adrian",
                "Backend engineer, wants terse answers",
                "user",
                "Adrian is a backend engineer; he moved the team to Rust yesterday.\nPrefers terse answers.\n",
            ),
            "2026-06-12",
        );
        write_at(
            &fx,
            "project_status.md",
            &memory(
                "Release status",
                "Where the v2.3 release stands",
                "project",
                "Deployed v2.3 today. The outage was 3 days ago.\n\n\
                 Tomorrow the freeze starts; notes from this morning are in `today.md` and at \
                 https://wiki.example.com/today.\n\n```sh\necho \"yesterday\"\n```\n",
            ),
            "2026-06-12",
        );
        let key = format!("AKIA{}", "QWERTY234567ABCD");
        write_at(
            &fx,
            "reference_dashboards.md",
            &memory(
                "Dashboards",
                "Where the Grafana dashboards are",
                "reference",
                &format!("Grafana at grafana.example.com.\nRead-only key: {key}\n"),
            ),
            "2026-06-01",
        );
        let blank_run = "\n".repeat(70);
        let archived: String = (1..=5)
            .map(|n| format!("- [Archived {n}](archive/note-{n}.md) — archived\n"))
            .collect();
        fx.write(
            "MEMORY.md",
            &format!(
                "# Project Memory\n\n> One line per memory; details live in the topic files.\n\n\
                 ## User\n- [Profile](user_profile.md) — who Adrian is\n{blank_run}\
                 ## Feedback\n- [Real DB in tests](feedback_real_db.md) — integration tests hit a real database\n\
                 - [Testing](feedback_testing.md) — how tests are run\n{blank_run}\
                 ## Project\n- [Release process](project_release.md) — how releases ship\n\
                 - [Status](project_status.md) — where the v2.3 release stands: deployed, the outage, the freeze that starts next, and where the notes of every meeting live\n\
                 - [Old notes](old_notes.md) — superseded\n{blank_run}{archived}"
            ),
        );
        fx
    }

    #[test]
    fn a_messy_dir_is_consolidated_and_then_lints_clean() {
        let fx = messy_dir();
        let before = fx.dir.lint().expect("lint");
        for rule in [
            DANGLING_POINTER,
            ORPHAN_FILE,
            DUPLICATE_MEMORY,
            INDEX_TOO_LONG,
            LONG_INDEX_LINE,
            SECRET,
        ] {
            assert!(
                before.by_rule(rule).next().is_some(),
                "the fixture must exercise {rule}: {:#?}",
                before.findings
            );
        }

        let dream = plan(&fx);
        assert!(
            fx.read("feedback_real_db.md").is_some(),
            "planning writes nothing"
        );
        insta::assert_snapshot!(rendered(&dream));
        for change in &dream.changes.changes {
            assert!(
                !change.reason.is_empty() && !change.reason.contains('\n'),
                "{}: one-line reason, got {:?}",
                change.file,
                change.reason
            );
            let kept_type = change
                .before
                .as_deref()
                .and_then(|b| frontmatter::parse_document(b).frontmatter.memory_type);
            if matches!(kept_type, Some(MemoryType::User | MemoryType::Feedback)) {
                assert!(
                    dream.is_protected(&change.file),
                    "{} deletes or rewrites a user/feedback memory without being protected",
                    change.file
                );
            }
        }
        assert_eq!(
            dream.protected_files,
            [
                "feedback_real_db.md",
                "feedback_testing.md",
                "user_profile.md"
            ]
        );
        assert!(dream.flagged.is_empty(), "{:#?}", dream.flagged);

        let report = fx
            .engine
            .apply_change_set(&dream.changes, Actor::Dream)
            .expect("apply");
        assert!(report.all_applied(), "{report:?}");

        let after = fx.dir.lint().expect("lint");
        for rule in [
            DANGLING_POINTER,
            ORPHAN_FILE,
            DUPLICATE_MEMORY,
            INDEX_TOO_LONG,
            INDEX_TOO_LARGE,
            LONG_INDEX_LINE,
            SECRET,
        ] {
            assert_eq!(
                after.by_rule(rule).count(),
                0,
                "{rule} left after the dream: {:#?}",
                after.findings
            );
        }
        let dashboards = fx.read("reference_dashboards.md").expect("dashboards");
        assert!(
            dashboards.contains("Read-only key: [REDACTED:aws-access-token]\n"),
            "the secret is redacted in the dream's change set: {dashboards}"
        );

        let survivor = fx.read("feedback_testing.md").expect("survivor");
        assert!(survivor.contains(FACT_NEW), "{survivor}");
        assert!(
            survivor.contains("- seed data was refreshed on 2026-06-02 from the staging snapshot"),
            "the merged fact is kept, dated from its own file: {survivor}"
        );
        assert_eq!(
            survivor.matches("never mocks").count(),
            1,
            "shared facts are not repeated: {survivor}"
        );
        assert_eq!(fx.read("feedback_real_db.md"), None);
        assert_eq!(
            fx.read("project_release_copy.md"),
            None,
            "the exact copy the index does not link to"
        );
        assert!(fx.read("project_release.md").is_some());

        let status = fx.read("project_status.md").expect("status");
        assert!(
            status.contains("Deployed v2.3 on 2026-06-12. The outage was on 2026-06-09.")
                && status.contains("On 2026-06-13 the freeze starts")
                && status.contains("the morning of 2026-06-12"),
            "{status}"
        );
        assert!(
            status.contains("`today.md`")
                && status.contains("https://wiki.example.com/today")
                && status.contains("echo \"yesterday\""),
            "code and URLs are left alone: {status}"
        );
        let user = fx.read("user_profile.md").expect("user");
        assert!(
            user.contains("moved the team to Rust on 2026-06-11."),
            "{user}"
        );
        for file in fx.dir.scan(None).expect("scan") {
            let text = fx.read(&file.file).expect("file");
            let start = body_start(&text).expect("closed frontmatter");
            let rewrite = rewrite_relative_dates(&text, start, date("2026-01-01"));
            assert!(
                rewrite.replaced.is_empty() && rewrite.left.is_empty(),
                "{}: relative dates left: {rewrite:?}",
                file.file
            );
        }

        let index = fx.read("MEMORY.md").expect("index");
        assert!(
            index.contains("- [Release process](project_release.md) — how releases ship\n"),
            "the line of the copy that stays is kept: {index}"
        );
        assert!(
            index.starts_with("# Project Memory\n\n> One line per memory"),
            "{index}"
        );
        for heading in ["## User", "## Feedback", "## Project"] {
            assert!(index.contains(heading), "{heading} kept: {index}");
        }
    }

    #[test]
    fn a_second_dream_changes_nothing() {
        let fx = messy_dir();
        let first = plan(&fx);
        let report = fx
            .engine
            .apply_change_set(&first.changes, Actor::Dream)
            .expect("apply");
        assert!(report.all_applied(), "{report:?}");
        let second = plan(&fx);
        assert!(
            second.changes.is_empty(),
            "what a dream did, it does not do again: {}",
            rendered(&second)
        );
    }

    #[test]
    fn the_same_dir_gives_the_same_plan() {
        let fx = messy_dir();
        let first = plan(&fx);
        let second = plan(&fx);
        assert_eq!(first, second);
        assert!(!first.changes.is_empty());
    }

    #[test]
    fn the_real_fixtures_lose_nothing() {
        for name in ["stockerly", "claude-code-2.1.330"] {
            let fx = TempMemoryDir::real("memory", name);
            let dream = plan(&fx);
            insta::assert_snapshot!(format!("real-{name}"), dream.summary);
            assert!(
                dream
                    .changes
                    .changes
                    .iter()
                    .all(|c| c.kind != ChangeKind::Delete && c.file == INDEX_FILE),
                "{name}: only the index may change: {:#?}",
                dream.changes
            );
            fx.engine
                .apply_change_set(&dream.changes, Actor::Dream)
                .expect("apply");
            for file in std::fs::read_dir(real_memory(name)).expect("fixture") {
                let file = file.expect("entry").file_name();
                let file = file.to_string_lossy();
                let original =
                    std::fs::read_to_string(real_memory(name).join(&*file)).expect("original");
                let now = fx.read(&file).expect("still there");
                if file == INDEX_FILE {
                    for line in original.lines() {
                        assert!(now.contains(line), "{name}: index line {line:?} lost");
                    }
                } else {
                    assert_eq!(now, original, "{name}/{file} changed");
                }
            }
            assert!(
                fx.dir.lint().expect("lint").findings.is_empty(),
                "{name}: {:#?}",
                fx.dir.lint()
            );
        }
    }
}
