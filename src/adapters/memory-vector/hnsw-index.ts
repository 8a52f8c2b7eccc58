import { availableParallelism } from "node:os";
import usearch from "usearch";

/** Tuning of the HNSW graphs (usearch). */
export interface HnswParams {
  /** Edges per node (M). */
  connectivity: number;
  /** Beam width while inserting (efConstruction). */
  expansionAdd: number;
  /** Beam width while searching (ef); a search for more neighbours widens it to k. */
  expansionSearch: number;
}

/**
 * Defaults measured on 384-dimension clustered data (bench/vector-bench.ts, a 13k-row partition, top_k
 * 10, after exact re-scoring): M 16 / ef 96 gave recall@10 0.93-0.96, M 16 / ef 200 0.95-0.98, M 24 /
 * ef 200 0.99 at 0.42 ms per search, ef 400 0.996 at 0.53 ms. M 24 / ef 256 sits between the last two.
 */
export const DEFAULT_HNSW_PARAMS: HnswParams = { connectivity: 24, expansionAdd: 128, expansionSearch: 256 };

/**
 * Insertion threads, the same on every call: usearch sizes its per-thread contexts when capacity grows,
 * so an add with more threads than the last growth reserved fails ("Reserve capacity ahead of insertions!").
 */
const ADD_THREADS = Math.max(1, Math.min(availableParallelism(), 4));

/**
 * One HNSW graph over unit vectors, keyed by chunk key. It holds half-precision copies (the exact float32
 * rows stay in the partition and re-score every candidate), and remembers which keys it holds so writes
 * that race a background build are applied exactly once.
 */
export class HnswIndex {
  private readonly index: InstanceType<typeof usearch.Index>;
  private readonly members = new Set<number>();
  /** Removals since the graph was built; many of them degrade it, and the owner then rebuilds it. */
  removals = 0;

  constructor(readonly dimension: number, params: HnswParams) {
    this.index = new usearch.Index({
      dimensions: dimension,
      metric: usearch.MetricKind.IP,
      quantization: usearch.ScalarKind.F16,
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: params.expansionSearch,
      multi: false,
    });
  }

  get size(): number {
    return this.members.size;
  }

  has(key: number): boolean {
    return this.members.has(key);
  }

  /**
   * Adds rows (`vectors` holds `keys.length` unit rows back to back; keys distinct), replacing keys
   * already present.
   */
  addMany(keys: readonly number[], vectors: Float32Array): void {
    if (keys.length === 0) return;
    for (const k of keys) if (this.members.has(k)) this.remove(k);
    this.index.add(BigUint64Array.from(keys, (k) => BigInt(k)), vectors, ADD_THREADS);
    for (const k of keys) this.members.add(k);
  }

  remove(key: number): void {
    if (!this.members.delete(key)) return;
    this.index.remove(BigInt(key));
    this.removals += 1;
  }

  /** The keys of up to `k` approximate nearest neighbours of the unit vector `query`, best first. */
  search(query: Float32Array, k: number): number[] {
    if (this.members.size === 0) return [];
    const m = this.index.search(query, Math.min(k, this.members.size), 1);
    const out = new Array<number>(m.keys.length);
    for (let i = 0; i < m.keys.length; i++) out[i] = Number(m.keys[i]);
    return out;
  }
}
