//! Every operating-system assumption of Engram, in one room. The rest of the engine, the CLI and
//! the app call these small interfaces and never `std::os::unix`, `rustix`, `libc`, Windows APIs or
//! per-OS `cfg` themselves (the `boundary` test below fails when they do).
//! `docs/platforms.md` lists every assumption with its status; only Linux is built and tested
//! here: the macOS and Windows arms compile on those targets only and are unverified.
//!
//! | interface | Linux | macOS | Windows |
//! |---|---|---|---|
//! | [`process::alive`] | `kill(pid, 0)` (EPERM = alive) | same | `OpenProcess` + `GetExitCodeProcess` (`STILL_ACTIVE`) |
//! | [`process::terminate`] | SIGTERM | same | `TerminateProcess` (no graceful signal exists) |
//! | [`process::detach`] | own process group (`process_group(0)`) | same | `DETACHED_PROCESS \| CREATE_NEW_PROCESS_GROUP \| CREATE_NO_WINDOW` |
//! | [`fs::create_mode`], [`fs::dir_create_mode`], [`fs::set_mode`], [`fs::ours_and_open_to_others`] | Unix modes (0600 / 0700), euid | same | nothing: the profile's ACL keeps files private (unverified) |
//! | [`fs::exchange`] | `renameat2(RENAME_EXCHANGE)`, `RENAME_NOREPLACE` | `renameatx_np(RENAME_SWAP)`, `RENAME_EXCL` | `Unsupported`: the caller reads, renames, re-checks its merge |
//! | [`fs::read_at`] | `pread` (`read_exact_at`) | same | `seek_read` in a loop |
//! | [`fs::canonicalize`] | `dunce` = `std::fs::canonicalize` | same | `dunce`: no `\\?\` prefix |
//! | [`fs::rename`] | `std::fs::rename` | same | retried ~1 s on os errors 5 / 32 |
//! | [`fs::open_nonblocking`], [`fs::special_kind`] | `O_NONBLOCK`/`O_NOFOLLOW`, FIFO/socket/device | same | nothing (no FIFOs in the file system) |
//! | [`fs::file_identity`] | `(dev, ino)` | same | `(0, 0)`: a replaced file is not detected |
//! | [`fs::sync_filesystem`], [`fs::sync_files`] | `syncfs` | plain `fsync` per file, then one `F_FULLFSYNC` | per-file flush |
//! | [`fs::is_symlink_loop`] | `ELOOP` | same | os error 1921 |
//! | [`process::no_console`] | nothing | nothing | `CREATE_NO_WINDOW` |
//! | [`git::find_git`] | `PATH` | `PATH`, Homebrew, `/usr/bin/git` with the Command Line Tools only | `PATH`, `Program Files\Git\cmd\git.exe`; children get `-c core.longpaths=true` |
//! | [`registry::read_policy_settings`] | none: `Ok(None)` | none | `RegGetValueW` on `SOFTWARE\Policies\ClaudeCode` `Settings` (HKLM, HKCU) |
//! | [`dirs::home_dir`] | `HOME`, else `USERPROFILE` | same | `USERPROFILE` first (as Node's `os.homedir`) |
//! | [`names::check_portable_key`] | Windows' name rules, on purpose | same | the OS's own rules |
//! | [`local_socket`] (the prompt hook's) | Unix socket in a 0700 dir, 0600, `SO_PEERCRED` | same; a path over 103 bytes moves under `$TMPDIR`; peer from `LOCAL_PEERCRED` | named pipe named for the user and data dir; the peer not checked yet, so never trusted |
//! | [`case::new_key_on_disk`], [`case::folds_case`] | case twins refused (ext4 is case-sensitive), redirected on an ext4 `casefold` dir | APFS folds by default: redirected to the existing spelling | NTFS folds: same |
//! | [`dirs::engram_data_dir`] | `$XDG_DATA_HOME/engram`, else `~/.local/share/engram` | existing `~/.local/share/engram`, else `~/Library/Application Support/engram` | existing `~/.local/share/engram`, else `%LOCALAPPDATA%\engram` (`dirs`) |
//!
//! Other operating systems get the conservative answer: a PID counts as alive (a lock is never
//! stolen from a holder we cannot see), terminating is refused with an error that says so.
//!
//! Not here yet (see `docs/platforms.md`): Unix signals in the CLI's `dream` and the app
//! (`cfg(unix)` with a Ctrl-C fallback), and the tests' own Unix calls (which must sit under a
//! Unix gate: checked below).

pub mod case;
pub mod dirs;
pub mod fs;
pub mod git;
pub mod local_socket;
pub mod names;
pub mod process;
pub mod registry;

/// The OS families whose conventions differ in strings Engram writes or reads (a hook's command
/// line, a path's drive letter, where git is installed). Functions that take one are plain
/// functions, so Linux tests cover every form; the running program passes [`Os::CURRENT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and every other Unix but macOS.
    Unix,
    /// macOS: a Unix wherever paths and shells are concerned; its own install places.
    Mac,
    Windows,
}

impl Os {
    /// The OS this program was built for.
    pub const CURRENT: Os = if cfg!(target_os = "macos") {
        Os::Mac
    } else if cfg!(windows) {
        Os::Windows
    } else {
        Os::Unix
    };

    /// Whether reading the OS keyring from a process nobody started by hand (a hook run by
    /// Claude Code) can put a dialog in front of the person. macOS's Keychain asks whether
    /// `engram` may read an item the app stored (and again after each unsigned build), which
    /// would also spend the hook's whole budget; Windows' Credential Manager and the Secret
    /// Service (an unlocked collection) answer without asking.
    pub fn keyring_may_prompt_unattended(self) -> bool {
        matches!(self, Os::Mac)
    }
}

/// The architecture rule of this module, checked on the source tree: outside `platform/`, no
/// engine or CLI source names a Unix-only API. Exempt: test code (`tests.rs` files, `testing/`,
/// and each file's trailing `#[cfg(test)] mod tests`), which builds its fixtures (symlinks,
/// modes, FIFOs, other users) with the OS's own calls and is gated `cfg(unix)` where it does.
#[cfg(test)]
mod boundary {
    use std::path::{Path, PathBuf};

    /// What only a Unix build has (or what a portable build must go through here for).
    const UNIX_ONLY: &[&str] = &[
        "std::os::unix",
        "rustix::",
        "libc::",
        "process_group",
        "read_exact_at",
        "from_mode",
    ];

    /// Files still outside the rule, each with its audit row (`docs/platforms.md`). The test also
    /// fails when one of these no longer needs its place here.
    const NOT_YET: &[(&str, &str)] = &[];

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read source dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The file's code before its trailing test module.
    fn non_test_code(text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let end = (0..lines.len())
            .find(|&i| {
                let line = lines[i].trim_start();
                (line.starts_with("#[cfg(test)]") || line.starts_with("#[cfg(all(test"))
                    && lines[i + 1..]
                        .iter()
                        .take(2)
                        .any(|next| next.trim_start().starts_with("mod tests"))
            })
            .unwrap_or(lines.len());
        lines[..end].join("\n")
    }

    #[test]
    fn no_unix_only_api_outside_platform() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for krate in ["memory-engine", "engram-cli"] {
            sources(&crates.join(krate).join("src"), &mut files);
        }
        assert!(files.len() > 50, "the source tree was not found");
        let mut offences = Vec::new();
        let mut still_needed = Vec::new();
        for file in &files {
            let relative = file
                .strip_prefix(&crates)
                .expect("under crates/")
                .to_string_lossy()
                .replace('\\', "/");
            let exempt = relative.starts_with("memory-engine/src/platform/")
                || relative.starts_with("memory-engine/src/testing")
                || relative.ends_with("/tests.rs");
            if exempt {
                continue;
            }
            let code = non_test_code(&std::fs::read_to_string(file).expect("read"));
            let found: Vec<&str> = UNIX_ONLY
                .iter()
                .copied()
                .filter(|api| code.contains(api))
                .collect();
            if found.is_empty() {
                continue;
            }
            if NOT_YET.iter().any(|(path, _)| *path == relative) {
                still_needed.push(relative);
            } else {
                offences.push(format!("{relative}: {}", found.join(", ")));
            }
        }
        assert!(
            offences.is_empty(),
            "Unix-only APIs outside crates/memory-engine/src/platform/ (put them behind a \
             platform interface):\n{}",
            offences.join("\n")
        );
        for (path, row) in NOT_YET {
            assert!(
                still_needed.iter().any(|p| p == path),
                "{path} ({row}) no longer uses a Unix-only API: remove it from NOT_YET"
            );
        }
    }

    /// Whether an attribute line gates what follows to Unix or Linux (`cfg(unix)`,
    /// `cfg(all(test, unix))`, `cfg(target_os = "linux")`, …).
    fn gates_to_unix(line: &str) -> bool {
        let line = line.trim_start();
        (line.starts_with("#[cfg") || line.starts_with("#![cfg"))
            && !line.contains("not(")
            && (line.contains("unix") || line.contains("target_os = \"linux\""))
    }

    /// The numbers (from 0) of the lines of `text` that no Unix gate covers: not in a file gated
    /// with `#![cfg(unix)]`, and under no item or block whose attributes gate it. Rustfmt's
    /// indentation tells the enclosing items: each earlier, less indented line ending in `{`.
    fn ungated_lines(text: &str) -> Vec<usize> {
        let lines: Vec<&str> = text.lines().collect();
        if lines
            .iter()
            .any(|l| l.starts_with("#![cfg") && gates_to_unix(l))
        {
            return Vec::new();
        }
        let indent = |l: &str| l.len() - l.trim_start().len();
        let gated_opener = |at: usize| {
            lines[..=at]
                .iter()
                .rev()
                .skip(1)
                .take_while(|l| {
                    let l = l.trim_start();
                    l.starts_with("#[") || l.starts_with("//")
                })
                .any(|l| gates_to_unix(l))
                || gates_to_unix(lines[at])
        };
        (0..lines.len())
            .filter(|&i| {
                let mut level = indent(lines[i]);
                let mut at = i;
                // The line itself may be a gated item (`#[cfg(unix)] fn …` on one line).
                if gated_opener(i) {
                    return false;
                }
                while level > 0 && at > 0 {
                    at -= 1;
                    let line = lines[at];
                    if line.trim().is_empty() || indent(line) >= level {
                        continue;
                    }
                    if line.trim_end().ends_with('{') || line.trim_end().ends_with('(') {
                        if gated_opener(at) {
                            return false;
                        }
                        level = indent(line);
                    }
                }
                true
            })
            .collect()
    }

    /// The test code of the engine and the CLI may use Unix-only calls to build its fixtures,
    /// but only under a Unix gate, so the test suites compile for macOS and Windows too
    /// (platforms row 7): the trailing test modules and `tests.rs` files of the sources, `testing/`,
    /// and the integration tests (`tests/`), minus files whose `mod` line is gated.
    #[test]
    fn unix_only_apis_in_test_code_are_gated_to_unix() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in [
            "memory-engine/src",
            "memory-engine/tests",
            "engram-cli/src",
            "engram-cli/tests",
        ] {
            sources(&crates.join(dir), &mut files);
        }
        // Modules declared under a gate (`#[cfg(target_os = "linux")] mod hook_socket;`).
        let mut gated_modules = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("read");
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let Some(name) = line
                    .trim()
                    .strip_prefix("mod ")
                    .and_then(|m| m.strip_suffix(';'))
                else {
                    continue;
                };
                if i > 0 && gates_to_unix(lines[i - 1]) {
                    let dir = file.parent().expect("dir");
                    gated_modules.push(dir.join(format!("{name}.rs")));
                    gated_modules.push(dir.join(name).join("mod.rs"));
                }
            }
        }
        let mut offences = Vec::new();
        for file in &files {
            let relative = file
                .strip_prefix(&crates)
                .expect("under crates/")
                .to_path_buf();
            // A file still waiting for its row (NOT_YET) is Unix-only as a whole, tests and all.
            let not_yet = NOT_YET
                .iter()
                .any(|(path, _)| relative.to_string_lossy().replace('\\', "/") == *path);
            if relative.starts_with("memory-engine/src/platform")
                || not_yet
                || gated_modules.contains(file)
            {
                continue;
            }
            let text = std::fs::read_to_string(file).expect("read");
            let whole_file_is_test = relative.starts_with("memory-engine/src/testing")
                || relative.ends_with("tests.rs")
                || relative.components().any(|c| c.as_os_str() == "tests");
            let first = if whole_file_is_test {
                0
            } else {
                non_test_code(&text).lines().count()
            };
            let lines: Vec<&str> = text.lines().collect();
            for i in ungated_lines(&text) {
                let line = lines[i];
                if i < first || line.trim_start().starts_with("//") {
                    continue;
                }
                let found: Vec<&str> = UNIX_ONLY
                    .iter()
                    .chain(&["\"/proc/"])
                    .copied()
                    .filter(|api| line.contains(api))
                    .collect();
                if !found.is_empty() {
                    offences.push(format!(
                        "{}:{}: {}",
                        relative.display(),
                        i + 1,
                        found.join(", ")
                    ));
                }
            }
        }
        assert!(
            offences.is_empty(),
            "Unix-only APIs in test code without a cfg(unix) / cfg(target_os = \"linux\") gate:\n{}",
            offences.join("\n")
        );
    }

    #[test]
    fn gates_are_found_on_the_enclosing_items() {
        let text = "fn a() {\n    std::os::unix::x();\n}\n#[cfg(unix)]\nfn b() {\n    if x {\n        std::os::unix::y();\n    }\n}\n#[cfg(target_os = \"linux\")] // why\n#[test]\nfn c() {\n    z();\n}\n#[cfg(not(unix))]\nfn d() {\n    w();\n}\n";
        assert_eq!(ungated_lines(text), vec![0, 1, 2, 8, 13, 14, 15, 16, 17]);
        assert!(ungated_lines("#![cfg(unix)]\nfn a() {\n    x();\n}\n").is_empty());
    }

    /// Every rename of the engine and the CLI goes through [`super::fs::rename`], which retries
    /// on Windows while a scanner or indexer holds the file (platforms row 15).
    #[test]
    fn every_rename_goes_through_platform_fs() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for krate in ["memory-engine", "engram-cli"] {
            sources(&crates.join(krate).join("src"), &mut files);
        }
        let mut offences = Vec::new();
        for file in &files {
            let relative = file
                .strip_prefix(&crates)
                .expect("under crates/")
                .to_path_buf();
            // Test code renames fixtures as it likes.
            let test_file =
                relative.starts_with("memory-engine/src/testing") || relative.ends_with("tests.rs");
            if relative.starts_with("memory-engine/src/platform") || test_file {
                continue;
            }
            let code = non_test_code(&std::fs::read_to_string(file).expect("read"));
            for (number, line) in code.lines().enumerate() {
                let bare = line.match_indices("fs::rename(").any(|(at, _)| {
                    !line[..at].ends_with("platform::") && !line.trim_start().starts_with("//")
                });
                if bare {
                    offences.push(format!(
                        "{}:{}: {}",
                        relative.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
        assert!(
            offences.is_empty(),
            "renames outside platform::fs::rename:\n{}",
            offences.join("\n")
        );
    }

    #[test]
    fn test_modules_are_cut_off_and_code_before_them_is_kept() {
        let text = "use std::os::unix::fs::FileExt;\n#[cfg(test)]\nmod tests {\n    rustix::x\n}\n";
        let code = non_test_code(text);
        assert!(code.contains("std::os::unix"));
        assert!(!code.contains("rustix::"));
        // A cfg(test) item that is not the test module does not hide what follows it.
        let text = "#[cfg(test)]\nfn helper() {}\nfn f() { rustix::x }\n";
        assert!(non_test_code(text).contains("rustix::"));
    }
}
