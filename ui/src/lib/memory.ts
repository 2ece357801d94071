// How memories are labelled and filtered on screen. Pure functions over the engine's types.

import type { Finding, MemoryHeader, MemoryType } from "../ipc";
import { FIXABLE_RULES, MEMORY_TYPES as ENGINE_MEMORY_TYPES } from "../ipc/bindings/EngineRules";

export const MEMORY_TYPES: readonly MemoryType[] = ENGINE_MEMORY_TYPES;

/** What each type is for, in Claude Code's taxonomy (shown as the badge's tooltip and in the
 * editor). */
export const TYPE_HINTS: Record<MemoryType, string> = {
  user: "Who the user is: role, preferences, expertise",
  feedback: "How to work: corrections and confirmed approaches",
  project: "What is going on: goals, decisions, deadlines",
  reference: "Where to look: pointers to external systems",
};

/** The title of a memory in a list: its name, else its file name without `.md`. */
export function memoryTitle(memory: Pick<MemoryHeader, "name" | "file">): string {
  const name = memory.name?.trim();
  if (name) return name;
  const base = memory.file.split("/").pop() ?? memory.file;
  return base.replace(/\.md$/, "");
}

export type TypeFilter = MemoryType | "all" | "none";

/** Whether a memory passes the type chip and the text typed in the filter box (all words, in
 * name, description or file, any case). */
export function memoryMatches(memory: MemoryHeader, type: TypeFilter, text: string): boolean {
  if (type === "none" && memory.type !== null) return false;
  if (type !== "all" && type !== "none" && memory.type !== type) return false;
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = [memory.name ?? "", memory.description ?? "", memory.file]
    .join("\n")
    .toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** Findings grouped by file, errors first within each. */
export function findingsByFile(findings: readonly Finding[]): Map<string, Finding[]> {
  const byFile = new Map<string, Finding[]>();
  for (const finding of findings) {
    const list = byFile.get(finding.file) ?? [];
    list.push(finding);
    byFile.set(finding.file, list);
  }
  for (const list of byFile.values()) {
    list.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1));
  }
  return byFile;
}

/** Lint rules the engine can fix. */
const FIXABLE: ReadonlySet<string> = new Set(FIXABLE_RULES);

export function isFixable(finding: Finding): boolean {
  return FIXABLE.has(finding.rule);
}

/** How stale a memory is, for colouring its age: fresh under a week, aging under two months,
 * stale after (Claude Code itself only adds a caveat past one day). */
export function staleness(days: number): "fresh" | "aging" | "stale" {
  if (days < 7) return "fresh";
  if (days < 60) return "aging";
  return "stale";
}
