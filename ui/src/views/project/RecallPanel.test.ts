import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { beforeEach, describe, expect, it, vi } from "vitest";

import App from "../../App.svelte";
import { forgetRecalls } from "../../lib/recall";
import { NO_FINDINGS, appInfo, memory, mockShell, projectSummary, snapshot } from "../../testing/shell";
import { anthropicSetup, llmSetup, openaiSetup, recallPreview, recallResult } from "../../testing/llm";
import RecallPanel from "./RecallPanel.svelte";

const PROJECT = "-path-to-Demo";

function prompt(): HTMLTextAreaElement {
  return screen.getByRole("textbox", { name: "Prompt" }) as HTMLTextAreaElement;
}

async function type(text: string) {
  await fireEvent.input(prompt(), { target: { value: text } });
}

function result(file: string): HTMLElement {
  const item = document.querySelector(`.results [data-file='${file}']`);
  if (!(item instanceof HTMLElement)) throw new Error(`no result ${file}`);
  return item;
}

beforeEach(() => forgetRecalls());

describe("the Recall panel", () => {
  it("says why it ranked without the model when the daily token budget is reached", async () => {
    mockShell({
      llm_setup: () => llmSetup({ provider: "anthropic" }),
      recall_preview: () =>
        recallPreview({
          provider: "offline",
          degraded: "daily token budget reached (101,000 of 100,000 tokens today); ranked offline",
        }),
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });
    await type("Fix the multi-currency bug in execute_trade");
    await fireEvent.keyDown(prompt(), { key: "Enter", ctrlKey: true });
    const note = await screen.findByTestId("recall-degraded");
    expect(note.textContent).toContain("Daily token budget reached (101,000 of 100,000 tokens today); ranked offline.");
    // Said once, not once more in lower case above it.
    expect(screen.getAllByText(/token budget reached/i)).toHaveLength(1);
  });

  it("runs a prompt with Ctrl+Enter and shows each memory that would be injected, why, and its cost", async () => {
    const shell = mockShell({
      llm_setup: () => llmSetup(),
      recall_preview: () =>
        recallPreview({
          results: [
            recallResult(),
            recallResult({
              file: "feedback_brutal_honesty.md",
              type: "feedback",
              description: "Say what is wrong plainly",
              age: "today",
              caveat: null,
              score: 1.5,
              reason: "matched: bug",
              tokens: 140,
              truncated: "lines",
            }),
          ],
        }),
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("Fix the multi-currency bug in execute_trade");
    await fireEvent.keyDown(prompt(), { key: "Enter", ctrlKey: true });

    const decision = await screen.findByText("project_decision.md");
    expect(shell.of("recall_preview")[0]?.args).toEqual({
      project: PROJECT,
      query: "Fix the multi-currency bug in execute_trade",
      offline: false,
    });
    const top = within(result("project_decision.md"));
    expect(decision).toBeTruthy();
    expect(top.getByText("project")).toBeTruthy();
    expect(top.getByText(/fix the multi-currency bug in execute_trade first/)).toBeTruthy();
    expect(top.getByText("10 days ago")).toBeTruthy();
    expect(result("project_decision.md").querySelector(".caveat")?.textContent).toContain("This memory is 10 days old");
    expect(top.getByText("currency")).toBeTruthy();
    expect(top.getByText("execute_trade")).toBeTruthy();
    expect(top.getByText(/4\.21/)).toBeTruthy();
    expect(top.getByText("≈ 312 tokens")).toBeTruthy();
    expect(within(result("feedback_brutal_honesty.md")).getByText("Cut to its first 200 lines")).toBeTruthy();
    // Each memory says why the relevance gate let it through.
    expect(result("project_decision.md").querySelector("[data-testid='verdict']")?.textContent).toContain(
      "shares 2 of the prompt's 5 words (46 % of its weight); meets 2 words and 20 %",
    );
    // And the panel says which provider is in force and why, and the gate's rule.
    const gate = screen.getByTestId("recall-gate");
    expect(gate.textContent).toContain("offline: no provider is configured and the local model is not installed");
    expect(gate.textContent).toContain("it is about this dir when a memory shares 2 of the prompt's words covering 20 % of its weight");

    const summary = screen.getByTestId("recall-summary");
    expect(summary.textContent).toContain("of 7 memories injected");
    expect(summary.textContent).toContain("≈ 355");
    expect(summary.textContent).toContain("model tokens: offline");
    expect(summary.textContent).toContain("4 ms");
  });

  it("asks the configured model by default, offline on request, and reports the selector's tokens", async () => {
    const shell = mockShell({
      llm_setup: () => llmSetup({ provider: "openai", providers: [anthropicSetup(), openaiSetup({ model: "qwen2.5:7b" })] }),
      recall_preview: (args) =>
        args.offline
          ? recallPreview()
          : recallPreview({
              provider: "openai",
              model: "qwen2.5:7b",
              results: [recallResult({ score: null, reason: "selected by qwen2.5:7b" })],
              rejected: ["invented.md"],
              usage: { inputTokens: 900, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0, calls: 1 },
            }),
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    const configured = await screen.findByRole("radio", { name: /OpenAI-compatible · qwen2.5:7b/ });
    expect((configured as HTMLInputElement).checked).toBe(true);
    await type("track my CETES investments");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));

    expect(await screen.findByText("selected by qwen2.5:7b")).toBeTruthy();
    const summary = screen.getByTestId("recall-summary");
    expect(summary.textContent).toContain("930");
    expect(summary.textContent).toContain("900 in · 30 out tokens");
    const leftOut = screen.getByText("invented.md").closest("li") as HTMLElement;
    expect(leftOut.textContent).toContain("Named by the model, but not a memory file here");

    await fireEvent.click(screen.getByRole("radio", { name: /Offline/ }));
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));
    await screen.findByText("model tokens: offline");
    expect(shell.of("recall_preview").map((call) => call.args.offline)).toEqual([false, true]);
  });

  it("lists what was passed over and why", async () => {
    mockShell({
      llm_setup: () => llmSetup(),
      recall_preview: () =>
        recallPreview({
          passedOver: [
            {
              file: "project_vision.md",
              type: "project",
              description: "Vision",
              score: 0.6,
              reason: "matched: trade",
              why: "belowFloor",
              verdict: "shares 2 of the prompt's 2 words (100 % of its weight); meets 2 words and 20 %, or 40 % alone",
            },
            {
              file: "user_adrian.md",
              type: "user",
              description: "Adrian",
              score: 2.2,
              reason: "matched: currency",
              why: "overLimit",
              verdict: "shares 2 of the prompt's 2 words (100 % of its weight); meets 2 words and 20 %, or 40 % alone",
            },
            {
              file: "project_expert_panel_v2.md",
              type: "project",
              description: "Experts",
              score: 1.1,
              reason: "matched: trade",
              why: "unrelated",
              verdict: "shares 1 of the prompt's 2 words (38 % of its weight); needs 2 words and 20 %, or 40 % alone",
            },
          ],
          excluded: ["project_working_method.md"],
        }),
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("currency trade");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));

    const vision = (await screen.findByText("project_vision.md")).closest("li") as HTMLElement;
    expect(vision.textContent).toContain("Too weak: 14 % of the best match's score");
    const adrian = screen.getByText("user_adrian.md").closest("li") as HTMLElement;
    expect(adrian.textContent).toContain("Over the limit: 5 better matches were injected");
    const experts = screen.getByText("project_expert_panel_v2.md").closest("li") as HTMLElement;
    expect(experts.textContent).toContain("Not about this prompt: under the relevance gate");
    expect(experts.querySelector("[data-testid='verdict']")?.textContent).toBe(
      "shares 1 of the prompt's 2 words (38 % of its weight); needs 2 words and 20 %, or 40 % alone",
    );
    const excluded = screen.getByText("project_working_method.md").closest("li") as HTMLElement;
    expect(excluded.textContent).toContain("Already shown earlier in this session");
    expect(screen.getByText("Not injected").textContent).toContain("4");
  });

  it("warns that the hook skips single-word prompts", async () => {
    mockShell({ llm_setup: () => llmSetup(), recall_preview: () => recallPreview({}, false) });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("currency");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));

    expect(await screen.findByText(/Claude Code skips single-word prompts/)).toBeTruthy();
  });

  it("says when nothing would be injected", async () => {
    mockShell({
      llm_setup: () => llmSetup(),
      recall_preview: () => recallPreview({ results: [], injectedChars: 0, injectedTokens: 0 }),
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("kubernetes helm chart");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));

    expect(await screen.findByText("Nothing would be injected")).toBeTruthy();
    expect(screen.getByText(/No memory passed the relevance gate: the prompt reads as a general question \("how …"\): it is about this dir when a memory shares 2/)).toBeTruthy();
  });

  it("shows a failure in place with the next step, and recovers on retry", async () => {
    let fail = true;
    mockShell({
      llm_setup: () => llmSetup({ provider: "anthropic" }),
      recall_preview: () => {
        if (fail) throw { kind: "llm", message: "no Anthropic API key: set ANTHROPIC_API_KEY" };
        return recallPreview();
      },
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("currency bug");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("no Anthropic API key");
    expect(alert.textContent).toContain("Switch to Offline above");
    fail = false;
    await fireEvent.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findByText("project_decision.md")).toBeTruthy();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("stops a slow run without reporting an error", async () => {
    let reject: (reason: unknown) => void = () => {};
    const shell = mockShell({
      llm_setup: () => llmSetup({ provider: "openai" }),
      recall_preview: () => new Promise((_, fail) => (reject = fail)),
      cancel_recall: () => {
        reject({ kind: "cancelled", message: "cancelled" });
        return null;
      },
    });
    render(RecallPanel, { project: PROJECT, onopen: () => {} });

    await type("currency bug");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));
    await fireEvent.click(await screen.findByRole("button", { name: "Stop" }));

    await vi.waitFor(() => expect(screen.queryByRole("button", { name: "Stop" })).toBeNull());
    expect(shell.of("cancel_recall")).toHaveLength(1);
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("opens a memory from its result", async () => {
    mockShell({ llm_setup: () => llmSetup(), recall_preview: () => recallPreview() });
    const opened: string[] = [];
    render(RecallPanel, { project: PROJECT, onopen: (file: string) => opened.push(file) });

    await type("currency bug");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));
    await fireEvent.click(await screen.findByRole("button", { name: "project_decision.md" }));

    expect(opened).toEqual(["project_decision.md"]);
  });

  it("is a tab of the project view that keeps its prompt and results across tabs", async () => {
    mockShell({
      app_info: () => appInfo({ lastProject: PROJECT }),
      list_projects: () => [projectSummary()],
      open_project: () => snapshot(),
      lint_project: () => NO_FINDINGS,
      watch_project: () => true,
      unwatch_project: () => null,
      read_memory: () => ({ memory: memory(), html: "<p>No mocks.</p>" }),
      llm_setup: () => llmSetup(),
      recall_preview: () => recallPreview(),
    });
    render(App);

    await fireEvent.click(await screen.findByRole("tab", { name: /Recall/ }));
    await screen.findByRole("textbox", { name: "Prompt" });
    await type("currency bug");
    await fireEvent.click(screen.getByRole("button", { name: /Run/ }));
    await screen.findByText("project_decision.md");

    await fireEvent.click(screen.getByRole("tab", { name: /Memories/ }));
    await screen.findByTestId("memory-pane");
    await fireEvent.click(screen.getByRole("tab", { name: /Recall/ }));
    expect((await screen.findByRole("textbox", { name: "Prompt" }) as HTMLTextAreaElement).value).toBe("currency bug");
    expect(screen.getByText("project_decision.md")).toBeTruthy();
  });
});
