import type { GraphHolder } from "./graph-holder.js";
import type { HnswIndex } from "./hnsw-index.js";
import type { VectorPartition } from "./vector-partition.js";

/**
 * One HNSW graph over every vector of the store, for searches whose scope covers a large share of it
 * (many small resources, where per-partition graphs do not exist and exact scans add up). Its candidates
 * are post-filtered by scope, so the search fetches more of them the smaller that share is, and falls
 * back to the per-partition path when too few survive. Rows stay in the partitions; this only maps keys
 * to them.
 */
export class StoreGraph implements GraphHolder {
  index: HnswIndex | null = null;
  building: HnswIndex | null = null;
  detached = false;

  constructor(
    private readonly partitionOfKey: ReadonlyMap<number, VectorPartition>,
    private readonly dimension: number,
  ) {}

  get size(): number {
    return this.partitionOfKey.size;
  }

  keySnapshot(): number[] {
    return Array.from(this.partitionOfKey.keys());
  }

  copyRows(keys: readonly number[]): { keys: number[]; vectors: Float32Array } {
    return copyStoreRows(this.partitionOfKey, keys, this.dimension);
  }

  /**
   * Puts the current rows of `keys` into the serving graph; a graph being built drops the ones it holds
   * (their rows changed) and takes them, with every row new since it started, from the background builder,
   * so a bulk load never pays graph insertions before its writes are acknowledged.
   */
  sync(keys: readonly number[]): void {
    if (keys.length === 0 || (!this.index && !this.building)) return;
    if (this.building) for (const k of keys) this.building.remove(k);
    if (!this.index) return;
    const rows = this.copyRows(keys);
    this.index.addMany(rows.keys, rows.vectors);
  }

  /** Drops `key` from the graphs. */
  remove(key: number): void {
    this.index?.remove(key);
    this.building?.remove(key);
  }
}

/**
 * The unit rows of `keys` still held somewhere in the store, back to back, with the keys copied and the
 * ordinal of each one's partition (the store graph and the store cells both read rows this way).
 */
export function copyStoreRows(
  partitionOfKey: ReadonlyMap<number, VectorPartition>,
  keys: readonly number[],
  dimension: number,
): { keys: number[]; vectors: Float32Array; owners: number[] } {
  const found: number[] = [];
  const owners: number[] = [];
  const vectors = new Float32Array(keys.length * dimension);
  for (const k of keys) {
    const p = partitionOfKey.get(k);
    if (p && p.copyRowInto(k, vectors, found.length * dimension)) {
      found.push(k);
      owners.push(p.ordinal);
    }
  }
  return { keys: found, vectors: vectors.subarray(0, found.length * dimension), owners };
}
