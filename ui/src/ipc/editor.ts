// src-tauri/src/commands/editor.rs: save, create, rename and delete a memory, its index line
// following; a save over a file that moved since it was opened is refused as a conflict.

import type { ConflictDetails } from "./bindings/ConflictDetails";
import type { ConflictResolution } from "./bindings/ConflictResolution";
import type { EditOutcome } from "./bindings/EditOutcome";
import type { MemoryForm } from "./bindings/MemoryForm";
import { call } from "./call";

export const editorCommands = {
  /** Saves `form` over the file as it was opened; rejects with kind `conflict` if it moved. */
  saveMemory: (project: string, file: string, opened: string, form: MemoryForm) =>
    call<EditOutcome>("save_memory", { project, file, opened, form }),
  memoryConflict: (project: string, file: string, form: MemoryForm) =>
    call<ConflictDetails>("memory_conflict", { project, file, form }),
  resolveMemoryConflict: (project: string, file: string, resolution: ConflictResolution) =>
    call<EditOutcome>("resolve_memory_conflict", { project, file, resolution }),
  createMemory: (project: string, file: string | null, form: MemoryForm) =>
    call<EditOutcome>("create_memory", { project, file, form }),
  renameMemory: (project: string, file: string, newFile: string, opened: string | null) =>
    call<EditOutcome>("rename_memory", { project, file, newFile, opened }),
  deleteMemory: (project: string, file: string, opened: string | null) =>
    call<EditOutcome>("delete_memory", { project, file, opened }),
};
