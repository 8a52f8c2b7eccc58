import { AcmsError, UnavailableError, UnimplementedError } from "../../domain/errors.js";
import { guardResults } from "../../domain/leak-guard.js";
import { fuseRrf, type Contribution, type RankedItem, type RankedList } from "../../domain/rrf-fusion.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { formatUkoUri } from "../../domain/uko-uri.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { GraphBackend } from "../../ports/graph-backend.js";
import type { TextBackend } from "../../ports/text-backend.js";
import type { UnitAddress, UnitReader } from "../../ports/unit-reader.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import { searchText } from "../search/text-search.js";
import { searchVectors } from "../search/vector-search.js";
import type { QueryEmbedder } from "../search/query-embedder.js";
import { findGraphEvidence, type GraphUnit } from "./graph-evidence.js";
import { checkHybridRequest, type HybridPlan, type HybridSearchFields, type RagSource } from "./hybrid-request.js";

/** What hybrid search runs on: the three sources, the document store and the unit reader. */
export interface HybridSearchDeps {
  documents: DocumentStore;
  text: TextBackend;
  vector?: VectorBackend;
  graph?: GraphBackend;
  /** Reads graph units that no other source found; absent: graph evidence counts only for units they found. */
  units?: UnitReader;
  embeddingDim: number;
  maxResultsCap: number;
  recentWindowMs: number;
  sparqlTimeoutMs: number;
  now?: () => number;
  /** Embeds `query` for the vector source when the request sends no embedding; absent: no embedder. */
  queryEmbedder?: QueryEmbedder;
  /** Told of a source's unexpected failure (the answer then is partial); default: one line on stderr. */
  onSourceError?: (source: RagSource, err: unknown) => void;
}

/** What a fused result carries besides its scores. */
export interface UnitPayload {
  ukoUri: string;
  resourceId: string;
  path: string;
  content: string;
  metadata: Record<string, string>;
}

/** One fused, explained result. */
export interface HybridResultRecord extends UnitPayload {
  /** The normalised fused score, in [0, 1]. */
  score: number;
  contributions: Contribution<RagSource>[];
}

/** A hybrid answer. */
export interface HybridAnswer {
  results: HybridResultRecord[];
  /** False when a source failed, a source's list was cut short, or top_k cut the fused list. */
  exhaustive: boolean;
  /** The index generation when the search started. */
  generation: bigint;
  /** Sources that failed (or whose backend is not configured), in the order text, vector, graph. */
  failedSources: RagSource[];
  partial: boolean;
}

interface SourceList {
  items: RankedItem<UnitPayload>[];
  exhaustive: boolean;
}

/** Errors that are the caller's doing, not a source's failure: they fail the call as they are. */
function isCallersFault(err: unknown): boolean {
  return (
    err instanceof AcmsError && (err.kind === "invalid_argument" || err.kind === "scope_violation" || err.kind === "permission_denied")
  );
}

const defaultSourceError = (source: RagSource, err: unknown) => {
  if (err instanceof AcmsError) return;
  process.stderr.write(
    `acms: hybrid search: ${source} source failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
};

const docUriOf = (chunkUri: string): string => chunkUri.slice(0, chunkUri.lastIndexOf("#"));

/**
 * Hybrid search: runs the keyword, vector and graph sources concurrently (each asked for a list deeper
 * than top_k), fuses their lists with Reciprocal Rank Fusion (see fuseRrf), and explains every result.
 *
 * Units are chunks (`uko://<res>/<path>#<i>`), so the same chunk found by keyword and vector search fuses
 * into one result. Graph evidence names documents or chunks: a chunk is itself; a document stands for
 * its chunks that the other sources found (each at the document's graph rank), or, when they found
 * none, for its first chunk (`#0`), which then represents the document.
 *
 * A source that fails (or has no backend) is left out of the fusion and listed in `failedSources`; the
 * answer is then partial. Scores are normalised over the sources that answered with at least one unit. Only when every source fails does the call fail: UNIMPLEMENTED when none has
 * a backend, UNAVAILABLE otherwise. Errors that are the caller's (bad arguments, scope) fail the call.
 * Every result passes the leak guard. `tenant` (the caller) queues the graph source's queries in that
 * caller's own queue of a shared graph engine, as a direct SPARQL call would be.
 */
export async function hybridSearch(
  deps: HybridSearchDeps,
  view: ScopedBackendView,
  req: HybridSearchFields,
  signal?: AbortSignal,
  tenant?: string,
): Promise<HybridAnswer> {
  const plan = checkHybridRequest(req, {
    embeddingDim: deps.embeddingDim,
    maxResultsCap: deps.maxResultsCap,
    hasGraph: deps.graph !== undefined,
    hasVector: deps.vector !== undefined,
    hasEmbedder: deps.queryEmbedder !== undefined,
  });
  const generation = await deps.documents.generation();
  const now = (deps.now ?? Date.now)();

  const runs = plan.sources.map((source) => runSource(deps, view, plan, req, source, now, signal, tenant));
  const settled = await Promise.allSettled(runs);
  signal?.throwIfAborted();

  const failedSources: RagSource[] = [];
  const failures: unknown[] = [];
  const answered: Array<{ source: RagSource; list: SourceList | GraphUnit[]; exhaustive: boolean }> = [];
  settled.forEach((s, i) => {
    const source = plan.sources[i];
    if (s.status === "fulfilled") answered.push({ source, list: s.value.list, exhaustive: s.value.exhaustive });
    else {
      if (isCallersFault(s.reason)) throw s.reason;
      (deps.onSourceError ?? defaultSourceError)(source, s.reason);
      failedSources.push(source);
      failures.push(s.reason);
    }
  });
  if (answered.length === 0) {
    const names = failedSources.join(", ");
    if (failures.every((f) => f instanceof UnimplementedError)) {
      throw new UnimplementedError(`no backend is configured for the sources asked for: ${names}`);
    }
    throw new UnavailableError(`every source failed (${names}); retry later`);
  }

  const lists = await toRankedLists(deps, view, answered, now);
  const fused = fuseRrf(lists, { k: plan.rrfK, weights: plan.weights, topK: plan.topK, minScore: plan.minScore });
  const results = guardResults(
    view,
    fused.items.map((f) => ({ ...f.payload, score: f.score, contributions: f.contributions })),
    "rag",
  );
  const partial = failedSources.length > 0;
  const exhaustive = !partial && answered.every((a) => a.exhaustive) && fused.candidates <= plan.topK;
  return { results, exhaustive, generation, failedSources, partial };
}

async function runSource(
  deps: HybridSearchDeps,
  view: ScopedBackendView,
  plan: HybridPlan,
  req: HybridSearchFields,
  source: RagSource,
  now: number,
  signal?: AbortSignal,
  tenant?: string,
): Promise<{ list: SourceList | GraphUnit[]; exhaustive: boolean }> {
  const limits = { maxResultsCap: deps.maxResultsCap, recentWindowMs: deps.recentWindowMs, now: () => now };
  switch (source) {
    case "text": {
      const a = await searchText(
        { ...limits, text: deps.text, documents: deps.documents },
        view,
        { query: plan.query, maxResults: plan.depth },
        signal,
      );
      const items = a.results.map((r) => ({ key: r.ukoUri, score: r.score, payload: payloadOf(r) }));
      return { list: { items, exhaustive: a.exhaustive }, exhaustive: a.exhaustive };
    }
    case "vector": {
      if (!deps.vector) throw new UnimplementedError("no vector backend is configured on this server");
      // No embedding sent: the server's embedder embeds the query (checkHybridRequest allowed it only then).
      const embedding = plan.embedding
        ? req.embedding
        : Array.from(await (deps.queryEmbedder as QueryEmbedder).embed("query", plan.query, view.scopeId, view.principal, signal));
      const a = await searchVectors(
        { ...limits, vector: deps.vector, documents: deps.documents, embeddingDim: deps.embeddingDim },
        view,
        { embedding, topK: plan.depth, minScore: 0 },
        signal,
      );
      const items = a.results.map((r) => ({ key: r.ukoUri, score: r.score, payload: payloadOf(r) }));
      // Fused as a list holding every match only when it does (an exact top `depth` may leave matches out).
      return { list: { items, exhaustive: a.complete }, exhaustive: a.complete };
    }
    case "graph": {
      if (!deps.graph) throw new UnimplementedError("no graph backend is configured on this server");
      const e = await findGraphEvidence(deps.graph, view, plan.query, {
        depth: plan.depth,
        timeoutMs: deps.sparqlTimeoutMs,
        signal,
        tenant,
      });
      return { list: e.units, exhaustive: e.exhaustive };
    }
  }
}

function payloadOf(r: UnitPayload): UnitPayload {
  return { ukoUri: r.ukoUri, resourceId: r.resourceId, path: r.path, content: r.content, metadata: r.metadata };
}

/**
 * The sources' answers as ranked lists of chunks: keyword and vector lists as they are; graph units
 * mapped to chunks (see hybridSearch) and hydrated through the unit reader, units that hold nothing at
 * the scope's visible versions dropped before ranks are given.
 */
async function toRankedLists(
  deps: HybridSearchDeps,
  view: ScopedBackendView,
  answered: Array<{ source: RagSource; list: SourceList | GraphUnit[] }>,
  now: number,
): Promise<RankedList<RagSource, UnitPayload>[]> {
  const found = new Map<string, UnitPayload>();
  const chunksOfDoc = new Map<string, string[]>();
  for (const a of answered) {
    if (Array.isArray(a.list)) continue;
    for (const item of a.list.items) {
      if (found.has(item.key)) continue;
      found.set(item.key, item.payload);
      const doc = docUriOf(item.key);
      const list = chunksOfDoc.get(doc);
      if (list) list.push(item.key);
      else chunksOfDoc.set(doc, [item.key]);
    }
  }
  for (const keys of chunksOfDoc.values())
    keys.sort((x, y) => Number(x.slice(x.lastIndexOf("#") + 1)) - Number(y.slice(y.lastIndexOf("#") + 1)));

  const lists: RankedList<RagSource, UnitPayload>[] = [];
  for (const a of answered) {
    if (!Array.isArray(a.list)) {
      lists.push({ source: a.source, items: a.list.items });
      continue;
    }
    // Each graph unit becomes the chunk keys it stands for; the ones no other source hydrated are read.
    const plan = a.list.map((unit) => {
      if (unit.address.chunkIndex !== undefined) return { unit, keys: [unit.ukoUri] };
      const keys = chunksOfDoc.get(unit.ukoUri);
      return { unit, keys: keys ?? [formatUkoUri(unit.address.resourceId, unit.address.path, 0)] };
    });
    const toRead = new Map<string, UnitAddress>();
    for (const p of plan) {
      for (const key of p.keys) {
        if (found.has(key) || toRead.has(key)) continue;
        const chunkIndex = p.unit.address.chunkIndex ?? 0;
        toRead.set(key, { resourceId: p.unit.address.resourceId, path: p.unit.address.path, chunkIndex });
      }
    }
    const keys = [...toRead.keys()];
    const read =
      (await deps.units?.readUnits([...toRead.values()], { temporal: view.temporalScope, now, recentWindowMs: deps.recentWindowMs })) ?? [];
    const graphFound = new Map<string, UnitPayload>();
    read.forEach((r, i) => {
      if (r) graphFound.set(keys[i], { ukoUri: keys[i], resourceId: r.resourceId, path: r.path, content: r.content, metadata: r.metadata });
    });
    const items: RankedItem<UnitPayload>[] = [];
    let rank = 0;
    for (const p of plan) {
      const present = p.keys.filter((k) => found.has(k) || graphFound.has(k));
      if (present.length === 0) continue;
      rank += 1;
      for (const key of present) items.push({ key, score: p.unit.score, rank, payload: found.get(key) ?? graphFound.get(key)! });
    }
    lists.push({ source: a.source, items });
  }
  return lists;
}
