// A unified diff (as the engine writes it: `---`/`+++` headers, `@@` hunks) split into lines a
// view can colour, with old and new line numbers. Pure, so it is tested without a DOM.

export type DiffLineKind = "hunk" | "context" | "added" | "removed";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  /** Line number on the old side (context and removed lines). */
  old: number | null;
  /** Line number on the new side (context and added lines). */
  new: number | null;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/;

/** The lines of `diff` below its file headers. `\ No newline at end of file` markers and
 * anything before the first hunk are dropped. */
export function parseUnifiedDiff(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  for (const raw of diff.split("\n")) {
    const hunk = HUNK.exec(raw);
    if (hunk) {
      inHunk = true;
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      lines.push({ kind: "hunk", text: raw, old: null, new: null });
      continue;
    }
    if (!inHunk || raw.startsWith("\\")) continue;
    if (raw.startsWith("+")) {
      lines.push({ kind: "added", text: raw.slice(1), old: null, new: newLine++ });
    } else if (raw.startsWith("-")) {
      lines.push({ kind: "removed", text: raw.slice(1), old: oldLine++, new: null });
    } else if (raw.startsWith(" ")) {
      lines.push({ kind: "context", text: raw.slice(1), old: oldLine++, new: newLine++ });
    }
  }
  return lines;
}

/** Lines added and removed, for a "+3 −1" summary. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === "added") added += 1;
    if (line.kind === "removed") removed += 1;
  }
  return { added, removed };
}
