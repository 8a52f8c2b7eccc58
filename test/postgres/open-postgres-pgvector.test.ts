import { mkdtempSync, rmSync } from "node:fs";
import pg from "pg";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgres, type PostgresEngine } from "../../src/adapters/postgres/open-postgres.js";
import { startPgliteVector, type PgliteVectorServer } from "../support/engines/pglite-pgvector.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { viewOf } from "../vector/vector-fixtures.js";

jest.setTimeout(120_000);

const R1 = "01JAAAAAAAAAAAAAAAAAAAAAAA";
const opts = { topK: 5, minScore: 0.5, now: 10_000, recentWindowMs: 1_000 };
const v = (i: number) => Float32Array.from({ length: 4 }, (_, j) => (j === i ? 1 : 0));

async function exercise(engine: PostgresEngine): Promise<void> {
  const doc = (content: string, i: number) => ({ path: "a.md", content, metadata: {}, chunks: [{ text: content, embedding: v(i) }] });
  const first = await engine.documents.upsertDocuments(R1, [doc("one", 0)], 1_000);
  engine.vector.upsert(first.vectors.added);
  expect((await engine.vector.search(viewOf([R1]), v(0), opts)).hits.map((h) => h.path)).toEqual(["a.md"]);
  const second = await engine.documents.upsertDocuments(R1, [doc("two", 1)], 2_000);
  engine.vector.supersede(second.vectors.superseded, second.vectors.at);
  engine.vector.upsert(second.vectors.added);
  expect((await engine.vector.search(viewOf([R1]), v(0), opts)).hits).toEqual([]);
  expect((await engine.vector.search(viewOf([R1], { temporal: "all" }), v(0), opts)).hits.map((h) => h.chunkKey)).toEqual(
    first.vectors.added.map((e) => e.chunkKey),
  );
  expect((await engine.vector.search(viewOf([R1]), v(1), opts)).hits.map((h) => h.chunkKey)).toEqual(
    second.vectors.added.map((e) => e.chunkKey),
  );
}

describe("openPostgres picks where vectors live and says so", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-open-pg-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("with the vector extension (PGlite + pgvector): vectors in the database, written in the document store's transactions", async () => {
    const server: PgliteVectorServer = await startPgliteVector();
    const log: string[] = [];
    const engine = await openPostgres({ postgresUrl: server.url, embeddingDim: 4, dataDir: dir, postgresPoolSize: 1 }, (l) => log.push(l));
    try {
      expect(engine.vectorMode).toBe("pgvector");
      expect(log.join("\n")).toMatch(/pgvector/);
      await exercise(engine);
      // The rows are the document store's, committed with the documents: the backend's own write methods
      // are no-ops in this setup, so clearing through it changes nothing.
      engine.vector.clearResource(R1);
      expect((await engine.vector.search(viewOf([R1]), v(1), opts)).hits).toHaveLength(1);
      const reader = new pg.Client({ connectionString: server.url });
      await reader.connect();
      try {
        const { rows } = await reader.query("SELECT chunk_key::int AS k, superseded_at::int AS s FROM chunk_vectors ORDER BY chunk_key");
        expect(rows).toEqual([
          { k: 1, s: 2_000 },
          { k: 2, s: null },
        ]);
      } finally {
        await reader.end();
      }
    } finally {
      await engine.close();
      await server.stop();
    }
  });

  test("without it (Debian's PostgreSQL 15): vectors in process, loaded from the database", async () => {
    const log: string[] = [];
    const engine = await openPostgres({ postgresUrl: await freshPostgresDatabase(), embeddingDim: 4, dataDir: dir }, (l) => log.push(l));
    try {
      expect(engine.vectorMode).toBe("in-process");
      expect(log.join("\n")).toMatch(/no vector extension/);
      await exercise(engine);
    } finally {
      await engine.close();
    }
  });
});
