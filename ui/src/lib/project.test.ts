import { describe, expect, it } from "vitest";

import type { ProjectSummary } from "../ipc";
import { projectMatches, projectTitle } from "./project";

function project(name: string, path: string | null): ProjectSummary {
  return {
    name,
    path,
    memoryDir: `/h/projects/${name}/memory`,
    memoryFiles: 0,
    sessions: 0,
    lastActivity: null,
  };
}

describe("projectTitle", () => {
  it("is the last component of the working directory", () => {
    expect(projectTitle(project("-path-to-Demo", "/path/to/Demo"))).toBe("Demo");
    expect(projectTitle(project("-srv-app-", "/srv/app/"))).toBe("app");
    expect(projectTitle(project("C--Users-me-site", "C:\\Users\\me\\site"))).toBe("site");
  });

  it("falls back to the directory name, which cannot be turned back into a path", () => {
    expect(projectTitle(project("-path-to-Demo", null))).toBe("-path-to-Demo");
    expect(projectTitle(project("-", "/"))).toBe("-");
  });
});

describe("projectMatches", () => {
  const demo = project("-path-to-Demo", "/path/to/Demo");

  it("matches the path or the directory name, in any case", () => {
    expect(projectMatches(demo, "to/demo")).toBe(true);
    expect(projectMatches(demo, "PATH-TO")).toBe(true);
    expect(projectMatches(demo, "  ")).toBe(true);
    expect(projectMatches(demo, "stockerly")).toBe(false);
  });
});
