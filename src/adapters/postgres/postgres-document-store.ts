import { documentFingerprint } from "../../domain/document-fingerprint.js";
import { InvalidArgumentError } from "../../domain/errors.js";
import type {
  ChunkToEmbed,
  StoredChunkVectors,
  ErasureSlice,
  ChunkRecord,
  DeleteOutcome,
  DocumentInputRecord,
  DocumentStore,
  ReindexOutcome,
  StoreCounts,
  UpsertHooks,
  UpsertOutcome,
  VectorChanges,
} from "../../ports/document-store.js";
import type { VectorEntry } from "../../ports/vector-backend.js";
import { keywordBatch } from "./keyword-postings.js";
import { inTransaction, type PostgresClient, type PostgresPool } from "./postgres-pool.js";
import { chunkRecordsOf, type StoredChunkRow } from "../kit/chunk-rows.js";
import { DEFAULT_RETAINED_VERSIONS } from "../kit/retention.js";
import { vectorFromBytes, vectorToBytes } from "../kit/vectors/vector-bytes.js";

/** The channel every committed write notifies, with its generation as payload (read by other servers). */
export const GENERATION_CHANNEL = "acms_index_generation";

/** Rows per page when streaming vectors out. */
const VECTOR_PAGE = 2000;

/** Options of the PostgreSQL document store. */
export interface PostgresDocumentStoreOptions {
  /** Superseded versions kept per document (live version not counted). */
  retainedVersions?: number;
  /**
   * Also keep pgvector's `chunk_vectors` table (see ensureVectorTable) in every write transaction, so the
   * database-side vector index holds exactly the committed chunk versions, crash or not.
   */
  vectorTable?: boolean;
}

function hasNul(s: string): boolean {
  return s.includes("\u0000");
}

/** PostgreSQL text cannot hold U+0000: refuse it up front, with the field, instead of failing mid-transaction. */
function assertStorable(documents: readonly DocumentInputRecord[]): void {
  documents.forEach((d, i) => {
    const bad =
      hasNul(d.path) ||
      hasNul(d.content) ||
      Object.entries(d.metadata).some(([k, v]) => hasNul(k) || hasNul(v)) ||
      d.chunks.some((c) => hasNul(c.text));
    if (bad) throw InvalidArgumentError.field(`documents[${i}]`, "holds a NUL character (U+0000), which this store cannot keep");
  });
}

/** One row of the vector change log. */
interface VectorChangeRecord {
  resourceReloaded?: string;
  added: number[];
  superseded: number[];
  removed: number[];
  at: number;
}

/** A committed write's vector changes as a log row. */
function changeRecord(v: VectorChanges): VectorChangeRecord {
  return { added: v.added.map((e) => e.chunkKey), superseded: v.superseded, removed: v.removed, at: v.at };
}

interface Counters {
  rows: number;
  tokens: number;
}

/**
 * Documents, versions and chunks on PostgreSQL, with the BM25 keyword index (term postings, row lengths,
 * and row and token totals per resource, read by PostgresTextBackend) written in the same transactions, so a search sees a
 * write entirely or not at all and a rejected message writes nothing. Same versioning, retention and
 * fingerprinting as the embedded store.
 *
 * Every write transaction first locks the one `index_state` row: writes from all servers are serialised
 * there (as SQLite serialises its writers), which keeps `index_generation` a single counter that only
 * grows, bumped in the transaction that commits the write, and the table totals BM25 needs exact. The
 * commit notifies `acms_index_generation` so other servers learn of it (their in-process vectors reload
 * what changed). `generation()` reads the database, so every server answers the newest committed value.
 */
export class PostgresDocumentStore implements DocumentStore {
  private readonly retained: number;
  private readonly vectorTable: boolean;

  constructor(
    private readonly pool: PostgresPool,
    opts: PostgresDocumentStoreOptions = {},
  ) {
    this.retained = opts.retainedVersions ?? DEFAULT_RETAINED_VERSIONS;
    this.vectorTable = opts.vectorTable ?? false;
  }

  async generation(): Promise<bigint> {
    const { rows } = await this.pool.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1");
    return BigInt(rows[0].g);
  }

  async counts(): Promise<StoreCounts> {
    const { rows } = await this.pool.query<{ documents: string; chunks: string }>(
      `SELECT (SELECT COUNT(*) FROM documents WHERE superseded_at IS NULL)::text AS documents,
              (SELECT COUNT(*) FROM documents d JOIN chunks c ON c.doc_key = d.doc_key WHERE d.superseded_at IS NULL)::text AS chunks`,
    );
    return { documents: Number(rows[0].documents), chunks: Number(rows[0].chunks) };
  }

  async bumpGeneration(): Promise<bigint> {
    return this.write(async (c) => this.commitCounters(c, null, { rows: 0, tokens: 0 }));
  }

  async getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
    if (keys.length === 0) return new Map();
    const { rows } = await this.pool.query<StoredChunkRow>(
      `SELECT c.chunk_key, c.doc_key, c.resource_id, c.path, c.chunk_index, c.text, c.superseded_at, d.metadata
         FROM chunks c JOIN documents d ON d.doc_key = c.doc_key
        WHERE c.chunk_key = ANY($1::bigint[])`,
      [[...keys]],
    );
    return chunkRecordsOf(rows);
  }

  /** Every retained vector, read page by page in one repeatable-read transaction (one committed state). */
  async *iterateVectors(): AsyncIterable<VectorEntry> {
    yield* this.vectorsWhere("TRUE", []);
  }

  /** The retained vectors of the chunk rows `condition` selects, in one committed state. */
  private async *vectorsWhere(condition: string, params: unknown[]): AsyncIterable<VectorEntry> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      let after = 0;
      for (;;) {
        const { rows } = await client.query<{
          chunk_key: number;
          resource_id: string;
          path: string;
          superseded_at: number | null;
          embedding: Buffer;
        }>(
          `SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunks
            WHERE embedding IS NOT NULL AND chunk_key > $1 AND (${condition}) ORDER BY chunk_key LIMIT ${VECTOR_PAGE}`,
          [after, ...params],
        );
        for (const r of rows) {
          yield {
            chunkKey: r.chunk_key,
            resourceId: r.resource_id,
            path: r.path,
            supersededAt: r.superseded_at,
            vector: vectorFromBytes(r.embedding),
          };
        }
        if (rows.length < VECTOR_PAGE) break;
        after = rows[rows.length - 1].chunk_key;
      }
      await client.query("COMMIT");
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      if (broken) await client.query("ROLLBACK").catch(() => undefined);
      client.release();
    }
  }

  /**
   * One transaction per message. With `hooks.deferDurability` (a message of an UpsertDocuments stream) it
   * commits with `synchronous_commit` off: visible at once, its WAL flushed by `syncWrites()` before the
   * stream answers, and the `index_state` lock every writer queues on is no longer held through a WAL flush.
   */
  async upsertDocuments(
    resourceId: string,
    documents: readonly DocumentInputRecord[],
    now: number,
    hooks?: UpsertHooks,
  ): Promise<UpsertOutcome> {
    assertStorable(documents);
    const prints = documents.map(documentFingerprint);
    // A message may name one path twice; the later document then supersedes the earlier, as if written
    // after it. Rounds of distinct paths (the k-th occurrence of each path in round k) keep that order
    // while each round is written with a fixed number of statements, whatever its size.
    const rounds: Array<Array<{ doc: DocumentInputRecord; print: string }>> = [];
    const seen = new Map<string, number>();
    documents.forEach((doc, i) => {
      const k = seen.get(doc.path) ?? 0;
      seen.set(doc.path, k + 1);
      (rounds[k] ??= []).push({ doc, print: prints[i] });
    });
    return this.write(async (c) => {
      const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
      const counters: Counters = { rows: 0, tokens: 0 };
      const totals = { upserted: 0, unchanged: 0, chunks: 0 };
      for (const round of rounds) await this.writeRound(c, resourceId, round, now, vectors, counters, totals);
      const generation =
        totals.upserted > 0 ? await this.commitCounters(c, resourceId, counters, changeRecord(vectors)) : await this.current(c);
      return {
        documentsUpserted: totals.upserted,
        documentsUnchanged: totals.unchanged,
        chunksIndexed: totals.chunks,
        vectorsIndexed: vectors.added.length,
        generation,
        vectors,
      };
    }, hooks?.deferDurability === true);
  }

  /**
   * Flushes the WAL past every commit made before the call: a transaction that takes a transaction id
   * commits with `synchronous_commit` on (the server's setting), which waits until the WAL is flushed up to
   * its own commit record, after every deferred message's. One round trip a stream.
   */
  async syncWrites(): Promise<void> {
    await inTransaction(this.pool, (c) => c.query("SELECT txid_current()"));
  }

  /** Writes documents of distinct paths: unchanged ones are skipped, changed ones supersede their live version. */
  private async writeRound(
    c: PostgresClient,
    resourceId: string,
    round: ReadonlyArray<{ doc: DocumentInputRecord; print: string }>,
    now: number,
    vectors: VectorChanges,
    counters: Counters,
    totals: { upserted: number; unchanged: number; chunks: number },
  ): Promise<void> {
    const live = new Map(
      (
        await c.query<{ path: string; doc_key: number; fingerprint: string }>(
          "SELECT path, doc_key, fingerprint FROM documents WHERE resource_id = $1 AND path = ANY($2::text[]) AND superseded_at IS NULL",
          [resourceId, round.map((r) => r.doc.path)],
        )
      ).rows.map((r) => [r.path, r]),
    );
    const changed = round.filter((r) => live.get(r.doc.path)?.fingerprint !== r.print);
    totals.unchanged += round.length - changed.length;
    if (changed.length === 0) return;
    const replaced = changed.map((r) => live.get(r.doc.path)).filter((l) => l !== undefined);
    await this.supersede(
      c,
      replaced.map((l) => l.doc_key),
      now,
      vectors,
    );
    const rows = changed.flatMap((r) => r.doc.chunks.map((ch, index) => ({ path: r.doc.path, index, ch })));
    // Row numbers stand in for the chunk keys the insert assigns: the statement joins them back.
    const batch = keywordBatch(rows.map((r, i) => ({ chunkKey: i, text: r.ch.text })));
    const inserted = await c.query<{ chunk_key: number; path: string; chunk_index: number }>(
      `WITH d AS (
         INSERT INTO documents (resource_id, path, content, metadata, fingerprint, created_at)
         SELECT $1, p, t, m, f, $2 FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u (p, t, m, f, i) ORDER BY i
         RETURNING doc_key, path
       ), u AS (
         SELECT * FROM unnest($7::text[], $8::integer[], $9::text[], $10::bytea[], $11::integer[]) WITH ORDINALITY AS u (p, x, t, e, l, r)
       ), c AS (
         INSERT INTO chunks (doc_key, resource_id, path, chunk_index, text, embedding)
         SELECT d.doc_key, $1, u.p, u.x, u.t, u.e FROM u JOIN d ON d.path = u.p ORDER BY u.r
         RETURNING chunk_key, path, chunk_index
       ), k AS (
         SELECT c.chunk_key, u.l, u.r - 1 AS row FROM c JOIN u ON u.p = c.path AND u.x = c.chunk_index
       ), kr AS (
         INSERT INTO keyword_rows (chunk_key, resource_id, length) SELECT chunk_key, $1, l FROM k
       ), po AS (
         INSERT INTO postings (term, resource_id, chunk_key, positions)
         SELECT w.t, $1, k.chunk_key, w.p::integer[] FROM unnest($12::text[], $13::integer[], $14::text[]) AS w (t, row, p) JOIN k ON k.row = w.row
       ), df AS (
         -- Writers are serialised on index_state, so these counters never race (and never deadlock).
         INSERT INTO term_df (term, df) SELECT t, count(*) FROM unnest($12::text[]) AS w (t) GROUP BY t
         ON CONFLICT (term) DO UPDATE SET df = term_df.df + excluded.df
       )
       SELECT chunk_key, path, chunk_index FROM c`,
      [
        resourceId,
        now,
        changed.map((r) => r.doc.path),
        changed.map((r) => r.doc.content),
        changed.map((r) => JSON.stringify(r.doc.metadata)),
        changed.map((r) => r.print),
        rows.map((r) => r.path),
        rows.map((r) => r.index),
        rows.map((r) => r.ch.text),
        rows.map((r) => (r.ch.embedding ? vectorToBytes(r.ch.embedding) : null)),
        batch.rowLengths,
        batch.terms,
        batch.postingKeys,
        batch.positions,
      ],
    );
    counters.rows += batch.rowKeys.length;
    counters.tokens += batch.tokens;
    const keyOf = new Map(inserted.rows.map((r) => [`${r.path}#${r.chunk_index}`, r.chunk_key]));
    const added: VectorEntry[] = [];
    for (const r of rows) {
      if (r.ch.embedding)
        added.push({ chunkKey: keyOf.get(`${r.path}#${r.index}`)!, resourceId, path: r.path, supersededAt: null, vector: r.ch.embedding });
    }
    vectors.added.push(...added);
    if (this.vectorTable) await insertVectorRows(c, added);
    totals.chunks += rows.length;
    totals.upserted += changed.length;
    await this.expire(
      c,
      resourceId,
      changed.filter((r) => live.has(r.doc.path)).map((r) => r.doc.path),
      vectors,
      counters,
    );
  }

  async deleteDocuments(resourceId: string, paths: readonly string[], now: number): Promise<DeleteOutcome> {
    return this.write(async (c) => {
      const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
      const counters: Counters = { rows: 0, tokens: 0 };
      const live = (
        await c.query<{ path: string; doc_key: number }>(
          "SELECT path, doc_key FROM documents WHERE resource_id = $1 AND path = ANY($2::text[]) AND superseded_at IS NULL",
          [resourceId, [...new Set(paths)]],
        )
      ).rows;
      await this.supersede(
        c,
        live.map((l) => l.doc_key),
        now,
        vectors,
      );
      await this.expire(
        c,
        resourceId,
        live.map((l) => l.path),
        vectors,
        counters,
      );
      const generation =
        live.length > 0 ? await this.commitCounters(c, resourceId, counters, changeRecord(vectors)) : await this.current(c);
      return { deleted: live.length, generation, vectors };
    });
  }

  async reindexResource(resourceId: string, _full: boolean): Promise<ReindexOutcome> {
    // Keyword rows reference their chunk (foreign key), so no stray row can exist here: a full and an
    // incremental re-index are the same rebuild of the resource's rows from its chunks.
    return this.write(async (c) => {
      const counters: Counters = { rows: 0, tokens: 0 };
      await forgetTerms(c, "resource_id = $1", [resourceId]);
      const dropped = await c.query<{ n: string; t: string }>(
        "WITH d AS (DELETE FROM keyword_rows WHERE resource_id = $1 RETURNING length) SELECT count(*)::text AS n, coalesce(sum(length), 0)::text AS t FROM d",
        [resourceId],
      );
      counters.rows -= Number(dropped.rows[0].n);
      counters.tokens -= Number(dropped.rows[0].t);
      const { rows } = await c.query<{
        chunk_key: number;
        doc_key: number;
        path: string;
        text: string;
        embedding: Buffer | null;
        superseded_at: number | null;
      }>("SELECT chunk_key, doc_key, path, text, embedding, superseded_at FROM chunks WHERE resource_id = $1 ORDER BY chunk_key", [
        resourceId,
      ]);
      await this.index(
        c,
        resourceId,
        rows.map((r) => ({ chunkKey: r.chunk_key, text: r.text })),
        counters,
      );
      const vectors: VectorEntry[] = [];
      for (const r of rows) {
        if (r.embedding)
          vectors.push({
            chunkKey: r.chunk_key,
            resourceId,
            path: r.path,
            supersededAt: r.superseded_at,
            vector: vectorFromBytes(r.embedding),
          });
      }
      const generation = await this.commitCounters(c, resourceId, counters, {
        resourceReloaded: resourceId,
        added: [],
        superseded: [],
        removed: [],
        at: Date.now(),
      });
      return { documents: new Set(rows.map((r) => r.doc_key)).size, chunks: rows.length, vectors, generation };
    });
  }

  /**
   * Erases a slice of the resource's document versions (whole documents, about `maxChunks` chunks) with
   * their chunks, keyword rows and postings, the document frequencies they counted (a term no chunk holds
   * any more loses its row), the resource's keyword totals they counted (its `resource_keyword_stats` row
   * goes with its last keyword row), and their `chunk_vectors` rows, in one write transaction that logs the
   * removed vectors for the servers holding them in process.
   */
  async eraseResourceSlice(resourceId: string, maxChunks: number): Promise<ErasureSlice> {
    const limit = Math.max(1, maxChunks);
    return this.write(async (c) => {
      const changes: VectorChanges = { added: [], superseded: [], removed: [], at: Date.now() };
      const counters: Counters = { rows: 0, tokens: 0 };
      const found = (
        await c.query<{ doc_key: string; n: string }>(
          `SELECT d.doc_key::text AS doc_key, (SELECT count(*) FROM chunks c WHERE c.doc_key = d.doc_key)::text AS n
             FROM documents d WHERE d.resource_id = $1 LIMIT $2`,
          [resourceId, limit + 1],
        )
      ).rows;
      const docKeys: number[] = [];
      let chunks = 0;
      for (const d of found) {
        const n = Number(d.n);
        if (docKeys.length > 0 && chunks + n > limit) break;
        docKeys.push(Number(d.doc_key));
        chunks += n;
      }
      const done = docKeys.length === found.length;
      if (docKeys.length > 0) {
        const rows = await c.query<{ chunk_key: number; has_vector: boolean }>(
          "SELECT chunk_key, embedding IS NOT NULL AS has_vector FROM chunks WHERE doc_key = ANY($1::bigint[])",
          [docKeys],
        );
        changes.removed.push(...rows.rows.filter((r) => r.has_vector).map((r) => Number(r.chunk_key)));
        if (this.vectorTable && changes.removed.length > 0)
          await c.query("DELETE FROM chunk_vectors WHERE chunk_key = ANY($1::bigint[])", [changes.removed]);
        const inSlice = "chunk_key IN (SELECT chunk_key FROM chunks WHERE doc_key = ANY($1::bigint[]))";
        await forgetTerms(c, inSlice, [docKeys]);
        await c.query(`DELETE FROM term_df WHERE df <= 0 AND term IN (SELECT term FROM postings WHERE ${inSlice})`, [docKeys]);
        const dropped = await c.query<{ n: string; t: string }>(
          `WITH d AS (DELETE FROM keyword_rows WHERE ${inSlice} RETURNING length)
           SELECT count(*)::text AS n, coalesce(sum(length), 0)::text AS t FROM d`,
          [docKeys],
        );
        counters.rows -= Number(dropped.rows[0].n);
        counters.tokens -= Number(dropped.rows[0].t);
        await c.query("DELETE FROM documents WHERE doc_key = ANY($1::bigint[])", [docKeys]);
      }
      if (done && this.vectorTable) await c.query("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]);
      const generation = await this.commitCounters(c, resourceId, counters, changeRecord(changes));
      return { documents: docKeys.length, chunks, vectors: changes.removed.length, changes, done, generation };
    });
  }

  /**
   * VACUUMs the tables an erasure touches, so the erased rows' dead tuples (and pgvector's index entries)
   * are pruned now rather than at autovacuum's next pass. Physically rewriting the files (VACUUM FULL) and
   * recycling the WAL are the operator's steps (docs/operating.md).
   */
  async reclaimSpace(): Promise<void> {
    const tables = [
      "documents",
      "chunks",
      "keyword_rows",
      "postings",
      "term_df",
      "resource_keyword_stats",
      "registry_resources",
      "registry_links",
      "registry_parents",
      "tier_fragments",
    ];
    if (this.vectorTable) tables.push("chunk_vectors");
    await this.pool.query(`VACUUM ${tables.join(", ")}`);
  }

  async chunksWithoutVector(resourceId: string, afterKey: number, limit: number): Promise<ChunkToEmbed[]> {
    const { rows } = await this.pool.query<{ chunk_key: number; text: string }>(
      "SELECT chunk_key, text FROM chunks WHERE resource_id = $1 AND chunk_key > $2 AND embedding IS NULL ORDER BY chunk_key LIMIT $3",
      [resourceId, afterKey, Math.max(1, limit)],
    );
    return rows.map((r) => ({ chunkKey: r.chunk_key, text: r.text }));
  }

  /** Sets the embeddings in one write transaction that logs them as added (servers holding vectors in process load them). */
  async setChunkVectors(
    resourceId: string,
    vectors: ReadonlyArray<{ chunkKey: number; vector: Float32Array }>,
  ): Promise<StoredChunkVectors> {
    return this.write(async (c) => {
      const { rows } = await c.query<{ chunk_key: number; path: string; superseded_at: number | null }>(
        `UPDATE chunks SET embedding = u.e FROM unnest($2::bigint[], $3::bytea[]) AS u (k, e)
          WHERE chunks.chunk_key = u.k AND chunks.resource_id = $1 AND chunks.embedding IS NULL
          RETURNING chunks.chunk_key, chunks.path, chunks.superseded_at`,
        [resourceId, vectors.map((v) => v.chunkKey), vectors.map((v) => vectorToBytes(v.vector))],
      );
      const byKey = new Map(vectors.map((v) => [v.chunkKey, v.vector]));
      const added: VectorEntry[] = rows
        .sort((a, b) => a.chunk_key - b.chunk_key)
        .map((r) => ({ chunkKey: r.chunk_key, resourceId, path: r.path, supersededAt: r.superseded_at, vector: byKey.get(r.chunk_key)! }));
      if (this.vectorTable) await insertVectorRows(c, added);
      const generation = await this.commitCounters(
        c,
        resourceId,
        { rows: 0, tokens: 0 },
        changeRecord({ added, superseded: [], removed: [], at: Date.now() }),
      );
      return { added, generation };
    });
  }

  /**
   * One write transaction, serialised with every other server's writes on the `index_state` row (locked
   * in the round trip that begins the transaction).
   */
  private write<T>(work: (c: PostgresClient) => Promise<T>, deferDurability = false): Promise<T> {
    const lock = "SELECT 1 FROM index_state WHERE id = 1 FOR UPDATE";
    return inTransaction(this.pool, work, "", deferDurability ? `SET LOCAL synchronous_commit TO OFF; ${lock}` : lock);
  }

  private async current(c: PostgresClient): Promise<bigint> {
    return BigInt((await c.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1")).rows[0].g);
  }

  /**
   * Bumps the generation and the keyword totals (the table's, and the written resource's in
   * `resource_keyword_stats`, whose row goes when the resource has no keyword row left), logs what the
   * write changed in vectors (for servers that hold vectors in process: they replay the log from the
   * generation they have; with pgvector's table no server does, so nothing is logged), and notifies the
   * other servers, all in the write's transaction. Every write changes the keyword rows of one resource.
   */
  private async commitCounters(
    c: PostgresClient,
    resourceId: string | null,
    counters: Counters,
    change?: VectorChangeRecord,
  ): Promise<bigint> {
    const logged =
      change !== undefined &&
      !this.vectorTable &&
      (change.resourceReloaded !== undefined || change.added.length + change.superseded.length + change.removed.length > 0);
    const { rows } = await c.query<{ g: string }>(
      `WITH s AS (
         UPDATE index_state SET generation = generation + 1, keyword_rows = keyword_rows + $1, keyword_tokens = keyword_tokens + $2
          WHERE id = 1 RETURNING generation
       ), l AS (
         INSERT INTO vector_changes (generation, resource_reloaded, added, superseded, removed, at)
         SELECT generation, $4, $5::bigint[], $6::bigint[], $7::bigint[], $8 FROM s WHERE $3
       ), r AS (
         -- Writers are serialised on index_state, so this counter row never races either.
         INSERT INTO resource_keyword_stats (resource_id, row_count, token_count)
         SELECT $10::text, $1::bigint, $2::bigint WHERE $10::text IS NOT NULL AND ($1::bigint <> 0 OR $2::bigint <> 0)
         ON CONFLICT (resource_id) DO UPDATE
           SET row_count = resource_keyword_stats.row_count + excluded.row_count,
               token_count = resource_keyword_stats.token_count + excluded.token_count
       )
       SELECT generation::text AS g, pg_notify($9, generation::text) FROM s`,
      [
        counters.rows,
        counters.tokens,
        logged,
        change?.resourceReloaded ?? null,
        change?.added ?? [],
        change?.superseded ?? [],
        change?.removed ?? [],
        change?.at ?? 0,
        GENERATION_CHANNEL,
        resourceId,
      ],
    );
    if (resourceId !== null && counters.rows < 0)
      await c.query("DELETE FROM resource_keyword_stats WHERE resource_id = $1 AND row_count = 0", [resourceId]);
    return BigInt(rows[0].g);
  }

  private async index(
    c: PostgresClient,
    resourceId: string,
    chunks: ReadonlyArray<{ chunkKey: number; text: string }>,
    counters: Counters,
  ): Promise<void> {
    if (chunks.length === 0) return;
    const batch = keywordBatch(chunks);
    await c.query(
      "INSERT INTO keyword_rows (chunk_key, resource_id, length) SELECT k, $1, l FROM unnest($2::bigint[], $3::integer[]) AS u (k, l)",
      [resourceId, batch.rowKeys, batch.rowLengths],
    );
    if (batch.terms.length > 0) {
      await c.query(
        "INSERT INTO postings (term, resource_id, chunk_key, positions) SELECT t, $1, k, p::integer[] FROM unnest($2::text[], $3::bigint[], $4::text[]) AS u (t, k, p)",
        [resourceId, batch.terms, batch.postingKeys, batch.positions],
      );
      // Writers are serialised on index_state, so these counters never race (and never deadlock).
      await c.query(
        `INSERT INTO term_df (term, df) SELECT t, count(*) FROM unnest($1::text[]) AS u (t) GROUP BY t
         ON CONFLICT (term) DO UPDATE SET df = term_df.df + excluded.df`,
        [batch.terms],
      );
    }
    counters.rows += batch.rowKeys.length;
    counters.tokens += batch.tokens;
  }

  private async supersede(c: PostgresClient, docKeys: readonly number[], now: number, vectors: VectorChanges): Promise<void> {
    if (docKeys.length === 0) return;
    await c.query("UPDATE documents SET superseded_at = $1 WHERE doc_key = ANY($2::bigint[])", [now, docKeys]);
    const { rows } = await c.query<{ chunk_key: number; has_vector: boolean }>(
      "UPDATE chunks SET superseded_at = $1 WHERE doc_key = ANY($2::bigint[]) RETURNING chunk_key, embedding IS NOT NULL AS has_vector",
      [now, docKeys],
    );
    const keys = rows.filter((r) => r.has_vector).map((r) => r.chunk_key);
    vectors.superseded.push(...keys);
    if (this.vectorTable && keys.length > 0)
      await c.query("UPDATE chunk_vectors SET superseded_at = $1 WHERE chunk_key = ANY($2::bigint[])", [now, keys]);
  }

  /** Drops the superseded versions of documents beyond the retention cap, with their chunks and keyword rows. */
  private async expire(
    c: PostgresClient,
    resourceId: string,
    paths: readonly string[],
    vectors: VectorChanges,
    counters: Counters,
  ): Promise<void> {
    if (paths.length === 0) return;
    const expired = await c.query<{ doc_key: number }>(
      `SELECT doc_key FROM (
         SELECT doc_key, row_number() OVER (PARTITION BY path ORDER BY superseded_at DESC, doc_key DESC) AS n
           FROM documents WHERE resource_id = $1 AND path = ANY($2::text[]) AND superseded_at IS NOT NULL
       ) v WHERE n > $3`,
      [resourceId, paths, this.retained],
    );
    if (expired.rows.length === 0) return;
    const docKeys = expired.rows.map((r) => r.doc_key);
    const chunks = await c.query<{ chunk_key: number; has_vector: boolean }>(
      "SELECT chunk_key, embedding IS NOT NULL AS has_vector FROM chunks WHERE doc_key = ANY($1::bigint[])",
      [docKeys],
    );
    const removed = chunks.rows.filter((r) => r.has_vector).map((r) => r.chunk_key);
    vectors.removed.push(...removed);
    if (this.vectorTable && removed.length > 0) await c.query("DELETE FROM chunk_vectors WHERE chunk_key = ANY($1::bigint[])", [removed]);
    await forgetTerms(c, "chunk_key IN (SELECT chunk_key FROM chunks WHERE doc_key = ANY($1::bigint[]))", [docKeys]);
    const dropped = await c.query<{ n: string; t: string }>(
      `WITH d AS (DELETE FROM keyword_rows WHERE chunk_key IN (SELECT chunk_key FROM chunks WHERE doc_key = ANY($1::bigint[])) RETURNING length)
       SELECT count(*)::text AS n, coalesce(sum(length), 0)::text AS t FROM d`,
      [docKeys],
    );
    counters.rows -= Number(dropped.rows[0].n);
    counters.tokens -= Number(dropped.rows[0].t);
    await c.query("DELETE FROM documents WHERE doc_key = ANY($1::bigint[])", [docKeys]);
  }
}

/** Takes the postings `condition` selects out of the per-term document frequencies, before they are deleted. */
async function forgetTerms(c: PostgresClient, condition: string, params: unknown[]): Promise<void> {
  await c.query(
    `UPDATE term_df d SET df = d.df - x.n FROM (SELECT term, count(*) AS n FROM postings WHERE ${condition} GROUP BY term) x WHERE d.term = x.term`,
    params,
  );
}

/** pgvector's text form of a vector. */
function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v).join(",")}]`;
}

/** Writes vector rows into `chunk_vectors` (a zero vector has no direction: it is not searchable, so not written). */
export async function insertVectorRows(c: PostgresClient, entries: readonly VectorEntry[]): Promise<void> {
  const kept = entries.filter((e) => e.vector.some((x) => x !== 0));
  if (kept.length === 0) return;
  await c.query(
    `INSERT INTO chunk_vectors (chunk_key, resource_id, path, superseded_at, embedding)
     SELECT k, r, p, s, e::vector FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS u (k, r, p, s, e)
     ON CONFLICT (chunk_key) DO UPDATE SET resource_id = excluded.resource_id, path = excluded.path,
       superseded_at = excluded.superseded_at, embedding = excluded.embedding`,
    [
      kept.map((e) => e.chunkKey),
      kept.map((e) => e.resourceId),
      kept.map((e) => e.path),
      kept.map((e) => e.supersededAt),
      kept.map((e) => vectorLiteral(e.vector)),
    ],
  );
}
