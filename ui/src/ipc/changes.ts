// src-tauri/src/commands/changes.rs: the review screen — staged change sets, accept or reject
// file by file, undo an applied one.

import type { ConflictDetails } from "./bindings/ConflictDetails";
import type { StagedChangeSet } from "./bindings/StagedChangeSet";
import { call } from "./call";

export const changesCommands = {
  /** Newest first; only `project`'s when given. */
  listChangeSets: (project: string | null) =>
    call<StagedChangeSet[]>("list_change_sets", { project }),
  changeSet: (id: string) => call<StagedChangeSet>("change_set", { id }),
  /** Applies the named files (all waiting files when empty), protected ones included. */
  acceptChanges: (id: string, files: string[]) =>
    call<StagedChangeSet>("accept_changes", { id, files }),
  rejectChanges: (id: string, files: string[]) =>
    call<StagedChangeSet>("reject_changes", { id, files }),
  undoChanges: (id: string) => call<StagedChangeSet>("undo_changes", { id }),
  /** What the disk holds now against what the dream planned, for a file in conflict. */
  changeConflict: (id: string, file: string) =>
    call<ConflictDetails>("change_conflict", { id, file }),
};
