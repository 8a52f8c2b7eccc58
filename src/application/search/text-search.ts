import { requireText, resolveCount } from "../../domain/request-limits.js";
import { guardResults } from "../../domain/leak-guard.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { TextBackend } from "../../ports/text-backend.js";
import { hydrateHits, type HitRecord } from "./hydrate-hits.js";

/** A scoped keyword answer. */
export interface TextAnswer {
  results: HitRecord[];
  exhaustive: boolean;
  /** The index generation when the search started. */
  generation: bigint;
}

/** The fields of a keyword search request (Search and SearchStream). */
export interface TextSearchRequest {
  query: string;
  maxResults?: number;
}

/** What a keyword search runs on. */
export interface TextSearchDeps {
  text: TextBackend;
  documents: DocumentStore;
  maxResultsCap: number;
  recentWindowMs: number;
  now?: () => number;
}

/** The default `max_results`. */
export const DEFAULT_MAX_RESULTS = 20;

/**
 * A scoped keyword search as Search and SearchStream (and hybrid search) answer it: checks the request
 * (`query` not blank, `max_results` in 1..cap), asks the text backend, hydrates chunk text and document
 * metadata from the document store, keeps one result per UKO URI (its best version), orders by score
 * descending then UKO URI, and passes everything through the leak guard.
 */
export async function searchText(
  deps: TextSearchDeps,
  view: ScopedBackendView,
  req: TextSearchRequest,
  signal?: AbortSignal,
): Promise<TextAnswer> {
  const query = requireText("query", req.query);
  const maxResults = resolveCount("max_results", req.maxResults, DEFAULT_MAX_RESULTS, deps.maxResultsCap);
  const generation = await deps.documents.generation();
  const { hits, exhaustive } = await deps.text.search(view, query, {
    maxResults,
    now: (deps.now ?? Date.now)(),
    recentWindowMs: deps.recentWindowMs,
    signal,
  });
  signal?.throwIfAborted();
  const ordered = await hydrateHits(deps.documents, hits);
  return { results: guardResults(view, ordered, "text"), exhaustive, generation };
}
