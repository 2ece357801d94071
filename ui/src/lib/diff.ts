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

/** One side of a row of a side-by-side view: a line of the file, or `null` for the gap across
 * from a line only the other side has. */
export interface SideLine {
  num: number;
  text: string;
  changed: boolean;
}

export interface SideRow {
  before: SideLine | null;
  after: SideLine | null;
}

/** The lines of `text` (a final line break ends the last line; it does not start another). */
function linesOf(text: string | null): string[] {
  if (text === null || text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The whole of `before` and `after` side by side, aligned: the lines `diff` (unified, from
 * `before` to `after`) leaves alone face each other, a removed run faces the added run that
 * replaced it, and either side gets a gap where the other has more. `null` is a missing file
 * (an add or a delete). */
export function sideBySide(before: string | null, after: string | null, diff: string): SideRow[] {
  const left = linesOf(before);
  const right = linesOf(after);
  const rows: SideRow[] = [];
  // Next line of each side not yet placed (1-based, as diffs count).
  let oldNext = 1;
  let newNext = 1;
  let removed: SideLine[] = [];
  let added: SideLine[] = [];

  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      rows.push({ before: removed[i] ?? null, after: added[i] ?? null });
    }
    removed = [];
    added = [];
  };
  // Unchanged lines up to (not including) old line `oldUntil`.
  const same = (oldUntil: number) => {
    while (oldNext < oldUntil && oldNext <= left.length) {
      rows.push({
        before: { num: oldNext, text: left[oldNext - 1] ?? "", changed: false },
        after: { num: newNext, text: right[newNext - 1] ?? "", changed: false },
      });
      oldNext++;
      newNext++;
    }
  };

  for (const line of parseUnifiedDiff(diff)) {
    if (line.kind === "hunk") {
      flush();
      continue;
    }
    if (line.kind === "removed" && line.old !== null) {
      if (added.length > 0) flush();
      if (removed.length === 0) same(line.old);
      removed.push({ num: line.old, text: left[line.old - 1] ?? line.text, changed: true });
      oldNext = line.old + 1;
    } else if (line.kind === "added" && line.new !== null) {
      if (removed.length === 0 && added.length === 0) same(oldNext + (line.new - newNext));
      added.push({ num: line.new, text: right[line.new - 1] ?? line.text, changed: true });
      newNext = line.new + 1;
    } else if (line.kind === "context" && line.old !== null) {
      flush();
      same(line.old + 1);
    }
  }
  flush();
  same(left.length + 1);
  // An after side longer than the before side past the last hunk (cannot happen with a diff of
  // these two texts; kept so a stale diff never drops lines).
  while (newNext <= right.length) {
    rows.push({ before: null, after: { num: newNext, text: right[newNext - 1] ?? "", changed: false } });
    newNext++;
  }
  return rows;
}
