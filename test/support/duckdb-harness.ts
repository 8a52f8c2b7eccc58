import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDbDatabase } from "../../src/adapters/duckdb/duckdb-database.js";

/** A DuckDB file in a fresh temporary directory, and a way to reopen and finally remove it. */
export interface TestDuckDb {
  db: DuckDbDatabase;
  path: string;
  /** Closes the database and opens the same file again. */
  reopen(): Promise<DuckDbDatabase>;
  /** Closes the database and removes its directory. */
  close(): Promise<void>;
}

/** Opens a DuckDB file of `dimension`-dimensional embeddings under a temporary directory. */
export async function openTestDuckDb(dimension: number): Promise<TestDuckDb> {
  const dir = mkdtempSync(join(tmpdir(), "acms-duckdb-"));
  const path = join(dir, "acms.duckdb");
  const h: TestDuckDb = {
    db: await DuckDbDatabase.open({ path, dimension, threads: 1 }),
    path,
    async reopen() {
      await h.db.close();
      h.db = await DuckDbDatabase.open({ path, dimension, threads: 1 });
      return h.db;
    },
    async close() {
      await h.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
