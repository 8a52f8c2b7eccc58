import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresVectorFollower } from "../../src/adapters/postgres/postgres-vector-follower.js";
import { pruneVectorChanges } from "../../src/adapters/postgres/vector-change-log.js";
import type { VectorBackend } from "../../src/ports/vector-backend.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { viewOf } from "./vector-fixtures.js";
import { runVectorBackendSuite } from "./vector-backend-suite.js";

const dbs: PostgresTestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.close();
});

async function follower(db: PostgresTestDatabase, dimension: number): Promise<PostgresVectorFollower> {
  return PostgresVectorFollower.open(
    db.pool,
    db.url,
    new PartitionedVectorBackend({ dimension, exactThreshold: Number.MAX_SAFE_INTEGER, yieldEveryMs: 0 }),
  );
}

runVectorBackendSuite({
  name: "PostgresVectorFollower (in-process vectors over PostgreSQL, exact scan)",
  exact: true,
  create: async (dimension): Promise<VectorBackend> => {
    const db = await openTestPostgres();
    dbs.push(db);
    return follower(db, dimension);
  },
});

describe("PostgresVectorFollower across servers", () => {
  const R1 = "01JAAAAAAAAAAAAAAAAAAAAAAA";
  const opts = { topK: 5, minScore: 0.5, now: 10_000, recentWindowMs: 1_000 };
  const v = (i: number) => {
    const x = new Float32Array(4);
    x[i] = 1;
    return x;
  };

  test("a write committed through one server's store is searched by another server's follower, with supersessions and retention", async () => {
    const db = await openTestPostgres();
    dbs.push(db);
    const otherPool = openPostgresPool(db.url);
    const writer = new PostgresDocumentStore(otherPool, { retainedVersions: 1 });
    const reader = await follower(db, 4);
    try {
      const view = viewOf([R1]);
      expect((await reader.search(view, v(0), opts)).hits).toEqual([]);
      await writer.upsertDocuments(R1, [{ path: "a.md", content: "a", metadata: {}, chunks: [{ text: "a", embedding: v(0) }] }], 1_000);
      const first = await reader.search(view, v(0), opts);
      expect(first.hits.map((h) => [h.path, h.score])).toEqual([["a.md", 1]]);
      expect(reader.appliedGeneration).toBe(await writer.generation());
      await writer.upsertDocuments(R1, [{ path: "a.md", content: "b", metadata: {}, chunks: [{ text: "b", embedding: v(1) }] }], 2_000);
      const second = await reader.search(view, v(1), opts);
      expect(second.hits.map((h) => [h.path, h.score])).toEqual([["a.md", 1]]);
      expect(second.hits[0].chunkKey).not.toBe(first.hits[0].chunkKey);
      // The first version is superseded: invisible to `current`, visible to `all`.
      expect((await reader.search(view, v(0), opts)).hits).toEqual([]);
      expect((await reader.search(viewOf([R1], { temporal: "all" }), v(0), opts)).hits.map((h) => h.chunkKey)).toEqual([
        first.hits[0].chunkKey,
      ]);
      // A third version drops the first beyond retention (1 superseded version kept).
      await writer.upsertDocuments(R1, [{ path: "a.md", content: "c", metadata: {}, chunks: [{ text: "c", embedding: v(2) }] }], 3_000);
      expect((await reader.search(viewOf([R1], { temporal: "all" }), v(0), opts)).hits.map((h) => h.chunkKey)).not.toContain(
        first.hits[0].chunkKey,
      );
      await writer.deleteDocuments(R1, ["a.md"], 4_000);
      expect((await reader.search(view, v(2), opts)).hits).toEqual([]);
    } finally {
      await reader.close();
      await otherPool.end();
    }
  });

  test("a follower opened later loads what is stored, and a re-index reloads the resource", async () => {
    const db = await openTestPostgres();
    dbs.push(db);
    const store = new PostgresDocumentStore(db.pool);
    await store.upsertDocuments(R1, [{ path: "a.md", content: "a", metadata: {}, chunks: [{ text: "a", embedding: v(3) }] }], 1_000);
    const reader = await follower(db, 4);
    try {
      expect((await reader.search(viewOf([R1]), v(3), opts)).hits.map((h) => h.path)).toEqual(["a.md"]);
      await store.reindexResource(R1, true);
      expect((await reader.search(viewOf([R1]), v(3), opts)).hits.map((h) => h.path)).toEqual(["a.md"]);
    } finally {
      await reader.close();
    }
  });

  test("the change log is pruned of what every follower applied; one unseen past the horizon reloads in full when it comes back", async () => {
    const db = await openTestPostgres();
    dbs.push(db);
    const store = new PostgresDocumentStore(db.pool);
    const logRows = async () => (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM vector_changes")).rows[0].n;
    const write = (path: string, i: number, at: number) =>
      store.upsertDocuments(R1, [{ path, content: path, metadata: {}, chunks: [{ text: path, embedding: v(i) }] }], at);
    // Only the test prunes here (the followers' own pruning is an hour away).
    const current = await PostgresVectorFollower.open(
      db.pool,
      db.url,
      new PartitionedVectorBackend({ dimension: 4, exactThreshold: Number.MAX_SAFE_INTEGER, yieldEveryMs: 0 }),
      {
        pruneEveryMs: 3_600_000,
      },
    );
    // Learns of writes only when it searches or polls (never here): it stays where it is until asked.
    const lagging = await PostgresVectorFollower.open(
      db.pool,
      db.url,
      new PartitionedVectorBackend({ dimension: 4, exactThreshold: Number.MAX_SAFE_INTEGER, yieldEveryMs: 0 }),
      {
        notifications: false,
        pollMs: 3_600_000,
        pruneEveryMs: 3_600_000,
      },
    );
    try {
      await write("a.md", 0, 1_000);
      await write("b.md", 1, 1_000);
      await write("c.md", 2, 1_000);
      await current.tick();
      expect(current.appliedGeneration).toBe(await store.generation());
      // The lagging server has not applied them: nothing may go.
      expect(await pruneVectorChanges(db.pool)).toBe(0);
      expect(await logRows()).toBe(3);
      await lagging.tick();
      expect(await pruneVectorChanges(db.pool)).toBe(3);
      expect(await logRows()).toBe(0);
      expect((await lagging.search(viewOf([R1]), v(2), opts)).hits.map((h) => h.path)).toEqual(["c.md"]);
      expect(lagging.fullReloads).toBe(0);

      // The lagging server stalls; a new version of a.md supersedes the first, d.md is new.
      const before = lagging.appliedGeneration;
      await write("a.md", 3, 2_000);
      await write("d.md", 1, 2_000);
      await current.tick();
      expect(await pruneVectorChanges(db.pool)).toBe(0);
      // Unseen past the horizon, it is no longer waited for: the log is pruned up to the current generation.
      await db.pool.query("UPDATE vector_followers SET seen_at = now() - interval '1 hour' WHERE applied = $1", [before.toString()]);
      expect(await pruneVectorChanges(db.pool)).toBe(2);
      expect(await logRows()).toBe(0);
      // Coming back, it cannot replay what it missed: it reloads every vector and answers the current state.
      const hits = await lagging.search(viewOf([R1]), v(3), opts);
      expect(hits.hits.map((h) => h.path)).toEqual(["a.md"]);
      expect((await lagging.search(viewOf([R1]), v(0), opts)).hits).toEqual([]);
      expect((await lagging.search(viewOf([R1]), v(1), opts)).hits.map((h) => h.path).sort()).toEqual(["b.md", "d.md"]);
      expect(lagging.fullReloads).toBe(1);
      expect(lagging.appliedGeneration).toBe(await store.generation());
      // And it is followed again from there: the next write is replayed, not reloaded.
      await write("e.md", 2, 3_000);
      expect((await lagging.search(viewOf([R1]), v(2), opts)).hits.map((h) => h.path).sort()).toEqual(["c.md", "e.md"]);
      expect(lagging.fullReloads).toBe(1);
    } finally {
      await lagging.close();
      await current.close();
    }
  });
});
