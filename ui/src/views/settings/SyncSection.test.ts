import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { PersonalSyncReport, SyncStatus } from "../../ipc";
import { changeSet, stagedFile } from "../../testing/dreams";
import { mockShell } from "../../testing/shell";
import SyncSection from "./SyncSection.svelte";

const REMOTE = "git@github.com:ada/claude-memory.git";

function status(overrides: Partial<SyncStatus> = {}): SyncStatus {
  return {
    remote: REMOTE,
    ahead: 1,
    behind: 2,
    conflicts: 0,
    projects: [
      { identity: "github.com/ada/shop", memoryDir: "/home/ada/.claude/projects/-home-ada-shop/memory", state: "behind" },
      { identity: "~/code/notes", memoryDir: null, state: "not-on-this-machine" },
    ],
    ...overrides,
  };
}

describe("Settings → Sync", () => {
  it("says how to start when no remote is set, and pushes nothing", async () => {
    const shell = mockShell({});
    render(SyncSection);
    expect(await screen.findByText(/Not synced: set a private git repository/)).toBeTruthy();
    expect(shell.of("sync_status")).toHaveLength(0);
    expect(shell.of("sync_push")).toHaveLength(0);
  });

  it("shows each project's state, pulls, and opens a conflict in the review screen", async () => {
    const conflict = changeSet({
      id: "c0000sync1",
      source: "sync",
      summary: "sync: 1 file changed here and on another machine (github.com/ada/shop)",
      files: [stagedFile({ file: "deploy.md", reason: "changed here and on another machine: theirs shown over yours" })],
    });
    const report: PersonalSyncReport = {
      files: ["projects/github.com+ada+shop/testing.md"],
      skipped: [],
      conflicts: [conflict],
      commit: "abc",
    };
    const shell = mockShell({
      sync_settings: () => ({ remote: REMOTE, branch: null, auto: false }),
      sync_status: () => status(),
      list_change_sets: () => [],
      sync_pull: () => report,
      change_set: () => conflict,
    });
    render(SyncSection);
    expect((await screen.findByTestId("sync-status")).textContent).toContain("1 to push · 2 to pull · 0 in conflict");
    expect(screen.getByTestId("sync-projects").textContent).toContain("~/code/notes");
    expect(screen.getByTestId("sync-projects").textContent).toContain("not on this machine");
    expect(shell.of("sync_push"), "a push only on the person's click").toHaveLength(0);

    const pull = screen.getByTestId("sync-pull") as HTMLButtonElement;
    await waitFor(() => expect(pull.disabled).toBe(false));
    await fireEvent.click(pull);
    const shown = await screen.findByTestId("sync-report");
    expect(shown.textContent).toContain("Pulled 1 file.");
    expect(shown.textContent).toContain("1 file changed here and on another machine.");
    await fireEvent.click(screen.getByTestId("sync-review"));
    expect(await screen.findByTestId("review-panel")).toBeTruthy();
  });
});
