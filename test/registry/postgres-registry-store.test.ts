import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresRegistryStore } from "../../src/adapters/postgres/postgres-registry-store.js";
import { AlreadyExistsError } from "../../src/domain/errors.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { runRegistryStoreSuite } from "./registry-store-suite.js";

runRegistryStoreSuite({
  name: "PostgreSQL",
  create: async () => {
    const db = await openTestPostgres();
    return { registry: new PostgresRegistryStore(db.pool), close: () => db.close() };
  },
});

describe("PostgresRegistryStore across servers", () => {
  test("a registration through one server is seen by the other at once, descendants included (no cached DAG)", async () => {
    const db = await openTestPostgres();
    const otherPool = openPostgresPool(db.url);
    try {
      const a = new PostgresRegistryStore(db.pool);
      const b = new PostgresRegistryStore(otherPool);
      await a.createProject("local/api");
      const root = await a.registerResource({ id: "", project: "local/api", alias: "root", kind: "repo", parentIds: [], metadata: {} });
      expect([...(await b.withDescendants([root.id]))]).toEqual([root.id]);
      const child = await b.registerResource({
        id: "",
        project: "local/api",
        alias: "child",
        kind: "repo",
        parentIds: [root.id],
        metadata: {},
      });
      expect(new Set(await a.withDescendants([root.id]))).toEqual(new Set([root.id, child.id]));
      expect(await a.resolveAlias("local/api", "child")).toBe(child.id);
    } finally {
      await otherPool.end();
      await db.close();
    }
  });

  test("two servers racing for one alias: exactly one wins, the other gets AlreadyExists", async () => {
    const db = await openTestPostgres();
    const pools = [db.pool, openPostgresPool(db.url), openPostgresPool(db.url)];
    try {
      await new PostgresRegistryStore(db.pool).createProject("local/api");
      const results = await Promise.allSettled(
        pools.flatMap((p) =>
          [0, 1].map(() =>
            new PostgresRegistryStore(p).registerResource({
              id: "",
              project: "local/api",
              alias: "same",
              kind: "repo",
              parentIds: [],
              metadata: {},
            }),
          ),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(AlreadyExistsError);
      expect((await new PostgresRegistryStore(db.pool).listResources("local/api")).map((r) => r.alias)).toEqual(["same"]);
    } finally {
      await pools[1].end();
      await pools[2].end();
      await db.close();
    }
  });
});
