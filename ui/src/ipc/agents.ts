// src-tauri/src/commands/agents.rs: subagents' memory and their team snapshots.

import type { AgentMemory } from "./bindings/AgentMemory";
import type { AgentScope } from "./bindings/AgentScope";
import type { StagedChangeSet } from "./bindings/StagedChangeSet";
import { call } from "./call";

export const agentsCommands = {
  /** Every agent memory dir (user, project, local), with its snapshot's state. */
  listAgents: () => call<AgentMemory[]>("list_agents"),
  /** Copies the team's snapshot into an agent memory that has none yet. */
  initializeAgent: (agentType: string, scope: AgentScope, project: string) =>
    call<AgentMemory>("initialize_agent", { agentType, scope, project }),
  /** Stages the merge of an updated snapshot for review; `null` when nothing differs. With
   * `propose`, the configured model proposes a merge of each file both sides changed. */
  stageSnapshotMerge: (agentType: string, scope: AgentScope, project: string, propose = false) =>
    call<StagedChangeSet | null>("stage_snapshot_merge", { agentType, scope, project, propose }),
};
