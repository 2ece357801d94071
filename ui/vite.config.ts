import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vitest/config";

// Tauri serves `dist/` from its own protocol in builds and loads the dev server (`devUrl` in
// src-tauri/tauri.conf.json) otherwise, so the port is fixed and must stay in step with it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    // WebKitGTK 2.40+ (Debian 12), WebView2 and Safari 16 all run ES2022.
    target: "es2022",
    outDir: "dist",
    emptyOutDir: true,
  },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
  },
});
