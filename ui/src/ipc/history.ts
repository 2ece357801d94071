// src-tauri/src/commands/history.rs: a memory file's versions, what each changed, and revert.

import type { Version } from "./bindings/Version";
import type { VersionChange } from "./bindings/VersionChange";
import { call } from "./call";

export const historyCommands = {
  fileHistory: (project: string, file: string) =>
    call<Version[]>("file_history", { project, file }),
  versionChange: (project: string, version: string) =>
    call<VersionChange>("version_change", { project, version }),
  revertVersion: (project: string, version: string) =>
    call<Version>("revert_version", { project, version }),
};
