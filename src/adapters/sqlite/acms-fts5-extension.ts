import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SqliteDatabase } from "../kit/sqlite-database.js";

/** The file SQLite appends to a path without a suffix on this platform. */
const SUFFIX = process.platform === "darwin" ? ".dylib" : process.platform === "win32" ? ".dll" : ".so";

/** Where scripts/build-native.mjs puts the extension, under the acms package's root. */
const BUILT = join("native", "build", `acms_fts5${SUFFIX}`);

/** Connections the extension is loaded into (its functions are registered per connection). */
const loaded = new WeakSet<SqliteDatabase>();

/** The acms package root at or above `dir` (a package.json named "acms"), if any. */
function packageRootAbove(dir: string): string | undefined {
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string };
      if (pkg.name === "acms") return dir;
    } catch {
      // No package.json here (or unreadable): look one level up.
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * The built extension: under the acms package found from the working directory (a checkout, the image's
 * /app, a test run), else from the entry script (`npx acms` elsewhere). Undefined when it is not built.
 */
export function acmsFts5Path(): string | undefined {
  const starts = [process.cwd()];
  if (process.argv[1]) {
    try {
      starts.push(dirname(realpathSync(process.argv[1])));
    } catch {
      // A virtual entry script (node -e): the working directory alone.
    }
  }
  for (const start of starts) {
    const root = packageRootAbove(start);
    if (root && existsSync(join(root, BUILT))) return join(root, BUILT);
  }
  return undefined;
}

/**
 * Loads the acms_fts5 SQLite extension (native/acms-fts5/acms_fts5.c: `acms_bm25`, `acms_tf`, `acms_topk`) into
 * `db` once; returns undefined when it is loaded, else why it is not (not built: no C compiler at install,
 * or a load error), so the caller can choose the in-memory keyword index instead.
 */
export function loadAcmsFts5(db: SqliteDatabase, path = acmsFts5Path()): string | undefined {
  if (loaded.has(db)) return undefined;
  if (path === undefined)
    return `the FTS5 extension is not built (${BUILT}: run \`npm install\` or \`node scripts/build-native.mjs\` with a C compiler)`;
  try {
    // SQLite derives the entry point from the file name: acms_fts5 -> sqlite3_acmsfts_init.
    db.loadExtension(path);
  } catch (err) {
    return `the FTS5 extension ${path} could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
  }
  loaded.add(db);
  return undefined;
}

/** Loads the extension into `db`, or throws saying why it cannot. */
export function requireAcmsFts5(db: SqliteDatabase): void {
  const why = loadAcmsFts5(db);
  if (why !== undefined) throw new Error(why);
}
