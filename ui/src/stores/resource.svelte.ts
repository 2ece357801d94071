// A value fetched from the shell, with the three states every view must render: loading (first
// time), ready, failed. A reload keeps showing the last good value (`refreshing` tells the view),
// so live updates do not flash the screen; a reload that fails replaces it with the error.

import { CommandError, toCommandError } from "../ipc";

export type ResourceState<T> =
  | { status: "loading" }
  | { status: "ready"; value: T }
  | { status: "failed"; error: CommandError };

export class Resource<T> {
  state = $state<ResourceState<T>>({ status: "loading" });
  refreshing = $state(false);

  // Answers to an older `load()` that arrive after a newer one are dropped.
  #generation = 0;
  readonly #fetch: () => Promise<T>;

  constructor(fetch: () => Promise<T>) {
    this.#fetch = fetch;
  }

  async load(): Promise<void> {
    const generation = ++this.#generation;
    this.refreshing = this.state.status !== "loading";
    try {
      const value = await this.#fetch();
      if (generation === this.#generation) this.state = { status: "ready", value };
    } catch (reason) {
      if (generation === this.#generation) {
        this.state = { status: "failed", error: toCommandError(reason) };
      }
    } finally {
      if (generation === this.#generation) this.refreshing = false;
    }
  }
}
