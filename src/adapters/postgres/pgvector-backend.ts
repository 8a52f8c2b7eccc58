import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { TemporalScope } from "../../domain/scope.js";
import { supersededCutoff } from "../../domain/temporal-filter.js";
import {
  checkDimensions,
  checkReplacement,
  lastWriteOfEachKey,
  type VectorBackend,
  type VectorEntry,
  type VectorHit,
  type VectorSearchOptions,
} from "../../ports/vector-backend.js";
import { insertVectorRows } from "./postgres-document-store.js";
import { withSchemaLock } from "./postgres-migrations.js";
import type { PostgresClient, PostgresPool } from "./postgres-pool.js";
import { assertVectorQuery } from "../kit/vectors/vector-query-checks.js";
import { WriteQueue } from "../kit/vectors/write-queue.js";
import { vectorFromBytes } from "../kit/vectors/vector-bytes.js";
import { l2Norm } from "../kit/vectors/vector-math.js";

/** In-scope vectors up to which a search is an exact scan (recall 1); above, HNSW with iterative scan. */
export const PGVECTOR_EXACT_THRESHOLD = 10_000;
/** HNSW candidates fetched per wanted result before exact re-ranking. */
const OVERFETCH = 4;
/** The HNSW search breadth (pgvector's default is 40; a wide list keeps recall >= 0.99 on large scopes). */
const EF_SEARCH = 200;
/** pgvector's largest `hnsw.ef_search`. */
const MAX_EF_SEARCH = 1000;

/**
 * The HNSW search breadth for a scope holding `inScope` of the table's `total` vectors (an estimate; 0 when
 * unknown): EF_SEARCH over the scope's share, so a scope of many small partitions (a quarter of the table
 * and less) still finds its true neighbours among the mostly out-of-scope rows the graph walks past. At
 * most pgvector's limit; the limit when the table's size is unknown.
 */
export function efSearchFor(inScope: number, total: number, topK: number): number {
  const floor = Math.max(EF_SEARCH, topK * OVERFETCH);
  if (!(total > 0)) return Math.max(MAX_EF_SEARCH, floor);
  const share = Math.min(1, Math.max(inScope, 1) / total);
  return Math.min(Math.max(MAX_EF_SEARCH, floor), Math.max(floor, Math.ceil(EF_SEARCH / share)));
}
/** Rows read per page of an exact scan with a path filter. */
const EXACT_PAGE = 512;

/** Options of the pgvector backend. */
export interface PgvectorBackendOptions {
  /** In-scope vector count up to which a search is exact (default PGVECTOR_EXACT_THRESHOLD; 0 forces HNSW). */
  exactThreshold?: number;
  /**
   * False when the document store writes `chunk_vectors` in its own transactions (the server's setup:
   * crash-safe, one committed state), which makes this backend's write methods no-ops; true (default)
   * for a standalone backend whose writes go to the table.
   */
  ownWrites?: boolean;
}

/** Whether the database offers the `vector` extension (installed or installable). */
export async function hasPgvector(pool: PostgresPool): Promise<boolean> {
  const { rows } = await pool.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  return rows.length > 0;
}

/**
 * Creates the `vector` extension, the `chunk_vectors` table of `dimension` and its HNSW (cosine) index,
 * under the schema lock (several servers may start at once). A table of another dimension is refused.
 */
export async function ensureVectorTable(pool: PostgresPool, dimension: number): Promise<void> {
  await withSchemaLock(pool, async (c) => {
    await c.query("CREATE EXTENSION IF NOT EXISTS vector");
    await c.query(`CREATE TABLE IF NOT EXISTS chunk_vectors (
      chunk_key bigint PRIMARY KEY,
      resource_id text COLLATE "C" NOT NULL,
      path text COLLATE "C" NOT NULL,
      superseded_at bigint,
      embedding vector(${dimension}) NOT NULL
    )`);
    const { rows } = await c.query<{ dim: number }>(
      "SELECT atttypmod AS dim FROM pg_attribute WHERE attrelid = 'chunk_vectors'::regclass AND attname = 'embedding'",
    );
    if (rows[0].dim !== dimension) {
      throw new Error(
        `chunk_vectors holds ${rows[0].dim}-dimensional vectors, the server is configured for ${dimension} (ACMS_EMBEDDING_DIM)`,
      );
    }
    await c.query("CREATE INDEX IF NOT EXISTS chunk_vectors_by_resource ON chunk_vectors (resource_id)");
    await c.query("CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops)");
    await reconcileVectorTable(c);
  });
}

/**
 * Brings `chunk_vectors` in line with the chunk rows, for a database that ran without the extension for
 * a while: rows of dropped chunks go, supersession times are copied, missing vectors are added (a page
 * at a time). A no-op when the document store kept the table all along.
 */
async function reconcileVectorTable(c: PostgresClient): Promise<void> {
  await c.query("DELETE FROM chunk_vectors v WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_key = v.chunk_key)");
  await c.query(
    "UPDATE chunk_vectors v SET superseded_at = c.superseded_at FROM chunks c WHERE c.chunk_key = v.chunk_key AND c.superseded_at IS DISTINCT FROM v.superseded_at",
  );
  for (let after = 0; ;) {
    const { rows } = await c.query<{
      chunk_key: number;
      resource_id: string;
      path: string;
      superseded_at: number | null;
      embedding: Buffer;
    }>(
      `SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunks c
        WHERE embedding IS NOT NULL AND chunk_key > $1 AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_key = c.chunk_key)
        ORDER BY chunk_key LIMIT 1000`,
      [after],
    );
    if (rows.length === 0) return;
    after = rows[rows.length - 1].chunk_key;
    const entries = rows.map((r) => ({
      chunkKey: r.chunk_key,
      resourceId: r.resource_id,
      path: r.path,
      supersededAt: r.superseded_at,
      vector: vectorFromBytes(r.embedding),
    }));
    await insertVectorRows(c, entries);
  }
}

/** pgvector's text form of a vector. */
function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v).join(",")}]`;
}

/** The visible-version condition; `cutoff` names the placeholder of the `recent` cutoff. */
function temporalCondition(temporal: TemporalScope, cutoff: string): string {
  if (temporal === "all") return "TRUE";
  if (temporal === "recent") return `(superseded_at IS NULL OR superseded_at >= ${cutoff}::bigint)`;
  return "superseded_at IS NULL";
}

interface HitRow {
  chunk_key: number;
  resource_id: string;
  path: string;
  distance: number;
}

/**
 * Vector search inside PostgreSQL with pgvector (`chunk_vectors`, cosine distance). The scope is in the
 * query (resource ids, visible versions). A scope of at most `exactThreshold` vectors is scanned exactly
 * (the HNSW index is switched off for that query), so small scopes have recall 1 whatever the rest of the
 * table holds; larger ones use the HNSW index with pgvector 0.8's iterative scan (`relaxed_order`), so
 * filtering by scope never starves the index of in-scope candidates, fetch several candidates per
 * result and re-rank them exactly. Path filters are applied to the ranked rows page by page, as the
 * embedded backend applies them. Scores are cosine similarities clamped to [0, 1]; ties go by chunk key.
 *
 * Writes are synchronous on the port: they are queued, in order, and every search waits for the queue
 * first, so a search sees every write made before it; a failed write fails the next search.
 */
export class PgvectorBackend implements VectorBackend {
  private readonly writes = new WriteQueue();
  private readonly exactThreshold: number;
  private readonly ownWrites: boolean;

  constructor(
    private readonly pool: PostgresPool,
    readonly dimension: number,
    opts: PgvectorBackendOptions = {},
  ) {
    this.exactThreshold = opts.exactThreshold ?? PGVECTOR_EXACT_THRESHOLD;
    this.ownWrites = opts.ownWrites ?? true;
  }

  upsert(entries: readonly VectorEntry[]): void {
    checkDimensions(entries, this.dimension);
    if (!this.ownWrites || entries.length === 0) return;
    // A zero vector has no direction and is not searchable: its key is removed instead.
    const last = lastWriteOfEachKey(entries);
    const kept = last.filter((e) => l2Norm(e.vector) > 0);
    const zero = last.filter((e) => l2Norm(e.vector) === 0).map((e) => e.chunkKey);
    this.writes.enqueue(async () => {
      if (zero.length > 0) await this.pool.query("DELETE FROM chunk_vectors WHERE chunk_key = ANY($1::bigint[])", [zero]);
      const client = await this.pool.connect();
      try {
        await insertVectorRows(client, kept);
      } finally {
        client.release();
      }
    });
  }

  supersede(chunkKeys: readonly number[], at: number): void {
    if (!this.ownWrites || chunkKeys.length === 0) return;
    const keys = [...chunkKeys];
    this.writes.enqueue(async () => {
      await this.pool.query("UPDATE chunk_vectors SET superseded_at = $2 WHERE chunk_key = ANY($1::bigint[])", [keys, at]);
    });
  }

  remove(chunkKeys: readonly number[]): void {
    if (!this.ownWrites || chunkKeys.length === 0) return;
    const keys = [...chunkKeys];
    this.writes.enqueue(async () => {
      await this.pool.query("DELETE FROM chunk_vectors WHERE chunk_key = ANY($1::bigint[])", [keys]);
    });
  }

  clearResource(resourceId: string): void {
    if (!this.ownWrites) return;
    this.writes.enqueue(async () => {
      await this.pool.query("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]);
    });
  }

  /** Deletes the resource's rows and inserts `entries` in one transaction, so a search sees one or the other. */
  async replaceResource(resourceId: string, entries: readonly VectorEntry[]): Promise<void> {
    checkReplacement(resourceId, entries, this.dimension);
    if (!this.ownWrites) return;
    const kept = lastWriteOfEachKey(entries).filter((e) => l2Norm(e.vector) > 0);
    this.writes.enqueue(async () => {
      const client = await this.pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]);
        await insertVectorRows(client, kept);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    });
    await this.flushed();
  }

  /** Resolves when every queued write is in the database. */
  async flushed(): Promise<void> {
    await this.writes.flushed();
  }

  async search(
    view: ScopedBackendView,
    query: Float32Array,
    opts: VectorSearchOptions,
  ): Promise<{ hits: VectorHit[]; exhaustive: boolean }> {
    assertVectorQuery(query, this.dimension, opts);
    await this.flushed();
    opts.signal?.throwIfAborted();
    if (view.resourceIds.length === 0 || l2Norm(query) === 0) return { hits: [], exhaustive: true };
    const minScore = Math.max(0, opts.minScore);
    const temporal = temporalCondition(view.temporalScope, "$3");
    const cutoff = view.temporalScope === "recent" ? [supersededCutoff("recent", opts.now, opts.recentWindowMs)] : [];
    const params: unknown[] = [view.resourceIds, vectorLiteral(query), ...cutoff];
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const count = Number(
        (
          await client.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM chunk_vectors WHERE resource_id = ANY($1::text[]) AND ${temporalCondition(view.temporalScope, "$2")}`,
            [view.resourceIds, ...cutoff],
          )
        ).rows[0].n,
      );
      opts.signal?.throwIfAborted();
      const hits: VectorHit[] = [];
      const accept = (r: HitRow): boolean | "stop" => {
        const score = Math.min(1, 1 - r.distance);
        if (!(score >= minScore)) return "stop";
        if (!view.paths.matchesAll && !view.paths.matches(r.path)) return false;
        hits.push({ chunkKey: r.chunk_key, resourceId: r.resource_id, path: r.path, score });
        return true;
      };
      let exhaustive = true;
      if (count <= this.exactThreshold) {
        await client.query("SET LOCAL enable_indexscan = off");
        for (let offset = 0; hits.length < opts.topK; offset += EXACT_PAGE) {
          const { rows } = await client.query<HitRow>(
            `SELECT chunk_key, resource_id, path, embedding <=> $2::vector AS distance FROM chunk_vectors
              WHERE resource_id = ANY($1::text[]) AND ${temporal} ORDER BY distance, chunk_key LIMIT ${EXACT_PAGE} OFFSET ${offset}`,
            params,
          );
          opts.signal?.throwIfAborted();
          let stop = false;
          for (const r of rows) {
            if (accept(r) === "stop") {
              stop = true;
              break;
            }
            if (hits.length === opts.topK) break;
          }
          if (stop || rows.length < EXACT_PAGE) break;
        }
      } else {
        exhaustive = false;
        await client.query("SET LOCAL hnsw.iterative_scan = relaxed_order");
        // The table's size from the planner's statistics (no count over the table): reltuples, or the live
        // rows the statistics collector counted when the table was never analysed.
        const total = Number(
          (
            await client.query<{ n: string }>(
              `SELECT greatest(c.reltuples, coalesce(s.n_live_tup, 0), 0)::text AS n FROM pg_class c
                 LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = 'chunk_vectors'::regclass`,
            )
          ).rows[0]?.n ?? 0,
        );
        await client.query(`SET LOCAL hnsw.ef_search = ${efSearchFor(count, total, opts.topK)}`);
        const fetch = opts.topK * OVERFETCH * (view.paths.matchesAll ? 1 : 4);
        const { rows } = await client.query<HitRow>(
          `SELECT chunk_key, resource_id, path, distance FROM (
             SELECT chunk_key, resource_id, path, embedding <=> $2::vector AS distance FROM chunk_vectors
              WHERE resource_id = ANY($1::text[]) AND ${temporal} ORDER BY embedding <=> $2::vector LIMIT ${fetch}
           ) c ORDER BY distance, chunk_key`,
          params,
        );
        opts.signal?.throwIfAborted();
        for (const r of rows) {
          if (accept(r) === "stop" || hits.length === opts.topK) break;
        }
      }
      await client.query("COMMIT");
      return { hits, exhaustive };
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.writes.idle();
  }
}
