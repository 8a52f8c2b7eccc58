/**
 * `npm run bench`: runs every area's benchmark in turn. Each prints its figures as ratios against a
 * baseline measured in the same run (machines here are noisy and shared), so a figure means something
 * on any machine. BENCH_SCALE (default 1) shrinks or grows the data sets; BENCH_ONLY=text,vector runs a subset.
 * BENCH_JOBS=2 runs two benchmarks at a time, each in its own process, its output printed whole when it ends:
 * for CI's small-scale smoke run, whose time is mostly fixed costs (engine starts, server spawns, waits on child
 * processes); the figures of such a run are noisier, so figures worth quoting come from BENCH_JOBS=1 (the default).
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = (process.env.BENCH_ONLY ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const jobs = Math.max(1, Math.floor(Number(process.env.BENCH_JOBS ?? "1")) || 1);
/** The longest benchmarks at CI's scale (0.01), started first when several run at a time so none starts last. */
const LONGEST_FIRST = ["postgres", "grpc", "duckdb", "startup", "soak", "console", "cli"];

/** Benchmarks made of several files: `peers` runs every `bench/peers-<half>.ts` (issue 29: text, vector), each exporting `run()`. */
const GROUPS = ["peers"];
const groupFiles = (name: string) =>
  readdirSync(here).filter((f) => f.startsWith(`${name}-`) && f.endsWith(".ts") && !f.endsWith("-bench.ts"));
const names = readdirSync(here)
  .filter((f) => f.endsWith("-bench.ts"))
  .map((f) => f.replace(/-bench\.ts$/, ""))
  .concat(GROUPS.filter((g) => groupFiles(g).length > 0))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

const heading = (name: string) => `\n== ${name} (BENCH_SCALE=${process.env.BENCH_SCALE ?? "1"}) ==\n`;
const took = (name: string, started: number) => `(${name} took ${((performance.now() - started) / 1000).toFixed(1)} s)\n`;

/** One benchmark in this process; whether it failed. */
async function runHere(name: string): Promise<boolean> {
  process.stdout.write(heading(name));
  const started = performance.now();
  let ok = true;
  try {
    for (const file of GROUPS.includes(name) ? groupFiles(name).sort() : [`${name}-bench.ts`]) {
      const mod = (await import(join(here, file))) as { run: () => Promise<void> };
      await mod.run();
    }
  } catch (err) {
    ok = false;
    process.stdout.write(`${name}: failed: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.stdout.write(took(name, started));
  return ok;
}

/** One benchmark in a child process (this file with BENCH_ONLY=name), its output printed when it ends; whether it failed. */
function runInChild(name: string): Promise<boolean> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_ONLY: name, BENCH_JOBS: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  child.stdout.on("data", (d: Buffer) => out.push(d));
  child.stderr.on("data", (d: Buffer) => out.push(d));
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      process.stdout.write(Buffer.concat(out));
      // Exit status 1 is a failure the child reported itself (runHere); anything else it could not report.
      if (code !== 0 && code !== 1)
        process.stdout.write(`${name}: failed: its process exited with ${signal ?? code}\n${took(name, started)}`);
      resolve(code === 0);
    });
  });
}

let failed = 0;
if (jobs === 1) {
  for (const name of names) if (!(await runHere(name))) failed += 1;
} else {
  const rank = (name: string) => (LONGEST_FIRST.includes(name) ? LONGEST_FIRST.indexOf(name) : LONGEST_FIRST.length);
  const queue = [...names].sort((a, b) => rank(a) - rank(b));
  const lane = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) if (!(await runInChild(name))) failed += 1;
  };
  await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, lane));
}
if (names.length === 0) process.stdout.write("no benchmarks found\n");
process.exitCode = failed > 0 ? 1 : 0;
