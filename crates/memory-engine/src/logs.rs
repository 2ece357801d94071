//! Daily logs (`FORMATS.md` §1): `logs/YYYY/MM/YYYY-MM-DD.md` under the memory dir, dated in local
//! time. A new log starts with a `# YYYY-MM-DD` heading; each entry is a `- HH:MM text` bullet
//! (continuation lines indented under it).
//!
//! Appends must not lose lines written at the same moment by another process (Claude Code writes
//! these logs too), so nothing is read and rewritten: the heading is created with a hard link from
//! a complete temp file (which fails if the log already exists), and each entry is one `O_APPEND`
//! write.

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use chrono::{DateTime, Local};

use crate::error::{Error, IoResultExt, Result};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The log file for the local date of `now`, under `root`.
pub fn log_path(root: &Path, now: SystemTime) -> PathBuf {
    let local = DateTime::<Local>::from(now);
    root.join("logs")
        .join(local.format("%Y").to_string())
        .join(local.format("%m").to_string())
        .join(format!("{}.md", local.format("%Y-%m-%d")))
}

/// Appends `- HH:MM text` to today's log, creating it (with its heading) when needed.
pub fn append_log(root: &Path, text: &str, now: SystemTime) -> Result<PathBuf> {
    append_log_noting(root, text, now, |_, _| {})
}

/// [`append_log`], telling `note_own_write` what the log will hold right before each write (the
/// heading, then the whole log with the entry), so a file watcher can recognise Engram's own
/// writes. Returns the log's path.
pub fn append_log_noting(
    root: &Path,
    text: &str,
    now: SystemTime,
    mut note_own_write: impl FnMut(&Path, &[u8]),
) -> Result<PathBuf> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::InvalidInput(
            "nothing to log: the text is empty".to_string(),
        ));
    }
    let local = DateTime::<Local>::from(now);
    let path = log_path(root, now);
    let dir = path
        .parent()
        .ok_or_else(|| Error::InvalidInput(format!("{}: no parent", path.display())))?;
    crate::disk::create_dir_all(dir).at(dir)?;
    let heading = format!("# {}\n\n", local.format("%Y-%m-%d"));
    if !path.exists() {
        note_own_write(&path, heading.as_bytes());
    }
    create_with_heading(&path, &heading)?;

    let mut entry = format!("- {} ", local.format("%H:%M"));
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            entry.push_str("\n  ");
        }
        entry.push_str(line.trim_end());
    }
    entry.push('\n');

    let mut file = fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&path)
        .at(&path)?;
    // A log edited by hand may lack its final newline; the entry must still start a line.
    if !ends_with_newline(&mut file).at(&path)? {
        entry.insert(0, '\n');
    }
    let mut after = Vec::new();
    file.seek(SeekFrom::Start(0)).at(&path)?;
    file.read_to_end(&mut after).at(&path)?;
    after.extend_from_slice(entry.as_bytes());
    note_own_write(&path, &after);
    file.write_all(entry.as_bytes()).at(&path)?;
    Ok(path)
}

fn ends_with_newline(file: &mut fs::File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Creates `path` holding `heading` unless it exists; never truncates an existing log.
fn create_with_heading(path: &Path, heading: &str) -> Result<()> {
    if path.exists() {
        return Ok(());
    }
    // Not `.md`: a scan running meanwhile must not see it as a memory.
    let temp = path.with_extension(format!(
        "engram-{}-{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    fs::write(&temp, heading).at(&temp)?;
    let linked = fs::hard_link(&temp, path);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn local(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> SystemTime {
        Local
            .with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .expect("unambiguous local time")
            .into()
    }

    #[test]
    fn appends_bullets_under_a_dated_heading() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = append_log(tmp.path(), "started the refactor", local(2026, 3, 7, 9, 5))
            .expect("append");
        assert_eq!(path, tmp.path().join("logs/2026/03/2026-03-07.md"));
        append_log(
            tmp.path(),
            "  tests green\nmerged  ",
            local(2026, 3, 7, 17, 42),
        )
        .expect("append");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            "# 2026-03-07\n\n- 09:05 started the refactor\n- 17:42 tests green\n  merged\n"
        );
    }

    #[test]
    fn uses_the_local_date_near_midnight() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = append_log(tmp.path(), "late", local(2026, 12, 31, 23, 59)).expect("append");
        assert!(
            path.ends_with("logs/2026/12/2026-12-31.md"),
            "{}",
            path.display()
        );
    }

    #[test]
    fn keeps_content_written_by_others_and_fixes_a_missing_newline() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let at = local(2026, 1, 2, 8, 0);
        let path = log_path(tmp.path(), at);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, "# 2026-01-02\n\n- 07:00 from claude").expect("seed");
        append_log(tmp.path(), "from engram", at).expect("append");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            "# 2026-01-02\n\n- 07:00 from claude\n- 08:00 from engram\n"
        );
    }

    #[test]
    fn concurrent_appends_lose_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let at = local(2026, 5, 5, 10, 0);
        std::thread::scope(|s| {
            for t in 0..4 {
                let root = tmp.path();
                s.spawn(move || {
                    for i in 0..25 {
                        append_log(root, &format!("t{t} #{i}"), at).expect("append");
                    }
                });
            }
        });
        let text = fs::read_to_string(log_path(tmp.path(), at)).expect("read");
        assert_eq!(text.matches("# 2026-05-05").count(), 1, "one heading");
        assert_eq!(
            text.lines().filter(|l| l.starts_with("- 10:00 t")).count(),
            100
        );
    }

    #[test]
    fn empty_text_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let err = append_log(tmp.path(), " \n ", SystemTime::now()).expect_err("refused");
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
    }
}
