//! The desktop app's bundle configuration (`src-tauri/tauri.conf.json`), checked as data: the
//! packages it names for each OS and the icon files they need (platforms rows 5 and 19).

use std::path::{Path, PathBuf};

fn src_tauri() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../src-tauri")
}

fn bundle_config() -> serde_json::Value {
    let path = src_tauri().join("tauri.conf.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_icon_the_bundle_names_exists_with_one_for_each_os() {
    let config = bundle_config();
    let icons: Vec<&str> = config["bundle"]["icon"]
        .as_array()
        .expect("bundle.icon is a list")
        .iter()
        .map(|icon| icon.as_str().expect("an icon path"))
        .collect();
    for icon in &icons {
        // Paths are relative to tauri.conf.json, as tauri-build and the bundler read them.
        let path = src_tauri().join(icon);
        assert!(
            path.is_file(),
            "bundle.icon names {icon}, but {} is missing",
            path.display()
        );
    }
    // tauri-build embeds the .ico into the Windows executable and the bundler puts the .icns in
    // the macOS .app: each OS's build fails without its own.
    for extension in [".png", ".ico", ".icns"] {
        assert!(
            icons.iter().any(|icon| icon.ends_with(extension)),
            "bundle.icon has no {extension}: {icons:?}"
        );
    }
}

#[test]
fn the_bundle_targets_every_os_and_the_identifier_suits_macos() {
    let config = bundle_config();
    let targets: Vec<&str> = config["bundle"]["targets"]
        .as_array()
        .expect("bundle.targets is a list, not \"all\" (which would add AppImage on Linux)")
        .iter()
        .map(|target| target.as_str().expect("a target name"))
        .collect();
    // The bundler keeps only the targets of the OS it runs on, and `make package` passes
    // `--bundles deb,rpm` (scripts/package.sh), so Linux still builds exactly those two.
    assert_eq!(targets, ["deb", "rpm", "app", "dmg", "msi", "nsis"]);
    let identifier = config["identifier"].as_str().expect("an identifier");
    // macOS takes an identifier ending in `.app` for the bundle's own extension.
    assert!(
        !identifier.ends_with(".app"),
        "identifier {identifier} ends in .app"
    );
}
