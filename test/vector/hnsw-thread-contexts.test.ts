import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { HnswIndex } from "../../src/adapters/kit/vectors/hnsw-index.js";
import { DEFAULT_HNSW_PARAMS } from "../../src/adapters/kit/vectors/hnsw-index.js";
import { viewOver } from "../support/view-over.js";

const DIM = 16;

function unit(seed: number): Float32Array {
  const v = new Float32Array(DIM);
  let x = seed * 9301 + 49297;
  for (let i = 0; i < DIM; i++) {
    x = (x * 233280 + 12345) % 2147483647;
    v[i] = (x / 2147483647) * 2 - 1;
  }
  return v;
}

function rows(keys: number[]): Float32Array {
  const out = new Float32Array(keys.length * DIM);
  keys.forEach((k, i) => {
    const v = unit(k);
    let n = 0;
    for (const x of v) n += x * x;
    n = Math.sqrt(n);
    for (let d = 0; d < DIM; d++) out[i * DIM + d] = v[d] / n;
  });
  return out;
}

describe("usearch thread contexts", () => {
  it("accepts adds of any size in any order", () => {
    const index = new HnswIndex(DIM, DEFAULT_HNSW_PARAMS);
    let key = 1;
    for (const size of [256, 1, 64, 1, 3, 500, 2, 1000, 1]) {
      const keys = Array.from({ length: size }, () => key++);
      expect(() => index.addMany(keys, rows(keys))).not.toThrow();
    }
    expect(index.size).toBe(key - 1);
    expect(index.search(rows([5]).subarray(0, DIM), 1)).toEqual([5]);
  });

  it("builds graphs in the background under many small upserts across partitions (regression: usearch 'Reserve capacity ahead of insertions!' when adds used different thread counts)", async () => {
    // The scenario that failed: 5000 upserts of 4 vectors across 100 resources, default options, so the
    // store-wide graph is built in the background while small writes keep arriving.
    const backend = new PartitionedVectorBackend({ dimension: DIM });
    const resources = Array.from({ length: 100 }, (_, i) => `01JRES${String(i).padStart(20, "0")}`);
    let key = 1;
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      errors.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      for (let i = 0; i < 5000; i++) {
        const resourceId = resources[i % resources.length];
        const entries = Array.from({ length: 4 }, () => {
          const k = key++;
          return { chunkKey: k, resourceId, path: `p/${k}.md`, supersededAt: null, vector: unit(k) };
        });
        backend.upsert(entries);
        if (i % 10 === 0) await new Promise((r) => setImmediate(r));
      }
      for (let i = 0; i < 3000; i++) await new Promise((r) => setImmediate(r));
    } finally {
      process.stderr.write = write;
    }
    expect(errors.filter((e) => e.includes("graph build failed"))).toEqual([]);
    const view = viewOver(resources, { scopeId: "s", owner: "o", projectNames: ["local/api"] });
    const { hits } = await backend.search(view, unit(77), { topK: 1, minScore: 0, now: Date.now(), recentWindowMs: 0 });
    expect(hits[0]?.chunkKey).toBe(77);
    await backend.close();
    // 20,000 graph inserts at the default HNSW settings: minutes of CPU on a loaded 2-core machine.
  }, 300_000);
});
