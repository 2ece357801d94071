import { describe, expect, it } from "vitest";

import { diffStats, parseUnifiedDiff } from "./diff";

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
