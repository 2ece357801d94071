import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { AgentMemory } from "../../ipc";
import { changeSet, stagedFile } from "../../testing/dreams";
import { mockShell } from "../../testing/shell";
import AgentsView from "./AgentsView.svelte";

function agent(over: Partial<AgentMemory> = {}): AgentMemory {
  return {
    agentType: "code-reviewer",
    scope: "project",
    dir: "/w/repo/.claude/agent-memory/code-reviewer",
    files: 2,
    snapshot: "none",
    snapshotUpdatedAt: null,
    syncedFrom: "2026-11-01T00:00:00.000Z",
    project: "/w/repo",
    store: "agent:project:code-reviewer:/w/repo",
    ...over,
  };
}

describe("the Agents view", () => {
  it("lists agents with their snapshot state and says nothing is pending when nothing is", async () => {
    mockShell({ list_agents: () => [agent(), agent({ agentType: "planner", scope: "user", project: null, dir: "/h/.claude/agent-memory/planner" })] });
    render(AgentsView, { onopen: () => {} });
    expect(await screen.findByText("planner")).toBeTruthy();
    expect(screen.queryByTestId("snapshot-banner")).toBeNull();
  });

  it("a changed snapshot raises a banner whose merge opens the review screen", async () => {
    const staged = changeSet({ id: "c1", source: "snapshot", files: [stagedFile({ file: "style.md" })] });
    const calls: unknown[] = [];
    mockShell({
      list_agents: () => [agent({ snapshot: "prompt-update", snapshotUpdatedAt: "2026-11-05T09:00:00.000Z" })],
      stage_snapshot_merge: (args) => {
        calls.push(args);
        return staged;
      },
      change_set: () => staged,
    });
    render(AgentsView, { onopen: () => {} });
    const banner = await screen.findByTestId("snapshot-banner");
    expect(banner.textContent).toContain("code-reviewer");
    await fireEvent.click(screen.getByTestId("review-merge"));
    expect((await screen.findAllByText("style.md")).length).toBeGreaterThan(0);
    expect(calls).toEqual([{ agentType: "code-reviewer", scope: "project", project: "/w/repo", propose: false }]);
    expect(screen.queryByTestId("propose-merge")).toBeNull();
  });

  it("an agent's name opens its memory", async () => {
    mockShell({ list_agents: () => [agent()] });
    const opened: AgentMemory[] = [];
    render(AgentsView, { onopen: (a: AgentMemory) => opened.push(a) });
    await fireEvent.click(await screen.findByTestId("open-agent"));
    expect(opened.map((a) => a.store)).toEqual(["agent:project:code-reviewer:/w/repo"]);
  });

  it("with a model configured, the merge can be proposed by it", async () => {
    const staged = changeSet({ id: "c2", source: "snapshot", files: [stagedFile({ file: "style.md" })] });
    const calls: unknown[] = [];
    mockShell({
      list_agents: () => [agent({ snapshot: "prompt-update", snapshotUpdatedAt: "2026-11-05T09:00:00.000Z" })],
      llm_setup: () => ({
        configPath: "/h/.config/engram/config.toml",
        provider: "anthropic",
        providers: [{ provider: "anthropic", model: "claude-sonnet-4-5", defaultModel: "claude-sonnet-4-5" }],
      }),
      stage_snapshot_merge: (args) => {
        calls.push(args);
        return staged;
      },
      change_set: () => staged,
    });
    render(AgentsView, { onopen: () => {} });
    const propose = await screen.findByTestId("propose-merge");
    expect(propose.parentElement?.textContent).toContain("Let claude-sonnet-4-5 propose merges");
    await fireEvent.click(propose);
    await fireEvent.click(screen.getByTestId("review-merge"));
    expect((await screen.findAllByText("style.md")).length).toBeGreaterThan(0);
    expect(calls).toEqual([{ agentType: "code-reviewer", scope: "project", project: "/w/repo", propose: true }]);
  });
});
