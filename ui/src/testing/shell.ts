// A fake Rust shell for component tests, at the IPC boundary only: each command is answered by
// a handler (or fails like the shell does, with `{ kind, message }`), every call is recorded,
// shell events can be emitted to the window and messages sent over a command's `Channel`.

import { emit } from "@tauri-apps/api/event";
import { mockIPC } from "@tauri-apps/api/mocks";

import type {
  AppInfo,
  LintReport,
  LoadedIndex,
  McpStatus,
  Memory,
  MemoryDirChanged,
  MemoryHeader,
  ProjectSnapshot,
  ProjectSummary,
} from "../ipc";

export type Handler = (args: Record<string, unknown>) => unknown;

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

/** What every screen may ask without a test caring: answered unless a test says otherwise. */
const BACKGROUND_HANDLERS: Record<string, Handler> = {
  start_at_login: () => false,
  token_usage: () => ({
    rows: [],
    skipped: [],
    budget: { day: "2026-11-22", tokensToday: 0, dailyTokens: null, reached: false },
  }),
  mcp_server_status: () => mcpStatus(),
  sync_settings: () => ({ remote: "", branch: null, auto: false }),
  // The first run is over, as in a data dir Engram has used before.
  first_run: () => ({
    needed: false,
    claudeHome: HOME,
    claudeHomeExists: true,
    projects: 0,
    memories: 0,
    hooks: null,
    engramCommand: null,
  }),
};

/** Engram's MCP server as Settings shows it: not installed unless `overrides` say so. */
export function mcpStatus(overrides: Partial<McpStatus> = {}): McpStatus {
  return {
    scope: "user",
    file: "/home/ada/.claude.json",
    installed: false,
    upToDate: false,
    command: null,
    expectedCommand: "/usr/bin/engram mcp",
    foreign: false,
    ...overrides,
  };
}

export function mockShell(testHandlers: Record<string, Handler>) {
  const handlers = { ...BACKGROUND_HANDLERS, ...testHandlers };
  const calls: Call[] = [];
  mockIPC(
    (cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args });
      const handler = handlers[cmd];
      if (!handler) throw new Error(`unexpected command ${cmd}`);
      return handler(args);
    },
    { shouldMockEvents: true },
  );
  return {
    calls,
    /** The calls of one command, in order. */
    of: (cmd: string) => calls.filter((call) => call.cmd === cmd),
  };
}

interface TauriInternals {
  __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void };
}

/** Sends messages over the `Channel` passed to a mocked command as `args[name]`, as the shell
 * does (each numbered, in order). */
export function channelOf<T>(args: Record<string, unknown>, name: string): (message: T) => void {
  const channel = args[name] as { id: number };
  let index = 0;
  return (message) =>
    (window as unknown as TauriInternals).__TAURI_INTERNALS__.runCallback(channel.id, { index: index++, message });
}

/** What the shell emits when someone else changes the watched memory dir. */
export async function emitMemoryDirChanged(change: MemoryDirChanged): Promise<void> {
  await emit("memory-dir-changed", change);
}

export const HOME = "/home/ada/.claude";

export function appInfo(overrides: Partial<AppInfo> = {}): AppInfo {
  return {
    claudeHome: HOME,
    engramHome: "/home/ada/.local/share/engram",
    demo: null,
    lastProject: null,
    noTray: null,
    ...overrides,
  };
}

export function projectSummary(overrides: Partial<ProjectSummary> = {}): ProjectSummary {
  return {
    name: "-path-to-Demo",
    path: "/path/to/Demo",
    memoryDir: `${HOME}/projects/-path-to-Demo/memory`,
    memoryFiles: 2,
    sessions: 3,
    lastActivity: new Date().toISOString(),
    lint: { errors: 0, warnings: 0 },
    ...overrides,
  } as ProjectSummary;
}

export function header(overrides: Partial<MemoryHeader> = {}): MemoryHeader {
  return {
    file: "feedback_testing.md",
    name: "Testing policy",
    description: "Integration tests hit a real DB",
    type: "feedback",
    mtime: "2026-10-06T12:00:00.000Z",
    age: "47 days ago",
    days: 47,
    ...overrides,
  };
}

export function loadedIndex(overrides: Partial<LoadedIndex> = {}): LoadedIndex {
  return {
    content: "- [Testing policy](feedback_testing.md) — Integration tests hit a real DB",
    lines: 1,
    bytes: 72,
    truncated: false,
    warning: null,
    entries: [],
    exists: true,
    cutFromLine: null,
    linesCut: 0,
    bytesCut: 0,
    cutText: "",
    ...overrides,
  };
}

export function snapshot(overrides: Partial<ProjectSnapshot> = {}): ProjectSnapshot {
  return {
    project: "-path-to-Demo",
    memoryDir: `${HOME}/projects/-path-to-Demo/memory`,
    exists: true,
    index: loadedIndex(),
    memories: [header(), header({ file: "user_role.md", name: "Role", description: "Data scientist", type: "user", days: 0, age: "today" })],
    ...overrides,
  };
}

export const TESTING_FILE =
  "---\nname: Testing policy\ndescription: Integration tests hit a real DB\ntype: feedback\n---\nNo mocks.\n";

export function memory(overrides: Partial<Memory> = {}): Memory {
  return {
    file: "feedback_testing.md",
    name: "Testing policy",
    description: "Integration tests hit a real DB",
    type: "feedback",
    body: "No mocks.\n",
    mtime: "2026-10-06T12:00:00.000Z",
    age: "47 days ago",
    days: 47,
    caveat: "This memory is 47 days old.",
    content: TESTING_FILE,
    ...overrides,
  };
}

export const NO_FINDINGS: LintReport = { findings: [] };
