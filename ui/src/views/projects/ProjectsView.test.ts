import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import App from "../../App.svelte";
import type { ProjectSummary, SearchHit } from "../../ipc";
import { HOME, NO_FINDINGS, appInfo, memory, mockShell, projectSummary, snapshot } from "../../testing/shell";

/** A shell answering the Projects view's commands from `projects`. */
function shell(projects: () => ProjectSummary[], extra: Record<string, (args: Record<string, unknown>) => unknown> = {}) {
  return mockShell({
    app_info: () => appInfo(),
    list_projects: () => projects(),
    ...extra,
  });
}

describe("the Projects view", () => {
  it("lists each project with its path, counts and lint status, and sums them up", async () => {
    shell(() => [
      projectSummary({ lint: { errors: 2, warnings: 1 }, memoryFiles: 7 }),
      projectSummary({ name: "-srv-api", path: null, memoryFiles: 0, sessions: 12, lastActivity: null, lint: { errors: 0, warnings: 0 } }),
      projectSummary({ name: "-srv-web", path: "/srv/web", memoryFiles: 1, sessions: 0, lint: { errors: 0, warnings: 0 } }),
    ]);
    render(App);

    const demo = (await screen.findByText("/path/to/Demo")).closest("tr");
    const row = within(demo as HTMLElement);
    expect(row.getByText("Demo")).toBeTruthy();
    expect(row.getByText("7")).toBeTruthy();
    expect(row.getByText("2 errors")).toBeTruthy();

    // Without a transcript the directory name is all there is; no counts become "none"/"never".
    const api = within(screen.getAllByText("-srv-api")[0]?.closest("tr") as HTMLElement);
    expect(api.getByText("none")).toBeTruthy();
    expect(api.getByText("never")).toBeTruthy();
    const web = within(screen.getByText("/srv/web").closest("tr") as HTMLElement);
    expect(web.getByText("Clean")).toBeTruthy();

    expect(screen.getByText(/3 projects · 8 memories · 15 sessions/)).toBeTruthy();
    expect(screen.getByTestId("claude-home").textContent).toBe(HOME);
  });

  it("explains what to do when the home has no projects", async () => {
    shell(() => []);
    render(App);

    expect(await screen.findByText("No projects yet")).toBeTruthy();
    expect(await screen.findByText(`${HOME}/projects`)).toBeTruthy();
    expect(screen.getByText("--claude-dir DIR")).toBeTruthy();
    expect(screen.queryByRole("table")).toBeNull();
  });

  it("shows a failure in place and recovers on retry", async () => {
    let fail = true;
    const calls = shell(() => {
      if (fail) throw { kind: "io", message: `${HOME}/projects: Permission denied (os error 13)` };
      return [projectSummary()];
    });
    render(App);

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Permission denied (os error 13)");
    expect(alert.textContent).toContain("Check that the directory exists");

    fail = false;
    within(alert).getByRole("button", { name: "Try again" }).click();
    expect(await screen.findByText("/path/to/Demo")).toBeTruthy();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(calls.of("list_projects")).toHaveLength(2);
  });

  it("searches memories across projects and opens a hit at its memory", async () => {
    const hit: SearchHit = {
      project: "-path-to-Demo",
      agent: null,
      projectPath: "/path/to/Demo",
      memoryDir: `${HOME}/projects/-path-to-Demo/memory`,
      file: "feedback_testing.md",
      name: "Testing policy",
      description: "Integration tests hit a real DB",
      type: "feedback",
      snippet: "No mocks.",
      score: 3,
      mtime: "2026-10-06T12:00:00.000Z",
    };
    const calls = shell(() => [projectSummary(), projectSummary({ name: "-srv-api", path: "/srv/api" })], {
      search_memories: () => [hit],
      open_project: () => snapshot(),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
      read_memory: () => ({ memory: memory(), html: "<p>No mocks.</p>" }),
    });
    render(App);
    await screen.findByText("/srv/api");

    const input = screen.getByRole("searchbox", { name: "Search projects and memories" });
    await fireEvent.input(input, { target: { value: "real db" } });

    const result = await screen.findByRole("button", { name: /Testing policy/ });
    expect(calls.of("search_memories").at(-1)?.args).toEqual({ query: "real db" });
    // No project is named "real db": only the memory section shows.
    expect(screen.queryByText("/srv/api")).toBeNull();

    await fireEvent.click(result);
    const pane = await screen.findByTestId("memory-pane");
    expect(pane.getAttribute("data-file")).toBe("feedback_testing.md");
    expect(calls.of("open_project")[0]?.args).toEqual({ project: "-path-to-Demo" });
  });

  it("a hit in an agent's memory names the agent and opens its memory dir", async () => {
    const hit: SearchHit = {
      project: "agent:project:code-reviewer:/path/to/Demo",
      agent: { agentType: "code-reviewer", scope: "project" },
      projectPath: "/path/to/Demo",
      memoryDir: "/path/to/Demo/.claude/agent-memory/code-reviewer",
      file: "style.md",
      name: "Review style",
      description: "Be terse",
      type: "feedback",
      snippet: "Be terse, cite lines.",
      score: 3,
      mtime: "2026-10-06T12:00:00.000Z",
    };
    const calls = shell(() => [projectSummary()], {
      search_memories: () => [hit],
      open_project: () => snapshot(),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
      read_memory: () => ({ memory: memory(), html: "<p>Be terse.</p>" }),
    });
    render(App);
    const input = await screen.findByRole("searchbox", { name: "Search projects and memories" });
    await fireEvent.input(input, { target: { value: "terse" } });
    const result = await screen.findByRole("button", { name: /Review style/ });
    expect(result.textContent).toContain("code-reviewer (project agent memory) · Demo");
    await fireEvent.click(result);
    expect((await screen.findByTestId("agent-scope")).textContent).toBe("project agent memory");
    await screen.findByTestId("memory-pane");
    expect(calls.of("open_project")[0]?.args).toEqual({ project: "agent:project:code-reviewer:/path/to/Demo" });
  });

  it("reopens the project that was open when the app last closed", async () => {
    const calls = mockShell({
      app_info: () => appInfo({ lastProject: "-path-to-Demo" }),
      list_projects: () => [projectSummary()],
      open_project: () => snapshot(),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
      read_memory: () => ({ memory: memory(), html: "<p>No mocks.</p>" }),
    });
    render(App);

    expect(await screen.findByRole("heading", { name: "Demo", level: 1 })).toBeTruthy();
    await expect.poll(() => calls.of("open_project")).toHaveLength(1);
  });

  it("says so when it shows the demo home", async () => {
    mockShell({
      app_info: () => appInfo({ demo: { missingHome: "/home/ada/.claude" }, claudeHome: "/data/engram/demo-home" }),
      list_projects: () => [projectSummary()],
    });
    render(App);

    const banner = await screen.findByTestId("demo-banner");
    expect(banner.textContent).toContain("You're exploring a demo.");
    expect(banner.textContent).toContain("/home/ada/.claude");
    expect(screen.getByText("Demo", { selector: ".demo-tag" })).toBeTruthy();
  });

  it("says in the sidebar when the app runs without its tray icon, and nothing when it has one", async () => {
    const why =
      "No tray icon: neither libayatana-appindicator3.so.1 nor libappindicator3.so.1 is installed, so Engram runs only while this window is open.";
    mockShell({ app_info: () => appInfo({ noTray: why }), list_projects: () => [projectSummary()] });
    const { unmount } = render(App);

    const notice = await screen.findByTestId("no-tray");
    expect(notice.textContent).toContain("No tray icon");
    expect(notice.textContent).toContain("Neither libayatana-appindicator3.so.1");
    expect(notice.textContent).toContain("runs only while this window is open");
    unmount();

    shell(() => [projectSummary()]);
    render(App);
    await screen.findByText("/path/to/Demo");
    expect(screen.queryByTestId("no-tray")).toBeNull();
  });

  it("jumps to a project with Ctrl+O, typing and Enter", async () => {
    const calls = shell(() => [projectSummary(), projectSummary({ name: "-srv-api", path: "/srv/api" })], {
      search_memories: () => [],
      open_project: (args) => snapshot({ project: args.project as string, memories: [] }),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
    });
    render(App);
    await screen.findByText("/srv/api");

    await fireEvent.keyDown(window, { key: "o", ctrlKey: true });
    const dialog = await screen.findByRole("dialog", { name: "Go to project or memory" });
    const field = within(dialog).getByRole("textbox", { name: "Project or memory" });
    await fireEvent.input(field, { target: { value: "api" } });
    expect(within(dialog).getAllByRole("option")).toHaveLength(1);
    await fireEvent.keyDown(field, { key: "Enter" });

    await expect.poll(() => calls.of("open_project").at(-1)?.args).toEqual({ project: "-srv-api" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });
});
