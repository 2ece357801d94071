// What the shell answers for the Settings screen and the Recall panel, shaped like the real
// answers (the stockerly fixture's memories), for component tests.

import type {
  ConnectionCheck,
  KeyStatus,
  LlmSetup,
  ProviderSetup,
  RecallPreview,
  RecallReport,
  RecallResult,
} from "../ipc";

export const CONFIG_PATH = "/home/ada/.local/share/engram/config.toml";

export function keyStatus(overrides: Partial<KeyStatus> = {}): KeyStatus {
  return { provider: "openai", source: "none", envVar: null, keyringError: null, ...overrides };
}

export function anthropicSetup(overrides: Partial<ProviderSetup> = {}): ProviderSetup {
  return {
    provider: "anthropic",
    model: null,
    baseUrl: null,
    defaultModel: "claude-haiku-4-5",
    defaultBaseUrl: "https://api.anthropic.com",
    baseUrlEnv: null,
    keyEnvVar: "ANTHROPIC_API_KEY",
    key: keyStatus({ provider: "anthropic" }),
    ...overrides,
  };
}

export function openaiSetup(overrides: Partial<ProviderSetup> = {}): ProviderSetup {
  return {
    provider: "openai",
    model: null,
    baseUrl: null,
    defaultModel: "gpt-4.1-mini",
    defaultBaseUrl: "https://api.openai.com/v1",
    baseUrlEnv: null,
    keyEnvVar: "OPENAI_API_KEY",
    key: keyStatus(),
    ...overrides,
  };
}

/** A fresh install: offline, nothing configured, no keys, no local model. */
export function llmSetup(overrides: Partial<LlmSetup> = {}): LlmSetup {
  return {
    configPath: CONFIG_PATH,
    provider: "offline",
    providerReason: "no provider is configured and the local model is not installed (engram models fetch)",
    providerConfigured: false,
    providers: [anthropicSetup(), openaiSetup()],
    embeddings: "local",
    embeddingModel: null,
    defaultEmbeddingModel: "text-embedding-3-small",
    ...overrides,
  };
}

export function connectionCheck(overrides: Partial<ConnectionCheck> = {}): ConnectionCheck {
  return {
    provider: "openai",
    model: "llama3.2",
    baseUrl: "http://127.0.0.1:11434/v1",
    keySource: "none",
    ok: true,
    latencyMs: 842,
    answeredModel: "llama3.2:3b",
    reply: "ok",
    usage: { inputTokens: 21, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, calls: 1 },
    error: null,
    hint: null,
    ...overrides,
  };
}

const MEMORY_DIR = "/home/ada/.claude/projects/-path-to-Demo/memory";

export function recallResult(overrides: Partial<RecallResult> = {}): RecallResult {
  return {
    file: "project_decision.md",
    type: "project",
    description: "Iterate on the existing codebase; fix the multi-currency bug in execute_trade first",
    age: "10 days ago",
    caveat: "This memory is 10 days old. Memories are point-in-time observations.",
    content: "---\nname: Rewrite vs iterate\n---\nFix execute_trade's hardcoded USD.\n",
    path: `${MEMORY_DIR}/project_decision.md`,
    header: `This memory is 10 days old.\n\nMemory: ${MEMORY_DIR}/project_decision.md:`,
    truncated: null,
    score: 4.213,
    reason: "matched: currency, execute_trade",
    verdict: "shares 2 of the prompt's 5 words (46 % of its weight); meets 2 words and 20 %, or 40 % alone",
    tokens: 312,
    ...overrides,
  };
}

export function recallReport(overrides: Partial<RecallReport> = {}): RecallReport {
  return {
    query: "Fix the multi-currency bug in execute_trade",
    memoryDir: MEMORY_DIR,
    provider: "offline",
    model: null,
    results: [recallResult()],
    considered: 7,
    excluded: [],
    rejected: [],
    passedOver: [],
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, calls: 0 },
    injectedChars: 1420,
    injectedTokens: 355,
    elapsedMs: 4,
    skipped: null,
    unreadable: [],
    degraded: null,
    gate: 'the prompt reads as a general question ("how …"): it is about this dir when a memory shares 2 of the prompt\'s words covering 20 % of its weight, or one covering 40 %; then every memory sharing its words is related',
    providerReason: "no provider is configured and the local model is not installed (engram models fetch)",
    ...overrides,
  };
}

export function recallPreview(report: Partial<RecallReport> = {}, hookQuery = true): RecallPreview {
  return { report: recallReport(report), hookQuery };
}
