import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import type { TemporalScope } from "../../src/domain/scope.js";
import { isVersionVisible } from "../../src/domain/temporal-filter.js";
import type { VectorEntry, VectorHit, VectorSearchOptions } from "../../src/ports/vector-backend.js";
import { gaussian } from "../support/prng.js";
import { viewOver } from "../support/view-over.js";

/** Resource ids used across the vector tests (valid ULIDs). */
export const R = {
  a: "01J00000000000000000000AAA",
  b: "01J00000000000000000000BBB",
  c: "01J00000000000000000000CCC",
  d: "01J00000000000000000000DDD",
};

/** A view over `resourceIds` with optional path globs and temporal setting, as the interceptor builds it. */
export function viewOf(
  resourceIds: readonly string[],
  opts: { includePaths?: string[]; excludePaths?: string[]; temporal?: TemporalScope } = {},
): ScopedBackendView {
  return viewOver(resourceIds, {
    scopeId: "01J0000000000000000000SCOP",
    owner: "tester",
    projectNames: ["local/test"],
    temporalScope: opts.temporal ?? "current",
    includePaths: opts.includePaths ?? [],
    excludePaths: opts.excludePaths ?? [],
  });
}

/** A random vector of `dimension` normal draws. */
export function randomVector(rnd: () => number, dimension: number): Float32Array {
  return Float32Array.from({ length: dimension }, () => gaussian(rnd));
}

/** Vectors drawn around `clusters` random centres, the shape real embeddings have. */
export function clusteredVectors(rnd: () => number, dimension: number, count: number, clusters: number, spread: number): Float32Array[] {
  const centres = Array.from({ length: clusters }, () => randomVector(rnd, dimension));
  return Array.from({ length: count }, () => {
    const c = centres[Math.floor(rnd() * clusters)];
    return Float32Array.from(c, (x) => x + spread * gaussian(rnd));
  });
}

/** The cosine similarity of two vectors, in float64. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The reference answer: brute force over `entries` with the port's rules, to hold adapters against. */
export function referenceSearch(
  entries: readonly VectorEntry[],
  view: ScopedBackendView,
  query: ArrayLike<number>,
  opts: VectorSearchOptions,
): VectorHit[] {
  const minScore = Math.max(0, opts.minScore);
  const hits: VectorHit[] = [];
  for (const e of entries) {
    if (!view.allows(e.resourceId, e.path)) continue;
    if (!isVersionVisible(view.temporalScope, e.supersededAt, opts.now, opts.recentWindowMs)) continue;
    const score = cosine(query, e.vector);
    if (score < minScore) continue;
    hits.push({ chunkKey: e.chunkKey, resourceId: e.resourceId, path: e.path, score });
  }
  hits.sort((x, y) => y.score - x.score || x.chunkKey - y.chunkKey);
  return hits.slice(0, opts.topK);
}

/** Search options with defaults for tests. */
export function searchOpts(over: Partial<VectorSearchOptions> = {}): VectorSearchOptions {
  return { topK: 10, minScore: 0, now: 1_000_000, recentWindowMs: 1000, ...over };
}
