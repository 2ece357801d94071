import { describe, expect, it } from "vitest";

import type { KeyStatus, LlmSetup } from "../ipc";
import {
  choiceFromDraft,
  draftFromSetup,
  formatDuration,
  isDirty,
  keySourceLabel,
  usageText,
} from "./llm";

function key(overrides: Partial<KeyStatus> = {}): KeyStatus {
  return { provider: "openai", source: "none", envVar: null, keyringError: null, ...overrides };
}

function setup(overrides: Partial<LlmSetup> = {}): LlmSetup {
  return {
    configPath: "/e/config.toml",
    provider: "openai",
    providerReason: "[llm] provider in /e/config.toml",
    providerConfigured: true,
    providers: [
      {
        provider: "anthropic",
        model: null,
        baseUrl: null,
        defaultModel: "claude-haiku-4-5",
        defaultBaseUrl: "https://api.anthropic.com",
        baseUrlEnv: null,
        keyEnvVar: "ANTHROPIC_API_KEY",
        key: key({ provider: "anthropic" }),
      },
      {
        provider: "openai",
        model: "qwen2.5:7b",
        baseUrl: "http://localhost:11434/v1",
        defaultModel: "gpt-4.1-mini",
        defaultBaseUrl: "https://api.openai.com/v1",
        baseUrlEnv: null,
        keyEnvVar: "OPENAI_API_KEY",
        key: key(),
      },
    ],
    embeddings: "local",
    embeddingModel: null,
    defaultEmbeddingModel: "text-embedding-3-small",
    ...overrides,
  };
}

describe("the settings form", () => {
  it("starts from what is saved, with blanks for defaults", () => {
    const draft = draftFromSetup(setup());
    expect(draft.provider).toBe("openai");
    expect(draft.fields.anthropic).toEqual({ model: "", baseUrl: "" });
    expect(draft.fields.openai).toEqual({ model: "qwen2.5:7b", baseUrl: "http://localhost:11434/v1" });
    expect(isDirty(draft, setup())).toBe(false);
  });

  it("saves trimmed values and blanks as the default", () => {
    const draft = draftFromSetup(setup());
    draft.fields.openai.model = "  llama3.2 ";
    draft.fields.anthropic.baseUrl = "   ";
    expect(choiceFromDraft(draft)).toEqual({
      provider: "openai",
      providers: [
        { provider: "anthropic", model: null, baseUrl: null },
        { provider: "openai", model: "llama3.2", baseUrl: "http://localhost:11434/v1" },
      ],
      embeddings: "local",
    });
  });

  it("counts only real changes as unsaved", () => {
    const draft = draftFromSetup(setup());
    draft.fields.openai.model = " qwen2.5:7b ";
    draft.fields.openai.baseUrl = "http://localhost:11434/v1/";
    expect(isDirty(draft, setup()), "whitespace and a trailing slash are no change").toBe(false);
    draft.provider = "offline";
    expect(isDirty(draft, setup())).toBe(true);
    draft.provider = "openai";
    draft.fields.anthropic.model = "claude-sonnet-4-5";
    expect(isDirty(draft, setup())).toBe(true);
  });

  it("counts a change of where the vectors come from", () => {
    const draft = draftFromSetup(setup({ provider: "local" }));
    draft.embeddingModel = "  ";
    expect(isDirty(draft, setup({ provider: "local" })), "blank is the default").toBe(false);
    draft.embeddings = "openai";
    draft.embeddingModel = " nomic-embed-text ";
    expect(isDirty(draft, setup({ provider: "local" }))).toBe(true);
    expect(choiceFromDraft(draft)).toMatchObject({ embeddings: "openai", embeddingModel: "nomic-embed-text" });
    draft.embeddings = "local";
    expect(isDirty(draft, setup({ provider: "local" })), "the server's model matters with the server only").toBe(
      false,
    );
    expect(choiceFromDraft(draft).embeddingModel).toBeUndefined();
  });
});

describe("key sources", () => {
  it("say where the key comes from, and when the keyring cannot be read", () => {
    expect(keySourceLabel(key({ source: "env", envVar: "OPENAI_API_KEY" }))).toEqual({
      text: "From OPENAI_API_KEY",
      tone: "success",
    });
    expect(keySourceLabel(key({ source: "keyring" })).text).toBe("Stored in the keyring");
    expect(keySourceLabel(key({ keyringError: "OS keyring: no D-Bus" }))).toEqual({
      text: "Keyring unavailable",
      tone: "warning",
    });
    expect(keySourceLabel(key()).text).toBe("No key");
  });
});

describe("costs", () => {
  it("read as people say them", () => {
    expect(formatDuration(42.4)).toBe("42 ms");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(15_400)).toBe("15 s");
    expect(
      usageText({ inputTokens: 900, outputTokens: 30, cacheReadTokens: 1200, cacheCreationTokens: 0, calls: 1 }),
    ).toBe("2,100 in · 30 out tokens");
  });
});
