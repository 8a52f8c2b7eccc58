import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshPostgresDatabase } from "./engines/postgres.js";
import { runVirtuosoEnv } from "./engines/run-virtuoso.js";

/**
 * The engines a test server can run on: the embedded default, PostgreSQL (ACMS_POSTGRES_URL), two
 * replicas on one PostgreSQL database and one Virtuoso graph behind one address, or DuckDB (ACMS_DUCKDB_PATH).
 */
export type TestEngine = "embedded" | "postgres" | "postgres-replicas" | "duckdb";

const ENGINES: readonly TestEngine[] = ["postgres", "postgres-replicas", "duckdb"];

/** The engine of this test run: ACMS_TEST_ENGINE (the jest projects "postgres", "postgres-replicas" and "duckdb" set it), embedded by default. */
export function testEngine(): TestEngine {
  const engine = process.env.ACMS_TEST_ENGINE as TestEngine | undefined;
  return engine !== undefined && ENGINES.includes(engine) ? engine : "embedded";
}

/** How many server processes' worth of backends one test server is on this run's engine: 2 for "postgres-replicas", else 1. */
export function testReplicas(): number {
  return testEngine() === "postgres-replicas" ? 2 : 1;
}

const URL_FILE = ".postgres-url";

/**
 * The environment that puts a test server with data directory `dataDir` on the run's engine. On
 * PostgreSQL the directory's database is created on first use and its URL kept in the directory, so a
 * server restarted over the same directory finds the same data, as it would on the embedded engine. For
 * replicas, every replica of one test server gets the same environment (one database, the run's Virtuoso
 * for the graph, which is never on PostgreSQL); each has its own data directory.
 */
export async function engineEnv(dataDir: string): Promise<Record<string, string>> {
  if (testEngine() === "embedded") return {};
  // The DuckDB file lives in the data directory, so a server restarted over it finds the same data.
  if (testEngine() === "duckdb") return { ACMS_DUCKDB_PATH: join(dataDir, "acms.duckdb") };
  const graph = testEngine() === "postgres-replicas" ? await runVirtuosoEnv() : {};
  const file = join(dataDir, URL_FILE);
  if (existsSync(file)) return { ACMS_POSTGRES_URL: readFileSync(file, "utf8").trim(), ...graph };
  const url = await freshPostgresDatabase();
  writeFileSync(file, url);
  return { ACMS_POSTGRES_URL: url, ...graph };
}
