import { describe, expect, it } from "vitest";

import type { Finding, MemoryHeader } from "../ipc";
import { findingsByFile, memoryMatches, memoryTitle, staleness } from "./memory";

function header(overrides: Partial<MemoryHeader>): MemoryHeader {
  return {
    file: "feedback_testing.md",
    name: "Testing policy",
    description: "Integration tests hit a real DB",
    type: "feedback",
    mtime: "2026-11-01T00:00:00.000Z",
    age: "21 days ago",
    days: 21,
    ...overrides,
  };
}

describe("memoryTitle", () => {
  it("is the name, else the file name without .md", () => {
    expect(memoryTitle(header({}))).toBe("Testing policy");
    expect(memoryTitle(header({ name: null, file: "team/notes_x.md" }))).toBe("notes_x");
    expect(memoryTitle(header({ name: "  ", file: "a.md" }))).toBe("a");
  });
});

describe("memoryMatches", () => {
  const memory = header({});

  it("filters by type, with 'none' for memories without one", () => {
    expect(memoryMatches(memory, "all", "")).toBe(true);
    expect(memoryMatches(memory, "feedback", "")).toBe(true);
    expect(memoryMatches(memory, "user", "")).toBe(false);
    expect(memoryMatches(memory, "none", "")).toBe(false);
    expect(memoryMatches(header({ type: null }), "none", "")).toBe(true);
  });

  it("needs every word somewhere in name, description or file", () => {
    expect(memoryMatches(memory, "all", "real testing")).toBe(true);
    expect(memoryMatches(memory, "all", "FEEDBACK_")).toBe(true);
    expect(memoryMatches(memory, "all", "real mocks")).toBe(false);
  });
});

describe("findingsByFile", () => {
  it("groups by file with errors first", () => {
    const findings: Finding[] = [
      { rule: "orphan-file", severity: "warning", file: "a.md", line: null, message: "w" },
      { rule: "secret", severity: "error", file: "a.md", line: 3, message: "e" },
      { rule: "dangling-pointer", severity: "error", file: "MEMORY.md", line: 2, message: "d" },
    ];
    const grouped = findingsByFile(findings);
    expect(grouped.get("a.md")?.map((f) => f.severity)).toEqual(["error", "warning"]);
    expect(grouped.get("MEMORY.md")).toHaveLength(1);
  });
});

describe("staleness", () => {
  it("grades age in days", () => {
    expect(staleness(0)).toBe("fresh");
    expect(staleness(30)).toBe("aging");
    expect(staleness(47)).toBe("aging");
    expect(staleness(90)).toBe("stale");
  });
});
