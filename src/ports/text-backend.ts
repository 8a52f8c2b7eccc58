import type { ScopedBackendView } from "../domain/scoped-backend-view.js";
import type { ChunkRecord } from "./document-store.js";

/** One keyword hit: a chunk version and its normalised score in [0, 1]. */
export interface TextHit {
  chunkKey: number;
  resourceId: string;
  path: string;
  score: number;
  /** The chunk itself, when the backend read it with the hit (the same store): spares the caller a second look-up. */
  chunk?: ChunkRecord;
}

/** Options of one keyword search; the request's values, already validated. */
export interface TextSearchOptions {
  maxResults: number;
  /** "now" for temporal filtering (ms since epoch). */
  now: number;
  /** The `recent` window (ms). */
  recentWindowMs: number;
  signal?: AbortSignal;
}

/**
 * The keyword search port (owned by the indexing area; this file is the agreed minimum, extend it).
 * The scope is pushed into the query (only in-scope resources, paths and versions are ranked), never
 * applied as a post-filter over a global top-k.
 */
export interface TextBackend {
  /** True when the engine has its own keyword index (FTS5, PostgreSQL); false means callers use the in-memory BM25 fallback. */
  readonly hasNativeKeywordSearch: boolean;
  /** Hits by descending score (ties: the caller sorts by uko_uri after hydration). */
  search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }>;
}
