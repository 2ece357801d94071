//! A topic file's frontmatter and body, as a teammate or Claude Code may have written it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let document = memory_engine::frontmatter::parse_document(text);
    let _ = memory_engine::frontmatter::parse_header(text, 30);
    let _ = document.body.len();
});
