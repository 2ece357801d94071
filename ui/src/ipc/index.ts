// The one module that talks to the Rust shell. Components and stores call `commands.*` and
// `events.*` and get typed values or a `CommandError`; nothing else imports `@tauri-apps/api`, so
// the wire format can change in one place and tests mock exactly one boundary.
//
// Every shape comes from `./bindings/`, generated from the Rust types (src-tauri/src/bindings.rs)
// and checked for drift by a Rust test, so a change on either side fails to type-check here.

import { invoke, type InvokeArgs } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

import type { AppInfo } from "./bindings/AppInfo";
import type { ApplyReport } from "./bindings/ApplyReport";
import type { ChangeSet } from "./bindings/ChangeSet";
import type { ConflictDetails } from "./bindings/ConflictDetails";
import type { ConflictResolution } from "./bindings/ConflictResolution";
import type { EditOutcome } from "./bindings/EditOutcome";
import type { ErrorKind } from "./bindings/ErrorKind";
import type { FileChange } from "./bindings/FileChange";
import type { FixTarget } from "./bindings/FixTarget";
import type { LintReport } from "./bindings/LintReport";
import type { MemoryDirChanged } from "./bindings/MemoryDirChanged";
import type { MemoryDocument } from "./bindings/MemoryDocument";
import type { MemoryForm } from "./bindings/MemoryForm";
import type { ProjectSnapshot } from "./bindings/ProjectSnapshot";
import type { ProjectSummary } from "./bindings/ProjectSummary";
import type { SearchHit } from "./bindings/SearchHit";
import type { Version } from "./bindings/Version";
import type { VersionChange } from "./bindings/VersionChange";
import type { WireError } from "./bindings/WireError";
import type { ConnectionCheck } from "./bindings/ConnectionCheck";
import type { ConnectionTest } from "./bindings/ConnectionTest";
import type { LlmChoice } from "./bindings/LlmChoice";
import type { LlmSetup } from "./bindings/LlmSetup";
import type { ProviderKind } from "./bindings/ProviderKind";
import type { RecallPreview } from "./bindings/RecallPreview";

export type { Actor } from "./bindings/Actor";
export type { AppInfo } from "./bindings/AppInfo";
export type { ChangeSet } from "./bindings/ChangeSet";
export type { ConflictDetails } from "./bindings/ConflictDetails";
export type { EditOutcome } from "./bindings/EditOutcome";
export type { ErrorKind } from "./bindings/ErrorKind";
export type { FileChange } from "./bindings/FileChange";
export type { Finding } from "./bindings/Finding";
export type { FixTarget } from "./bindings/FixTarget";
export type { LintReport } from "./bindings/LintReport";
export type { LoadedIndex } from "./bindings/LoadedIndex";
export type { Memory } from "./bindings/Memory";
export type { MemoryDirChanged } from "./bindings/MemoryDirChanged";
export type { MemoryDocument } from "./bindings/MemoryDocument";
export type { MemoryForm } from "./bindings/MemoryForm";
export type { MemoryHeader } from "./bindings/MemoryHeader";
export type { MemoryType } from "./bindings/MemoryType";
export type { ProjectSnapshot } from "./bindings/ProjectSnapshot";
export type { ProjectSummary } from "./bindings/ProjectSummary";
export type { SearchHit } from "./bindings/SearchHit";
export type { Version } from "./bindings/Version";
export type { VersionChange } from "./bindings/VersionChange";
export type { ConnectionCheck } from "./bindings/ConnectionCheck";
export type { ConnectionTest } from "./bindings/ConnectionTest";
export type { KeySource } from "./bindings/KeySource";
export type { KeyStatus } from "./bindings/KeyStatus";
export type { LlmChoice } from "./bindings/LlmChoice";
export type { LlmSetup } from "./bindings/LlmSetup";
export type { PassedOver } from "./bindings/PassedOver";
export type { PassedOverWhy } from "./bindings/PassedOverWhy";
export type { ProviderChoice } from "./bindings/ProviderChoice";
export type { ProviderKind } from "./bindings/ProviderKind";
export type { ProviderSetup } from "./bindings/ProviderSetup";
export type { RecallPreview } from "./bindings/RecallPreview";
export type { RecallReport } from "./bindings/RecallReport";
export type { RecallResult } from "./bindings/RecallResult";
export type { Usage } from "./bindings/Usage";

/** A command that failed, with the kind the UI may branch on. */
export class CommandError extends Error {
  readonly kind: ErrorKind;

  constructor(kind: ErrorKind, message: string) {
    super(message);
    this.name = "CommandError";
    this.kind = kind;
  }
}

function isWireError(value: unknown): value is WireError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as WireError).kind === "string" &&
    typeof (value as WireError).message === "string"
  );
}

/** Any rejection — the shell's `{ kind, message }` or Tauri's own string errors (an unknown
 * command, a denied permission) — as a `CommandError`. */
export function toCommandError(reason: unknown): CommandError {
  if (reason instanceof CommandError) return reason;
  if (isWireError(reason)) return new CommandError(reason.kind, reason.message);
  const message = reason instanceof Error ? reason.message : String(reason);
  return new CommandError("internal", message);
}

async function call<T>(command: string, args?: InvokeArgs): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (reason) {
    throw toCommandError(reason);
  }
}

/** A project is named by its directory under `<claude home>/projects/` (`ProjectSummary.name`). */
export const commands = {
  /** The homes in use, the demo notice, the project last open. */
  appInfo: () => call<AppInfo>("app_info"),
  /** Every project Claude Code has seen, most recently active first, with lint counts. */
  listProjects: () => call<ProjectSummary[]>("list_projects"),
  /** Memories of every project matching all words of `query`, best first. */
  searchMemories: (query: string) => call<SearchHit[]>("search_memories", { query }),

  /** The index and every topic file of a project (and remembers it as last open). */
  openProject: (project: string) => call<ProjectSnapshot>("open_project", { project }),
  lintProject: (project: string) => call<LintReport>("lint_project", { project }),
  readMemory: (project: string, file: string) =>
    call<MemoryDocument>("read_memory", { project, file }),

  /** Saves `form` over the file as it was opened; rejects with kind `conflict` if it moved. */
  saveMemory: (project: string, file: string, opened: string, form: MemoryForm) =>
    call<EditOutcome>("save_memory", { project, file, opened, form }),
  memoryConflict: (project: string, file: string, form: MemoryForm) =>
    call<ConflictDetails>("memory_conflict", { project, file, form }),
  resolveMemoryConflict: (project: string, file: string, resolution: ConflictResolution) =>
    call<EditOutcome>("resolve_memory_conflict", { project, file, resolution }),
  createMemory: (project: string, file: string | null, form: MemoryForm) =>
    call<EditOutcome>("create_memory", { project, file, form }),
  renameMemory: (project: string, file: string, newFile: string, opened: string | null) =>
    call<EditOutcome>("rename_memory", { project, file, newFile, opened }),
  deleteMemory: (project: string, file: string, opened: string | null) =>
    call<EditOutcome>("delete_memory", { project, file, opened }),

  /** The change set that would fix one finding; nothing is written. */
  planFix: (project: string, target: FixTarget) => call<ChangeSet>("plan_fix", { project, target }),
  applyFix: (project: string, changes: FileChange[]) =>
    call<ApplyReport>("apply_fix", { project, changes }),

  fileHistory: (project: string, file: string) =>
    call<Version[]>("file_history", { project, file }),
  versionChange: (project: string, version: string) =>
    call<VersionChange>("version_change", { project, version }),
  revertVersion: (project: string, version: string) =>
    call<Version>("revert_version", { project, version }),

  /** Starts live updates for a project (`false`: it has no memory dir yet). */
  watchProject: (project: string) => call<boolean>("watch_project", { project }),
  unwatchProject: () => call<null>("unwatch_project"),

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
  /** What the prompt hook would inject for `query` in a project (nothing is recorded). Starting
   * another preview cancels the one running. */
  recallPreview: (project: string, query: string, offline: boolean) =>
    call<RecallPreview>("recall_preview", { project, query, offline }),
  /** Cancels the running preview, which then rejects with kind `cancelled`. */
  cancelRecall: () => call<null>("cancel_recall"),
};

export const events = {
  /** Changes made by anyone but Engram to the watched project's memory dir. */
  onMemoryDirChanged: (handler: (change: MemoryDirChanged) => void): Promise<UnlistenFn> =>
    listen<MemoryDirChanged>("memory-dir-changed", (event) => handler(event.payload)),
};
