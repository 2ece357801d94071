// How the Dreams tab and the review screen put the engine's dream state into words. Pure, so the
// wording is tested without a DOM.

import type {
  ChangeSource,
  DreamSettings,
  DreamStatus,
  DreamTask,
  FileStatus,
  StagedChangeSet,
  StagedFile,
  Usage,
} from "../ipc";
import { countOf, formatCount } from "./format";

/** A holder is presumed gone an hour after the lock's mtime (PIDs get reused), as the engine
 * and Claude Code judge it. */
const HOLDER_STALE_MS = 60 * 60 * 1000;

/** The gates in one line: "18 h of 24 · 3 of 5 sessions · lock free". */
export function gateWords(status: DreamStatus, now: Date = new Date()): string {
  const time =
    status.hoursSince === null
      ? "never consolidated"
      : `${formatCount(Math.floor(status.hoursSince))} h of ${formatCount(status.minHours)}`;
  const sessions = `${formatCount(status.sessionsSince)} of ${countOf(status.minSessions, "session", "sessions")}`;
  return [time, sessions, lockWords(status, now)].join(" · ");
}

/** "lock free", or who holds Claude Code's `.consolidate-lock`: a live PID in a lock less than
 * an hour old. (Claude Code's own dream leaves its PID there when it completes; Engram's empties
 * the body, so the lock reads free once its dream is done.) */
export function lockWords(status: DreamStatus, now: Date = new Date()): string {
  const { lock } = status;
  const mtime = lock.mtime ? Date.parse(lock.mtime) : Number.NaN;
  const fresh = !Number.isNaN(mtime) && now.getTime() - mtime < HOLDER_STALE_MS;
  if (lock.exists && lock.alive && lock.pid !== null && fresh) return `lock held by pid ${lock.pid}`;
  return "lock free";
}

/** When the app's scheduler looks next: "in 4 min", "in 30 s", "now"; `null` when none runs. */
export function nextCheckIn(status: DreamStatus, now: Date = new Date()): string | null {
  if (status.nextCheck === null) return null;
  const seconds = Math.max(0, Math.ceil((Date.parse(status.nextCheck) - now.getTime()) / 1000));
  if (seconds === 0) return "now";
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.ceil(seconds / 60)} min`;
}

/** The scheduler in one sentence, for the Background switch. */
export function schedulerWords(status: DreamStatus, now: Date = new Date()): string {
  const next = nextCheckIn(status, now);
  return next === null ? "No background scheduler is running." : `Next background check ${next}.`;
}

/** Whether a background dream would run now, and if not, the first gate that stops it. */
export function gateVerdict(
  status: DreamStatus,
  settings: DreamSettings,
  now: Date = new Date(),
): { due: boolean; text: string } {
  const next = nextCheckIn(status, now);
  if (status.due) {
    return settings.background
      ? { due: true, text: `Due: the next background check${next ? ` (${next})` : ""} dreams on this project.` }
      : { due: true, text: "Due, but background dreams are paused." };
  }
  switch (status.blockedBy) {
    case "disabled":
      return { due: false, text: "Off: background dreams skip this project." };
    case "time":
      return {
        due: false,
        text: `Not due: ${formatCount(Math.floor(status.hoursSince ?? 0))} of ${formatCount(status.minHours)} hours since the last consolidation.`,
      };
    case "throttle":
      return {
        due: false,
        text: `Not due: sessions were counted a short while ago${next ? `; they are counted again ${next}` : ""}.`,
      };
    case "sessions":
      return {
        due: false,
        text: `Not due: ${formatCount(status.sessionsSince)} of ${countOf(status.minSessions, "session", "sessions")} since the last consolidation.`,
      };
    case "budget":
      return {
        due: false,
        text: `Waiting: today's token budget is reached (${formatCount(status.budget?.tokensToday ?? 0)} of ${formatCount(status.budget?.dailyTokens ?? 0)} tokens); model dreams resume tomorrow.`,
      };
    case "lock":
      return {
        due: false,
        text:
          status.lock.pid !== null
            ? `Blocked: another dream holds the lock (pid ${status.lock.pid}).`
            : "Blocked: another dream holds the lock.",
      };
    default:
      return { due: false, text: "Not due." };
  }
}

/** `enabledSource` while Claude Code's auto memory is off: that closes every dream's first gate. */
export const AUTO_MEMORY_OFF = "autoMemory";

/** Where `enabled` comes from, for the switch's hint. */
export function enabledSourceText(settings: DreamSettings): string {
  if (settings.enabledSource === "engram") return "Set here.";
  if (settings.enabledSource === "claude") return "From Claude Code's autoDreamEnabled setting.";
  if (settings.enabledSource === AUTO_MEMORY_OFF)
    return "Claude Code's auto memory is off for this project (autoMemoryEnabled or CLAUDE_CODE_DISABLE_AUTO_MEMORY), so no dream starts on its own.";
  return "Off unless turned on.";
}

export const OUTCOME_LABELS: Record<DreamTask["status"], string> = {
  pending: "Pending",
  running: "Running",
  completed: "Completed",
  skipped: "Skipped",
  failed: "Failed",
  killed: "Killed",
};

export const FILE_STATUS_LABELS: Record<FileStatus, string> = {
  pending: "Waiting",
  applied: "Accepted",
  rejected: "Rejected",
  conflict: "Conflict",
  failed: "Failed",
  undone: "Undone",
};

export const SET_STATUS_LABELS: Record<StagedChangeSet["status"], string> = {
  pending: "Waiting for review",
  applied: "Applied",
  rejected: "Rejected",
  undone: "Undone",
};

/** A file the person can still accept or reject. */
export function isWaiting(file: StagedFile): boolean {
  return file.status === "pending" || file.status === "conflict" || file.status === "failed";
}

/** "in 4,300 · out 190 · cache read 2,600 · cache write 0", as the Messages API counts them. */
export function tokenParts(usage: Usage): { label: string; value: string }[] {
  return [
    { label: "in", value: formatCount(usage.inputTokens) },
    { label: "out", value: formatCount(usage.outputTokens) },
    { label: "cache read", value: formatCount(usage.cacheReadTokens) },
    { label: "cache write", value: formatCount(usage.cacheCreationTokens) },
  ];
}

/** What a finished dream amounted to, in one line. */
export function outcomeText(task: DreamTask): string {
  if (task.status === "killed") return "Killed: nothing was changed, and the lock was rolled back.";
  if (task.status === "failed") return task.error ?? "Failed: nothing was changed.";
  if (task.status === "skipped") return task.summary ?? "Skipped.";
  return task.summary ?? (task.changeSet ? "Changes staged." : "Nothing to change.");
}

/** Change sets waiting for review, by project folder name. */
export function waitingByProject(sets: StagedChangeSet[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const set of sets) {
    if (set.status === "pending") counts.set(set.project, (counts.get(set.project) ?? 0) + 1);
  }
  return counts;
}

/** "2 changes to review". */
export function waitingText(count: number): string {
  return `${countOf(count, "change", "changes")} to review`;
}

/** Who produced a change set, as a phrase after "From". */
export const SOURCE_LABELS: Record<ChangeSource, string> = {
  dream: "a dream",
  extract: "an extraction",
  snapshot: "a snapshot merge",
  team: "team sync",
  stranded: "a stranded store",
  redaction: "a redaction you asked for",
  "claude-dream": "Claude Code's own dream",
  mcp: "an agent, through Engram's MCP server",
  sync: "your other machine, through sync",
};
