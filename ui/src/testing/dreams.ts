// What the shell answers for the Dreams tab and the review screen, shaped like the engine's
// answers for a messy memory dir (a duplicate, a relative date, a dead index line). A dream's
// events are streamed with `channelOf` (testing/shell).

import type {
  DreamOverview,
  DreamSettings,
  DreamStatus,
  DreamTask,
  StagedChangeSet,
  StagedFile,
} from "../ipc";
import { HOME } from "./shell";

export const PROJECT = "-path-to-Demo";
const MEMORY_DIR = `${HOME}/projects/${PROJECT}/memory`;

export function dreamStatus(overrides: Partial<DreamStatus> = {}): DreamStatus {
  return {
    project: PROJECT,
    memoryDir: MEMORY_DIR,
    enabled: true,
    hoursSince: 18.4,
    minHours: 24,
    sessionsSince: 3,
    minSessions: 5,
    lock: { path: `${MEMORY_DIR}/.consolidate-lock`, exists: true, pid: null, alive: false, mtime: "2026-11-22T03:00:00Z" },
    blockedBy: "time",
    due: false,
    budget: null,
    nextCheck: null,
    ...overrides,
  };
}

export function dreamSettings(overrides: Partial<DreamSettings> = {}): DreamSettings {
  return {
    enabled: true,
    enabledSource: "engram",
    policy: "review",
    minHours: 24,
    minSessions: 5,
    tokenBudget: 400_000,
    background: true,
    ...overrides,
  };
}

export function dreamTask(overrides: Partial<DreamTask> = {}): DreamTask {
  return {
    id: "d0000abcd",
    project: PROJECT,
    memoryDir: MEMORY_DIR,
    status: "running",
    phase: "starting",
    provider: "anthropic",
    sessionsReviewing: ["1f0c", "2a9e"],
    filesTouched: [],
    turns: [],
    priorMtime: 0,
    tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, calls: 0 },
    startedAt: new Date().toISOString(),
    elapsedMs: 0,
    pid: 4242,
    changeSet: null,
    summary: null,
    error: null,
    ...overrides,
  };
}

export function overview(overrides: Partial<DreamOverview> = {}): DreamOverview {
  return { status: dreamStatus(), settings: dreamSettings(), running: null, past: [], ...overrides };
}

const DEPLOY_BEFORE =
  "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nWe moved to Fly.io yesterday.\n";
const TABS_BEFORE = "---\nname: Tabs\ndescription: tabs not spaces\ntype: feedback\n---\nUse tabs.\n";

export function stagedFile(overrides: Partial<StagedFile> = {}): StagedFile {
  return {
    status: "pending",
    version: null,
    error: null,
    file: "project_deploy.md",
    kind: "modify",
    before: DEPLOY_BEFORE,
    after: DEPLOY_BEFORE.replace("yesterday", "on 2026-11-22"),
    reason: "dream: date the relative date",
    diff:
      "--- a/project_deploy.md\n+++ b/project_deploy.md\n@@ -2,4 +2,4 @@\n name: Deploy\n description: how we deploy\n type: project\n ---\n-We moved to Fly.io yesterday.\n+We moved to Fly.io on 2026-11-22.\n",
    protected: false,
    sessions: [],
    ...overrides,
  };
}

/** A dream's set: a date fix, a duplicate's deletion, a rewrite of a feedback memory (protected). */
export function changeSet(overrides: Partial<StagedChangeSet> = {}): StagedChangeSet {
  return {
    id: "c0000wxyz",
    source: "dream",
    project: PROJECT,
    memoryDir: MEMORY_DIR,
    createdAt: new Date().toISOString(),
    status: "pending",
    summary: "Dated the deploy move, merged the duplicate, sharpened the tabs rule.",
    taskId: "d0000abcd",
    files: [
      stagedFile(),
      stagedFile({
        file: "project_deploy_copy.md",
        kind: "delete",
        before: DEPLOY_BEFORE.replace("name: Deploy", "name: Deploy copy"),
        after: null,
        reason: "dream: exact duplicate of project_deploy.md",
        diff: "--- a/project_deploy_copy.md\n+++ /dev/null\n@@ -1,6 +0,0 @@\n----\n-name: Deploy copy\n-description: how we deploy\n-type: project\n----\n-We moved to Fly.io yesterday.\n",
      }),
      stagedFile({
        file: "feedback_tabs.md",
        before: TABS_BEFORE,
        after: TABS_BEFORE.replace("Use tabs.", "Use tabs, width 4."),
        reason: "dream: say how wide",
        diff: "--- a/feedback_tabs.md\n+++ b/feedback_tabs.md\n@@ -5,1 +5,1 @@\n-Use tabs.\n+Use tabs, width 4.\n",
        protected: true,
      }),
    ],
    ...overrides,
  };
}
