import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";

import App from "../../App.svelte";
import type { LlmChoice, LlmSetup } from "../../ipc";
import { appInfo, mockShell, projectSummary } from "../../testing/shell";
import { CONFIG_PATH, anthropicSetup, connectionCheck, keyStatus, llmSetup, openaiSetup } from "../../testing/llm";
import SettingsView from "./SettingsView.svelte";

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

describe("the Settings view", () => {
  it("shows a fresh install as offline, with nothing to fill in and nothing to save", async () => {
    mockShell({ llm_setup: () => llmSetup() });
    render(SettingsView);

    const offline = await screen.findByRole("radio", { name: /Offline/ });
    expect((offline as HTMLInputElement).checked).toBe(true);
    const card = offline.closest("label") as HTMLElement;
    expect(card.textContent).toContain("In use");
    expect(screen.getByTestId("config-path").textContent).toBe(CONFIG_PATH);
    expect(screen.getByTestId("provider-in-force").textContent).toContain(
      "In force: Offline, because no provider is configured and the local model is not installed",
    );
    expect(screen.getByText(/No key, no network, no cost/)).toBeTruthy();
    expect(document.querySelector("input[name='model']")).toBeNull();
    expect(button(/^Save/).disabled).toBe(true);
  });

  it("says the installed local model is in force when no provider is saved", async () => {
    mockShell({
      llm_setup: () =>
        llmSetup({
          provider: "local",
          providerReason: "the local model is installed and no provider is configured",
        }),
      local_model_status: () => ({ model: "all-MiniLM-L6-v2", dir: "/home/ada/.local/share/engram/models", installed: true }),
    });
    render(SettingsView);

    const local = await screen.findByRole("radio", { name: /Local/ });
    expect((local as HTMLInputElement).checked).toBe(true);
    expect((local.closest("label") as HTMLElement).textContent).toContain("In use");
    expect(screen.getByTestId("provider-in-force").textContent).toContain(
      "In force: Local model, because the local model is installed and no provider is configured",
    );
    expect(button(/^Save/).disabled).toBe(true);
  });

  it("puts the local model in force as soon as it is fetched, when no provider is saved", async () => {
    let installed = false;
    const notInstalled = "no provider is configured and the local model is not installed (engram models fetch)";
    const status = () => ({ model: "all-MiniLM-L6-v2", dir: "/home/ada/.local/share/engram/models", installed });
    mockShell({
      llm_setup: () =>
        installed
          ? llmSetup({ provider: "local", providerReason: "the local model is installed and no provider is configured" })
          : llmSetup({ providerReason: notInstalled }),
      local_model_status: status,
      fetch_local_model: () => {
        installed = true;
        return status();
      },
      embed_all_memories: () => ({
        source: "all-MiniLM-L6-v2",
        projects: 1,
        files: 7,
        embedded: 7,
        cached: 0,
        cancelled: false,
        elapsedMs: 900,
      }),
    });
    render(SettingsView);

    await fireEvent.click(await screen.findByRole("radio", { name: /Local/ }));
    await fireEvent.click(await screen.findByRole("button", { name: /Fetch the model/ }));

    await vi.waitFor(() =>
      expect(screen.getByTestId("provider-in-force").textContent).toContain(
        "In force: Local model, because the local model is installed and no provider is configured",
      ),
    );
    expect((screen.getByRole("radio", { name: /Local/ }).closest("label") as HTMLElement).textContent).toContain("In use");
    expect(button(/^Save/).disabled).toBe(true);
  });

  it("turns start at login on through the shell and shows what the OS now says", async () => {
    let on = false;
    const shell = mockShell({
      llm_setup: () => llmSetup(),
      start_at_login: () => on,
      set_start_at_login: (args) => (on = args.on as boolean),
    });
    render(SettingsView);
    const toggle = (await screen.findByTestId("start-at-login")) as HTMLInputElement;
    await screen.findByRole("heading", { name: "In the background" });
    expect(toggle.checked).toBe(false);
    await fireEvent.click(toggle);
    await screen.findByTestId("start-at-login");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(shell.of("set_start_at_login")[0]?.args).toEqual({ on: true });
    expect((screen.getByTestId("start-at-login") as HTMLInputElement).checked).toBe(true);
  });

  it("switches to an OpenAI-compatible server and saves it to config.toml, blanks meaning the defaults", async () => {
    let saved: LlmSetup = llmSetup();
    const shell = mockShell({
      llm_setup: () => saved,
      save_llm_setup: (args) => {
        const choice = args.choice as LlmChoice;
        const openai = choice.providers.find((p) => p.provider === "openai");
        saved = llmSetup({
          provider: choice.provider,
          providers: [anthropicSetup(), openaiSetup({ model: openai?.model ?? null, baseUrl: openai?.baseUrl ?? null })],
        });
        return saved;
      },
    });
    render(SettingsView);

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
      llm_setup: () => llmSetup({ provider: "openai" }),
      save_llm_setup: () => {
        throw { kind: "invalidInput", message: "base URL `localhost:11434` is not an http(s) address" };
      },
    });
    render(SettingsView);

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
      llm_setup: withKey,
      store_api_key: () => ((stored = true), withKey()),
      delete_api_key: () => ((stored = false), withKey()),
    });
    render(SettingsView);

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
    mockShell({
      llm_setup: () =>
        llmSetup({
          provider: "openai",
          providers: [
            anthropicSetup(),
            openaiSetup({
              key: keyStatus({ keyringError: "OS keyring: The name org.freedesktop.secrets was not provided by any .service files" }),
            }),
          ],
        }),
    });
    render(SettingsView);

    const note = await screen.findByTestId("keyring-unavailable");
    expect(note.textContent).toContain("The OS keyring can't be reached");
    expect(note.textContent).toContain("OPENAI_API_KEY");
    expect(note.textContent).toContain("org.freedesktop.secrets");
    expect(screen.getByTestId("key-status").textContent).toContain("Keyring unavailable");
    await fireEvent.input(field("api-key"), { target: { value: "sk-typed" } });
    expect(button(/Store in keyring/).disabled).toBe(true);
  });

  it("names the environment variable a key comes from", async () => {
    mockShell({
      llm_setup: () =>
        llmSetup({
          provider: "anthropic",
          providers: [anthropicSetup({ key: keyStatus({ provider: "anthropic", source: "env", envVar: "ANTHROPIC_API_KEY" }) }), openaiSetup()],
        }),
    });
    render(SettingsView);

    expect((await screen.findByTestId("key-status")).textContent).toContain("From ANTHROPIC_API_KEY");
    expect(screen.getByText(/wins over a key in the keyring/)).toBeTruthy();
  });

  it("tests the values on screen, unsaved, and shows model, latency and tokens", async () => {
    const shell = mockShell({
      llm_setup: () => llmSetup(),
      test_connection: () => connectionCheck(),
    });
    render(SettingsView);

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
      llm_setup: () => llmSetup({ provider: "anthropic" }),
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
    render(SettingsView);

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

  it("explains a config.toml it cannot read, and retries", async () => {
    let broken = true;
    mockShell({
      llm_setup: () => {
        if (broken) throw { kind: "parse", message: `${CONFIG_PATH}:2: unknown variant \`gpt\`` };
        return llmSetup();
      },
    });
    render(SettingsView);

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("config.toml:2");
    expect(alert.textContent).toContain("does not overwrite a file it cannot read");
    broken = false;
    await fireEvent.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("radio", { name: /Offline/ })).toBeTruthy();
  });

  it("is a section of the sidebar", async () => {
    mockShell({
      app_info: () => appInfo(),
      list_projects: () => [projectSummary()],
      llm_setup: () => llmSetup(),
    });
    render(App);
    await screen.findByText("/path/to/Demo");

    await fireEvent.click(screen.getByTestId("nav-settings"));
    expect(await screen.findByRole("heading", { name: "Settings" })).toBeTruthy();
    expect(screen.getByTestId("nav-settings").getAttribute("aria-current")).toBe("page");
    const projects = screen.getByRole("button", { name: /Projects/ });
    expect(projects.getAttribute("aria-current")).toBeNull();
  });
});
