import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { prng } from "../support/prng.js";
import { clusteredVectors, R, searchOpts, viewOf } from "./vector-fixtures.js";

const DIM = 32;

describe("saved HNSW graphs", () => {
  let dir: string;
  const open: PartitionedVectorBackend[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-graphs-"));
  });
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rows = (count: number, firstKey = 1): VectorEntry[] =>
    clusteredVectors(prng(firstKey), DIM, count, 8, 0.5).map((vector, i) => ({
      chunkKey: firstKey + i,
      resourceId: R.a,
      path: "d.md",
      supersededAt: null,
      vector,
    }));
  const backend = (connectivity?: number) => {
    const b = new PartitionedVectorBackend({
      dimension: DIM,
      exactThreshold: 64,
      storeGraph: false,
      graphDir: dir,
      hnsw: connectivity ? { connectivity } : undefined,
    });
    open.push(b);
    return b;
  };
  const queries = clusteredVectors(prng(99), DIM, 10, 8, 0.5);

  it("are loaded at the next start instead of rebuilt, and answer as the built graph did", async () => {
    const data = rows(600);
    const first = backend();
    first.replaceAll(data);
    await first.whenIndexed();
    expect(first.graphCounts).toEqual({ loaded: 0, built: 1 });
    const before = [];
    for (const q of queries) before.push(await first.search(viewOf([R.a]), q, searchOpts({ topK: 10 })));
    await first.close();
    open.splice(0);
    expect(readdirSync(dir).sort()).toEqual([`r-${R.a}.keys`, `r-${R.a}.usearch`]);

    const second = backend();
    second.replaceAll(data);
    expect(second.graphCounts).toEqual({ loaded: 1, built: 0 });
    await second.whenIndexed();
    expect(second.graphCounts.built).toBe(0);
    for (let i = 0; i < queries.length; i++) {
      const got = await second.search(viewOf([R.a]), queries[i], searchOpts({ topK: 10 }));
      expect(got.exhaustive).toBe(false);
      expect(got.hits).toEqual(before[i].hits);
    }
  });

  it("are rebuilt when the rows changed since they were saved (a stale graph is never used)", async () => {
    const first = backend();
    first.replaceAll(rows(600));
    await first.whenIndexed();
    await first.close();
    open.splice(0);
    const second = backend();
    second.replaceAll([...rows(600), ...rows(1, 10_000)]);
    await second.whenIndexed();
    expect(second.graphCounts).toEqual({ loaded: 0, built: 1 });
    const got = await second.search(viewOf([R.a]), rows(1, 10_000)[0].vector, searchOpts({ topK: 1 }));
    expect(got.hits[0].chunkKey).toBe(10_000);
  });

  it("are rebuilt when a saved file is corrupt or missing, without failing the start", async () => {
    const data = rows(600);
    const first = backend();
    first.replaceAll(data);
    await first.whenIndexed();
    await first.close();
    open.splice(0);
    writeFileSync(join(dir, `r-${R.a}.usearch`), "not a graph");
    const second = backend();
    second.replaceAll(data);
    await second.whenIndexed();
    expect(second.graphCounts).toEqual({ loaded: 0, built: 1 });
    await second.close();
    open.splice(0);
    rmSync(join(dir, `r-${R.a}.keys`));
    const third = backend();
    third.replaceAll(data);
    await third.whenIndexed();
    expect(third.graphCounts).toEqual({ loaded: 0, built: 1 });
    expect((await third.search(viewOf([R.a]), data[5].vector, searchOpts({ topK: 1 }))).hits[0].chunkKey).toBe(data[5].chunkKey);
  });

  /** Builds and saves the graph of `data` (closing the backend); returns its keys file's path and bytes. */
  const saved = async (data: VectorEntry[], connectivity?: number) => {
    const first = backend(connectivity);
    first.replaceAll(data);
    await first.whenIndexed();
    await first.close();
    open.splice(0);
    const keysPath = join(dir, `r-${R.a}.keys`);
    return { keysPath, raw: readFileSync(keysPath) };
  };
  /** A backend started over `data` with the saved graphs, once its graph is loaded or built. */
  const restarted = async (data: VectorEntry[], connectivity?: number) => {
    const b = backend(connectivity);
    b.replaceAll(data);
    await b.whenIndexed();
    return b;
  };

  it("are rebuilt when saved in an older layout (a graph of another quantization is never read as this one)", async () => {
    const data = rows(600);
    const { keysPath, raw } = await saved(data);
    // The keys file's first word is its layout version: version 1 graphs held half-precision rows.
    expect(new Float64Array(raw.buffer, raw.byteOffset, 1)[0]).toBeGreaterThan(1);
    raw.writeDoubleLE(1, 0);
    writeFileSync(keysPath, raw);
    const second = await restarted(data);
    expect(second.graphCounts).toEqual({ loaded: 0, built: 1 });
    expect((await second.search(viewOf([R.a]), data[7].vector, searchOpts({ topK: 1 }))).hits[0].chunkKey).toBe(data[7].chunkKey);
  });

  it("are rebuilt when saved with another connectivity (a retuned graph is not searched at the old tuning's cost)", async () => {
    const data = rows(600);
    const { raw } = await saved(data, 24);
    expect(Array.from(new Float64Array(raw.buffer, raw.byteOffset, 3))).toEqual([3, DIM, 24]);
    const same = await restarted(data, 24);
    expect(same.graphCounts).toEqual({ loaded: 1, built: 0 });
    await same.close();
    open.splice(0);
    const retuned = await restarted(data, 12);
    expect(retuned.graphCounts).toEqual({ loaded: 0, built: 1 });
    expect((await retuned.search(viewOf([R.a]), data[9].vector, searchOpts({ topK: 1 }))).hits[0].chunkKey).toBe(data[9].chunkKey);
  });

  it("are deleted with their resource's vectors, and a start deletes those nothing will load", async () => {
    const other = "01JBBBBBBBBBBBBBBBBBBBBBBB";
    const mine = rows(600);
    const theirs = rows(600, 5_000).map((e) => ({ ...e, resourceId: other }));
    const first = backend();
    first.replaceAll([...mine, ...theirs]);
    await first.whenIndexed();
    await first.close();
    open.splice(0);
    expect(readdirSync(dir).sort()).toEqual([`r-${R.a}.keys`, `r-${R.a}.usearch`, `r-${other}.keys`, `r-${other}.usearch`]);

    // The resource's vectors go while the server runs: its files go with them.
    const second = backend();
    second.replaceAll([...mine, ...theirs]);
    expect(second.graphCounts).toEqual({ loaded: 2, built: 0 });
    second.clearResource(other);
    expect(readdirSync(dir).sort()).toEqual([`r-${R.a}.keys`, `r-${R.a}.usearch`]);
    second.remove(mine.map((e) => e.chunkKey));
    expect(readdirSync(dir)).toEqual([]);
    await second.close();
    open.splice(0);

    // Files a crash (or an older version) left for resources that are gone, or too small for a graph, and
    // temp files, are swept at the next start; a graph still loadable stays and is loaded.
    const third = backend();
    third.replaceAll(mine);
    await third.whenIndexed();
    await third.close();
    open.splice(0);
    for (const name of [`r-${other}.usearch`, `r-${other}.keys`, `r-${R.b}.keys`, `r-${R.a}.usearch.tmp`])
      writeFileSync(join(dir, name), "left over");
    const fourth = backend();
    fourth.replaceAll([...mine, ...rows(10, 9_000).map((e) => ({ ...e, resourceId: R.b }))]);
    expect(readdirSync(dir).sort()).toEqual([`r-${R.a}.keys`, `r-${R.a}.usearch`]);
    expect(fourth.graphCounts).toEqual({ loaded: 1, built: 0 });
  });
});
