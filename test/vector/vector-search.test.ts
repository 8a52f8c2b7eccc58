import { InvalidArgumentError, UnimplementedError } from "../../src/domain/errors.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import type { ChunkRecord, DocumentStore } from "../../src/ports/document-store.js";
import type { VectorBackend, VectorHit, VectorSearchOptions } from "../../src/ports/vector-backend.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { searchVectors, type VectorSearchDeps } from "../../src/application/search/vector-search.js";
import { R, viewOf } from "./vector-fixtures.js";

const DIM = 4;
const NOW = 1_000_000;

/** A document store holding chunk records in a map: just what a similarity search reads. */
class MapDocuments implements Pick<DocumentStore, "getChunks" | "generation"> {
  readonly chunks = new Map<number, ChunkRecord>();
  gen = 7n;
  requested: number[][] = [];
  add(chunkKey: number, resourceId: string, path: string, chunkIndex: number, supersededAt: number | null = null): ChunkRecord {
    const rec: ChunkRecord = {
      chunkKey,
      resourceId,
      path,
      chunkIndex,
      text: `text of ${chunkKey}`,
      metadata: { lang: "en", key: String(chunkKey) },
      supersededAt,
      ukoUri: `uko://${resourceId}/${path}#${chunkIndex}`,
    };
    this.chunks.set(chunkKey, rec);
    return rec;
  }
  async getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
    this.requested.push([...keys]);
    const out = new Map<number, ChunkRecord>();
    for (const k of keys) {
      const c = this.chunks.get(k);
      if (c) out.set(k, c);
    }
    return out;
  }
  async generation(): Promise<bigint> {
    return this.gen;
  }
}

/** A backend answering fixed hits, to drive the handler logic (dedupe, re-fetch, leak guard) exactly. */
class ScriptedVectors implements VectorBackend {
  readonly dimension = DIM;
  calls: VectorSearchOptions[] = [];
  constructor(private readonly answer: (opts: VectorSearchOptions) => { hits: VectorHit[]; exhaustive: boolean }) {}
  upsert(): void {}
  supersede(): void {}
  remove(): void {}
  clearResource(): void {}
  async replaceResource(): Promise<void> {}
  async search(_view: ScopedBackendView, _q: Float32Array, opts: VectorSearchOptions) {
    this.calls.push(opts);
    return this.answer(opts);
  }
  async close(): Promise<void> {}
}

function deps(vector: VectorBackend | undefined, documents: MapDocuments): VectorSearchDeps {
  return { vector, documents, embeddingDim: DIM, maxResultsCap: 50, recentWindowMs: 1000, now: () => NOW };
}

function fieldOf(err: unknown): string | undefined {
  return err instanceof InvalidArgumentError ? err.violations[0].field : undefined;
}

describe("searchVectors", () => {
  it("is UNIMPLEMENTED without a vector backend", async () => {
    await expect(searchVectors(deps(undefined, new MapDocuments()), viewOf([R.a]), { embedding: [1, 0, 0, 0] })).rejects.toBeInstanceOf(
      UnimplementedError,
    );
  });

  it("checks embedding, top_k and min_score, naming the field", async () => {
    const d = deps(new PartitionedVectorBackend({ dimension: DIM }), new MapDocuments());
    const view = viewOf([R.a]);
    const cases: Array<[Parameters<typeof searchVectors>[2], string]> = [
      [{ embedding: [] }, "embedding"],
      [{ embedding: [1, 0, 0] }, "embedding"],
      [{ embedding: [0, 0, 0, 0] }, "embedding"],
      [{ embedding: [1, Number.NaN, 0, 0] }, "embedding"],
      [{ embedding: [1, 0, 0, 0], topK: 0 }, "top_k"],
      [{ embedding: [1, 0, 0, 0], topK: 51 }, "top_k"],
      [{ embedding: [1, 0, 0, 0], minScore: -0.1 }, "min_score"],
      [{ embedding: [1, 0, 0, 0], minScore: 1.5 }, "min_score"],
    ];
    for (const [req, field] of cases) {
      const err = await searchVectors(d, view, req).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(fieldOf(err)).toBe(field);
    }
  });

  it("hydrates, orders by score then UKO URI, and reports the generation", async () => {
    const docs = new MapDocuments();
    docs.add(1, R.a, "b.md", 0);
    docs.add(2, R.a, "a.md", 0);
    docs.add(3, R.a, "c.md", 1);
    const vec = new ScriptedVectors(() => ({
      hits: [
        { chunkKey: 1, resourceId: R.a, path: "b.md", score: 0.5 },
        { chunkKey: 2, resourceId: R.a, path: "a.md", score: 0.5 },
        { chunkKey: 3, resourceId: R.a, path: "c.md", score: 0.9 },
      ],
      exhaustive: true,
    }));
    const answer = await searchVectors(deps(vec, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0], topK: 3 });
    expect(answer.results.map((r) => r.ukoUri)).toEqual([`uko://${R.a}/c.md#1`, `uko://${R.a}/a.md#0`, `uko://${R.a}/b.md#0`]);
    expect(answer.results[0]).toEqual({
      ukoUri: `uko://${R.a}/c.md#1`,
      resourceId: R.a,
      path: "c.md",
      content: "text of 3",
      score: 0.9,
      metadata: { lang: "en", key: "3" },
    });
    expect(answer.generation).toBe(7n);
    expect(answer.exhaustive).toBe(true);
    expect(vec.calls[0]).toMatchObject({ topK: 4, minScore: 0, now: NOW, recentWindowMs: 1000 });
  });

  it("keeps the best version of a UKO URI and asks again until top_k distinct ones are found", async () => {
    const docs = new MapDocuments();
    // Versions 1..6 of chunk 0 of a.md (5 superseded, kept under `all`), then b.md and c.md.
    for (let k = 1; k <= 6; k++) docs.add(k, R.a, "a.md", 0, k < 6 ? NOW - 10 * k : null);
    docs.add(7, R.a, "b.md", 0);
    docs.add(8, R.a, "c.md", 0);
    const ranked: VectorHit[] = [1, 2, 3, 4, 5, 6, 7, 8].map((k) => ({ chunkKey: k, resourceId: R.a, path: "x", score: 1 - k / 100 }));
    const vec = new ScriptedVectors((o) => ({ hits: ranked.slice(0, o.topK), exhaustive: true }));
    const answer = await searchVectors(deps(vec, docs), viewOf([R.a], { temporal: "all" }), { embedding: [1, 0, 0, 0], topK: 3 });
    expect(answer.results.map((r) => [r.ukoUri, r.score])).toEqual([
      [`uko://${R.a}/a.md#0`, 1 - 1 / 100],
      [`uko://${R.a}/b.md#0`, 1 - 7 / 100],
      [`uko://${R.a}/c.md#0`, 1 - 8 / 100],
    ]);
    expect(vec.calls.map((c) => c.topK)).toEqual([7, 28]);
    expect(answer.exhaustive).toBe(true);
  });

  it("drops hits whose chunk is gone or, by the store's record, no longer visible", async () => {
    const docs = new MapDocuments();
    docs.add(1, R.a, "a.md", 0, NOW - 5);
    docs.add(3, R.a, "c.md", 0);
    const vec = new ScriptedVectors(() => ({
      hits: [1, 2, 3].map((k) => ({ chunkKey: k, resourceId: R.a, path: "p", score: 0.5 })),
      exhaustive: true,
    }));
    const answer = await searchVectors(deps(vec, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0], topK: 3 });
    expect(answer.results.map((r) => r.ukoUri)).toEqual([`uko://${R.a}/c.md#0`]);
  });

  it("passes results through the leak guard: a backend answering outside the view is caught and counted", async () => {
    const docs = new MapDocuments();
    docs.add(1, R.b, "secret.md", 0);
    docs.add(2, R.a, "ok.md", 0);
    docs.add(3, R.a, "excluded/x.md", 0);
    const rogue = new ScriptedVectors(() => ({
      hits: [1, 2, 3].map((k) => ({ chunkKey: k, resourceId: R.a, path: "ok.md", score: 0.9 })),
      exhaustive: true,
    }));
    const before = preventedLeaks.prevented;
    const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const answer = await searchVectors(deps(rogue, docs), viewOf([R.a], { excludePaths: ["excluded/**"] }), { embedding: [1, 0, 0, 0] });
      expect(answer.results.map((r) => r.resourceId + "/" + r.path)).toEqual([`${R.a}/ok.md`]);
      expect(preventedLeaks.prevented - before).toBe(2);
    } finally {
      write.mockRestore();
      preventedLeaks.prevented = before;
    }
  });

  it("reports an exact answer as exhaustive although top_k cut it; hybrid's 'complete' says whether more matched", async () => {
    const docs = new MapDocuments();
    for (let k = 1; k <= 10; k++) docs.add(k, R.a, `f${k}.md`, 0);
    const ranked: VectorHit[] = Array.from({ length: 10 }, (_, i) => ({ chunkKey: i + 1, resourceId: R.a, path: "x", score: 1 - i / 100 }));
    const exact = new ScriptedVectors((o) => ({ hits: ranked.slice(0, o.topK), exhaustive: true }));
    const cut = await searchVectors(deps(exact, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0], topK: 3 });
    expect(cut.results).toHaveLength(3);
    expect([cut.exhaustive, cut.complete]).toEqual([true, false]);
    const whole = await searchVectors(deps(exact, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0], topK: 20 });
    expect(whole.results).toHaveLength(10);
    expect([whole.exhaustive, whole.complete]).toEqual([true, true]);
    const approximate = new ScriptedVectors((o) => ({ hits: ranked.slice(0, o.topK), exhaustive: false }));
    const approx = await searchVectors(deps(approximate, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0], topK: 3 });
    expect([approx.exhaustive, approx.complete]).toEqual([false, false]);
  });

  it("reports a non-exhaustive answer when the backend's is, or when re-fetching hit its limit", async () => {
    const docs = new MapDocuments();
    for (let k = 1; k <= 100; k++) docs.add(k, R.a, "same.md", 0, NOW - k);
    const approx = new ScriptedVectors((o) => ({
      hits: [{ chunkKey: 1, resourceId: R.a, path: "same.md", score: 0.5 }].slice(0, o.topK),
      exhaustive: false,
    }));
    expect(
      (await searchVectors(deps(approx, docs), viewOf([R.a], { temporal: "all" }), { embedding: [1, 0, 0, 0], topK: 2 })).exhaustive,
    ).toBe(false);
    const versions = new ScriptedVectors((o) => ({
      hits: Array.from({ length: o.topK }, (_, i) => ({ chunkKey: i + 1, resourceId: R.a, path: "same.md", score: 0.5 })),
      exhaustive: true,
    }));
    const capped = await searchVectors(deps(versions, docs), viewOf([R.a], { temporal: "all" }), { embedding: [1, 0, 0, 0], topK: 2 });
    expect(capped.results).toHaveLength(1);
    expect(capped.exhaustive).toBe(false);
    expect(versions.calls.map((c) => c.topK)).toEqual([5, 20, 33]);
  });

  it("stops when the call is cancelled", async () => {
    const ctl = new AbortController();
    const docs = new MapDocuments();
    const vec = new ScriptedVectors(() => {
      ctl.abort(new Error("gone"));
      return { hits: [], exhaustive: true };
    });
    await expect(searchVectors(deps(vec, docs), viewOf([R.a]), { embedding: [1, 0, 0, 0] }, ctl.signal)).rejects.toThrow("gone");
    expect(docs.requested).toEqual([]);
  });
});
