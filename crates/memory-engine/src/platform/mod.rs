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
//!
//! Other operating systems get the conservative answer: a PID counts as alive (a lock is never
//! stolen from a holder we cannot see), terminating is refused with an error that says so.

pub mod process;
