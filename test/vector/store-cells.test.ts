import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { cellCountFor, probesFor } from "../../src/adapters/kit/vectors/store-cells.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { prng } from "../support/prng.js";
import { clusteredVectors, randomVector, referenceSearch, searchOpts, viewOf } from "./vector-fixtures.js";

const DIM = 32;
const ids = Array.from({ length: 12 }, (_, i) => `01J0000000000000000000C${String(i).padStart(3, "0")}`);

/**
 * Rows of `ids`, `perResource` each, drawn around shared cluster centres. Partitions stay under 256 rows, so
 * when the cells cannot answer, the partitions are scanned exactly (`exhaustive`): an answer that is not
 * exhaustive came from the cells (the store graph is off in these tests).
 */
function rows(perResource: number, seed: number, firstKey = 1): VectorEntry[] {
  const vectors = clusteredVectors(prng(seed), DIM, ids.length * perResource, 24, 0.35);
  return vectors.map((vector, i) => ({
    chunkKey: firstKey + i,
    resourceId: ids[i % ids.length],
    path: `d/${i % 7}.md`,
    supersededAt: null,
    vector,
  }));
}

describe("the store-wide cell index", () => {
  const open: PartitionedVectorBackend[] = [];
  function make(): PartitionedVectorBackend {
    const b = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 100, storeGraph: false, cells: true, yieldEveryMs: 0 });
    open.push(b);
    return b;
  }
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
  });

  it("sizes its cells by the square root of the store and reads at least 8 a search", () => {
    expect(cellCountFor(100_000)).toBe(316);
    expect(probesFor(316)).toBe(8);
    expect(probesFor(4096)).toBe(103);
    expect(cellCountFor(10)).toBe(8);
    expect(probesFor(8)).toBe(8);
  });

  it("answers broad and narrow scopes at high recall, only ever from the scope", async () => {
    const b = make();
    const data = rows(100, 7);
    b.upsert(data);
    await b.whenIndexed();
    expect(b.cellStats).toEqual({ cells: cellCountFor(data.length), probes: 8, rows: data.length });
    const queries = Array.from({ length: 30 }, (_, i) => Float32Array.from(data[i * 37].vector, (x) => x + 0.1 * Math.sin(i + x)));
    for (const scope of [ids, ids.slice(0, 5), ids.slice(0, 2)]) {
      const view = viewOf(scope);
      let found = 0;
      let fromCells = 0;
      for (const q of queries) {
        const got = await b.search(view, q, searchOpts());
        if (!got.exhaustive) fromCells += 1;
        expect(got.hits.every((h) => view.resourceSet.has(h.resourceId))).toBe(true);
        const want = new Set(referenceSearch(data, view, q, searchOpts()).map((h) => h.chunkKey));
        found += got.hits.filter((h) => want.has(h.chunkKey)).length;
      }
      expect(fromCells).toBeGreaterThan(queries.length / 2);
      expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.97);
    }
  });

  it("follows writes: a new row, a removed one, one moved out of scope, a cleared resource", async () => {
    const b = make();
    const data = rows(100, 8);
    b.upsert(data);
    await b.whenIndexed();
    const view = viewOf(ids.slice(0, 6));
    const q = randomVector(prng(81), DIM);
    const near = { chunkKey: 90_000, resourceId: ids[2], path: "near.md", supersededAt: null, vector: q };
    b.upsert([near]);
    const added = await b.search(view, q, searchOpts());
    expect(added.exhaustive).toBe(false);
    expect(added.hits[0]).toMatchObject({ chunkKey: 90_000, resourceId: ids[2] });
    b.upsert([{ ...near, resourceId: ids[9] }]);
    expect((await b.search(view, q, searchOpts())).hits.some((h) => h.chunkKey === 90_000)).toBe(false);
    expect((await b.search(viewOf([ids[9], ids[10]]), q, searchOpts())).hits[0]).toMatchObject({ chunkKey: 90_000, resourceId: ids[9] });
    b.remove([90_000]);
    expect((await b.search(viewOf(ids), q, searchOpts())).hits.some((h) => h.chunkKey === 90_000)).toBe(false);
    b.clearResource(ids[3]);
    const left = data.filter((e) => e.resourceId !== ids[3]);
    const after = await b.search(viewOf(ids), q, searchOpts());
    expect(after.hits.some((h) => h.resourceId === ids[3])).toBe(false);
    expect(after.hits.map((h) => h.chunkKey)).toEqual(referenceSearch(left, viewOf(ids), q, searchOpts()).map((h) => h.chunkKey));
  });

  it("keeps rows written while it is being built, and retrains once the store has doubled", async () => {
    const b = make();
    const first = rows(40, 9);
    b.upsert(first);
    // Written while the build runs (it takes a step per turn of the event loop): all of them end up in the cells.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    const more = rows(10, 10, 50_000);
    b.upsert(more);
    b.remove([first[0].chunkKey, first[1].chunkKey]);
    await b.whenIndexed();
    expect(b.cellStats?.rows).toBe(b.size);
    // Sized by the rows held when the build began, before the later writes.
    expect(b.cellStats?.cells).toBe(cellCountFor(first.length));
    const grown = rows(60, 11, 100_000);
    b.upsert(grown);
    await b.whenIndexed();
    expect(b.size).toBe(first.length - 2 + more.length + grown.length);
    expect(b.cellStats).toEqual({ cells: cellCountFor(b.size), probes: 8, rows: b.size });
  });

  it("beside the store graph, a view asks the cells first once they agree with the graph, and not where they do not", async () => {
    const both = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 100, cells: true, yieldEveryMs: 0 });
    open.push(both);
    const clustered = rows(100, 13);
    both.upsert(clustered);
    await both.whenIndexed();
    const view = viewOf(ids);
    const queries = Array.from({ length: 64 }, (_, i) =>
      Float32Array.from(clustered[i * 11].vector, (x, j) => x + 0.05 * Math.cos(i * 7 + j)),
    );
    for (const q of queries) await both.search(view, q, searchOpts());
    // Clustered rows: after its first searches the view is answered by the cells, the graph checking them now and then.
    expect(both.answeredBy.cells).toBeGreaterThan(both.answeredBy.storeGraph);
    expect(both.answeredBy.storeGraph).toBeGreaterThanOrEqual(8);

    // Rows in one dense cone around the query, split over many cells: the cells miss some of the top ten, so
    // the view stays with the graph and the answers keep its recall.
    const cone = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 100, cells: true, yieldEveryMs: 0 });
    open.push(cone);
    const rnd = prng(14);
    const axis = randomVector(rnd, DIM);
    const dense = Array.from({ length: 1200 }, (_, i) => ({
      chunkKey: i + 1,
      resourceId: ids[i % ids.length],
      path: "c.md",
      supersededAt: null,
      vector: Float32Array.from(axis, (x) => 3 * x + randomVector(rnd, 1)[0]),
    }));
    cone.upsert(dense);
    await cone.whenIndexed();
    let found = 0;
    for (let i = 0; i < 64; i++) {
      const q = Float32Array.from(axis, (x) => x + 0.2 * randomVector(rnd, 1)[0]);
      const got = await cone.search(view, q, searchOpts());
      const want = new Set(referenceSearch(dense, view, q, searchOpts()).map((h) => h.chunkKey));
      found += got.hits.filter((h) => want.has(h.chunkKey)).length;
    }
    expect(cone.answeredBy.storeGraph).toBeGreaterThan(cone.answeredBy.cells);
    expect(found / 640).toBeGreaterThanOrEqual(0.95);
  });

  it("a restart takes the centroids saved by the last training, unless the store has doubled or the file is damaged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-cells-"));
    try {
      const start = async (data: VectorEntry[]) => {
        const b = new PartitionedVectorBackend({
          dimension: DIM,
          exactThreshold: 100,
          storeGraph: false,
          cells: true,
          yieldEveryMs: 0,
          graphDir: dir,
        });
        open.push(b);
        b.upsert(data);
        await b.whenIndexed();
        return b;
      };
      const data = rows(60, 15);
      const first = await start(data);
      expect(first.cellCounts).toEqual({ trained: 1, loaded: 0 });
      expect(existsSync(join(dir, "cells.f32"))).toBe(true);
      await first.close();
      const second = await start(data);
      expect(second.cellCounts).toEqual({ trained: 0, loaded: 1 });
      expect(second.cellStats).toEqual({ cells: cellCountFor(data.length), probes: 8, rows: data.length });
      const q = data[17].vector;
      const got = await second.search(viewOf(ids), q, searchOpts());
      expect(got.exhaustive).toBe(false);
      expect(got.hits[0].chunkKey).toBe(data[17].chunkKey);
      await second.close();
      const doubled = await start([...data, ...rows(60, 16, 10_000)]);
      expect(doubled.cellCounts).toEqual({ trained: 1, loaded: 0 });
      await doubled.close();
      writeFileSync(join(dir, "cells.f32"), "not centroids");
      const damaged = await start(data);
      expect(damaged.cellCounts).toEqual({ trained: 1, loaded: 0 });
    } finally {
      for (const b of open.splice(0)) await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("falls back to the partitions when the filters leave too few of its candidates", async () => {
    const b = make();
    const data = rows(100, 12);
    b.upsert(data);
    await b.whenIndexed();
    const q = randomVector(prng(91), DIM);
    // One path in seven: most of the cells' candidates fail the path filter.
    const view = viewOf(ids, { includePaths: ["d/3.md"] });
    const got = await b.search(view, q, searchOpts());
    expect(got.hits.every((h) => h.path === "d/3.md")).toBe(true);
    expect(got.hits.map((h) => h.chunkKey)).toEqual(referenceSearch(data, view, q, searchOpts()).map((h) => h.chunkKey));
  });
});
