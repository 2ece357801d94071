//! Search across every project's memory and every agent's: the topic files of each
//! `<config home>/projects/*/memory/` dir and of each agent memory dir (user scope, and project
//! and local scopes under the projects' working dirs), matched on name, description, body and
//! file name, ranked.
//!
//! Matching: the query is split into words; a memory matches when every word occurs,
//! case-insensitively (Unicode lowercase), in at least one of its name, description, body or file
//! name. Ranking rewards where a word matched — name (10) › file name (6) › description (4) › body
//! (1, plus a little for repeats) — and the whole query matching as a phrase; ties go to the most
//! recently modified memory.
//!
//! Speed (homes of 20,000 files): the walk collects names, mtimes and sizes only, then each file
//! is read once (at most [`MAX_READ_BYTES`]) on up to four threads, its fields lowercased and
//! scored with plain substring searches; only the hits returned are read again, for their fields
//! and snippet as they are now. The lowercased fields are kept by the engine
//! ([`crate::text_cache`]), so a process that searches again — the MCP server, the app — reads
//! only the files whose mtime or size changed since. `MEMORY.md` indexes are not memories and
//! are not searched.

use std::cmp::Ordering;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::frontmatter;
use crate::memory_type::MemoryType;
use crate::scan::{self, FoundFile, SCAN_LINE_LIMIT};
use crate::staleness::iso_time;
use crate::text_cache::{FoldedFields, TextCache};

/// The most of one file that is searched: memory files are small (team memory caps them at
/// 250,000 bytes); a giant stray file must not stall the search.
pub const MAX_READ_BYTES: u64 = 256 * 1024;
/// Characters of context in a snippet.
const SNIPPET_CHARS: usize = 160;
/// Characters of a snippet shown before the first match.
const SNIPPET_LEAD: usize = 50;

const NAME_WEIGHT: f64 = 10.0;
const FILE_WEIGHT: f64 = 6.0;
const DESCRIPTION_WEIGHT: f64 = 4.0;
const BODY_WEIGHT: f64 = 1.0;
/// Extra per repeat of a word in the body, for at most [`MAX_BODY_REPEATS`] repeats.
const BODY_REPEAT_WEIGHT: f64 = 0.25;
const MAX_BODY_REPEATS: usize = 4;

/// Options of [`Engine::search_memories`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchOptions {
    /// Most hits returned (best first).
    pub limit: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { limit: 50 }
    }
}

/// One memory that matched.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The project directory's name (the sanitized working directory); for agent memory, the
    /// agent dir's store name ([`crate::agent_memory::AgentMemory::store`]), which the app opens
    /// the same way.
    pub project: String,
    /// Set when the hit is in an agent's memory.
    pub agent: Option<crate::agent_memory::AgentLabel>,
    /// The project's working directory, from its transcripts, when known.
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub project_path: Option<PathBuf>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub memory_dir: PathBuf,
    /// Relative to the memory dir, `/`-separated.
    pub file: String,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub memory_type: Option<MemoryType>,
    /// One line of the body around the first match (or the description when only the name,
    /// file name or description matched).
    pub snippet: String,
    pub score: f64,
    /// ISO-8601 UTC.
    pub mtime: String,
}

/// A lowercased query word.
type Term = String;

/// Where a set of searched files comes from.
enum Source {
    /// A project under `<memory base>/projects/` (its working dir looked up only for hits).
    Project(String),
    /// One memory dir searched on its own: the project's name and working dir as the caller
    /// knows them.
    Dir {
        project: String,
        project_path: Option<PathBuf>,
        memory_dir: PathBuf,
    },
    Agent(crate::agent_memory::AgentStore),
}

impl Engine {
    /// Searches every project's memory dir under the Claude home for `query`; best hits first.
    /// An empty query is [`Error::InvalidInput`]; a home without projects has no hits.
    pub fn search_memories(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        let mut sources: Vec<(Source, Vec<FoundFile>)> = Vec::new();
        let base = crate::disk::resolved_path(&self.memory_base().join("projects"));
        for name in self.project_names()? {
            let dir = self.project_memory_dir(&name);
            // A memory dir symlinked out of the Claude home (to `/`, say) is not searched: that
            // would walk whatever it points at.
            if !crate::disk::resolved_path(&dir).starts_with(&base) {
                continue;
            }
            // One unreadable memory dir does not hide the others.
            if let Ok(found) = scan::list_files(&dir) {
                sources.push((Source::Project(name), found));
            }
        }
        // Agent memory dirs come after the projects. `list_files` does not follow symlinks
        // inside a dir; an agent dir that is itself a link is skipped.
        for agent in self.agent_stores().unwrap_or_default() {
            let is_link =
                fs::symlink_metadata(&agent.dir).is_ok_and(|m| m.file_type().is_symlink());
            if is_link {
                continue;
            }
            if let Ok(found) = scan::list_files(&agent.dir) {
                sources.push((Source::Agent(agent), found));
            }
        }
        self.search_sources(query, sources, options)
    }

    /// Searches one project's memory dir (`memory_dir`, wherever it is) the way
    /// [`Engine::search_memories`] searches them all; hits name `project` and `project_path`.
    pub fn search_memory_dir(
        &self,
        project: &str,
        project_path: Option<PathBuf>,
        memory_dir: &Path,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let found = match scan::list_files(memory_dir) {
            Ok(found) => found,
            Err(Error::NotFound(_)) => Vec::new(),
            Err(e) => return Err(e),
        };
        let source = Source::Dir {
            project: project.to_owned(),
            project_path,
            memory_dir: memory_dir.to_path_buf(),
        };
        self.search_sources(query, vec![(source, found)], options)
    }

    fn search_sources(
        &self,
        query: &str,
        sources: Vec<(Source, Vec<FoundFile>)>,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let terms = query_terms(query);
        if terms.is_empty() {
            return Err(Error::InvalidInput(
                "empty search: give at least one word".to_owned(),
            ));
        }
        let phrase = (terms.len() > 1).then(|| {
            query
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        });
        let mut files: Vec<(usize, FoundFile)> = Vec::new();
        let mut origins = Vec::with_capacity(sources.len());
        for (at, (source, found)) in sources.into_iter().enumerate() {
            files.extend(found.into_iter().map(|f| (at, f)));
            origins.push(source);
        }

        // Every file is scored from its kept text where it has not changed; only the hits
        // returned are read again, for their fields and snippet as they are now.
        let scores = scan::map_parallel(&files, Vec::new, |buffer, (_, found)| {
            score_file(
                found,
                &terms,
                phrase.as_deref(),
                buffer,
                self.search_cache(),
            )
        });
        let mut scored: Vec<(&(usize, FoundFile), f64)> = files
            .iter()
            .zip(scores)
            .filter_map(|(file, score)| Some((file, score?)))
            .collect();
        scored.sort_by(|((pa, a), sa), ((pb, b), sb)| {
            sb.partial_cmp(sa)
                .unwrap_or(Ordering::Equal)
                .then_with(|| b.mtime.cmp(&a.mtime))
                .then_with(|| pa.cmp(pb))
                .then_with(|| a.rel.cmp(&b.rel))
        });
        // A hit gone or unreadable since it was scored is left out; the next one takes its place.
        let hits: Vec<(usize, FileMatch)> = scored
            .into_iter()
            .filter_map(|((source, found), score)| Some((*source, read_hit(found, &terms, score)?)))
            .take(options.limit)
            .collect();

        // The working directory costs a few transcript reads: only for projects with hits.
        let mut paths: Vec<Option<Option<PathBuf>>> = vec![None; origins.len()];
        Ok(hits
            .into_iter()
            .map(|(source, hit)| {
                let (project, project_path, memory_dir, agent) = match &origins[source] {
                    Source::Project(name) => {
                        let path = paths[source]
                            .get_or_insert_with(|| {
                                crate::projects::project_path(
                                    name,
                                    &self.project_transcripts_dir_of(name),
                                )
                            })
                            .clone();
                        (name.clone(), path, self.project_memory_dir(name), None)
                    }
                    Source::Dir {
                        project,
                        project_path,
                        memory_dir,
                    } => (
                        project.clone(),
                        project_path.clone(),
                        memory_dir.clone(),
                        None,
                    ),
                    Source::Agent(agent) => (
                        agent.store.clone(),
                        agent.cwd.clone(),
                        agent.dir.clone(),
                        Some(agent.label.clone()),
                    ),
                };
                SearchHit {
                    project,
                    agent,
                    project_path,
                    memory_dir,
                    file: hit.file,
                    name: hit.name,
                    description: hit.description,
                    memory_type: hit.memory_type,
                    snippet: hit.snippet,
                    score: (hit.score * 100.0).round() / 100.0,
                    mtime: iso_time(hit.mtime),
                }
            })
            .collect())
    }
}

/// The distinct lowercased words of a query.
fn query_terms(query: &str) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    for word in query.split_whitespace() {
        let term = word.to_lowercase();
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

struct FileMatch {
    file: String,
    mtime: std::time::SystemTime,
    name: Option<String>,
    description: Option<String>,
    memory_type: Option<MemoryType>,
    snippet: String,
    score: f64,
}

/// At most [`MAX_READ_BYTES`] of `found`, as text.
fn read_text(found: &FoundFile, buffer: &mut Vec<u8>) -> Option<String> {
    buffer.clear();
    fs::File::open(&found.path)
        .and_then(|file| file.take(MAX_READ_BYTES).read_to_end(buffer))
        .ok()?;
    Some(String::from_utf8_lossy(buffer).into_owned())
}

/// A memory file's searchable fields, lowercased.
fn folded_fields(text: &str) -> FoldedFields {
    let document = frontmatter::parse_document_within(text, Some(SCAN_LINE_LIMIT));
    let fm = document.frontmatter;
    let fold = |field: Option<String>| field.as_deref().map(str::to_lowercase).unwrap_or_default();
    FoldedFields {
        name: fold(fm.name),
        description: fold(fm.description),
        body: document.body.to_lowercase(),
    }
}

/// `found`'s score for `terms` (`None` when some term matches nowhere), from its kept fields
/// when it has not changed since, else read now (and kept).
fn score_file(
    found: &FoundFile,
    terms: &[Term],
    phrase: Option<&str>,
    buffer: &mut Vec<u8>,
    cache: &TextCache,
) -> Option<f64> {
    let fields = match cache.get(&found.path, found.mtime, found.len) {
        Some(fields) => fields,
        None => {
            let fields = Arc::new(folded_fields(&read_text(found, buffer)?));
            cache.put(&found.path, found.mtime, found.len, Arc::clone(&fields));
            fields
        }
    };
    let folded_file = found.rel.to_lowercase();
    let mut score = 0.0;
    for term in terms {
        let term = term.as_str();
        let body_count = fields.body.matches(term).count();
        let mut term_score = 0.0;
        if fields.name.contains(term) {
            term_score += NAME_WEIGHT;
        }
        if folded_file.contains(term) {
            term_score += FILE_WEIGHT;
        }
        if fields.description.contains(term) {
            term_score += DESCRIPTION_WEIGHT;
        }
        if body_count > 0 {
            term_score +=
                BODY_WEIGHT + BODY_REPEAT_WEIGHT * (body_count - 1).min(MAX_BODY_REPEATS) as f64;
        }
        if term_score == 0.0 {
            return None;
        }
        score += term_score;
    }
    if let Some(phrase) = phrase {
        score += [
            (&fields.name, NAME_WEIGHT),
            (&fields.description, DESCRIPTION_WEIGHT),
            (&fields.body, BODY_WEIGHT),
        ]
        .into_iter()
        .filter(|(field, _)| field.contains(phrase))
        .map(|(_, weight)| weight / 2.0)
        .sum::<f64>();
    }
    Some(score)
}

/// A hit as it is on disk now: its fields, and a snippet around the first term in its body.
fn read_hit(found: &FoundFile, terms: &[Term], score: f64) -> Option<FileMatch> {
    let text = read_text(found, &mut Vec::new())?;
    let document = frontmatter::parse_document_within(&text, Some(SCAN_LINE_LIMIT));
    let fm = document.frontmatter;
    let snippet = terms
        .iter()
        .filter_map(|t| find_folded(&document.body, t))
        .min()
        .map(|at| snippet_around(&document.body, at))
        .or_else(|| fm.description.as_deref().map(|d| snippet_around(d, 0)))
        .unwrap_or_else(|| snippet_around(&document.body, 0));
    Some(FileMatch {
        file: found.rel.clone(),
        mtime: found.mtime,
        name: fm.name,
        description: fm.description,
        memory_type: fm.memory_type,
        snippet,
        score,
    })
}

/// The byte offset in `text` of the first case-insensitive occurrence of `term` (lowercase).
/// Lowercasing can change a character's length (`İ` → `i̇`), so offsets are mapped back through
/// the folded text rather than assumed equal.
fn find_folded(text: &str, term: &str) -> Option<usize> {
    let mut folded = String::with_capacity(text.len());
    let mut origin: Vec<usize> = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        for lower in c.to_lowercase() {
            folded.push(lower);
            origin.resize(folded.len(), at);
        }
    }
    folded.find(term).map(|start| origin[start])
}

/// One line of at most [`SNIPPET_CHARS`] characters of `text` around byte `at`, whitespace
/// collapsed, with `…` where it was cut.
fn snippet_around(text: &str, at: usize) -> String {
    let before: Vec<char> = text[..at].chars().rev().take(SNIPPET_LEAD + 1).collect();
    let lead = before.len().min(SNIPPET_LEAD);
    let start = at - before[..lead].iter().map(|c| c.len_utf8()).sum::<usize>();
    let window: String = text[start..].chars().take(SNIPPET_CHARS + 1).collect();
    let cut_end = window.chars().count() > SNIPPET_CHARS;
    let window: String = window.chars().take(SNIPPET_CHARS).collect();
    let mut snippet = window.split_whitespace().collect::<Vec<_>>().join(" ");
    if start > 0 && !snippet.is_empty() {
        snippet.insert(0, '…');
    }
    if cut_end {
        snippet.push('…');
    }
    snippet
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::{Duration, Instant, SystemTime};

    use super::*;
    use crate::environment::Environment;
    use crate::error::ErrorKind;
    use crate::testing::fixtures::{copy_tree, real_memory, REAL_FIXTURES};

    fn set_mtime(path: &Path, secs: u64) {
        fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .expect("mtime");
    }

    /// A Claude home with the two real memory dirs as two projects; the Demo project has its
    /// real transcripts (so its working directory is known).
    fn real_home() -> (tempfile::TempDir, Engine) {
        let temp = tempfile::tempdir().expect("temp");
        let projects = temp.path().join("projects");
        copy_tree(
            &Path::new(REAL_FIXTURES).join("claude-home/projects/-path-to-Demo"),
            &projects.join("-path-to-Demo"),
        );
        copy_tree(
            &real_memory("claude-code-2.1.330"),
            &projects.join("-path-to-Demo/memory"),
        );
        copy_tree(
            &real_memory("stockerly"),
            &projects.join("-home-adrian-stockerly/memory"),
        );
        // Copies get their copy time as mtime, in read_dir order; one shared mtime makes equal
        // scores fall to the deterministic tie-breaks (project, then file name).
        set_all_mtimes(
            temp.path(),
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        );
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path())
            .build();
        (temp, engine)
    }

    fn set_all_mtimes(dir: &Path, time: SystemTime) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                set_all_mtimes(&path, time);
            } else {
                let file = fs::File::options().append(true).open(&path).expect("open");
                file.set_modified(time).expect("set mtime");
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_memory_dir_symlinked_out_of_the_home_is_not_searched() {
        let home = tempfile::tempdir().expect("home");
        let outside = tempfile::tempdir().expect("outside");
        fs::write(outside.path().join("secret.md"), "needle outside\n").expect("outside file");
        let project = home.path().join("projects/-evil");
        fs::create_dir_all(&project).expect("project");
        std::os::unix::fs::symlink(outside.path(), project.join("memory")).expect("symlink");
        let inside = home.path().join("projects/-good/memory");
        fs::create_dir_all(&inside).expect("inside");
        fs::write(inside.join("a.md"), "needle inside\n").expect("inside file");
        let engine = Engine::builder(crate::Environment::empty())
            .claude_home(home.path())
            .engram_home(home.path().join("engram"))
            .build();
        let hits = search(&engine, "needle");
        let files: Vec<&str> = hits.iter().map(|h| h.file.as_str()).collect();
        assert_eq!(files, vec!["a.md"], "only the memory dir inside the home");
    }

    /// Agent memory is searched with the projects': a project's agent dir (under its working
    /// dir, known from a transcript) is found, its hit names the agent, and its store name opens
    /// the dir the hit came from.
    #[test]
    fn agent_memory_is_searched_and_its_hits_name_the_agent() {
        let home = tempfile::tempdir().expect("home");
        let cwd = home.path().join("repo");
        let name = crate::paths::sanitize_path(&cwd.to_string_lossy());
        let transcripts = home.path().join("projects").join(&name);
        fs::create_dir_all(&transcripts).expect("transcripts");
        let line = serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null, "cwd": cwd,
            "sessionId": "s", "message": {"role": "user", "content": "hi"}});
        fs::write(
            transcripts.join("11111111-1111-4111-8111-111111111111.jsonl"),
            format!("{line}\n"),
        )
        .expect("transcript");
        let agent = cwd.join(".claude/agent-memory/code-reviewer");
        fs::create_dir_all(&agent).expect("agent dir");
        fs::write(
            agent.join("style.md"),
            "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe terse.\n",
        )
        .expect("style");
        let engine = Engine::builder(Environment::empty())
            .claude_home(home.path())
            .engram_home(home.path().join("engram"))
            .build();
        let hits = search(&engine, "terse");
        assert_eq!(files(&hits), ["style.md"]);
        assert_eq!(
            hits[0].agent,
            Some(crate::agent_memory::AgentLabel {
                agent_type: "code-reviewer".into(),
                scope: crate::agent_memory::AgentScope::Project
            })
        );
        assert_eq!(
            engine
                .memory_store_dir_checked(&hits[0].project)
                .expect("opens"),
            hits[0].memory_dir
        );
    }

    fn search(engine: &Engine, query: &str) -> Vec<SearchHit> {
        engine
            .search_memories(query, &SearchOptions::default())
            .expect("search")
    }

    fn files(hits: &[SearchHit]) -> Vec<&str> {
        hits.iter().map(|h| h.file.as_str()).collect()
    }

    #[test]
    fn finds_memories_across_projects_by_every_field_case_insensitively() {
        let (_temp, engine) = real_home();

        let hits = search(&engine, "DEPLOY");
        assert_eq!(
            files(&hits),
            [
                "deploy-freeze.md",
                "project_decision.md",
                "project_expert_panel_v2.md"
            ],
            "the name (and file name) match first, then the two stockerly bodies"
        );
        let hit = &hits[0];
        assert_eq!(hit.project, "-path-to-Demo");
        assert_eq!(
            hit.project_path.as_deref(),
            Some(Path::new("/path/to/Demo"))
        );
        assert!(hit.memory_dir.ends_with("projects/-path-to-Demo/memory"));
        assert_eq!(hit.name.as_deref(), Some("deploy-freeze"));
        assert_eq!(hit.memory_type, Some(MemoryType::Project));
        assert_eq!(
            hit.snippet,
            "Never deploy on Fridays. TOPICBODY-888 **Why:** on-call is thin at weekends. **How to apply:** schedule releases Mon-Thu."
        );

        // From the other project, whose path no transcript records: the description match
        // outranks the two body matches.
        let hits = search(&engine, "cetes");
        assert_eq!(
            files(&hits),
            [
                "user_adrian.md",
                "project_expert_panel_v2.md",
                "project_vision.md"
            ]
        );
        assert_eq!(hits[0].project, "-home-adrian-stockerly");
        assert_eq!(hits[0].project_path, None);

        // The nested (2.1.330) type and the file name are searched too.
        assert_eq!(
            files(&search(&engine, "tabs-default")),
            ["prefers-tabs-default.md"]
        );
        assert_eq!(
            search(&engine, "prefers")[0].memory_type,
            Some(MemoryType::Feedback)
        );
    }

    /// The engine keeps the texts it searched; a file changed on disk since (another mtime or
    /// size, even the same size) is read again, so a second search in the same process sees
    /// every change: words gone, words come, files new.
    #[test]
    fn searching_again_sees_every_change_made_on_disk_since() {
        let (temp, engine) = real_home();
        let stockerly = temp.path().join("projects/-home-adrian-stockerly/memory");
        assert_eq!(
            files(&search(&engine, "cetes")),
            [
                "user_adrian.md",
                "project_expert_panel_v2.md",
                "project_vision.md"
            ]
        );

        // Shorter: the size changed (the mtime kept).
        let adrian = stockerly.join("user_adrian.md");
        let text = fs::read_to_string(&adrian).expect("read");
        fs::write(&adrian, text.replace("CETES", "").replace("cetes", "")).expect("write");
        set_mtime(&adrian, 1_800_000_000);
        // The same size: only the mtime changed.
        let vision = stockerly.join("project_vision.md");
        let text = fs::read_to_string(&vision).expect("read");
        let same_size = text.replace("CETES", "ZORBL").replace("cetes", "zorbl");
        assert_eq!(same_size.len(), text.len());
        fs::write(&vision, same_size).expect("write");
        set_mtime(&vision, 1_800_000_100);
        fs::write(
            stockerly.join("project_new.md"),
            "---\nname: new\ndescription: cetes again\ntype: project\n---\n\nCetes.\n",
        )
        .expect("write");

        assert_eq!(
            files(&search(&engine, "cetes")),
            ["project_new.md", "project_expert_panel_v2.md"]
        );
        let zorbl = search(&engine, "zorbl");
        assert_eq!(files(&zorbl), ["project_vision.md"]);
        assert!(
            zorbl[0].snippet.to_lowercase().contains("zorbl"),
            "the hit is read as it is now: {}",
            zorbl[0].snippet
        );
    }

    #[test]
    fn every_word_must_match_and_the_index_is_not_a_memory() {
        let (_temp, engine) = real_home();
        assert!(
            search(&engine, "freeze cetes").is_empty(),
            "no memory has both"
        );
        assert_eq!(
            files(&search(&engine, "deploy cetes")),
            ["project_expert_panel_v2.md"],
            "the one memory with both words"
        );
        assert!(
            search(&engine, "MEMIDX-777").is_empty(),
            "only MEMORY.md holds it, and the index is not searched"
        );
        let both = search(&engine, "brutal honesty");
        assert!(!both.is_empty());
        assert!(both.iter().all(|h| {
            let text = fs::read_to_string(h.memory_dir.join(&h.file))
                .expect("read")
                .to_lowercase();
            text.contains("brutal") && text.contains("honesty")
        }));
    }

    #[test]
    fn a_name_match_outranks_a_body_match_and_ties_go_to_the_newest() {
        let temp = tempfile::tempdir().expect("temp");
        let dir = temp.path().join("projects/-p/memory");
        fs::create_dir_all(&dir).expect("mkdir");
        let write = |file: &str, text: &str, secs: u64| {
            fs::write(dir.join(file), text).expect("write");
            set_mtime(&dir.join(file), secs);
        };
        write(
            "a.md",
            "---\nname: Other\ndescription: d\n---\nwe use postgres here\n",
            3_000,
        );
        write(
            "b.md",
            "---\nname: Postgres setup\ndescription: d\n---\nbody\n",
            1_000,
        );
        write(
            "c.md",
            "---\nname: Other\ndescription: d\n---\nPostgres, postgres, postgres\n",
            2_000,
        );
        write(
            "d.md",
            "---\nname: Other\ndescription: d\n---\nwe use postgres here\n",
            4_000,
        );
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path())
            .build();
        let hits = search(&engine, "postgres");
        assert_eq!(files(&hits), ["b.md", "c.md", "d.md", "a.md"]);
        assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
        assert_eq!(hits[2].score, hits[3].score);

        let limited = engine
            .search_memories("postgres", &SearchOptions { limit: 2 })
            .expect("search");
        assert_eq!(files(&limited), ["b.md", "c.md"]);
    }

    #[test]
    fn unicode_case_folding_and_snippets_cut_on_character_boundaries() {
        let temp = tempfile::tempdir().expect("temp");
        let dir = temp.path().join("projects/-p/memory/team");
        fs::create_dir_all(&dir).expect("mkdir");
        let body = format!("{}İstanbul ÉTÉ office{}", "ü".repeat(80), " ñ".repeat(200));
        fs::write(
            dir.join("x.md"),
            format!("---\nname: Trip\ndescription: where\n---\n{body}\n"),
        )
        .expect("write");
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path())
            .build();
        let hits = search(&engine, "été");
        assert_eq!(files(&hits), ["team/x.md"]);
        let snippet = &hits[0].snippet;
        assert!(
            snippet.starts_with('…') && snippet.ends_with('…'),
            "{snippet}"
        );
        assert!(snippet.contains("İstanbul ÉTÉ office"), "{snippet}");
        assert!(snippet.chars().count() <= SNIPPET_CHARS + 2, "{snippet}");
        assert_eq!(files(&search(&engine, "i̇stanbul")), ["team/x.md"]);
    }

    #[test]
    fn an_empty_query_is_refused_and_a_missing_home_has_no_hits() {
        let temp = tempfile::tempdir().expect("temp");
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path().join("nope"))
            .build();
        let err = engine
            .search_memories("  ", &SearchOptions::default())
            .expect_err("empty");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(search(&engine, "anything").is_empty());
    }

    /// Writes `projects` × `files` small memory files, one of them holding a rare word, and
    /// times the search for it.
    fn search_a_large_home(projects: usize, files_per_project: usize) -> Duration {
        let temp = tempfile::tempdir().expect("temp");
        for project in 0..projects {
            let dir = temp
                .path()
                .join(format!("projects/-work-p{project}/memory"));
            fs::create_dir_all(&dir).expect("mkdir");
            for file in 0..files_per_project {
                let needle = if project == projects / 2 && file == files_per_project / 3 {
                    " zanzibar"
                } else {
                    ""
                };
                fs::write(
                    dir.join(format!("project_note_{file}.md")),
                    format!(
                        "---\nname: Note {file}\ndescription: Decision {file} of project {project}\ntype: project\n---\n\nWe decided to keep the {file}th service on port {project}{needle}.\n**Why:** latency.\n**How to apply:** check the port map before deploying.\n"
                    ),
                )
                .expect("write");
            }
        }
        let engine = Engine::builder(Environment::empty())
            .claude_home(temp.path())
            .build();
        let started = Instant::now();
        let hits = search(&engine, "Zanzibar");
        let elapsed = started.elapsed();
        assert_eq!(
            files(&hits),
            [format!("project_note_{}.md", files_per_project / 3)]
        );
        assert_eq!(hits[0].project, format!("-work-p{}", projects / 2));
        let many = search(&engine, "decision port");
        assert_eq!(many.len(), 50, "capped at the default limit");
        elapsed
    }

    /// The bound is loose (debug build, two shared cores): what it catches is a quadratic or
    /// parse-every-file regression, not a few percent.
    #[test]
    fn a_home_of_thousands_of_files_is_searched_quickly() {
        let elapsed = search_a_large_home(4, 500);
        assert!(
            elapsed < Duration::from_secs(3),
            "2,000 files took {elapsed:?}"
        );
    }

    /// The size of a heavy real home: 20 projects × 1,000 files (≈ 250 ms in a debug build).
    /// Ignored by default because writing the 20,000 files takes far longer than searching them:
    /// `cargo test -p memory-engine search -- --ignored --nocapture`.
    #[test]
    #[ignore = "writes 20,000 files; run explicitly"]
    fn twenty_thousand_files_are_searched_quickly() {
        let elapsed = search_a_large_home(20, 1_000);
        eprintln!("searched 20,000 files in {elapsed:?}");
        assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    }
}
