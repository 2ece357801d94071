// One project's dreams: the overview (gates, settings, the dream running, past ones), its change
// sets, and the dream this window started, streamed in event by event.
//
// Kept per project for as long as the window is open (not per view): a dream goes on while the
// person looks at another tab or another project, and coming back must show it still streaming.
// A dream started elsewhere (the tray's scheduler, `engram dream run`) shows up in the overview
// as `running`; the panel polls the overview until it ends, as no events reach this window for
// it beyond `dream-finished`.

import {
  commands,
  toCommandError,
  type CommandError,
  type DreamOverview,
  type DreamPolicy,
  type DreamTask,
  type StagedChangeSet,
} from "../ipc";
import { Resource } from "./resource.svelte";

export function isFinished(task: DreamTask): boolean {
  return task.status !== "pending" && task.status !== "running";
}

export class DreamStore {
  readonly project: string;
  readonly overview: Resource<DreamOverview>;
  /** This project's staged change sets, newest first. */
  readonly sets: Resource<StagedChangeSet[]>;
  /** The dream this window started: live while it runs, then as it ended. */
  live = $state<DreamTask | null>(null);
  /** "Dream now" was pressed and no event has arrived yet. */
  starting = $state(false);
  killing = $state(false);
  /** Starting, killing or a setting failed. */
  error = $state<CommandError | null>(null);
  /** The change set open in the review screen. */
  reviewing = $state<string | null>(null);

  constructor(project: string) {
    this.project = project;
    this.overview = new Resource(() => commands.dreamOverview(project));
    this.sets = new Resource(() => commands.listChangeSets(project));
  }

  /** The dream running on the project now: this window's, else one another process runs. */
  get running(): DreamTask | null {
    if (this.live && !isFinished(this.live)) return this.live;
    const state = this.overview.state;
    return state.status === "ready" ? state.value.running : null;
  }

  /** Whether the running dream is this window's (its events stream in). */
  get ours(): boolean {
    return this.live !== null && !isFinished(this.live);
  }

  async refresh(): Promise<void> {
    await Promise.all([this.overview.load(), this.sets.load()]);
  }

  /** Dreams now, the gates skipped (`offline`: without the model, as offered once the daily
   * token budget is reached); every event replaces the live task. */
  async start(offline = false): Promise<void> {
    if (this.starting || this.running) return;
    this.error = null;
    this.starting = true;
    this.live = null;
    try {
      const task = await commands.startDream(this.project, (event) => {
        // The command's answer can overtake the channel's last messages: once the run has
        // ended here, a late event of the same run must not bring it back to life.
        const current = this.live;
        if (current && current.id === event.task.id && isFinished(current) && !isFinished(event.task)) return;
        this.live = event.task;
        this.starting = false;
        // The dream took the lock: the gates read again say so.
        if (event.kind === "started") void this.overview.load();
      }, offline);
      this.live = task;
    } catch (reason) {
      this.error = toCommandError(reason);
    } finally {
      this.starting = false;
      this.killing = false;
      void this.refresh();
    }
  }

  /** Kills the running dream, this window's or another process's. Its end arrives as usual. */
  async kill(): Promise<void> {
    if (this.killing) return;
    this.killing = true;
    this.error = null;
    try {
      const killed = await commands.killDream(this.project);
      // Another process's dream: its end is seen by polling; nothing of ours will settle this.
      if (!killed || !this.ours) {
        this.killing = false;
        void this.refresh();
      }
    } catch (reason) {
      this.killing = false;
      this.error = toCommandError(reason);
    }
  }

  /** Turns background dreams on or off and sets the policy (`null` leaves a value). */
  async configure(enabled: boolean | null, policy: DreamPolicy | null): Promise<void> {
    this.error = null;
    try {
      await commands.setDreamSettings(this.project, enabled, policy);
    } catch (reason) {
      this.error = toCommandError(reason);
    }
    // The switch moves the gates too (a disabled project is blocked first).
    await this.overview.load();
  }
}

const stores = new Map<string, DreamStore>();

/** The project's store, the same one for as long as the window is open. */
export function dreamStore(project: string): DreamStore {
  let store = stores.get(project);
  if (!store) {
    store = new DreamStore(project);
    stores.set(project, store);
  }
  return store;
}

/** Forgets every project's store (tests start clean). */
export function forgetDreamStores(): void {
  stores.clear();
}
