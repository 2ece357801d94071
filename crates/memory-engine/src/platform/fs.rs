//! File-system calls whose behaviour differs per OS: permission modes, the atomic exchange of
//! two paths, positioned reads, canonical paths, renames over files others hold open, and the
//! non-blocking open that keeps a FIFO from hanging a read.

use std::fs::{self, DirBuilder, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Sets the mode a file created through `options` gets (Unix); Windows has no modes — files
/// under the user's profile are private through its ACL — so nothing is set there.
pub fn create_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    options
}

/// Sets the mode directories created through `builder` get (Unix; nothing elsewhere, as
/// [`create_mode`]).
pub fn dir_create_mode(builder: &mut DirBuilder, mode: u32) -> &mut DirBuilder {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    builder
}

/// Sets `path`'s permission bits to `mode` (Unix; nothing elsewhere, as [`create_mode`]).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Whether the file `meta` describes belongs to the user running this process and lets others
/// (group, world) in. Always false where there are no modes.
pub fn ours_and_open_to_others(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o077 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// A stable identity of the file `meta` describes — `(device, inode)` on Unix — so a reader can
/// tell a file replaced at the same path. `(0, 0)` elsewhere (no replacement is detected).
pub fn file_identity(meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// What a file that is not a regular file or a directory is, in words, where the OS says.
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some("a device");
        }
    }
    let _ = meta;
    None
}

/// Makes `options` open without blocking (Unix `O_NONBLOCK`): an ordinary open of a FIFO put in
/// a file's place waits for a writer forever. With `no_follow`, a symlink at the path fails the
/// open (`O_NOFOLLOW`). Windows has neither FIFOs in the file system nor that hazard: nothing set.
pub fn open_nonblocking(options: &mut OpenOptions, no_follow: bool) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = OFlags::NONBLOCK;
        if no_follow {
            flags |= OFlags::NOFOLLOW;
        }
        options.custom_flags(flags.bits() as i32);
    }
    #[cfg(not(unix))]
    let _ = no_follow;
    options
}

/// Fills `buf` from `file` at `offset` without moving a shared cursor on Unix (`pread`). On
/// Windows `seek_read` may return fewer bytes and does move the cursor: it is looped here, and
/// callers never rely on the cursor.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], offset + done as u64) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// The canonical, absolute form of `path` with every symlink resolved. Through `dunce`: on
/// Windows `std::fs::canonicalize` returns `\\?\C:\…` verbatim paths, which Claude Code never
/// writes — sanitised into a project key they name another folder (`----C--Users-…` instead of
/// `C--Users-…`), and in a hook command they are not what Node spawns. `dunce` strips the prefix
/// whenever the plain form means the same path, and is `std::fs::canonicalize` elsewhere.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// [`fs::rename`]; on Windows retried a bounded number of times (about a second in all) while
/// it fails with "access denied" or "sharing violation" (os errors 5 and 32), which is what a
/// virus scanner or the search indexer holding the target open for a moment gives.
pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(windows)]
    {
        const ATTEMPTS: u32 = 10;
        let mut attempt = 1;
        loop {
            match fs::rename(from, to) {
                Err(e) if attempt < ATTEMPTS && matches!(e.raw_os_error(), Some(5 | 32)) => {
                    std::thread::sleep(std::time::Duration::from_millis(10 << attempt.min(4)));
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
    #[cfg(not(windows))]
    fs::rename(from, to)
}

/// What [`exchange`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Exchanged {
    /// `temp` and `target` swapped atomically: `temp` now holds what `target` held.
    Swapped,
    /// There was no `target`: `temp` was renamed to it, and a file appearing meanwhile would
    /// have been exchanged instead of clobbered.
    Created,
    /// This OS or file system has no atomic exchange: nothing was done; the caller reads the
    /// target, renames, and re-checks what it merged (the documented fallback).
    Unsupported,
}

/// Atomically exchanges `temp` and `target`: `renameat2(RENAME_EXCHANGE)` on Linux,
/// `renameatx_np(RENAME_SWAP)` on macOS (both through `rustix::fs::renameat_with`); a missing
/// target is created with `RENAME_NOREPLACE` / `RENAME_EXCL`. Elsewhere (Windows: `ReplaceFileW`
/// is not an exchange) and on file systems that refuse it, [`Exchanged::Unsupported`].
pub fn exchange(temp: &Path, target: &Path) -> io::Result<Exchanged> {
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        loop {
            match renameat_with(CWD, temp, CWD, target, RenameFlags::EXCHANGE) {
                Ok(()) => return Ok(Exchanged::Swapped),
                Err(Errno::NOENT) if temp.exists() => {
                    match renameat_with(CWD, temp, CWD, target, RenameFlags::NOREPLACE) {
                        Ok(()) => return Ok(Exchanged::Created),
                        // Created meanwhile: exchange with it instead.
                        Err(Errno::EXIST) => continue,
                        // FUSE file systems (a FAT stick through `fusefat`) refuse the flag.
                        Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {
                            return Ok(Exchanged::Unsupported)
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {
                    return Ok(Exchanged::Unsupported)
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (temp, target);
        Ok(Exchanged::Unsupported)
    }
}

/// Flushes the whole file system holding `root` in one call (`syncfs` on Linux: one journal
/// commit for thousands of files). `Ok(false)`: not available here; flush each file instead.
pub fn sync_filesystem(root: &Path) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        let dir = File::open(root)?;
        rustix::fs::syncfs(&dir)?;
        Ok(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        Ok(false)
    }
}

/// Makes `files` (all on the file system holding `root`) durable with as few drive flushes as
/// the OS allows: Linux one `syncfs` for them all; elsewhere the steps of [`flush_steps`].
pub fn sync_files(root: &Path, files: &[&Path]) -> io::Result<()> {
    if sync_filesystem(root)? {
        return Ok(());
    }
    run_flush_steps(files, &flush_steps(super::Os::CURRENT, files.len()))
}

/// One step of flushing many files without `syncfs`, by index into the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushStep {
    /// Plain `fsync(2)`: the data reaches the drive, perhaps only its cache (macOS).
    Fsync(usize),
    /// `fcntl(F_FULLFSYNC)`: the drive writes out its whole cache, every file's included.
    DriveFlush(usize),
    /// [`File::sync_all`]: `FlushFileBuffers` on Windows, `fsync` elsewhere.
    SyncAll(usize),
}

/// How `count` files are flushed on `os` when there is no `syncfs`. On macOS `sync_all` is
/// `F_FULLFSYNC`, a full drive-cache flush per file (seconds for 20,000 files), so each file gets
/// a plain `fsync` and then one `F_FULLFSYNC` (on the last file) empties the drive's cache for
/// all of them. Elsewhere each file is flushed on its own.
pub fn flush_steps(os: super::Os, count: usize) -> Vec<FlushStep> {
    match os {
        super::Os::Mac if count > 0 => (0..count)
            .map(FlushStep::Fsync)
            .chain([FlushStep::DriveFlush(count - 1)])
            .collect(),
        _ => (0..count).map(FlushStep::SyncAll).collect(),
    }
}

fn run_flush_steps(files: &[&Path], steps: &[FlushStep]) -> io::Result<()> {
    for step in steps {
        let (FlushStep::Fsync(i) | FlushStep::DriveFlush(i) | FlushStep::SyncAll(i)) = *step;
        let path = files
            .get(i)
            .ok_or_else(|| io::Error::other("flush step out of range"))?;
        let flushed = OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|file| match step {
                FlushStep::Fsync(_) => plain_fsync(&file),
                FlushStep::DriveFlush(_) => drive_flush(&file),
                FlushStep::SyncAll(_) => file.sync_all(),
            });
        // The caller names the root; say which file it was.
        flushed.map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// `fsync(2)` itself (std's `sync_all` is `F_FULLFSYNC` on macOS).
fn plain_fsync(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        rustix::fs::fsync(file).map_err(io::Error::from)
    }
    #[cfg(not(unix))]
    {
        file.sync_all()
    }
}

/// `F_FULLFSYNC` on macOS; elsewhere (where [`flush_steps`] never asks for it, but tests run the
/// macOS steps) `sync_all`.
fn drive_flush(file: &File) -> io::Result<()> {
    #[cfg(target_os = "macos")]
    {
        rustix::fs::fcntl_fullfsync(file).map_err(io::Error::from)
    }
    #[cfg(not(target_os = "macos"))]
    {
        file.sync_all()
    }
}

/// Whether an I/O error is "too many levels of symbolic links" (a loop): `ELOOP` on Unix,
/// `ERROR_CANT_RESOLVE_FILENAME` (1921) on Windows.
pub fn is_symlink_loop(error: &io::Error) -> bool {
    #[cfg(unix)]
    {
        rustix::io::Errno::from_io_error(error) == Some(rustix::io::Errno::LOOP)
    }
    #[cfg(windows)]
    {
        error.raw_os_error() == Some(1921)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = error;
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn modes_are_set_on_create_and_on_demand() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        create_mode(OpenOptions::new().write(true).create(true), 0o600)
            .open(&file)
            .expect("create");
        assert_eq!(mode(&file), 0o600);
        let sub = dir.path().join("d");
        dir_create_mode(&mut DirBuilder::new(), 0o700)
            .create(&sub)
            .expect("mkdir");
        assert_eq!(mode(&sub), 0o700);
        set_mode(&sub, 0o755).expect("chmod");
        assert!(ours_and_open_to_others(&fs::metadata(&sub).expect("stat")));
        set_mode(&sub, 0o700).expect("chmod");
        assert!(!ours_and_open_to_others(&fs::metadata(&sub).expect("stat")));
    }

    #[test]
    fn read_at_reads_exactly_there_and_fails_past_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        fs::File::create(&path)
            .and_then(|mut f| f.write_all(b"0123456789"))
            .expect("write");
        let file = File::open(&path).expect("open");
        let mut buf = [0u8; 3];
        read_at(&file, &mut buf, 4).expect("read");
        assert_eq!(&buf, b"456");
        assert!(read_at(&file, &mut buf, 8).is_err());
    }

    #[test]
    fn exchange_swaps_or_creates_atomically() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (temp, target) = (dir.path().join("temp"), dir.path().join("target"));
        fs::write(&temp, "new").expect("write");
        assert_eq!(
            exchange(&temp, &target).expect("create"),
            Exchanged::Created
        );
        assert_eq!(fs::read_to_string(&target).expect("read"), "new");
        assert!(!temp.exists());
        fs::write(&temp, "newer").expect("write");
        assert_eq!(exchange(&temp, &target).expect("swap"), Exchanged::Swapped);
        assert_eq!(fs::read_to_string(&target).expect("read"), "newer");
        assert_eq!(fs::read_to_string(&temp).expect("read"), "new");
    }

    #[test]
    fn canonicalize_resolves_links_and_symlink_loops_are_recognised() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = canonicalize(dir.path()).expect("canonical");
        std::os::unix::fs::symlink(&real, real.join("link")).expect("symlink");
        assert_eq!(canonicalize(&real.join("link")).expect("canonical"), real);
        std::os::unix::fs::symlink(real.join("loop"), real.join("loop")).expect("symlink");
        let err = fs::metadata(real.join("loop")).expect_err("a loop");
        assert!(is_symlink_loop(&err));
        assert!(!is_symlink_loop(&io::Error::from(io::ErrorKind::NotFound)));
    }

    #[test]
    fn a_fifo_is_named_and_opened_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let file = open_nonblocking(OpenOptions::new().read(true), false)
            .open(&fifo)
            .expect("open without a writer returns at once");
        assert_eq!(
            special_kind(&file.metadata().expect("stat")),
            Some("a FIFO")
        );
        assert_eq!(special_kind(&fs::metadata(dir.path()).expect("stat")), None);
    }

    #[test]
    fn macos_flushes_each_file_plainly_then_the_drive_once() {
        use super::super::Os;
        use FlushStep::*;
        assert_eq!(
            flush_steps(Os::Mac, 3),
            vec![Fsync(0), Fsync(1), Fsync(2), DriveFlush(2)]
        );
        assert_eq!(flush_steps(Os::Mac, 0), vec![]);
        for os in [Os::Windows, Os::Unix] {
            assert_eq!(flush_steps(os, 2), vec![SyncAll(0), SyncAll(1)]);
        }
    }

    #[test]
    fn every_flush_plan_runs_on_real_files_and_names_a_missing_one() {
        use super::super::Os;
        let dir = tempfile::tempdir().expect("tempdir");
        let paths: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("{i}.md"))).collect();
        for path in &paths {
            fs::write(path, "x").expect("write");
        }
        let files: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        sync_files(dir.path(), &files).expect("this OS's way");
        for os in [Os::Mac, Os::Windows, Os::Unix] {
            run_flush_steps(&files, &flush_steps(os, files.len())).expect("flushed");
        }
        let gone = dir.path().join("gone.md");
        let err = run_flush_steps(&[&gone], &flush_steps(Os::Mac, 1)).expect_err("missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("gone.md"), "{err}");
    }
}
