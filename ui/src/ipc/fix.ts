// src-tauri/src/commands/fix.rs: fixes for lint findings, planned as diffs, then applied.

import type { ApplyReport } from "./bindings/ApplyReport";
import type { ChangeSet } from "./bindings/ChangeSet";
import type { FileChange } from "./bindings/FileChange";
import type { FixTarget } from "./bindings/FixTarget";
import { call } from "./call";

export const fixCommands = {
  /** The change set that would fix one finding; nothing is written. */
  planFix: (project: string, target: FixTarget) => call<ChangeSet>("plan_fix", { project, target }),
  applyFix: (project: string, changes: FileChange[]) =>
    call<ApplyReport>("apply_fix", { project, changes }),
};
