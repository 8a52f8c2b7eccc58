// The one wire type of the application layer: sources and weights arrive as the contract's enum, whose
// values and names are what the checks validate and name in their errors, so it is taken as is here.
import { Source } from "../../../gen/acms/v1/rag_pb.js";
import { InvalidArgumentError } from "../../domain/errors.js";
import { requireEmbedding, requireText, resolveCount, resolveMinScore } from "../../domain/request-limits.js";
import { DEFAULT_RRF_K } from "../../domain/rrf-fusion.js";

/** A retrieval source, as the fusion sees it. */
export type RagSource = "text" | "vector" | "graph";

/** The wire enum of each source, and back. */
export const SOURCE_OF: Readonly<Record<RagSource, Source>> = { text: Source.TEXT, vector: Source.VECTOR, graph: Source.GRAPH };
const SOURCE_FROM: ReadonlyMap<Source, RagSource> = new Map([
  [Source.TEXT, "text"],
  [Source.VECTOR, "vector"],
  [Source.GRAPH, "graph"],
]);

/** The fields HybridSearch and HybridSearchStream share. */
export interface HybridSearchFields {
  query: string;
  embedding: readonly number[];
  topK?: number;
  minScore?: number;
  rrfK?: number;
  sources: readonly Source[];
  weights: readonly { source: Source; weight: number }[];
}

/** A checked hybrid request: every value resolved to its default or validated. */
export interface HybridPlan {
  query: string;
  /** The query embedding, when one was sent. */
  embedding?: Float32Array;
  topK: number;
  minScore: number;
  rrfK: number;
  /** The sources to run, in the fixed order text, vector, graph. */
  sources: RagSource[];
  /** Whether the caller named the sources (else: every source that applies). */
  explicitSources: boolean;
  weights: Map<RagSource, number>;
  /** How deep each source's list is before fusion. */
  depth: number;
}

/** What the checks need to know of the deployment. */
export interface HybridLimits {
  embeddingDim: number;
  maxResultsCap: number;
  /** Whether a graph backend runs (an unnamed source list includes graph only then). */
  hasGraph: boolean;
  /** Whether a vector backend runs (an unnamed source list includes vector only then). */
  hasVector: boolean;
  /** Whether the server embeds text: then a request without `embedding` has `query` embedded for the vector source. */
  hasEmbedder?: boolean;
}

/** The default top_k. */
export const DEFAULT_HYBRID_TOP_K = 20;

/** The least depth of each source's list: fusion needs evidence beyond the top_k to rank well. */
export const MIN_SOURCE_DEPTH = 50;

/**
 * Checks a HybridSearch request and resolves its defaults: `query` not blank; `top_k` in 1..cap (default
 * 20); `rrf_k` in 1..cap (default 60); `min_score` in [0, 1]; `embedding`, when sent, of the deployment's
 * dimension; `sources` without SOURCE_UNSPECIFIED (duplicates are harmless), and SOURCE_VECTOR only with an
 * embedding or an embedder (which then embeds `query`); `weights` finite, >= 0, one per source at most, and not all zero. With no sources named,
 * every source that applies runs: text, vector when an embedding was sent (or the server embeds) and a vector backend runs,
 * graph when a graph backend runs. Each source is asked for max(3 × top_k, 50) units (capped).
 */
export function checkHybridRequest(req: HybridSearchFields, limits: HybridLimits): HybridPlan {
  const query = requireText("query", req.query);
  const topK = resolveCount("top_k", req.topK, DEFAULT_HYBRID_TOP_K, limits.maxResultsCap);
  const rrfK = resolveCount("rrf_k", req.rrfK, DEFAULT_RRF_K, limits.maxResultsCap);
  const minScore = resolveMinScore("min_score", req.minScore);
  const embedding = req.embedding.length > 0 ? requireEmbedding("embedding", req.embedding, limits.embeddingDim) : undefined;

  const named = new Set<RagSource>();
  req.sources.forEach((s, i) => {
    const source = SOURCE_FROM.get(s);
    if (!source)
      throw InvalidArgumentError.field(`sources[${i}]`, `must be SOURCE_TEXT, SOURCE_VECTOR or SOURCE_GRAPH, got ${Source[s] ?? s}`);
    named.add(source);
  });
  if (named.has("vector") && !embedding && !limits.hasEmbedder) {
    throw InvalidArgumentError.field("embedding", "must be sent when SOURCE_VECTOR is asked for (the server has no embedder)");
  }
  const explicitSources = named.size > 0;
  const wanted = explicitSources
    ? named
    : new Set<RagSource>([
        "text",
        ...((embedding || limits.hasEmbedder) && limits.hasVector ? (["vector"] as const) : []),
        ...(limits.hasGraph ? (["graph"] as const) : []),
      ]);
  const sources = (["text", "vector", "graph"] as const).filter((s) => wanted.has(s));

  const weights = new Map<RagSource, number>();
  req.weights.forEach((w, i) => {
    const source = SOURCE_FROM.get(w.source);
    if (!source)
      throw InvalidArgumentError.field(
        `weights[${i}].source`,
        `must be SOURCE_TEXT, SOURCE_VECTOR or SOURCE_GRAPH, got ${Source[w.source] ?? w.source}`,
      );
    if (!Number.isFinite(w.weight) || w.weight < 0)
      throw InvalidArgumentError.field(`weights[${i}].weight`, `must be a finite number >= 0, got ${w.weight}`);
    if (weights.has(source)) throw InvalidArgumentError.field(`weights[${i}].source`, `${Source[w.source]} is weighted twice`);
    weights.set(source, w.weight);
  });
  if (sources.every((s) => (weights.get(s) ?? 1) === 0)) {
    throw InvalidArgumentError.field("weights", "must not weigh every source searched 0");
  }
  const depth = Math.min(Math.max(topK * 3, MIN_SOURCE_DEPTH), limits.maxResultsCap);
  return { query, embedding, topK, minScore, rrfK, sources, explicitSources, weights, depth };
}
