// The Recall panel's wording and memory. Pure functions, plus what each project's panel last
// showed, so going to a memory and back does not lose the prompt and its results.

import type { LlmSetup, PassedOverWhy, ProviderKind, RecallPreview, RecallResult } from "../ipc";
import { PROVIDER_INFO, isModelProvider, providerSetup } from "./llm";

/** What a panel showed, kept while the window is open. */
export interface RecallState {
  prompt: string;
  offline: boolean;
  preview: RecallPreview | null;
}

const remembered = new Map<string, RecallState>();

export function recalled(project: string): RecallState {
  return remembered.get(project) ?? { prompt: "", offline: false, preview: null };
}

export function rememberRecall(project: string, state: RecallState): void {
  remembered.set(project, state);
}

/** Forgets every panel (tests start clean). */
export function forgetRecalls(): void {
  remembered.clear();
}

/** The selector in force in a few words ("OpenAI-compatible · qwen2.5:7b"), and why it is. */
export function configuredSelector(setup: LlmSetup): { provider: ProviderKind; label: string; reason: string } {
  const reason = setup.providerReason;
  if (!isModelProvider(setup.provider)) {
    return { provider: setup.provider, label: PROVIDER_INFO[setup.provider].label, reason };
  }
  const entry = providerSetup(setup, setup.provider);
  const model = entry ? (entry.model ?? entry.defaultModel) : "";
  return {
    provider: setup.provider,
    label: model ? `${PROVIDER_INFO[setup.provider].label} · ${model}` : PROVIDER_INFO[setup.provider].label,
    reason,
  };
}

/** The query terms behind an offline pick (`matched: a, b`), or `null` when a model chose. */
export function matchedTerms(reason: string): string[] | null {
  const prefix = "matched: ";
  if (!reason.startsWith(prefix)) return null;
  return reason
    .slice(prefix.length)
    .split(", ")
    .filter((term) => term.length > 0);
}

/** Why a match was passed over; `share` is its score as a share of the best one's. */
export function passedOverText(why: PassedOverWhy, limit: number, share: number): string {
  switch (why) {
    case "belowFloor":
      return `Too weak: ${Math.round(share * 100)} % of the best match's score`;
    case "overLimit":
      return `Over the limit: ${limit} better matches were injected`;
    case "unrelated":
      return "Not about this prompt: under the relevance gate";
  }
}

/** Why a result was cut before injection, if it was. */
export function truncationText(result: RecallResult): string | null {
  if (result.truncated === "lines") return "Cut to its first 200 lines";
  if (result.truncated === "bytes") return "Cut to 4 KB";
  return null;
}

/** A score as a share of the best one, for a bar (0 when there is no score). */
export function scoreShare(score: number | null, best: number): number {
  if (score === null || best <= 0) return 0;
  return Math.max(0, Math.min(1, score / best));
}
