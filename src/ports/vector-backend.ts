import type { ScopedBackendView } from "../domain/scoped-backend-view.js";

/** One stored chunk version's vector, keyed by the document store's chunk key. */
export interface VectorEntry {
  /** Stable id of one chunk version (the document store's chunk row id). */
  chunkKey: number;
  resourceId: string;
  path: string;
  /** When this version was superseded (ms since epoch); null while live. */
  supersededAt: number | null;
  /** The embedding, of the deployment's dimension. */
  vector: Float32Array;
}

/** One nearest neighbour: the chunk and its cosine similarity. */
export interface VectorHit {
  chunkKey: number;
  resourceId: string;
  path: string;
  score: number;
}

/** Options of one similarity search; the request's values, already validated. */
export interface VectorSearchOptions {
  topK: number;
  minScore: number;
  /** "now" for temporal filtering (ms since epoch). */
  now: number;
  /** The `recent` window (ms). */
  recentWindowMs: number;
  signal?: AbortSignal;
}

/**
 * The vector search port. Writes are applied after the document store commits; the adapter searches
 * only the partitions of in-scope resources, so scope filtering never costs recall.
 */
export interface VectorBackend {
  readonly dimension: number;
  /** Entries held (every chunk version), when the adapter knows it without a scan: exported as a metric. */
  readonly size?: number;
  /** Adds or replaces entries by chunk key. */
  upsert(entries: readonly VectorEntry[]): void;
  /** Marks chunk versions superseded at `at`. */
  supersede(chunkKeys: readonly number[], at: number): void;
  /** Drops chunk versions. */
  remove(chunkKeys: readonly number[]): void;
  /** Drops every entry of a resource. */
  clearResource(resourceId: string): void;
  /**
   * Replaces every entry of a resource with `entries` (all of that resource), as a full Rebuild does. A
   * search sees the old entries or the new ones, never a mix or none: the new content is built aside,
   * a slice per event-loop turn, and swapped in at once, so a large resource never blocks other calls.
   * Resolves once searches see the new content.
   */
  replaceResource(resourceId: string, entries: readonly VectorEntry[]): Promise<void>;
  /** The topK in-scope entries by cosine (never a negative one), score descending, ties by chunk key. */
  search(view: ScopedBackendView, query: Float32Array, opts: VectorSearchOptions): Promise<{ hits: VectorHit[]; exhaustive: boolean }>;
  close(): Promise<void>;
  /**
   * Erases every entry of a resource for good: as `clearResource`, and any index that keeps removed
   * vectors (HNSW tombstones) or saved copies of them (index files) is rebuilt or deleted, so the vectors
   * are in no memory structure and no file once it resolves. Absent: `clearResource` suffices.
   */
  eraseResource?(resourceId: string): Promise<void>;
}

/**
 * The preconditions of `replaceResource` every adapter checks the same way: each entry has the backend's
 * dimension and belongs to the resource replaced (RangeError naming the first that does not).
 */
export function checkReplacement(resourceId: string, entries: readonly VectorEntry[], dimension: number): void {
  checkDimensions(entries, dimension);
  for (const e of entries) {
    if (e.resourceId !== resourceId) throw new RangeError(`chunk ${e.chunkKey} belongs to resource ${e.resourceId}, not ${resourceId}`);
  }
}

/** The precondition of `upsert` every backend checks before it writes anything: each entry has the backend's dimension. */
export function checkDimensions(entries: readonly VectorEntry[], dimension: number): void {
  for (const e of entries) {
    if (e.vector.length !== dimension)
      throw new RangeError(`entry ${e.chunkKey} has ${e.vector.length} dimensions, the backend ${dimension}`);
  }
}

/** The entries of one `upsert` batch with the last write of each chunk key kept (the port's rule for repeats). */
export function lastWriteOfEachKey(entries: readonly VectorEntry[]): VectorEntry[] {
  const byKey = new Map<number, VectorEntry>();
  for (const e of entries) byKey.set(e.chunkKey, e);
  return [...byKey.values()];
}
