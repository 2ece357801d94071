// src-tauri/src/commands/watch.rs: live updates of the open project's memory dir, which arrive
// as `events.onMemoryDirChanged` (see index.ts).

import { call } from "./call";

export const watchCommands = {
  /** Starts live updates for a project (`false`: it has no memory dir yet). */
  watchProject: (project: string) => call<boolean>("watch_project", { project }),
  unwatchProject: () => call<null>("unwatch_project"),
};
