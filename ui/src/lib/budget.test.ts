import { describe, expect, it } from "vitest";

import type { LoadedIndex } from "../ipc";
import { formatSize, indexBudget, splitAtCut } from "./budget";

function index(overrides: Partial<LoadedIndex>): LoadedIndex {
  return {
    content: "- [A](a.md)",
    lines: 1,
    bytes: 11,
    truncated: false,
    warning: null,
    entries: [],
    exists: true,
    cutFromLine: null,
    linesCut: 0,
    bytesCut: 0,
    cutText: "",
    ...overrides,
  };
}

describe("indexBudget", () => {
  it("grades each limit: ok, near (80%), over", () => {
    expect(indexBudget(index({ lines: 48, bytes: 3_100 })).lines.level).toBe("ok");
    expect(indexBudget(index({ lines: 160 })).lines.level).toBe("near");
    const over = indexBudget(index({ lines: 250, bytes: 30_000 }));
    expect(over.lines).toMatchObject({ level: "over", ratio: 1.25, limit: 200 });
    expect(over.bytes.level).toBe("over");
  });
});

describe("formatSize", () => {
  it("matches Claude Code's wording", () => {
    expect(formatSize(500)).toBe("500 bytes");
    expect(formatSize(25_000)).toBe("24.4KB");
    expect(formatSize(1024)).toBe("1KB");
  });
});

describe("splitAtCut", () => {
  it("drops the appended warning from the loaded part and keeps the cut text", () => {
    const warning = "> WARNING: MEMORY.md is 201 lines (limit: 200). Only part of it was loaded.";
    const split = splitAtCut(
      index({ content: `kept\n\n${warning}`, truncated: true, warning, cutText: "\ncut" }),
    );
    expect(split).toEqual({ loaded: "kept", cut: "\ncut" });
  });

  it("is all loaded when nothing was cut", () => {
    expect(splitAtCut(index({}))).toEqual({ loaded: "- [A](a.md)", cut: "" });
  });
});
