// The one module the rest of the UI imports to talk to the Rust shell. Components and stores
// call `commands.*` and `events.*` and get typed values or a `CommandError`; nothing outside
// this folder imports `@tauri-apps/api`, so the wire format can change in one place and tests
// mock exactly one boundary.
//
// The commands live in one file per area, each mirroring its `src-tauri/src/commands/<area>.rs`
// (commands.test.ts keeps the two in step); `call.ts` is how they reach the shell. Every shape
// comes from `./bindings/`, generated from the Rust types (src-tauri/src/bindings.rs) and checked
// for drift by a Rust test, so a change on either side fails to type-check here.

import { listen, type UnlistenFn } from "@tauri-apps/api/event";

import type { DreamFinished } from "./bindings/DreamFinished";
import type { MemoryDirChanged } from "./bindings/MemoryDirChanged";
import { agentsCommands } from "./agents";
import { changesCommands } from "./changes";
import { dreamsCommands } from "./dreams";
import { editorCommands } from "./editor";
import { fixCommands } from "./fix";
import { historyCommands } from "./history";
import { homeCommands } from "./home";
import { memoryCommands } from "./memory";
import { onboardingCommands } from "./onboarding";
import { projectsCommands } from "./projects";
import { recallCommands } from "./recall";
import { sessionsCommands } from "./sessions";
import { settingsCommands } from "./settings";
import { syncCommands } from "./sync";
import { teamCommands } from "./team";
import { watchCommands } from "./watch";

export { CommandError, toCommandError } from "./call";

export type { Actor } from "./bindings/Actor";
export type { AgentMemory } from "./bindings/AgentMemory";
export type { AgentScope } from "./bindings/AgentScope";
export type { SnapshotAction } from "./bindings/SnapshotAction";
export type { TeamStatus } from "./bindings/TeamStatus";
export type { SyncStatus } from "./bindings/SyncStatus";
export type { SyncedProject } from "./bindings/SyncedProject";
export type { SyncSettings } from "./bindings/SyncSettings";
export type { PersonalSyncReport } from "./bindings/PersonalSyncReport";
export type { SyncReport } from "./bindings/SyncReport";
export type { SecretFinding } from "./bindings/SecretFinding";
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
export type { LocalModelStatus } from "./bindings/LocalModelStatus";
export type { ModelFetchProgress } from "./bindings/ModelFetchProgress";
export type { EmbedAllProgress } from "./bindings/EmbedAllProgress";
export type { EmbeddingSource } from "./bindings/EmbeddingSource";
export type { EmbedAllReport } from "./bindings/EmbedAllReport";
export type { PassedOver } from "./bindings/PassedOver";
export type { PassedOverWhy } from "./bindings/PassedOverWhy";
export type { ProviderChoice } from "./bindings/ProviderChoice";
export type { ProviderKind } from "./bindings/ProviderKind";
export type { ProviderSetup } from "./bindings/ProviderSetup";
export type { McpChange } from "./bindings/McpChange";
export type { McpStatus } from "./bindings/McpStatus";
export type { RecallPreview } from "./bindings/RecallPreview";
export type { RecallReport } from "./bindings/RecallReport";
export type { RecallResult } from "./bindings/RecallResult";
export type { Usage } from "./bindings/Usage";
export type { BudgetStatus } from "./bindings/BudgetStatus";
export type { UsageReport } from "./bindings/UsageReport";
export type { UsageRow } from "./bindings/UsageRow";
export type { BlockedBy } from "./bindings/BlockedBy";
export type { DreamEvent } from "./bindings/DreamEvent";
export type { DreamFinished } from "./bindings/DreamFinished";
export type { DreamOverview } from "./bindings/DreamOverview";
export type { DreamPolicy } from "./bindings/DreamPolicy";
export type { DreamSettings } from "./bindings/DreamSettings";
export type { DreamStatus } from "./bindings/DreamStatus";
export type { DreamTask } from "./bindings/DreamTask";
export type { FileStatus } from "./bindings/FileStatus";
export type { StagedChangeSet } from "./bindings/StagedChangeSet";
export type { StagedFile } from "./bindings/StagedFile";
export type { ChangeSource } from "./bindings/ChangeSource";
export type { Branch } from "./bindings/Branch";
export type { Compaction } from "./bindings/Compaction";
export type { ExtractOutcome } from "./bindings/ExtractOutcome";
export type { Message } from "./bindings/Message";
export type { SessionSummary } from "./bindings/SessionSummary";
export type { SessionMemoryView } from "./bindings/SessionMemoryView";
export type { SessionHit } from "./bindings/SessionHit";
export type { ToolResult } from "./bindings/ToolResult";
export type { ToolUse } from "./bindings/ToolUse";
export type { TranscriptPage } from "./bindings/TranscriptPage";
export type { FirstRun } from "./bindings/FirstRun";
export type { HookChange } from "./bindings/HookChange";
export type { HookPlan } from "./bindings/HookPlan";
export type { HookStatus } from "./bindings/HookStatus";

/** A project is named by its directory under `<claude home>/projects/` (`ProjectSummary.name`). */
export const commands = {
  ...homeCommands,
  ...onboardingCommands,
  ...projectsCommands,
  ...memoryCommands,
  ...editorCommands,
  ...fixCommands,
  ...historyCommands,
  ...watchCommands,
  ...settingsCommands,
  ...recallCommands,
  ...dreamsCommands,
  ...changesCommands,
  ...sessionsCommands,
  ...agentsCommands,
  ...teamCommands,
  ...syncCommands,
};

export const events = {
  /** Changes made by anyone but Engram to the watched project's memory dir. */
  onMemoryDirChanged: (handler: (change: MemoryDirChanged) => void): Promise<UnlistenFn> =>
    listen<MemoryDirChanged>("memory-dir-changed", (event) => handler(event.payload)),
  /** A dream finished (started here or by the tray's scheduler), with the change set it staged. */
  onDreamFinished: (handler: (finished: DreamFinished) => void): Promise<UnlistenFn> =>
    listen<DreamFinished>("dream-finished", (event) => handler(event.payload)),
};
