import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshPostgresDatabase } from "./engines/postgres.js";

/** The engines a test server can run on: the embedded default, PostgreSQL (ACMS_POSTGRES_URL) or DuckDB (ACMS_DUCKDB_PATH). */
export type TestEngine = "embedded" | "postgres" | "duckdb";

/** The engine of this test run: ACMS_TEST_ENGINE (the jest projects "postgres" and "duckdb" set it), embedded by default. */
export function testEngine(): TestEngine {
  const engine = process.env.ACMS_TEST_ENGINE;
  return engine === "postgres" || engine === "duckdb" ? engine : "embedded";
}

const URL_FILE = ".postgres-url";

/**
 * The environment that puts a test server with data directory `dataDir` on the run's engine. On
 * PostgreSQL the directory's database is created on first use and its URL kept in the directory, so a
 * server restarted over the same directory finds the same data, as it would on the embedded engine.
 */
export async function engineEnv(dataDir: string): Promise<Record<string, string>> {
  if (testEngine() === "embedded") return {};
  // The DuckDB file lives in the data directory, so a server restarted over it finds the same data.
  if (testEngine() === "duckdb") return { ACMS_DUCKDB_PATH: join(dataDir, "acms.duckdb") };
  const file = join(dataDir, URL_FILE);
  if (existsSync(file)) return { ACMS_POSTGRES_URL: readFileSync(file, "utf8").trim() };
  const url = await freshPostgresDatabase();
  writeFileSync(file, url);
  return { ACMS_POSTGRES_URL: url };
}
