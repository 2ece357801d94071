import { mockIPC } from "@tauri-apps/api/mocks";
import { describe, expect, it } from "vitest";

import { CommandError, commands, toCommandError } from ".";

describe("commands", () => {
  it("call the shell's snake_case commands and return their values", async () => {
    const calls: string[] = [];
    mockIPC((cmd) => {
      calls.push(cmd);
      return cmd === "open_project" ? { project: "-p" } : [];
    });

    await expect(commands.listProjects()).resolves.toEqual([]);
    await expect(commands.openProject("-p")).resolves.toEqual({ project: "-p" });
    expect(calls).toEqual(["list_projects", "open_project"]);
  });

  it("send arguments with the camelCase names the shell's commands take", async () => {
    const seen: unknown[] = [];
    mockIPC((_cmd, args) => {
      seen.push(args);
      return null;
    });
    const form = { name: "N", description: "D", type: "user" as const, body: "B" };

    await commands.saveMemory("-p", "a.md", "opened", form);
    await commands.renameMemory("-p", "a.md", "b.md", null);
    await commands.resolveMemoryConflict("-p", "a.md", { keep: "mine", disk: "x", form });

    expect(seen[0]).toEqual({ project: "-p", file: "a.md", opened: "opened", form });
    expect(seen[1]).toEqual({ project: "-p", file: "a.md", newFile: "b.md", opened: null });
    expect(seen[2]).toEqual({
      project: "-p",
      file: "a.md",
      resolution: { keep: "mine", disk: "x", form },
    });
  });

  it("turn the shell's { kind, message } into a CommandError", async () => {
    mockIPC(() => {
      throw { kind: "notFound", message: "/h/projects: not found" };
    });

    const error = await commands.listProjects().catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(CommandError);
    expect(error).toMatchObject({ kind: "notFound", message: "/h/projects: not found" });
  });
});

describe("toCommandError", () => {
  it("classifies Tauri's own string rejections as internal", () => {
    const error = toCommandError("list_projects not allowed on window main");
    expect(error.kind).toBe("internal");
    expect(error.message).toBe("list_projects not allowed on window main");
  });

  it("keeps the message of a thrown Error", () => {
    expect(toCommandError(new TypeError("boom")).message).toBe("boom");
  });
});
