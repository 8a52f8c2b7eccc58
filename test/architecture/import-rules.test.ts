/**
 * The import rules of src/ (.dependency-cruiser.cjs, explained in docs/architecture.md) hold, and every rule
 * can fail: the fixture tree beside this file breaks each of them once and must be refused by each.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** The violations dependency-cruiser finds under `cwd`/src with the project's rules. */
async function violations(cwd: string): Promise<Violation[]> {
  // Exit status 0 when clean, the number of errors otherwise: the JSON report says which either way.
  const run = exec(process.execPath, [DEPCRUISE, "src", "--config", CONFIG, "--output-type", "json"], { cwd, maxBuffer: 64 * 1024 * 1024 });
  let stdout: string;
  try {
    ({ stdout } = await run);
  } catch (err) {
    stdout = (err as { stdout?: string }).stdout ?? "";
    if (!stdout.startsWith("{")) throw err;
  }
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const ruleNames: string[] = (require(CONFIG) as { forbidden: Array<{ name: string }> }).forbidden.map((r) => r.name);

test("src/ keeps every import rule", async () => {
  const found = await violations(ROOT);
  expect(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
}, 120_000);

test("each rule refuses the import it forbids (the fixture breaks every rule once)", async () => {
  const found = await violations(join(__dirname, "fixture"));
  const byRule = new Map<string, string[]>();
  for (const v of found) byRule.set(v.rule.name, [...(byRule.get(v.rule.name) ?? []), `${v.from} -> ${v.to}`]);
  for (const name of ruleNames) expect([name, byRule.has(name)]).toEqual([name, true]);
  expect(byRule.get("adapter-no-other-adapter")).toEqual(["src/adapters/postgres/index.ts -> src/adapters/sqlite/sqlite-store.ts"]);
  expect(byRule.get("composition-opens-engines-by-index")).toEqual([
    "src/server/composition/backends.ts -> src/adapters/sqlite/sqlite-store.ts",
  ]);
  expect(byRule.get("kit-no-engine")).toEqual(["src/adapters/kit/kit.ts -> src/adapters/duckdb/index.ts"]);
  // What the rules allow stays allowed: an engine's own files and the kit, the composition root through an index.
  expect(found.filter((v) => v.from === "src/adapters/sqlite/index.ts")).toEqual([]);
}, 120_000);
