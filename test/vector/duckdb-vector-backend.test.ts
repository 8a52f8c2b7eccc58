import { DuckDbDatabase } from "../../src/adapters/duckdb/duckdb-database.js";
import { DuckDbDocumentStore } from "../../src/adapters/duckdb/duckdb-document-store.js";
import { DuckDbVectorBackend } from "../../src/adapters/duckdb/duckdb-vector-backend.js";
import { viewOf, searchOpts } from "./vector-fixtures.js";
import { runVectorBackendSuite } from "./vector-backend-suite.js";

// An in-memory DuckDB per backend: the same SQL as on a file, without the file's open cost.
runVectorBackendSuite({
  name: "DuckDB (array_cosine_similarity in SQL)",
  exact: true,
  create: async (dimension) =>
    new DuckDbVectorBackend(await DuckDbDatabase.open({ path: ":memory:", dimension, threads: 1 }), { ownsDatabase: true }),
  settle: (b) => (b as DuckDbVectorBackend).flushed(),
});

describe("DuckDbVectorBackend over the document store's vectors", () => {
  const R1 = "01JD0C00000000000000000001";
  test("searches what the document store committed, without writes of its own; superseded versions follow the temporal scope", async () => {
    const db = await DuckDbDatabase.open({ path: ":memory:", dimension: 4, threads: 1 });
    try {
      const store = new DuckDbDocumentStore(db);
      const vectors = new DuckDbVectorBackend(db, { ownWrites: false });
      const doc = (text: string, v: number[]) => ({
        path: "a.md",
        content: text,
        metadata: {},
        chunks: [{ text, embedding: Float32Array.from(v) }],
      });
      const first = await store.upsertDocuments(R1, [doc("one", [1, 0, 0, 0])], 1_000);
      const second = await store.upsertDocuments(R1, [doc("two", [1, 1, 0, 0])], 2_000);
      vectors.upsert([{ chunkKey: 999, resourceId: R1, path: "x.md", supersededAt: null, vector: Float32Array.from([1, 0, 0, 0]) }]);
      const q = Float32Array.from([1, 0, 0, 0]);
      const current = await vectors.search(viewOf([R1]), q, searchOpts({ topK: 10, now: 3_000 }));
      expect(current.hits.map((h) => h.chunkKey)).toEqual([second.vectors.added[0].chunkKey]);
      const all = await vectors.search(viewOf([R1], { temporal: "all" }), q, searchOpts({ topK: 10, now: 3_000 }));
      expect(all.hits.map((h) => h.chunkKey)).toEqual([first.vectors.added[0].chunkKey, second.vectors.added[0].chunkKey]);
      expect(all.hits[0].score).toBeCloseTo(1, 6);
      expect(all.hits[1].score).toBeCloseTo(Math.SQRT1_2, 6);
    } finally {
      await db.close();
    }
  });
});
