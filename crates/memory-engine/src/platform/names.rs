//! Windows' file-name rules, applied on every OS to each name Engram *creates* inside a memory
//! dir or a team/sync repository (`remember --file`, the editor's new and renamed files, a
//! model's new files, stranded merges, team and sync keys), so a directory made on Linux stays
//! checkout-able on Windows. Names Engram derives itself (`{type}_{slug}.md`) satisfy them by
//! construction. Existing files are never refused for reading: these checks sit only where a
//! new name enters.

use crate::error::{Error, Result};

/// The rule of Windows' that a file or folder name breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowsNameRule {
    /// `<>:"|?*` (`/` and `\` separate names and are checked by the key rules).
    ReservedCharacter,
    /// U+0000 to U+001F.
    ControlCharacter,
    /// `CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, with or without an extension.
    DeviceName,
    /// Windows strips a trailing `.` or space, so the file would get another name.
    TrailingDotOrSpace,
}

impl WindowsNameRule {
    pub fn describe(self) -> &'static str {
        match self {
            WindowsNameRule::ReservedCharacter => {
                "contains one of `:` `<` `>` `\"` `|` `?` `*`, which Windows forbids in file \
                 names (`:` would open an alternate data stream)"
            }
            WindowsNameRule::ControlCharacter => {
                "contains a control character (U+0000 to U+001F), which Windows forbids in file \
                 names"
            }
            WindowsNameRule::DeviceName => {
                "is a Windows device name (CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9, in any case, \
                 with or without an extension)"
            }
            WindowsNameRule::TrailingDotOrSpace => {
                "ends in a dot or a space, which Windows strips from file names"
            }
        }
    }
}

/// The Windows rule one file or folder name (no `/`) breaks, if any.
pub fn windows_name_rule(name: &str) -> Option<WindowsNameRule> {
    if name.chars().any(|c| "<>:\"|?*".contains(c)) {
        return Some(WindowsNameRule::ReservedCharacter);
    }
    if name.chars().any(|c| c < ' ') {
        return Some(WindowsNameRule::ControlCharacter);
    }
    if is_device_name(name) {
        return Some(WindowsNameRule::DeviceName);
    }
    if name.ends_with(['.', ' ']) && name != "." && name != ".." {
        return Some(WindowsNameRule::TrailingDotOrSpace);
    }
    None
}

/// The first name in a `/`-separated key that breaks a Windows rule, with the rule.
pub fn windows_key_rule(key: &str) -> Option<(&str, WindowsNameRule)> {
    key.split('/')
        .find_map(|name| windows_name_rule(name).map(|rule| (name, rule)))
}

/// Refuses a key for a new file that Windows could not hold, naming the part and the rule.
pub fn check_portable_key(key: &str) -> Result<()> {
    match windows_key_rule(key) {
        Some((name, rule)) => Err(Error::InvalidInput(format!(
            "{key:?}: {name:?} {}; Engram creates only names every OS can hold, so memory and \
             team repositories stay portable",
            rule.describe()
        ))),
        None => Ok(()),
    }
}

/// `CON`, `nul.txt`, `Com1.tar.gz`, `LPT¹`: the part before the first dot, trailing spaces
/// dropped (Windows drops them too), is a DOS device in any case.
fn is_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => ["COM", "LPT"].iter().any(|port| {
            upper.strip_prefix(port).is_some_and(|digit| {
                matches!(digit, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9")
                    || matches!(digit, "\u{b9}" | "\u{b2}" | "\u{b3}")
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_windows_rule_is_caught_and_named() {
        use WindowsNameRule::*;
        for (name, rule) in [
            ("notes:secret.md", ReservedCharacter),
            ("a<b.md", ReservedCharacter),
            ("a>b.md", ReservedCharacter),
            ("say \"hi\".md", ReservedCharacter),
            ("a|b.md", ReservedCharacter),
            ("why?.md", ReservedCharacter),
            ("all*.md", ReservedCharacter),
            ("tab\there.md", ControlCharacter),
            ("bell\u{7}.md", ControlCharacter),
            ("CON", DeviceName),
            ("con.md", DeviceName),
            ("Nul.tar.gz", DeviceName),
            ("aux", DeviceName),
            ("prn.md", DeviceName),
            ("com1.md", DeviceName),
            ("COM9", DeviceName),
            ("lpt5.md", DeviceName),
            ("LPT\u{b9}.md", DeviceName),
            ("con .md", DeviceName),
            ("notes.", TrailingDotOrSpace),
            ("notes ", TrailingDotOrSpace),
            ("x.md.", TrailingDotOrSpace),
        ] {
            assert_eq!(windows_name_rule(name), Some(rule), "{name:?}");
        }
    }

    #[test]
    fn ordinary_names_that_only_look_close_pass() {
        for name in [
            "notes.md",
            "console.md",
            "connect.md",
            "com10.md",
            "com0.md",
            "lpt.md",
            "nullable.md",
            "auxiliary.md",
            "user_con.md",
            "v1.2..md",
            ".hidden.md",
            "café.md",
            "日本語メモ.md",
            "a%20b.md",
            ".",
            "..",
        ] {
            assert_eq!(windows_name_rule(name), None, "{name:?}");
        }
    }

    #[test]
    fn a_key_names_the_part_that_breaks_a_rule() {
        assert_eq!(
            windows_key_rule("notes./deploy.md"),
            Some(("notes.", WindowsNameRule::TrailingDotOrSpace))
        );
        assert_eq!(
            windows_key_rule("aux/deploy.md"),
            Some(("aux", WindowsNameRule::DeviceName))
        );
        assert_eq!(windows_key_rule("notes/deploy.md"), None);
        let error = check_portable_key("team/nul.md").expect_err("device name");
        let text = error.to_string();
        assert!(
            text.contains("\"nul.md\"") && text.contains("Windows device name"),
            "{text}"
        );
    }
}
