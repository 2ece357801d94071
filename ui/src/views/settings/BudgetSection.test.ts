import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { BudgetStatus, UsageReport, UsageRow } from "../../ipc";
import { mockShell } from "../../testing/shell";
import BudgetSection from "./BudgetSection.svelte";

const DAY = "2026-11-22";

function status(tokensToday: number, dailyTokens: number | null): BudgetStatus {
  return { day: DAY, tokensToday, dailyTokens, reached: dailyTokens !== null && tokensToday >= dailyTokens };
}

function row(job: string, totalTokens: number, calls: number): UsageRow {
  return {
    day: DAY,
    project: "-path-to-Demo",
    job,
    provider: "anthropic",
    model: "claude-haiku-4-5",
    inputTokens: totalTokens,
    outputTokens: 0,
    cacheCreationTokens: 0,
    cacheReadTokens: 0,
    calls,
    totalTokens,
  };
}

function report(budget: BudgetStatus, rows: UsageRow[] = []): UsageReport {
  return { rows, skipped: [], budget };
}

function field(): HTMLInputElement {
  return screen.getByRole("textbox", { name: "Daily budget (tokens)" }) as HTMLInputElement;
}

describe("the token budget section", () => {
  it("shows today's tokens against the budget, near it at 80 %, with what each job spent", async () => {
    mockShell({
      token_usage: () => report(status(85_000, 100_000), [row("recall", 5_000, 40), row("extract", 80_000, 12)]),
    });
    render(BudgetSection);

    const today = await screen.findByTestId("usage-today");
    expect(today.textContent).toContain("Today: 85,000 of 100,000 tokens");
    expect(today.textContent).toContain("(85 %)");
    const meter = screen.getByRole("meter", { name: "Of the daily budget" });
    expect(meter.getAttribute("aria-valuenow")).toBe("85000");
    expect(meter.closest("[data-level]")?.getAttribute("data-level")).toBe("near");
    const jobs = screen.getByTestId("usage-by-job").textContent ?? "";
    expect(jobs.indexOf("Extraction")).toBeLessThan(jobs.indexOf("Recall"));
    expect(jobs).toContain("80,000 tokens · 12 calls");
    expect(field().value).toBe("100,000");
    expect(screen.queryByTestId("budget-reached")).toBeNull();
  });

  it("sets a budget typed with separators and says when it is reached", async () => {
    const shell = mockShell({
      token_usage: () => report(status(60_000, null)),
      set_daily_budget: (args) => status(60_000, args.dailyTokens as number | null),
    });
    render(BudgetSection);

    expect((await screen.findByTestId("usage-today")).textContent).toContain("no daily budget");
    const set = screen.getByRole("button", { name: "Set budget" }) as HTMLButtonElement;
    expect(set.disabled).toBe(true);
    await fireEvent.input(field(), { target: { value: "50 000" } });
    await fireEvent.click(set);

    expect(await screen.findByTestId("budget-reached")).toBeTruthy();
    expect(shell.of("set_daily_budget")[0]?.args).toEqual({ dailyTokens: 50_000 });
    expect(screen.getByTestId("usage-today").textContent).toContain("Today: 60,000 of 50,000 tokens");
    expect(screen.getByText("Saved to config.toml")).toBeTruthy();
    expect(field().value).toBe("50,000");

    await fireEvent.click(screen.getByRole("button", { name: "Remove" }));
    await expect.poll(() => shell.of("set_daily_budget")).toHaveLength(2);
    expect(shell.of("set_daily_budget")[1]?.args).toEqual({ dailyTokens: null });
    await expect.poll(() => screen.queryByTestId("budget-reached")).toBeNull();
  });

  it("refuses 0 and words before asking the shell", async () => {
    const shell = mockShell({ token_usage: () => report(status(0, 10_000)) });
    render(BudgetSection);
    await screen.findByTestId("usage-today");

    await fireEvent.input(field(), { target: { value: "0" } });
    expect(screen.getByRole("alert").textContent).toContain("0 allows no model call");
    expect((screen.getByRole("button", { name: "Set budget" }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(field(), { target: { value: "a lot" } });
    expect(screen.getByRole("alert").textContent).toContain("A whole number of tokens");
    expect(shell.of("set_daily_budget")).toHaveLength(0);
  });
});
