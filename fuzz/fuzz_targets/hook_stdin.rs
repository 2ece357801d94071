//! What Claude Code sends a hook on stdin: the prompt hook's and the Stop hook's payloads.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = memory_engine::hooks::parse_user_prompt_submit(text);
    let _ = memory_engine::hooks::stop::parse_stop(text);
    let _ = memory_engine::hooks::is_recall_query(text);
});
