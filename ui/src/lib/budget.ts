// The index budget Claude Code applies to MEMORY.md (FORMATS.md §2): 200 lines and 25,000
// UTF-16 units of the stripped text; past either, the rest is not loaded. The engine measures
// and cuts; this only turns its numbers into what the budget bar and the index view show.

import type { LoadedIndex } from "../ipc";
import { MAX_INDEX_BYTES, MAX_INDEX_LINES } from "../ipc/bindings/EngineRules";

export { MAX_INDEX_BYTES, MAX_INDEX_LINES };

export interface Meter {
  used: number;
  limit: number;
  /** used / limit, not capped (1.3 = 30% over). */
  ratio: number;
  level: "ok" | "near" | "over";
}

function meter(used: number, limit: number): Meter {
  const ratio = used / limit;
  const level = ratio > 1 ? "over" : ratio >= 0.8 ? "near" : "ok";
  return { used, limit, ratio, level };
}

export function indexBudget(index: LoadedIndex): { lines: Meter; bytes: Meter } {
  return { lines: meter(index.lines, MAX_INDEX_LINES), bytes: meter(index.bytes, MAX_INDEX_BYTES) };
}

/** Claude Code's `formatFileSize`: bytes under 1 KiB, else KB with one decimal, `.0` dropped. */
export function formatSize(units: number): string {
  if (units < 1024) return `${units} bytes`;
  const kb = (units / 1024).toFixed(1).replace(/\.0$/, "");
  return `${kb}KB`;
}

/** The index as split by the cut: what Claude Code loads (without its appended warning) and
 * what it never sees. Their concatenation is the whole stripped index. */
export function splitAtCut(index: LoadedIndex): { loaded: string; cut: string } {
  if (!index.truncated || index.warning === null) return { loaded: index.content, cut: "" };
  const suffix = `\n\n${index.warning}`;
  const loaded = index.content.endsWith(suffix)
    ? index.content.slice(0, index.content.length - suffix.length)
    : index.content;
  return { loaded, cut: index.cutText };
}
