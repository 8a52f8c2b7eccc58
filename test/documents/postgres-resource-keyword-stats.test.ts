import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { MIGRATIONS, migrate } from "../../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresTextBackend } from "../../src/adapters/postgres/postgres-text-backend.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { testView } from "../text/text-corpus.js";

/**
 * The per-resource keyword counters PostgreSQL's BM25 draws a scope's statistics from
 * (`resource_keyword_stats`): exact after every kind of write, back to their previous values after an
 * erasure, and filled by migration 13 for a database written before it.
 */
describe("PostgreSQL keyword counters per resource", () => {
  const R1 = "01JD0C00000000000000000001";
  const R2 = "01JD0C00000000000000000002";
  const R3 = "01JD0C00000000000000000003";
  const opts = { maxResults: 20, now: 10_000, recentWindowMs: 1_000 };
  let db: PostgresTestDatabase;
  beforeEach(async () => {
    db = await openTestPostgres();
  });
  afterEach(() => db.close());

  /** The counters as kept, and as counted from the keyword rows (equal when exact). */
  async function counters(): Promise<{ kept: unknown[]; counted: unknown[] }> {
    const kept = await db.pool.query(
      "SELECT resource_id, row_count::int AS rows, token_count::int AS tokens FROM resource_keyword_stats ORDER BY resource_id",
    );
    const counted = await db.pool.query(
      "SELECT resource_id, count(*)::int AS rows, sum(length)::int AS tokens FROM keyword_rows GROUP BY resource_id ORDER BY resource_id",
    );
    return { kept: kept.rows, counted: counted.rows };
  }

  async function expectExact(): Promise<void> {
    const { kept, counted } = await counters();
    expect(kept).toEqual(counted);
    const total = await db.pool.query<{ ok: boolean }>(
      `SELECT (SELECT keyword_rows FROM index_state) = (SELECT coalesce(sum(row_count), 0) FROM resource_keyword_stats)
          AND (SELECT keyword_tokens FROM index_state) = (SELECT coalesce(sum(token_count), 0) FROM resource_keyword_stats) AS ok`,
    );
    expect(total.rows[0].ok).toBe(true);
  }

  async function write(store: PostgresDocumentStore, resourceId: string, path: string, text: string, at: number): Promise<void> {
    await store.upsertDocuments(resourceId, [{ path, content: text, metadata: {}, chunks: [{ text }, { text: `${text} again` }] }], at);
  }

  test("exact through supersession, retention, deletion, re-indexing and concurrent writers of two resources", async () => {
    const store = new PostgresDocumentStore(db.pool, { retainedVersions: 2 });
    for (let v = 0; v < 6; v++) {
      await write(store, R1, "a.md", `alpha beta v${v}`, 1_000 + v);
      await write(store, R2, `b${v}.md`, "beta beta delta", 1_000 + v);
    }
    await expectExact();
    await store.deleteDocuments(R1, ["a.md"], 2_000);
    await store.deleteDocuments(R2, ["b0.md", "b1.md"], 2_000);
    await store.reindexResource(R1, true);
    await expectExact();
    const pools = [db.pool, openPostgresPool(db.url)];
    try {
      const stores = pools.map((p) => new PostgresDocumentStore(p, { retainedVersions: 1 }));
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => write(stores[i % 2], i % 3 === 0 ? R2 : R1, `c${i % 4}.md`, `gamma ${i} epsilon`, 3_000 + i)),
      );
    } finally {
      await pools[1].end();
    }
    await expectExact();
    // A resource whose every row goes has no counter row left.
    await store.deleteDocuments(R1, ["a.md", "c0.md", "c1.md", "c2.md", "c3.md"], 4_000);
    await store.reindexResource(R1, true);
    await expectExact();
  });

  test("erasing a resource slice by slice returns every counter to its value before the resource was written", async () => {
    const store = new PostgresDocumentStore(db.pool, { retainedVersions: 3 });
    for (let v = 0; v < 3; v++) await write(store, R1, `a${v}.md`, `alpha beta v${v}`, 1_000 + v);
    const before = await counters();
    const totalsBefore = (await db.pool.query("SELECT keyword_rows::int, keyword_tokens::int FROM index_state")).rows[0];
    const scoresBefore = (await new PostgresTextBackend(db.pool).search(testView([R1]), "alpha beta", opts)).hits;
    for (let v = 0; v < 4; v++) {
      await write(store, R2, "b.md", `alpha beta gamma v${v}`, 2_000 + v);
      await write(store, R2, `c${v}.md`, "alpha alpha", 2_000 + v);
    }
    expect((await counters()).kept).not.toEqual(before.kept);
    for (let slice = 0; ; slice++) {
      expect(slice).toBeLessThan(50);
      if ((await store.eraseResourceSlice(R2, 2)).done) break;
      await expectExact();
    }
    expect(await counters()).toEqual(before);
    expect((await db.pool.query("SELECT keyword_rows::int, keyword_tokens::int FROM index_state")).rows[0]).toEqual(totalsBefore);
    expect((await new PostgresTextBackend(db.pool).search(testView([R1]), "alpha beta", opts)).hits).toEqual(scoresBefore);
  });

  test("migration 13 fills the counters of a database written before it", async () => {
    const store = new PostgresDocumentStore(db.pool);
    await write(store, R1, "a.md", "alpha beta", 1_000);
    await write(store, R1, "a.md", "alpha beta gamma", 2_000);
    await write(store, R3, "z.md", "zeta", 1_000);
    const expected = await counters();
    // As a database written before version 13 had it: no table, no record of the version.
    await db.pool.query("DROP TABLE resource_keyword_stats");
    await db.pool.query("DELETE FROM acms_schema_migrations WHERE version = 13");
    expect(MIGRATIONS.find((m) => m.version === 13)?.name).toMatch(/per resource/);
    expect(await migrate(db.pool)).toEqual([13]);
    expect(await counters()).toEqual(expected);
    expect(expected.kept).toHaveLength(2);
  });
});
