use super::*;
use std::fs;

/// Every file under `root`, as relative paths, for before/after comparisons.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let kind = entry.file_type().expect("type");
            out.push(
                path.strip_prefix(root)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned(),
            );
            if kind.is_dir() && !kind.is_symlink() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(unix)]
fn hostile_tree() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().expect("tmp");
    let memory = tmp.path().join("memory");
    let team = memory.join("team");
    fs::create_dir_all(team.join("notes")).expect("team");
    fs::create_dir_all(memory.join("team-evil")).expect("sibling");
    symlink("/etc", team.join("etc-link")).expect("link");
    symlink(memory.join("team-evil"), team.join("evil")).expect("link");
    symlink("../team-evil", team.join("notes/up")).expect("link");
    symlink(team.join("nowhere"), team.join("dangling")).expect("link");
    symlink(team.join("loop-b"), team.join("loop-a")).expect("link");
    symlink(team.join("loop-a"), team.join("loop-b")).expect("link");
    symlink(team.join("notes"), team.join("inside-link")).expect("link");
    (tmp, team)
}

#[cfg(unix)]
#[test]
fn sixty_hostile_keys_are_refused_and_nothing_lands_outside_team() {
    let (tmp, team) = hostile_tree();
    let before = tree(tmp.path());
    let hostile: Vec<String> = vec![
        "",
        "\0",
        "a\0b.md",
        "notes/\0.md",
        "../x.md",
        "../../etc/passwd",
        "notes/../../x.md",
        "./../x.md",
        "..",
        ".",
        "notes/..",
        "a/b/../../..",
        "/etc/passwd",
        "/tmp/x.md",
        "//server/share",
        "..\\x.md",
        "notes\\..\\..\\x.md",
        "a\\b.md",
        "\\\\server\\x",
        "..%5cx.md",
        "..%5Cx.md",
        "%2e%2e/x.md",
        "%2e%2e%2fx.md",
        "%2E%2E%2Fx.md",
        "..%2fx.md",
        "..%2Fx.md",
        "notes%2f..%2f..%2fx.md",
        "%2fetc%2fpasswd",
        "%2e%2e",
        "a%2fb.md",
        "%252e%252e%252fx.md",
        "%252e%252e/x.md",
        "..%252fx.md",
        "%25252e%25252e%25252fx.md",
        "%2500.md",
        "%00.md",
        "x%00.md",
        "\u{FF0E}\u{FF0E}/x.md",
        "\u{FF0E}\u{FF0E}\u{FF0F}x.md",
        "notes\u{FF0F}..\u{FF0F}..\u{FF0F}x.md",
        "\u{FF0F}etc\u{FF0F}passwd",
        "\u{2024}\u{2024}/x.md",
        "\u{FE52}\u{FE52}/x.md",
        "\u{FF3C}x.md",
        "..\u{FF3C}x.md",
        "\u{FF0E}\u{FF0E}\u{FF3C}x",
        "\u{FE68}x.md",
        "\u{2025}/x.md",
        "\u{FF0E}\u{FF0E}",
        "etc-link/passwd",
        "etc-link",
        "evil/x.md",
        "evil",
        "notes/up/x.md",
        "notes/up",
        "dangling",
        "dangling/x.md",
        "loop-a",
        "loop-a/x.md",
        "loop-b/x.md",
        "%2e%2e%5cx.md",
        "..%c0%afx.md",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert!(hostile.len() >= 60, "{} keys", hostile.len());
    for key in &hostile {
        let refused = validate_key(&team, key).expect_err(&format!("{key:?} must be refused"));
        assert_eq!(&refused.key, key);
        assert!(
            write_team_file(&team, key, "---\nname: x\n---\nx\n").is_err(),
            "{key:?} written"
        );
    }
    assert_eq!(tree(tmp.path()), before, "nothing written anywhere");
}

#[cfg(unix)]
#[test]
fn rules_are_named() {
    let (_tmp, team) = hostile_tree();
    let rule = |key: &str| validate_key(&team, key).expect_err(key).rule;
    assert_eq!(rule("a\0"), KeyRule::Nul);
    assert_eq!(rule("%252e%252e%252fx"), KeyRule::UrlEncodedTraversal);
    assert_eq!(rule("\u{FF0E}\u{FF0E}/x"), KeyRule::NfkcTraversal);
    assert_eq!(rule("a\\b"), KeyRule::Backslash);
    assert_eq!(rule("/etc/passwd"), KeyRule::Absolute);
    assert_eq!(rule("../x"), KeyRule::OutsideTeam);
    assert_eq!(rule("evil/x.md"), KeyRule::SymlinkOutsideTeam);
    assert_eq!(rule("loop-a/x.md"), KeyRule::DanglingSymlink);
    assert_eq!(rule("aux.md"), KeyRule::WindowsDeviceName);
    assert_eq!(rule("notes/Com3.txt.md"), KeyRule::WindowsDeviceName);
    assert_eq!(rule("notes:ads.md"), KeyRule::WindowsReservedCharacter);
    assert_eq!(rule("why?.md"), KeyRule::WindowsReservedCharacter);
    assert_eq!(rule("notes./x.md"), KeyRule::WindowsTrailingDotOrSpace);
    assert_eq!(rule("notes /x.md"), KeyRule::WindowsTrailingDotOrSpace);
    assert_eq!(rule("tab\tx.md"), KeyRule::WindowsControlCharacter);
    assert!(validate_key(&team, "evil/x.md")
        .expect_err("x")
        .to_string()
        .contains("symlink-outside-team"));
}

#[cfg(unix)]
#[test]
fn safe_keys_are_accepted_and_written_inside_team() {
    let (_tmp, team) = hostile_tree();
    for key in [
        "notes.md",
        "notes/deploy.md",
        "café.md",
        "cafe\u{301}.md",
        "日本語メモ.md",
        "notes/../notes.md",
        "inside-link/x.md",
        "v1.2..md",
        "a%20b.md",
        "100%.md",
    ] {
        let path = validate_key(&team, key).unwrap_or_else(|e| panic!("{key:?}: {e}"));
        assert!(path.starts_with(&team), "{key:?} → {}", path.display());
    }
    let written = write_team_file(&team, "notes/deploy.md", "---\nname: Deploy\n---\nFly.io\n")
        .expect("write");
    assert_eq!(
        fs::read_to_string(written).expect("read"),
        "---\nname: Deploy\n---\nFly.io\n"
    );
    let big = "x".repeat(MAX_TEAM_FILE_BYTES + 1);
    assert!(write_team_file(&team, "big.md", &big).is_err());
    assert!(!team.join("big.md").exists(), "no partial write");
    let secret = write_team_file(
        &team,
        "token.md",
        "token ghp_Xk9pQ2vL7mZ3wR8tY4nB6cD1fG5hJ0aS2eU7\n",
    )
    .expect_err("secret");
    assert!(secret.to_string().contains("secret rule"), "{secret}");
    assert!(!team.join("token.md").exists());
    // A file named after a token, clean inside, is refused as well.
    let named = format!("{}.md", "AKIA".to_string() + "Z7QWERTYUIOP3XMB");
    let refused = write_team_file(&team, &named, "---\nname: x\n---\nplain\n").expect_err("named");
    assert!(
        refused
            .to_string()
            .contains("its path matches secret rule aws-access-token"),
        "{refused}"
    );
    assert!(!team.join(&named).exists());
}

/// Issue #20 item 12: keys that reach `../` only through URL-decoding and NFKC together, an
/// overlong UTF-8 encoding, and names no file could have.
#[cfg(unix)]
#[test]
fn keys_that_traverse_through_combined_decodings_or_name_no_file_are_refused() {
    let (tmp, team) = hostile_tree();
    let before = tree(tmp.path());
    let rule = |key: &str| match validate_key(&team, key) {
        Ok(_) => panic!("{}… accepted", key.chars().take(40).collect::<String>()),
        Err(refused) => refused.rule,
    };
    let long_name = format!("{}.md", "a".repeat(MAX_NAME_BYTES - 3));
    let long_key = format!("{}x.md", "notes/".repeat(MAX_KEY_BYTES / 6 + 1));
    for (key, expected) in [
        // NFKC first makes `%2e%2e%2f`, which then URL-decodes.
        (
            "\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF45}\u{FF05}\u{FF12}\u{FF46}x.md",
            KeyRule::UrlEncodedTraversal,
        ),
        // URL-decoding first makes fullwidth `．．／`, which NFKC turns into `../`.
        (
            "%ef%bc%8e%ef%bc%8e%ef%bc%8fx.md",
            KeyRule::UrlEncodedTraversal,
        ),
        ("%EF%BC%8E%EF%BC%8E/x.md", KeyRule::UrlEncodedTraversal),
        // Overlong UTF-8 for `..` and `/`: refused, never replaced by something harmless.
        ("%c0%ae%c0%ae%c0%afx.md", KeyRule::BadEncoding),
        ("%e0%80%ae%e0%80%ae/x.md", KeyRule::BadEncoding),
        ("caf%e9.md", KeyRule::BadEncoding),
        (&format!("a{long_name}"), KeyRule::TooLong),
        (&format!("notes/{long_name}x/y.md"), KeyRule::TooLong),
        (&long_key, KeyRule::TooLong),
        ("notes/", KeyRule::NotAFileName),
        ("notes/.", KeyRule::NotAFileName),
        ("a/b/..", KeyRule::NotAFileName),
        ("x.md/", KeyRule::NotAFileName),
    ] {
        assert_eq!(rule(key), expected, "{key:?}");
        assert!(
            write_team_file(&team, key, "x\n").is_err(),
            "{key:?} written"
        );
    }
    assert_eq!(tree(tmp.path()), before, "nothing written anywhere");
    // At the limits, still a file.
    assert!(validate_key(&team, &long_name).is_ok(), "a 255-byte name");
    assert!(validate_key(&team, &format!("notes/{long_name}")).is_ok());
}
