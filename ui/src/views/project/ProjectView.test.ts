import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { EditOutcome, MemoryForm } from "../../ipc";
import {
  NO_FINDINGS,
  TESTING_FILE,
  emitMemoryDirChanged,
  header,
  memory,
  mockShell,
  projectSummary,
  snapshot,
  type Handler,
} from "../../testing/shell";
import ProjectView from "./ProjectView.svelte";

function outcome(file: string, content: string): EditOutcome {
  return {
    file,
    memory: memory({ file, content }),
    indexFile: "MEMORY.md",
    indexLine: `- [Testing policy](${file}) — x`,
    applied: { root: "/m", actor: "user", files: [] },
  };
}

function shell(extra: Record<string, Handler> = {}) {
  return mockShell({
    open_project: () => snapshot(),
    lint_project: () => NO_FINDINGS,
    watch_project: () => true,
    unwatch_project: () => null,
    read_memory: (args) =>
      args.file === "user_role.md"
        ? { memory: memory({ file: "user_role.md", name: "Role", type: "user", body: "Ada.", content: "x" }), html: "<p>Ada.</p>" }
        : { memory: memory(), html: "<p>No <em>mocks</em>.</p>" },
    ...extra,
  });
}

function view() {
  return render(ProjectView, {
    project: "-path-to-Demo",
    summary: projectSummary(),
    onback: () => {},
  });
}

async function typeInto(name: string, value: string) {
  const field = document.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[name='${name}']`);
  if (!field) throw new Error(`no field ${name}`);
  await fireEvent.input(field, { target: { value } });
}

describe("the memory view", () => {
  it("lists the topic files with type, staleness and lint, and opens the newest rendered", async () => {
    shell({
      lint_project: () => ({
        findings: [{ rule: "orphan-file", severity: "warning", file: "user_role.md", line: null, message: "No index entry links to user_role.md" }],
      }),
    });
    view();

    const rendered = await screen.findByTestId("rendered");
    expect(rendered.innerHTML).toContain("<em>mocks</em>");
    const rows = screen.getAllByRole("option");
    expect(rows).toHaveLength(2);
    const first = within(rows[0] as HTMLElement);
    expect(first.getByText("Testing policy")).toBeTruthy();
    expect(first.getByText("feedback")).toBeTruthy();
    expect(first.getByText("47 days ago")).toBeTruthy();
    await expect.poll(() => rows[1]?.querySelector("[data-lint='warning']")).not.toBeNull();
    expect(screen.getByRole("meter", { name: "Lines" }).getAttribute("aria-valuenow")).toBe("1");
  });

  it("filters by type and text", async () => {
    shell();
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("radio", { name: /user/ }));
    expect(screen.getAllByRole("option")).toHaveLength(1);
    expect(screen.getByText("Role")).toBeTruthy();

    await fireEvent.click(screen.getByRole("radio", { name: /All/ }));
    await fireEvent.input(screen.getByRole("searchbox", { name: "Filter memories" }), {
      target: { value: "real db" },
    });
    expect(screen.getAllByRole("option")).toHaveLength(1);
    expect(screen.getAllByRole("option")[0]?.getAttribute("data-file")).toBe("feedback_testing.md");
  });

  it("saves the form over the file as opened, then shows the saved memory", async () => {
    const saved: MemoryForm[] = [];
    const calls = shell({
      save_memory: (args) => {
        saved.push(args.form as MemoryForm);
        return outcome("feedback_testing.md", "new");
      },
    });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("tab", { name: /Edit/ }));
    await typeInto("description", "Tests use a real database");
    await typeInto("body", "Hit the real DB.");
    await fireEvent.keyDown(window, { key: "s", ctrlKey: true });

    await expect.poll(() => calls.of("save_memory")).toHaveLength(1);
    expect(calls.of("save_memory")[0]?.args).toMatchObject({
      project: "-path-to-Demo",
      file: "feedback_testing.md",
      opened: TESTING_FILE,
    });
    expect(saved[0]).toEqual({
      name: "Testing policy",
      description: "Tests use a real database",
      type: "feedback",
      body: "Hit the real DB.",
    });
    expect(await screen.findByTestId("rendered")).toBeTruthy();
    // The list reloads after the app's own write (the watcher does not echo it).
    expect(calls.of("open_project").length).toBeGreaterThan(1);
  });

  it("refuses an empty description before writing anything", async () => {
    const calls = shell({ save_memory: () => outcome("feedback_testing.md", "x") });
    view();
    await screen.findByTestId("rendered");
    await fireEvent.click(screen.getByRole("tab", { name: /Edit/ }));
    await typeInto("description", "  ");
    await fireEvent.click(screen.getByRole("button", { name: /^Save/ }));

    expect(await screen.findByText(/A description is required/)).toBeTruthy();
    expect(calls.of("save_memory")).toHaveLength(0);
  });

  it("on a conflict shows both versions, writes nothing, and keeps mine only when asked", async () => {
    const disk = TESTING_FILE.replace("No mocks.", "Changed by Claude.");
    const calls = shell({
      save_memory: () => {
        throw { kind: "conflict", message: "/m/feedback_testing.md: changed on disk since it was read; not overwritten" };
      },
      memory_conflict: () => ({
        file: "feedback_testing.md",
        disk,
        mine: "mine text",
        diff: "--- a\n+++ b\n@@ -1 +1 @@\n-Changed by Claude.\n+mine text\n",
      }),
      resolve_memory_conflict: () => outcome("feedback_testing.md", "mine text"),
    });
    view();
    await screen.findByTestId("rendered");
    await fireEvent.click(screen.getByRole("tab", { name: /Edit/ }));
    await typeInto("body", "My body.");
    await fireEvent.click(screen.getByRole("button", { name: /^Save/ }));

    const conflict = await screen.findByTestId("conflict");
    expect(within(conflict).getByTestId("conflict-theirs").textContent).toContain("Changed by Claude.");
    expect(within(conflict).getByTestId("conflict-mine").textContent).toBe("mine text");
    expect(calls.of("resolve_memory_conflict")).toHaveLength(0);

    await fireEvent.click(within(conflict).getByRole("radio", { name: "Diff" }));
    expect(conflict.querySelector("[data-kind='added']")?.textContent).toContain("mine text");

    await fireEvent.click(within(conflict).getByRole("button", { name: /Keep mine/ }));
    await expect.poll(() => calls.of("resolve_memory_conflict")).toHaveLength(1);
    expect(calls.of("resolve_memory_conflict")[0]?.args.resolution).toMatchObject({ keep: "mine", disk });
  });

  it("shows a change made on disk by someone else without a reload", async () => {
    let memories = snapshot().memories;
    const calls = shell({ open_project: () => snapshot({ memories }) });
    view();
    await screen.findByTestId("rendered");
    expect(screen.getAllByRole("option")).toHaveLength(2);

    memories = [header({ file: "project_launch.md", name: "Launch date", type: "project", days: 0, age: "today" }), ...memories];
    await emitMemoryDirChanged({
      project: "-path-to-Demo",
      changes: [{ file: "project_launch.md", kind: "created", contentHash: "ab", version: "v000009" }],
    });

    expect(await screen.findByText("Launch date")).toBeTruthy();
    expect(calls.of("open_project")).toHaveLength(2);
  });

  it("warns in the editor when the open file changes on disk, keeping the edit", async () => {
    shell();
    view();
    await screen.findByTestId("rendered");
    await fireEvent.click(screen.getByRole("tab", { name: /Edit/ }));
    await typeInto("body", "Half-written thought");

    await emitMemoryDirChanged({
      project: "-path-to-Demo",
      changes: [{ file: "feedback_testing.md", kind: "modified", contentHash: "cd", version: "v000010" }],
    });

    expect(await screen.findByTestId("changed-on-disk")).toBeTruthy();
    const body = document.querySelector<HTMLTextAreaElement>("[name='body']");
    expect(body?.value).toBe("Half-written thought");
  });

  it("asks before deleting, then deletes the file with the content it showed", async () => {
    const calls = shell({ delete_memory: () => ({ ...outcome("feedback_testing.md", ""), memory: null }) });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("button", { name: /Delete/ }));
    const dialog = screen.getByRole("dialog");
    expect(dialog.textContent).toContain("its line in the index are removed");
    expect(calls.of("delete_memory")).toHaveLength(0);

    await fireEvent.click(within(dialog).getByRole("button", { name: "Delete memory" }));
    await expect.poll(() => calls.of("delete_memory")).toHaveLength(1);
    expect(calls.of("delete_memory")[0]?.args).toEqual({
      project: "-path-to-Demo",
      file: "feedback_testing.md",
      opened: TESTING_FILE,
    });
  });

  it("creates a memory from Ctrl+N and opens it", async () => {
    let created = false;
    const calls = shell({
      create_memory: () => {
        created = true;
        return outcome("project_launch.md", "x");
      },
      open_project: () => {
        const base = snapshot();
        const launch = header({ file: "project_launch.md", name: "Launch date", type: "project", days: 0, age: "today" });
        return created ? snapshot({ memories: [launch, ...base.memories] }) : base;
      },
    });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    expect(await screen.findByRole("heading", { name: "New memory" })).toBeTruthy();
    await typeInto("name", "Launch date");
    await typeInto("description", "Launch is on Dec 1");
    await fireEvent.click(screen.getByRole("radio", { name: "project" }));
    await fireEvent.click(screen.getByRole("button", { name: /Create memory/ }));

    await expect.poll(() => calls.of("create_memory")).toHaveLength(1);
    expect(calls.of("create_memory")[0]?.args).toMatchObject({
      file: null,
      form: { name: "Launch date", description: "Launch is on Dec 1", type: "project", body: "" },
    });
    await expect.poll(() => screen.queryByTestId("memory-pane")?.getAttribute("data-file")).toBe("project_launch.md");
  });

  it("shows a fix as a diff and applies it only when asked", async () => {
    const finding = { rule: "dangling-pointer", severity: "error", file: "MEMORY.md", line: 2, message: "gone.md does not exist" };
    const change = {
      file: "MEMORY.md",
      kind: "modify",
      before: "a\n- [Gone](gone.md)\n",
      after: "a\n",
      reason: "remove the dangling pointer",
      diff: "--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ -1,2 +1 @@\n a\n-- [Gone](gone.md)\n",
    };
    const calls = shell({
      lint_project: () => ({ findings: [finding] }),
      plan_fix: () => ({ root: "/m", changes: [change] }),
      apply_fix: () => ({ root: "/m", actor: "user", files: [] }),
    });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("tab", { name: /Index/ }));
    await fireEvent.click(await screen.findByRole("button", { name: /Fix/ }));
    const dialog = await screen.findByRole("dialog");
    await expect.poll(() => dialog.querySelector("[data-kind='removed']")?.textContent).toContain("- [Gone](gone.md)");
    expect(calls.of("plan_fix")[0]?.args).toEqual({
      project: "-path-to-Demo",
      target: { rule: "dangling-pointer", file: "MEMORY.md", line: 2 },
    });
    expect(calls.of("apply_fix")).toHaveLength(0);

    await fireEvent.click(within(dialog).getByRole("button", { name: "Apply fix" }));
    await expect.poll(() => calls.of("apply_fix")).toHaveLength(1);
    expect(calls.of("apply_fix")[0]?.args).toEqual({ project: "-path-to-Demo", changes: [change] });
  });

  it("shows a file's history with diffs and reverts after confirmation", async () => {
    const versions = [
      { version: "v000002", file: "feedback_testing.md", memoryDir: "/m", actor: "user", time: new Date().toISOString(), hash: "b", summary: "+1 −1 lines" },
      { version: "v000001", file: "feedback_testing.md", memoryDir: "/m", actor: "external", time: "2026-10-06T12:00:00.000Z", hash: "a", summary: "created" },
    ];
    const calls = shell({
      file_history: () => versions,
      version_change: (args) => ({
        version: versions.find((v) => v.version === args.version),
        previous: null,
        diff: "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n",
      }),
      revert_version: () => {
        const reverted = { ...versions[1]!, actor: "user", version: "v000003", summary: "reverted to v000001" };
        versions.unshift(reverted);
        return reverted;
      },
    });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("tab", { name: /History/ }));
    const history = await screen.findByTestId("history");
    expect(within(history).getByText("Outside Engram", { exact: false })).toBeTruthy();
    await fireEvent.click(history.querySelector("[data-version='v000001']") as HTMLElement);
    await fireEvent.click(await screen.findByRole("button", { name: /Revert to this version/ }));
    const dialog = screen.getByRole("dialog");
    expect(calls.of("revert_version")).toHaveLength(0);

    await fireEvent.click(within(dialog).getByRole("button", { name: "Revert" }));
    await expect.poll(() => calls.of("revert_version")).toHaveLength(1);
    expect(calls.of("revert_version")[0]?.args).toEqual({ project: "-path-to-Demo", version: "v000001" });
  });

  it("shows the index as loaded, with the part past the cut struck out", async () => {
    const warning = "> WARNING: MEMORY.md is 3 lines (limit: 200). Only part of it was loaded.";
    shell({
      open_project: () =>
        snapshot({
          index: {
            content: `- [A](a.md)\n\n${warning}`,
            lines: 3,
            bytes: 30_000,
            truncated: true,
            warning,
            entries: [],
            exists: true,
            cutFromLine: 2,
            linesCut: 2,
            bytesCut: 29_000,
            cutText: "\n- [B](b.md)\n- [C](c.md)",
          },
        }),
    });
    view();
    await screen.findByTestId("rendered");
    await fireEvent.click(screen.getByRole("tab", { name: /Index/ }));

    const panel = await screen.findByTestId("index-panel");
    const cut = [...panel.querySelectorAll(".cut-line")].map((line) => [
      line.getAttribute("data-line"),
      line.querySelector(".body")?.textContent?.trim(),
    ]);
    expect(cut).toEqual([
      ["2", "- [B](b.md)"],
      ["3", "- [C](c.md)"],
    ]);
    expect(panel.querySelector("[data-line='1']")?.classList.contains("cut-line")).toBe(false);
    expect(within(panel).getByTestId("index-warning").textContent).toBe(warning);
    expect(within(panel).getByRole("meter", { name: "Size" }).closest("[data-level]")?.getAttribute("data-level")).toBe("over");
  });

  it("renames the file through the engine and follows it", async () => {
    const calls = shell({ rename_memory: () => outcome("feedback_tests.md", TESTING_FILE) });
    view();
    await screen.findByTestId("rendered");

    await fireEvent.click(screen.getByRole("button", { name: /Rename/ }));
    const dialog = screen.getByRole("dialog", { name: "Rename memory file" });
    await fireEvent.input(within(dialog).getByRole("textbox"), { target: { value: "feedback_tests.md" } });
    await fireEvent.click(within(dialog).getByRole("button", { name: "Rename" }));

    await expect.poll(() => calls.of("rename_memory")).toHaveLength(1);
    expect(calls.of("rename_memory")[0]?.args).toEqual({
      project: "-path-to-Demo",
      file: "feedback_testing.md",
      newFile: "feedback_tests.md",
      opened: TESTING_FILE,
    });
  });

  it("an agent's memory opens with memories, index and recall, and its own name, scope and folder", async () => {
    const opened: string[] = [];
    shell({
      open_project: (args) => {
        opened.push(String(args.project));
        return snapshot();
      },
    });
    render(ProjectView, {
      project: "agent:project:code-reviewer:/w/repo",
      summary: null,
      agent: {
        agentType: "code-reviewer",
        scope: "project",
        dir: "/w/repo/.claude/agent-memory/code-reviewer",
      },
      onback: () => {},
    });
    expect((await screen.findByRole("heading", { level: 1 })).textContent).toContain("code-reviewer");
    expect(screen.getByTestId("agent-scope").textContent).toBe("project agent memory");
    expect(screen.getByText("/w/repo/.claude/agent-memory/code-reviewer")).toBeTruthy();
    const tabs = screen.getAllByRole("tab").map((t) => t.textContent?.trim().split(/\s/)[0]);
    expect(tabs).toEqual(["Memories", "Index", "Recall"]);
    expect(screen.getByText("Agents")).toBeTruthy();
    await waitFor(() => expect(opened).toEqual(["agent:project:code-reviewer:/w/repo"]));
  });

  it("a link in a memory opens the memory it names and never navigates the window", async () => {
    shell({
      read_memory: (args) =>
        args.file === "user_role.md"
          ? { memory: memory({ file: "user_role.md", name: "Role", type: "user", body: "Ada.", content: "x" }), html: "<p>Ada.</p>" }
          : {
              memory: memory(),
              html: '<p>See <a href="user_role.md">the role</a>, <a href="https://example.com/x">a site</a> and <a href="">a dropped link</a>.</p>',
            },
    });
    view();
    const pane = await screen.findByTestId("memory-pane");
    const external = await within(pane).findByText("a site");
    const dropped = within(pane).getByText("a dropped link");
    for (const link of [external, dropped]) {
      const click = new MouseEvent("click", { bubbles: true, cancelable: true });
      link.dispatchEvent(click);
      expect(click.defaultPrevented, link.textContent ?? "").toBe(true);
    }
    await fireEvent.click(within(pane).getByText("the role"));
    await waitFor(() => expect(screen.getByTestId("memory-pane").getAttribute("data-file")).toBe("user_role.md"));
  });
});
