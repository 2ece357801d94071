// src-tauri/src/commands/home.rs: where Engram is looking (the Claude home in use, or the demo
// home) and what the window remembers.

import type { AppInfo } from "./bindings/AppInfo";
import { call } from "./call";

export const homeCommands = {
  /** The homes in use, the demo notice, the project last open. */
  appInfo: () => call<AppInfo>("app_info"),
  /** The first frame is painted (`make bench` times the cold start to it). */
  uiReady: () => call<void>("ui_ready"),
};
