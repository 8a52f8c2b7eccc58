import { InvalidArgumentError, UnimplementedError } from "../../domain/errors.js";
import { guardResults } from "../../domain/leak-guard.js";
import { requireEmbedding, resolveCount, resolveMinScore } from "../../domain/request-limits.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { isVersionVisible } from "../../domain/temporal-filter.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import { hydrateHits, type HitRecord } from "./hydrate-hits.js";
import { embeddingOfText, type QueryEmbedder } from "./query-embedder.js";

/** A scoped similarity answer. */
export interface VectorAnswer {
  /** Scores are cosine similarities, in [0, 1]. */
  results: HitRecord[];
  /**
   * Whether the results are exactly the `top_k` nearest in scope (all of them when fewer): false when an
   * approximate index chose the candidates or the re-fetch limit cut the de-duplicated list short. `top_k`
   * itself cuts nothing: the k nearest are the answer asked for.
   */
  exhaustive: boolean;
  /** Whether the results hold every in-scope match (exhaustive, and nothing past `top_k`): hybrid search fuses on it. */
  complete: boolean;
  /** The index generation when the search started. */
  generation: bigint;
}

/** The fields of a similarity search request (SimilaritySearch and SimilaritySearchStream). */
export interface VectorSearchRequest {
  embedding: readonly number[];
  /** Text to embed with the server's embedder instead of `embedding` (one of the two; empty: not sent). */
  text?: string;
  topK?: number;
  minScore?: number;
}

/** What a similarity search runs on. */
export interface VectorSearchDeps {
  /** Absent when no vector backend is configured: every call is UNIMPLEMENTED. */
  vector?: VectorBackend;
  /** Hydrates hits and names the generation searched. */
  documents: Pick<DocumentStore, "getChunks" | "generation">;
  embeddingDim: number;
  maxResultsCap: number;
  recentWindowMs: number;
  now?: () => number;
  /** Embeds `text` requests; absent: no embedder is configured (`text` is FAILED_PRECONDITION). */
  queryEmbedder?: QueryEmbedder;
}

/** The default `top_k`. */
export const DEFAULT_TOP_K = 20;

/**
 * How far the backend's k may grow while de-duplicating versions: several versions of one chunk (under
 * `recent` or `all` scopes) share a UKO URI and count once, so the backend is asked again for more
 * neighbours, up to this multiple of top_k.
 */
const MAX_REFETCH_FACTOR = 16;

/**
 * A scoped similarity search as SimilaritySearch and SimilaritySearchStream (and hybrid search) answer
 * it: checks the request (`embedding` of the deployment's dimension, or `text` embedded by the server's
 * embedder in the caller's fair queue, never both, `top_k` in 1..cap, `min_score` in
 * [0, 1]), asks the vector backend for the nearest in-scope chunk versions, hydrates text and metadata
 * from the document store, keeps one result per UKO URI (its best version), orders by cosine descending
 * then UKO URI, and passes everything through the leak guard.
 */
export async function searchVectors(
  deps: VectorSearchDeps,
  view: ScopedBackendView,
  req: VectorSearchRequest,
  signal?: AbortSignal,
): Promise<VectorAnswer> {
  const vector = deps.vector;
  if (!vector) throw new UnimplementedError("no vector backend is configured on this server");
  const embedded = await embeddingOfText(deps.queryEmbedder, req, view.scopeId, view.principal, signal);
  if (!embedded && req.embedding.length === 0) throw InvalidArgumentError.field("embedding", "must not be empty (send embedding, or text)");
  const query = embedded ?? requireEmbedding("embedding", req.embedding, deps.embeddingDim);
  const topK = resolveCount("top_k", req.topK, DEFAULT_TOP_K, deps.maxResultsCap);
  const minScore = resolveMinScore("min_score", req.minScore);
  const generation = await deps.documents.generation();
  const now = (deps.now ?? Date.now)();
  const maxFetch = topK * MAX_REFETCH_FACTOR + 1;
  // One more than asked, so a full page tells whether top_k cut the answer short (exhaustive).
  let fetch = view.temporalScope === "current" ? topK + 1 : Math.min(topK * 2 + 1, maxFetch);
  for (;;) {
    const answer = await vector.search(view, query, { topK: fetch, minScore, now, recentWindowMs: deps.recentWindowMs, signal });
    signal?.throwIfAborted();
    const ordered = await hydrateHits(deps.documents, answer.hits, (chunk) =>
      isVersionVisible(view.temporalScope, chunk.supersededAt, now, deps.recentWindowMs),
    );
    const backendExhausted = answer.hits.length < fetch;
    if (ordered.length >= topK || backendExhausted || fetch >= maxFetch) {
      const results = guardResults(view, ordered.slice(0, topK), "vector");
      // An exact backend answer of `fetch` versions holds the exact top k URIs once it names k of them (a URI
      // it left out scores below every version it returned), or when it returned every version in scope.
      const exhaustive = answer.exhaustive && (ordered.length >= topK || backendExhausted);
      return { results, exhaustive, complete: answer.exhaustive && backendExhausted && ordered.length <= topK, generation };
    }
    fetch = Math.min(fetch * 4, maxFetch);
  }
}
