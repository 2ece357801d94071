import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { emit } from "@tauri-apps/api/event";
import { beforeEach, describe, expect, it } from "vitest";

import App from "../../App.svelte";
import type { DreamEvent, DreamTask, StagedChangeSet } from "../../ipc";
import { forgetDreamStores } from "../../stores/dreams.svelte";
import {
  PROJECT,
  changeSet,
  dreamSettings,
  dreamStatus,
  dreamTask,
  overview,
  stagedFile,
} from "../../testing/dreams";
import { llmSetup } from "../../testing/llm";
import {
  NO_FINDINGS,
  appInfo,
  channelOf,
  memory,
  mockShell,
  projectSummary,
  snapshot,
  type Handler,
} from "../../testing/shell";
import DreamsPanel from "./DreamsPanel.svelte";

function shell(extra: Record<string, Handler> = {}) {
  return mockShell({
    dream_overview: () => overview(),
    list_change_sets: () => [],
    llm_setup: () => llmSetup({ provider: "anthropic" }),
    ...extra,
  });
}

function panel() {
  return render(DreamsPanel, { project: PROJECT, onopen: () => {}, onapplied: () => {} });
}

function live(): HTMLElement {
  return screen.getByTestId("dream-live");
}

beforeEach(() => forgetDreamStores());

describe("the Dreams tab", () => {
  it("puts the gates into words and says what keeps a dream from being due", async () => {
    shell();
    panel();

    const words = await screen.findByTestId("gate-words");
    expect(words.textContent).toBe("18 h of 24 · 3 of 5 sessions · lock free");
    expect(screen.getByTestId("gate-verdict").textContent).toContain(
      "Not due: 18 of 24 hours since the last consolidation.",
    );
    expect(screen.getByRole("switch", { name: "Dream in the background" }).getAttribute("aria-checked")).toBe("true");
    expect((screen.getByRole("radio", { name: "Review first" }) as HTMLInputElement).checked).toBe(true);
    expect(screen.getByText("No dream has run on this project yet.")).toBeTruthy();
  });

  it("says never consolidated, who holds the lock, and when a dream is due", async () => {
    let status = dreamStatus({
      hoursSince: null,
      sessionsSince: 1,
      lock: { path: "/m/.consolidate-lock", exists: true, pid: 4242, alive: true, mtime: new Date().toISOString() },
      blockedBy: "lock",
    });
    shell({ dream_overview: () => overview({ status }) });
    const { unmount } = panel();

    expect((await screen.findByTestId("gate-words")).textContent).toBe(
      "never consolidated · 1 of 5 sessions · lock held by pid 4242",
    );
    expect(screen.getByTestId("gate-verdict").textContent).toContain("another dream holds the lock (pid 4242)");
    unmount();

    status = dreamStatus({ hoursSince: 30.2, sessionsSince: 6, blockedBy: null, due: true });
    forgetDreamStores();
    panel();
    expect((await screen.findByTestId("gate-words")).textContent).toBe("30 h of 24 · 6 of 5 sessions · lock free");
    const verdict = screen.getByTestId("gate-verdict");
    expect(verdict.getAttribute("data-due")).toBe("true");
    expect(verdict.textContent).toContain("Due: the next background check dreams on this project.");
  });

  it("turns background dreams on and sets the policy", async () => {
    let settings = dreamSettings({ enabled: false, enabledSource: "default" });
    const calls = shell({
      dream_overview: () => overview({ settings, status: dreamStatus({ enabled: settings.enabled, blockedBy: "disabled" }) }),
      set_dream_settings: (args) => {
        settings = {
          ...settings,
          enabled: (args.enabled as boolean | null) ?? settings.enabled,
          policy: (args.policy as "review" | "auto" | null) ?? settings.policy,
          enabledSource: "engram",
        };
        return settings;
      },
    });
    panel();

    expect((await screen.findByTestId("gate-verdict")).textContent).toContain("Off: background dreams skip this project.");
    await fireEvent.click(screen.getByRole("switch", { name: "Dream in the background" }));
    await expect.poll(() => screen.getByRole("switch").getAttribute("aria-checked")).toBe("true");
    await fireEvent.click(screen.getByRole("radio", { name: "Apply automatically" }));
    await expect.poll(() => (screen.getByRole("radio", { name: "Apply automatically" }) as HTMLInputElement).checked).toBe(true);

    expect(calls.of("set_dream_settings").map((call) => call.args)).toEqual([
      { project: PROJECT, enabled: true, policy: null },
      { project: PROJECT, enabled: null, policy: "auto" },
    ]);
  });

  it("says no dream starts while Claude Code's auto memory is off, and does not offer the switch", async () => {
    const settings = dreamSettings({ enabled: false, enabledSource: "autoMemory" });
    shell({
      dream_overview: () => overview({ settings, status: dreamStatus({ enabled: false, blockedBy: "disabled" }) }),
    });
    panel();

    expect((await screen.findByTestId("scheduler-words")).textContent).toContain(
      "Claude Code's auto memory is off for this project",
    );
    expect((screen.getByRole("switch", { name: "Dream in the background" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("offers the offline dream instead once the daily token budget is reached", async () => {
    const budget = { day: "2026-11-22", tokensToday: 120_000, dailyTokens: 100_000, reached: true };
    const calls = shell({
      dream_overview: () => overview({ status: dreamStatus({ blockedBy: "budget", budget }) }),
      start_dream: () => dreamTask({ status: "completed", provider: "offline" }),
    });
    panel();

    const button = (await screen.findByTestId("dream-now")) as HTMLButtonElement;
    expect(button.textContent).toContain("Dream offline");
    expect(button.getAttribute("data-offline")).toBe("true");
    expect(screen.getByTestId("dream-budget-note").textContent).toContain(
      "today's token budget is reached (120,000 of 100,000 tokens)",
    );
    expect(screen.getByTestId("gate-verdict").textContent).toContain("model dreams resume tomorrow");
    await fireEvent.click(button);
    await expect.poll(() => calls.of("start_dream")).toHaveLength(1);
    expect(calls.of("start_dream")[0]?.args.offline).toBe(true);
  });

  it("asks for the configured model's dream while under the budget", async () => {
    const budget = { day: "2026-11-22", tokensToday: 10, dailyTokens: 100_000, reached: false };
    const calls = shell({
      dream_overview: () => overview({ status: dreamStatus({ budget }) }),
      start_dream: () => dreamTask({ status: "completed" }),
    });
    panel();
    const button = (await screen.findByTestId("dream-now")) as HTMLButtonElement;
    expect(button.textContent).toContain("Dream now");
    expect(screen.queryByTestId("dream-budget-note")).toBeNull();
    await fireEvent.click(button);
    await expect.poll(() => calls.of("start_dream")).toHaveLength(1);
    expect(calls.of("start_dream")[0]?.args.offline).toBe(false);
  });

  it("streams a dream started with Dream now: phase, turns, files, tokens and time, then its outcome", async () => {
    let send: (event: DreamEvent) => void = () => {};
    let finish: (task: DreamTask) => void = () => {};
    const calls = shell({
      start_dream: (args) => {
        send = channelOf<DreamEvent>(args, "onEvent");
        return new Promise((resolve) => (finish = resolve));
      },
    });
    panel();
    await fireEvent.click(await screen.findByTestId("dream-now"));
    expect(calls.of("start_dream")[0]?.args.project).toBe(PROJECT);

    let task = dreamTask();
    send({ kind: "started", task });
    expect((await screen.findByTestId("dream-live")).getAttribute("data-status")).toBe("running");
    expect(screen.getByTestId("dream-phase").textContent).toBe("Starting");
    expect(screen.getByText("Waiting for the model's first reply…")).toBeTruthy();
    expect((screen.getByTestId("dream-now") as HTMLButtonElement).disabled).toBe(true);

    task = {
      ...task,
      turns: [{ text: "Reading the index first.", toolUseCount: 1 }],
      tokens: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 800, cacheCreationTokens: 0, calls: 1 },
      elapsedMs: 1500,
    };
    send({ kind: "turn", task });
    await screen.findByText("Reading the index first.");
    task = {
      ...task,
      phase: "updating",
      filesTouched: ["project_deploy.md"],
      turns: [...task.turns, { text: "Dating the deploy move.", toolUseCount: 3 }],
      tokens: { inputTokens: 2700, outputTokens: 160, cacheReadTokens: 1700, cacheCreationTokens: 0, calls: 2 },
      elapsedMs: 3100,
    };
    send({ kind: "turn", task });
    send({ kind: "fileTouched", task });

    await expect.poll(() => live().getAttribute("data-phase")).toBe("updating");
    const turns = screen.getAllByTestId("dream-turn").map((turn) => turn.textContent?.replace(/\s+/g, " ").trim());
    expect(turns).toEqual(["1 Reading the index first. 1 tool call", "2 Dating the deploy move. 3 tool calls"]);
    expect(within(screen.getByTestId("dream-files")).getByText("project_deploy.md")).toBeTruthy();
    const tokens = screen.getByTestId("dream-tokens").textContent?.replace(/\s+/g, " ");
    expect(tokens).toContain("2,700 in");
    expect(tokens).toContain("160 out");
    expect(tokens).toContain("1,700 cache read");
    expect(tokens).toContain("0 cache write");
    expect(screen.getByText(/reviewing 2 sessions/)).toBeTruthy();

    const done: DreamTask = { ...task, status: "completed", changeSet: "c0000wxyz", summary: "Dated the deploy move." };
    send({ kind: "finished", task: done });
    finish(done);
    await expect.poll(() => live().getAttribute("data-status")).toBe("completed");
    expect(screen.getByTestId("dream-outcome").textContent).toContain("Dated the deploy move.");
    expect(screen.queryByTestId("dream-kill")).toBeNull();
    expect(screen.getByTestId("dream-review")).toBeTruthy();
    expect((screen.getByTestId("dream-now") as HTMLButtonElement).disabled).toBe(false);
  });

  it("kills a running dream: the shell is asked once and the card says nothing was changed", async () => {
    let send: (event: DreamEvent) => void = () => {};
    let finish: (task: DreamTask) => void = () => {};
    const task = dreamTask({ turns: [{ text: "Reading.", toolUseCount: 1 }] });
    const calls = shell({
      start_dream: (args) => {
        send = channelOf<DreamEvent>(args, "onEvent");
        return new Promise((resolve) => (finish = resolve));
      },
      kill_dream: () => {
        const killed: DreamTask = { ...task, status: "killed", error: "killed" };
        setTimeout(() => {
          send({ kind: "finished", task: killed });
          finish(killed);
        }, 0);
        return true;
      },
    });
    panel();
    await fireEvent.click(await screen.findByTestId("dream-now"));
    await expect.poll(() => calls.of("start_dream")).toHaveLength(1);
    send({ kind: "turn", task });
    await screen.findByText("Reading.");

    await fireEvent.click(screen.getByTestId("dream-kill"));
    await expect.poll(() => live().getAttribute("data-status")).toBe("killed");
    expect(calls.of("kill_dream")).toEqual([{ cmd: "kill_dream", args: { project: PROJECT } }]);
    expect(screen.getByTestId("dream-outcome").textContent).toContain(
      "Killed: nothing was changed, and the lock was rolled back.",
    );
    expect(screen.queryByTestId("dream-review")).toBeNull();
  });

  it("shows a dream another process runs and kills it there", async () => {
    let running: DreamTask | null = dreamTask({ pid: 9000, turns: [{ text: "Elsewhere.", toolUseCount: 2 }] });
    const calls = shell({
      dream_overview: () => overview({ running }),
      kill_dream: () => {
        running = null;
        return true;
      },
    });
    panel();

    const card = await screen.findByTestId("dream-live");
    expect(card.textContent).toContain("elsewhere · pid 9000");
    expect((screen.getByTestId("dream-now") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByTestId("dream-kill"));
    await expect.poll(() => screen.queryByTestId("dream-live")).toBeNull();
    expect(calls.of("kill_dream")).toHaveLength(1);
  });

  it("lists past dreams with their outcome and opens a change set's review", async () => {
    const set = changeSet();
    shell({
      dream_overview: () =>
        overview({
          past: [
            dreamTask({ id: "d3", status: "completed", changeSet: set.id, summary: "Dated the deploy move." }),
            dreamTask({ id: "d2", status: "killed", error: "killed" }),
            dreamTask({ id: "d1", status: "failed", error: "stopped at its token budget (2000 tokens): nothing applied" }),
            dreamTask({ id: "d0", status: "skipped", provider: "offline", summary: "another dream holds the lock (pid 77)" }),
          ],
        }),
      list_change_sets: () => [set],
      change_set: () => set,
    });
    panel();

    const past = await screen.findByTestId("past-dreams");
    const row = (id: string) => past.querySelector(`[data-task='${id}']`) as HTMLElement;
    expect(row("d3").textContent).toContain("Completed");
    expect(row("d3").textContent).toContain("Dated the deploy move.");
    expect(row("d3").textContent).toContain("Waiting for review");
    expect(row("d2").textContent).toContain("Killed");
    expect(row("d1").textContent).toContain("stopped at its token budget");
    expect(row("d0").textContent).toContain("Skipped");
    expect(row("d0").textContent).toContain("another dream holds the lock (pid 77)");
    expect(within(screen.getByTestId("sets-waiting")).getByText(set.summary)).toBeTruthy();

    await fireEvent.click(within(row("d3")).getByRole("button", { name: /3 changes/ }));
    const review = await screen.findByTestId("review-panel");
    expect(review.getAttribute("data-set")).toBe(set.id);
    await fireEvent.click(within(review).getByRole("button", { name: /Dreams/ }));
    expect(await screen.findByTestId("past-dreams")).toBeTruthy();
  });

  it("refreshes when a dream ends elsewhere", async () => {
    let past: DreamTask[] = [];
    const calls = shell({ dream_overview: () => overview({ past }) });
    panel();
    await screen.findByText("No dream has run on this project yet.");

    past = [dreamTask({ status: "completed", summary: "A scheduled dream." })];
    await emit("dream-finished", { task: past[0] });
    expect(await screen.findByText("A scheduled dream.")).toBeTruthy();
    expect(calls.of("dream_overview").length).toBeGreaterThanOrEqual(2);
  });

  it("is a tab of the project view, and the Projects view's badge opens it", async () => {
    const sets: StagedChangeSet[] = [
      changeSet(),
      changeSet({ id: "c2" }),
      changeSet({ id: "c3", status: "applied" }),
      changeSet({ id: "c4", project: "-srv-api" }),
    ];
    mockShell({
      app_info: () => appInfo(),
      list_projects: () => [projectSummary(), projectSummary({ name: "-srv-api", path: "/srv/api" }), projectSummary({ name: "-srv-web", path: "/srv/web" })],
      list_change_sets: (args) => (args.project ? sets.filter((s) => s.project === args.project) : sets),
      open_project: () => snapshot(),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
      read_memory: () => ({ memory: memory(), html: "<p>No mocks.</p>" }),
      dream_overview: () => overview(),
      llm_setup: () => llmSetup(),
    });
    render(App);

    const demo = (await screen.findByText("/path/to/Demo")).closest("tr") as HTMLElement;
    const badge = await within(demo).findByTestId("review-badge");
    expect(badge.textContent?.trim()).toBe("2 changes to review");
    const api = screen.getByText("/srv/api").closest("tr") as HTMLElement;
    expect(within(api).getByTestId("review-badge").textContent?.trim()).toBe("1 change to review");
    const web = screen.getByText("/srv/web").closest("tr") as HTMLElement;
    expect(within(web).queryByTestId("review-badge")).toBeNull();

    await fireEvent.click(badge);
    expect((await screen.findByRole("tab", { name: /Dreams/ })).getAttribute("aria-selected")).toBe("true");
    expect(await screen.findByTestId("dreams-panel")).toBeTruthy();
    expect((await screen.findByTestId("sets-waiting")).querySelectorAll("li")).toHaveLength(2);
  });
  it("lists Claude Code's own dreams, recorded while it held the lock, to see and undo", async () => {
    const claude = changeSet({
      id: "cclaude01",
      source: "claude-dream",
      status: "applied",
      files: [stagedFile({ status: "applied" })],
    });
    shell({ list_change_sets: () => [claude], change_set: () => claude });
    panel();

    const list = await screen.findByTestId("claude-dreams");
    expect(list.textContent).toContain("1 file changed while Claude Code held the lock");
    await fireEvent.click(within(list).getByRole("button", { name: /See changes/ }));
    const review = await screen.findByTestId("review-panel");
    expect(review.getAttribute("data-set")).toBe("cclaude01");
  });
});
