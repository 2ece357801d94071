//! Engram's own log of warnings and errors, for the programs whose standard error nobody reads:
//! the desktop app (a Windows release build has no console at all: `windows_subsystem`) and the
//! Stop hook's detached worker (its stdio is closed). [`report`] prints the line to standard
//! error as before and appends it, timestamped, to `<Engram data dir>/logs/<program>.log`.
//!
//! Each log is capped at [`LOG_CAP`] bytes with one rotation: an append that finds the log at or
//! over the cap first renames it to `<program>.log.1` (replacing the previous one), so at most
//! twice the cap is kept. Each line is one append-mode write, so lines from processes writing at
//! once do not interleave; two processes rotating at the same moment can drop the older half.
//! Writing the log never fails the caller: a log that cannot be written is skipped (the line
//! still reached standard error).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::disk;
use crate::engine::Engine;
use crate::platform;

/// The size at which a log is rotated.
pub const LOG_CAP: u64 = 1 << 20;

/// The log file `program` writes in `engram_home`.
pub fn log_path(engram_home: &Path, program: &str) -> PathBuf {
    engram_home.join("logs").join(format!("{program}.log"))
}

/// The one rotated copy of `log`.
pub fn rotated_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Prints `program: message` to standard error and appends it with the time to the program's
/// log in the engine's data dir (see the module docs). Never fails.
pub fn report(engine: &Engine, program: &str, message: &str) {
    eprintln!("{program}: {message}");
    append_report(engine, program, message);
}

/// [`report`] without the standard-error line, for a caller that prints the message itself.
pub fn append_report(engine: &Engine, program: &str, message: &str) {
    let stamp = chrono::DateTime::<chrono::Local>::from(engine.clock().now())
        .format("%Y-%m-%dT%H:%M:%S%:z");
    // One line per report: a message's own line breaks are kept visible but inline.
    let line = format!("{stamp} {}\n", message.replace('\n', " | "));
    let _ = append_capped(&log_path(&engine.engram_home(), program), &line, LOG_CAP);
}

/// Appends `line` to `log`, first rotating it to [`rotated_path`] when it has reached `cap`
/// bytes. Creates the log and its folder (private under Engram's data dir).
pub fn append_capped(log: &Path, line: &str, cap: u64) -> io::Result<()> {
    if let Some(dir) = log.parent() {
        disk::create_dir_all(dir)?;
    }
    match std::fs::metadata(log) {
        Ok(meta) if meta.len() >= cap => platform::fs::rename(log, &rotated_path(log))?,
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut file =
        disk::with_mode_for(OpenOptions::new().create(true).append(true), log).open(log)?;
    file.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;

    #[test]
    fn the_log_rotates_once_at_the_cap_and_keeps_at_most_two_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let log = dir.path().join("logs/engram-app.log");
        let old = rotated_path(&log);
        assert_eq!(old, dir.path().join("logs/engram-app.log.1"));
        let line = |i: usize| format!("line {i:04}\n"); // 10 bytes
        for i in 0..5 {
            append_capped(&log, &line(i), 40).expect("append");
        }
        // 40 bytes were reached after the 4th line: the 5th started a new log.
        assert_eq!(
            std::fs::read_to_string(&old).expect("rotated"),
            (0..4).map(line).collect::<String>()
        );
        assert_eq!(std::fs::read_to_string(&log).expect("log"), line(4));
        for i in 5..9 {
            append_capped(&log, &line(i), 40).expect("append");
        }
        // The second rotation replaced the first copy: never more than two files.
        assert_eq!(
            std::fs::read_to_string(&old).expect("rotated"),
            (4..8).map(line).collect::<String>()
        );
        assert_eq!(std::fs::read_to_string(&log).expect("log"), line(8));
        let names: Vec<_> = std::fs::read_dir(dir.path().join("logs"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_report_lands_in_the_programs_log_under_the_data_dir() {
        let dir = tempfile::tempdir().expect("tmp");
        let engine = Engine::builder(Environment::empty())
            .engram_home(dir.path().join("engram"))
            .build();
        report(&engine, "engram-app", "watch: cannot watch /x\nsecond line");
        report(&engine, "engram-app", "tray: no icon");
        let text = std::fs::read_to_string(dir.path().join("engram/logs/engram-app.log"))
            .expect("the log");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with(" watch: cannot watch /x | second line"),
            "{text}"
        );
        assert!(lines[1].ends_with(" tray: no icon"), "{text}");
        // An ISO date and time first.
        assert!(
            chrono::DateTime::parse_from_str(
                lines[1].split(' ').next().expect("stamp"),
                "%Y-%m-%dT%H:%M:%S%:z"
            )
            .is_ok(),
            "{text}"
        );
    }

    #[test]
    fn a_log_that_cannot_be_written_does_not_fail_the_report() {
        let dir = tempfile::tempdir().expect("tmp");
        // The data dir is a file: no logs/ can be made under it.
        let home = dir.path().join("engram");
        std::fs::write(&home, "not a dir").expect("file");
        let engine = Engine::builder(Environment::empty())
            .engram_home(&home)
            .build();
        report(&engine, "engram", "still printed");
        assert!(append_capped(&log_path(&home, "engram"), "x\n", LOG_CAP).is_err());
    }
}
