import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { EmbedAllProgress, EmbedAllReport, LocalModelStatus, ModelFetchProgress } from "../../ipc";
import { LocalModel, MemoryEmbedding } from "../../stores/localModel.svelte";
import { llmSetup } from "../../testing/llm";
import { channelOf, mockShell } from "../../testing/shell";
import LocalModelPanel from "./LocalModelPanel.svelte";

// The panel alone, as LlmSection draws it with `local` picked; how the in-force line follows a
// fetch is in SettingsView.test.ts, how the panel's state outlives it in LlmSection.test.ts.

const MIB = 1024 * 1024;

function status(installed: boolean): LocalModelStatus {
  return { model: "all-MiniLM-L6-v2", dir: "/home/ada/.local/share/engram/models", installed };
}

function report(overrides: Partial<EmbedAllReport> = {}): EmbedAllReport {
  return { source: "all-MiniLM-L6-v2", projects: 2, files: 1203, embedded: 1200, cached: 3, cancelled: false, elapsedMs: 900, ...overrides };
}

function renderPanel(props: { embeddings?: "local" | "openai"; sourceUnsaved?: boolean } = {}) {
  return render(LocalModelPanel, {
    props: {
      model: new LocalModel(),
      embedding: new MemoryEmbedding(),
      saved: llmSetup(),
      embeddings: props.embeddings ?? "local",
      sourceUnsaved: props.sourceUnsaved ?? false,
    },
  });
}

/** A command that answers when the test says, and the messages it streams meanwhile. */
function pending<T, P>() {
  const command = {
    send: (_progress: P) => {},
    answer: (_value: T) => {},
    fail: (_error: { kind: string; message: string }) => {},
    handler: (args: Record<string, unknown>) => {
      command.send = channelOf<P>(args, "onProgress");
      return new Promise<T>((resolve, reject) => {
        command.answer = resolve;
        command.fail = reject;
      });
    },
  };
  return command;
}

describe("Settings → Language model → the local model", () => {
  it("fetches the model with its progress in MiB, and Stop ends the fetch without an error", async () => {
    const fetch = pending<LocalModelStatus, ModelFetchProgress>();
    const shell = mockShell({
      local_model_status: () => status(false),
      fetch_local_model: fetch.handler,
      stop_model_work: () => true,
    });
    renderPanel();

    const panel = await screen.findByTestId("local-model");
    await screen.findByText(/is not installed yet/);
    expect(panel.textContent).toContain("/home/ada/.local/share/engram/models");
    expect(panel.textContent, "no provider is saved").toContain("Engram uses it as soon as it is installed");

    await fireEvent.click(screen.getByRole("button", { name: /Fetch the model/ }));
    expect((await screen.findByText("Starting…")).className).toContain("model-progress");
    fetch.send({ downloaded: 5 * MIB + 1, total: 87 * MIB - 1 });
    await screen.findByText("5 of 87 MiB");
    const bar = screen.getByRole("progressbar", { name: "Fetching the model" }) as HTMLProgressElement;
    expect(bar.value).toBe(5 * MIB + 1);
    fetch.send({ downloaded: 9 * MIB, total: null });
    await screen.findByText("9 MiB");

    await fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(shell.of("stop_model_work")).toHaveLength(1);
    fetch.fail({ kind: "cancelled", message: "the fetch was stopped" });
    await screen.findByRole("button", { name: /Fetch the model/ });
    expect(screen.queryByRole("alert"), "a fetch stopped is not a failure").toBeNull();
    expect(shell.of("embed_all_memories"), "nothing was fetched, so nothing is embedded").toHaveLength(0);
  });

  it("says why the fetch failed, and fetching again clears it", async () => {
    const fetch = pending<LocalModelStatus, ModelFetchProgress>();
    mockShell({ local_model_status: () => status(false), fetch_local_model: fetch.handler });
    renderPanel();

    await fireEvent.click(await screen.findByRole("button", { name: /Fetch the model/ }));
    fetch.fail({ kind: "io", message: "huggingface.co: connection refused" });
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("The model could not be fetched");
    expect(alert.textContent).toContain("connection refused");

    await fireEvent.click(screen.getByRole("button", { name: /Fetch the model/ }));
    expect(screen.queryByRole("alert"), "the old failure is not about the new fetch").toBeNull();
  });

  it("embeds every memory once the model is fetched, with its progress, then says what it did", async () => {
    const embed = pending<EmbedAllReport, EmbedAllProgress>();
    const shell = mockShell({
      local_model_status: () => status(false),
      fetch_local_model: () => status(true),
      llm_setup: () => llmSetup({ provider: "local" }),
      embed_all_memories: embed.handler,
    });
    renderPanel();

    await fireEvent.click(await screen.findByRole("button", { name: /Fetch the model/ }));
    await screen.findByText(/is installed in/);
    await screen.findByText("Looking for memories…");
    expect(shell.of("llm_setup"), "which provider is in force is read again").toHaveLength(1);
    embed.send({ project: "-path-to-Demo", done: 3, total: 1234, projectsDone: 0, projects: 2 });
    await screen.findByText("-path-to-Demo: 3 of 1,234 memories · project 1 of 2");
    expect((screen.getByRole("progressbar", { name: "Embedding memories" }) as HTMLProgressElement).max).toBe(1234);

    embed.answer(report());
    const done = await screen.findByRole("status");
    expect(done.textContent?.replace(/\s+/g, " ").trim()).toBe("1,200 embedded, 3 already cached, in 2 projects (900 ms).");
    expect(shell.of("embed_all_memories"), "once, right after the fetch").toHaveLength(1);
  });

  it("with a server's vectors, embeds only once that source is saved, and says when it was stopped", async () => {
    const shell = mockShell({
      local_model_status: () => status(false),
      embed_all_memories: () => report({ cancelled: true, projects: 1, embedded: 40, cached: 0, elapsedMs: 12_400 }),
    });
    const { rerender } = renderPanel({ embeddings: "openai", sourceUnsaved: true });

    const embed = (await screen.findByRole("button", { name: "Embed all memories" })) as HTMLButtonElement;
    expect(embed.disabled).toBe(true);
    expect(embed.title).toBe("Save first: memories are embedded with the saved source");
    expect(screen.queryByRole("button", { name: /Fetch the model/ }), "the server's vectors need no local model").toBeNull();

    await rerender({ sourceUnsaved: false });
    expect(embed.disabled).toBe(false);
    await fireEvent.click(embed);
    const done = await screen.findByRole("status");
    expect(done.textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Stopped: what was embedded stays cached. 40 embedded, 0 already cached, in 1 project (12 s).",
    );
    expect(shell.of("embed_all_memories")).toHaveLength(1);
  });
});
