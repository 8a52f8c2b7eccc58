import { mkdirSync } from "node:fs";
import type { Config } from "./config.js";
import type { Backends } from "./backends.js";
import { openSqliteDatabase } from "../adapters/sqlite/sqlite-database.js";
import { SqliteRegistryStore } from "../adapters/sqlite/sqlite-registry-store.js";
import { SqliteScopeStore } from "../adapters/sqlite/sqlite-scope-store.js";

/**
 * The one place that picks adapters: the embedded default (SQLite under the data directory) for now.
 * External engines plug in here, chosen by config.
 */
export async function createBackends(config: Config): Promise<Backends> {
  mkdirSync(config.dataDir, { recursive: true });
  const db = openSqliteDatabase(`${config.dataDir}/acms.db`);
  const registry = new SqliteRegistryStore(db);
  const scopes = new SqliteScopeStore(db);
  return {
    registry,
    scopes,
    async close() {
      db.close();
    },
  };
}
