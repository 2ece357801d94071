//! Claude Code's settings files, read for the few keys that shape its memory (`FORMATS.md` §1, §10):
//! `autoMemoryEnabled`, `autoDreamEnabled` and `autoMemoryDirectory`.
//!
//! Four files can exist, from highest priority to lowest: **policy** (managed settings; read only
//! when the engine was given its sources, so tests never read the machine's), **local** (`<project>/.claude/settings.local.json`, not committed),
//! **project** (`<project>/.claude/settings.json`, committed) and **user**
//! (`<config home>/settings.json`). A key takes the value of the highest-priority file that sets
//! it, except `autoMemoryDirectory`: a cloned repository must not be able to point Claude Code's
//! memory writes at, say, `~/.ssh`. `FORMATS.md` §1 says the project file is never read for it;
//! Claude Code 2.1.330 reads the local and the project file for it only in a workspace the
//! person trusted (its trust dialog names the key and the file), and neither elsewhere
//! ([`ClaudeSettings::auto_memory_directory`], [`Engine::workspace_trusted`]).
//!
//! Managed settings have several sources ([`crate::environment::managed_settings_sources`]): on
//! Linux `/etc/claude-code/managed-settings.json`; on macOS also an MDM profile's plist, on
//! Windows also the registry's policy key. As Claude Code does, the first source holding any
//! settings is the policy and the others are ignored ("first source wins"); each is parsed into
//! the same JSON object as a file ([`settings_from_plist`], [`settings_from_json_text`]). The file
//! source is a folder's `managed-settings.json` and its drop-ins, `managed-settings.d/*.json`,
//! laid over it in name order ([`MANAGED_DROP_INS`]).
//!
//! A missing file is simply absent. A malformed file (bad JSON, not an object) is a
//! [`Error::Parse`] naming the file and line from [`read_settings_file`]; when settings are loaded
//! for a decision ([`ClaudeSettings::load`]) such a file is treated as absent — Claude Code also
//! ignores a settings file it cannot parse and keeps running (a malformed *managed* document is
//! the exception: 2.1.330 will not start until it is fixed) — and the error is kept as a warning
//! for adapters to show. A known key with the wrong type (`"autoMemoryEnabled": "no"`) is likewise
//! ignored with a warning.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::disk::read_text;
use crate::engine::Engine;
use crate::environment::ManagedSource;
use crate::error::{Error, ErrorKind, Result};
use crate::platform::registry;

/// The key that moves the auto-memory dir; honoured only from trusted scopes.
pub const AUTO_MEMORY_DIRECTORY: &str = "autoMemoryDirectory";
pub const AUTO_MEMORY_ENABLED: &str = "autoMemoryEnabled";
pub const AUTO_DREAM_ENABLED: &str = "autoDreamEnabled";

/// The environment switch of §10.
pub const DISABLE_AUTO_MEMORY_ENV: &str = "CLAUDE_CODE_DISABLE_AUTO_MEMORY";

/// Where a settings file sits in Claude Code's hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SettingsScope {
    Policy,
    Local,
    Project,
    User,
}

impl SettingsScope {
    /// Whether a file of this scope may be committed to a repository someone else controls.
    pub fn is_trusted(self) -> bool {
        self != SettingsScope::Project
    }
}

/// One settings file that was read successfully.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    pub scope: SettingsScope,
    pub path: PathBuf,
    pub values: Map<String, Value>,
}

/// The files Claude Code would read for a project, highest priority first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsLocations {
    /// The managed sources, highest priority first; the first holding settings is the policy.
    pub policy: Vec<ManagedSource>,
    pub local: PathBuf,
    pub project: PathBuf,
    pub user: PathBuf,
}

impl SettingsLocations {
    /// The files, highest priority first; an empty path (a project not known) is left out.
    fn files_in_priority_order(&self) -> impl Iterator<Item = (SettingsScope, &Path)> {
        [
            (SettingsScope::Local, self.local.as_path()),
            (SettingsScope::Project, self.project.as_path()),
            (SettingsScope::User, self.user.as_path()),
        ]
        .into_iter()
        .filter(|(_, path)| !path.as_os_str().is_empty())
    }
}

/// Reads one settings file. `Ok(None)` when it does not exist; an empty file is an empty object.
/// Malformed JSON is an [`Error::Parse`] with the file and the line serde_json stopped at.
pub fn read_settings_file(path: &Path) -> Result<Option<Map<String, Value>>> {
    let text = match read_text(path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    settings_from_json_text(path, &text).map(Some)
}

/// Settings from JSON text: a file's content or the registry's `Settings` value. `origin` names
/// where the text came from in errors. Empty text is an empty object; a leading BOM is skipped.
pub fn settings_from_json_text(origin: &Path, text: &str) -> Result<Map<String, Value>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(values)) => Ok(values),
        Ok(_) => Err(Error::parse(origin, None, "settings must be a JSON object")),
        Err(e) => Err(Error::parse(origin, Some(e.line()), json_error_message(&e))),
    }
}

/// Settings from a managed-preferences plist (binary or XML): its top-level dictionary, each
/// value as the JSON a settings file would hold (dates as RFC 3339 strings; `<data>` values,
/// which no settings key takes, are dropped).
pub fn settings_from_plist(origin: &Path, bytes: &[u8]) -> Result<Map<String, Value>> {
    let value = plist::Value::from_reader(std::io::Cursor::new(bytes))
        .map_err(|e| Error::parse(origin, None, format!("invalid plist: {e}")))?;
    match plist_to_json(value) {
        Some(Value::Object(values)) => Ok(values),
        _ => Err(Error::parse(
            origin,
            None,
            "managed preferences must be a dictionary",
        )),
    }
}

fn plist_to_json(value: plist::Value) -> Option<Value> {
    Some(match value {
        plist::Value::Dictionary(dict) => Value::Object(
            dict.into_iter()
                .filter_map(|(key, value)| Some((key, plist_to_json(value)?)))
                .collect(),
        ),
        plist::Value::Array(items) => {
            Value::Array(items.into_iter().filter_map(plist_to_json).collect())
        }
        plist::Value::Boolean(flag) => Value::Bool(flag),
        plist::Value::Integer(number) => match number.as_signed() {
            Some(signed) => Value::from(signed),
            None => Value::from(number.as_unsigned()?),
        },
        plist::Value::Real(number) => Value::from(number),
        plist::Value::String(text) => Value::String(text),
        plist::Value::Date(date) => Value::String(date.to_xml_format()),
        _ => return None,
    })
}

/// The folder of drop-ins beside a `managed-settings.json`. Claude Code 2.1.330 lays each
/// `*.json` file in it over the base file in name order (byte order: `B.json` before `a.json`),
/// a later file's value winning; names starting with `.`, other suffixes (`.JSON` too) and
/// folders are not read, a symlink is read as its target. Seen with the real client: each of
/// those cases, run with `/etc/claude-code` holding the files, switched its auto memory as said.
pub const MANAGED_DROP_INS: &str = "managed-settings.d";

/// One settings document of a managed source: where it came from (a path, or the registry
/// value's full name) and its settings.
type ManagedDocument = (PathBuf, Map<String, Value>);

/// Reads one managed source: its documents, highest priority first, and an error for each that
/// could not be read. A source that does not exist has neither.
fn read_managed_source(source: &ManagedSource) -> (Vec<ManagedDocument>, Vec<Error>) {
    let one = |document: Result<Option<ManagedDocument>>| match document {
        Ok(document) => (document.into_iter().collect(), Vec::new()),
        Err(e) => (Vec::new(), vec![e]),
    };
    match source {
        ManagedSource::File(path) => read_managed_folder(path),
        ManagedSource::Plist(path) => one(match std::fs::read(path) {
            Ok(bytes) => {
                settings_from_plist(path, &bytes).map(|values| Some((path.clone(), values)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }),
        ManagedSource::Registry(hive) => {
            let name = PathBuf::from(hive.display_name());
            one(match registry::read_policy_settings(*hive) {
                Ok(Some(text)) => settings_from_json_text(&name, &text).map(|v| Some((name, v))),
                Ok(None) => Ok(None),
                Err(e) => Err(Error::io(&name, e)),
            })
        }
    }
}

/// `managed-settings.json` and the drop-ins of its folder ([`MANAGED_DROP_INS`]), the last
/// drop-in first: it is the one whose values win.
fn read_managed_folder(base: &Path) -> (Vec<ManagedDocument>, Vec<Error>) {
    let mut paths = vec![base.to_path_buf()];
    let drop_ins = base.with_file_name(MANAGED_DROP_INS);
    let mut errors = Vec::new();
    match std::fs::read_dir(&drop_ins) {
        Ok(entries) => {
            let mut names: Vec<String> = entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| !name.starts_with('.') && name.ends_with(".json"))
                .collect();
            names.sort();
            paths.extend(
                names
                    .into_iter()
                    .map(|name| drop_ins.join(name))
                    .filter(|path| path.is_file()),
            );
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => errors.push(Error::io(&drop_ins, e)),
    }
    let mut documents = Vec::new();
    for path in paths.into_iter().rev() {
        match read_settings_file(&path) {
            Ok(Some(values)) => documents.push((path, values)),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    (documents, errors)
}

/// serde_json's message without its trailing " at line L column C" (the line is carried
/// separately, the column is kept).
fn json_error_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(head, _)| head);
    format!("invalid JSON: {message} (column {})", e.column())
}

/// A type test on a JSON value (`Value::is_boolean`, …).
type HasType = fn(&Value) -> bool;

/// The settings Claude Code would see for one project.
#[derive(Debug, Default)]
pub struct ClaudeSettings {
    /// Highest priority first.
    files: Vec<SettingsFile>,
    warnings: Vec<Error>,
}

/// A value of `autoMemoryDirectory` and the trusted file it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedSetting<'a> {
    pub scope: SettingsScope,
    pub path: &'a Path,
    pub value: &'a str,
}

impl ClaudeSettings {
    /// Reads the policy and every file in `locations`; unreadable or malformed ones become
    /// warnings.
    pub fn load(locations: &SettingsLocations) -> ClaudeSettings {
        let mut settings = ClaudeSettings::default();
        for source in &locations.policy {
            let (documents, errors) = read_managed_source(source);
            settings.warnings.extend(errors);
            let holds_settings = documents.iter().any(|(_, values)| !values.is_empty());
            for (path, values) in documents {
                settings.add(SettingsScope::Policy, path, values);
            }
            // First source wins: a lower one is not read once a policy is found.
            if holds_settings {
                break;
            }
        }
        for (scope, path) in locations.files_in_priority_order() {
            match read_settings_file(path) {
                Ok(Some(values)) => settings.add(scope, path.to_path_buf(), values),
                Ok(None) => {}
                Err(e) => settings.warnings.push(e),
            }
        }
        settings
    }

    fn add(&mut self, scope: SettingsScope, path: PathBuf, mut values: Map<String, Value>) {
        self.drop_mistyped(&path, &mut values);
        self.files.push(SettingsFile {
            scope,
            path,
            values,
        });
    }

    /// Removes known keys whose value has the wrong type, so lower-priority files decide instead.
    fn drop_mistyped(&mut self, path: &Path, values: &mut Map<String, Value>) {
        let expected: [(&str, HasType, &str); 3] = [
            (AUTO_MEMORY_ENABLED, Value::is_boolean, "true or false"),
            (AUTO_DREAM_ENABLED, Value::is_boolean, "true or false"),
            (AUTO_MEMORY_DIRECTORY, Value::is_string, "a string"),
        ];
        for (key, has_type, wanted) in expected {
            if values.get(key).is_some_and(|value| !has_type(value)) {
                values.remove(key);
                self.warnings.push(Error::parse(
                    path,
                    None,
                    format!("`{key}` must be {wanted}; ignored"),
                ));
            }
        }
    }

    /// The files read, highest priority first.
    pub fn files(&self) -> &[SettingsFile] {
        &self.files
    }

    /// Files that were skipped and values that were ignored, each naming its file.
    pub fn warnings(&self) -> &[Error] {
        &self.warnings
    }

    fn flag(&self, key: &str) -> Option<bool> {
        self.files
            .iter()
            .find_map(|file| file.values.get(key).and_then(Value::as_bool))
    }

    /// `autoMemoryEnabled` from the highest-priority file that sets it (any scope).
    pub fn auto_memory_enabled(&self) -> Option<bool> {
        self.flag(AUTO_MEMORY_ENABLED)
    }

    /// `autoDreamEnabled` from the highest-priority file that sets it (any scope).
    pub fn auto_dream_enabled(&self) -> Option<bool> {
        self.flag(AUTO_DREAM_ENABLED)
    }

    /// `autoDreamEnabled` from the highest-priority *trusted* file that sets it: a cloned repo's
    /// `.claude/settings.json` must not switch on background rewrites of someone's memory.
    pub fn auto_dream_enabled_trusted(&self) -> Option<bool> {
        self.files
            .iter()
            .filter(|file| file.scope.is_trusted())
            .find_map(|file| file.values.get(AUTO_DREAM_ENABLED).and_then(Value::as_bool))
    }

    /// `autoMemoryDirectory` from the highest-priority file Claude Code 2.1.330 takes it from,
    /// unvalidated (see [`crate::paths::validate_memory_path`]): the policy; then the local and
    /// the project file, only when `workspace_trusted` says the person trusted the workspace
    /// (asked only when one of them sets the key: it reads Claude Code's global config); then
    /// the user's. In its code: policy, `--settings`, local and project when trusted, user.
    pub fn auto_memory_directory(
        &self,
        workspace_trusted: impl FnOnce() -> bool,
    ) -> Option<TrustedSetting<'_>> {
        let mut ask = Some(workspace_trusted);
        let mut trusted = false;
        self.files.iter().find_map(|file| {
            let value = file.values.get(AUTO_MEMORY_DIRECTORY)?.as_str()?;
            if matches!(file.scope, SettingsScope::Local | SettingsScope::Project) {
                if let Some(ask) = ask.take() {
                    trusted = ask();
                }
                if !trusted {
                    return None;
                }
            }
            Some(TrustedSetting {
                scope: file.scope,
                path: &file.path,
                value,
            })
        })
    }
}

/// Reads a boolean environment switch the way Claude Code does: `1/true/yes/on` is `Some(true)`,
/// `0/false/no/off` is `Some(false)` (case-insensitive, trimmed), anything else `None`.
pub fn env_switch(value: Option<&str>) -> Option<bool> {
    let value = value?.trim().to_ascii_lowercase();
    match value.as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

impl Engine {
    /// The settings files Claude Code reads when started in `project`.
    pub fn settings_locations(&self, project: &Path) -> SettingsLocations {
        SettingsLocations {
            policy: self.managed_sources().to_vec(),
            local: project.join(".claude").join("settings.local.json"),
            project: project.join(".claude").join("settings.json"),
            user: self.claude_home().join("settings.json"),
        }
    }

    /// The settings Claude Code would see in `project`; never fails (see the module docs).
    pub fn claude_settings(&self, project: &Path) -> ClaudeSettings {
        ClaudeSettings::load(&self.settings_locations(project))
    }

    /// Whether Claude Code's auto-memory is on in `project` (`FORMATS.md` §10):
    /// `CLAUDE_CODE_DISABLE_AUTO_MEMORY` truthy forces it off and falsy forces it on; otherwise
    /// `autoMemoryEnabled` from settings decides, defaulting to on.
    pub fn auto_memory_enabled(&self, project: &Path) -> bool {
        self.auto_memory_enabled_in(Some(project))
    }

    /// [`Engine::auto_memory_enabled`] for a project whose working dir may not be known: then
    /// the environment, the policy and the user's settings decide.
    pub fn auto_memory_enabled_in(&self, project: Option<&Path>) -> bool {
        if let Some(disabled) = env_switch(self.env().get(DISABLE_AUTO_MEMORY_ENV)) {
            return !disabled;
        }
        let settings = match project {
            Some(project) => self.claude_settings(project),
            None => ClaudeSettings::load(&SettingsLocations {
                local: PathBuf::new(),
                project: PathBuf::new(),
                ..self.settings_locations(Path::new(""))
            }),
        };
        settings.auto_memory_enabled().unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;
    use crate::testing::fixtures::write_file;
    use std::fs;

    struct Layout {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        project: PathBuf,
    }

    fn layout() -> Layout {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("home");
        let project = tmp.path().join("project");
        fs::create_dir_all(&project).expect("mkdir");
        Layout {
            _tmp: tmp,
            home,
            project,
        }
    }

    fn engine(home: &Path, extra: &[(&str, &str)]) -> Engine {
        let env = extra.iter().fold(
            Environment::empty().with("HOME", home.to_string_lossy()),
            |env, (k, v)| env.with(*k, *v),
        );
        Engine::builder(env).build()
    }

    #[test]
    fn missing_files_are_absent_and_empty_files_are_empty() {
        let l = layout();
        let missing = l.project.join("nope.json");
        assert!(read_settings_file(&missing).expect("ok").is_none());
        let empty = l.project.join("empty.json");
        write_file(&empty, "\u{feff}  \n");
        assert_eq!(read_settings_file(&empty).expect("ok"), Some(Map::new()));
    }

    #[test]
    fn malformed_json_names_the_file_and_line() {
        let l = layout();
        let path = l.project.join("settings.json");
        write_file(&path, "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
        let err = read_settings_file(&path).expect_err("malformed");
        assert_eq!(err.kind(), ErrorKind::Parse);
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}:3: ", path.display())),
            "{text}"
        );
        assert!(!text.contains(" at line "), "line is not repeated: {text}");

        write_file(&path, "[1, 2]");
        let err = read_settings_file(&path).expect_err("not an object");
        assert!(err.to_string().contains("must be a JSON object"), "{err}");
    }

    #[test]
    fn env_switch_accepts_claude_codes_spellings_only() {
        for on in ["1", "true", "YES", " on "] {
            assert_eq!(env_switch(Some(on)), Some(true), "{on:?}");
        }
        for off in ["0", "False", "no", "OFF"] {
            assert_eq!(env_switch(Some(off)), Some(false), "{off:?}");
        }
        for other in ["", "2", "enabled", "y"] {
            assert_eq!(env_switch(Some(other)), None, "{other:?}");
        }
        assert_eq!(env_switch(None), None);
    }

    #[test]
    fn auto_memory_switch_chain() {
        let l = layout();
        let plain = engine(&l.home, &[]);
        assert!(plain.auto_memory_enabled(&l.project), "defaults to on");

        write_file(
            &l.home.join(".claude/settings.json"),
            r#"{"autoMemoryEnabled": false}"#,
        );
        assert!(
            !plain.auto_memory_enabled(&l.project),
            "user settings turn it off"
        );

        write_file(
            &l.project.join(".claude/settings.json"),
            r#"{"autoMemoryEnabled": true}"#,
        );
        assert!(
            plain.auto_memory_enabled(&l.project),
            "project settings outrank user settings for this key"
        );

        write_file(
            &l.project.join(".claude/settings.local.json"),
            r#"{"autoMemoryEnabled": false}"#,
        );
        assert!(
            !plain.auto_memory_enabled(&l.project),
            "local outranks project"
        );

        let forced_on = engine(&l.home, &[(DISABLE_AUTO_MEMORY_ENV, "0")]);
        assert!(
            forced_on.auto_memory_enabled(&l.project),
            "env falsy forces on"
        );

        write_file(
            &l.project.join(".claude/settings.local.json"),
            r#"{"autoMemoryEnabled": true}"#,
        );
        let forced_off = engine(&l.home, &[(DISABLE_AUTO_MEMORY_ENV, "true")]);
        assert!(
            !forced_off.auto_memory_enabled(&l.project),
            "env truthy forces off"
        );

        let unrecognised = engine(&l.home, &[(DISABLE_AUTO_MEMORY_ENV, "maybe")]);
        assert!(
            unrecognised.auto_memory_enabled(&l.project),
            "an unrecognised value defers to settings (local: true)"
        );

        // No project known: its files cannot speak (local says true), the user's can.
        assert!(!plain.auto_memory_enabled_in(None), "user settings: off");
        assert!(
            forced_on.auto_memory_enabled_in(None),
            "env falsy forces on"
        );
        write_file(&l.home.join(".claude/settings.json"), "{}");
        assert!(plain.auto_memory_enabled_in(None), "defaults to on");
        let policy = l.project.join("managed-settings.json");
        write_file(&policy, r#"{"autoMemoryEnabled": false}"#);
        let managed = Engine::builder(Environment::empty().with("HOME", l.home.to_string_lossy()))
            .managed_settings(&policy)
            .build();
        assert!(
            !managed.auto_memory_enabled_in(None),
            "the policy turns it off"
        );
    }

    #[test]
    fn mistyped_values_are_ignored_with_a_warning() {
        let l = layout();
        write_file(
            &l.project.join(".claude/settings.local.json"),
            r#"{"autoMemoryEnabled": "false", "autoMemoryDirectory": 7}"#,
        );
        write_file(
            &l.home.join(".claude/settings.json"),
            r#"{"autoMemoryEnabled": false, "autoMemoryDirectory": "/user/mem"}"#,
        );
        let e = engine(&l.home, &[]);
        let settings = e.claude_settings(&l.project);
        assert_eq!(
            settings.auto_memory_enabled(),
            Some(false),
            "user value decides"
        );
        assert_eq!(
            settings.auto_memory_directory(|| true).map(|s| s.value),
            Some("/user/mem"),
            "a mistyped local value does not count, even in a trusted workspace"
        );
        assert_eq!(settings.warnings().len(), 2);
        assert!(settings.warnings()[0]
            .to_string()
            .contains("settings.local.json"));
    }

    #[test]
    fn auto_dream_and_directory_follow_their_own_rules() {
        let l = layout();
        write_file(
            &l.project.join(".claude/settings.json"),
            r#"{"autoDreamEnabled": true, "autoMemoryDirectory": "/evil"}"#,
        );
        let e = engine(&l.home, &[]);
        let settings = e.claude_settings(&l.project);
        assert_eq!(
            settings.auto_dream_enabled(),
            Some(true),
            "any scope may set it"
        );
        assert_eq!(
            settings.auto_memory_directory(|| false),
            None,
            "the project file may not move the memory dir of a workspace nobody trusted"
        );
        assert_eq!(
            settings.auto_memory_directory(|| true).map(|s| s.value),
            Some("/evil"),
            "once the person trusted the workspace, Claude Code 2.1.330 reads it there"
        );
        assert_eq!(settings.files().len(), 1);
        assert_eq!(settings.files()[0].scope, SettingsScope::Project);
    }

    /// Claude Code 2.1.330 takes `autoMemoryDirectory` from the policy, then — in a trusted
    /// workspace only — the local and the project file, then the user's.
    #[test]
    fn the_memory_dir_setting_comes_from_the_local_and_project_files_only_when_trusted() {
        let l = layout();
        let e = engine(&l.home, &[]);
        let dir = |trusted: bool| {
            let asked = std::cell::Cell::new(0);
            let settings = e.claude_settings(&l.project);
            let value = settings
                .auto_memory_directory(|| {
                    asked.set(asked.get() + 1);
                    trusted
                })
                .map(|s| s.value.to_owned());
            (value, asked.get())
        };
        write_file(
            &l.home.join(".claude/settings.json"),
            r#"{"autoMemoryDirectory": "/user/mem"}"#,
        );
        assert_eq!(
            dir(false),
            (Some("/user/mem".into()), 0),
            "not asked: no local or project value"
        );
        write_file(
            &l.project.join(".claude/settings.json"),
            r#"{"autoMemoryDirectory": "/project/mem"}"#,
        );
        write_file(
            &l.project.join(".claude/settings.local.json"),
            r#"{"autoMemoryDirectory": "/local/mem"}"#,
        );
        assert_eq!(
            dir(true),
            (Some("/local/mem".into()), 1),
            "local above project, asked once"
        );
        assert_eq!(
            dir(false),
            (Some("/user/mem".into()), 1),
            "neither, untrusted"
        );
        fs::remove_file(l.project.join(".claude/settings.local.json")).expect("rm");
        assert_eq!(
            dir(true),
            (Some("/project/mem".into()), 1),
            "project above user"
        );
    }

    #[test]
    fn a_malformed_file_does_not_hide_the_others() {
        let l = layout();
        write_file(&l.project.join(".claude/settings.local.json"), "{ nope");
        write_file(
            &l.home.join(".claude/settings.json"),
            r#"{"autoMemoryEnabled": false}"#,
        );
        let e = engine(&l.home, &[]);
        let settings = e.claude_settings(&l.project);
        assert_eq!(settings.auto_memory_enabled(), Some(false));
        assert_eq!(settings.warnings().len(), 1);
        assert_eq!(settings.warnings()[0].kind(), ErrorKind::Parse);
        assert!(!e.auto_memory_enabled(&l.project));
    }

    #[test]
    fn locations_follow_the_config_home_and_the_injected_policy_path() {
        let l = layout();
        let e = Engine::builder(Environment::empty().with("CLAUDE_CONFIG_DIR", "/cfg"))
            .managed_settings("/policy.json")
            .build();
        let loc = e.settings_locations(&l.project);
        assert_eq!(loc.user, PathBuf::from("/cfg/settings.json"));
        assert_eq!(loc.local, l.project.join(".claude/settings.local.json"));
        assert_eq!(loc.project, l.project.join(".claude/settings.json"));
        assert_eq!(
            loc.policy,
            vec![ManagedSource::File(PathBuf::from("/policy.json"))]
        );
        let plain = Engine::builder(Environment::empty()).build();
        assert!(plain.settings_locations(&l.project).policy.is_empty());
    }

    /// A managed-preferences profile as an MDM server writes it (XML form of the
    /// `com.anthropic.claudecode` domain), with a value of every plist type.
    const PROFILE_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>autoMemoryEnabled</key>
	<false/>
	<key>autoMemoryDirectory</key>
	<string>/Users/Shared/claude-memory</string>
	<key>cleanupPeriodDays</key>
	<integer>30</integer>
	<key>permissions</key>
	<dict>
		<key>deny</key>
		<array>
			<string>Read(./.env)</string>
		</array>
	</dict>
	<key>ratio</key>
	<real>0.5</real>
	<key>since</key>
	<date>2026-01-02T03:04:05Z</date>
	<key>blob</key>
	<data>AAEC</data>
</dict>
</plist>
"#;

    /// The same settings as `managed-settings.json` would hold them.
    const PROFILE_JSON: &str = r#"{
        "autoMemoryEnabled": false,
        "autoMemoryDirectory": "/Users/Shared/claude-memory",
        "cleanupPeriodDays": 30,
        "permissions": {"deny": ["Read(./.env)"]},
        "ratio": 0.5,
        "since": "2026-01-02T03:04:05Z"
    }"#;

    fn as_json(text: &str) -> Map<String, Value> {
        settings_from_json_text(Path::new("expected.json"), text).expect("json")
    }

    #[test]
    fn a_managed_plist_gives_the_settings_the_file_form_would() {
        let origin = Path::new("/Library/Managed Preferences/com.anthropic.claudecode.plist");
        let from_xml = settings_from_plist(origin, PROFILE_XML.as_bytes()).expect("xml plist");
        assert_eq!(from_xml, as_json(PROFILE_JSON));
        // macOS keeps managed preferences in the binary form: the same settings.
        let mut binary = Vec::new();
        plist::Value::from_reader_xml(PROFILE_XML.as_bytes())
            .expect("xml")
            .to_writer_binary(&mut binary)
            .expect("binary");
        assert!(binary.starts_with(b"bplist00"));
        assert_eq!(
            settings_from_plist(origin, &binary).expect("binary"),
            from_xml
        );
    }

    #[test]
    fn a_bad_plist_is_an_error_naming_it() {
        let origin = Path::new("/Library/Managed Preferences/com.anthropic.claudecode.plist");
        for bytes in [&b"<plist><dict><key>x</key>"[..], b"not a plist at all"] {
            let err = settings_from_plist(origin, bytes).expect_err("malformed");
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert!(
                err.to_string().contains("com.anthropic.claudecode.plist"),
                "{err}"
            );
        }
        let array = r#"<plist version="1.0"><array><true/></array></plist>"#;
        let err = settings_from_plist(origin, array.as_bytes()).expect_err("not a dict");
        assert!(err.to_string().contains("dictionary"), "{err}");
    }

    #[test]
    fn the_registry_value_is_read_as_the_file_form() {
        let name = PathBuf::from(crate::environment::PolicyHive::Machine.display_name());
        let values = settings_from_json_text(&name, PROFILE_JSON).expect("json");
        assert_eq!(values, as_json(PROFILE_JSON));
        // Group Policy editors save REG_SZ text with a BOM now and then.
        let bom = format!("\u{feff}{PROFILE_JSON}");
        assert_eq!(settings_from_json_text(&name, &bom).expect("bom"), values);
        let err = settings_from_json_text(&name, "{\n  \"autoMemoryEnabled\": }").expect_err("bad");
        assert_eq!(err.kind(), ErrorKind::Parse);
        let shown = err.to_string();
        assert!(
            shown.contains(r"HKLM\SOFTWARE\Policies\ClaudeCode\Settings"),
            "{shown}"
        );
        assert!(shown.contains('2'), "the line: {shown}");
    }

    #[test]
    fn the_first_managed_source_holding_settings_is_the_whole_policy() {
        let l = layout();
        let dir = l.project.parent().expect("tmp").join("managed");
        let per_user = dir.join("alice/com.anthropic.claudecode.plist");
        let device = dir.join("com.anthropic.claudecode.plist");
        let file = dir.join("managed-settings.json");
        let sources = vec![
            ManagedSource::Plist(per_user.clone()),
            ManagedSource::Plist(device.clone()),
            ManagedSource::File(file.clone()),
        ];
        let policy = |e: &Engine| {
            let settings = e.claude_settings(&l.project);
            let scopes: Vec<PathBuf> = settings
                .files()
                .iter()
                .filter(|f| f.scope == SettingsScope::Policy)
                .map(|f| f.path.clone())
                .collect();
            (settings, scopes)
        };
        let e = Engine::builder(Environment::empty().with("HOME", l.home.to_string_lossy()))
            .managed_sources(sources)
            .build();
        // The file alone: it is the policy.
        write_file(
            &file,
            r#"{"autoDreamEnabled": true, "autoMemoryEnabled": true}"#,
        );
        let (settings, scopes) = policy(&e);
        assert_eq!(scopes, vec![file.clone()]);
        assert_eq!(settings.auto_memory_enabled(), Some(true));
        // The device plist above it wins whole: the file's autoDreamEnabled is not merged in.
        write_file(&device, PROFILE_XML);
        let (settings, scopes) = policy(&e);
        assert_eq!(scopes, vec![device.clone()]);
        assert_eq!(settings.auto_memory_enabled(), Some(false));
        assert_eq!(settings.auto_dream_enabled(), None);
        let dir_setting = settings
            .auto_memory_directory(|| false)
            .expect("the policy's, trusted or not");
        assert_eq!(dir_setting.scope, SettingsScope::Policy);
        assert_eq!(dir_setting.value, "/Users/Shared/claude-memory");
        assert!(!e.auto_memory_enabled(&l.project));
        // An empty per-user profile holds nothing: the device one still decides.
        write_file(&per_user, r#"<plist version="1.0"><dict/></plist>"#);
        let (settings, scopes) = policy(&e);
        assert_eq!(scopes, vec![per_user.clone(), device.clone()]);
        assert_eq!(settings.auto_memory_enabled(), Some(false));
        // A malformed one is a warning naming it, and the next source decides.
        write_file(&per_user, "<plist><dict>");
        let (settings, scopes) = policy(&e);
        assert_eq!(scopes, vec![device.clone()]);
        assert_eq!(settings.warnings().len(), 1);
        assert!(settings.warnings()[0].to_string().contains("alice"));
        // A per-user profile with settings is above the device one.
        write_file(
            &per_user,
            r#"<plist version="1.0"><dict><key>autoMemoryEnabled</key><true/></dict></plist>"#,
        );
        let (settings, scopes) = policy(&e);
        assert_eq!(scopes, vec![per_user]);
        assert_eq!(settings.auto_memory_enabled(), Some(true));
        assert!(settings.warnings().is_empty());
    }

    /// Each case was first run with the real Claude Code 2.1.330 and these files in
    /// `/etc/claude-code`: whether it created and loaded the memory dir is what Engram decides.
    #[test]
    fn drop_ins_are_laid_over_the_managed_file_in_name_order() {
        let l = layout();
        let dir = l.project.parent().expect("tmp").join("claude-code");
        let file = dir.join("managed-settings.json");
        let drop_ins = dir.join(MANAGED_DROP_INS);
        let e = Engine::builder(Environment::empty().with("HOME", l.home.to_string_lossy()))
            .managed_settings(&file)
            .build();
        let memory = |files: &[(&str, &str)]| {
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&drop_ins).expect("mkdir");
            for (name, text) in files {
                write_file(&dir.join(name), text);
            }
            e.claude_settings(&l.project).auto_memory_enabled()
        };
        let off = r#"{"autoMemoryEnabled": false}"#;
        let on = r#"{"autoMemoryEnabled": true}"#;
        let d = |name: &str| format!("{MANAGED_DROP_INS}/{name}");
        // A drop-in alone is a policy, and one over the base file overrides it either way.
        assert_eq!(memory(&[(&d("50-memory.json"), off)]), Some(false));
        assert_eq!(
            memory(&[("managed-settings.json", on), (&d("50.json"), off)]),
            Some(false)
        );
        assert_eq!(
            memory(&[("managed-settings.json", off), (&d("50.json"), on)]),
            Some(true)
        );
        // The later name wins, in byte order.
        assert_eq!(
            memory(&[(&d("10-a.json"), off), (&d("20-b.json"), on)]),
            Some(true)
        );
        assert_eq!(
            memory(&[(&d("10-a.json"), on), (&d("20-b.json"), off)]),
            Some(false)
        );
        assert_eq!(
            memory(&[(&d("B.json"), off), (&d("a.json"), on)]),
            Some(true)
        );
        // Hidden files, other suffixes and folders are not read.
        assert_eq!(memory(&[(&d(".hidden.json"), off)]), None);
        assert_eq!(memory(&[(&d("memory.txt"), off)]), None);
        assert_eq!(memory(&[(&d("memory.JSON"), off)]), None);
        assert_eq!(memory(&[(&d("sub.json/x.json"), off)]), None);
        // A mistyped value leaves the earlier drop-in's; a malformed one is a warning naming it.
        let mistyped = r#"{"autoMemoryEnabled": "yes"}"#;
        assert_eq!(
            memory(&[(&d("10.json"), off), (&d("20.json"), mistyped)]),
            Some(false)
        );
        assert_eq!(
            memory(&[(&d("10.json"), off), (&d("20.json"), "{\"a\": tru")]),
            Some(false)
        );
        let settings = e.claude_settings(&l.project);
        assert_eq!(settings.warnings().len(), 1);
        let warning = settings.warnings()[0].to_string();
        assert!(warning.contains("20.json"), "{warning}");
        // Each document is listed, the one that wins first.
        memory(&[
            ("managed-settings.json", "{}"),
            (&d("10.json"), on),
            (&d("20.json"), off),
        ]);
        let policy: Vec<PathBuf> = e
            .claude_settings(&l.project)
            .files()
            .iter()
            .filter(|f| f.scope == SettingsScope::Policy)
            .map(|f| f.path.clone())
            .collect();
        assert_eq!(
            policy,
            vec![
                drop_ins.join("20.json"),
                drop_ins.join("10.json"),
                file.clone()
            ]
        );
        // Settings in a drop-in alone make the folder the policy: a lower source is not read.
        let lower = l.project.join("lower-managed-settings.json");
        write_file(&lower, on);
        let both = Engine::builder(Environment::empty().with("HOME", l.home.to_string_lossy()))
            .managed_sources(vec![
                ManagedSource::File(file.clone()),
                ManagedSource::File(lower),
            ])
            .build();
        memory(&[
            ("managed-settings.json", "{}"),
            (&d("50.json"), r#"{"autoDreamEnabled": false}"#),
        ]);
        assert_eq!(both.claude_settings(&l.project).auto_memory_enabled(), None);
        // A symlinked drop-in is read as its target.
        #[cfg(unix)]
        {
            let target = l.project.join("memory-off.json");
            write_file(&target, off);
            memory(&[]);
            std::os::unix::fs::symlink(&target, drop_ins.join("50-link.json")).expect("symlink");
            assert_eq!(
                e.claude_settings(&l.project).auto_memory_enabled(),
                Some(false)
            );
        }
    }
}
