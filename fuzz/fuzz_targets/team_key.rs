//! A team memory key from a teammate or a remote: validated against FORMATS.md §9. A key
//! accepted must name a path inside team/.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static TEAM: OnceLock<(tempfile::TempDir, std::path::PathBuf)> = OnceLock::new();

fuzz_target!(|key: &str| {
    let (_, team) = TEAM.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let team = dir.path().join("memory/team");
        std::fs::create_dir_all(team.join("notes")).expect("team");
        std::os::unix::fs::symlink("/etc", team.join("etc")).expect("link");
        (dir, team)
    });
    if let Ok(path) = memory_engine::team::validate_key(team, key) {
        let real_team = std::fs::canonicalize(team).expect("team");
        assert!(path.starts_with(team) || path.starts_with(&real_team), "{key:?} → {}", path.display());
    }
});
