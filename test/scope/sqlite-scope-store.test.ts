import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteScopeStore } from "../../src/adapters/sqlite/sqlite-scope-store.js";
import { toStoredScopeRow } from "../../src/adapters/kit/scope-rows.js";
import { runScopeStoreSuite, sampleScope } from "./scope-store-suite.js";

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

test("a database written before scope sizes were kept gets them from its stored bodies", async () => {
  const db = openSqliteDatabase(":memory:");
  try {
    db.exec("CREATE TABLE scopes (scope_id TEXT PRIMARY KEY, owner TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)");
    const scope = sampleScope({ owner: "agent-a" });
    const row = toStoredScopeRow(scope);
    db.prepare<[string, string, string, number]>("INSERT INTO scopes VALUES (?, ?, ?, ?)").run(
      row.scope_id,
      row.owner,
      row.body,
      row.created_at,
    );
    const store = new SqliteScopeStore(db);
    expect(await store.usageOf("agent-a")).toEqual({ scopes: 1, bytes: Buffer.byteLength(row.body) });
    expect(await store.get(scope.scopeId)).toEqual(scope);
  } finally {
    db.close();
  }
});
