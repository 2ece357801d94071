//! `MEMORY.md` as Claude Code loads it, and the index edits Engram makes to it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let loaded = memory_engine::index::load_index_text(text);
    let entries = memory_engine::index::parse_entries(text);
    for line in text.lines().take(64) {
        let _ = memory_engine::index::parse_entry_line(line);
    }
    let line = memory_engine::index::entry_line("Fuzz", "fuzz.md", "a hook");
    let updated = memory_engine::index::upsert_entry(text, "fuzz.md", &line, None);
    let (removed, _) = memory_engine::index::remove_entry(&updated, "fuzz.md");
    let _ = (loaded.entries.len(), entries.len(), removed.len());
});
