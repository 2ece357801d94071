//! Claude Code's `settings.json`, as the user wrote it: parsed for editing, and Engram's hooks
//! installed and removed. Whatever the input, no panic; an install that succeeded and an
//! uninstall right after give back the original bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = memory_engine::json_edit::parse(text);
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = memory_engine::Engine::builder(memory_engine::Environment::empty())
        .claude_home(dir.path().join("claude"))
        .engram_home(dir.path().join("engram"))
        .build();
    std::fs::create_dir_all(dir.path().join("claude")).expect("claude");
    let settings = dir.path().join("claude/settings.json");
    std::fs::write(&settings, text).expect("seed");
    if engine.install_hooks(std::path::Path::new("/usr/bin/engram")).is_ok()
        && engine.uninstall_hooks().is_ok()
    {
        let back = std::fs::read_to_string(&settings).expect("read");
        // (A file that already held an Engram entry is not given back as it was: its entry goes.)
        if !text.trim().is_empty() && !text.contains("engram") {
            assert_eq!(back, text, "install then uninstall is a round trip");
        }
    }
});
