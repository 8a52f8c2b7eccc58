import { listValue, type DuckDBValue } from "@duckdb/node-api";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
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
import { keyList, type DuckDbDatabase, type DuckDbTx } from "./duckdb-database.js";
import { appendVectorRows } from "./duckdb-document-store.js";
import { assertVectorQuery } from "../kit/vectors/vector-query-checks.js";
import { WriteQueue } from "../kit/vectors/write-queue.js";
import { l2Norm } from "../kit/vectors/vector-math.js";

/** Options of the DuckDB vector backend. */
export interface DuckDbVectorBackendOptions {
  /**
   * False when the document store writes `chunk_vectors` in its own transactions (the server's setup:
   * one committed state), which makes this backend's write methods no-ops; true (default) for a
   * standalone backend whose writes go to the table.
   */
  ownWrites?: boolean;
  /** True when the backend owns `db` and closes it on `close`. */
  ownsDatabase?: boolean;
}

/**
 * Exact similarity search inside DuckDB: `array_cosine_similarity` over the `FLOAT[dim]` column of
 * `chunk_vectors`, ranked by DuckDB (ORDER BY score, chunk key; LIMIT topK) with the scope in the query:
 * the resource ids (as a semi-join on an unnested list: DuckDB then pushes a min/max filter into the
 * scan and skips row groups of other resources, which `list_contains` does not), the visible versions and the path filter (the in-scope documents' paths are read,
 * matched against the scope's globs once, and the matching ones bound as a list). Scores below the
 * floor (never below 0: a negative cosine is never returned) are cut in SQL. Every answer is exhaustive.
 *
 * Writes are synchronous on the port: with `ownWrites` they are queued, in order, and every search
 * waits for the queue first, so a search sees every write made before it; a failed write fails the
 * next search.
 */
export class DuckDbVectorBackend implements VectorBackend {
  private readonly writes = new WriteQueue();
  private readonly ownWrites: boolean;
  private readonly ownsDatabase: boolean;

  constructor(
    private readonly db: DuckDbDatabase,
    opts: DuckDbVectorBackendOptions = {},
  ) {
    this.ownWrites = opts.ownWrites ?? true;
    this.ownsDatabase = opts.ownsDatabase ?? false;
  }

  get dimension(): number {
    return this.db.dimension;
  }

  upsert(entries: readonly VectorEntry[]): void {
    checkDimensions(entries, this.dimension);
    if (!this.ownWrites || entries.length === 0) return;
    const kept = lastWriteOfEachKey(entries);
    this.enqueueWrite(async (tx) => {
      await tx.run(`DELETE FROM chunk_vectors WHERE list_contains(${keyList(kept.map((e) => e.chunkKey))}, chunk_key)`);
      await appendVectorRows(tx, kept, this.dimension);
    });
  }

  supersede(chunkKeys: readonly number[], at: number): void {
    if (!this.ownWrites || chunkKeys.length === 0) return;
    const keys = keyList(chunkKeys);
    this.enqueueWrite((tx) => tx.run(`UPDATE chunk_vectors SET superseded_at = $1 WHERE list_contains(${keys}, chunk_key)`, [BigInt(at)]));
  }

  remove(chunkKeys: readonly number[]): void {
    if (!this.ownWrites || chunkKeys.length === 0) return;
    const keys = keyList(chunkKeys);
    this.enqueueWrite((tx) => tx.run(`DELETE FROM chunk_vectors WHERE list_contains(${keys}, chunk_key)`));
  }

  clearResource(resourceId: string): void {
    if (!this.ownWrites) return;
    this.enqueueWrite((tx) => tx.run("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]));
  }

  /** Deletes the resource's rows and inserts `entries` in one transaction, so a search sees one or the other. */
  async replaceResource(resourceId: string, entries: readonly VectorEntry[]): Promise<void> {
    checkReplacement(resourceId, entries, this.dimension);
    if (!this.ownWrites) return;
    const kept = lastWriteOfEachKey(entries).filter((e) => l2Norm(e.vector) > 0);
    this.enqueueWrite(async (tx) => {
      await tx.run("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]);
      if (kept.length > 0) await appendVectorRows(tx, kept, this.dimension);
    });
    await this.flushed();
  }

  async search(
    view: ScopedBackendView,
    query: Float32Array,
    opts: VectorSearchOptions,
  ): Promise<{ hits: VectorHit[]; exhaustive: boolean }> {
    assertVectorQuery(query, this.dimension, opts);
    await this.flushed();
    opts.signal?.throwIfAborted();
    if (view.resourceIds.length === 0 || !(l2Norm(query) > 0)) return { hits: [], exhaustive: true };
    const minScore = Math.max(0, opts.minScore);
    const params: DuckDBValue[] = [listValue([...view.resourceIds]), listValue(Array.from(query)), minScore];
    const cutoff = supersededCutoff(view.temporalScope, opts.now, opts.recentWindowMs);
    let temporal = "";
    if (cutoff === Number.POSITIVE_INFINITY) temporal = "AND superseded_at IS NULL";
    else if (cutoff !== undefined) {
      params.push(BigInt(Math.floor(cutoff)));
      temporal = `AND (superseded_at IS NULL OR superseded_at >= $${params.length})`;
    }
    const ranked = (pathCondition: string) =>
      `SELECT chunk_key, resource_id, path, score FROM (
         SELECT chunk_key, resource_id, path, array_cosine_similarity(embedding, $2::FLOAT[${this.dimension}]) AS score FROM chunk_vectors
          WHERE resource_id IN (SELECT unnest($1::VARCHAR[])) ${temporal} ${pathCondition}
       ) WHERE score >= $3 ORDER BY score DESC, chunk_key LIMIT ${opts.topK}`;
    // Without a path filter the search is one statement; with one, the paths and the ranking share a transaction.
    const rows = view.paths.matchesAll
      ? await this.db.query(ranked(""), params)
      : await this.db.read(async (tx) => {
          const paths = await pathsInScope(tx, view);
          opts.signal?.throwIfAborted();
          if (paths.length === 0) return [];
          params.push(listValue(paths));
          return tx.all(ranked(`AND path IN (SELECT unnest($${params.length}::VARCHAR[]))`), params);
        });
    opts.signal?.throwIfAborted();
    const hits = rows.map((r) => ({
      chunkKey: Number(r[0]),
      resourceId: String(r[1]),
      path: String(r[2]),
      score: Math.min(1, Number(r[3])),
    }));
    return { hits, exhaustive: true };
  }

  /** Resolves when every queued write is in the database (a failed one throws here, once). */
  async flushed(): Promise<void> {
    await this.writes.flushed();
  }

  async close(): Promise<void> {
    await this.writes.idle();
    if (this.ownsDatabase) await this.db.close();
  }
  private enqueueWrite(write: (tx: DuckDbTx) => Promise<void>): void {
    this.writes.enqueue(() => this.db.write(write));
  }
}

/** The distinct paths of the scope's resources' vectors that the scope's path filter lets through. */
async function pathsInScope(tx: DuckDbTx, view: ScopedBackendView): Promise<string[]> {
  const rows = await tx.all("SELECT DISTINCT path FROM chunk_vectors WHERE list_contains($1::VARCHAR[], resource_id)", [
    listValue([...view.resourceIds]),
  ]);
  const out: string[] = [];
  for (const r of rows) {
    const path = String(r[0]);
    if (view.paths.matches(path)) out.push(path);
  }
  return out;
}
