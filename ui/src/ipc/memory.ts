// src-tauri/src/commands/memory.rs: one project's index and topic files, their lint findings,
// and one memory read in full.

import type { LintReport } from "./bindings/LintReport";
import type { MemoryDocument } from "./bindings/MemoryDocument";
import type { ProjectSnapshot } from "./bindings/ProjectSnapshot";
import { call } from "./call";

export const memoryCommands = {
  /** The index and every topic file of a project (and remembers it as last open). */
  openProject: (project: string) => call<ProjectSnapshot>("open_project", { project }),
  lintProject: (project: string) => call<LintReport>("lint_project", { project }),
  readMemory: (project: string, file: string) =>
    call<MemoryDocument>("read_memory", { project, file }),
};
