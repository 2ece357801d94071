import { describe, expect, it } from "vitest";

import type { BudgetStatus, UsageRow } from "../ipc";
import { budgetReachedWords, parseDailyTokens, tokensMeter, usageByJob, usageLine } from "./usage";

function status(tokensToday: number, dailyTokens: number | null): BudgetStatus {
  return { day: "2026-11-22", tokensToday, dailyTokens, reached: dailyTokens !== null && tokensToday >= dailyTokens };
}

function row(day: string, job: string, totalTokens: number, calls = 1): UsageRow {
  return {
    day,
    project: "-p",
    job,
    provider: "anthropic",
    model: "m",
    inputTokens: totalTokens,
    outputTokens: 0,
    cacheCreationTokens: 0,
    cacheReadTokens: 0,
    calls,
    totalTokens,
  };
}

describe("token usage", () => {
  it("reads today's tokens against the budget as the tray does", () => {
    expect(usageLine(status(12_345, 100_000))).toBe("Today: 12,345 of 100,000 tokens");
    expect(usageLine(status(42, null))).toBe("Today: 42 tokens");
    expect(budgetReachedWords(status(10_500, 10_000))).toBe(
      "today's token budget is reached (10,500 of 10,000 tokens)",
    );
  });

  it("turns near at 80 % and over once the budget is reached", () => {
    expect(tokensMeter(status(10, null))).toBeNull();
    expect(tokensMeter(status(79_999, 100_000))?.level).toBe("ok");
    expect(tokensMeter(status(80_000, 100_000))?.level).toBe("near");
    const reached = tokensMeter(status(100_000, 100_000));
    expect(reached?.level).toBe("over");
    expect(reached?.ratio).toBe(1);
  });

  it("accepts a budget with separators, blank for none, and refuses 0 and words", () => {
    expect(parseDailyTokens(" 200,000 ")).toEqual({ ok: true, value: 200_000 });
    expect(parseDailyTokens("100 000")).toEqual({ ok: true, value: 100_000 });
    expect(parseDailyTokens("")).toEqual({ ok: true, value: null });
    expect(parseDailyTokens("0").ok).toBe(false);
    expect(parseDailyTokens("lots").ok).toBe(false);
    expect(parseDailyTokens("1.5").ok).toBe(false);
    expect(parseDailyTokens("99999999999999999999").ok).toBe(false);
  });

  it("sums one day's rows per job, most tokens first", () => {
    const rows = [
      row("2026-11-22", "recall", 300, 3),
      row("2026-11-22", "extract", 1_000, 2),
      row("2026-11-22", "recall", 200, 1),
      row("2026-11-21", "dream", 50_000),
      row("2026-11-22", "somethingNew", 10),
    ];
    expect(usageByJob(rows, "2026-11-22")).toEqual([
      { job: "extract", label: "Extraction", tokens: 1_000, calls: 2 },
      { job: "recall", label: "Recall", tokens: 500, calls: 4 },
      { job: "somethingNew", label: "somethingNew", tokens: 10, calls: 1 },
    ]);
  });
});
