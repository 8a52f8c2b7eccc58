import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/shared/sqlite-database.js";
import { SqliteScopeStore } from "../../src/adapters/sqlite/sqlite-scope-store.js";
import { runScopeStoreSuite } from "./scope-store-suite.js";

runScopeStoreSuite({
  name: "SQLite (database file)",
  create: () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-scope-store-"));
    let db: SqliteDatabase = openSqliteDatabase(join(dir, "acms.db"));
    return {
      store: new SqliteScopeStore(db),
      reopen: () => {
        db.close();
        db = openSqliteDatabase(join(dir, "acms.db"));
        return new SqliteScopeStore(db);
      },
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});

// A one-entry cache: every read but the latest comes from the database, so the round trip is the stored body's.
runScopeStoreSuite({
  name: "SQLite (in memory, cache of one scope)",
  create: () => {
    const db = openSqliteDatabase(":memory:");
    return {
      store: new SqliteScopeStore(db, { cacheSize: 1 }),
      close: () => {
        db.close();
      },
    };
  },
  skip: { "a saved scope survives a restart, field for field": "an in-memory database is gone when it is closed" },
});
