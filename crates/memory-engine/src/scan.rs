//! The memory scanner (`FORMATS.md` §3): every `*.md` file under a memory dir, at any depth, except
//! files named `MEMORY.md`; only the first 30 lines of each are read, and the frontmatter must close
//! within them. Newest first by mtime, optionally capped (Claude Code keeps 200).
//!
//! Speed matters (the app rescans on every change, and dirs grow to thousands of files), so the walk
//! first collects names and mtimes, sorts and caps, and only then opens the files it keeps, reading
//! a bounded head of each into a buffer reused per thread. Symlinked files are read only when they
//! resolve inside the memory dir; symlinked directories are not descended into (no loops, no
//! escapes). Unreadable entries are skipped, as Claude Code skips them.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::{IoResultExt, Result};
use crate::frontmatter::{self, Frontmatter};
use crate::memory_type::MemoryType;
use crate::staleness::{age_label, iso_time, memory_age_days, serialize_iso_time};

/// Lines of each file the scanner reads; the frontmatter must close within them.
pub const SCAN_LINE_LIMIT: usize = 30;
/// How many files Claude Code keeps after sorting.
pub const CLAUDE_SCAN_CAP: usize = 200;
/// A bound on the bytes read for those 30 lines, so a file with a giant first line cannot make a
/// scan read megabytes. No real frontmatter comes near it.
const HEAD_BYTE_LIMIT: usize = 64 * 1024;
const READ_CHUNK: usize = 4096;
/// Below this many files a second thread costs more than it saves.
pub(crate) const PARALLEL_THRESHOLD: usize = 256;

/// One memory file as the scanner (and recall) sees it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryHeader {
    /// Relative to the memory dir, `/`-separated.
    pub file: String,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub memory_type: Option<MemoryType>,
    #[serde(serialize_with = "serialize_iso_time")]
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub mtime: SystemTime,
    /// `today`, `yesterday` or `N days ago`.
    pub age: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub days: u64,
}

/// A file found by the walk, before its head is read.
#[derive(Debug, Clone)]
pub(crate) struct FoundFile {
    pub rel: String,
    pub path: PathBuf,
    pub mtime: SystemTime,
    /// Its size in bytes when listed.
    pub len: u64,
}

/// Scans `root`; a missing dir has no memories. `now` dates the ages.
pub fn scan_dir(root: &Path, limit: Option<usize>, now: SystemTime) -> Result<Vec<MemoryHeader>> {
    Ok(scan_with_frontmatter(root, limit)?
        .into_iter()
        .map(|(found, fm)| header(found, fm, now))
        .collect())
}

/// The files of `headers` (a scan of `root`) that could not be read, with why: a scan shows such
/// a file as having no frontmatter, as Claude Code's does, and this tells the two apart. Only
/// files without any frontmatter field are opened again.
pub fn unreadable(root: &Path, headers: &[MemoryHeader]) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|h| h.name.is_none() && h.description.is_none() && h.memory_type.is_none())
        .filter_map(|h| match fs::File::open(root.join(&h.file)) {
            Ok(_) => None,
            Err(e) => Some((h.file.clone(), e.to_string())),
        })
        .collect()
}

/// Like [`scan_dir`], keeping the whole parsed frontmatter (status, raw type) for lint.
///
/// The walk reads directories only. Then, on up to four threads, each file is opened once: its
/// mtime comes from the open file (`fstat`, no second path lookup) and its head is read up to
/// the closing fence. With a `limit` below the file count, only mtimes are read first (in
/// parallel too), and only the newest `limit` files are opened.
pub(crate) fn scan_with_frontmatter(
    root: &Path,
    limit: Option<usize>,
) -> Result<Vec<(FoundFile, Frontmatter)>> {
    let listed = list_paths(root)?;
    let mut scanned: Vec<(FoundFile, Frontmatter)> = match limit {
        Some(limit) if listed.len() > limit => {
            let stamps = map_parallel(&listed, || (), |(), f| path_stamp(&f.path));
            let mut found: Vec<FoundFile> = listed
                .into_iter()
                .zip(stamps)
                .map(|(f, (mtime, len))| FoundFile {
                    rel: f.rel,
                    path: f.path,
                    mtime,
                    len,
                })
                .collect();
            found.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel)));
            found.truncate(limit);
            let parsed = map_parallel(&found, Vec::new, |buf, f| read_header(&f.path, buf).1);
            found.into_iter().zip(parsed).collect()
        }
        _ => map_parallel(&listed, Vec::new, |buf, f| {
            let ((mtime, len), frontmatter) = read_header(&f.path, buf);
            let found = FoundFile {
                rel: f.rel.clone(),
                path: f.path.clone(),
                mtime,
                len,
            };
            (found, frontmatter)
        }),
    };
    scanned.sort_by(|a, b| {
        b.0.mtime
            .cmp(&a.0.mtime)
            .then_with(|| a.0.rel.cmp(&b.0.rel))
    });
    Ok(scanned)
}

/// A file's mtime and size (the epoch and 0 when it cannot be read).
fn path_stamp(path: &Path) -> (SystemTime, u64) {
    fs::metadata(path).map_or((SystemTime::UNIX_EPOCH, 0), |m| stamp(&m))
}

fn stamp(metadata: &fs::Metadata) -> (SystemTime, u64) {
    (
        metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        metadata.len(),
    )
}

/// `items.map(work)` on up to 4 threads when there are enough items to pay for them; each thread
/// gets its own scratch state from `init` (a read buffer, …). Results keep the items' order.
pub(crate) fn map_parallel<T, S, R>(
    items: &[T],
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    map_parallel_if(items.len() >= PARALLEL_THRESHOLD, items, init, work)
}

/// [`map_parallel`] for a few large items (one per band, …): on threads when `worth_it`.
pub(crate) fn map_parallel_if<T, S, R>(
    worth_it: bool,
    items: &[T],
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let threads = std::thread::available_parallelism()
        .map(|n| n.get().min(4))
        .unwrap_or(1);
    if threads < 2 || !worth_it || items.len() < 2 {
        let mut state = init();
        return items.iter().map(|item| work(&mut state, item)).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let (init, work) = (&init, &work);
                scope.spawn(move || {
                    let mut state = init();
                    part.iter()
                        .map(|item| work(&mut state, item))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            match handle.join() {
                Ok(part) => out.extend(part),
                // A panic is a bug, not a file problem: let it surface as the caller's panic.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

fn header(found: FoundFile, fm: Frontmatter, now: SystemTime) -> MemoryHeader {
    let days = memory_age_days(found.mtime, now);
    MemoryHeader {
        file: found.rel,
        name: fm.name,
        description: fm.description,
        memory_type: fm.memory_type,
        mtime: found.mtime,
        age: age_label(days),
        days,
    }
}

/// Every memory file under `root` with its mtime, unsorted.
pub(crate) fn list_files(root: &Path) -> Result<Vec<FoundFile>> {
    walk(root, |rel, path, entry, target| {
        let metadata = match target {
            Some(metadata) => metadata,
            None => entry.metadata().ok()?,
        };
        let (mtime, len) = stamp(&metadata);
        Some(FoundFile {
            rel,
            path,
            mtime,
            len,
        })
    })
}

/// A memory file's place: relative to the memory dir (`/`-separated) and on disk.
#[derive(Debug, Clone)]
pub(crate) struct ListedFile {
    pub rel: String,
    pub path: PathBuf,
}

/// Every memory file under `root`, unsorted, without their metadata: the same files as
/// [`list_files`] without a `stat` each, for callers that read every file anyway.
pub(crate) fn list_paths(root: &Path) -> Result<Vec<ListedFile>> {
    walk(root, |rel, path, _, _| Some(ListedFile { rel, path }))
}

/// Walks `root` for memory files — `*.md` but `MEMORY.md`, a symlink only when it resolves to a
/// file inside the root — and keeps what `keep(rel, path, entry, target)` returns for each.
/// `target` is the metadata of a symlink's target (which the walk needs for its checks), `None`
/// for a regular file, whose metadata is left to `keep` to read if it needs it.
fn walk<T>(
    root: &Path,
    mut keep: impl FnMut(String, PathBuf, &fs::DirEntry, Option<fs::Metadata>) -> Option<T>,
) -> Result<Vec<T>> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).at(root),
    };
    let real_root = crate::platform::fs::canonicalize(root).at(root)?;
    let mut out = Vec::new();
    let mut pending = vec![(String::new(), entries)];
    while let Some((prefix, entries)) = pending.pop() {
        for entry in entries.flatten() {
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let rel = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if file_type.is_dir() {
                if let Ok(sub) = fs::read_dir(entry.path()) {
                    pending.push((rel, sub));
                }
                continue;
            }
            if !name.ends_with(".md") || name == "MEMORY.md" {
                continue;
            }
            let path = entry.path();
            let target = if file_type.is_symlink() {
                match fs::metadata(&path) {
                    Ok(m) if m.is_file() && resolves_inside(&path, &real_root) => Some(m),
                    _ => continue,
                }
            } else if file_type.is_file() {
                None
            } else {
                continue;
            };
            out.extend(keep(rel, path, &entry, target));
        }
    }
    Ok(out)
}

fn resolves_inside(path: &Path, real_root: &Path) -> bool {
    crate::platform::fs::canonicalize(path).is_ok_and(|real| real.starts_with(real_root))
}

/// Opens `path` once: its mtime (from the open file) and the frontmatter of its head. An
/// unreadable file has empty frontmatter (and the mtime its path reports).
fn read_header(path: &Path, buf: &mut Vec<u8>) -> ((SystemTime, u64), Frontmatter) {
    buf.clear();
    let Ok(mut file) = fs::File::open(path) else {
        return (path_stamp(path), Frontmatter::default());
    };
    let stamp = file
        .metadata()
        .map_or((SystemTime::UNIX_EPOCH, 0), |m| stamp(&m));
    if read_head(&mut file, buf).is_err() {
        return (stamp, Frontmatter::default());
    }
    // Only the head is validated as UTF-8: the body is never looked at.
    let head = String::from_utf8_lossy(buf);
    (stamp, frontmatter::parse_header(&head, SCAN_LINE_LIMIT))
}

/// Replaces `buf`'s content with the whole file, reusing its allocation, and asking the file for
/// nothing but its bytes (no `stat` for a size hint: memory files are small).
pub(crate) fn read_file(path: &Path, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    let mut file = fs::File::open(path)?;
    loop {
        if buf.capacity() - buf.len() < READ_CHUNK {
            buf.reserve(READ_CHUNK);
        }
        // Zero only what this read may fill (growing with what was read, so a large file takes
        // few reads), not all of a buffer some earlier large file grew.
        let start = buf.len();
        buf.resize(buf.capacity().min(start + start.max(2 * READ_CHUNK)), 0);
        match file.read(&mut buf[start..]) {
            Ok(0) => {
                buf.truncate(start);
                return Ok(());
            }
            Ok(n) => buf.truncate(start + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => buf.truncate(start),
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        }
    }
}

/// Fills `buf` with the head of `file` the frontmatter parser needs, and no more: up to the
/// closing fence (or only the first line, when it opens no frontmatter), at most
/// [`SCAN_LINE_LIMIT`] lines and [`HEAD_BYTE_LIMIT`] bytes; a short read is the end of the file.
/// A small memory file costs one `read`.
fn read_head(file: &mut fs::File, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut examined = 0;
    let mut lines = 0;
    while buf.len() < HEAD_BYTE_LIMIT {
        let start = buf.len();
        let wanted = READ_CHUNK.min(HEAD_BYTE_LIMIT - start);
        buf.resize(start + wanted, 0);
        let n = match file.read(&mut buf[start..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                buf.truncate(start);
                continue;
            }
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        };
        buf.truncate(start + n);
        while let Some(at) = memchr::memchr(b'\n', &buf[examined..]) {
            let end = examined + at + 1;
            let line = &buf[examined..end];
            lines += 1;
            let done = if lines == 1 {
                !is_fence(line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line))
            } else {
                is_fence(line) || lines == SCAN_LINE_LIMIT
            };
            examined = end;
            if done {
                buf.truncate(end);
                return Ok(());
            }
        }
        if n < wanted {
            break;
        }
    }
    Ok(())
}

/// A `---` line (trailing ASCII whitespace allowed), as the frontmatter parser reads fences.
fn is_fence(line: &[u8]) -> bool {
    line.strip_prefix(b"---")
        .is_some_and(|rest| rest.iter().all(u8::is_ascii_whitespace))
}

/// One line of the recall manifest (`FORMATS.md` §4):
/// `- [{type}] {relpath} ({ISO mtime}): {description}`, omitting the parts that are missing.
pub fn manifest_line(header: &MemoryHeader) -> String {
    let tag = header
        .memory_type
        .map(|t| format!("[{t}] "))
        .unwrap_or_default();
    let time = iso_time(header.mtime);
    match header.description.as_deref() {
        Some(description) if !description.is_empty() => {
            format!("- {tag}{} ({time}): {description}", header.file)
        }
        _ => format!("- {tag}{} ({time})", header.file),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixtures::real_memory;
    use std::time::Duration;

    fn write(root: &Path, rel: &str, text: &str, mtime_secs: u64) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, text).expect("write");
        let file = fs::File::options().write(true).open(&path).expect("open");
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(mtime_secs))
            .expect("set mtime");
    }

    fn memory(name: &str) -> String {
        format!("---\nname: {name}\ndescription: about {name}\ntype: project\n---\n\nbody\n")
    }

    const NOW: u64 = 1_800_000_000;

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(NOW)
    }

    #[test]
    fn read_file_reads_every_byte_into_a_reused_buffer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let large: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(dir.path().join("large.md"), &large).expect("write");
        fs::write(dir.path().join("small.md"), "small\n").expect("write");
        let mut buf = Vec::new();
        read_file(&dir.path().join("large.md"), &mut buf).expect("read");
        assert!(buf == large, "{} of {} bytes", buf.len(), large.len());
        read_file(&dir.path().join("small.md"), &mut buf).expect("read");
        assert_eq!(buf, b"small\n", "nothing left of the larger file");
        assert!(read_file(&dir.path().join("missing.md"), &mut buf).is_err());
    }

    #[test]
    fn finds_md_files_at_any_depth_except_memory_md() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "a.md", &memory("a"), NOW);
        write(dir.path(), "MEMORY.md", "- [a](a.md)\n", NOW);
        write(dir.path(), "team/MEMORY.md", "- x\n", NOW);
        write(dir.path(), "team/b.md", &memory("b"), NOW);
        write(dir.path(), "deep/er/still/c.md", &memory("c"), NOW);
        write(dir.path(), ".hidden/d.md", &memory("d"), NOW);
        write(dir.path(), "notes.txt", "not markdown", NOW);
        write(dir.path(), "e.MD", "upper-case extension is not .md", NOW);
        let mut files: Vec<_> = scan_dir(dir.path(), None, now())
            .expect("scan")
            .into_iter()
            .map(|h| h.file)
            .collect();
        files.sort();
        assert_eq!(
            files,
            [".hidden/d.md", "a.md", "deep/er/still/c.md", "team/b.md"]
        );
    }

    #[test]
    fn newest_first_then_capped() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..10u64 {
            write(
                dir.path(),
                &format!("m{i}.md"),
                &memory(&format!("m{i}")),
                NOW - 1000 + i * 10,
            );
        }
        let all = scan_dir(dir.path(), None, now()).expect("scan");
        let order: Vec<_> = all.iter().map(|h| h.file.as_str()).collect();
        assert_eq!(order[0], "m9.md");
        assert_eq!(order[9], "m0.md");
        let capped = scan_dir(dir.path(), Some(3), now()).expect("scan");
        let order: Vec<_> = capped.iter().map(|h| h.file.as_str()).collect();
        assert_eq!(
            order,
            ["m9.md", "m8.md", "m7.md"],
            "the cap keeps the newest"
        );
    }

    #[test]
    fn cap_applies_to_more_files_than_the_parallel_threshold() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..(PARALLEL_THRESHOLD as u64 + 50) {
            write(
                dir.path(),
                &format!("m{i:04}.md"),
                &memory(&format!("m{i}")),
                NOW - 100_000 + i,
            );
        }
        let all = scan_dir(dir.path(), None, now()).expect("scan");
        assert_eq!(all.len(), PARALLEL_THRESHOLD + 50);
        assert!(all.windows(2).all(|w| w[0].mtime >= w[1].mtime));
        assert!(
            all.iter().all(|h| h.name.is_some()),
            "every header was parsed"
        );
        assert_eq!(all[0].name.as_deref(), Some("m305"));
        let capped = scan_dir(dir.path(), Some(CLAUDE_SCAN_CAP), now()).expect("scan");
        assert_eq!(capped.len(), 200);
        assert_eq!(capped[199].file, all[199].file);
    }

    #[test]
    fn frontmatter_must_close_within_thirty_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let padding: String = (0..30).map(|i| format!("k{i}: v\n")).collect();
        write(
            dir.path(),
            "late.md",
            &format!("---\nname: late\ndescription: too late\n{padding}---\nbody\n"),
            NOW,
        );
        write(dir.path(), "ok.md", &memory("ok"), NOW);
        let headers = scan_dir(dir.path(), None, now()).expect("scan");
        let late = headers
            .iter()
            .find(|h| h.file == "late.md")
            .expect("still listed");
        assert_eq!(
            late.description, None,
            "closing fence after line 30 ⇒ no metadata"
        );
        let ok = headers.iter().find(|h| h.file == "ok.md").expect("listed");
        assert_eq!(ok.description.as_deref(), Some("about ok"));
    }

    #[test]
    fn reads_only_a_bounded_head_of_huge_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let huge = format!("{}{}", memory("big"), "x".repeat(5_000_000));
        write(dir.path(), "big.md", &huge, NOW);
        let mut buf = Vec::new();
        let mut file = fs::File::open(dir.path().join("big.md")).expect("open");
        read_head(&mut file, &mut buf).expect("read");
        assert!(buf.len() <= HEAD_BYTE_LIMIT, "read {} bytes", buf.len());
        assert_eq!(
            buf, b"---\nname: big\ndescription: about big\ntype: project\n---\n",
            "up to the closing fence"
        );
        // No frontmatter: the first line is all the parser needs.
        write(
            dir.path(),
            "plain.md",
            &format!("plain\n{}", "y".repeat(100_000)),
            NOW,
        );
        let mut file = fs::File::open(dir.path().join("plain.md")).expect("open");
        buf.clear();
        read_head(&mut file, &mut buf).expect("read");
        assert_eq!(buf, b"plain\n");
        // Unclosed: the line limit.
        let unclosed: String = std::iter::once("---\n".to_owned())
            .chain((0..100).map(|i| format!("k{i}: v\n")))
            .collect();
        write(dir.path(), "open.md", &unclosed, NOW);
        let mut file = fs::File::open(dir.path().join("open.md")).expect("open");
        buf.clear();
        read_head(&mut file, &mut buf).expect("read");
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), SCAN_LINE_LIMIT);
        // A fence with trailing spaces and CRLF closes too; a BOM before the opening one is fine.
        write(
            dir.path(),
            "crlf.md",
            "\u{feff}---\r\nname: c\r\n---  \r\nbody\r\n",
            NOW,
        );
        let mut file = fs::File::open(dir.path().join("crlf.md")).expect("open");
        buf.clear();
        read_head(&mut file, &mut buf).expect("read");
        assert_eq!(buf, "\u{feff}---\r\nname: c\r\n---  \r\n".as_bytes());
        let headers = scan_dir(dir.path(), None, now()).expect("scan");
        assert_eq!(headers[0].name.as_deref(), Some("big"));
    }

    #[test]
    fn malformed_files_are_listed_without_metadata() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "bad.md", "---\nname: [oops\n  : {\n---\n", NOW);
        write(dir.path(), "plain.md", "no frontmatter at all\n", NOW);
        let headers = scan_dir(dir.path(), None, now()).expect("scan");
        assert_eq!(headers.len(), 2);
        assert!(headers
            .iter()
            .all(|h| h.name.is_none() && h.memory_type.is_none()));
    }

    #[test]
    fn ages_come_from_now() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "old.md", &memory("old"), NOW - 3 * 86_400 - 5);
        let h = &scan_dir(dir.path(), None, now()).expect("scan")[0];
        assert_eq!(h.days, 3);
        assert_eq!(h.age, "3 days ago");
    }

    #[test]
    fn missing_dir_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let headers = scan_dir(&dir.path().join("nope"), Some(200), now()).expect("scan");
        assert!(headers.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_do_not_loop_or_escape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        write(outside.path(), "secret.md", &memory("secret"), NOW);
        write(dir.path(), "sub/a.md", &memory("a"), NOW);
        write(dir.path(), "target.md", &memory("target"), NOW);
        std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).expect("symlink");
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("out.md"))
            .expect("symlink");
        std::os::unix::fs::symlink(dir.path().join("target.md"), dir.path().join("alias.md"))
            .expect("symlink");
        let mut files: Vec<_> = scan_dir(dir.path(), None, now())
            .expect("scan")
            .into_iter()
            .map(|h| h.file)
            .collect();
        files.sort();
        assert_eq!(files, ["alias.md", "sub/a.md", "target.md"]);
    }

    #[test]
    fn scans_the_real_fixtures() {
        let stockerly = scan_dir(&real_memory("stockerly"), None, now()).expect("scan");
        assert_eq!(stockerly.len(), 7);
        assert!(stockerly
            .iter()
            .all(|h| h.description.is_some() && h.memory_type.is_some()));
        let v330 = scan_dir(&real_memory("claude-code-2.1.330"), None, now()).expect("scan");
        let tabs = v330
            .iter()
            .find(|h| h.file == "prefers-tabs-default.md")
            .expect("listed");
        assert_eq!(
            tabs.memory_type,
            Some(MemoryType::Feedback),
            "nested metadata.type"
        );
        assert_eq!(tabs.name.as_deref(), Some("prefers-tabs"));
    }

    #[test]
    fn manifest_lines_omit_missing_parts() {
        let mut h = MemoryHeader {
            file: "team/deploy.md".into(),
            name: None,
            description: Some("No deploys on Fridays".into()),
            memory_type: Some(MemoryType::Project),
            mtime: SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_336_732_863),
            age: "today".into(),
            days: 0,
        };
        assert_eq!(
            manifest_line(&h),
            "- [project] team/deploy.md (2026-11-22T08:38:52.863Z): No deploys on Fridays"
        );
        h.memory_type = None;
        assert_eq!(
            manifest_line(&h),
            "- team/deploy.md (2026-11-22T08:38:52.863Z): No deploys on Fridays"
        );
        h.description = None;
        assert_eq!(
            manifest_line(&h),
            "- team/deploy.md (2026-11-22T08:38:52.863Z)"
        );
    }

    #[test]
    fn header_serializes_camel_case_with_iso_mtime() {
        let h = MemoryHeader {
            file: "a.md".into(),
            name: Some("a".into()),
            description: None,
            memory_type: Some(MemoryType::User),
            mtime: SystemTime::UNIX_EPOCH,
            age: "today".into(),
            days: 0,
        };
        let json = serde_json::to_value(&h).expect("json");
        assert_eq!(json["type"], "user");
        assert_eq!(json["mtime"], "1970-01-01T00:00:00.000Z");
    }
}
