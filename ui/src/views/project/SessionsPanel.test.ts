import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { Message, SessionSummary, TranscriptPage } from "../../ipc";
import { changeSet, stagedFile } from "../../testing/dreams";
import { mockShell } from "../../testing/shell";
import SessionsPanel from "./SessionsPanel.svelte";

const PROJECT = "-work-app";

function session(over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id: "s1",
    project: PROJECT,
    title: "Fix the parser",
    messages: 4,
    firstPrompt: "fix the parser",
    lastActivity: new Date().toISOString(),
    sidechain: false,
    file: "/h/.claude/projects/-work-app/s1.jsonl",
    bytes: 1000,
    messagesEstimated: false,
    cwd: "/work/app",
    ...over,
  };
}

function message(over: Partial<Message>): Message {
  return {
    uuid: "u",
    parentUuid: null,
    role: "user",
    timestamp: "2026-11-20T10:00:00Z",
    text: "",
    toolUses: [],
    isCompactSummary: false,
    toolResults: [],
    thinking: "",
    isMeta: false,
    segment: 0,
    line: 1,
    ...over,
  };
}

function page(): TranscriptPage {
  return {
    sessionId: "s1",
    title: "Fix the parser",
    file: "/h/.claude/projects/-work-app/s1.jsonl",
    total: 4,
    offset: 0,
    messages: [
      message({ uuid: "u1", text: "fix the parser <script>alert(1)</script>" }),
      message({
        uuid: "a1",
        role: "assistant",
        text: "Looking.",
        thinking: "The tokenizer is off by one.",
        toolUses: [{ id: "t1", name: "Read", input: { file_path: "/work/app/parser.rs" } }],
      }),
      message({ uuid: "cb", role: "system", text: "Conversation compacted", segment: 1 }),
      message({ uuid: "u2", text: "thanks", segment: 1 }),
    ],
    compactions: [{ uuid: "cb", timestamp: null, trigger: "auto", preTokens: 150000, segment: 1 }],
    branches: [{ forkUuid: "u1", leafUuid: "x", messages: 2 }],
    skippedLines: [],
    unknownTypes: {},
    parentCycle: null,
    subagents: [],
  };
}

describe("the Sessions tab", () => {
  it("lists sessions and shows the conversation as text, tool calls collapsed, compactions marked", async () => {
    mockShell({ list_sessions: () => [session()], read_transcript: () => page() });
    render(SessionsPanel, { project: PROJECT, onapplied: () => {} });

    expect(await screen.findByRole("heading", { name: "Fix the parser" })).toBeTruthy();
    expect(await screen.findByText("fix the parser <script>alert(1)</script>")).toBeTruthy();
    expect(document.querySelector("script")).toBeNull();
    expect(screen.getByText("Read").closest("details")?.open).toBe(false);
    expect(screen.getByTestId("compaction").textContent).toContain("Compacted (auto) at 150,000 tokens");
    expect(screen.getByTestId("branches").textContent).toContain("2 messages left behind by a rewind");
  });

  it("says where a parentUuid cycle cut the chain, and nothing when there is none", async () => {
    mockShell({ list_sessions: () => [session()], read_transcript: () => ({ ...page(), parentCycle: 3 }) });
    const { unmount } = render(SessionsPanel, { project: PROJECT, onapplied: () => {} });
    expect(await screen.findByText(/Line 3 points back into the conversation/)).toBeTruthy();
    unmount();
    mockShell({ list_sessions: () => [session()], read_transcript: () => page() });
    render(SessionsPanel, { project: PROJECT, onapplied: () => {} });
    await screen.findByText("Looking.");
    expect(screen.queryByText(/points back into the conversation/)).toBeNull();
  });

  it("hides thinking until asked", async () => {
    mockShell({ list_sessions: () => [session()], read_transcript: () => page() });
    render(SessionsPanel, { project: PROJECT, onapplied: () => {} });
    await screen.findByText("Looking.");
    expect(screen.queryByTestId("thinking")).toBeNull();
    await fireEvent.click(screen.getByLabelText("Show thinking"));
    expect(screen.getByTestId("thinking").textContent).toBe("The tokenizer is off by one.");
  });

  it("extracting opens the proposed change set for review", async () => {
    const staged = changeSet({ id: "c1", files: [stagedFile({ file: "project_parser.md" })] });
    mockShell({
      list_sessions: () => [session()],
      read_transcript: () => page(),
      extract_session: () => ({
        sessionId: "s1",
        status: "extracted",
        reason: null,
        messages: 4,
        memoryDir: "/m",
        changeSet: staged,
        extractor: "offline",
        refused: [],
        redacted: [],
      }),
      change_set: () => staged,
    });
    render(SessionsPanel, { project: PROJECT, onapplied: () => {} });
    await fireEvent.click(await screen.findByRole("button", { name: /Extract memories/ }));
    expect((await screen.findAllByText("project_parser.md")).length).toBeGreaterThan(0);
  });

  it("searches as you type and shows matches marked, as text", async () => {
    mockShell({
      list_sessions: () => [session()],
      read_transcript: () => page(),
      search_sessions: (args) => {
        const { query } = args as { query: string };
        return query.includes("heroku")
          ? [
              {
                sessionId: "s1",
                project: PROJECT,
                uuid: "u2",
                role: "user",
                timestamp: "2026-11-20T10:00:00Z",
                snippet: "never <b>Heroku</b> again",
                highlights: [[9, 15]],
                score: 1,
                file: "/x.jsonl",
              },
            ]
          : [];
      },
    });
    render(SessionsPanel, { project: PROJECT, onapplied: () => {} });
    const box = await screen.findByLabelText("Search sessions");
    await fireEvent.input(box, { target: { value: "heroku" } });
    const hits = await screen.findByTestId("session-hits");
    expect(hits.querySelector("mark")?.textContent).toBe("Heroku");
    expect(hits.textContent).toContain("never <b>Heroku</b> again".slice(0, 9));
    expect(hits.querySelector("b")).toBeNull();
    await fireEvent.input(box, { target: { value: "zzz" } });
    expect(await screen.findByText("No session mentions that.")).toBeTruthy();
  });
});
