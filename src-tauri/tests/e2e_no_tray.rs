//! End to end, a system without the tray's library: the real `engram-app` started where
//! libayatana-appindicator3 (and libappindicator3) cannot be loaded — each bound over by
//! `/dev/null` in a private mount namespace (`unshare`), so the dynamic loader fails on them as
//! it does where they are not installed. Tauri's tray panics there; Engram must start without
//! its tray, say why on stderr and in the window, and work as usual.
//!
//! Ignored by a plain `cargo test` (it needs a display, a D-Bus session, `tauri-driver`,
//! `WebKitWebDriver`, `unshare` with user namespaces or root, and `ui/dist` built). Run it with
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p engram-app
//! --features engram-app/custom-protocol --test e2e_no_tray -- --ignored`.
//! Screenshot in `<target dir>/e2e-screenshots/`: no-tray.

#![cfg(unix)]

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use support::*;

/// Runs its arguments with the tray libraries unloadable: every path `ldconfig` knows for them
/// is bound over by `/dev/null` in a mount namespace of its own (so nothing outside it changes).
const WITHOUT_TRAY_LIBRARY: &str = r#"#!/bin/sh
exec unshare --mount --map-root-user -- sh -c '
for name in libayatana-appindicator3.so.1 libappindicator3.so.1; do
  for path in $(ldconfig -p | awk -v n="$name" "\$1 == n { print \$NF }"); do
    mount --bind /dev/null "$path" || exit 97
  done
done
exec "$0" "$@"' "$@"
"#;

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a display, D-Bus, tauri-driver, WebKitWebDriver and unshare: see the module docs"]
async fn without_the_tray_library_the_app_starts_and_says_so() {
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("claude-home");
    copy_tree(&std::path::Path::new(FIXTURES).join("claude-home"), &home);
    let launcher = work.path().join("without-tray-library");
    fs::write(&launcher, WITHOUT_TRAY_LIBRARY).expect("launcher");
    fs::set_permissions(&launcher, fs::Permissions::from_mode(0o755)).expect("chmod");

    let driver = TauriDriver::start(work.path());
    let client = driver.session_through(&launcher, &[], &home).await;

    // The window is up and works: the projects are listed.
    wait_for(&client, "tr[data-project]").await;
    let notice = wait_for(&client, "[data-testid='no-tray']").await;
    let text = notice.text().await.expect("notice text");
    assert!(
        text.contains("No tray icon") && text.contains("Neither libayatana-appindicator3.so.1"),
        "the window says why there is no tray: {text}"
    );
    screenshot(&client, "no-tray.png").await;
    assert!(
        driver
            .log_text()
            .contains("engram-app: No tray icon: neither libayatana-appindicator3.so.1"),
        "stderr says so too: {}",
        driver.log_text()
    );
    client.close().await.expect("close the session");
}
