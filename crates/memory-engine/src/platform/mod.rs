//! Every operating-system assumption of Engram, in one room. The rest of the engine, the CLI and
//! the app call these small interfaces and never `std::os::unix`, `rustix`, `libc`, Windows APIs or
//! per-OS `cfg` themselves.
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
//! | [`fs::sync_filesystem`] | `syncfs` | `false`: per-file `fsync` | `false`: per-file flush |
//! | [`fs::is_symlink_loop`] | `ELOOP` | same | os error 1921 |
//! | [`dirs::home_dir`] | `HOME`, else `USERPROFILE` | same | `USERPROFILE` first (as Node's `os.homedir`) |
//! | [`dirs::engram_data_dir`] | `$XDG_DATA_HOME/engram`, else `~/.local/share/engram` | existing `~/.local/share/engram`, else `~/Library/Application Support/engram` | existing `~/.local/share/engram`, else `%LOCALAPPDATA%\engram` (`dirs`) |
//!
//! Other operating systems get the conservative answer: a PID counts as alive (a lock is never
//! stolen from a holder we cannot see), terminating is refused with an error that says so.

pub mod dirs;
pub mod fs;
pub mod process;
