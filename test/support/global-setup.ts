import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Jest global setup:
 * - dist/ (and the console) rebuilt when a source changed (`node scripts/build.mjs` builds only what is
 *   stale), since tests that run `bin/acms.js` as a child process run the compiled CLI: a fresh clone's
 *   `npm test` needs no manual build, and a child process never runs code older than the sources under test;
 * - a run directory shared by every worker (ACMS_TEST_RUN_DIR), where engines that tests start lazily
 *   (PostgreSQL, see engines/postgres.ts) record themselves so the teardown stops them.
 */
export default async function globalSetup(): Promise<void> {
  execFileSync(process.execPath, [join(__dirname, "..", "..", "scripts", "build.mjs")], { stdio: "inherit" });
  process.env.ACMS_TEST_RUN_DIR = mkdtempSync(join(tmpdir(), "acms-jest-run-"));
}
