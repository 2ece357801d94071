// How a project is named on screen. Claude Code's directory names are sanitized paths that cannot
// be turned back into paths ("-path-to-Demo" could be "/path/to-Demo"), so the real path comes
// only from a transcript; without one, the directory name is shown as is.

import type { ProjectSummary } from "../ipc";

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
