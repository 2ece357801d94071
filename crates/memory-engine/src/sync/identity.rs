//! A project's identity across machines, and the remote folder it is stored under.

use std::path::Path;

/// `git@github.com:me/app.git`, `ssh://git@github.com/me/app`, `https://github.com/me/app.git`
/// and `https://user:token@github.com/me/app/` are all `github.com/me/app`: credentials, port,
/// scheme and `.git` dropped, host lower-cased, the path kept as it is. `None` for what names no
/// shared repository (a local path, `file://`, an empty URL): such an origin differs per machine.
pub fn normalize_origin(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        let (authority, path) = rest.split_once('/')?;
        (authority, path)
    } else {
        // scp-like `[user@]host:path`; a `/` before the `:` makes it a local path.
        let (authority, path) = url.split_once(':')?;
        if authority.contains('/') || authority.is_empty() {
            return None;
        }
        (authority, path)
    };
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    let host = host.split_once(':').map_or(host, |(host, _)| host);
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{path}", host.to_ascii_lowercase()))
}

/// The origin URL of the repository whose canonical root is `root` (worktrees share the main
/// checkout's `.git/config`; a bare repository's common dir holds `config` itself).
pub fn origin_url(git: &Path, root: &Path) -> Option<String> {
    let config = if root.join(".git").is_dir() {
        root.join(".git").join("config")
    } else {
        root.join("config")
    };
    let output = crate::platform::git::command(git)
        .arg("config")
        .arg("--file")
        .arg(&config)
        .args(["--get", "remote.origin.url"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let url = String::from_utf8(output.stdout).ok()?;
    Some(url.trim().to_owned()).filter(|u| !u.is_empty())
}

/// The one folder name `identity` is stored under in the remote's `projects/`: letters, digits,
/// `.`, `-`, `_` and `~` kept, `/` written `+`, anything else `_`; never starting with `.` (a
/// dot-folder never syncs). Which identity a folder holds is in the manifest.
pub fn folder_of(identity: &str) -> String {
    let folder: String = identity
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' | '~' => c,
            '/' => '+',
            _ => '_',
        })
        .collect();
    if folder.starts_with('.') || folder.is_empty() {
        format!("_{folder}")
    } else {
        folder
    }
}

/// Whether `name` is one plain folder name personal sync may write under: not empty, no
/// separator, not starting with `.`.
pub fn is_plain_folder(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_and_https_forms_of_one_repository_are_one_identity() {
        for url in [
            "git@github.com:me/app.git",
            "ssh://git@github.com/me/app",
            "ssh://git@GitHub.com:22/me/app.git",
            "https://github.com/me/app.git",
            "https://user@github.com/me/app",
            "https://user:tok3n@github.com/me/app/",
        ] {
            assert_eq!(
                normalize_origin(url).as_deref(),
                Some("github.com/me/app"),
                "{url}"
            );
        }
        assert_eq!(normalize_origin("/srv/git/app.git"), None);
        assert_eq!(normalize_origin("file:///srv/git/app.git"), None);
        assert_eq!(normalize_origin("./app"), None);
        assert_ne!(
            normalize_origin("git@github.com:me/App.git"),
            normalize_origin("git@github.com:me/app.git"),
            "the path keeps its case: hosts differ on that"
        );
    }

    #[test]
    fn a_folder_is_one_plain_name() {
        assert_eq!(folder_of("github.com/me/app"), "github.com+me+app");
        assert_eq!(folder_of("~/code/app"), "~+code+app");
        assert_eq!(folder_of("../../etc"), "_..+..+etc");
        assert!(is_plain_folder(&folder_of("../../etc")));
        assert!(is_plain_folder(&folder_of("a\\b c")));
        assert!(!is_plain_folder(".git"));
        assert!(!is_plain_folder("a/b"));
    }
}
