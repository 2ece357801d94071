// src-tauri/src/commands/projects.rs: every project Claude Code has seen, and a search across
// all of their memories.

import type { ProjectSummary } from "./bindings/ProjectSummary";
import type { SearchHit } from "./bindings/SearchHit";
import { call } from "./call";

export const projectsCommands = {
  /** Every project Claude Code has seen, most recently active first, with lint counts. */
  listProjects: () => call<ProjectSummary[]>("list_projects"),
  /** Memories of every project matching all words of `query`, best first. */
  searchMemories: (query: string) => call<SearchHit[]>("search_memories", { query }),
};
