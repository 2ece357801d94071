// src-tauri/src/commands/dreams.rs: a project's dreams — gates, settings, "Dream now" streamed
// live over a Channel, kill, past runs.

import { Channel } from "@tauri-apps/api/core";

import type { DreamEvent } from "./bindings/DreamEvent";
import type { DreamOverview } from "./bindings/DreamOverview";
import type { DreamPolicy } from "./bindings/DreamPolicy";
import type { DreamSettings } from "./bindings/DreamSettings";
import type { DreamTask } from "./bindings/DreamTask";
import { call } from "./call";

export const dreamsCommands = {
  /** The gates, the settings, the dream running now and the past ones. */
  dreamOverview: (project: string) => call<DreamOverview>("dream_overview", { project }),
  /** `null` leaves a value as it is. */
  setDreamSettings: (project: string, enabled: boolean | null, policy: DreamPolicy | null) =>
    call<DreamSettings>("set_dream_settings", { project, enabled, policy }),
  /** Dreams now (gates skipped, lock taken); every step reaches `onEvent` as it happens; resolves
   * with the finished task. `offline`: the offline dream whatever the model (what is offered once
   * the daily token budget is reached: a model dream is skipped then). */
  startDream: (project: string, onEvent: (event: DreamEvent) => void, offline = false) => {
    const channel = new Channel<DreamEvent>();
    channel.onmessage = onEvent;
    return call<DreamTask>("start_dream", { project, offline, onEvent: channel });
  },
  /** `false` when no dream runs on the project. */
  killDream: (project: string) => call<boolean>("kill_dream", { project }),
};
