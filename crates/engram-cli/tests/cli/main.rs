//! Every end-to-end test of the `engram` binary, in one test binary (as ripgrep does), so the
//! shared support code and the dependencies link once instead of once per file.
//!
//! These live in the CLI crate rather than in the workspace's `tests/` because Cargo only builds
//! a binary for (and exposes `CARGO_BIN_EXE_<name>` to) tests of the same package; from another
//! package a test would run whatever stale binary happened to be in `target/`.

mod support;

mod agents;
mod claude_code;
mod claude_code_writer;
mod commands;
mod concurrency;
mod crash;
mod crash_applies;
mod dream;
mod extract;
mod generate;
mod history;
// Linux only (platforms row 23): `/proc/<pid>/fd` and `stat`, `prlimit`, `SO_PEERCRED`.
#[cfg(target_os = "linux")]
mod hook_socket;
mod hostile;
// Linux only (platforms row 23): `unshare` namespaces, a tmpfs, util-linux's `setpriv`.
#[cfg(target_os = "linux")]
mod hostile_io;
mod mcp;
mod models;
mod platform;
mod recall_hooks;
mod search_fix;
mod sessions;
mod staging;
mod sync;
mod team;
mod usage;
