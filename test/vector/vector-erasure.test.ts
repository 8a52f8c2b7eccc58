import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { viewOf } from "../graph/graph-fixtures.js";

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
