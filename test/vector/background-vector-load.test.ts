import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { UnavailableError } from "../../src/domain/errors.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { prng } from "../support/prng.js";
import { clusteredVectors, R, randomVector, referenceSearch, searchOpts, viewOf } from "./vector-fixtures.js";

const DIM = 16;

function entries(count: number, resourceId: string, firstKey: number, seed: number): VectorEntry[] {
  const rnd = prng(seed);
  return Array.from({ length: count }, (_, i) => ({
    chunkKey: firstKey + i,
    resourceId,
    path: `p/${i % 10}.md`,
    supersededAt: null,
    vector: randomVector(rnd, DIM),
  }));
}

/** Yields `rows` in two halves, waiting between them until `release` is called: a load the test holds open. */
function gatedSource(rows: readonly VectorEntry[]): { source: AsyncIterable<VectorEntry>; release(): void; reachedGate: Promise<void> } {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reachedGate = new Promise<void>((r) => (reached = r));
  async function* source(): AsyncIterable<VectorEntry> {
    const half = Math.floor(rows.length / 2);
    for (const e of rows.slice(0, half)) yield e;
    reached();
    await gate;
    for (const e of rows.slice(half)) yield e;
  }
  return { source: source(), release, reachedGate };
}

describe("PartitionedVectorBackend.load (start-up in the background)", () => {
  const open: PartitionedVectorBackend[] = [];
  const make = (opts: Partial<ConstructorParameters<typeof PartitionedVectorBackend>[0]> = {}) => {
    const b = new PartitionedVectorBackend({ dimension: DIM, yieldEveryMs: 0, ...opts });
    open.push(b);
    return b;
  };
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
  });

  it("holds searches until loaded, then answers over every row; writes made meanwhile are applied after, in order", async () => {
    const b = make({ exactThreshold: Number.MAX_SAFE_INTEGER });
    const a = entries(300, R.a, 1, 1);
    const c = entries(100, R.c, 1000, 2);
    const { source, release, reachedGate } = gatedSource([...a, ...c]);
    const loaded = b.load(source);
    await reachedGate;
    expect(b.loading).toBe(true);
    const q = randomVector(prng(3), DIM);
    let early: Awaited<ReturnType<typeof b.search>> | undefined;
    const searching = b.search(viewOf([R.a, R.b, R.c, R.d]), q, searchOpts({ topK: 1000, now: 2_000 })).then((r) => (early = r));
    const aborted = new AbortController();
    const abandoned = b.search(viewOf([R.a]), q, searchOpts({ signal: aborted.signal }));
    aborted.abort(new Error("caller gone"));
    await expect(abandoned).rejects.toThrow("caller gone");

    // Writes the indexer makes while the rows load (after the store's snapshot was read).
    const added = entries(50, R.b, 5000, 4);
    b.upsert(added);
    b.remove([1, 2, 3]);
    b.supersede([10, 11], 1_000);
    b.clearResource(R.c);
    const moved = { ...a[20], resourceId: R.d };
    b.upsert([moved]);
    const replacedRows = entries(5, R.b, 7000, 5);
    let replaced = false;
    const replacing = b.replaceResource(R.b, replacedRows).then(() => (replaced = true));
    b.upsert([{ ...a[30], path: "renamed.md" }]);
    expect(replaced).toBe(false);
    await Promise.resolve();
    expect(early).toBeUndefined();

    release();
    await loaded;
    await replacing;
    expect(b.loading).toBe(false);
    const now = 2_000;
    const want: VectorEntry[] = [
      ...a
        .filter((e) => e.chunkKey > 3 && e.chunkKey !== moved.chunkKey)
        .map((e) =>
          e.chunkKey === 10 || e.chunkKey === 11
            ? { ...e, supersededAt: 1_000 }
            : e.chunkKey === a[30].chunkKey
              ? { ...e, path: "renamed.md" }
              : e,
        ),
      moved,
      ...replacedRows,
    ];
    expect(b.size).toBe(want.length);
    await searching;
    const wantAll = referenceSearch(want, viewOf([R.a, R.b, R.c, R.d]), q, searchOpts({ topK: 1000, now: 2_000 }));
    expect(early!.hits.map((h) => [h.chunkKey, h.path])).toEqual(wantAll.map((h) => [h.chunkKey, h.path]));
    const all = [R.a, R.b, R.c, R.d];
    for (const temporal of ["current", "all"] as const) {
      const view = viewOf(all, { temporal });
      const opts = searchOpts({ topK: 1000, now });
      const got = await b.search(view, q, opts);
      expect(got.hits.map((h) => [h.chunkKey, h.resourceId, h.path])).toEqual(
        referenceSearch(want, view, q, opts).map((h) => [h.chunkKey, h.resourceId, h.path]),
      );
    }
  });

  it("loads saved graphs in the background after the rows, scanning exactly until then", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-load-graphs-"));
    try {
      const rows = clusteredVectors(prng(7), DIM, 600, 8, 0.5).map((vector, i) => ({
        chunkKey: i + 1,
        resourceId: R.a,
        path: "d.md",
        supersededAt: null,
        vector,
      }));
      const first = make({ exactThreshold: 64, storeGraph: false, graphDir: dir });
      first.replaceAll(rows);
      await first.whenIndexed();
      expect(first.graphCounts).toEqual({ loaded: 0, built: 1 });
      await first.close();

      const second = make({ exactThreshold: 64, storeGraph: false, graphDir: dir });
      await second.load(rows);
      expect(second.graphCounts).toEqual({ loaded: 0, built: 0 });
      const q = rows[42].vector;
      const before = await second.search(viewOf([R.a]), q, searchOpts({ topK: 5 }));
      expect(before.exhaustive).toBe(true);
      expect(before.hits[0].chunkKey).toBe(43);
      await second.whenIndexed();
      expect(second.graphCounts).toEqual({ loaded: 1, built: 0 });
      const after = await second.search(viewOf([R.a]), q, searchOpts({ topK: 5 }));
      expect(after.exhaustive).toBe(false);
      expect(after.hits[0].chunkKey).toBe(43);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers UNAVAILABLE after a load that failed, rather than from part of the rows", async () => {
    const b = make();
    const good = entries(10, R.a, 1, 8);
    async function* broken(): AsyncIterable<VectorEntry> {
      yield* good;
      throw new Error("disk gone");
    }
    await expect(b.load(broken())).rejects.toThrow("disk gone");
    expect(b.loading).toBe(false);
    await expect(b.search(viewOf([R.a]), good[0].vector, searchOpts())).rejects.toThrow(/could not be loaded: disk gone/);
    b.replaceAll(good);
    expect((await b.search(viewOf([R.a]), good[0].vector, searchOpts({ topK: 1 }))).hits[0].chunkKey).toBe(1);
  });

  it("fails the writes and searches still waiting when closed while loading, instead of leaving them hanging", async () => {
    const b = make();
    const { source, release, reachedGate } = gatedSource(entries(20, R.a, 1, 9));
    const loaded = b.load(source);
    await reachedGate;
    const replacing = b.replaceResource(R.b, entries(3, R.b, 100, 10));
    const searching = b.search(viewOf([R.a]), randomVector(prng(11), DIM), searchOpts());
    await b.close();
    release();
    await expect(loaded).rejects.toBeInstanceOf(UnavailableError);
    await expect(replacing).rejects.toBeInstanceOf(UnavailableError);
    await expect(searching).rejects.toBeInstanceOf(UnavailableError);
  });
});
