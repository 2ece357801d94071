//! Where Claude Code keeps a project's memory and transcripts (`FORMATS.md` §1), computed exactly
//! as Claude Code computes it, so Engram reads and writes the very directory Claude Code loads.
//!
//! - The **memory base** is `$CLAUDE_CODE_REMOTE_MEMORY_DIR`, else the config home
//!   ([`Engine::claude_home`], NFC).
//! - The **auto-memory dir** is the first of: (1) `$CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`;
//!   (2) `autoMemoryDirectory` from a *trusted* settings file (policy, local, user — never the
//!   project's committed `.claude/settings.json`, see [`crate::settings`]), `~/` expanded;
//!   (3) `<memory base>/projects/<sanitize_path(key)>/memory`, where the key is the canonical git
//!   root of the project's real path, else that real path. Overrides that fail
//!   [`validate_memory_path`] count as unset.
//! - The **transcripts dir** is `<config home>/projects/<sanitize_path(cwd)>`: keyed on the
//!   working directory itself, not on the git root, so two worktrees share memory but not
//!   transcripts.
//!
//! Claude Code's memory path string always ends in exactly one separator; here every directory is a
//! [`PathBuf`] without a trailing separator (`Path::join` puts one back where it is needed). All
//! computed paths are Unicode NFC, as Claude Code normalises them: it matters, because
//! `sanitize_path` turns every UTF-16 unit into one `-`, so a decomposed `é` would give `--`.

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::engine::Engine;
use crate::environment::nfc_path;
use crate::error::Result;
use crate::platform::Os;

/// Longest directory name `sanitize_path` produces before it appends a hash.
pub const MAX_SANITIZED_LENGTH: usize = 200;

/// The file an agent memory dir holds once it was synced from a team snapshot
/// (`{"syncedFrom": "<updatedAt>"}`, `FORMATS.md` §1).
pub const SYNC_MARKER: &str = ".snapshot-synced.json";

/// Where a project's agent memory dirs of the project scope are, one per agent type:
/// `<cwd>/.claude/agent-memory` (`FORMATS.md` §1).
pub fn project_scope_agent_memory(cwd: &Path) -> PathBuf {
    cwd.join(".claude").join("agent-memory")
}

/// Where a project's agent memory dirs of the local scope are: `<cwd>/.claude/agent-memory-local`.
pub fn local_scope_agent_memory(cwd: &Path) -> PathBuf {
    cwd.join(".claude").join("agent-memory-local")
}

/// The directory name Claude Code derives from a path: every UTF-16 code unit outside
/// `[a-zA-Z0-9]` becomes `-`. A result longer than [`MAX_SANITIZED_LENGTH`] is cut there and
/// suffixed with `-` and a base-36 hash of the *original* path, in the Node build's form
/// (`h = (h * 31 + unit) | 0` over UTF-16 units, then `abs(h)`).
///
/// ```
/// use memory_engine::paths::sanitize_path;
/// assert_eq!(sanitize_path("/Users/foo/my-project"), "-Users-foo-my-project");
/// ```
pub fn sanitize_path(path: &str) -> String {
    // Counting UTF-16 units (not chars) is what makes an astral-plane emoji two dashes.
    let sanitized: String = path
        .encode_utf16()
        .map(|unit| match u8::try_from(unit) {
            Ok(byte) if byte.is_ascii_alphanumeric() => char::from(byte),
            _ => '-',
        })
        .collect();
    if sanitized.len() <= MAX_SANITIZED_LENGTH {
        return sanitized;
    }
    // `sanitized` is pure ASCII, so byte slicing is char slicing.
    format!(
        "{}-{}",
        &sanitized[..MAX_SANITIZED_LENGTH],
        node_path_hash(path)
    )
}

/// Claude Code's `simpleHash`: a 32-bit signed Java-style string hash, absolute value, base 36.
fn node_path_hash(path: &str) -> String {
    let hash = path.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    // `unsigned_abs` keeps i32::MIN exact, as JavaScript's Math.abs does on a double.
    to_base36(u64::from(hash.unsigned_abs()))
}

fn to_base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    out.into_iter().map(char::from).collect()
}

/// The directory for `key` under a `projects/` dir. Paths longer than the sanitize limit were
/// hashed with wyhash by the Bun build of Claude Code and with [`sanitize_path`]'s hash by the Node
/// build; when the exact Node form does not exist, an existing `<first 200 chars>-*` directory is
/// taken instead (the most recently modified, should several long paths share a prefix).
pub fn project_dir(projects: &Path, key: &str) -> PathBuf {
    let name = sanitize_path(key);
    let exact = projects.join(&name);
    if name.len() <= MAX_SANITIZED_LENGTH || exact.is_dir() {
        return exact;
    }
    let prefix = format!("{}-", &name[..MAX_SANITIZED_LENGTH]);
    let Ok(entries) = fs::read_dir(projects) else {
        return exact;
    };
    entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .max_by_key(|entry| {
            let modified = entry.metadata().and_then(|m| m.modified()).ok();
            (modified, entry.file_name())
        })
        .map(|entry| entry.path())
        .unwrap_or(exact)
}

/// The project a memory dir belongs to, by name: the folder holding it (`<base>/projects/<name>/
/// memory`), as change sets and usage records name it; empty for a dir with no parent.
pub fn project_of(memory_dir: &Path) -> String {
    memory_dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The canonical git root of `start`: the nearest ancestor (of its real path) holding `.git`,
/// except that a linked worktree maps to the main repository's root, so all worktrees of a repo
/// share one memory dir. The worktree link is trusted only when it is consistent both ways —
/// `.git` says `gitdir: X`, `X` sits directly in `<commondir>/worktrees/`, and `X/gitdir` points
/// back at this `.git` — otherwise a crafted `.git` file could borrow another repo's memory.
/// Submodules (`gitdir: …/.git/modules/…`, no `commondir`) keep their own root.
pub fn canonical_git_root(start: &Path) -> Option<PathBuf> {
    let start = real_path(start);
    let root = start
        .ancestors()
        .find(|dir| fs::metadata(dir.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file()))?;
    Some(nfc_path(
        &worktree_main_root(root).unwrap_or_else(|| root.to_path_buf()),
    ))
}

/// The main repository's root when `root` is a genuine linked worktree; `None` for an ordinary
/// checkout, a submodule, or anything inconsistent.
fn worktree_main_root(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if !fs::metadata(&dot_git).ok()?.is_file() {
        return None;
    }
    let content = fs::read_to_string(&dot_git).ok()?;
    let target = content.trim().strip_prefix("gitdir:")?.trim();
    let worktree_git_dir = normalize_lexically(&root.join(target));
    let common = fs::read_to_string(worktree_git_dir.join("commondir")).ok()?;
    let common_dir = normalize_lexically(&worktree_git_dir.join(common.trim()));
    if worktree_git_dir.parent()? != common_dir.join("worktrees") {
        return None;
    }
    let backlink = fs::read_to_string(worktree_git_dir.join("gitdir")).ok()?;
    let backlink = Path::new(backlink.trim());
    // Claude Code realpaths this value as is, so a relative one (`worktree.useRelativePaths`)
    // never matches there; refusing it keeps both programs on the same directory.
    if !backlink.is_absolute() {
        return None;
    }
    let backlink = crate::platform::fs::canonicalize(backlink).ok()?;
    if backlink != real_path(root).join(".git") {
        return None;
    }
    // A worktree of a bare repository has no working tree around its common dir (`repo.git`);
    // the common dir itself is then the repository's stable identity, as in Claude Code.
    if common_dir.file_name()? != ".git" {
        return Some(common_dir);
    }
    common_dir.parent().map(Path::to_path_buf)
}

/// Checks an override path (`CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`, or `autoMemoryDirectory` when
/// `home` is given so `~/` can be expanded) and returns it normalised, or `None` when it must be
/// treated as unset: relative, shorter than 3 characters, a bare drive (`C:`), a UNC or `//` path,
/// containing NUL, or a `~/` that names the home directory itself or its parent.
pub fn validate_memory_path(raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    validate_memory_path_on(Os::CURRENT, raw, home)
}

/// [`validate_memory_path`] with absoluteness judged as Node judges it on `os`
/// ([`is_node_absolute`]).
fn validate_memory_path_on(os: Os, raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    if raw.is_empty() || raw.contains('\0') {
        return None;
    }
    let candidate = match raw.strip_prefix("~/").or_else(|| raw.strip_prefix("~\\")) {
        Some(rest) => {
            let home = home?;
            let rest = normalize_lexically(Path::new(rest));
            // `~/`, `~/.` or `~/..` would hand the whole home (or more) to the memory writer.
            if rest.as_os_str().is_empty() || rest == Path::new("..") {
                return None;
            }
            home.join(rest).to_string_lossy().into_owned()
        }
        None => raw.to_string(),
    };
    if candidate.starts_with("\\\\") || candidate.starts_with("//") {
        return None;
    }
    let normalized = normalize_lexically(Path::new(&candidate));
    let text = normalized.to_string_lossy();
    let text = text.trim_end_matches(['/', '\\']);
    let bare_drive =
        text.len() == 2 && text.as_bytes()[0].is_ascii_alphabetic() && text.as_bytes()[1] == b':';
    if !is_node_absolute(os, text) || text.chars().count() < 3 || bare_drive {
        return None;
    }
    Some(nfc_path(Path::new(text)))
}

/// Whether `path` is absolute as Node's `path.isAbsolute` says on `os` — Claude Code's own
/// check. On Windows `C:\…`, `C:/…` and a path from the current drive's root (`\x`, `/x`) all
/// are, while `C:x` (relative to that drive's working dir) is not; Rust's `Path::is_absolute`
/// says no to `/x` there, so a setting Claude Code follows would count as unset.
pub fn is_node_absolute(os: Os, path: &str) -> bool {
    let separator = |b: &u8| *b == b'/' || (os == Os::Windows && *b == b'\\');
    let bytes = path.as_bytes();
    match os {
        Os::Unix | Os::Mac => bytes.first() == Some(&b'/'),
        Os::Windows => {
            bytes.first().is_some_and(separator)
                || (bytes.len() >= 3
                    && bytes[0].is_ascii_alphabetic()
                    && bytes[1] == b':'
                    && separator(&bytes[2]))
        }
    }
}

/// Resolves `.` and `..` and repeated separators without touching the disk (Node's
/// `path.normalize`/`path.resolve`), so symlinks are not followed. `..` at the root stays at the
/// root; leading `..` of a relative path are kept.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `realpath`, falling back to the path as given when it does not exist (Claude Code does the
/// same when the file system refuses), then NFC.
fn real_path(path: &Path) -> PathBuf {
    nfc_path(&crate::platform::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// Which rule chose the auto-memory dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryDirSource {
    /// `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`.
    Env,
    /// `autoMemoryDirectory` in a trusted settings file.
    Settings,
    /// `<memory base>/projects/<sanitized key>/memory`.
    Default,
}

/// Where a project's memory and transcripts live, and why.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDirResolution {
    /// The auto-memory dir (no trailing separator; Claude Code's string form has one).
    pub memory_dir: PathBuf,
    pub source: MemoryDirSource,
    /// The canonical git root of the project, when it is in a repository.
    pub git_root: Option<PathBuf>,
    /// `<config home>/projects/<sanitize_path(cwd)>`.
    pub transcripts_dir: PathBuf,
    /// The settings file whose `autoMemoryDirectory` was used (source `settings` only).
    pub settings_file: Option<PathBuf>,
    /// Settings files that could not be used (malformed JSON, wrong value types), one line each,
    /// naming the file. They were treated as absent, as Claude Code does.
    pub warnings: Vec<String>,
}

impl MemoryDirResolution {
    /// The name Engram files the project under (its settings, dream state and staged change
    /// sets): the folder holding the memory dir when that is Claude Code's default place
    /// (`<base>/projects/<name>/memory`), else the transcripts folder's name.
    pub fn project_name(&self) -> String {
        let from_memory = (self.memory_dir.file_name().is_some_and(|n| n == "memory"))
            .then(|| self.memory_dir.parent())
            .flatten()
            .filter(|parent| {
                parent
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == "projects")
            })
            .and_then(Path::file_name);
        from_memory
            .or_else(|| self.transcripts_dir.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Engine {
    /// Claude Code's memory base: `$CLAUDE_CODE_REMOTE_MEMORY_DIR`, else the config home.
    pub fn memory_base(&self) -> PathBuf {
        match self.env().get("CLAUDE_CODE_REMOTE_MEMORY_DIR") {
            Some(dir) => nfc_path(Path::new(dir)),
            None => self.claude_home(),
        }
    }

    /// Where the agent memory dirs of the user scope are, one per agent type:
    /// `<memory base>/agent-memory` (`FORMATS.md` §1).
    pub fn user_scope_agent_memory(&self) -> PathBuf {
        self.memory_base().join("agent-memory")
    }

    /// The auto-memory dir Claude Code uses when started in `project` (its working directory).
    /// Never fails on unreadable settings: those are reported in `warnings` and skipped.
    pub fn resolve_memory_dir(&self, project: &Path) -> Result<MemoryDirResolution> {
        let cwd = real_path(project);
        let git_root = canonical_git_root(&cwd);
        let transcripts_dir = self.transcripts_dir(&cwd);
        let settings = self.claude_settings(&cwd);
        let warnings = settings
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect();

        if let Some(raw) = self.env().get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE") {
            // No `~` expansion here: Claude Code passes this one through as a full path.
            if let Some(memory_dir) = validate_memory_path(raw, None) {
                return Ok(MemoryDirResolution {
                    memory_dir,
                    source: MemoryDirSource::Env,
                    git_root,
                    transcripts_dir,
                    settings_file: None,
                    warnings,
                });
            }
        }
        // Only the highest-priority value it may come from is considered; an invalid one falls
        // through to the default rather than to a lower-priority file, exactly like Claude Code.
        if let Some(setting) = settings.auto_memory_directory(|| self.workspace_trusted(&cwd)) {
            let home = self.env().home_dir();
            if let Some(memory_dir) = validate_memory_path(setting.value, home.as_deref()) {
                return Ok(MemoryDirResolution {
                    memory_dir,
                    source: MemoryDirSource::Settings,
                    git_root,
                    transcripts_dir,
                    settings_file: Some(setting.path.to_path_buf()),
                    warnings,
                });
            }
        }
        let key = git_root.clone().unwrap_or_else(|| cwd.clone());
        let projects = self.memory_base().join("projects");
        let memory_dir = nfc_path(&project_dir(&projects, &key.to_string_lossy()).join("memory"));
        Ok(MemoryDirResolution {
            memory_dir,
            source: MemoryDirSource::Default,
            git_root,
            transcripts_dir,
            settings_file: None,
            warnings,
        })
    }

    /// Where Claude Code writes the transcripts of sessions started in `cwd`:
    /// `<config home>/projects/<sanitize_path(realpath(cwd))>`.
    pub fn transcripts_dir(&self, cwd: &Path) -> PathBuf {
        let cwd = real_path(cwd);
        project_dir(&self.claude_home().join("projects"), &cwd.to_string_lossy())
    }

    /// Whether the person trusted `cwd` in Claude Code's trust dialog, as Claude Code 2.1.330
    /// reads it from its global config ([`Engine::claude_global_config_path`]):
    /// `projects[<folder>].hasTrustDialogAccepted` for the folder or one above it, up to the top
    /// of its git repository (the whole way up outside one), or for the repository's main root
    /// (a worktree's). Paths are keyed as Claude Code writes them (real, `/` on every OS). A
    /// missing, unreadable or malformed config trusts nothing.
    pub fn workspace_trusted(&self, cwd: &Path) -> bool {
        let config = crate::disk::read_text(&self.claude_global_config_path())
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        let Some(projects) = config
            .as_ref()
            .and_then(|config| config.get("projects"))
            .and_then(serde_json::Value::as_object)
        else {
            return false;
        };
        let accepted = |folder: &Path| {
            let key = folder.to_string_lossy();
            [key.to_string(), key.replace('\\', "/")].iter().any(|key| {
                projects
                    .get(key)
                    .and_then(|project| project.get("hasTrustDialogAccepted"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
            })
        };
        let cwd = real_path(cwd);
        for folder in cwd.ancestors() {
            if accepted(folder) {
                return true;
            }
            if folder.join(".git").exists() {
                break;
            }
        }
        canonical_git_root(&cwd).is_some_and(|root| accepted(&root))
    }

    /// Claude Code's global config file, where `claude mcp add --scope user` writes: a legacy
    /// `<config home>/.config.json` when one exists, else `.claude.json` in the config home when
    /// one was chosen (`--claude-dir`, `$CLAUDE_CONFIG_DIR`), else `~/.claude.json` — beside
    /// `~/.claude`, not in it (checked against Claude Code 2.1.330).
    pub fn claude_global_config_path(&self) -> PathBuf {
        let home = self.claude_home();
        let legacy = home.join(".config.json");
        if legacy.is_file() {
            return legacy;
        }
        if self.claude_home_is_chosen() {
            return home.join(".claude.json");
        }
        self.env()
            .home_dir()
            .unwrap_or_else(|| PathBuf::from("/"))
            .join(".claude.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;

    #[test]
    fn the_global_config_is_beside_the_default_home_and_inside_a_chosen_one() {
        let env = Environment::empty().with("HOME", "/home/me");
        let engine = Engine::builder(env.clone()).build();
        assert_eq!(
            engine.claude_global_config_path(),
            PathBuf::from("/home/me/.claude.json")
        );
        let engine = Engine::builder(env.clone().with("CLAUDE_CONFIG_DIR", "/cfg")).build();
        assert_eq!(
            engine.claude_global_config_path(),
            PathBuf::from("/cfg/.claude.json")
        );
        let engine = Engine::builder(env).claude_home("/flag").build();
        assert_eq!(
            engine.claude_global_config_path(),
            PathBuf::from("/flag/.claude.json")
        );
        let legacy = tempfile::tempdir().expect("tmp");
        std::fs::write(legacy.path().join(".config.json"), "{}").expect("seed");
        let engine = Engine::builder(Environment::empty())
            .claude_home(legacy.path())
            .build();
        assert_eq!(
            engine.claude_global_config_path(),
            legacy.path().join(".config.json")
        );
    }
    use crate::testing::fixtures::{trust_workspace, write_file};
    use std::process::Command;

    fn engine_at(home: &Path) -> Engine {
        Engine::builder(Environment::empty().with("HOME", home.to_string_lossy())).build()
    }

    /// A temp dir with paths for HOME (`home/`) and a project (`repo/`), neither created.
    fn home_and_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().expect("tmp");
        let (home, project) = (tmp.path().join("home"), tmp.path().join("repo"));
        (tmp, home, project)
    }

    /// Writes a settings file that sets `autoMemoryDirectory` to `dir`.
    fn set_memory_dir(settings: &Path, dir: &str) {
        write_file(settings, &format!(r#"{{"autoMemoryDirectory": "{dir}"}}"#));
    }

    #[test]
    fn sanitize_replaces_every_non_alphanumeric_utf16_unit() {
        assert_eq!(
            sanitize_path("/Users/foo/my-project"),
            "-Users-foo-my-project"
        );
        assert_eq!(sanitize_path("/path/to/Demo"), "-path-to-Demo");
        assert_eq!(
            sanitize_path("/tmp/café"),
            "-tmp-caf-",
            "é is one UTF-16 unit"
        );
        assert_eq!(
            sanitize_path("/a😀b"),
            "-a--b",
            "an emoji is two UTF-16 units"
        );
        assert_eq!(sanitize_path("C:\\Users\\x y"), "C--Users-x-y");
    }

    #[test]
    fn sanitize_hashes_long_paths_in_the_node_form() {
        let long = format!("/{}", "a".repeat(250));
        let out = sanitize_path(&long);
        assert_eq!(out, format!("-{}-feo44x", "a".repeat(199)));
        assert_eq!(out.len(), MAX_SANITIZED_LENGTH + "-feo44x".len());
        // Exactly at the limit there is no hash.
        let exact = format!("/{}", "b".repeat(199));
        assert_eq!(sanitize_path(&exact).len(), MAX_SANITIZED_LENGTH);
        assert!(!sanitize_path(&exact).contains("b-"));
    }

    #[test]
    fn node_hash_matches_javascript_for_negative_and_min_values() {
        // "polygenelubricants" hashes to i32::MIN in Java/JS; Math.abs gives 2^31.
        assert_eq!(node_path_hash("polygenelubricants"), to_base36(1 << 31));
        // "zz" = 122*31 + 122 = 3904; a negative hash is made positive.
        assert_eq!(node_path_hash("zz"), to_base36(3904));
        let negative = "a".repeat(10);
        let h = negative
            .bytes()
            .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)));
        assert!(h < 0, "test input must overflow to a negative hash");
        assert_eq!(
            node_path_hash(&negative),
            to_base36(u64::from(h.unsigned_abs()))
        );
        assert_eq!(to_base36(0), "0");
        assert_eq!(to_base36(35), "z");
        assert_eq!(to_base36(36), "10");
    }

    #[test]
    fn long_project_dir_accepts_the_bun_hash_form_on_lookup() {
        let tmp = tempfile::tempdir().expect("tmp");
        let projects = tmp.path();
        let long = format!("/{}", "a".repeat(250));
        let node_form = projects.join(sanitize_path(&long));
        assert_eq!(
            project_dir(projects, &long),
            node_form,
            "nothing exists yet"
        );
        let bun_form = projects.join(format!("-{}-1x2y3z4w5v", "a".repeat(199)));
        fs::create_dir_all(&bun_form).expect("mkdir");
        assert_eq!(project_dir(projects, &long), bun_form);
        fs::create_dir_all(&node_form).expect("mkdir");
        assert_eq!(
            project_dir(projects, &long),
            node_form,
            "the exact form wins"
        );
        // Short paths never borrow a sibling that merely shares a prefix.
        fs::create_dir_all(projects.join("-short-x")).expect("mkdir");
        assert_eq!(project_dir(projects, "/short"), projects.join("-short"));
    }

    /// Platforms row 22: Node's `path.isAbsolute` on each OS, and a Windows override judged by
    /// it — `/x` and `C:/x` are absolute there, `C:x` is not.
    #[test]
    fn absolute_paths_are_judged_as_node_judges_them_on_each_os() {
        for (path, unix, windows) in [
            ("/home/me/mem", true, true),
            (r"\Users\me\mem", false, true),
            (r"C:\Users\me\mem", false, true),
            ("C:/Users/me/mem", false, true),
            ("c:/x", false, true),
            ("C:mem", false, false),
            ("C:", false, false),
            ("mem/x", false, false),
            ("", false, false),
            ("1:/x", false, false),
        ] {
            assert_eq!(is_node_absolute(Os::Unix, path), unix, "{path:?} on Unix");
            assert_eq!(
                is_node_absolute(Os::Windows, path),
                windows,
                "{path:?} on Windows"
            );
        }
        let on_windows = |raw: &str| validate_memory_path_on(Os::Windows, raw, None);
        assert_eq!(
            on_windows(r"C:\Users\me\mem"),
            Some(PathBuf::from(r"C:\Users\me\mem"))
        );
        assert_eq!(
            on_windows("D:/claude/mem/"),
            Some(PathBuf::from("D:/claude/mem"))
        );
        assert_eq!(
            on_windows("/shared/mem"),
            Some(PathBuf::from("/shared/mem"))
        );
        for bad in ["C:mem", "C:", r"c:\", r"\\server\share\mem", "mem"] {
            assert_eq!(on_windows(bad), None, "{bad:?} must be rejected on Windows");
        }
        // Claude Code's project key of a Windows path: every non-alphanumeric unit is `-`.
        assert_eq!(sanitize_path(r"C:\Users\me\proj"), "C--Users-me-proj");
    }

    #[test]
    fn override_validation_rejects_unsafe_values() {
        let home = Path::new("/home/u");
        for bad in [
            "",
            "relative/dir",
            "/a",
            "C:",
            "c:\\",
            "\\\\server\\share",
            "//server/share",
            "/tmp/x\0y",
            "~/",
            "~/.",
            "~/..",
            "~",
            "~user/x",
            "/",
        ] {
            assert_eq!(
                validate_memory_path(bad, Some(home)),
                None,
                "{bad:?} must be rejected"
            );
        }
        assert_eq!(
            validate_memory_path("/ab", Some(home)),
            Some(PathBuf::from("/ab")),
            "three characters are enough"
        );
        assert_eq!(
            validate_memory_path("/data/mem//x/../y/", None),
            Some(PathBuf::from("/data/mem/y")),
            "normalised, trailing separator dropped"
        );
        assert_eq!(
            validate_memory_path("~/notes/mem", Some(home)),
            Some(PathBuf::from("/home/u/notes/mem"))
        );
        assert_eq!(
            validate_memory_path("~/notes", None),
            None,
            "no home to expand"
        );
        assert_eq!(
            validate_memory_path("/tmp/cafe\u{301}", None),
            Some(PathBuf::from("/tmp/caf\u{e9}")),
            "NFC"
        );
    }

    #[test]
    fn default_memory_dir_uses_the_sanitized_real_path() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("home");
        let project = tmp.path().join("work").join("proj");
        fs::create_dir_all(&project).expect("mkdir");
        let real = fs::canonicalize(&project).expect("real");
        let engine = engine_at(&home);
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.source, MemoryDirSource::Default);
        assert_eq!(got.git_root, None);
        let name = sanitize_path(&real.to_string_lossy());
        assert_eq!(
            got.memory_dir,
            home.join(".claude/projects").join(&name).join("memory")
        );
        assert_eq!(
            got.transcripts_dir,
            home.join(".claude/projects").join(&name)
        );

        // Through a symlink, the same dir: the key is the real path.
        #[cfg(unix)]
        {
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&project, &link).expect("symlink");
            let via_link = engine.resolve_memory_dir(&link).expect("resolve");
            assert_eq!(via_link.memory_dir, got.memory_dir);
        }
    }

    #[test]
    fn memory_base_and_config_home_come_from_the_environment() {
        let tmp = tempfile::tempdir().expect("tmp");
        let project = tmp.path().join("p");
        fs::create_dir_all(&project).expect("mkdir");
        let name = sanitize_path(&real_path(&project).to_string_lossy());
        let env = Environment::empty()
            .with("HOME", "/home/u")
            .with("CLAUDE_CONFIG_DIR", "/cfg")
            .with("CLAUDE_CODE_REMOTE_MEMORY_DIR", "/remote");
        let got = Engine::builder(env)
            .build()
            .resolve_memory_dir(&project)
            .expect("resolve");
        assert_eq!(
            got.memory_dir,
            Path::new("/remote/projects").join(&name).join("memory")
        );
        assert_eq!(
            got.transcripts_dir,
            Path::new("/cfg/projects").join(&name),
            "transcripts stay under the config home"
        );
    }

    #[test]
    fn the_config_home_is_nfc() {
        let env = Environment::empty().with("CLAUDE_CONFIG_DIR", "/Users/Ame\u{301}lie/.claude");
        let engine = Engine::builder(env).build();
        assert_eq!(
            engine.claude_home(),
            PathBuf::from("/Users/Am\u{e9}lie/.claude")
        );
        assert_eq!(engine.memory_base(), engine.claude_home());
    }

    #[test]
    fn decomposed_unicode_in_the_project_path_is_composed_before_sanitizing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let project = tmp.path().join("cafe\u{301}");
        fs::create_dir_all(&project).expect("mkdir");
        let got = engine_at(tmp.path())
            .resolve_memory_dir(&project)
            .expect("resolve");
        let name = got
            .transcripts_dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(name.ends_with("-caf-"), "NFC é is one dash, got {name}");
    }

    #[test]
    fn env_override_wins_and_is_validated() {
        let tmp = tempfile::tempdir().expect("tmp");
        let project = tmp.path().join("p");
        set_memory_dir(&project.join(".claude/settings.local.json"), "/from/local");
        let env = Environment::empty().with("HOME", tmp.path().to_string_lossy());
        let engine = Engine::builder(
            env.clone()
                .with("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "/mnt/space/"),
        )
        .build();
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.source, MemoryDirSource::Env);
        assert_eq!(got.memory_dir, PathBuf::from("/mnt/space"));

        // `~` is not expanded in the env override: it is relative, so unset; settings apply.
        let engine =
            Engine::builder(env.with("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "~/mem")).build();
        trust_workspace(&engine, &project);
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.source, MemoryDirSource::Settings);
        assert_eq!(got.memory_dir, PathBuf::from("/from/local"));
    }

    /// As Claude Code 2.1.330: the project's and the local settings move the memory dir only in
    /// a workspace the person trusted (its trust dialog names the key); the user's always.
    #[test]
    fn project_and_local_settings_move_the_memory_dir_only_in_a_trusted_workspace() {
        let (_tmp, home, project) = home_and_repo();
        set_memory_dir(&project.join(".claude/settings.json"), "~/.ssh");
        let engine = engine_at(&home);
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(
            got.source,
            MemoryDirSource::Default,
            "a cloned repo nobody trusted must not redirect writes"
        );
        assert!(!got.memory_dir.starts_with(home.join(".ssh")));

        set_memory_dir(&home.join(".claude/settings.json"), "~/user-mem");
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.source, MemoryDirSource::Settings);
        assert_eq!(
            got.memory_dir,
            home.join("user-mem"),
            "`~/` expands to HOME"
        );
        assert_eq!(got.settings_file, Some(home.join(".claude/settings.json")));

        set_memory_dir(&project.join(".claude/settings.local.json"), "~/local-mem");
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(
            got.memory_dir,
            home.join("user-mem"),
            "untrusted: not local"
        );

        // Trusting the folder above the project counts (no repository bounds the walk)…
        trust_workspace(&engine, project.parent().expect("parent"));
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(
            got.memory_dir,
            home.join("local-mem"),
            "local outranks user"
        );
        fs::remove_file(project.join(".claude/settings.local.json")).expect("rm");
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.memory_dir, home.join(".ssh"), "then the project's");

        // …but not above the top of a git repository.
        fs::create_dir_all(project.join(".git")).expect("a repository");
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.memory_dir, home.join("user-mem"));
        trust_workspace(&engine, &project);
        let inner = project.join("src");
        set_memory_dir(&inner.join(".claude/settings.json"), "~/inner-mem");
        let got = engine.resolve_memory_dir(&inner).expect("resolve");
        assert_eq!(
            got.memory_dir,
            home.join("inner-mem"),
            "a folder inside the trusted repo"
        );
    }

    /// A worktree of a trusted repository is trusted (Claude Code keys it on the main root), and
    /// a config that cannot be read trusts nothing.
    #[test]
    fn a_worktree_of_a_trusted_repository_is_trusted_and_a_broken_config_trusts_nothing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let (main, wt) = (base.join("main"), base.join("wt"));
        fake_repo(&main);
        fake_worktree(&main, &wt, "wt");
        let engine = engine_at(&base.join("home"));
        assert!(!engine.workspace_trusted(&wt));
        trust_workspace(&engine, &main);
        assert!(engine.workspace_trusted(&wt));
        assert!(engine.workspace_trusted(&main));
        write_file(&engine.claude_global_config_path(), "{ not json");
        assert!(!engine.workspace_trusted(&main));
    }

    #[test]
    fn an_invalid_setting_falls_back_to_the_default_not_to_a_lower_source() {
        let (_tmp, home, project) = home_and_repo();
        fs::create_dir_all(&project).expect("mkdir");
        set_memory_dir(&home.join(".claude/settings.json"), "/valid/user/dir");
        set_memory_dir(&project.join(".claude/settings.local.json"), "relative/dir");
        let engine = engine_at(&home);
        trust_workspace(&engine, &project);
        let got = engine.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.source, MemoryDirSource::Default);
    }

    #[test]
    fn policy_settings_outrank_local_and_are_only_read_when_injected() {
        let (tmp, home, project) = home_and_repo();
        let policy = tmp.path().join("etc/managed-settings.json");
        set_memory_dir(&project.join(".claude/settings.local.json"), "/local/dir");
        set_memory_dir(&policy, "/policy/dir");
        let env = Environment::empty().with("HOME", home.to_string_lossy());
        let with_policy = Engine::builder(env.clone())
            .managed_settings(&policy)
            .build();
        trust_workspace(&with_policy, &project);
        let got = with_policy.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.memory_dir, PathBuf::from("/policy/dir"));
        let without = Engine::builder(env).build();
        let got = without.resolve_memory_dir(&project).expect("resolve");
        assert_eq!(got.memory_dir, PathBuf::from("/local/dir"));
    }

    #[test]
    fn malformed_settings_are_skipped_with_a_warning_naming_file_and_line() {
        let (_tmp, home, project) = home_and_repo();
        write_file(
            &project.join(".claude/settings.local.json"),
            "{\n  \"autoMemoryDirectory\": \"/x/y\",\n  oops\n}",
        );
        set_memory_dir(&home.join(".claude/settings.json"), "/user/dir");
        let got = engine_at(&home)
            .resolve_memory_dir(&project)
            .expect("resolve");
        assert_eq!(
            got.memory_dir,
            PathBuf::from("/user/dir"),
            "the broken file is absent"
        );
        assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
        assert!(
            got.warnings[0].contains("settings.local.json:3"),
            "{}",
            got.warnings[0]
        );
    }

    /// Lays out `.git` plumbing by hand, the way `git worktree add` and submodules do.
    fn fake_repo(root: &Path) {
        fs::create_dir_all(root.join(".git/worktrees")).expect("mkdir");
        write_file(&root.join(".git/HEAD"), "ref: refs/heads/main\n");
    }

    fn fake_worktree(main: &Path, worktree: &Path, name: &str) -> PathBuf {
        let admin = main.join(".git/worktrees").join(name);
        write_file(&admin.join("commondir"), "../..\n");
        write_file(
            &admin.join("gitdir"),
            &format!("{}\n", worktree.join(".git").display()),
        );
        write_file(
            &worktree.join(".git"),
            &format!("gitdir: {}\n", admin.display()),
        );
        admin
    }

    #[test]
    fn worktrees_share_the_main_repository_memory_dir() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let main = base.join("main");
        let wt = base.join("wt-feature");
        fake_repo(&main);
        fake_worktree(&main, &wt, "wt-feature");
        fs::create_dir_all(wt.join("src/deep")).expect("mkdir");

        assert_eq!(canonical_git_root(&wt.join("src/deep")), Some(main.clone()));
        let engine = engine_at(&base.join("home"));
        let from_wt = engine
            .resolve_memory_dir(&wt.join("src/deep"))
            .expect("resolve");
        let from_main = engine.resolve_memory_dir(&main).expect("resolve");
        assert_eq!(from_wt.memory_dir, from_main.memory_dir);
        assert_eq!(from_wt.git_root, Some(main));
        assert_ne!(
            from_wt.transcripts_dir, from_main.transcripts_dir,
            "transcripts are keyed on the cwd"
        );
    }

    #[test]
    fn a_worktree_link_without_a_matching_backlink_is_not_trusted() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let main = base.join("main");
        let wt = base.join("wt");
        fake_repo(&main);
        let admin = fake_worktree(&main, &wt, "wt");
        write_file(&admin.join("gitdir"), "/somewhere/else/.git\n");
        assert_eq!(canonical_git_root(&wt), Some(wt.clone()));

        // An admin dir not directly under `<commondir>/worktrees` is refused too.
        let odd = base.join("odd");
        let admin = main.join(".git/elsewhere/odd");
        write_file(&admin.join("commondir"), "../..\n");
        write_file(
            &admin.join("gitdir"),
            &format!("{}\n", odd.join(".git").display()),
        );
        write_file(&odd.join(".git"), &format!("gitdir: {}\n", admin.display()));
        assert_eq!(canonical_git_root(&odd), Some(odd.clone()));
    }

    #[test]
    fn a_relative_backlink_is_not_trusted_as_claude_code_cannot_follow_it() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let main = base.join("main");
        let wt = base.join("wt");
        fake_repo(&main);
        let admin = fake_worktree(&main, &wt, "wt");
        assert_eq!(
            canonical_git_root(&wt),
            Some(main.clone()),
            "absolute form shares"
        );
        write_file(&admin.join("gitdir"), "../../../../wt/.git\n");
        assert_eq!(canonical_git_root(&wt), Some(wt.clone()));
    }

    #[test]
    fn submodules_keep_their_own_memory_dir() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let main = base.join("super");
        fake_repo(&main);
        let sub = main.join("vendor/lib");
        fs::create_dir_all(main.join(".git/modules/vendor/lib")).expect("mkdir");
        write_file(&sub.join(".git"), "gitdir: ../../.git/modules/vendor/lib\n");
        assert_eq!(canonical_git_root(&sub), Some(sub.clone()));
        let engine = engine_at(&base.join("home"));
        assert_ne!(
            engine.resolve_memory_dir(&sub).expect("resolve").memory_dir,
            engine
                .resolve_memory_dir(&main)
                .expect("resolve")
                .memory_dir
        );
    }

    #[test]
    fn real_git_worktrees_share_one_memory_dir() {
        let git = |dir: &Path, args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir)
                .output()
                .ok()
                .filter(|out| out.status.success())
        };
        let tmp = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(tmp.path()).expect("real");
        let main = base.join("repo");
        fs::create_dir_all(&main).expect("mkdir");
        if git(&main, &["init", "-q"]).is_none() {
            eprintln!("git unavailable; the hand-built layout tests cover this rule");
            return;
        }
        let commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q"];
        git(
            &main,
            &[&commit[..], &["--allow-empty", "-m", "init"]].concat(),
        )
        .expect("commit");
        let wt = base.join("repo-wt");
        git(
            &main,
            &["worktree", "add", "-q", &wt.to_string_lossy(), "-b", "wt"],
        )
        .expect("worktree add");
        assert_eq!(canonical_git_root(&wt), Some(main.clone()));
        let engine = engine_at(&base.join("home"));
        assert_eq!(
            engine.resolve_memory_dir(&wt).expect("resolve").memory_dir,
            engine
                .resolve_memory_dir(&main)
                .expect("resolve")
                .memory_dir
        );
    }

    #[test]
    fn normalize_lexically_resolves_dots_without_the_disk() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c//d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize_lexically(Path::new("/../x")), PathBuf::from("/x"));
        assert_eq!(
            normalize_lexically(Path::new("../x/..")),
            PathBuf::from("..")
        );
        assert_eq!(normalize_lexically(Path::new("a/..")), PathBuf::new());
    }
}
