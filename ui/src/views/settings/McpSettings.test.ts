import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";

import type { McpChange, McpStatus } from "../../ipc";
import { mcpStatus, mockShell } from "../../testing/shell";
import McpSettings from "./McpSettings.svelte";

const DIFF = `--- /home/ada/.claude.json
+++ /home/ada/.claude.json
@@ -1,3 +1,12 @@
 {
-  "numStartups": 4
+  "numStartups": 4,
+  "mcpServers": {
+    "engram": {
+      "type": "stdio",
+      "command": "/usr/bin/engram",
+      "args": ["mcp"],
+      "env": {}
+    }
+  }
 }
`;

/** A button of the row once it can be pressed (it is disabled while a command runs). */
async function enabled(testId: string): Promise<HTMLButtonElement> {
  const button = (await screen.findByTestId(testId)) as HTMLButtonElement;
  await waitFor(() => expect(button.disabled).toBe(false));
  return button;
}

function change(overrides: Partial<McpChange> = {}): McpChange {
  return {
    action: "installed",
    scope: "user",
    file: "/home/ada/.claude.json",
    command: "/usr/bin/engram mcp",
    diff: DIFF,
    backup: null,
    ...overrides,
  };
}

describe("the MCP server row in Settings", () => {
  it("shows the .claude.json diff before writing, writes only on confirm, then says it is installed", async () => {
    let status: McpStatus = mcpStatus();
    const shell = mockShell({
      mcp_server_status: () => status,
      preview_mcp_server: () => change(),
      install_mcp_server: () => {
        status = mcpStatus({ installed: true, upToDate: true, command: "/usr/bin/engram mcp" });
        return change({ backup: "/home/ada/.local/share/engram/backups/claude-json/.claude.json.x" });
      },
    });
    render(McpSettings);
    expect((await screen.findByTestId("mcp-status")).textContent).toContain("Not installed");

    await fireEvent.click(screen.getByTestId("mcp-install"));
    const diff = await screen.findByRole("table", { name: ".claude.json change" });
    expect(diff.textContent).toContain('"mcpServers": {');
    expect(shell.of("install_mcp_server")).toHaveLength(0);

    await fireEvent.click(await enabled("mcp-confirm"));
    await screen.findByText(/the previous file is kept at/);
    expect(shell.of("install_mcp_server")).toHaveLength(1);
    expect(screen.getByTestId("mcp-status").textContent).toContain("Installed for your user in");
    await waitFor(() => expect(screen.queryByRole("table", { name: ".claude.json change" })).toBeNull());
  });

  it("cancelling the preview writes nothing", async () => {
    const shell = mockShell({ preview_mcp_server: () => change() });
    render(McpSettings);
    await fireEvent.click(await screen.findByTestId("mcp-install"));
    await screen.findByRole("table", { name: ".claude.json change" });
    await enabled("mcp-confirm");
    await fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("table", { name: ".claude.json change" })).toBeNull());
    expect(shell.of("install_mcp_server")).toHaveLength(0);
  });

  it("removes an installed server", async () => {
    let status: McpStatus = mcpStatus({ installed: true, upToDate: true, command: "/usr/bin/engram mcp" });
    const shell = mockShell({
      mcp_server_status: () => status,
      uninstall_mcp_server: () => {
        status = mcpStatus();
        return change({ action: "removed" });
      },
    });
    render(McpSettings);
    expect(screen.queryByTestId("mcp-install")).toBeNull();
    await fireEvent.click(await screen.findByTestId("mcp-remove"));
    await screen.findByText(/Removed Engram's entry/);
    expect(shell.of("uninstall_mcp_server")).toHaveLength(1);
    expect(screen.getByTestId("mcp-status").textContent).toContain("Not installed");
  });

  it("leaves another program's engram entry alone and says why the command is missing", async () => {
    mockShell({
      mcp_server_status: () => mcpStatus({ installed: true, foreign: true, command: "/opt/go-engram serve" }),
    });
    const { unmount } = render(McpSettings);
    const status = await screen.findByTestId("mcp-status");
    expect(status.textContent).toContain("another program");
    expect(screen.queryByTestId("mcp-install")).toBeNull();
    expect(screen.queryByTestId("mcp-remove")).toBeNull();
    unmount();

    mockShell({
      mcp_server_status: () => {
        throw { kind: "notFound", message: "engram (the command installed with Engram: not beside the app, nor on PATH): not found" };
      },
    });
    render(McpSettings);
    expect(await screen.findByText(/Install the engram command/)).toBeTruthy();
  });
});
