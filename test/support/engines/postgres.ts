import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { startPostgresCluster, stopCommand, stopPostgresCluster, type PostgresCluster } from "./postgres-cluster.js";

const STATE_FILE = "postgres.json";
const ERROR_FILE = "postgres.error";

let local: Promise<PostgresCluster> | undefined;

/**
 * The one PostgreSQL cluster of this jest run, started by the first test that needs it: workers agree
 * through the run directory the global setup made (an atomic mkdir elects the one that starts it, the
 * others wait for its state file), and the global teardown stops it. Outside jest (no run directory)
 * the process starts its own, stopped when it exits.
 */
async function sharedCluster(): Promise<PostgresCluster> {
  const runDir = process.env.ACMS_TEST_RUN_DIR;
  if (!runDir) {
    local ??= startPostgresCluster().then((c) => {
      process.once("exit", () => stopPostgresCluster(c));
      return c;
    });
    return local;
  }
  const state = join(runDir, STATE_FILE);
  let elected = false;
  try {
    mkdirSync(join(runDir, "postgres.lock"));
    elected = true;
  } catch {
    // another worker starts it
  }
  if (elected) {
    try {
      const c = await startPostgresCluster();
      writeFileSync(join(runDir, "postgres.stop.json"), JSON.stringify(stopCommand(c)));
      writeFileSync(`${state}.tmp`, JSON.stringify(c));
      renameSync(`${state}.tmp`, state);
    } catch (err) {
      writeFileSync(join(runDir, ERROR_FILE), String((err as Error).message));
      throw err;
    }
  }
  for (;;) {
    if (existsSync(state)) return JSON.parse(readFileSync(state, "utf8")) as PostgresCluster;
    if (existsSync(join(runDir, ERROR_FILE)))
      throw new Error(`PostgreSQL did not start: ${readFileSync(join(runDir, ERROR_FILE), "utf8")}`);
    await sleep(100);
  }
}

let counter = 0;

/**
 * A fresh, empty database on the run's PostgreSQL 15 cluster (installed with apt-get and started when
 * absent), for one suite or one test server: its connection URL.
 * @example const url = await freshPostgresDatabase(); const store = await openPostgres({ url, ... });
 */
export async function freshPostgresDatabase(): Promise<string> {
  const cluster = await sharedCluster();
  const name = `acms_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return cluster.url.replace(/\/postgres$/, `/${name}`);
}
