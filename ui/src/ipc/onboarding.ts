// src-tauri/src/commands/onboarding.rs: the first run — what Engram found, Claude Code's hooks
// installed with the settings.json diff shown first, and the mark that the first run is over.

import type { FirstRun } from "./bindings/FirstRun";
import type { HookChange } from "./bindings/HookChange";
import type { HookPlan } from "./bindings/HookPlan";
import { call } from "./call";

export const onboardingCommands = {
  /** The Claude home, its projects and memories, the hooks, and whether to show the first run. */
  firstRun: () => call<FirstRun>("first_run"),
  /** The settings.json diff installing the hooks would make (nothing written). */
  planHooksInstall: () => call<HookPlan>("plan_hooks_install"),
  /** Installs the hooks as planned; rejects with kind `conflict` when the file changed since. */
  installPlannedHooks: (base: string | null) => call<HookChange>("install_planned_hooks", { base }),
  /** Removes Engram's hooks from settings.json (a backup first). */
  uninstallHooks: () => call<HookChange>("uninstall_hooks"),
  /** `true`: the first run is over (finished or skipped); `false`: show it again. */
  setOnboarded: (done: boolean) => call<void>("set_onboarded", { done }),
};
