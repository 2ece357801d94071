// How every command reaches the shell: `call` invokes one by its Rust name and turns any
// rejection into a `CommandError`, so the UI branches on `kind` and never on error text. Only
// the per-area files of this folder use `call`; the rest of the UI goes through `commands`.

import { invoke, type InvokeArgs } from "@tauri-apps/api/core";

import type { ErrorKind } from "./bindings/ErrorKind";
import type { WireError } from "./bindings/WireError";

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

/** Invokes the shell's command `command` (its Rust name, e.g. `"read_memory"`); arguments go by
 * their camelCase names. `commands.test.ts` checks every name against the shell's handlers. */
export async function call<T>(command: string, args?: InvokeArgs): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (reason) {
    throw toCommandError(reason);
  }
}
