// src-tauri/src/commands/settings.rs: the language model Engram's jobs use, API keys in the OS
// keyring, a connection test, the daily token budget with today's usage, and Engram's MCP server
// in Claude Code's `.claude.json`.

import type { ConnectionCheck } from "./bindings/ConnectionCheck";
import type { EmbedAllProgress } from "./bindings/EmbedAllProgress";
import type { EmbedAllReport } from "./bindings/EmbedAllReport";
import type { ConnectionTest } from "./bindings/ConnectionTest";
import type { LlmChoice } from "./bindings/LlmChoice";
import type { LlmSetup } from "./bindings/LlmSetup";
import type { LocalModelStatus } from "./bindings/LocalModelStatus";
import type { McpChange } from "./bindings/McpChange";
import type { McpStatus } from "./bindings/McpStatus";
import type { ModelFetchProgress } from "./bindings/ModelFetchProgress";
import type { ProviderKind } from "./bindings/ProviderKind";
import type { BudgetStatus } from "./bindings/BudgetStatus";
import type { UsageReport } from "./bindings/UsageReport";
import { Channel } from "@tauri-apps/api/core";

import { call } from "./call";

export const settingsCommands = {
  /** The language-model settings: provider, each provider's model and base URL, and where
   * each API key comes from (never the key). */
  llmSetup: () => call<LlmSetup>("llm_setup"),
  /** Writes the provider choice to `config.toml`; blank fields mean the defaults. */
  saveLlmSetup: (choice: LlmChoice) => call<LlmSetup>("save_llm_setup", { choice }),
  /** Stores an API key in the OS keyring (rejects with kind `llm` when there is none). */
  storeApiKey: (provider: ProviderKind, key: string) =>
    call<LlmSetup>("store_api_key", { provider, key }),
  deleteApiKey: (provider: ProviderKind) => call<LlmSetup>("delete_api_key", { provider }),
  /** One tiny request with the values on screen; a failing server is `ok: false`, not a rejection. */
  testConnection: (test: ConnectionTest) => call<ConnectionCheck>("test_connection", { test }),
  /** Whether Engram starts at login (the tray consolidates in the background). */
  startAtLogin: () => call<boolean>("start_at_login"),
  setStartAtLogin: (on: boolean) => call<boolean>("set_start_at_login", { on }),
  /** The local embedding model (the `local` provider): installed or not, and where. */
  localModelStatus: () => call<LocalModelStatus>("local_model_status"),
  /** Downloads the local model (≈ 83 MB), progress to `onProgress`; resolves once it loads. */
  fetchLocalModel: (onProgress: (progress: ModelFetchProgress) => void) => {
    const channel = new Channel<ModelFetchProgress>();
    channel.onmessage = onProgress;
    return call<LocalModelStatus>("fetch_local_model", { onProgress: channel });
  },
  /** Embeds every memory of every project with the configured vectors (once; cached after),
   * progress to `onProgress`. Stopped by `stopModelWork` (resolves with `cancelled: true`). */
  embedAllMemories: (onProgress: (progress: EmbedAllProgress) => void) => {
    const channel = new Channel<EmbedAllProgress>();
    channel.onmessage = onProgress;
    return call<EmbedAllReport>("embed_all_memories", { onProgress: channel });
  },
  /** Stops the model download (which then rejects with kind `cancelled`) or the embedding. */
  stopModelWork: () => call<boolean>("stop_model_work"),
  /** Every model call of the last `days` days (today included) per day, project, job, provider
   * and model, and today's tokens against the daily budget. */
  tokenUsage: (days: number) => call<UsageReport>("token_usage", { days }),
  /** Sets the daily token budget (`null` removes it; 0 rejects with kind `invalidInput`). */
  setDailyBudget: (dailyTokens: number | null) => call<BudgetStatus>("set_daily_budget", { dailyTokens }),
  /** Engram's MCP server in Claude Code's user config; rejects with kind `notFound` when the
   * `engram` command is not installed beside the app or on PATH. */
  mcpServerStatus: () => call<McpStatus>("mcp_server_status"),
  /** What installing would change in `.claude.json`, as a diff; writes nothing. */
  previewMcpServer: () => call<McpChange>("preview_mcp_server"),
  /** Adds the server to `.claude.json` (merged with the file as it is then; a backup first). */
  installMcpServer: () => call<McpChange>("install_mcp_server"),
  /** Removes Engram's entry from `.claude.json`, and nothing else. */
  uninstallMcpServer: () => call<McpChange>("uninstall_mcp_server"),
};
