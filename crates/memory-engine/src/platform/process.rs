//! Processes: whether a PID is alive, asking one to stop, and starting a detached child.
//! Unix through `rustix` (safe wrappers over `kill`); Windows through `windows-sys`, compiled only
//! there — it has never been built on this project's Linux machine, so treat it as unverified.

use std::process::Command;

use crate::error::{Error, Result};

/// Whether `pid` is a live process. PID ≤ 1 counts as dead (0 is "this group", 1 is init: never a
/// lock holder). A process owned by another user is alive (Unix `EPERM`).
pub fn alive(pid: u32) -> bool {
    if pid <= 1 {
        return false;
    }
    imp::alive(pid)
}

/// Asks process `pid` to stop: SIGTERM on Unix (the process rolls back its own work), a hard
/// `TerminateProcess` on Windows (no signal exists there).
pub fn terminate(pid: u32) -> Result<()> {
    imp::terminate(pid)
}

/// Makes `command` start detached from the caller: on Unix in its own process group, so a parent
/// ending its group (Claude Code ending a hook) does not end the child; on Windows without a
/// console and in a new process group.
pub fn detach(command: &mut Command) -> &mut Command {
    imp::detach(command)
}

/// Makes `command` start without a console window of its own: on Windows, a console program
/// (git) started by a GUI app otherwise flashes one; elsewhere nothing to do.
pub fn no_console(command: &mut Command) -> &mut Command {
    imp::no_console(command)
}

#[cfg(unix)]
mod imp {
    use std::os::unix::process::CommandExt;

    use super::*;

    fn pid(pid: u32) -> Option<rustix::process::Pid> {
        i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
    }

    pub fn alive(raw: u32) -> bool {
        let Some(pid) = pid(raw) else {
            return false;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            Err(e) => e == rustix::io::Errno::PERM,
        }
    }

    pub fn terminate(raw: u32) -> Result<()> {
        let target =
            pid(raw).ok_or_else(|| Error::InvalidInput(format!("{raw}: not a process id")))?;
        rustix::process::kill_process(target, rustix::process::Signal::TERM)
            .map_err(|e| Error::InvalidInput(format!("cannot stop process {raw}: {e}")))
    }

    pub fn detach(command: &mut Command) -> &mut Command {
        command.process_group(0)
    }

    pub fn no_console(command: &mut Command) -> &mut Command {
        command
    }
}

#[cfg(windows)]
#[allow(unsafe_code)] // FFI calls into kernel32; each block states why it is sound.
mod imp {
    use std::os::windows::process::CommandExt;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, TerminateProcess, CREATE_NEW_PROCESS_GROUP,
        CREATE_NO_WINDOW, DETACHED_PROCESS, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_TERMINATE,
    };

    use super::*;

    /// An open process handle, closed on drop.
    struct Handle(HANDLE);

    impl Handle {
        fn open(access: u32, pid: u32) -> Option<Handle> {
            // SAFETY: OpenProcess takes plain integers and returns a handle or null.
            let handle = unsafe { OpenProcess(access, 0, pid) };
            (!handle.is_null()).then_some(Handle(handle))
        }
    }

    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: the handle came from OpenProcess and is closed exactly once.
            unsafe { CloseHandle(self.0) };
        }
    }

    pub fn alive(pid: u32) -> bool {
        let Some(handle) = Handle::open(PROCESS_QUERY_LIMITED_INFORMATION, pid) else {
            // Access denied means the process exists (another user's); anything else: gone.
            return std::io::Error::last_os_error().raw_os_error() == Some(5);
        };
        let mut code = 0u32;
        // SAFETY: a valid handle and a pointer to a live u32.
        let ok = unsafe { GetExitCodeProcess(handle.0, &mut code) } != 0;
        !ok || code == STILL_ACTIVE as u32
    }

    pub fn terminate(pid: u32) -> Result<()> {
        let handle = Handle::open(PROCESS_TERMINATE, pid).ok_or_else(|| {
            Error::InvalidInput(format!(
                "cannot stop process {pid}: {}",
                std::io::Error::last_os_error()
            ))
        })?;
        // SAFETY: a valid handle opened with PROCESS_TERMINATE.
        if unsafe { TerminateProcess(handle.0, 1) } == 0 {
            return Err(Error::InvalidInput(format!(
                "cannot stop process {pid}: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(())
    }

    pub fn detach(command: &mut Command) -> &mut Command {
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW)
    }

    pub fn no_console(command: &mut Command) -> &mut Command {
        command.creation_flags(CREATE_NO_WINDOW)
    }
}

#[cfg(not(any(unix, windows)))]
mod imp {
    use super::*;

    pub fn alive(_pid: u32) -> bool {
        true
    }

    pub fn terminate(pid: u32) -> Result<()> {
        Err(Error::InvalidInput(format!(
            "stopping process {pid} is not supported on this platform"
        )))
    }

    pub fn detach(command: &mut Command) -> &mut Command {
        command
    }

    pub fn no_console(command: &mut Command) -> &mut Command {
        command
    }
}

// Unix only: the tests use `sleep`, `sh` and `ps`; the Windows arm is unverified (see the module doc).
#[cfg(all(test, unix))]
mod tests {
    use std::process::Stdio;

    use super::*;

    /// A PID that was alive a moment ago and is now reaped.
    fn dead_pid() -> u32 {
        let mut child = Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("wait");
        pid
    }

    #[test]
    fn alive_tells_a_running_process_from_a_reaped_one() {
        assert!(!alive(0));
        assert!(!alive(1));
        assert!(alive(std::process::id()));
        assert!(!alive(dead_pid()));
    }

    #[test]
    fn terminate_stops_a_real_child_and_refuses_a_bad_pid() {
        let mut child = Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("spawn sleep");
        terminate(child.id()).expect("terminate");
        let status = child.wait().expect("wait");
        assert!(!status.success());
        assert!(terminate(u32::MAX).is_err());
    }

    #[test]
    fn a_detached_child_leads_its_own_process_group() {
        let mut command = Command::new("sh");
        command
            .args(["-c", "ps -o pgid= -p $$"])
            .stdout(Stdio::piped());
        let child = detach(&mut command).spawn().expect("run sh");
        let pid = child.id();
        let out = child.wait_with_output().expect("wait");
        let pgid: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("pgid");
        assert_eq!(pgid, pid, "the child did not get its own process group");
    }
}
