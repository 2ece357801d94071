//! The `glob` patterns the confined agent's `list`, `grep` and `glob` tools accept.

/// Whether `path` (relative, `/`-separated) matches `pattern`: `*` any run of characters within
/// one name, `**` any run across directories (`**/` also matches no directory at all), `?` one
/// character other than `/`.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let path: Vec<char> = path.chars().collect();
    glob_chars(&pattern, &path)
}

fn glob_chars(p: &[char], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            if p.get(2) == Some(&'/') {
                let rest = &p[3..];
                (0..=s.len()).any(|i| (i == 0 || s[i - 1] == '/') && glob_chars(rest, &s[i..]))
            } else {
                let rest = &p[2..];
                (0..=s.len()).any(|i| glob_chars(rest, &s[i..]))
            }
        }
        Some('*') => (0..=s.len())
            .take_while(|&i| i == 0 || s[i - 1] != '/')
            .any(|i| glob_chars(&p[1..], &s[i..])),
        Some('?') => s.first().is_some_and(|c| *c != '/') && glob_chars(&p[1..], &s[1..]),
        Some(c) => s.first() == Some(c) && glob_chars(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.md", "a.md"));
        assert!(!glob_match("*.md", "team/a.md"), "`*` stays in one name");
        assert!(glob_match("**/*.md", "a.md"), "`**/` matches no directory");
        assert!(glob_match("**/*.md", "team/deep/a.md"));
        assert!(glob_match("team/**", "team/x/y.md"));
        assert!(glob_match("feedback_?.md", "feedback_a.md"));
        assert!(!glob_match("feedback_?.md", "feedback_ab.md"));
        assert!(!glob_match("*.md", "a.txt"));
    }
}
