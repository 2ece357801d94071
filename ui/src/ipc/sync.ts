// src-tauri/src/commands/sync.rs: personal sync — this person's memory through their own git remote.

import type { PersonalSyncReport } from "./bindings/PersonalSyncReport";
import type { SyncSettings } from "./bindings/SyncSettings";
import type { SyncStatus } from "./bindings/SyncStatus";
import { call } from "./call";

export const syncCommands = {
  /** `[sync]` as configured (no fetch). */
  syncSettings: () => call<SyncSettings>("sync_settings"),
  /** Ahead / behind / conflicts and every project's state (fetches the remote). */
  syncStatus: () => call<SyncStatus>("sync_status"),
  syncPull: () => call<PersonalSyncReport>("sync_pull"),
  /** Pushes this machine's memory (secrets refused, never forced): only on the person's click. */
  syncPush: () => call<PersonalSyncReport>("sync_push"),
  /** A repo URL or path; `URL#branch` for a branch of another repo. */
  setSyncRemote: (remote: string) => call<SyncSettings>("set_sync_remote", { remote }),
  /** `[sync] auto`: the app pushes (debounced) after changes are applied. */
  setSyncAuto: (auto: boolean) => call<SyncSettings>("set_sync_auto", { auto }),
};
