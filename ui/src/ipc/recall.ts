// src-tauri/src/commands/recall.rs: what Engram's prompt hook would inject for a prompt typed in
// the app, one preview at a time.

import type { RecallPreview } from "./bindings/RecallPreview";
import { call } from "./call";

export const recallCommands = {
  /** What the prompt hook would inject for `query` in a project (nothing is recorded). Starting
   * another preview cancels the one running. */
  recallPreview: (project: string, query: string, offline: boolean) =>
    call<RecallPreview>("recall_preview", { project, query, offline }),
  /** Cancels the running preview, which then rejects with kind `cancelled`. */
  cancelRecall: () => call<null>("cancel_recall"),
};
