import { MIGRATIONS, migrate } from "../../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool, type PostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";

describe("PostgreSQL schema migrations", () => {
  let url: string;
  const pools: PostgresPool[] = [];
  const pool = () => {
    const p = openPostgresPool(url);
    pools.push(p);
    return p;
  };
  beforeEach(async () => {
    url = await freshPostgresDatabase();
  });
  afterEach(async () => {
    for (const p of pools.splice(0)) await p.end();
  });

  test("servers starting at once apply each version exactly once (advisory lock), in order", async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => migrate(pool())));
    const all = MIGRATIONS.map((m) => m.version);
    expect(results.filter((r) => r.length > 0)).toEqual([all]);
    expect(results.filter((r) => r.length === 0)).toHaveLength(5);
    const { rows } = await pool().query<{ version: number }>("SELECT version FROM acms_schema_migrations ORDER BY version");
    expect(rows.map((r) => r.version)).toEqual(all);
  });

  test("a later start applies only the versions it lacks", async () => {
    const p = pool();
    expect(await migrate(p, MIGRATIONS.slice(0, 1))).toEqual([1]);
    expect(await migrate(p)).toEqual(MIGRATIONS.slice(1).map((m) => m.version));
    expect(await migrate(p)).toEqual([]);
  });

  test("a failing version rolls back whole and names itself; the versions before it stay", async () => {
    const p = pool();
    const broken = [...MIGRATIONS, { version: 999, name: "broken", sql: "CREATE TABLE half_made (x int); SELECT no_such_function();" }];
    await expect(migrate(p, broken)).rejects.toThrow(/schema migration 999 \(broken\) failed/);
    expect((await p.query("SELECT to_regclass('half_made') AS t")).rows[0].t).toBeNull();
    expect((await p.query<{ n: number }>("SELECT count(*)::int AS n FROM acms_schema_migrations")).rows[0].n).toBe(MIGRATIONS.length);
  });

  test("a database with a newer schema than this server knows is refused, not written to", async () => {
    const p = pool();
    await migrate(p);
    await p.query("INSERT INTO acms_schema_migrations (version, name) VALUES (1000, 'from the future')");
    await expect(migrate(p)).rejects.toThrow(/schema version 1000, newer than this server knows/);
  });
});
