// How a project is named on screen. Claude Code's directory names are sanitized paths that cannot
// be turned back into paths ("-path-to-Demo" could be "/path/to-Demo"), so the real path comes
// only from a transcript; without one, the directory name is shown as is.

import type { AgentScope, ProjectSummary, SearchHit } from "../ipc";

/** An agent's memory dir, as the project view shows it. */
export type AgentDir = { agentType: string; scope: AgentScope; dir: string };

/** Where a search hit is: its project, or "agent (scope agent memory) · project". */
export function hitPlace(hit: SearchHit): string {
  const project = projectTitle({ name: hit.project, path: hit.projectPath });
  if (!hit.agent) return project;
  const agent = `${hit.agent.agentType} (${hit.agent.scope} agent memory)`;
  return hit.projectPath ? `${agent} · ${project}` : agent;
}

/** The agent dir a search hit is in, if any. */
export function hitAgent(hit: SearchHit): AgentDir | undefined {
  return hit.agent ? { ...hit.agent, dir: hit.memoryDir } : undefined;
}

/** The short name: the working directory's last component, else the directory name. */
export function projectTitle(project: Pick<ProjectSummary, "name" | "path">): string {
  if (project.path) {
    const parts = project.path.split(/[\\/]/).filter((part) => part.length > 0);
    const last = parts[parts.length - 1];
    if (last) return last;
  }
  return project.name;
}

/** Whether a project matches a filter typed by the user (title or path, any case). */
export function projectMatches(project: ProjectSummary, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  if (needle === "") return true;
  return [project.name, project.path ?? ""].some((text) => text.toLowerCase().includes(needle));
}
