//! A session transcript (`<session>.jsonl`) of any shape: read to a chain, every message read
//! back, the listing's summary.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|bytes: &[u8]| {
    let mut file = tempfile::NamedTempFile::new_in("/dev/shm").or_else(|_| tempfile::NamedTempFile::new()).expect("temp file");
    file.write_all(bytes).expect("write");
    let Ok(transcript) = memory_engine::transcript::Transcript::open(file.path()) else {
        return;
    };
    let _ = transcript.title();
    let _ = transcript.message_count();
    if let Ok(messages) = transcript.messages() {
        for message in messages.take(1000) {
            let _ = message.map(|m| m.estimated_tokens());
        }
    }
});
