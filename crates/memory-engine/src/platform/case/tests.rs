use std::fs;

use super::*;
use crate::platform::case::fat::CaseInsensitiveDir;

#[test]
fn keys_that_differ_only_in_case_are_twins_and_nothing_else_is() {
    let keys = ["Foo.md", "notes/Deploy.md", "bar.md", "Straße.md", "ÉTÉ.md"];
    let index = CaseIndex::new(keys);
    assert_eq!(index.twin("foo.md"), Some("Foo.md"));
    assert_eq!(index.twin("FOO.MD"), Some("Foo.md"));
    assert_eq!(index.twin("Notes/deploy.md"), Some("notes/Deploy.md"));
    assert_eq!(
        index.twin("été.md"),
        Some("ÉTÉ.md"),
        "non-ASCII letters fold too"
    );
    // A key is not its own twin, and unrelated keys have none.
    assert_eq!(index.twin("Foo.md"), None);
    assert_eq!(index.twin("bar.md"), None);
    assert_eq!(index.twin("baz.md"), None);
    assert_eq!(index.twin("notes/deploy.txt"), None);
    // Two spellings held at once: each finds the other.
    let both = CaseIndex::new(["a.md", "A.md"]);
    assert_eq!(both.twin("a.md"), Some("A.md"));
    assert_eq!(both.twin("A.md"), Some("a.md"));
}

/// "Café" composed (one code point for "é", as most keyboards type it) and decomposed ("e" and a
/// combining accent, as older macOS file names are): one name to a person, one file on APFS.
const CAFE_COMPOSED: &str = "Caf\u{e9}.md";
const CAFE_DECOMPOSED: &str = "Cafe\u{301}.md";

#[test]
fn names_that_differ_in_how_an_accent_is_encoded_are_twins_and_the_message_says_so() {
    let index = CaseIndex::new([CAFE_COMPOSED, "notes.md"]);
    assert_eq!(index.twin(CAFE_DECOMPOSED), Some(CAFE_COMPOSED));
    assert_eq!(
        index.twin(&CAFE_DECOMPOSED.to_uppercase()),
        Some(CAFE_COMPOSED),
        "case and encoding at once"
    );
    assert_eq!(index.twin(CAFE_COMPOSED), None);
    assert_eq!(
        how_twins_differ(CAFE_DECOMPOSED, CAFE_COMPOSED),
        "only in how an accent is encoded (Unicode normalisation)"
    );
    assert_eq!(how_twins_differ("foo.md", "Foo.md"), "only in case");
    assert_eq!(
        how_twins_differ(&CAFE_DECOMPOSED.to_uppercase(), CAFE_COMPOSED),
        "only in case and in how an accent is encoded"
    );

    // On this case-sensitive volume the decomposed name would be a second file, which a Mac's
    // checkout of the same dir folds into the first: refused, naming both and how they differ.
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join(CAFE_COMPOSED), "x").expect("write");
    let text = new_key_on_disk(dir.path(), CAFE_DECOMPOSED)
        .expect_err("a second file")
        .to_string();
    assert!(
        text.contains("differs only in how an accent is encoded"),
        "{text}"
    );
    assert_eq!(
        spelling_on_disk(dir.path(), CAFE_DECOMPOSED).expect("list"),
        Some(CAFE_COMPOSED.to_owned())
    );
}

#[test]
fn the_spelling_on_disk_is_found_part_by_part() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir(dir.path().join("Notes")).expect("mkdir");
    fs::write(dir.path().join("Notes/Deploy.md"), "x").expect("write");
    fs::write(dir.path().join("Foo.md"), "x").expect("write");
    let spelled = |key: &str| spelling_on_disk(dir.path(), key).expect("list");
    assert_eq!(spelled("foo.md"), Some("Foo.md".into()));
    assert_eq!(spelled("notes/deploy.md"), Some("Notes/Deploy.md".into()));
    assert_eq!(spelled("notes/new.md"), Some("Notes/new.md".into()));
    assert_eq!(spelled("Foo.md"), None, "spelled as on disk");
    assert_eq!(spelled("Notes/Deploy.md"), None);
    assert_eq!(spelled("other.md"), None, "nothing of it exists");
    assert_eq!(spelled("Notes/other/x.md"), None);
    // A case-sensitive volume may hold both spellings: the exact one is the file meant.
    fs::write(dir.path().join("foo.md"), "y").expect("write");
    assert_eq!(spelled("foo.md"), None);
}

#[test]
fn a_case_sensitive_dir_is_probed_as_such_and_no_probe_file_stays() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(!folds_case(dir.path()).expect("probe"), "ext4/tmpfs here");
    assert!(!folds_case(dir.path()).expect("cached"));
    let left: Vec<_> = fs::read_dir(dir.path()).expect("list").collect();
    assert!(left.is_empty(), "the probe removed its file: {left:?}");
}

#[test]
fn on_a_case_sensitive_volume_a_case_twin_is_refused_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("Foo.md"), "x").expect("write");
    let error = new_key_on_disk(dir.path(), "foo.md").expect_err("a second file");
    let text = error.to_string();
    assert!(
        text.contains("\"foo.md\"") && text.contains("\"Foo.md\""),
        "names both: {text}"
    );
    // A folder spelled differently is refused too: it would be a second folder.
    fs::create_dir(dir.path().join("Notes")).expect("mkdir");
    assert!(new_key_on_disk(dir.path(), "notes/new.md").is_err());
    // Exact and new names pass unchanged.
    assert_eq!(
        new_key_on_disk(dir.path(), "Foo.md").expect("same"),
        "Foo.md"
    );
    assert_eq!(
        new_key_on_disk(dir.path(), "bar.md").expect("new"),
        "bar.md"
    );
    assert_eq!(
        new_key_on_disk(dir.path(), "Notes/new.md").expect("new in Notes"),
        "Notes/new.md"
    );
}

/// A real case-insensitive directory (FAT through FUSE: see [`crate::platform::case::fat`]); skips
/// with the reason when this machine cannot mount one.
#[test]
fn on_a_case_insensitive_volume_the_existing_spelling_is_used() {
    let fat = match CaseInsensitiveDir::mount() {
        Ok(fat) => fat,
        Err(why) => {
            eprintln!("skipped: no case-insensitive directory here: {why}");
            return;
        }
    };
    let root = fat.path();
    assert!(folds_case(root).expect("probe"), "FAT folds case");
    let left: Vec<_> = fs::read_dir(root).expect("list").collect();
    assert!(left.is_empty(), "the probe removed its file: {left:?}");
    fs::write(root.join("Foo.md"), "x").expect("write");
    fs::create_dir(root.join("Notes")).expect("mkdir");
    assert_eq!(
        new_key_on_disk(root, "foo.md").expect("the same file"),
        "Foo.md"
    );
    assert_eq!(
        new_key_on_disk(root, "notes/new.md").expect("in the same folder"),
        "Notes/new.md"
    );
    assert_eq!(new_key_on_disk(root, "bar.md").expect("new"), "bar.md");
}
