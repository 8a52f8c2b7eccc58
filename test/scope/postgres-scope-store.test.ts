import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresScopeStore } from "../../src/adapters/postgres/postgres-scope-store.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { runScopeStoreSuite, sampleScope } from "./scope-store-suite.js";

runScopeStoreSuite({
  name: "PostgreSQL",
  create: async () => {
    const db = await openTestPostgres();
    return {
      store: new PostgresScopeStore(db.pool),
      reopen: () => new PostgresScopeStore(db.pool),
      close: () => db.close(),
    };
  },
});

// A one-entry cache: every read but the latest comes from the database, so the round trip is the stored body's.
runScopeStoreSuite({
  name: "PostgreSQL (cache of one scope)",
  create: async () => {
    const db = await openTestPostgres();
    return {
      store: new PostgresScopeStore(db.pool, { cacheSize: 1 }),
      reopen: () => new PostgresScopeStore(db.pool, { cacheSize: 1 }),
      close: () => db.close(),
    };
  },
});

test("a scope saved through one server is read by another (a second pool over the same database)", async () => {
  const db = await openTestPostgres();
  const otherPool = openPostgresPool(db.url);
  try {
    const scope = sampleScope();
    await new PostgresScopeStore(db.pool).save(scope);
    const other = new PostgresScopeStore(otherPool);
    expect(await other.get(scope.scopeId)).toEqual(scope);
    expect(other.isCached(scope.scopeId)).toBe(true);
  } finally {
    await otherPool.end();
    await db.close();
  }
});
