//! Windows policy keys: Claude Code's managed settings delivered by Group Policy or Intune as the
//! `Settings` value (a JSON string) of `SOFTWARE\Policies\ClaudeCode` under HKLM or HKCU (key and
//! value names from code.claude.com/docs/en/managed-settings and Claude Code's
//! `utils/settings/mdm/constants.ts`). Only a Windows build reads the registry; elsewhere there is
//! none and every read is `Ok(None)`. Turning the value into settings is
//! `settings::settings_from_json_text`, a plain function tested on Linux.

use std::io;

/// The policy key, under either hive. `SOFTWARE\Policies` is on WOW64's shared list, so 32- and
/// 64-bit processes see the same values.
pub const POLICY_KEY: &str = r"SOFTWARE\Policies\ClaudeCode";
/// The value holding the settings JSON.
pub const POLICY_VALUE: &str = "Settings";

/// Which registry hive a policy key is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyHive {
    /// `HKEY_LOCAL_MACHINE`: written by administrators only; above the managed-settings file.
    Machine,
    /// `HKEY_CURRENT_USER`: writable by the user; Claude Code's lowest managed source.
    User,
}

impl PolicyHive {
    /// The value's full name, for messages (`HKLM\SOFTWARE\Policies\ClaudeCode\Settings`).
    pub fn display_name(self) -> String {
        let hive = match self {
            PolicyHive::Machine => "HKLM",
            PolicyHive::User => "HKCU",
        };
        format!(r"{hive}\{POLICY_KEY}\{POLICY_VALUE}")
    }
}

/// The `Settings` string of the hive's policy key; `Ok(None)` when the key or value is absent
/// (and always off Windows).
pub fn read_policy_settings(hive: PolicyHive) -> io::Result<Option<String>> {
    imp::read_policy_settings(hive)
}

#[cfg(windows)]
mod imp {
    use super::{PolicyHive, POLICY_KEY, POLICY_VALUE};
    use std::io;
    use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_MORE_DATA, ERROR_SUCCESS};
    use windows_sys::Win32::System::Registry::{
        RegGetValueW, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, RRF_RT_REG_EXPAND_SZ, RRF_RT_REG_SZ,
    };

    fn wide(text: &str) -> Vec<u16> {
        text.encode_utf16().chain(Some(0)).collect()
    }

    pub fn read_policy_settings(hive: PolicyHive) -> io::Result<Option<String>> {
        let root = match hive {
            PolicyHive::Machine => HKEY_LOCAL_MACHINE,
            PolicyHive::User => HKEY_CURRENT_USER,
        };
        let (key, value) = (wide(POLICY_KEY), wide(POLICY_VALUE));
        let flags = RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ;
        let mut buffer: Vec<u16> = vec![0; 4096];
        loop {
            let mut bytes = (buffer.len() * 2) as u32;
            // SAFETY: the key and value names are NUL-terminated UTF-16; `buffer` holds `bytes`
            // bytes, and RegGetValueW writes at most that many (it reports the size it needs).
            let status = unsafe {
                RegGetValueW(
                    root,
                    key.as_ptr(),
                    value.as_ptr(),
                    flags,
                    std::ptr::null_mut(),
                    buffer.as_mut_ptr().cast(),
                    &mut bytes,
                )
            };
            match status {
                ERROR_SUCCESS => {
                    let units = (bytes as usize / 2).min(buffer.len());
                    let text = &buffer[..units];
                    let end = text.iter().position(|&u| u == 0).unwrap_or(text.len());
                    return Ok(Some(String::from_utf16_lossy(&text[..end])));
                }
                ERROR_FILE_NOT_FOUND => return Ok(None),
                ERROR_MORE_DATA => buffer.resize(bytes as usize / 2 + 1, 0),
                other => return Err(io::Error::from_raw_os_error(other as i32)),
            }
        }
    }
}

#[cfg(not(windows))]
mod imp {
    use super::PolicyHive;
    use std::io;

    pub fn read_policy_settings(_hive: PolicyHive) -> io::Result<Option<String>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_claude_codes_policy_key_and_value() {
        assert_eq!(
            PolicyHive::Machine.display_name(),
            r"HKLM\SOFTWARE\Policies\ClaudeCode\Settings"
        );
        assert_eq!(
            PolicyHive::User.display_name(),
            r"HKCU\SOFTWARE\Policies\ClaudeCode\Settings"
        );
    }

    #[cfg(not(windows))]
    #[test]
    fn there_is_no_registry_off_windows() {
        assert_eq!(
            read_policy_settings(PolicyHive::Machine).expect("no registry"),
            None
        );
    }
}
