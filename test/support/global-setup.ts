import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Jest global setup: a run directory shared by every worker (ACMS_TEST_RUN_DIR), where engines that
 * tests start lazily (PostgreSQL, see engines/postgres.ts) record themselves so the teardown stops them.
 */
export default async function globalSetup(): Promise<void> {
  process.env.ACMS_TEST_RUN_DIR = mkdtempSync(join(tmpdir(), "acms-jest-run-"));
}
