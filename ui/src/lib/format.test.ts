import { describe, expect, it } from "vitest";
import { countOf, formatCount } from "./format";

describe("format", () => {
  it("groups thousands", () => {
    expect(formatCount(7)).toBe("7");
    expect(formatCount(20000)).toBe("20,000");
  });

  it("says one or many", () => {
    expect(countOf(1, "memory", "memories")).toBe("1 memory");
    expect(countOf(0, "memory", "memories")).toBe("0 memories");
    expect(countOf(2000, "session", "sessions")).toBe("2,000 sessions");
  });
});
