import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * The operator's console: plain TypeScript built into dist/console, served by the server at /console
 * (src/server/console-assets.ts). `@acms/client/web` is the browser client's source in this repository.
 */
export default defineConfig({
  root: here("."),
  base: "/console/",
  resolve: {
    alias: [
      { find: /^@acms\/client\/web$/, replacement: here("../clients/typescript/src/web.ts") },
      { find: /^@acms\/client\/gen\/(.*)$/, replacement: here("../gen/$1") },
    ],
  },
  build: {
    outDir: process.env.ACMS_CONSOLE_OUT_DIR ?? here("../dist/console"),
    emptyOutDir: true,
    // No inline scripts or styles: the server's Content-Security-Policy allows only files from its origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: "es2022",
  },
});
