// Every test starts from a clean DOM and an un-mocked IPC (see ipc tests for the order that
// Tauri's mocks need).
import { cleanup } from "@testing-library/svelte";
import { clearMocks } from "@tauri-apps/api/mocks";
import { afterEach } from "vitest";

afterEach(async () => {
  cleanup();
  // Let pending IPC promises settle before the mocks they call are removed.
  await new Promise((resolve) => setTimeout(resolve, 0));
  clearMocks();
});
