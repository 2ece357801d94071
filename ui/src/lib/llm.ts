// The Settings screen's form over the engine's LLM setup, and how model costs read on screen.
// Pure functions, so the form's rules (what is a change, what gets saved) are tested alone.

import type {
  EmbeddingSource,
  KeyStatus,
  LlmChoice,
  LlmSetup,
  ProviderKind,
  ProviderSetup,
  Usage,
} from "../ipc";
import { formatCount } from "./format";

/** The providers that talk to a model behind an API (offline and local have nothing to set). */
export type ModelProvider = Exclude<ProviderKind, "offline" | "local">;

export const MODEL_PROVIDERS: readonly ModelProvider[] = ["anthropic", "openai"];

export function isModelProvider(provider: ProviderKind): provider is ModelProvider {
  return (MODEL_PROVIDERS as readonly ProviderKind[]).includes(provider);
}

export const PROVIDER_INFO: Record<ProviderKind, { label: string; blurb: string }> = {
  offline: {
    label: "Offline",
    blurb:
      "The default without the local model. No model: word-matching recall, rule-based fixes; nothing leaves this machine.",
  },
  local: {
    label: "Local model",
    blurb:
      "The default once installed. Recall by meaning with a small model run on this machine (all-MiniLM-L6-v2, ≈ 83 MB, fetched once); rule-based fixes; nothing leaves this machine.",
  },
  anthropic: {
    label: "Anthropic",
    blurb: "Claude through the Messages API.",
  },
  openai: {
    label: "OpenAI-compatible",
    blurb: "OpenAI, Ollama, llama.cpp, LM Studio, vLLM.",
  },
};

/** What the form edits: the provider, and each model provider's model and base URL as typed
 * (blank = the default). */
export interface LlmDraft {
  provider: ProviderKind;
  fields: Record<ModelProvider, { model: string; baseUrl: string }>;
  /** Where local recall's vectors come from, and the server's embedding model (blank = the default). */
  embeddings: EmbeddingSource;
  embeddingModel: string;
}

export function providerSetup(setup: LlmSetup, provider: ModelProvider): ProviderSetup | null {
  return setup.providers.find((entry) => entry.provider === provider) ?? null;
}

export function draftFromSetup(setup: LlmSetup): LlmDraft {
  const fields = (provider: ModelProvider) => {
    const entry = providerSetup(setup, provider);
    return { model: entry?.model ?? "", baseUrl: entry?.baseUrl ?? "" };
  };
  return {
    provider: setup.provider,
    fields: { anthropic: fields("anthropic"), openai: fields("openai") },
    embeddings: setup.embeddings,
    embeddingModel: setup.embeddingModel ?? "",
  };
}

/** The draft as the engine saves it: trimmed, blank as `null` (the default). */
export function choiceFromDraft(draft: LlmDraft): LlmChoice {
  const blankIsNull = (text: string) => (text.trim() === "" ? null : text.trim());
  return {
    provider: draft.provider,
    providers: MODEL_PROVIDERS.map((provider) => ({
      provider,
      model: blankIsNull(draft.fields[provider].model),
      baseUrl: blankIsNull(draft.fields[provider].baseUrl),
    })),
    embeddings: draft.embeddings,
    // The server's model is saved with the server only (the engine keeps it otherwise).
    embeddingModel: draft.embeddings === "openai" ? (blankIsNull(draft.embeddingModel) ?? undefined) : undefined,
  };
}

/** Whether `draft` takes its vectors from elsewhere than `setup` saved: another source, or
 * another server model (which matters with the server only). */
export function vectorSourceChanged(draft: LlmDraft, setup: LlmSetup): boolean {
  const model = (text: string | null) => text?.trim() || null;
  return (
    draft.embeddings !== setup.embeddings ||
    (draft.embeddings === "openai" && model(draft.embeddingModel) !== model(setup.embeddingModel))
  );
}

/** Whether saving `draft` would change what `setup` holds (whitespace alone is no change; a
 * trailing `/` on a base URL is none either, as the engine drops it). */
export function isDirty(draft: LlmDraft, setup: LlmSetup): boolean {
  const saved = choiceFromDraft(draftFromSetup(setup));
  const next = choiceFromDraft(draft);
  const url = (text: string | null) => text?.replace(/\/+$/, "") ?? null;
  return (
    saved.provider !== next.provider ||
    vectorSourceChanged(draft, setup) ||
    saved.providers.some((entry, i) => {
      const other = next.providers[i];
      return entry.model !== other?.model || url(entry.baseUrl) !== url(other?.baseUrl ?? null);
    })
  );
}

export type Tone = "success" | "neutral" | "warning";

/** Where a key comes from, in a few words, and how it should look. */
export function keySourceLabel(status: KeyStatus): { text: string; tone: Tone } {
  if (status.source === "env") {
    return { text: `From ${status.envVar ?? "the environment"}`, tone: "success" };
  }
  if (status.source === "keyring") return { text: "Stored in the keyring", tone: "success" };
  if (status.keyringError) return { text: "Keyring unavailable", tone: "warning" };
  return { text: "No key", tone: "neutral" };
}


/** "840 ms", "1.2 s", "12 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return seconds < 10 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds)} s`;
}

/** "21 in · 1 out tokens", counting cached input as input (it is still read by the model). */
export function usageText(usage: Usage): string {
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheCreationTokens;
  return `${formatCount(input)} in · ${formatCount(usage.outputTokens)} out tokens`;
}
