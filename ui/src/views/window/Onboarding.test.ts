import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import App from "../../App.svelte";
import type { FirstRun, HookPlan, LocalModelStatus, ModelFetchProgress } from "../../ipc";
import { dreamSettings } from "../../testing/dreams";
import { HOME, appInfo, channelOf, mockShell, projectSummary } from "../../testing/shell";

const SETTINGS = `${HOME}/settings.json`;

function firstRun(overrides: Partial<FirstRun> = {}): FirstRun {
  return {
    needed: true,
    claudeHome: HOME,
    claudeHomeExists: true,
    projects: 1,
    memories: 2,
    hooks: {
      settingsFile: SETTINGS,
      event: "UserPromptSubmit",
      installed: false,
      command: null,
      expectedCommand: "/usr/bin/engram hook user-prompt-submit",
      upToDate: false,
      backups: [],
      hooks: [],
    },
    engramCommand: "/usr/bin/engram",
    ...overrides,
  };
}

const PLAN: HookPlan = {
  settingsFile: SETTINGS,
  action: "installed",
  commands: ["/usr/bin/engram hook user-prompt-submit", "/usr/bin/engram hook stop"],
  diff: `--- ${SETTINGS}\n+++ ${SETTINGS}\n@@ -1,1 +1,2 @@\n {\n+  "hooks": "/usr/bin/engram hook user-prompt-submit"\n`,
  base: "hash-of-the-file",
};

function shell(found: FirstRun, handlers: Parameters<typeof mockShell>[0] = {}) {
  return mockShell({
    app_info: () => appInfo(),
    list_projects: () => [projectSummary()],
    first_run: () => found,
    plan_hooks_install: () => PLAN,
    install_planned_hooks: () => ({
      action: "installed",
      settingsFile: SETTINGS,
      command: PLAN.commands[0],
      commands: PLAN.commands,
      backup: null,
    }),
    local_model_status: () => ({ model: "all-MiniLM-L6-v2", dir: "/m", installed: false }),
    set_dream_settings: (args) => dreamSettings({ enabled: args.enabled as boolean }),
    set_onboarded: () => null,
    ...handlers,
  });
}

function next() {
  return fireEvent.click(screen.getByTestId("onboarding-next"));
}

describe("the first run", () => {
  it("says what it found, shows the settings.json diff before installing exactly that plan", async () => {
    const ipc = shell(firstRun());
    render(App);

    const found = await screen.findByTestId("found");
    expect(found.textContent).toContain(HOME);
    expect(found.textContent).toMatch(/1 project, 2 memories/);
    expect(found.textContent).toMatch(/hooks:\s*not installed/);

    await next();
    await fireEvent.click(await screen.findByTestId("show-hook-diff"));
    const diff = await screen.findByRole("table", { name: "settings.json changes" });
    expect(diff.textContent).toContain("/usr/bin/engram hook user-prompt-submit");
    expect(ipc.of("install_planned_hooks")).toEqual([]);

    await fireEvent.click(screen.getByTestId("install-hooks"));
    await screen.findByTestId("hooks-installed");
    expect(ipc.of("install_planned_hooks").map((c) => c.args)).toEqual([{ base: "hash-of-the-file" }]);
  });

  it("turns dreams on for a chosen project, and finishing marks the first run over", async () => {
    const ipc = shell(firstRun());
    render(App);
    await screen.findByTestId("found");
    await next(); // hooks
    await fireEvent.click(screen.getByTestId("skip-step"));
    await screen.findByText(/about 83 MB/, { selector: "button" });
    await next(); // dreams
    const row = (await screen.findByText("Demo", { selector: "[data-dream-project] span" })).closest("li");
    await fireEvent.click(within(row as HTMLElement).getByRole("switch"));
    expect(ipc.of("set_dream_settings").map((c) => c.args)).toEqual([
      { project: "-path-to-Demo", enabled: true, policy: "review" },
    ]);
    await next(); // login
    await next(); // finish
    expect(ipc.of("set_onboarded").map((c) => c.args)).toEqual([{ done: true }]);
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("is not shown once over, and Skip setup ends it at once", async () => {
    shell(firstRun({ needed: false }));
    const { unmount } = render(App);
    await screen.findAllByText("Demo");
    expect(screen.queryByTestId("found")).toBeNull();
    unmount();

    const ipc = shell(firstRun());
    render(App);
    await screen.findByTestId("found");
    await fireEvent.click(screen.getByTestId("skip-setup"));
    expect(ipc.of("set_onboarded").map((c) => c.args)).toEqual([{ done: true }]);
    await waitFor(() => expect(screen.queryByTestId("found")).toBeNull());
  });

  it("downloads the local model with its progress in MB, says why a try failed, and where it is installed", async () => {
    let send: (progress: ModelFetchProgress) => void = () => {};
    let answer: (status: LocalModelStatus) => void = () => {};
    let fail: (error: { kind: string; message: string }) => void = () => {};
    const ipc = shell(firstRun(), {
      fetch_local_model: (args) => {
        send = channelOf<ModelFetchProgress>(args, "onProgress");
        return new Promise((resolve, reject) => ((answer = resolve), (fail = reject)));
      },
    });
    render(App);
    await screen.findByTestId("found");
    await next(); // hooks
    await next(); // model

    await fireEvent.click(await screen.findByTestId("fetch-model"));
    await screen.findByText("Starting…");
    send({ downloaded: 1_234_567, total: 90_000_000 });
    await screen.findByText("1.2 MB of 90.0 MB");
    fail({ kind: "io", message: "huggingface.co: connection refused" });
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("That did not work");
    expect(alert.textContent).toContain("connection refused");

    await fireEvent.click(screen.getByTestId("fetch-model"));
    expect(screen.queryByRole("alert"), "a new try clears the old failure").toBeNull();
    answer({ model: "all-MiniLM-L6-v2", dir: "/m", installed: true });
    expect((await screen.findByTestId("model-installed")).textContent).toContain("/m");
    expect(ipc.of("fetch_local_model")).toHaveLength(2);
    expect(ipc.of("embed_all_memories"), "the first run only fetches").toHaveLength(0);
  });
});
