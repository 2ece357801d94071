// Keeps ipc/ in step with the shell. The commands the shell registers (`generate_handler!` in
// src-tauri/src/lib.rs, each as `commands::<area>::<name>`) and the ones this folder calls must be
// the same set, and each must be called from the file named after its Rust module: `read_memory`,
// registered as `commands::memory::read_memory`, is called from ipc/memory.ts. A command renamed
// or moved on one side only would otherwise fail at run time, as an "unknown command" rejection.
//
// The Rust sources are read as text, not compiled: the patterns below are the ones lib.rs and
// commands/*.rs use, and the first test fails loudly if they stop matching anything.

import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { commands } from ".";
import { agentsCommands } from "./agents";
import { changesCommands } from "./changes";
import { dreamsCommands } from "./dreams";
import { editorCommands } from "./editor";
import { fixCommands } from "./fix";
import { historyCommands } from "./history";
import { homeCommands } from "./home";
import { memoryCommands } from "./memory";
import { onboardingCommands } from "./onboarding";
import { projectsCommands } from "./projects";
import { recallCommands } from "./recall";
import { sessionsCommands } from "./sessions";
import { settingsCommands } from "./settings";
import { syncCommands } from "./sync";
import { teamCommands } from "./team";
import { watchCommands } from "./watch";

// Paths, not `new URL(..., import.meta.url)`: Vite rewrites that pattern into an asset URL.
const IPC = dirname(fileURLToPath(import.meta.url));
const SHELL = join(IPC, "../../../src-tauri/src");

/** Rust modules under commands/ that hold no commands of the window. */
const NOT_AREAS = new Set(["mod", "test_shell"]);

function withoutLineComments(source: string): string {
  return source.replace(/\/\/[^\n]*/g, "");
}

/** `name -> area` for every command in lib.rs's `generate_handler![...]`. */
function registeredCommands(): Map<string, string> {
  const lib = withoutLineComments(readFileSync(join(SHELL, "lib.rs"), "utf8"));
  const list = lib.match(/generate_handler!\[([^\]]*)\]/);
  if (!list?.[1]) throw new Error("src-tauri/src/lib.rs: no generate_handler![...] list found");
  const registered = new Map<string, string>();
  for (const entry of list[1].split(",").map((e) => e.trim()).filter(Boolean)) {
    const path = entry.match(/^commands::(\w+)::(\w+)$/);
    if (!path?.[1] || !path[2]) {
      throw new Error(`src-tauri/src/lib.rs registers "${entry}", not as commands::<area>::<name>`);
    }
    registered.set(path[2], path[1]);
  }
  return registered;
}

/** `area -> names` of the `#[tauri::command]` functions of each src-tauri/src/commands/<area>.rs. */
function shellCommands(): Map<string, string[]> {
  const dir = join(SHELL, "commands");
  const areas = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".rs"))) {
    const area = basename(file, ".rs");
    if (NOT_AREAS.has(area)) continue;
    const source = withoutLineComments(readFileSync(join(dir, file), "utf8"));
    // The attribute, then any further attributes, then the function.
    const fns = source.matchAll(
      /#\[tauri::command[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*pub\s+(?:async\s+)?fn\s+(\w+)/g,
    );
    areas.set(area, [...fns].map((m) => m[1] ?? ""));
  }
  return areas;
}

/** `file -> names` of the commands each ipc/*.ts calls: `call<T>("name", ...)`. */
function calledCommands(): Map<string, string[]> {
  const called = new Map<string, string[]>();
  const files = readdirSync(IPC).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  for (const file of files) {
    const source = readFileSync(join(IPC, file), "utf8");
    const calls = source.matchAll(/\bcall\s*(?:<[^(]*>)?\(\s*["'`](\w+)["'`]/g);
    called.set(file, [...calls].map((m) => m[1] ?? ""));
  }
  return called;
}

describe("the ipc files and the shell's commands", () => {
  const registered = registeredCommands();
  const inShell = shellCommands();
  const called = calledCommands();

  it("are read from the sources (the patterns still match)", () => {
    expect(registered.size, "commands registered in lib.rs").toBeGreaterThan(0);
    expect([...inShell.values()].flat().length, "#[tauri::command]s in commands/*.rs").toBeGreaterThan(0);
    expect([...called.values()].flat().length, "call(\"...\")s in ipc/*.ts").toBeGreaterThan(0);
  });

  it("register every #[tauri::command] of commands/<area>.rs as commands::<area>::<name>", () => {
    const problems: string[] = [];
    for (const [area, names] of inShell) {
      for (const name of names) {
        const as = registered.get(name);
        if (as !== area) {
          problems.push(
            `src-tauri/src/commands/${area}.rs: ${name} is ${as ? `registered as commands::${as}::${name}` : "not registered in lib.rs"}`,
          );
        }
      }
    }
    for (const [name, area] of registered) {
      if (!inShell.get(area)?.includes(name)) {
        problems.push(
          `src-tauri/src/lib.rs registers commands::${area}::${name}, but src-tauri/src/commands/${area}.rs has no #[tauri::command] ${name}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it("call every registered command from ipc/<area>.ts", () => {
    const missing: string[] = [];
    for (const [name, area] of registered) {
      const file = `${area}.ts`;
      if (!called.has(file)) {
        missing.push(`commands::${area}::${name}: ui/src/ipc/${file} does not exist`);
      } else if (!called.get(file)?.includes(name)) {
        missing.push(`commands::${area}::${name}: ui/src/ipc/${file} never calls "${name}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("call only registered commands, each from the file of its area", () => {
    const wrong: string[] = [];
    for (const [file, names] of called) {
      for (const name of names) {
        const area = registered.get(name);
        if (area === undefined) {
          wrong.push(`ui/src/ipc/${file} calls "${name}", which src-tauri/src/lib.rs does not register`);
        } else if (file !== `${area}.ts`) {
          wrong.push(
            `ui/src/ipc/${file} calls "${name}", registered as commands::${area}::${name}: it belongs in ui/src/ipc/${area}.ts`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("build `commands` without one area's method hiding another's", () => {
    const areas = [
      homeCommands,
      onboardingCommands,
      projectsCommands,
      memoryCommands,
      editorCommands,
      fixCommands,
      historyCommands,
      watchCommands,
      settingsCommands,
      recallCommands,
      dreamsCommands,
      changesCommands,
      sessionsCommands,
      agentsCommands,
      teamCommands,
      syncCommands,
    ];
    const names = areas.flatMap((area) => Object.keys(area));
    const repeated = names.filter((name, i) => names.indexOf(name) !== i);
    expect(repeated, "method names defined by two areas").toEqual([]);
    expect(Object.keys(commands).sort()).toEqual(names.sort());
  });
});
