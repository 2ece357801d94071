//! Where things live per OS: the user's home, and Engram's own data dir. Both read the engine's
//! injected environment (never the process's own), so tests stay parallel; the only OS query is
//! Windows' known folder for local app data.

use std::path::{Path, PathBuf};

/// The user's home directory: `HOME`, else `USERPROFILE`; on Windows `USERPROFILE` first, as Node's
/// `os.homedir()` (and so Claude Code) does there — a `HOME` set by Git Bash or MSYS would
/// otherwise put Claude's files somewhere Claude Code never looks.
pub fn home_dir<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<PathBuf> {
    home_for(cfg!(windows), get)
}

fn home_for<'a>(windows: bool, get: impl Fn(&str) -> Option<&'a str>) -> Option<PathBuf> {
    let order = if windows {
        ["USERPROFILE", "HOME"]
    } else {
        ["HOME", "USERPROFILE"]
    };
    order.into_iter().find_map(get).map(PathBuf::from)
}

/// The OS families whose data-dir conventions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Linux and other Unix: the XDG base directories.
    Xdg,
    Mac,
    Windows,
}

const THIS_OS: Family = if cfg!(target_os = "macos") {
    Family::Mac
} else if cfg!(windows) {
    Family::Windows
} else {
    Family::Xdg
};

/// Engram's data dir when `ENGRAM_HOME` is not set: `$XDG_DATA_HOME/engram` (on every OS, as
/// before this layer existed); else, where it already exists, `<home>/.local/share/engram` — the
/// place every OS used before, so a user's data is never stranded; else the OS's own place:
/// `<home>/.local/share/engram` (Linux), `<home>/Library/Application Support/engram` (macOS),
/// `%LOCALAPPDATA%\engram` (Windows, the known folder through the `dirs` crate: the
/// `LOCALAPPDATA` variable can be missing in a child started with a cleared environment).
pub fn engram_data_dir<'a>(home: Option<&Path>, get: impl Fn(&str) -> Option<&'a str>) -> PathBuf {
    let home = home.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let legacy = home.join(".local/share/engram");
    let xdg = get("XDG_DATA_HOME").map(PathBuf::from);
    let legacy_exists = THIS_OS != Family::Xdg && legacy.is_dir();
    choose_data_dir(THIS_OS, &home, xdg, legacy_exists, windows_local_data)
}

fn choose_data_dir(
    os: Family,
    home: &Path,
    xdg: Option<PathBuf>,
    legacy_exists: bool,
    windows_local: impl FnOnce() -> Option<PathBuf>,
) -> PathBuf {
    if let Some(xdg) = xdg {
        return xdg.join("engram");
    }
    let legacy = home.join(".local/share/engram");
    if legacy_exists {
        return legacy;
    }
    match os {
        Family::Xdg => legacy,
        Family::Mac => home.join("Library/Application Support/engram"),
        Family::Windows => windows_local()
            .unwrap_or_else(|| home.join("AppData").join("Local"))
            .join("engram"),
    }
}

#[cfg(windows)]
fn windows_local_data() -> Option<PathBuf> {
    dirs::data_local_dir()
}

#[cfg(not(windows))]
fn windows_local_data() -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn vars(pairs: &[(&'static str, &'static str)]) -> HashMap<&'static str, &'static str> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn home_prefers_userprofile_on_windows_and_home_elsewhere() {
        let both = vars(&[("HOME", "/msys/home/u"), ("USERPROFILE", r"C:\Users\u")]);
        let get = |k: &str| both.get(k).copied();
        assert_eq!(home_for(true, get), Some(PathBuf::from(r"C:\Users\u")));
        assert_eq!(home_for(false, get), Some(PathBuf::from("/msys/home/u")));
        let only_home = vars(&[("HOME", "/home/u")]);
        assert_eq!(
            home_for(true, |k| only_home.get(k).copied()),
            Some(PathBuf::from("/home/u"))
        );
        assert_eq!(home_for(false, |_| None), None);
        // This build's own arm.
        assert_eq!(home_dir(get), Some(PathBuf::from("/msys/home/u")));
    }

    #[test]
    fn the_data_dir_keeps_xdg_then_existing_data_then_the_os_place() {
        let home = Path::new("/h");
        let none = || None;
        let xdg = Some(PathBuf::from("/x"));
        for os in [Family::Xdg, Family::Mac, Family::Windows] {
            assert_eq!(
                choose_data_dir(os, home, xdg.clone(), true, none),
                Path::new("/x/engram")
            );
            assert_eq!(
                choose_data_dir(os, home, None, true, none),
                Path::new("/h/.local/share/engram"),
                "{os:?} strands existing data"
            );
        }
        assert_eq!(
            choose_data_dir(Family::Xdg, home, None, false, none),
            Path::new("/h/.local/share/engram")
        );
        assert_eq!(
            choose_data_dir(Family::Mac, home, None, false, none),
            Path::new("/h/Library/Application Support/engram")
        );
        assert_eq!(
            choose_data_dir(Family::Windows, home, None, false, || Some(PathBuf::from(
                "/lad"
            ))),
            Path::new("/lad/engram")
        );
        assert_eq!(
            choose_data_dir(Family::Windows, home, None, false, none),
            Path::new("/h/AppData/Local/engram")
        );
    }

    #[test]
    fn on_linux_the_data_dir_is_what_it_always_was() {
        let env = vars(&[("XDG_DATA_HOME", "/xdg")]);
        assert_eq!(
            engram_data_dir(Some(Path::new("/home/u")), |_| None),
            Path::new("/home/u/.local/share/engram")
        );
        assert_eq!(
            engram_data_dir(Some(Path::new("/home/u")), |k| env.get(k).copied()),
            Path::new("/xdg/engram")
        );
    }
}
