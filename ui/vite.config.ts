import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";

export default defineConfig({
  base: "./",
  plugins: [svelte(), svelteTesting()],
  // Tauri serves ui/dist from the app; the dev server is only for hot reload.
  // The contract test reads docs/ipc.md from outside ui/.
  server: { port: 1420, strictPort: true, fs: { allow: [".", "../docs"] } },
  // The chunks loaded later (highlight.js, the file viewer, the palette) come
  // from the app's own origin, which `script-src 'self'` allows. No
  // modulepreload polyfill: it would fetch() them, and the CSP's connect-src
  // allows only IPC (WebKitGTK has modulepreload anyway).
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: false, modulePreload: { polyfill: false } },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test/setup.ts"],
  },
});
