import { FailedPreconditionError, InvalidArgumentError } from "../../domain/errors.js";
import { MAX_QUERY_LENGTH, requireText } from "../../domain/request-limits.js";
import type { FairEmbedder } from "../shared/fair-embedder.js";

/** How long a query's vector is kept, in ms. */
export const QUERY_EMBEDDING_TTL_MS = 60_000;
/** The most query vectors kept. */
export const QUERY_EMBEDDING_CACHE_SIZE = 1024;

/** Options of the query embedder. */
export interface QueryEmbedderOptions {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/**
 * Embeds search text on the shared fair embedder, in the caller's queue as a query (served before any tenant's
 * bulk work, see FairEmbedder), and keeps each vector a short time per (scope, text): an agent that repeats a
 * query (or pages, or runs hybrid then vector search) does not pay for the model twice. Keyed by scope, so one scope's cache never answers another's, and least recently
 * used first out once full.
 */
export class QueryEmbedder {
  private readonly cache = new Map<string, { vector: Float32Array; at: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly pool: FairEmbedder,
    opts: QueryEmbedderOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? QUERY_EMBEDDING_TTL_MS;
    this.maxEntries = opts.maxEntries ?? QUERY_EMBEDDING_CACHE_SIZE;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The vector of `text` (checked as the request's `field`: not blank, not over the embedder's or the
   * query length limit); UNAVAILABLE when the embedder fails.
   */
  async embed(field: string, text: string, scopeId: string, tenant: string, signal?: AbortSignal): Promise<Float32Array> {
    requireText(field, text, Math.min(MAX_QUERY_LENGTH, this.pool.maxInputChars));
    const key = `${scopeId}\u0000${text}`;
    const hit = this.cache.get(key);
    const now = this.now();
    if (hit && now - hit.at < this.ttlMs) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.vector;
    }
    const [vector] = await this.pool.embed(tenant, [text], signal, "query");
    this.cache.delete(key);
    this.cache.set(key, { vector, at: now });
    while (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return vector;
  }
}

/**
 * What a search that may take text needs to know about the embedder: the query embedder, or undefined when
 * none is configured.
 */
export type MaybeQueryEmbedder = QueryEmbedder | undefined;

/**
 * The query vector of a request that sends `embedding` or `text` (exactly one): `text` goes through the
 * embedder (FAILED_PRECONDITION "no embedder configured" without one); both or neither is INVALID_ARGUMENT.
 * Returns undefined when `embedding` was sent (the caller checks it as before).
 */
export async function embeddingOfText(
  embedder: MaybeQueryEmbedder,
  req: { embedding: readonly number[]; text?: string },
  scopeId: string,
  tenant: string,
  signal?: AbortSignal,
): Promise<Float32Array | undefined> {
  const text = req.text ?? "";
  if (text.length > 0 && req.embedding.length > 0)
    throw new InvalidArgumentError([
      { field: "text", description: "must not be sent with embedding: send one of them" },
      { field: "embedding", description: "must not be sent with text: send one of them" },
    ]);
  if (text.length === 0) return undefined;
  if (!embedder)
    throw new FailedPreconditionError(
      "no embedder configured: send embedding, or start the server with ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL",
    );
  return embedder.embed("text", text, scopeId, tenant, signal);
}
