import { migrate } from "../../../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool, type PostgresPool } from "../../../src/adapters/postgres/postgres-pool.js";
import { freshPostgresDatabase } from "./postgres.js";

/** A fresh, migrated database on the run's PostgreSQL cluster, with a pool over it. */
export interface PostgresTestDatabase {
  url: string;
  pool: PostgresPool;
  close(): Promise<void>;
}

/**
 * A fresh database (created on the shared cluster, migrated to the newest schema) and a pool, for one
 * suite or test.
 * @example const db = await openTestPostgres(); const store = new PostgresDocumentStore(db.pool); ...; await db.close();
 */
export async function openTestPostgres(): Promise<PostgresTestDatabase> {
  const url = await freshPostgresDatabase();
  const pool = openPostgresPool(url);
  await migrate(pool);
  return { url, pool, close: () => pool.end() };
}
