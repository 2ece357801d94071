import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";

import type { LlmChoice, LlmSetup, LocalModelStatus, ModelFetchProgress } from "../../ipc";
import { channelOf, mockShell } from "../../testing/shell";
import { anthropicSetup, connectionCheck, keyStatus, llmSetup, openaiSetup } from "../../testing/llm";
import LlmSection from "./LlmSection.svelte";

// The section alone, given the settings as SettingsView read them; what goes through the page
// (reading config.toml, the in-force line, Ctrl+S) is in SettingsView.test.ts.
function renderSection(saved: LlmSetup) {
  return render(LlmSection, { props: { saved } });
}

function radio(name: RegExp): HTMLInputElement {
  return screen.getByRole("radio", { name }) as HTMLInputElement;
}

function field(name: string): HTMLInputElement {
  const input = document.querySelector(`input[name='${name}']`);
  if (!(input instanceof HTMLInputElement)) throw new Error(`no input ${name}`);
  return input;
}

function button(name: string | RegExp): HTMLButtonElement {
  return screen.getByRole("button", { name }) as HTMLButtonElement;
}

describe("Settings → Language model", () => {
  it("switches to an OpenAI-compatible server and saves it to config.toml, blanks meaning the defaults", async () => {
    const shell = mockShell({
      save_llm_setup: (args) => {
        const choice = args.choice as LlmChoice;
        const openai = choice.providers.find((p) => p.provider === "openai");
        return llmSetup({
          provider: choice.provider,
          providers: [anthropicSetup(), openaiSetup({ model: openai?.model ?? null, baseUrl: openai?.baseUrl ?? null })],
        });
      },
    });
    renderSection(llmSetup());

    await fireEvent.click(await screen.findByRole("radio", { name: /OpenAI-compatible/ }));
    expect(field("model").placeholder).toBe("gpt-4.1-mini");
    expect(screen.getByText("Unsaved changes")).toBeTruthy();
    await fireEvent.input(field("model"), { target: { value: " llama3.2 " } });
    await fireEvent.input(field("base-url"), { target: { value: "http://localhost:11434/v1" } });
    await fireEvent.click(button(/^Save/));

    expect(await screen.findByText("Saved to config.toml")).toBeTruthy();
    expect(shell.of("save_llm_setup")[0]?.args).toEqual({
      choice: {
        provider: "openai",
        providers: [
          { provider: "anthropic", model: null, baseUrl: null },
          { provider: "openai", model: "llama3.2", baseUrl: "http://localhost:11434/v1" },
        ],
        embeddings: "local",
      },
    });
    expect(button(/^Save/).disabled).toBe(true);
    expect(radio(/OpenAI-compatible/).closest("label")?.textContent).toContain("In use");
    expect(field("model").value).toBe("llama3.2");
  });

  it("shows a refused value in place and keeps the form as typed", async () => {
    mockShell({
      save_llm_setup: () => {
        throw { kind: "invalidInput", message: "base URL `localhost:11434` is not an http(s) address" };
      },
    });
    renderSection(llmSetup({ provider: "openai" }));

    await fireEvent.input(await screen.findByRole("textbox", { name: "Base URL" }), {
      target: { value: "localhost:11434" },
    });
    await fireEvent.click(button(/^Save/));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Nothing was saved");
    expect(alert.textContent).toContain("`localhost:11434` is not an http(s) address");
    expect(screen.getByText("Unsaved changes")).toBeTruthy();
    expect(field("base-url").value).toBe("localhost:11434");
  });

  it("stores a key in the keyring, says so, and removes it", async () => {
    let stored = false;
    const withKey = () =>
      llmSetup({
        provider: "anthropic",
        providers: [anthropicSetup({ key: keyStatus({ provider: "anthropic", source: stored ? "keyring" : "none" }) }), openaiSetup()],
      });
    const shell = mockShell({
      store_api_key: () => ((stored = true), withKey()),
      delete_api_key: () => ((stored = false), withKey()),
    });
    renderSection(withKey());

    expect((await screen.findByTestId("key-status")).textContent).toContain("No key");
    await fireEvent.input(field("api-key"), { target: { value: "sk-ant-123" } });
    await fireEvent.click(button(/Store in keyring/));

    await screen.findByText(/Stored in the keyring/);
    expect(shell.of("store_api_key")[0]?.args).toEqual({ provider: "anthropic", key: "sk-ant-123" });
    expect(field("api-key").value, "the key does not stay on screen").toBe("");
    expect(shell.of("save_llm_setup"), "a key is not a config.toml change").toHaveLength(0);

    await fireEvent.click(button("Remove"));
    await screen.findByText("No key");
    expect(shell.of("delete_api_key")[0]?.args).toEqual({ provider: "anthropic" });
  });

  it("says in place when the OS keyring can't be reached, and what to do instead", async () => {
    mockShell({});
    renderSection(
      llmSetup({
        provider: "openai",
        providers: [
          anthropicSetup(),
          openaiSetup({
            key: keyStatus({ keyringError: "OS keyring: The name org.freedesktop.secrets was not provided by any .service files" }),
          }),
        ],
      }),
    );

    const note = await screen.findByTestId("keyring-unavailable");
    expect(note.textContent).toContain("The OS keyring can't be reached");
    expect(note.textContent).toContain("OPENAI_API_KEY");
    expect(note.textContent).toContain("org.freedesktop.secrets");
    expect(screen.getByTestId("key-status").textContent).toContain("Keyring unavailable");
    await fireEvent.input(field("api-key"), { target: { value: "sk-typed" } });
    expect(button(/Store in keyring/).disabled).toBe(true);
  });

  it("names the environment variable a key comes from", async () => {
    mockShell({});
    renderSection(
      llmSetup({
        provider: "anthropic",
        providers: [anthropicSetup({ key: keyStatus({ provider: "anthropic", source: "env", envVar: "ANTHROPIC_API_KEY" }) }), openaiSetup()],
      }),
    );

    expect((await screen.findByTestId("key-status")).textContent).toContain("From ANTHROPIC_API_KEY");
    expect(screen.getByText(/wins over a key in the keyring/)).toBeTruthy();
  });

  it("tests the values on screen, unsaved, and shows model, latency and tokens", async () => {
    const shell = mockShell({ test_connection: () => connectionCheck() });
    renderSection(llmSetup());

    await fireEvent.click(await screen.findByRole("radio", { name: /OpenAI-compatible/ }));
    await fireEvent.input(field("model"), { target: { value: "llama3.2" } });
    await fireEvent.input(field("base-url"), { target: { value: "http://127.0.0.1:11434/v1" } });
    await fireEvent.click(button(/Test connection/));

    const result = await screen.findByTestId("connection-result");
    expect(result.getAttribute("data-ok")).toBe("true");
    expect(result.textContent).toContain("Connected to llama3.2:3b");
    expect(result.textContent).toContain("842 ms");
    expect(result.textContent).toContain("21 in · 1 out tokens");
    expect(shell.of("test_connection")[0]?.args).toEqual({
      test: { provider: "openai", model: "llama3.2", baseUrl: "http://127.0.0.1:11434/v1", apiKey: null },
    });
    expect(shell.of("save_llm_setup"), "testing saves nothing").toHaveLength(0);

    // The result belongs to the values it ran with.
    await fireEvent.input(field("model"), { target: { value: "llama3.1" } });
    expect(screen.queryByTestId("connection-result")).toBeNull();
  });

  it("shows a failed test with the error and what to do next, and sends a typed key", async () => {
    const shell = mockShell({
      test_connection: () =>
        connectionCheck({
          provider: "anthropic",
          ok: false,
          keySource: "typed",
          answeredModel: null,
          reply: null,
          latencyMs: 312,
          error: "anthropic (https://api.anthropic.com/v1/messages): HTTP 401: invalid x-api-key",
          hint: "The server refused the key (typed): check that it is current and belongs to this provider.",
        }),
    });
    renderSection(llmSetup({ provider: "anthropic" }));

    await fireEvent.input(await screen.findByRole("textbox", { name: "Model" }), { target: { value: "" } });
    await fireEvent.input(field("api-key"), { target: { value: "sk-ant-wrong" } });
    await fireEvent.click(button(/Test connection/));

    const result = await screen.findByTestId("connection-result");
    expect(result.getAttribute("data-ok")).toBe("false");
    expect(within(result).getByText(/HTTP 401: invalid x-api-key/)).toBeTruthy();
    expect(result.textContent).toContain("The server refused the key");
    expect(shell.of("test_connection")[0]?.args).toEqual({
      test: { provider: "anthropic", model: null, baseUrl: null, apiKey: "sk-ant-wrong" },
    });
  });

  it("keeps a model's fetch going while another provider is picked, and Local shows where it got to", async () => {
    const installed = (done: boolean): LocalModelStatus => ({ model: "all-MiniLM-L6-v2", dir: "/m", installed: done });
    let send: (progress: ModelFetchProgress) => void = () => {};
    let finish: (status: LocalModelStatus) => void = () => {};
    const shell = mockShell({
      local_model_status: () => installed(false),
      fetch_local_model: (args) => {
        send = channelOf<ModelFetchProgress>(args, "onProgress");
        return new Promise((resolve) => (finish = resolve));
      },
      llm_setup: () => llmSetup({ provider: "local" }),
      embed_all_memories: () => ({ source: "all-MiniLM-L6-v2", projects: 1, files: 2, embedded: 2, cached: 0, cancelled: false, elapsedMs: 40 }),
    });
    renderSection(llmSetup());

    await fireEvent.click(await screen.findByRole("radio", { name: /Local/ }));
    await fireEvent.click(await screen.findByRole("button", { name: /Fetch the model/ }));
    send({ downloaded: 3 * 1024 * 1024, total: 87 * 1024 * 1024 });
    await screen.findByText("3 of 87 MiB");

    await fireEvent.click(radio(/Anthropic/));
    expect(screen.queryByTestId("local-model")).toBeNull();
    await fireEvent.click(radio(/Local/));
    expect(screen.getByTestId("local-model").textContent, "the fetch is still running").toContain("3 of 87 MiB");

    await fireEvent.click(radio(/Anthropic/));
    finish(installed(true));
    await vi.waitFor(() => expect(shell.of("embed_all_memories"), "a fetch that ends unseen still embeds").toHaveLength(1));
    await fireEvent.click(radio(/Local/));
    expect(screen.getByTestId("local-model").textContent).toContain("is installed in");
    expect(screen.getByTestId("embed-all").textContent?.replace(/\s+/g, " ")).toContain("2 embedded, 0 already cached, in 1 project");
    expect(shell.of("local_model_status"), "the answer is kept, not asked again").toHaveLength(1);
    expect(radio(/Local/).closest("label")?.textContent, "the model fetched is in force").toContain("In use");
  });
});
