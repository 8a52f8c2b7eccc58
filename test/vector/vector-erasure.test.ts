import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { viewOf } from "../graph/graph-fixtures.js";
import { prng } from "../support/prng.js";
import { clusteredVectors } from "./vector-fixtures.js";

// eraseResource on the in-process backend: the resource's partition graph file and the store-wide graph (whose
// HNSW nodes keep removed vectors as tombstones) is let go with its file and rebuilt from the rows held.

const DIM = 4;
const A = "01JD0V00000000000000000001";
const B = "01JD0V00000000000000000002";

function rows(resourceId: string, count: number, firstKey: number, seed: number): VectorEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    chunkKey: firstKey + i,
    resourceId,
    path: "d.md",
    supersededAt: null,
    vector: Float32Array.from([seed + i * 0.001, 0.37 + i * 0.0007, seed * 0.5, 0.91]),
  }));
}

it("drops the partition's saved graph and rebuilds the store graph without the erased vectors", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acms-vector-erase-"));
  const b = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 64, graphDir: dir });
  try {
    const a = rows(A, 300, 1, 0.25);
    b.replaceAll([...a, ...rows(B, 300, 1000, 0.75)]);
    await b.whenIndexed();
    await b.close();
    // Saved at close: the partitions' graphs and the store graph, which hold the vectors themselves.
    expect(readdirSync(dir).filter((f) => f.startsWith(`r-${A}`)).length).toBe(2);
  } finally {
    await b.close();
  }
  const again = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 64, graphDir: dir });
  try {
    again.replaceAll([...rows(A, 300, 1, 0.25), ...rows(B, 300, 1000, 0.75)]);
    await again.whenIndexed();
    await again.eraseResource(A);
    expect(readdirSync(dir).filter((f) => f.startsWith(`r-${A}`))).toEqual([]);
    const { hits } = await again.search(viewOf([A, B]), rows(A, 1, 1, 0.25)[0].vector, {
      topK: 50,
      minScore: 0,
      now: Date.now(),
      recentWindowMs: 1000,
    });
    expect(hits.filter((h) => h.resourceId === A)).toEqual([]);
    await again.whenIndexed();
    await again.close();
    // Rebuilt from the rows held, the store graph saved again holds B's 300 keys only.
    expect(readdirSync(dir).filter((f) => f.startsWith(`r-${B}`)).length).toBe(2);
  } finally {
    await again.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `count` rows of `resourceId` around 12 cluster centres of their own (seeded), 32 dimensions. */
function clustered(resourceId: string, count: number, firstKey: number, seed: number): VectorEntry[] {
  return clusteredVectors(prng(seed), 32, count, 12, 0.3).map((vector, i) => ({
    chunkKey: firstKey + i,
    resourceId,
    path: `d/${i % 5}.md`,
    supersededAt: null,
    vector,
  }));
}

it("lets the store-wide cells' centroids go with an erased resource: the saved file is retrained on the rows held", async () => {
  const dirs = [mkdtempSync(join(tmpdir(), "acms-cells-erase-")), mkdtempSync(join(tmpdir(), "acms-cells-reference-"))];
  const open: PartitionedVectorBackend[] = [];
  const make = (dir: string) => {
    const b = new PartitionedVectorBackend({
      dimension: 32,
      exactThreshold: 100,
      storeGraph: false,
      cells: true,
      yieldEveryMs: 0,
      graphDir: dir,
    });
    open.push(b);
    return b;
  };
  const centroidsAt = (dir: string) => join(dir, "cells.f32");
  try {
    const a = clustered(A, 300, 1, 41);
    const rest = clustered(B, 600, 10_000, 42);
    const b = make(dirs[0]);
    b.replaceAll([...a, ...rest]);
    await b.whenIndexed();
    expect(b.cellCounts).toEqual({ trained: 1, loaded: 0 });
    const before = readFileSync(centroidsAt(dirs[0]));
    await b.eraseResource(A);
    // Gone at once (the averages of A's rows are in no file), and in memory: no search is answered by old cells.
    expect(existsSync(centroidsAt(dirs[0]))).toBe(false);
    await b.whenIndexed();
    expect(b.cellCounts).toEqual({ trained: 2, loaded: 0 });
    const after = readFileSync(centroidsAt(dirs[0]));
    expect(after.equals(before)).toBe(false);
    // The same bytes as cells trained on the remaining rows alone (the training is deterministic).
    const reference = make(dirs[1]);
    reference.replaceAll(rest);
    await reference.whenIndexed();
    expect(after.equals(readFileSync(centroidsAt(dirs[1])))).toBe(true);
    // Erasing the rest leaves too few rows for cells: no centroids file at all.
    await b.eraseResource(B);
    await b.whenIndexed();
    expect(existsSync(centroidsAt(dirs[0]))).toBe(false);
  } finally {
    for (const b of open) await b.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});
