// The local embedding model (all-MiniLM-L6-v2) as a screen shows it: whether it is installed and
// where, and its fetch (≈ 83 MB) with progress and Stop; and, for Settings, embedding every memory
// with it. Settings' Language model card and the first run's model step each keep their own for as
// long as they are open, not per panel: a fetch goes on while the person looks at another provider
// or step, and coming back shows it still running. Each screen draws it its own way (Settings in
// MiB, the first run in MB).

import {
  commands,
  toCommandError,
  type CommandError,
  type EmbedAllProgress,
  type EmbedAllReport,
  type LocalModelStatus,
  type ModelFetchProgress,
} from "../ipc";

/** Stops the model's fetch (which then fails as `cancelled`) or the embedding: the shell has one
 * Stop for both. */
export function stopModelWork(): void {
  void commands.stopModelWork();
}

export class LocalModel {
  /** What the shell said last; null until it has answered. */
  status = $state<LocalModelStatus | null>(null);
  fetching = $state(false);
  /** The fetch running: its last report, null before the first. */
  progress = $state<ModelFetchProgress | null>(null);
  /** The look-up or the fetch failed; a fetch stopped is not a failure. */
  error = $state<CommandError | null>(null);

  /** Asks the shell whether the model is installed. Resolves to the failure (also kept in
   * `error`), null once answered: the first run shows it with its other steps' errors. */
  async lookUp(): Promise<CommandError | null> {
    try {
      this.status = await commands.localModelStatus();
      return null;
    } catch (reason) {
      return (this.error = toCommandError(reason));
    }
  }

  /** Fetches the model, progress in `progress`; `status` is the shell's answer once it loads.
   * Resolves to the failure (also kept in `error`), null once installed or stopped. */
  async fetch(): Promise<CommandError | null> {
    this.fetching = true;
    this.error = null;
    this.progress = null;
    try {
      this.status = await commands.fetchLocalModel((progress) => (this.progress = progress));
      return null;
    } catch (reason) {
      const error = toCommandError(reason);
      if (error.kind === "cancelled") return null;
      return (this.error = error);
    } finally {
      this.fetching = false;
    }
  }
}

/** Embedding every memory of every project once (cached after), with the saved vector source. */
export class MemoryEmbedding {
  running = $state(false);
  progress = $state<EmbedAllProgress | null>(null);
  /** How the last run ended (stopped ones too). */
  report = $state<EmbedAllReport | null>(null);
  error = $state<CommandError | null>(null);

  async run(): Promise<void> {
    this.running = true;
    this.error = null;
    this.report = null;
    this.progress = null;
    try {
      this.report = await commands.embedAllMemories((progress) => (this.progress = progress));
    } catch (reason) {
      this.error = toCommandError(reason);
    } finally {
      this.running = false;
    }
  }
}
