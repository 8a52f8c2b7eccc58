import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshPostgresDatabase } from "./engines/postgres.js";

/** The engines a test server can run on: the embedded default, or PostgreSQL (ACMS_POSTGRES_URL). */
export type TestEngine = "embedded" | "postgres";

/** The engine of this test run: ACMS_TEST_ENGINE (the jest project "postgres" sets it), embedded by default. */
export function testEngine(): TestEngine {
  return process.env.ACMS_TEST_ENGINE === "postgres" ? "postgres" : "embedded";
}

const URL_FILE = ".postgres-url";

/**
 * The environment that puts a test server with data directory `dataDir` on the run's engine. On
 * PostgreSQL the directory's database is created on first use and its URL kept in the directory, so a
 * server restarted over the same directory finds the same data, as it would on the embedded engine.
 */
export async function engineEnv(dataDir: string): Promise<Record<string, string>> {
  if (testEngine() === "embedded") return {};
  const file = join(dataDir, URL_FILE);
  if (existsSync(file)) return { ACMS_POSTGRES_URL: readFileSync(file, "utf8").trim() };
  const url = await freshPostgresDatabase();
  writeFileSync(file, url);
  return { ACMS_POSTGRES_URL: url };
}
