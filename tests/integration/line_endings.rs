//! Test data and fixtures keep their bytes on every checkout (platforms row 23): `.gitattributes`
//! marks them `-text`, so a Windows clone with `core.autocrlf=true` does not turn LF into CRLF
//! under tests that compare bytes.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str], stdin: Option<&str>) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut command = Command::new("git");
    command.arg("-C").arg(&root).args(args);
    let output = match stdin {
        None => command.output().expect("git"),
        Some(input) => {
            use std::io::Write;
            let mut child = command
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("git");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write");
            child.wait_with_output().expect("git")
        }
    };
    assert!(output.status.success(), "git {args:?}");
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn every_tracked_data_file_is_kept_byte_for_byte() {
    let data_dirs = [
        "crates/memory-engine/demo",
        "crates/memory-engine/src/secrets",
        "crates/memory-engine/src/dream/offline/snapshots",
        "fuzz/corpus",
        "bench/dream-set",
        "bench/recall-set",
        "bench/recall-heldout",
        "bench/recall-fresh",
        "bench/extract-set",
        "bench/recall-questions.toml",
    ];
    let mut files = String::new();
    for dir in data_dirs {
        for file in git(&["ls-files", "--", dir], None).lines() {
            if !file.ends_with(".rs") {
                files.push_str(file);
                files.push('\n');
            }
        }
    }
    assert!(
        files.lines().count() > 100,
        "the data files are tracked: {files}"
    );
    let attributes = git(&["check-attr", "--stdin", "text"], Some(&files));
    let converted: Vec<&str> = attributes
        .lines()
        .filter(|line| !line.ends_with(": text: unset"))
        .collect();
    assert!(
        converted.is_empty(),
        "line endings may be converted: {converted:#?}"
    );
}
