import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
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
 * Defaults measured on 384-dimension clustered data (bench/vector-bench.ts, the largest resource's 13,360
 * rows, queries drawn near rows of the whole store, top_k 10, 4x over-fetch and exact re-scoring): M 24 /
 * efConstruction 128 / ef 256 gave recall@10 0.984-0.989 (more over-fetch did not help: the misses were
 * never among the graph's candidates), ef 512 0.992, M 32 / efConstruction 256 / ef 512 0.999 at the
 * same build time within noise. Earlier: M 16 / ef 96 gave 0.93-0.96.
 */
export const DEFAULT_HNSW_PARAMS: HnswParams = { connectivity: 32, expansionAdd: 256, expansionSearch: 512 };

/**
 * The version of the `.keys` file layout: [format, dimension, connectivity, graph file bytes, count,
 * ...sorted keys] as float64. Version 3 records the connectivity (M) the graph was built with, so a graph
 * built with other tuning (the store-wide graph moved from M 32 to 16) is rebuilt rather than searched at
 * the wrong cost; version 2 had no connectivity, version 1 graphs held half-precision rows.
 */
const KEYS_FORMAT = 3;
const KEYS_HEADER_WORDS = 5;

/**
 * Insertion threads, the same on every call: usearch sizes its per-thread contexts when capacity grows,
 * so an add with more threads than the last growth reserved fails ("Reserve capacity ahead of insertions!").
 */
const ADD_THREADS = Math.max(1, Math.min(availableParallelism(), 4));

/**
 * One HNSW graph over unit vectors, keyed by chunk key. It holds int8 copies (usearch scales a unit row by
 * 127): usearch's int8 distance runs several times faster than its half-precision one here (a profile of
 * bench/vector-bench.ts showed the half-precision graph searches taking nearly all of a broad search's
 * time). The exact float32 rows stay in the partition and re-score every candidate. It remembers which
 * keys it holds so writes that race a background build are applied exactly once.
 */
export class HnswIndex {
  private readonly index: InstanceType<typeof usearch.Index>;
  private readonly members = new Set<number>();
  /** Removals since the graph was built; many of them degrade it, and the owner then rebuilds it. */
  removals = 0;
  /** Whether the graph changed since it was saved or loaded. */
  dirty = true;

  private readonly connectivity: number;

  constructor(
    readonly dimension: number,
    params: HnswParams,
  ) {
    this.connectivity = params.connectivity;
    this.index = new usearch.Index({
      dimensions: dimension,
      metric: usearch.MetricKind.IP,
      quantization: usearch.ScalarKind.I8,
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
    this.index.add(
      BigUint64Array.from(keys, (k) => BigInt(k)),
      vectors,
      ADD_THREADS,
    );
    for (const k of keys) this.members.add(k);
    this.dirty = true;
  }

  remove(key: number): void {
    if (!this.members.delete(key)) return;
    this.index.remove(BigInt(key));
    this.removals += 1;
    this.dirty = true;
  }

  /**
   * Writes the graph to `<path>.usearch` and its member keys to `<path>.keys` (each through a temp file
   * and a rename). The keys file is written last and records the graph file's size, so a crash between
   * the two leaves a pair that `load` refuses.
   */
  save(path: string): void {
    this.index.save(`${path}.usearch.tmp`);
    renameSync(`${path}.usearch.tmp`, `${path}.usearch`);
    const keys = Float64Array.from([...this.members].sort((a, b) => a - b));
    const header = Float64Array.of(KEYS_FORMAT, this.dimension, this.connectivity, statSync(`${path}.usearch`).size, keys.length);
    writeFileSync(`${path}.keys.tmp`, Buffer.concat([Buffer.from(header.buffer), Buffer.from(keys.buffer)]));
    renameSync(`${path}.keys.tmp`, `${path}.keys`);
    this.dirty = false;
  }

  /**
   * The graph saved at `path`, when it holds exactly `keys` (chunk keys are never reused, so the same keys
   * mean the same vectors) at this dimension and connectivity; undefined when it is missing, stale, built
   * with other tuning, or does not load.
   */
  static load(path: string, dimension: number, params: HnswParams, keys: readonly number[]): HnswIndex | undefined {
    try {
      const raw = readFileSync(`${path}.keys`);
      const words = new Float64Array(raw.buffer, raw.byteOffset, Math.floor(raw.length / 8));
      if (words.length < KEYS_HEADER_WORDS || words[0] !== KEYS_FORMAT) return undefined;
      const [, dim, connectivity, graphBytes, count] = words;
      if (dim !== dimension || connectivity !== params.connectivity || count !== keys.length || words.length !== KEYS_HEADER_WORDS + count)
        return undefined;
      if (statSync(`${path}.usearch`).size !== graphBytes) return undefined;
      const sorted = [...keys].sort((a, b) => a - b);
      for (let i = 0; i < count; i++) if (words[KEYS_HEADER_WORDS + i] !== sorted[i]) return undefined;
      const graph = new HnswIndex(dimension, params);
      graph.index.load(`${path}.usearch`);
      if (graph.index.size() !== count) return undefined;
      for (const k of sorted) graph.members.add(k);
      graph.dirty = false;
      return graph;
    } catch {
      return undefined;
    }
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
