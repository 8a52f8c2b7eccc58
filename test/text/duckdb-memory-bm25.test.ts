import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDbDatabase } from "../../src/adapters/duckdb/duckdb-database.js";
import { DuckDbDocumentStore } from "../../src/adapters/duckdb/duckdb-document-store.js";
import { DuckDbUnitReader } from "../../src/adapters/duckdb/duckdb-unit-reader.js";
import { MemoryBm25TextBackend } from "../../src/adapters/kit/bm25/memory-bm25-text-backend.js";
import type { TextSearchOptions } from "../../src/ports/text-backend.js";
import { prng } from "../support/prng.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { runTextBackendSuite, type TextBackendHarness } from "./text-backend-suite.js";
import { testView } from "./text-corpus.js";

/** The DuckDB store with the in-memory BM25 kept current from its commits, and a count of the snapshots read. */
async function createHarness(
  retainedVersions?: number,
): Promise<
  TextBackendHarness & { store: DuckDbDocumentStore; reader: DuckDbUnitReader; memory: MemoryBm25TextBackend; snapshots: () => number }
> {
  const db = await DuckDbDatabase.open({ path: ":memory:", dimension: 4, threads: 1 });
  let memory: MemoryBm25TextBackend | undefined;
  const store = new DuckDbDocumentStore(db, { retainedVersions, onChunkTexts: (c) => memory?.apply(c) });
  const reader = new DuckDbUnitReader(db);
  let snapshots = 0;
  memory = new MemoryBm25TextBackend(
    {
      generation: () => store.generation(),
      snapshotChunks: () => {
        snapshots += 1;
        return reader.snapshotChunks();
      },
    },
    { incremental: true, sliceSize: 7 },
  );
  await memory.load();
  return {
    store,
    reader,
    memory,
    backend: memory,
    loader: documentStoreLoader(store),
    snapshots: () => snapshots,
    close: () => db.close(),
  };
}

runTextBackendSuite({ name: "duckdb-memory-bm25", create: () => createHarness() });

describe("in-memory BM25 kept current from DuckDB's commits", () => {
  const R = ["01JAAAAAAAAAAAAAAAAAAAAAAA", "01JBBBBBBBBBBBBBBBBBBBBBBB"];
  const opts: TextSearchOptions = { maxResults: 1000, now: 10_000_000, recentWindowMs: 5_000_000 };

  it("ranks the fixed corpus exactly as FTS5 does (same golden file)", () => {
    const golden = (name: string) => JSON.parse(readFileSync(join(__dirname, "golden", `${name}.json`), "utf8"));
    expect(golden("duckdb-memory-bm25")).toEqual(golden("fts5"));
  });

  it("after random upserts, deletes, retention drops and re-indexing, answers as an index rebuilt from a snapshot, having read one snapshot only", async () => {
    const h = await createHarness(2);
    try {
      const vocab = ["run", "running", "data", "database", "index", "graph", "vector", "search", "café", "fusion", "rank", "the"];
      const rand = prng(16);
      const pick = (n: number) => Math.floor(rand() * n);
      let t = 1_000;
      for (let i = 0; i < 60; i++) {
        const rid = R[pick(2)];
        const path = `d${pick(5)}.md`;
        t += 1_000;
        const op = pick(10);
        if (op < 7) {
          const chunks = Array.from({ length: 1 + pick(3) }, () =>
            Array.from({ length: 1 + pick(6) }, () => vocab[pick(vocab.length)]).join(" "),
          );
          await h.store.upsertDocuments(
            rid,
            [{ path, content: chunks.join("\n"), metadata: {}, chunks: chunks.map((text) => ({ text })) }],
            t,
          );
        } else if (op < 9) {
          await h.store.deleteDocuments(rid, [path], t);
        } else {
          await h.store.reindexResource(rid, pick(2) === 0);
        }
      }
      await h.store.bumpGeneration();
      const rebuilt = new MemoryBm25TextBackend({
        generation: () => h.store.generation(),
        snapshotChunks: () => h.reader.snapshotChunks(),
      });
      for (const q of ["run data", "database index graph", "the", "café fusion rank", "search vector"]) {
        for (const view of [testView(R), testView([R[0]]), testView(R, { temporal: "all" }), testView(R, { excludePaths: ["d1.md"] })]) {
          const a = await h.memory.search(view, q, opts);
          const b = await rebuilt.search(view, q, opts);
          expect({ q, hits: a.hits }).toEqual({ q, hits: b.hits });
        }
      }
      expect(h.snapshots()).toBe(1);
      expect(h.memory.size).toBe((await h.reader.snapshotChunks()).chunks.length);
    } finally {
      await h.close();
    }
  });
});
