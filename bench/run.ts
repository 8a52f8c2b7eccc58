/**
 * `npm run bench`: runs every area's benchmark in turn. Each prints its figures as ratios against a
 * baseline measured in the same run (machines here are noisy and shared), so a figure means something
 * on any machine. BENCH_SCALE (default 1) shrinks or grows the data sets; BENCH_ONLY=text,vector runs a subset.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);

const files = readdirSync(here)
  .filter((f) => f.endsWith("-bench.ts"))
  .filter((f) => only.length === 0 || only.includes(f.replace(/-bench\.ts$/, "")))
  .sort();

let failed = 0;
for (const file of files) {
  const name = file.replace(/-bench\.ts$/, "");
  process.stdout.write(`\n== ${name} (BENCH_SCALE=${process.env.BENCH_SCALE ?? "1"}) ==\n`);
  const started = performance.now();
  try {
    const mod = (await import(join(here, file))) as { run: () => Promise<void> };
    await mod.run();
  } catch (err) {
    failed += 1;
    process.stdout.write(`${name}: failed: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.stdout.write(`(${name} took ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}
if (files.length === 0) process.stdout.write("no benchmarks found\n");
process.exitCode = failed > 0 ? 1 : 0;
