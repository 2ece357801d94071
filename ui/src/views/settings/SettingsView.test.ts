import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";

import App from "../../App.svelte";
import type { LlmChoice } from "../../ipc";
import { appInfo, mockShell, projectSummary } from "../../testing/shell";
import { CONFIG_PATH, llmSetup } from "../../testing/llm";
import SettingsView from "./SettingsView.svelte";

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

  it("saves with Ctrl+S from anywhere in the view, and its in-force line follows what was saved", async () => {
    const shell = mockShell({
      llm_setup: () => llmSetup(),
      save_llm_setup: (args) =>
        llmSetup({
          provider: (args.choice as LlmChoice).provider,
          providerReason: "it is the provider saved in config.toml",
          providerConfigured: true,
        }),
    });
    render(SettingsView);

    await fireEvent.click(await screen.findByRole("radio", { name: /OpenAI-compatible/ }));
    await fireEvent.keyDown(window, { key: "s", ctrlKey: true });

    expect(await screen.findByText("Saved to config.toml")).toBeTruthy();
    expect(shell.of("save_llm_setup"), "one save for one Ctrl+S").toHaveLength(1);
    expect(
      screen.getByTestId("provider-in-force").textContent,
      "the card head is the view's: it shows what the section saved",
    ).toContain("In force: OpenAI-compatible, because it is the provider saved in config.toml");
  });

  it("keeps Ctrl+S from the webview while the settings are still being read, and saves nothing", async () => {
    let answer: (setup: ReturnType<typeof llmSetup>) => void = () => {};
    const shell = mockShell({ llm_setup: () => new Promise((resolve) => (answer = resolve)) });
    render(SettingsView);
    expect(screen.getByText("Reading settings…")).toBeTruthy();

    const event = new KeyboardEvent("keydown", { key: "s", ctrlKey: true, cancelable: true });
    window.dispatchEvent(event);
    expect(event.defaultPrevented, "the webview never sees it (WebView2 would offer to save the page)").toBe(true);
    const typed = new KeyboardEvent("keydown", { key: "s", cancelable: true });
    window.dispatchEvent(typed);
    expect(typed.defaultPrevented, "a plain s is typing").toBe(false);

    answer(llmSetup());
    await screen.findByRole("radio", { name: /Offline/ });
    expect(shell.of("save_llm_setup")).toHaveLength(0);
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
