/**
 * The build: bundles the `acms` program (src/cli/main.ts, with the server, gen/ and the Connect and protobuf
 * runtimes) into dist/ with esbuild, split at every dynamic import so each subcommand loads only its own
 * chunks (`acms --help` loads the definitions alone, `acms search` the client, only `acms serve` the server).
 * Connect and protobuf are inlined because they are hundreds of tiny ES modules (resolving them was most of
 * a CLI call); every other package, the native ones included, stays an ordinary import from node_modules.
 * Type checking is `npm run typecheck`, not this.
 *
 *   node scripts/build.mjs           build when a source changed since the last build (a stat walk when not)
 *   node scripts/build.mjs --force   wipe dist/ and build
 *
 * `bin/acms.js` (so `npm start` and `npx acms`) and the tests' global set-up call `buildIfStale()`, so a
 * fresh clone runs compiled code without a manual build and a checkout never runs a stale one.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildNativeIfStale, nativeIsStale } from "./build-native.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "dist");
const STAMP = join(OUT, ".build-stamp");
const SOURCES = ["src", "gen", "clients/typescript/src"];
/** What the console (console/, built by Vite into dist/console) is made of. */
const CONSOLE_SOURCES = ["console", "clients/typescript/src", "gen"];
const CONSOLE_INDEX = join(OUT, "console", "index.html");
/** Packages bundled into dist/ (many small ES modules, pure JavaScript); the rest are imported at run time. */
const INLINED = new Set(["@connectrpc/connect", "@connectrpc/connect-node", "@bufbuild/protobuf", "commander"]);

/**
 * The newest modification time under the sources (directories too, so a deleted file counts), the package
 * files (an upgraded inlined package changes the lockfile) and this script.
 */
function newestSourceMtime() {
  const files = [join(ROOT, "package.json"), join(ROOT, "package-lock.json"), fileURLToPath(import.meta.url)];
  let newest = Math.max(...files.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
  const walk = (dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of SOURCES) walk(join(ROOT, dir));
  return newest;
}

/** Whether dist/ is older than some source (or missing). */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  return statSync(STAMP).mtimeMs < newestSourceMtime();
}

/**
 * The esbuild options every compile of the server shares (`build`, and `compilePrograms` for the benches'
 * child processes), so a bench measures the server exactly as `npm run build` compiles it: one ES module
 * bundle for Node 20 with the INLINED packages in it and every other package (the native ones included) an
 * ordinary import from node_modules.
 */
function bundleOptions() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const packages = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})];
  return {
    absWorkingDir: ROOT,
    bundle: true,
    external: packages.filter((name) => !INLINED.has(name)),
    format: "esm",
    platform: "node",
    target: "node20",
    // Inlined CommonJS (commander) calls require(): give every output file one.
    banner: { js: 'import { createRequire as acmsCreateRequire } from "node:module"; const require = acmsCreateRequire(import.meta.url);' },
    logLevel: "warning",
  };
}

/**
 * Compiles stand-alone programs (`{ name: "path/to/entry.ts" }`, relative to the repository) into
 * `outDir/name.mjs` with the build's options: benches fork these, so they time the compiled server, as
 * deployed, not tsx. `outDir` must be under the repository, so the packages left as imports resolve from
 * its node_modules.
 * @example await compilePrograms({ "grpc-bench-server": "bench/grpc-bench-server.ts" }, outDir);
 */
export async function compilePrograms(entryPoints, outDir) {
  const esbuild = await import("esbuild");
  await esbuild.build({ ...bundleOptions(), entryPoints, outdir: outDir, outExtension: { ".js": ".mjs" } });
  await esbuild.stop();
}

/**
 * Bundles the program into dist/. Chunk names carry a content hash, so a build next to a running `acms`
 * never rewrites a chunk it may still import; `clean` (npm run build) first drops the chunks of older builds.
 */
export async function build({ clean = false } = {}) {
  const esbuild = await import("esbuild");
  const startedAt = new Date();
  if (clean) rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  await esbuild.build({
    ...bundleOptions(),
    entryPoints: { main: "src/cli/main.ts" },
    outdir: OUT,
    chunkNames: "chunks/[name]-[hash]",
    splitting: true,
  });
  // esbuild serves builds from a child process that outlives the build; a process that goes on to serve
  // (bin/acms.js) must not keep it, or signals aimed at the leaf process of `npm start` land there.
  await esbuild.stop();
  // Dated when the build started, so a source saved during the build makes the next run build again.
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt);
}

/** The newest modification time of any file under `dirs` (the console is HTML and CSS too, not only .ts). */
function newestFileMtime(dirs) {
  let newest = 0;
  const walk = (dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of dirs) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return newest;
}

/** Whether dist/console is missing or older than a console source (false where there is no console/). */
export function consoleIsStale() {
  if (!existsSync(join(ROOT, "console"))) return false;
  if (!existsSync(CONSOLE_INDEX)) return true;
  return statSync(CONSOLE_INDEX).mtimeMs < newestFileMtime(CONSOLE_SOURCES);
}

/**
 * Builds the console with Vite in a child process (so nothing of Vite stays in a process that goes on to
 * serve). Returns false where Vite is not installed (a production install: /console then says how to build).
 */
export function buildConsole() {
  const vite = join(ROOT, "node_modules", "vite", "bin", "vite.js");
  if (!existsSync(vite)) return false;
  // Required here, not imported at the top: every `acms` call in a source checkout loads this file to check
  // staleness, and node:child_process is a tenth of `acms search text`'s time after Node's start.
  const { spawnSync } = createRequire(import.meta.url)("node:child_process");
  const run = spawnSync(process.execPath, [vite, "build", "--config", "console/vite.config.ts", "--logLevel", "warn"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (run.status !== 0) throw new Error(`the console build failed (vite exited with ${run.status ?? run.signal})`);
  return true;
}

/** Builds what is missing or older than its sources (the program, then the console); returns whether it built. */
export async function buildIfStale() {
  let built = false;
  if (isStale()) {
    await build();
    built = true;
  }
  if (consoleIsStale() && buildConsole()) built = true;
  // The embedded keyword search's SQLite extension (scripts/build-native.mjs; postinstall builds it too).
  if (nativeIsStale() && buildNativeIfStale()) built = true;
  return built;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const force = process.argv.includes("--force");
  if (force) {
    await build({ clean: true });
    buildConsole();
    buildNativeIfStale();
  } else if (!(await buildIfStale())) process.stdout.write("dist/ is up to date\n");
}
