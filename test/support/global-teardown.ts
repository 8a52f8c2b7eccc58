import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Jest global teardown: stops every engine the run started (each left a `<engine>.stop.json` argv in the
 * run directory, see engines/postgres.ts) and removes the run directory. Self-contained on purpose: jest
 * loads this file without the module mapper the tests use.
 */
export default async function globalTeardown(): Promise<void> {
  const runDir = process.env.ACMS_TEST_RUN_DIR;
  if (!runDir) return;
  try {
    for (const name of readdirSync(runDir).filter((n) => n.endsWith(".stop.json"))) {
      const [cmd, ...args] = JSON.parse(readFileSync(join(runDir, name), "utf8")) as string[];
      spawnSync(cmd, args, { stdio: "ignore" });
    }
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}
