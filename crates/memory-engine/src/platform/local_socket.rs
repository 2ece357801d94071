//! The prompt hook's local socket (`hooks::server`): where it lives, listening on it, connecting
//! to it, and who is at the other end.
//!
//! Built on the `interprocess` crate's local sockets: one API over a Unix domain socket (Linux,
//! macOS) and a named pipe (Windows), with tokio on both, so the server's accept loop and the
//! hook's blocking client are the same code on every OS. Writing the Windows side ourselves would
//! mean a named-pipe server loop (one instance per client, overlapped I/O), its creation flags and
//! the client's busy-pipe waits against raw Win32: the crate has them, maintained and widely used.
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | where ([`socket_path`]) | `<engram home>/run/hook.sock` | same, or when that is over 103 bytes (`sun_path` holds 104 with its NUL) `$TMPDIR/engram-<hash of the run dir>/hook.sock` | the pipe `\\.\pipe\engram-hook-<hash of user and run dir>` |
//! | the place ([`check_run_dir`], [`check_before_connect`]) | a real dir of the user's, 0700; the socket the user's, 0600 | same | a pipe has no file: nothing to check |
//! | a live server ([`listen`]) | a connect succeeds: left alone; a dead socket file is replaced | same | the pipe name is taken (the first instance is exclusive) |
//! | who is at the other end ([`server_peer_uid`], [`ClientStream::peer_uid`]) | `SO_PEERCRED` (`rustix`) | `LOCAL_PEERCRED` (`interprocess`'s peer credentials) | not checked: `Unsupported`, so the server is never trusted |
//!
//! Only Linux is built and tested here. The macOS and Windows arms compile on those targets only
//! and are unverified (`docs/platforms.md`, row 1).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::traits::Stream as _;
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use sha2::{Digest, Sha256};

use super::Os;
use crate::error::{Error, Result};

/// The longest socket path macOS binds: `sun_path` is 104 bytes there, its NUL included.
pub const MAC_SOCKET_PATH_MAX: usize = 103;

/// The socket file's name inside the run dir.
const SOCKET_FILE: &str = "hook.sock";

fn socket_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{}: {e}", path.display()))
}

/// Where the hook's server listens for the Engram whose run dir is `run_dir`, on `os`: a plain
/// function, so Linux tests cover every form. `temp_dir` is the user's temp dir (macOS's
/// `$TMPDIR` is private to the user), `user` the account name (Windows' `USERNAME`).
///
/// - Unix: `<run_dir>/hook.sock`.
/// - macOS: the same while it fits [`MAC_SOCKET_PATH_MAX`]; past that `bind` would fail, so
///   `<temp_dir>/engram-<16 hex of SHA-256 of run_dir>/hook.sock`: one dir per data dir, made and
///   checked as the run dir is (the user's, 0700).
/// - Windows: `\\.\pipe\engram-hook-<32 hex of SHA-256 of user and run_dir>`: pipes live in one
///   namespace for the whole machine, so the name carries both, and two users or two data dirs
///   never meet on one pipe.
pub fn socket_path(os: Os, run_dir: &Path, temp_dir: &Path, user: &str) -> PathBuf {
    let in_run_dir = run_dir.join(SOCKET_FILE);
    match os {
        Os::Unix => in_run_dir,
        Os::Mac if in_run_dir.as_os_str().len() <= MAC_SOCKET_PATH_MAX => in_run_dir,
        Os::Mac => {
            let hash = hex(&Sha256::digest(run_dir.as_os_str().as_encoded_bytes())[..8]);
            temp_dir.join(format!("engram-{hash}")).join(SOCKET_FILE)
        }
        Os::Windows => PathBuf::from(pipe_name(user, run_dir)),
    }
}

/// The Windows pipe of `user`'s Engram whose run dir is `run_dir` (see [`socket_path`]). The user
/// name is compared without case, as Windows compares account names.
pub fn pipe_name(user: &str, run_dir: &Path) -> String {
    let mut hasher = Sha256::new();
    hasher.update(user.to_lowercase().as_bytes());
    hasher.update([0]);
    hasher.update(run_dir.as_os_str().as_encoded_bytes());
    format!(r"\\.\pipe\engram-hook-{}", hex(&hasher.finalize()[..16]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `path` is a Windows named pipe rather than a file.
fn is_pipe(path: &Path) -> bool {
    path.as_os_str()
        .to_string_lossy()
        .to_ascii_lowercase()
        .starts_with(r"\\.\pipe\")
}

/// Fails unless `dir` is a directory itself (not a symlink to one) owned by this user, and, with
/// `private`, closed to everyone else (mode 0700): a server listening there is then this user's.
/// A missing `dir` is [`Error::NotFound`].
pub fn check_run_dir(dir: &Path, private: bool) -> Result<()> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io(dir, e))?;
    if meta.file_type().is_symlink() {
        return Err(socket_error(dir, "a symlink, not a directory of its own"));
    }
    if !meta.is_dir() {
        return Err(socket_error(dir, "not a directory"));
    }
    imp::check_owner_and_mode(dir, &meta, private)
}

/// Whether a server may be asked at `path` (`Ok(false)`: no server there), checked before
/// connecting so that nothing is sent to a socket others could have put there: its dir must pass
/// [`check_run_dir`] as private (0700), and the socket be a socket owned by this user. A Windows
/// pipe has no file: nothing to check here (the peer check refuses it, see the module docs).
pub fn check_before_connect(path: &Path) -> Result<bool> {
    if is_pipe(path) {
        return Ok(true);
    }
    let dir = path
        .parent()
        .ok_or_else(|| socket_error(path, "no parent directory"))?;
    match check_run_dir(dir, true) {
        Err(Error::NotFound(_)) => return Ok(false),
        checked => checked?,
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
        Ok(meta) => imp::check_socket_meta(path, &meta).map(|()| true),
    }
}

/// The hook server's listening socket.
pub struct Listener(interprocess::local_socket::tokio::Listener);

/// The directory a socket file at `path` lives in, which the caller makes before [`listen`]
/// (with `disk::create_dir_all`, which keeps Engram's data dir private); `None` for a Windows
/// pipe, which has none.
pub fn socket_dir(path: &Path) -> Option<&Path> {
    if is_pipe(path) {
        return None;
    }
    path.parent()
}

/// Listens at `path` ([`socket_path`]), or `None` when a live process already answers there. A
/// file socket's dir ([`socket_dir`], made by the caller) must be the user's own, not a symlink,
/// and is made 0700; a socket file left by a process that died is replaced; the socket is made
/// 0600. Needs a tokio runtime.
pub fn listen(path: &Path) -> Result<Option<Listener>> {
    let Some(dir) = socket_dir(path) else {
        return listen_on(path);
    };
    // Not through a symlink, and not in another user's directory: hooks would refuse it.
    check_run_dir(dir, false)?;
    super::fs::set_mode(dir, 0o700).map_err(|e| socket_error(dir, e))?;
    if path.exists() {
        if connect(path).is_ok() {
            return Ok(None);
        }
        // Left by a process that died: nobody answers on it.
        std::fs::remove_file(path).map_err(|e| socket_error(path, e))?;
    }
    let listener = listen_on(path)?;
    super::fs::set_mode(path, 0o600).map_err(|e| socket_error(path, e))?;
    Ok(listener)
}

fn listen_on(path: &Path) -> Result<Option<Listener>> {
    let name = path
        .to_fs_name::<GenericFilePath>()
        .map_err(|e| socket_error(path, e))?;
    match imp::options(ListenerOptions::new().name(name)).create_tokio() {
        Ok(listener) => Ok(Some(Listener(listener))),
        // A pipe's first instance is exclusive: the name is taken by a live server.
        Err(e) if is_pipe(path) && imp::name_taken(&e) => Ok(None),
        Err(e) => Err(socket_error(path, e)),
    }
}

impl Listener {
    /// The next connection.
    pub async fn accept(&self) -> io::Result<ServerStream> {
        self.0.accept().await
    }
}

/// A connection the server accepted. `&ServerStream` reads and writes (tokio's `AsyncRead`,
/// `AsyncWrite`), so one connection is read and answered without splitting it.
pub type ServerStream = interprocess::local_socket::tokio::Stream;

/// The user of the process that connected to the server, as the kernel recorded it when it
/// connected: not something that process can claim. `Unsupported` where it is not checked.
pub fn server_peer_uid(stream: &ServerStream) -> io::Result<u32> {
    imp::server_peer_uid(stream)
}

/// The hook's connection to a server: blocking, plain reads and writes with timeouts.
pub struct ClientStream(interprocess::local_socket::Stream);

/// Connects to the server at `path`, blocking until it accepts (a full queue blocks: the caller
/// bounds the wait). `NotFound` or `ConnectionRefused`: no server there (none, or a socket file
/// left by a process that died).
pub fn connect(path: &Path) -> io::Result<ClientStream> {
    let name = path.to_fs_name::<GenericFilePath>()?;
    interprocess::local_socket::Stream::connect(name).map(ClientStream)
}

impl ClientStream {
    /// The user of the process listening, as the kernel recorded it. `Unsupported` where it is
    /// not checked.
    pub fn peer_uid(&self) -> io::Result<u32> {
        imp::client_peer_uid(&self.0)
    }

    /// `Unsupported` on Windows: the crate's blocking named pipes have no timeouts (see the
    /// Windows `imp`).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.0.set_recv_timeout(timeout)
    }

    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.0.set_send_timeout(timeout)
    }
}

impl Read for ClientStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for ClientStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The user id this process acts as: the user whose memory this is. `None` where users have no
/// number (Windows).
pub fn own_uid() -> Option<u32> {
    imp::own_uid()
}

#[cfg(unix)]
mod imp {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    use interprocess::local_socket::{tokio::Stream as AsyncStream, ListenerOptions, Stream};

    use super::*;

    pub fn own_uid() -> Option<u32> {
        Some(rustix::process::geteuid().as_raw())
    }

    fn uid() -> u32 {
        rustix::process::geteuid().as_raw()
    }

    pub fn check_owner_and_mode(dir: &Path, meta: &std::fs::Metadata, private: bool) -> Result<()> {
        let (owner, own) = (meta.uid(), uid());
        if owner != own {
            return Err(socket_error(
                dir,
                format!("owned by uid {owner}, not by this user (uid {own})"),
            ));
        }
        let mode = meta.mode() & 0o777;
        if private && mode != 0o700 {
            return Err(socket_error(
                dir,
                format!("mode {mode:04o}, not 0700: others could answer in Engram's place"),
            ));
        }
        Ok(())
    }

    pub fn check_socket_meta(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
        if !meta.file_type().is_socket() {
            return Err(socket_error(path, "not a socket"));
        }
        if meta.uid() != uid() {
            return Err(socket_error(
                path,
                format!("owned by uid {}, not by this user", meta.uid()),
            ));
        }
        Ok(())
    }

    /// On Linux the socket is created 0600 before it is bound (`fchmod`, no umask window); the
    /// caller sets 0600 after binding on every Unix too.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn options(options: ListenerOptions<'_>) -> ListenerOptions<'_> {
        use interprocess::os::unix::local_socket::ListenerOptionsExt;
        options.mode(0o600)
    }

    /// Elsewhere (macOS) the crate does not list a mode before `bind` as supported (it would
    /// fail the listen with `Unsupported`): the socket is made 0600 right after, inside the 0700
    /// dir no one else can enter.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn options(options: ListenerOptions<'_>) -> ListenerOptions<'_> {
        options
    }

    pub fn name_taken(_e: &io::Error) -> bool {
        false
    }

    /// Linux: `SO_PEERCRED` on the raw descriptor, as the kernel recorded the peer at connect.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn server_peer_uid(stream: &AsyncStream) -> io::Result<u32> {
        match stream {
            AsyncStream::UdSocket(socket) => {
                Ok(rustix::net::sockopt::socket_peercred(socket.inner())?
                    .uid
                    .as_raw())
            }
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn client_peer_uid(stream: &Stream) -> io::Result<u32> {
        match stream {
            Stream::UdSocket(socket) => Ok(rustix::net::sockopt::socket_peercred(socket.inner())?
                .uid
                .as_raw()),
        }
    }

    /// macOS and the BSDs: the crate's peer credentials (`LOCAL_PEERCRED`'s `xucred` on macOS),
    /// the effective uid the kernel recorded at connect.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn server_peer_uid(stream: &AsyncStream) -> io::Result<u32> {
        use interprocess::local_socket::traits::StreamCommon as _;
        euid(stream.peer_creds()?.euid())
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn client_peer_uid(stream: &Stream) -> io::Result<u32> {
        use interprocess::local_socket::traits::StreamCommon as _;
        euid(stream.peer_creds()?.euid())
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn euid(uid: Option<u32>) -> io::Result<u32> {
        uid.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "this platform does not say who is at the other end of a socket",
            )
        })
    }
}

#[cfg(windows)]
mod imp {
    use interprocess::local_socket::{tokio::Stream as AsyncStream, ListenerOptions, Stream};

    use super::*;

    pub fn own_uid() -> Option<u32> {
        None
    }

    /// Windows has no owner uid and modes on a dir: the profile's ACL keeps the run dir private.
    pub fn check_owner_and_mode(
        _dir: &Path,
        _meta: &std::fs::Metadata,
        _private: bool,
    ) -> Result<()> {
        Ok(())
    }

    pub fn check_socket_meta(path: &Path, _meta: &std::fs::Metadata) -> Result<()> {
        Err(socket_error(path, "not a named pipe"))
    }

    /// The crate's defaults: the first instance exclusive (`FILE_FLAG_FIRST_PIPE_INSTANCE`),
    /// remote clients rejected, and Windows' default security descriptor for pipes (full control
    /// for the creator, SYSTEM and Administrators; read only for Everyone, who so cannot send a
    /// request). Unverified: no Windows build here.
    pub fn options(options: ListenerOptions<'_>) -> ListenerOptions<'_> {
        options
    }

    /// Creating a pipe whose first instance exists fails with `ERROR_ACCESS_DENIED` (or
    /// `ERROR_PIPE_BUSY`).
    pub fn name_taken(e: &io::Error) -> bool {
        matches!(e.raw_os_error(), Some(5 | 231)) || e.kind() == io::ErrorKind::AddrInUse
    }

    /// Not checked yet (it needs the peer's token: the crate's peer credentials give its PID
    /// (`GetNamedPipeClientProcessId` / `GetNamedPipeServerProcessId`), then `OpenProcessToken`
    /// and the user's SID): the server answers no one and the hook never trusts a server, so it
    /// always recalls by itself. Also to do before a Windows hook can be served: the crate's
    /// blocking pipes have no read or write timeouts, so the hook's reads must run on a thread
    /// bounded by its deadline, as its connect already does (`hooks::server::greeted`).
    pub fn server_peer_uid(_stream: &AsyncStream) -> io::Result<u32> {
        Err(unchecked())
    }

    pub fn client_peer_uid(_stream: &Stream) -> io::Result<u32> {
        Err(unchecked())
    }

    fn unchecked() -> io::Error {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "who is at the other end of a named pipe is not checked yet",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_in_the_run_dir_on_unix_and_on_macos_while_the_path_fits() {
        let run = Path::new("/home/me/.local/share/engram/run");
        let temp = Path::new("/var/folders/xy/abcdefgh/T");
        assert_eq!(
            socket_path(Os::Unix, run, temp, "me"),
            run.join("hook.sock")
        );
        assert_eq!(socket_path(Os::Mac, run, temp, "me"), run.join("hook.sock"));
        // A Unix socket path is not limited to macOS's length on Linux.
        let deep = Path::new("/home/me").join("d".repeat(200)).join("run");
        assert_eq!(
            socket_path(Os::Unix, &deep, temp, "me"),
            deep.join("hook.sock")
        );
    }

    #[test]
    fn a_macos_socket_path_over_103_bytes_moves_under_the_temp_dir_keyed_by_the_data_dir() {
        let temp = Path::new("/var/folders/xy/abcdefgh/T");
        // Exactly 103 bytes fits; 104 does not.
        let prefix = "/Users/me/";
        let fits = |total: usize| {
            let name = "r".repeat(total - prefix.len() - "/hook.sock".len());
            Path::new(prefix).join(name)
        };
        let at_limit = fits(MAC_SOCKET_PATH_MAX);
        assert_eq!(
            socket_path(Os::Mac, &at_limit, temp, "me")
                .as_os_str()
                .len(),
            MAC_SOCKET_PATH_MAX
        );
        assert_eq!(
            socket_path(Os::Mac, &at_limit, temp, "me"),
            at_limit.join("hook.sock")
        );

        let over = fits(MAC_SOCKET_PATH_MAX + 1);
        let moved = socket_path(Os::Mac, &over, temp, "me");
        assert!(moved.starts_with(temp), "{}", moved.display());
        assert_eq!(
            moved.file_name().and_then(|n| n.to_str()),
            Some("hook.sock")
        );
        let dir = moved
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        assert!(
            dir.is_some_and(|d| d.starts_with("engram-") && d.len() == "engram-".len() + 16),
            "{dir:?}"
        );
        assert!(moved.as_os_str().len() <= MAC_SOCKET_PATH_MAX);
        // The same data dir always lands on the same socket; another data dir elsewhere.
        assert_eq!(socket_path(Os::Mac, &over, temp, "me"), moved);
        let other = fits(MAC_SOCKET_PATH_MAX + 2);
        assert_ne!(socket_path(Os::Mac, &other, temp, "me"), moved);
    }

    #[test]
    fn the_windows_pipe_is_named_for_the_user_and_the_data_dir() {
        let run = Path::new(r"C:\Users\me\AppData\Local\engram\run");
        let temp = Path::new(r"C:\Users\me\AppData\Local\Temp");
        let pipe = socket_path(Os::Windows, run, temp, "me");
        let name = pipe.to_str().expect("utf-8");
        assert!(name.starts_with(r"\\.\pipe\engram-hook-"), "{name}");
        assert_eq!(name.len(), r"\\.\pipe\engram-hook-".len() + 32);
        assert!(is_pipe(&pipe));
        assert_eq!(pipe_name("me", run), name);
        // Stable, and the account name compared as Windows does, without case.
        assert_eq!(pipe_name("ME", run), name);
        // Another user, or another data dir: another pipe.
        assert_ne!(pipe_name("you", run), name);
        assert_ne!(
            pipe_name("me", Path::new(r"D:\engram\run")),
            name,
            "another data dir"
        );
        // The user and the dir do not run into each other.
        assert_ne!(
            pipe_name("me", Path::new("x")),
            pipe_name("mex", Path::new(""))
        );
        assert!(!is_pipe(Path::new("/home/me/run/hook.sock")));
    }

    /// The real socket through this interface: private, each end sees the other's user, a live
    /// server is left alone, a dead one's socket file replaced, the file gone with the listener.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_socket_is_private_each_end_sees_its_user_and_a_dead_one_is_replaced() {
        use std::os::unix::fs::PermissionsExt;

        let temp = tempfile::tempdir().expect("temp");
        let path = temp.path().join("engram/run/hook.sock");
        assert!(
            !check_before_connect(&path).expect("no run dir"),
            "nothing there"
        );
        std::fs::create_dir_all(socket_dir(&path).expect("a dir")).expect("run dir");
        let listener = listen(&path).expect("listen").expect("bound");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("run")), 0o700);
        assert!(check_before_connect(&path).expect("checked"));

        let own = own_uid().expect("a uid");
        let mut client = connect(&path).expect("connect");
        let server_side = listener.accept().await.expect("accept");
        assert_eq!(server_peer_uid(&server_side).expect("peer"), own);
        assert_eq!(client.peer_uid().expect("peer"), own);
        client.write_all(b"ping\n").expect("write");
        let mut got = String::new();
        tokio::io::AsyncBufReadExt::read_line(
            &mut tokio::io::BufReader::new(&server_side),
            &mut got,
        )
        .await
        .expect("read");
        assert_eq!(got, "ping\n");

        assert!(
            listen(&path).expect("second").is_none(),
            "a live server is left alone"
        );
        drop(server_side);
        drop(listener);
        assert!(!path.exists(), "the socket goes with its listener");
        assert!(
            connect(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound),
            "no server: not found"
        );

        // A socket file nobody listens on (its process died) is replaced.
        drop(std::os::unix::net::UnixListener::bind(&path).expect("a dead server's"));
        assert!(path.exists());
        assert!(connect(&path).is_err_and(|e| e.kind() == io::ErrorKind::ConnectionRefused));
        let replaced = listen(&path).expect("listen").expect("replaced");
        connect(&path).expect("the new server answers");
        drop(replaced);
    }
}
