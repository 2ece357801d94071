//! Test support shared by the integration and end-to-end tests: fixture builders that lay out
//! Claude homes and memory dirs in temp dirs, and paths to the shared real-world fixtures.

use std::path::PathBuf;

/// `../shared/fixtures/real` next to the checkout (CI lays it out the same way).
pub fn real_fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real")
}
