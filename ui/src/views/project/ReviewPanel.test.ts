import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { FileStatus, StagedChangeSet } from "../../ipc";
import { changeSet } from "../../testing/dreams";
import { mockShell, type Handler } from "../../testing/shell";
import ReviewPanel from "./ReviewPanel.svelte";

/** A shell holding one change set that accept, reject and undo change as the engine does. */
function shell(initial: StagedChangeSet = changeSet(), extra: Record<string, Handler> = {}) {
  let set = structuredClone(initial);
  const decide = (files: string[], from: FileStatus[], to: FileStatus) => {
    set = {
      ...set,
      files: set.files.map((f) =>
        (files.length === 0 || files.includes(f.file)) && from.includes(f.status) ? { ...f, status: to } : f,
      ),
    };
    const has = (s: FileStatus) => set.files.some((f) => f.status === s);
    set.status = has("pending") || has("conflict") ? "pending" : has("applied") ? "applied" : has("undone") ? "undone" : "rejected";
    return set;
  };
  const calls = mockShell({
    change_set: () => set,
    accept_changes: (args) => decide(args.files as string[], ["pending", "conflict"], "applied"),
    reject_changes: (args) => decide(args.files as string[], ["pending", "conflict"], "rejected"),
    undo_changes: () => decide([], ["applied"], "undone"),
    ...extra,
  });
  return { calls, current: () => set };
}

function review(onchanged: () => void = () => {}) {
  return render(ReviewPanel, { id: "c0000wxyz", onback: () => {}, onchanged });
}

function entry(file: string): HTMLElement {
  const button = document.querySelector(`.files [data-file='${file}']`);
  if (!(button instanceof HTMLElement)) throw new Error(`no file ${file} in the list`);
  return button;
}

function detail(): HTMLElement {
  return screen.getByTestId("review-file");
}

describe("the review screen", () => {
  it("shows the set's summary and status and each file's kind, reason and status", async () => {
    shell();
    review();

    expect(await screen.findByText("Dated the deploy move, merged the duplicate, sharpened the tabs rule.")).toBeTruthy();
    expect(screen.getByTestId("set-status").textContent).toBe("Waiting for review");
    expect([...document.querySelectorAll(".files [data-file]")].map((b) => b.getAttribute("data-file"))).toEqual([
      "project_deploy.md",
      "project_deploy_copy.md",
      "feedback_tabs.md",
    ]);
    expect(entry("project_deploy_copy.md").textContent).toContain("D");
    expect(entry("project_deploy_copy.md").textContent).toContain("Waiting");

    // The first waiting file is open, with its reason and its diff.
    expect(detail().getAttribute("data-file")).toBe("project_deploy.md");
    expect(within(detail()).getByText("dream: date the relative date")).toBeTruthy();
    const removed = detail().querySelector("[data-kind='removed'] .text");
    const added = detail().querySelector("[data-kind='added'] .text");
    expect(removed?.textContent).toBe("We moved to Fly.io yesterday.");
    expect(added?.textContent).toBe("We moved to Fly.io on 2026-11-22.");
  });

  it("marks a protected change in the list and says why it waits", async () => {
    shell();
    review();
    await screen.findByTestId("review-file");

    expect(entry("feedback_tabs.md").querySelector("[aria-label='protected']")).not.toBeNull();
    expect(entry("project_deploy.md").querySelector("[aria-label='protected']")).toBeNull();
    expect(screen.queryByTestId("protected-tag")).toBeNull();

    await fireEvent.click(entry("feedback_tabs.md"));
    expect(within(detail()).getByTestId("protected-tag").textContent).toContain("Protected");
    expect(detail().textContent).toContain("rewrites a feedback memory");
    expect(screen.getByTestId("accept-all").getAttribute("title")).toBe("Includes 1 protected change");
  });

  it("accepts one file and rejects another, each alone, and moves on to the next waiting file", async () => {
    const writes: number[] = [];
    const { calls } = shell();
    review(() => writes.push(1));
    await screen.findByTestId("review-file");

    await fireEvent.click(within(detail()).getByTestId("file-accept"));
    await expect.poll(() => entry("project_deploy.md").getAttribute("data-status")).toBe("applied");
    expect(calls.of("accept_changes")[0]?.args).toEqual({ id: "c0000wxyz", files: ["project_deploy.md"] });
    expect(writes).toHaveLength(1);
    expect(detail().getAttribute("data-file")).toBe("project_deploy_copy.md");

    await fireEvent.click(within(detail()).getByTestId("file-reject"));
    await expect.poll(() => entry("project_deploy_copy.md").getAttribute("data-status")).toBe("rejected");
    expect(calls.of("reject_changes")[0]?.args).toEqual({ id: "c0000wxyz", files: ["project_deploy_copy.md"] });
    expect(writes).toHaveLength(1);
    expect(entry("feedback_tabs.md").getAttribute("data-status")).toBe("pending");
    expect(screen.getByTestId("set-status").textContent).toBe("Waiting for review");
    expect(screen.getByTestId("accept-all").textContent).toContain("Accept all (1)");
  });

  it("undoes the accepted files of the set in one step", async () => {
    const { calls } = shell();
    review();
    await screen.findByTestId("review-file");
    expect(screen.queryByTestId("undo-set")).toBeNull();

    await fireEvent.click(screen.getByTestId("accept-all"));
    await expect.poll(() => screen.getByTestId("set-status").textContent).toBe("Applied");
    expect(calls.of("accept_changes")[0]?.args).toEqual({ id: "c0000wxyz", files: [] });
    expect((screen.getByTestId("accept-all") as HTMLButtonElement).disabled).toBe(true);

    await fireEvent.click(screen.getByTestId("undo-set"));
    await expect.poll(() => screen.getByTestId("set-status").textContent).toBe("Undone");
    expect(calls.of("undo_changes")[0]?.args).toEqual({ id: "c0000wxyz" });
    for (const file of ["project_deploy.md", "project_deploy_copy.md", "feedback_tabs.md"]) {
      expect(entry(file).getAttribute("data-status")).toBe("undone");
    }
    expect(screen.queryByTestId("undo-set")).toBeNull();
  });

  it("rejects every waiting file at once", async () => {
    const { calls } = shell();
    review();
    await screen.findByTestId("review-file");
    await fireEvent.click(screen.getByTestId("reject-all"));
    await expect.poll(() => screen.getByTestId("set-status").textContent).toBe("Rejected");
    expect(calls.of("reject_changes")[0]?.args).toEqual({ id: "c0000wxyz", files: [] });
  });

  it("shows a file before and after, side by side", async () => {
    shell();
    review();
    await screen.findByTestId("review-file");

    await fireEvent.click(screen.getByTestId("view-side"));
    const table = within(detail()).getByRole("table", { name: "project_deploy.md before and after" });
    const before = [...table.querySelectorAll("[data-side='before']")].map((c) => c.textContent);
    const after = [...table.querySelectorAll("[data-side='after']")].map((c) => c.textContent);
    expect(before).toHaveLength(6);
    expect(before[5]).toBe("We moved to Fly.io yesterday.");
    expect(after[5]).toBe("We moved to Fly.io on 2026-11-22.");
    expect(table.querySelectorAll(".text.removed")).toHaveLength(1);

    await fireEvent.click(entry("project_deploy_copy.md"));
    const deleted = within(detail()).getByRole("table");
    expect(deleted.querySelectorAll("[data-side='before']")).toHaveLength(6);
    expect(deleted.querySelectorAll("[data-side='after']")).toHaveLength(0);
    expect(deleted.textContent).toContain("After — deleted");
  });

  it("shows both sides of a conflict: the disk now and what the dream planned", async () => {
    const set = changeSet();
    set.files[0] = { ...set.files[0]!, status: "conflict", error: "changed on disk since the run read it" };
    const { calls } = shell(set, {
      change_conflict: () => ({
        file: "project_deploy.md",
        disk: "edited meanwhile\n",
        mine: set.files[0]!.after,
        diff: "--- a/project_deploy.md\n+++ b/project_deploy.md\n@@ -1 +1 @@\n-edited meanwhile\n+We moved\n",
      }),
    });
    review();

    await expect.poll(() => calls.of("change_conflict")).toHaveLength(1);
    expect(calls.of("change_conflict")[0]?.args).toEqual({ id: "c0000wxyz", file: "project_deploy.md" });
    expect(within(detail()).getByTestId("file-status").textContent).toBe("Conflict");
    expect(detail().textContent).toContain("Changed on disk since the dream read it");
    await fireEvent.click(screen.getByTestId("view-side"));
    expect((await screen.findByTestId("conflict-disk")).textContent).toBe("edited meanwhile\n");
    expect(screen.getByTestId("conflict-planned").textContent).toContain("We moved to Fly.io on 2026-11-22.");
    expect(within(detail()).getByTestId("file-reject").textContent).toContain("Keep the disk version");
  });

  it("works from the keyboard: arrows choose a file, A accepts, R rejects", async () => {
    const { calls } = shell();
    review();
    await screen.findByTestId("review-file");

    await fireEvent.keyDown(window, { key: "ArrowDown" });
    expect(detail().getAttribute("data-file")).toBe("project_deploy_copy.md");
    expect(document.activeElement).toBe(entry("project_deploy_copy.md"));
    await fireEvent.keyDown(window, { key: "r" });
    await expect.poll(() => calls.of("reject_changes")).toHaveLength(1);
    expect(calls.of("reject_changes")[0]?.args.files).toEqual(["project_deploy_copy.md"]);

    await fireEvent.keyDown(window, { key: "ArrowUp" });
    await fireEvent.keyDown(window, { key: "ArrowUp" });
    expect(detail().getAttribute("data-file")).toBe("project_deploy.md");
    await fireEvent.keyDown(window, { key: "a" });
    await expect.poll(() => calls.of("accept_changes")).toHaveLength(1);
    expect(calls.of("accept_changes")[0]?.args.files).toEqual(["project_deploy.md"]);
  });

  it("shows a failed decision in place", async () => {
    shell(changeSet(), {
      accept_changes: () => {
        throw { kind: "io", message: "/m/project_deploy.md: Permission denied (os error 13)" };
      },
    });
    review();
    await screen.findByTestId("review-file");
    await fireEvent.click(within(detail()).getByTestId("file-accept"));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Permission denied");
    expect(entry("project_deploy.md").getAttribute("data-status")).toBe("pending");
  });
});
