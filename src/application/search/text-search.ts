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
  /** One result per document (resource and path): its best-ranked chunk; `maxResults` counts documents. */
  groupByDocument?: boolean;
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
 * With `group_by_document`, the chunks ranked at most per document asked for: the backend is asked for
 * `max_results` chunks, then four times as many, then up to this many times `max_results` (and never more
 * than four times the server's cap on `max_results`); a search whose chunks crowd into fewer documents than
 * asked answers those, with `exhaustive` false.
 */
export const GROUPED_CHUNKS_PER_RESULT = 16;

/**
 * A scoped keyword search as Search and SearchStream (and hybrid search) answer it: checks the request
 * (`query` not blank, `max_results` in 1..cap), asks the text backend, hydrates chunk text and document
 * metadata from the document store, keeps one result per UKO URI (its best version), orders by score
 * descending then UKO URI, and passes everything through the leak guard. With `groupByDocument`, one result
 * per document, its best-ranked chunk (see GROUPED_CHUNKS_PER_RESULT).
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
  const now = (deps.now ?? Date.now)();
  const ranked = async (chunks: number): Promise<{ ordered: HitRecord[]; exhaustive: boolean }> => {
    const { hits, exhaustive } = await deps.text.search(view, query, {
      maxResults: chunks,
      now,
      recentWindowMs: deps.recentWindowMs,
      signal,
    });
    signal?.throwIfAborted();
    return { ordered: await hydrateHits(deps.documents, hits), exhaustive };
  };
  if (req.groupByDocument !== true) {
    const { ordered, exhaustive } = await ranked(maxResults);
    return { results: guardResults(view, ordered, "text"), exhaustive, generation };
  }
  const most = Math.max(maxResults, Math.min(maxResults * GROUPED_CHUNKS_PER_RESULT, deps.maxResultsCap * 4));
  for (let chunks = maxResults; ; chunks = Math.min(chunks * 4, most)) {
    const { ordered, exhaustive } = await ranked(chunks);
    const documents = bestChunkPerDocument(ordered);
    // Enough documents, or every chunk ranked, or as many chunks as a grouped search ranks: the answer. It is
    // exhaustive only when every chunk was ranked and no document was left out.
    if (documents.length >= maxResults || exhaustive || chunks >= most) {
      const results = documents.slice(0, maxResults);
      return { results: guardResults(view, results, "text"), exhaustive: exhaustive && documents.length <= maxResults, generation };
    }
  }
}

/** The first result of each document (resource and path), in the results' order. */
function bestChunkPerDocument(ordered: readonly HitRecord[]): HitRecord[] {
  const seen = new Set<string>();
  const out: HitRecord[] = [];
  for (const r of ordered) {
    const doc = `${r.resourceId}\u0000${r.path}`;
    if (seen.has(doc)) continue;
    seen.add(doc);
    out.push(r);
  }
  return out;
}
