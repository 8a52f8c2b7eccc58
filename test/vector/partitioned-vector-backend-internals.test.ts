import { loadVectors } from "../../src/adapters/kit/vectors/load-vectors.js";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { clusteredVectors, R, randomVector, referenceSearch, searchOpts, viewOf } from "./vector-fixtures.js";
import { prng } from "../support/prng.js";

const DIM = 16;

function entries(count: number, resourceId: string, firstKey: number, seed: number, path = (i: number) => `p/${i % 10}.md`): VectorEntry[] {
  const rnd = prng(seed);
  return Array.from({ length: count }, (_, i) => ({
    chunkKey: firstKey + i,
    resourceId,
    path: path(i),
    supersededAt: null,
    vector: randomVector(rnd, DIM),
  }));
}

describe("PartitionedVectorBackend specifics", () => {
  const open: PartitionedVectorBackend[] = [];
  function make(opts: Partial<ConstructorParameters<typeof PartitionedVectorBackend>[0]> = {}): PartitionedVectorBackend {
    const b = new PartitionedVectorBackend({ dimension: DIM, yieldEveryMs: 0, ...opts });
    open.push(b);
    return b;
  }
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
  });

  it("scans exactly while a graph is being built, and writes made meanwhile reach the graph", async () => {
    const b = make({ exactThreshold: 100, indexBatchRows: 50 });
    const base = entries(1000, R.a, 1, 1);
    b.upsert(base);
    const q = randomVector(prng(99), DIM);
    const during = await b.search(viewOf([R.a]), q, searchOpts());
    expect(during.exhaustive).toBe(true);
    b.upsert([{ chunkKey: 5000, resourceId: R.a, path: "new.md", supersededAt: null, vector: q }]);
    b.remove([1, 2, 3]);
    await b.whenIndexed();
    const after = await b.search(viewOf([R.a]), q, searchOpts({ topK: 5 }));
    expect(after.exhaustive).toBe(false);
    expect(after.hits[0]).toMatchObject({ chunkKey: 5000, path: "new.md" });
    const all = await b.search(viewOf([R.a]), q, searchOpts({ topK: 1000 }));
    expect(all.hits.some((h) => h.chunkKey <= 3)).toBe(false);
  });

  it("searches below the threshold exactly even when the partition has a graph", async () => {
    const b = make({ exactThreshold: 300 });
    b.upsert([...entries(400, R.a, 1, 2), ...entries(50, R.b, 1000, 3)]);
    await b.whenIndexed();
    expect((await b.search(viewOf([R.b]), randomVector(prng(5), DIM), searchOpts())).exhaustive).toBe(true);
    expect((await b.search(viewOf([R.a]), randomVector(prng(5), DIM), searchOpts())).exhaustive).toBe(false);
  });

  it("falls back to an exact scan when filters leave the graph's candidates short", async () => {
    const b = make({ exactThreshold: 0 });
    const rows = entries(3000, R.a, 1, 4, (i) => (i % 600 === 0 ? `keep/${i}.md` : `drop/${i}.md`));
    b.upsert(rows);
    await b.whenIndexed();
    const view = viewOf([R.a], { includePaths: ["keep/**"] });
    const q = randomVector(prng(6), DIM);
    const o = searchOpts({ topK: 5 });
    const got = await b.search(view, q, o);
    const want = referenceSearch(rows, view, q, o);
    expect(got.hits.map((h) => h.chunkKey)).toEqual(want.map((h) => h.chunkKey));
    expect(got.exhaustive).toBe(true);
  });

  it("past the threshold, a partition without a graph is scanned through its int8 codes and re-scored exactly; too few visible falls back to the exact scan", async () => {
    const dim = 64;
    const b = make({ dimension: dim, exactThreshold: 100, graphMinRows: Number.MAX_SAFE_INTEGER, storeGraph: false });
    const rnd = prng(41);
    const rows = clusteredVectors(rnd, dim, 3000, 30, 0.6).map((vector, i) => ({
      chunkKey: i + 1,
      resourceId: R.a,
      path: i % 500 === 0 ? `keep/${i}.md` : `drop/${i}.md`,
      supersededAt: null,
      vector,
    }));
    b.upsert(rows);
    await b.whenIndexed();
    expect(b.graphCounts.built).toBe(0);
    const view = viewOf([R.a]);
    let found = 0;
    for (let i = 0; i < 30; i++) {
      const q = Float32Array.from(rows[i * 97].vector, (x) => x + 0.3 * (rnd() - 0.5));
      const got = await b.search(view, q, searchOpts());
      expect(got.exhaustive).toBe(false);
      const want = referenceSearch(rows, view, q, searchOpts());
      const scoreOf = new Map(want.map((h) => [h.chunkKey, h.score]));
      for (const h of got.hits) if (scoreOf.has(h.chunkKey)) expect(h.score).toBeCloseTo(scoreOf.get(h.chunkKey)!, 5);
      found += got.hits.filter((h) => scoreOf.has(h.chunkKey)).length;
    }
    expect(found / 300).toBeGreaterThanOrEqual(0.99);
    // Six rows pass the path filter: far fewer than the scan's candidates, so the answer is the exact scan's.
    const narrow = viewOf([R.a], { includePaths: ["keep/**"] });
    const q = randomVector(prng(42), dim);
    const got = await b.search(narrow, q, searchOpts({ topK: 5 }));
    expect(got.hits.map((h) => h.chunkKey)).toEqual(referenceSearch(rows, narrow, q, searchOpts({ topK: 5 })).map((h) => h.chunkKey));
    expect(got.exhaustive).toBe(true);
    // Writes reach the codes: a new row equal to the query comes first; a removed one is gone.
    b.upsert([{ chunkKey: 9_999, resourceId: R.a, path: "new.md", supersededAt: null, vector: q }]);
    const top = (await b.search(view, q, searchOpts())).hits[0];
    expect(top.chunkKey).toBe(9_999);
    expect(top.score).toBeCloseTo(1, 6);
    b.remove([9_999]);
    expect((await b.search(view, q, searchOpts())).hits.some((h) => h.chunkKey === 9_999)).toBe(false);
  });

  it("keeps answering correctly after heavy churn forces a graph rebuild", async () => {
    const b = make({ exactThreshold: 0, indexBatchRows: 400 });
    const rnd = prng(8);
    let rows = entries(500, R.a, 1, 9);
    b.upsert(rows);
    await b.whenIndexed();
    for (let round = 0; round < 5; round++) {
      rows = rows.map((e) => ({ ...e, vector: randomVector(rnd, DIM) }));
      b.upsert(rows);
    }
    await b.whenIndexed();
    const view = viewOf([R.a]);
    let agree = 0;
    for (let i = 0; i < 20; i++) {
      const q = randomVector(rnd, DIM);
      const want = new Set(referenceSearch(rows, view, q, searchOpts()).map((h) => h.chunkKey));
      agree += (await b.search(view, q, searchOpts())).hits.filter((h) => want.has(h.chunkKey)).length;
    }
    expect(agree / 200).toBeGreaterThanOrEqual(0.95);
  });

  it("loadVectors swaps the whole content: a search in flight sees the old content, the next the new", async () => {
    const b = make({ exactThreshold: Number.MAX_SAFE_INTEGER });
    const ids = Array.from({ length: 20 }, (_, i) => `01J0000000000000000000${String(i).padStart(4, "0")}`);
    const q = randomVector(prng(10), DIM);
    const old = ids.map((id, i) => ({ chunkKey: i + 1, resourceId: id, path: "old.md", supersededAt: null, vector: q }));
    await loadVectors(b, old);
    const pending = b.search(viewOf(ids), q, searchOpts({ topK: 100 }));
    await loadVectors(
      b,
      ids.map((id, i) => ({ chunkKey: 1000 + i, resourceId: id, path: "new.md", supersededAt: null, vector: q })),
    );
    const inFlight = await pending;
    expect(inFlight.hits).toHaveLength(20);
    expect(inFlight.hits.every((h) => h.path === "old.md")).toBe(true);
    const next = await b.search(viewOf(ids), q, searchOpts({ topK: 100 }));
    expect(next.hits).toHaveLength(20);
    expect(next.hits.every((h) => h.path === "new.md")).toBe(true);
    expect(b.size).toBe(20);
  });

  it("stays correct while rows are removed from the middle and the buffers shrink", async () => {
    const b = make({ exactThreshold: Number.MAX_SAFE_INTEGER });
    const rows = entries(1000, R.a, 1, 14);
    b.upsert(rows);
    const rnd = prng(15);
    const gone = new Set(rows.filter(() => rnd() < 0.9).map((e) => e.chunkKey));
    b.remove([...gone]);
    const kept = rows.filter((e) => !gone.has(e.chunkKey));
    expect(b.size).toBe(kept.length);
    const q = randomVector(prng(16), DIM);
    const got = await b.search(viewOf([R.a]), q, searchOpts({ topK: 1000 }));
    expect(got.hits.map((h) => h.chunkKey)).toEqual(
      referenceSearch(kept, viewOf([R.a]), q, searchOpts({ topK: 1000 })).map((h) => h.chunkKey),
    );
  });

  it("moves a chunk key that reappears under another resource", async () => {
    const b = make();
    const v = randomVector(prng(12), DIM);
    b.upsert([{ chunkKey: 1, resourceId: R.a, path: "x.md", supersededAt: null, vector: v }]);
    b.upsert([{ chunkKey: 1, resourceId: R.b, path: "y.md", supersededAt: null, vector: v }]);
    expect((await b.search(viewOf([R.a]), v, searchOpts())).hits).toEqual([]);
    expect((await b.search(viewOf([R.b]), v, searchOpts())).hits.map((h) => h.path)).toEqual(["y.md"]);
  });

  it("holds no zero vector (it has no direction, so it can be nobody's neighbour)", async () => {
    const b = make();
    const v = randomVector(prng(13), DIM);
    b.upsert([{ chunkKey: 1, resourceId: R.a, path: "x.md", supersededAt: null, vector: v }]);
    b.upsert([{ chunkKey: 1, resourceId: R.a, path: "x.md", supersededAt: null, vector: new Float32Array(DIM) }]);
    expect(b.size).toBe(0);
    expect((await b.search(viewOf([R.a]), v, searchOpts())).hits).toEqual([]);
  });

  it("refuses writes and searches once closed", async () => {
    const b = make();
    await b.close();
    expect(() => b.upsert([])).toThrow(/closed/);
    await expect(b.search(viewOf([R.a]), randomVector(prng(1), DIM), searchOpts())).rejects.toThrow(/closed/);
  });

  it("a view searched again sees the partitions as they are now: ones added, cleared, replaced and swapped in since", async () => {
    const b = make();
    const view = viewOf([R.a, R.b, R.c]);
    const q = randomVector(prng(140), DIM);
    const near = (chunkKey: number, resourceId: string) => ({ chunkKey, resourceId, path: "near.md", supersededAt: null, vector: q });
    b.upsert(entries(20, R.a, 1, 41));
    expect((await b.search(view, q, searchOpts())).hits.every((h) => h.resourceId === R.a)).toBe(true);
    b.upsert([near(500, R.b)]);
    expect((await b.search(view, q, searchOpts())).hits[0]).toMatchObject({ chunkKey: 500, resourceId: R.b });
    b.clearResource(R.b);
    expect((await b.search(view, q, searchOpts())).hits.some((h) => h.resourceId === R.b)).toBe(false);
    b.upsert([near(501, R.b)]);
    expect((await b.search(view, q, searchOpts())).hits[0]).toMatchObject({ chunkKey: 501, resourceId: R.b });
    b.remove([501]);
    expect((await b.search(view, q, searchOpts())).hits.some((h) => h.resourceId === R.b)).toBe(false);
    await b.replaceResource(R.c, [near(600, R.c)]);
    expect((await b.search(view, q, searchOpts())).hits[0]).toMatchObject({ chunkKey: 600, resourceId: R.c });
    b.replaceAll([near(700, R.b), ...entries(5, R.d, 800, 42)]);
    const swapped = await b.search(view, q, searchOpts());
    expect(swapped.hits.map((h) => h.chunkKey)).toEqual([700]);
  });

  describe("the store-wide graph", () => {
    const ids = Array.from({ length: 10 }, (_, i) => `01J0000000000000000000S${String(i).padStart(3, "0")}`);

    it("answers broad scopes over many small partitions, and follows writes", async () => {
      const b = make({ exactThreshold: 100 });
      const rows = ids.flatMap((id, i) => entries(60, id, i * 1000 + 1, 30 + i));
      b.upsert(rows);
      await b.whenIndexed();
      const view = viewOf(ids);
      const q = randomVector(prng(131), DIM);
      const got = await b.search(view, q, searchOpts());
      expect(got.exhaustive).toBe(false);
      const want = referenceSearch(rows, view, q, searchOpts());
      const wantKeys = new Set(want.map((h) => h.chunkKey));
      expect(got.hits.filter((h) => wantKeys.has(h.chunkKey)).length).toBeGreaterThanOrEqual(9);
      b.upsert([{ chunkKey: 99_999, resourceId: ids[3], path: "fresh.md", supersededAt: null, vector: q }]);
      expect((await b.search(view, q, searchOpts())).hits[0]).toMatchObject({ chunkKey: 99_999, resourceId: ids[3] });
      b.remove([99_999]);
      expect((await b.search(view, q, searchOpts())).hits.some((h) => h.chunkKey === 99_999)).toBe(false);
    });

    it("never lets out-of-scope neighbours through, and falls back to the partitions when they crowd the candidates", async () => {
      // A beam wide enough that the graph's candidates are the crowd (the store graph's default is narrower).
      const b = make({ exactThreshold: 120, hnsw: { expansionSearch: 512 } });
      const q = randomVector(prng(132), DIM);
      const rnd = prng(33);
      const crowd = ids.slice(4).flatMap((id, i) =>
        Array.from({ length: 200 }, (_, j) => ({
          chunkKey: 50_000 + i * 1000 + j,
          resourceId: id,
          path: "near.md",
          supersededAt: null,
          vector: Float32Array.from(q, (x) => x + 0.3 * (rnd() - 0.5)),
        })),
      );
      const mine = ids.slice(0, 4).flatMap((id, i) => entries(100, id, i * 1000 + 1, 40 + i));
      b.upsert([...crowd, ...mine]);
      await b.whenIndexed();
      const view = viewOf(ids.slice(0, 4));
      const got = await b.search(view, q, searchOpts());
      expect(got.hits.every((h) => view.resourceSet.has(h.resourceId))).toBe(true);
      expect(got.hits.map((h) => h.chunkKey)).toEqual(referenceSearch(mine, view, q, searchOpts()).map((h) => h.chunkKey));
      expect(got.exhaustive).toBe(true);
    });
  });

  it("recall@10 of the graph path on a clustered 384-dimension set is at least 0.99", async () => {
    const dim = 384;
    const b = new PartitionedVectorBackend({ dimension: dim, exactThreshold: 0 });
    open.push(b);
    const rnd = prng(21);
    const vectors = clusteredVectors(rnd, dim, 4000, 40, 0.7);
    const rows = vectors.map((vector, i) => ({
      chunkKey: i + 1,
      resourceId: i % 5 === 0 ? R.b : R.a,
      path: "d.md",
      supersededAt: null,
      vector,
    }));
    b.upsert(rows);
    await b.whenIndexed();
    const view = viewOf([R.a, R.b]);
    let found = 0;
    const queries = Array.from({ length: 50 }, (_, i) => Float32Array.from(vectors[i * 37], (x) => x + 0.4 * (rnd() - 0.5)));
    for (const q of queries) {
      const got = await b.search(view, q, searchOpts({ topK: 10 }));
      expect(got.exhaustive).toBe(false);
      const want = new Set(referenceSearch(rows, view, q, searchOpts({ topK: 10 })).map((h) => h.chunkKey));
      found += got.hits.filter((h) => want.has(h.chunkKey)).length;
    }
    expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.99);
    // Building the graph takes seconds on an idle machine and minutes on a loaded one: the time limit
    // only stops a hang (the build's speed is a figure of bench/vector-bench.ts).
  }, 600_000);
});
