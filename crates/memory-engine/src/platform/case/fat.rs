//! A real case-insensitive directory for tests: a FAT image mounted through FUSE (`fusefat`,
//! made with `mkfs.vfat`). This container's kernel has no `CONFIG_UNICODE`, so an ext4
//! `casefold` image cannot be mounted; FAT folds case as APFS and NTFS do by default (and keeps
//! the spelling a name was created with). Needs the two tools and `/dev/fuse`; when any is
//! missing, [`CaseInsensitiveDir::mount`] says which, and the test skips with that reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted case-insensitive directory, unmounted on drop.
pub struct CaseInsensitiveDir {
    mount: PathBuf,
    _holder: tempfile::TempDir,
}

impl CaseInsensitiveDir {
    /// Makes a 16 MB FAT image in a temp dir and mounts it read-write; `Err` says why not.
    pub fn mount() -> Result<CaseInsensitiveDir, String> {
        let holder = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let image = holder.path().join("fat.img");
        let mount = holder.path().join("mnt");
        std::fs::create_dir(&mount).map_err(|e| format!("mkdir: {e}"))?;
        let file = std::fs::File::create(&image).map_err(|e| format!("image: {e}"))?;
        file.set_len(16 << 20).map_err(|e| format!("image: {e}"))?;
        drop(file);
        run(Command::new("mkfs.vfat").arg(&image))?;
        run(Command::new("fusefat")
            .arg("-o")
            .arg("rw+")
            .arg(&image)
            .arg(&mount))?;
        Ok(CaseInsensitiveDir {
            mount,
            _holder: holder,
        })
    }

    pub fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for CaseInsensitiveDir {
    fn drop(&mut self) {
        let _ = Command::new("fusermount")
            .arg("-u")
            .arg(&self.mount)
            .output();
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    match command.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{shown} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("{shown}: {e} (install dosfstools and fusefat)")),
    }
}
