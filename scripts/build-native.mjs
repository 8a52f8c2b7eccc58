/**
 * Builds the embedded keyword search's SQLite extension (native/acms-fts5/acms_fts5.c: BM25 from a scope's
 * own statistics, see src/adapters/sqlite/acms-fts5-extension.ts) into native/build/ with the system C
 * compiler, against the SQLite headers better-sqlite3 bundles (the SQLite the extension is loaded into).
 *
 *   node scripts/build-native.mjs    build when missing or older than its source (the root package's
 *                                    postinstall runs it, so `npm install` / `npm ci` build it)
 *
 * scripts/build.mjs calls `buildNativeIfStale()` too (`npm start`, `npm test`, `npm run build`). Without a
 * compiler it prints one line and exits 0: the server then keeps keyword search on the in-memory BM25 index
 * (per-scope statistics too) and says so at start.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = join(ROOT, "native", "acms-fts5", "acms_fts5.c");
/** What SQLite's load_extension appends to a path without a suffix, per platform. */
const SUFFIX = process.platform === "darwin" ? ".dylib" : process.platform === "win32" ? ".dll" : ".so";
export const NATIVE_OUT = join(ROOT, "native", "build", `acms_fts5${SUFFIX}`);

/** better-sqlite3's bundled sqlite3.h and sqlite3ext.h (undefined when it is not installed). */
function sqliteHeaders() {
  try {
    const main = createRequire(join(ROOT, "package.json")).resolve("better-sqlite3");
    const dir = join(dirname(main), "..", "deps", "sqlite3");
    return existsSync(join(dir, "sqlite3ext.h")) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the extension is missing or older than its source or this script. */
export function nativeIsStale() {
  if (!existsSync(SOURCE)) return false;
  if (!existsSync(NATIVE_OUT)) return true;
  const out = statSync(NATIVE_OUT).mtimeMs;
  return out < statSync(SOURCE).mtimeMs || out < statSync(fileURLToPath(import.meta.url)).mtimeMs;
}

/**
 * Compiles the extension when stale; returns whether it is there afterwards. Never throws for a missing
 * compiler or headers (one line on stderr instead); a compile error of the source itself is printed too.
 */
export function buildNativeIfStale() {
  if (!nativeIsStale()) return existsSync(NATIVE_OUT);
  const headers = sqliteHeaders();
  if (!headers) {
    process.stderr.write("acms: the FTS5 extension was not built (better-sqlite3's SQLite headers were not found)\n");
    return false;
  }
  if (process.platform === "win32") {
    process.stderr.write("acms: the FTS5 extension is not built on Windows; keyword search uses the in-memory index\n");
    return false;
  }
  const cc = process.env.CC || "cc";
  const shared = process.platform === "darwin" ? ["-dynamiclib", "-undefined", "dynamic_lookup"] : ["-shared"];
  mkdirSync(dirname(NATIVE_OUT), { recursive: true });
  // Written beside and renamed: a server loading the extension never meets a half-written file.
  const tmp = `${NATIVE_OUT}.${process.pid}.tmp`;
  const { spawnSync } = createRequire(import.meta.url)("node:child_process");
  const run = spawnSync(cc, ["-O2", "-fPIC", ...shared, "-I", headers, "-o", tmp, SOURCE, "-lm"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (run.error || run.status !== 0) {
    rmSync(tmp, { force: true });
    const why = run.error ? `${cc}: ${run.error.message}` : `${cc} exited with ${run.status ?? run.signal}`;
    process.stderr.write(`acms: the FTS5 extension was not built (${why}); keyword search will use the in-memory index\n`);
    return false;
  }
  renameSync(tmp, NATIVE_OUT);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) buildNativeIfStale();
