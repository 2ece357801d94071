//! API keys in a real Secret Service: gnome-keyring on a private session bus started for this
//! test (never the machine's own keyring), reached the way Engram reaches a user's — the
//! `keyring` crate's Secret Service backend over zbus. One test in its own process, since it
//! points the process's `DBUS_SESSION_BUS_ADDRESS` at that bus. Skipped where `dbus-daemon` or
//! `gnome-keyring-daemon` is missing (`scripts/setup.sh --test` installs both). Linux only: the
//! Secret Service is the Linux keyring, and the daemons are found with `sh`.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memory_engine::llm::keys;
use memory_engine::llm::ProviderKind;
use memory_engine::Environment;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_key_is_stored_read_and_removed_in_a_real_secret_service() {
    if !installed("dbus-daemon") || !installed("gnome-keyring-daemon") {
        eprintln!("skipped: no dbus-daemon or gnome-keyring-daemon (scripts/setup.sh --test)");
        return;
    }
    let temp = tempfile::tempdir().expect("temp");
    let home = temp.path().join("home");
    let runtime = temp.path().join("run");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&runtime).expect("runtime");
    // What the daemon says goes to a file, shown if it never answers.
    let daemon_log = temp.path().join("gnome-keyring.log");
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon");
    let mut address = String::new();
    BufReader::new(bus.stdout.take().expect("stdout"))
        .read_line(&mut address)
        .expect("the bus address");
    let _bus = Killed(bus);
    let address = address.trim().to_owned();
    let mut keyring = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&daemon_log).expect("daemon log"))
        .spawn()
        .expect("gnome-keyring-daemon");
    // The login keyring's password (it is created with it), then end of input.
    keyring
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"test-password")
        .expect("password");
    let _keyring = Killed(keyring);
    // Only this test runs in this process: nothing else reads the variable meanwhile.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &address);

    // Asked before it has made the login keyring from the password (its file appears then), the
    // daemon has been seen to stay without a default collection for good: wait for the file.
    let login = home.join(".local/share/keyrings/login.keyring");
    let made_by = Instant::now() + Duration::from_secs(30);
    while !login.exists() && Instant::now() < made_by {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The daemon takes its bus name, then creates and unlocks the login collection, a moment
    // after starting; until then calls fail ("result not returned from SS API"). On a loaded
    // CI machine that moment has taken over 10 s, so the wait is generous: it only costs time
    // when the daemon is slow, and a daemon that never answers still fails the test.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match keys::keyring_set(ProviderKind::OpenAi, "  sk-real-secret-service \n") {
            Ok(()) => break,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!(
                "the Secret Service never answered: {e}\ngnome-keyring-daemon said:\n{}",
                std::fs::read_to_string(&daemon_log).unwrap_or_default()
            ),
        }
    }
    assert_eq!(
        keys::keyring_get(ProviderKind::OpenAi).expect("get"),
        Some("sk-real-secret-service".to_owned()),
        "stored trimmed"
    );
    assert_eq!(
        keys::keyring_get(ProviderKind::Anthropic).expect("get"),
        None,
        "another provider has none"
    );
    // As the app and the hook call it: on a tokio runtime's blocking pool.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let from_pool = runtime
        .block_on(runtime.spawn_blocking(|| keys::keyring_get(ProviderKind::OpenAi)))
        .expect("join")
        .expect("get");
    assert_eq!(from_pool.as_deref(), Some("sk-real-secret-service"));
    let status = keys::key_status(&Environment::empty(), ProviderKind::OpenAi);
    assert_eq!(status.source, "keyring");
    assert_eq!(status.keyring_error, None);
    // The environment still wins.
    let env = Environment::empty().with("OPENAI_API_KEY", "sk-env");
    assert_eq!(
        keys::api_key(&env, ProviderKind::OpenAi).as_deref(),
        Some("sk-env")
    );
    keys::keyring_delete(ProviderKind::OpenAi).expect("delete");
    assert_eq!(keys::keyring_get(ProviderKind::OpenAi).expect("get"), None);
    keys::keyring_delete(ProviderKind::OpenAi).expect("deleting nothing is fine");
}
