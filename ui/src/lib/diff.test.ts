import { describe, expect, it } from "vitest";

import { diffStats, parseUnifiedDiff, sideBySide } from "./diff";

const DIFF = `--- a/feedback_testing.md\tv000001
+++ b/feedback_testing.md\tv000002
@@ -1,4 +1,4 @@
 ---
-description: old
+description: new
 type: feedback
 ---
@@ -9,2 +9,3 @@
 tail
+added
\\ No newline at end of file
`;

describe("parseUnifiedDiff", () => {
  it("numbers each side from the hunk headers and drops the file headers", () => {
    const lines = parseUnifiedDiff(DIFF);
    expect(lines[0]).toMatchObject({ kind: "hunk" });
    expect(lines[1]).toEqual({ kind: "context", text: "---", old: 1, new: 1 });
    expect(lines[2]).toEqual({ kind: "removed", text: "description: old", old: 2, new: null });
    expect(lines[3]).toEqual({ kind: "added", text: "description: new", old: null, new: 2 });
    expect(lines[4]).toEqual({ kind: "context", text: "type: feedback", old: 3, new: 3 });
    const last = lines[lines.length - 1];
    expect(last).toEqual({ kind: "added", text: "added", old: null, new: 10 });
    expect(lines.some((line) => line.text.includes("No newline"))).toBe(false);
  });

  it("counts added and removed lines", () => {
    expect(diffStats(parseUnifiedDiff(DIFF))).toEqual({ added: 2, removed: 1 });
  });

  it("reads an empty diff as no lines", () => {
    expect(parseUnifiedDiff("")).toEqual([]);
  });
});

describe("sideBySide", () => {
  const row = (r: { before: { num: number; text: string; changed: boolean } | null; after: { num: number; text: string; changed: boolean } | null }) =>
    `${r.before ? `${r.before.num}${r.before.changed ? "-" : " "}${r.before.text}` : "·"} | ${r.after ? `${r.after.num}${r.after.changed ? "+" : " "}${r.after.text}` : "·"}`;

  it("aligns the whole files: unchanged lines face each other, a replaced run its replacement", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    const after = "a\nB\nB2\nc\nd\ne\nf\ng\ni\nj\nk\n";
    const diff =
      "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n@@ -6,5 +7,5 @@\n f\n g\n-h\n i\n j\n+k\n";
    expect(sideBySide(before, after, diff).map(row)).toEqual([
      "1 a | 1 a",
      "2-b | 2+B",
      "· | 3+B2",
      "3 c | 4 c",
      "4 d | 5 d",
      "5 e | 6 e",
      "6 f | 7 f",
      "7 g | 8 g",
      "8-h | ·",
      "9 i | 9 i",
      "10 j | 10 j",
      "· | 11+k",
    ]);
  });

  it("leaves the missing side of an added or deleted file empty", () => {
    const added = sideBySide(null, "x\ny\n", "--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    expect(added.map(row)).toEqual(["· | 1+x", "· | 2+y"]);
    const deleted = sideBySide("x\ny", null, "--- a/n.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n\\ No newline at end of file\n");
    expect(deleted.map(row)).toEqual(["1-x | ·", "2-y | ·"]);
  });

  it("shows an unchanged file whole", () => {
    expect(sideBySide("a\nb\n", "a\nb\n", "").map(row)).toEqual(["1 a | 1 a", "2 b | 2 b"]);
  });
});
