import { DuckDbDocumentStore } from "../../src/adapters/duckdb/duckdb-document-store.js";
import { DuckDbUnitReader } from "../../src/adapters/duckdb/duckdb-unit-reader.js";
import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import type { ChunkTextChanges } from "../../src/ports/unit-reader.js";
import { openTestDuckDb } from "../support/duckdb-harness.js";
import { runDocumentStoreSuite } from "./document-store-suite.js";
import { runUnitReaderSuite } from "./unit-reader-suite.js";

runDocumentStoreSuite({
  name: "DuckDB",
  nativeKeywordIndex: false,
  create: async () => {
    const h = await openTestDuckDb(4);
    return {
      store: new DuckDbDocumentStore(h.db),
      reopen: async () => new DuckDbDocumentStore(await h.reopen()),
      close: () => h.close(),
    };
  },
});

runUnitReaderSuite({
  name: "DuckDB",
  create: async () => {
    const h = await openTestDuckDb(4);
    return { store: new DuckDbDocumentStore(h.db), reader: new DuckDbUnitReader(h.db), close: () => h.close() };
  },
});

describe("DuckDbDocumentStore specifics", () => {
  const R1 = "01JD0C00000000000000000001";
  const doc = (path: string, text: string, embedding?: number[]) => ({
    path,
    content: text,
    metadata: {},
    chunks: [{ text, ...(embedding ? { embedding: Float32Array.from(embedding) } : {}) }],
  });

  test("a message that fails mid-way writes nothing: no document, chunk, vector, key or generation", async () => {
    const h = await openTestDuckDb(4);
    try {
      const store = new DuckDbDocumentStore(h.db);
      await store.upsertDocuments(R1, [doc("a.md", "alpha", [1, 0, 0, 0])], 1_000);
      const count = () =>
        h.db.read((tx) =>
          tx.all(
            "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors), (SELECT next_chunk_key FROM index_state)",
          ),
        );
      const before = await count();
      // The second document's embedding has the wrong dimension: DuckDB refuses it after the first was appended.
      await expect(
        store.upsertDocuments(R1, [doc("a.md", "alpha two", [0, 1, 0, 0]), doc("b.md", "beta", [1, 2, 3])], 2_000),
      ).rejects.toThrow();
      expect(await count()).toEqual(before);
      expect(await store.generation()).toBe(1n);
      const reader = new DuckDbUnitReader(h.db);
      const [a] = await reader.readUnits([{ resourceId: R1, path: "a.md" }], { temporal: "all", now: 3_000, recentWindowMs: 1_000 });
      expect(a?.content).toBe("alpha");
      // The store goes on working after the rollback.
      const next = await store.upsertDocuments(R1, [doc("b.md", "beta", [0, 0, 1, 0])], 3_000);
      expect(next.generation).toBe(2n);
    } finally {
      await h.close();
    }
  });

  test("a message naming one path twice writes both versions in order, as the embedded store does", async () => {
    const msg = [doc("a.md", "first", [1, 0, 0, 0]), doc("b.md", "other"), doc("a.md", "second", [0, 1, 0, 0])];
    const sqlite = openSqliteDatabase(":memory:");
    const h = await openTestDuckDb(4);
    try {
      const embedded = await new SqliteDocumentStore(sqlite).upsertDocuments(R1, msg, 1_000);
      const onDuck = await new DuckDbDocumentStore(h.db).upsertDocuments(R1, msg, 1_000);
      const shape = (o: typeof embedded) => ({ ...o, vectors: { ...o.vectors, added: o.vectors.added.map((e) => e.path) } });
      expect(shape(onDuck)).toEqual(shape(embedded));
      const liteRows = sqlite.prepare("SELECT path, content, superseded_at FROM documents ORDER BY doc_key").all();
      const duckRows = (await h.db.read((tx) => tx.all("SELECT path, content, superseded_at FROM documents ORDER BY doc_key"))).map(
        (r) => ({
          path: r[0],
          content: r[1],
          superseded_at: r[2] === null ? null : Number(r[2]),
        }),
      );
      expect(duckRows).toEqual(liteRows);
    } finally {
      sqlite.close();
      await h.close();
    }
  });

  test("each committed write reports its chunk text changes once, in commit order; a rejected one reports nothing", async () => {
    const h = await openTestDuckDb(4);
    try {
      const seen: ChunkTextChanges[] = [];
      const store = new DuckDbDocumentStore(h.db, { retainedVersions: 1, onChunkTexts: (c) => seen.push(c) });
      await Promise.all([
        store.upsertDocuments(R1, [doc("a.md", "v1")], 1_000),
        store.upsertDocuments(R1, [doc("a.md", "v2")], 2_000),
        store.upsertDocuments(R1, [doc("a.md", "v3")], 3_000),
      ]);
      await expect(store.upsertDocuments(R1, [doc("a.md", "v4", [1, 2])], 4_000)).rejects.toThrow();
      await store.upsertDocuments(R1, [doc("a.md", "v3")], 5_000); // unchanged: no commit, no event
      await store.deleteDocuments(R1, ["a.md"], 6_000);
      await store.reindexResource(R1, true);
      expect(seen.map((c) => c.generation)).toEqual([1n, 2n, 3n, 4n, 5n]);
      expect(seen.map((c) => c.added.map((a) => a.text))).toEqual([["v1"], ["v2"], ["v3"], [], ["v3"]]);
      expect(seen[1].superseded).toEqual(seen[0].added.map((a) => a.chunkKey));
      expect(seen[2].removed).toEqual(seen[0].added.map((a) => a.chunkKey));
      expect(seen[3].superseded).toEqual(seen[2].added.map((a) => a.chunkKey));
      expect(seen[3].removed).toEqual(seen[1].added.map((a) => a.chunkKey));
      expect(seen[4].clearResource).toBe(R1);
    } finally {
      await h.close();
    }
  });
});
