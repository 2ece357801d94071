// One open project: its snapshot (index + topic files), its lint findings, and live updates.
//
// The snapshot and the findings are separate resources because lint compares files pairwise and
// can take a moment on a large dir: the list shows first. Changes made by others arrive as
// `memory-dir-changed` events and reload both (coalesced: a burst of events costs one reload);
// the app's own writes are not reported by the shell, so whoever writes calls `refresh()`.

import {
  commands,
  events,
  type Finding,
  type LintReport,
  type MemoryDirChanged,
  type ProjectSnapshot,
} from "../ipc";
import { findingsByFile } from "../lib/memory";
import { Resource } from "./resource.svelte";

/** Files changed by someone else, most recent batch; `sequence` tells batches apart. */
export interface ExternalChange {
  sequence: number;
  files: Map<string, MemoryDirChanged["changes"][number]["kind"]>;
}

export class ProjectStore {
  readonly name: string;
  readonly snapshot: Resource<ProjectSnapshot>;
  readonly lint: Resource<LintReport>;
  /** The last batch of outside changes, for the memory open in the pane to react to. */
  external = $state<ExternalChange>({ sequence: 0, files: new Map() });
  watching = $state(false);

  readonly findings = $derived.by((): Map<string, Finding[]> => {
    const state = this.lint.state;
    return state.status === "ready" ? findingsByFile(state.value.findings) : new Map();
  });

  #unlisten: (() => void) | null = null;
  #closed = false;
  #refreshTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(name: string) {
    this.name = name;
    this.snapshot = new Resource(() => commands.openProject(name));
    this.lint = new Resource(() => commands.lintProject(name));
  }

  /** Loads the project and starts live updates. */
  async open(): Promise<void> {
    const unlisten = await events.onMemoryDirChanged((change) => this.#onChange(change));
    if (this.#closed) {
      unlisten();
      return;
    }
    this.#unlisten = unlisten;
    await this.snapshot.load();
    void this.lint.load();
    await this.#watch();
  }

  /** Stops live updates (the window left the project). */
  close(): void {
    this.#closed = true;
    this.#unlisten?.();
    this.#unlisten = null;
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    void commands.unwatchProject().catch(() => {});
  }

  /** Reloads the list and the findings (after the app's own writes). */
  async refresh(): Promise<void> {
    const wasMissing = this.snapshot.state.status === "ready" && !this.snapshot.state.value.exists;
    await this.snapshot.load();
    void this.lint.load();
    // The first memory created the dir: only now is there something to watch.
    if (wasMissing || !this.watching) await this.#watch();
  }

  async #watch(): Promise<void> {
    try {
      this.watching = await commands.watchProject(this.name);
    } catch {
      // Without a watcher the view still works; it just does not update by itself.
      this.watching = false;
    }
  }

  #onChange(change: MemoryDirChanged): void {
    if (change.project !== this.name || this.#closed) return;
    const files = new Map(change.changes.map((event) => [event.file, event.kind] as const));
    this.external = { sequence: this.external.sequence + 1, files };
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = null;
      void this.snapshot.load();
      void this.lint.load();
    }, 50);
  }
}
