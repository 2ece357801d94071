// Today's model tokens against the daily budget (`[budget] daily_tokens`): the engine logs every
// call and decides what stops; this only turns its numbers into what the Settings section, the
// Dreams tab and their tests show.

import type { BudgetStatus, UsageRow } from "../ipc";
import type { Meter } from "./budget";
import { formatCount } from "./format";

/** The budget as a bar: near from 80 % (when the app notifies), over once reached (model work
 * stops); `null` without a budget. */
export function tokensMeter(status: BudgetStatus): Meter | null {
  if (status.dailyTokens === null) return null;
  const ratio = status.tokensToday / status.dailyTokens;
  const level = status.reached ? "over" : ratio >= 0.8 ? "near" : "ok";
  return { used: status.tokensToday, limit: status.dailyTokens, ratio, level };
}

/** "Today: 12,345 of 100,000 tokens", as the tray says it; "Today: 12,345 tokens" without a
 * budget. */
export function usageLine(status: BudgetStatus): string {
  const today = formatCount(status.tokensToday);
  return status.dailyTokens === null
    ? `Today: ${today} tokens`
    : `Today: ${today} of ${formatCount(status.dailyTokens)} tokens`;
}

/** "the daily token budget is reached (12,345 of 10,000 tokens today)". */
export function budgetReachedWords(status: BudgetStatus): string {
  return `today's token budget is reached (${formatCount(status.tokensToday)} of ${formatCount(status.dailyTokens ?? 0)} tokens)`;
}

export type ParsedBudget = { ok: true; value: number | null } | { ok: false; error: string };

/** What the budget field means: blank is no budget; else a whole number of tokens above 0,
 * written with or without separators ("100000", "100,000", "100 000"). */
export function parseDailyTokens(text: string): ParsedBudget {
  const compact = text.trim().replace(/[\s,_]/g, "");
  if (compact === "") return { ok: true, value: null };
  if (!/^\d+$/.test(compact)) return { ok: false, error: "A whole number of tokens, like 200000." };
  const value = Number(compact);
  if (value === 0) return { ok: false, error: "0 allows no model call: choose Offline above instead." };
  if (!Number.isSafeInteger(value)) return { ok: false, error: "That is more tokens than can be counted." };
  return { ok: true, value };
}

const JOB_LABELS: Record<string, string> = {
  recall: "Recall",
  dream: "Dreams",
  extract: "Extraction",
  sessionMemory: "Session memory",
  merge: "Snapshot merges",
  connectionTest: "Connection tests",
};

export interface JobUsage {
  job: string;
  label: string;
  tokens: number;
  calls: number;
}

/** `day`'s tokens per job, most first. */
export function usageByJob(rows: UsageRow[], day: string): JobUsage[] {
  const jobs = new Map<string, JobUsage>();
  for (const row of rows) {
    if (row.day !== day) continue;
    const entry = jobs.get(row.job) ?? { job: row.job, label: JOB_LABELS[row.job] ?? row.job, tokens: 0, calls: 0 };
    entry.tokens += row.totalTokens;
    entry.calls += row.calls;
    jobs.set(row.job, entry);
  }
  return [...jobs.values()].sort((a, b) => b.tokens - a.tokens || a.label.localeCompare(b.label));
}
