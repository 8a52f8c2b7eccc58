import { arrayValue, ARRAY, BIGINT, FLOAT, INTEGER, listValue, VARCHAR, type DuckDBValue } from "@duckdb/node-api";
import { documentFingerprint } from "../../domain/document-fingerprint.js";
import type {
  ChunkToEmbed,
  StoredChunkVectors,
  ChunkRecord,
  DeleteOutcome,
  DocumentInputRecord,
  DocumentStore,
  ErasureSlice,
  ReindexOutcome,
  StoreCounts,
  UpsertOutcome,
  VectorChanges,
} from "../../ports/document-store.js";
import type { ChunkText, ChunkTextChanges } from "../../ports/unit-reader.js";
import type { VectorEntry } from "../../ports/vector-backend.js";
import { keyList, numberOrNull, type DuckDbDatabase, type DuckDbTx, type DuckDbWriteTx } from "./duckdb-database.js";
import { chunkRecordsOf } from "../kit/chunk-rows.js";
import { DEFAULT_RETAINED_VERSIONS } from "../kit/retention.js";

/** Options of the DuckDB document store. */
export interface DuckDbDocumentStoreOptions {
  /** Superseded versions kept per document (live version not counted). */
  retainedVersions?: number;
  /**
   * Called after each committed write, in commit order, with what it changed in the chunk texts: how a
   * keyword index held outside DuckDB (the in-memory BM25) is kept current without a rebuild.
   */
  onChunkTexts?(changes: ChunkTextChanges): void;
}

interface PendingDoc {
  docKey: number;
  path: string;
  content: string;
  metadata: string;
  fingerprint: string;
  supersededAt: number | null;
  chunks: Array<{ chunkKey: number; text: string; embedding?: Float32Array }>;
}

interface LiveDoc {
  docKey: number;
  fingerprint: string;
  /** Written earlier in the same message (not yet in the tables). */
  pending?: PendingDoc;
}

/** What one write transaction found, kept for the outcome and the keyword change event. */
interface WriteResult<T> {
  outcome: T;
  texts: ChunkTextChanges;
}

/** The rows `list_contains` is given: strings bound as one VARCHAR[] parameter. */
function stringList(values: readonly string[]): DuckDBValue {
  return listValue([...values]);
}

/**
 * The document store on DuckDB: documents, their versions and chunks, and the chunk embeddings in
 * `chunk_vectors` (read by DuckDbVectorBackend), all written in one transaction per message, so a
 * rejected message writes nothing and a search sees a write entirely or not at all. Chunk and document
 * keys come from `index_state`, bumped in the same transaction: never reused. The generation is bumped
 * by every write that changed something, in the transaction (monotonic, one counter per file).
 *
 * Same version and retention rules as the embedded store: re-upserting a changed document supersedes
 * the live version; a document keeps its live version plus `retainedVersions` superseded ones; a
 * message naming one path twice writes both versions in order. DuckDB has no keyword index here: each
 * committed write reports its chunk text changes to `onChunkTexts` instead.
 */
export class DuckDbDocumentStore implements DocumentStore {
  private readonly retained: number;

  constructor(
    private readonly db: DuckDbDatabase,
    private readonly opts: DuckDbDocumentStoreOptions = {},
  ) {
    this.retained = opts.retainedVersions ?? DEFAULT_RETAINED_VERSIONS;
  }

  async generation(): Promise<bigint> {
    return this.db.generation;
  }

  /** Counted in DuckDB on each call (an async columnar scan: it never holds the serving thread). */
  async counts(): Promise<StoreCounts> {
    const rows = await this.db.query(
      `SELECT (SELECT COUNT(*) FROM documents WHERE superseded_at IS NULL) AS documents,
              (SELECT COUNT(*) FROM chunks WHERE superseded_at IS NULL) AS chunks`,
    );
    return { documents: Number(rows[0][0]), chunks: Number(rows[0][1]) };
  }

  async bumpGeneration(): Promise<bigint> {
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<{ generation: bigint }>> => {
        const generation = bump(tx);
        return { outcome: { generation }, texts: { generation, added: [], superseded: [], removed: [], at: 0 } };
      },
      (r) => this.committed(r),
    );
    return outcome.generation;
  }

  async getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.query(
      `SELECT c.chunk_key, c.doc_key, c.resource_id, c.path, c.chunk_index, c.text, c.superseded_at, d.metadata
         FROM chunks c JOIN documents d ON d.doc_key = c.doc_key WHERE c.chunk_key IN (SELECT unnest(${keyList(keys)}))`,
    );
    return chunkRecordsOf(
      rows.map((r) => ({
        chunk_key: Number(r[0]),
        doc_key: Number(r[1]),
        resource_id: String(r[2]),
        path: String(r[3]),
        chunk_index: Number(r[4]),
        text: String(r[5]),
        superseded_at: numberOrNull(r[6]),
        metadata: String(r[7]),
      })),
    );
  }

  async *iterateVectors(): AsyncIterable<VectorEntry> {
    const rows = await this.db.query("SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunk_vectors ORDER BY chunk_key");
    for (const r of rows) yield vectorEntryOf(r);
  }

  async upsertDocuments(resourceId: string, documents: readonly DocumentInputRecord[], now: number): Promise<UpsertOutcome> {
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<UpsertOutcome>> => {
        const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
        const texts: ChunkTextChanges = { generation: 0n, added: [], superseded: [], removed: [], at: now };
        const live = await liveDocs(
          tx,
          resourceId,
          documents.map((d) => d.path),
        );
        let nextDoc = tx.state.nextDocKey;
        let nextChunk = tx.state.nextChunkKey;
        const pending: PendingDoc[] = [];
        const supersedeStored: number[] = [];
        const expirePaths = new Set<string>();
        let documentsUnchanged = 0;
        let chunksIndexed = 0;
        for (const doc of documents) {
          const fingerprint = documentFingerprint(doc);
          const current = live.get(doc.path);
          if (current && current.fingerprint === fingerprint) {
            documentsUnchanged += 1;
            continue;
          }
          if (current?.pending) {
            // Written earlier in this message: superseded before it reaches the table.
            current.pending.supersededAt = now;
            for (const c of current.pending.chunks) {
              texts.superseded.push(c.chunkKey);
              if (c.embedding) vectors.superseded.push(c.chunkKey);
            }
          } else if (current) {
            supersedeStored.push(current.docKey);
          }
          const p: PendingDoc = {
            docKey: nextDoc++,
            path: doc.path,
            content: doc.content,
            metadata: JSON.stringify(doc.metadata),
            fingerprint,
            supersededAt: null,
            chunks: doc.chunks.map((c) => ({ chunkKey: nextChunk++, text: c.text, embedding: c.embedding })),
          };
          p.chunks.forEach((c, chunkIndex) => {
            texts.added.push({ chunkKey: c.chunkKey, resourceId, path: doc.path, chunkIndex, text: c.text, supersededAt: null });
            if (c.embedding)
              vectors.added.push({ chunkKey: c.chunkKey, resourceId, path: doc.path, supersededAt: null, vector: c.embedding });
          });
          pending.push(p);
          live.set(doc.path, { docKey: p.docKey, fingerprint, pending: p });
          chunksIndexed += p.chunks.length;
          if (current) expirePaths.add(doc.path);
        }
        if (pending.length === 0) {
          return {
            outcome: {
              documentsUpserted: 0,
              documentsUnchanged,
              chunksIndexed: 0,
              vectorsIndexed: 0,
              generation: await this.generation(),
              vectors,
            },
            texts,
          };
        }
        await supersedeDocs(tx, supersedeStored, now, vectors, texts);
        await appendDocs(tx, resourceId, pending, now, this.db.dimension);
        await expire(tx, resourceId, [...expirePaths], this.retained, vectors, texts);
        tx.state.nextDocKey = nextDoc;
        tx.state.nextChunkKey = nextChunk;
        const generation = bump(tx);
        texts.generation = generation;
        const outcome = {
          documentsUpserted: pending.length,
          documentsUnchanged,
          chunksIndexed,
          vectorsIndexed: vectors.added.length,
          generation,
          vectors,
        };
        return { outcome, texts };
      },
      (r) => this.committed(r),
    );
    return outcome;
  }

  async deleteDocuments(resourceId: string, paths: readonly string[], now: number): Promise<DeleteOutcome> {
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<DeleteOutcome>> => {
        const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
        const texts: ChunkTextChanges = { generation: 0n, added: [], superseded: [], removed: [], at: now };
        const live = await liveDocs(tx, resourceId, [...new Set(paths)]);
        if (live.size === 0) return { outcome: { deleted: 0, generation: await this.generation(), vectors }, texts };
        await supersedeDocs(
          tx,
          [...live.values()].map((d) => d.docKey),
          now,
          vectors,
          texts,
        );
        await expire(tx, resourceId, [...live.keys()], this.retained, vectors, texts);
        const generation = bump(tx);
        texts.generation = generation;
        return { outcome: { deleted: live.size, generation, vectors }, texts };
      },
      (r) => this.committed(r),
    );
    return outcome;
  }

  /**
   * There are no keyword rows in DuckDB to rewrite: the resource's chunk texts are re-read in one
   * transaction and handed to the keyword index (`full`: it drops the resource's rows first, stray ones
   * included; otherwise it replaces them one by one and drops nothing), with every retained vector.
   */
  async reindexResource(resourceId: string, full: boolean): Promise<ReindexOutcome> {
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<ReindexOutcome>> => {
        const chunkRows = await tx.all(
          "SELECT chunk_key, doc_key, path, chunk_index, text, superseded_at FROM chunks WHERE resource_id = $1 ORDER BY chunk_key",
          [resourceId],
        );
        const vectorRows = await tx.all(
          "SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunk_vectors WHERE resource_id = $1 ORDER BY chunk_key",
          [resourceId],
        );
        const docs = new Set(chunkRows.map((r) => Number(r[1])));
        const added: ChunkText[] = chunkRows.map((r) => ({
          chunkKey: Number(r[0]),
          resourceId,
          path: String(r[2]),
          chunkIndex: Number(r[3]),
          text: String(r[4]),
          supersededAt: numberOrNull(r[5]),
        }));
        const generation = bump(tx);
        const texts: ChunkTextChanges = {
          generation,
          added,
          superseded: [],
          removed: [],
          at: 0,
          ...(full ? { clearResource: resourceId } : {}),
        };
        return { outcome: { documents: docs.size, chunks: added.length, vectors: vectorRows.map(vectorEntryOf), generation }, texts };
      },
      (r) => this.committed(r),
    );
    return outcome;
  }

  /**
   * Erases a slice of the resource's document versions (whole documents, about `maxChunks` chunks) with
   * their chunks and `chunk_vectors` rows in one transaction; the keyword index drops the chunks with the
   * commit (and, with the last slice, every row it still tags with the resource).
   */
  async eraseResourceSlice(resourceId: string, maxChunks: number): Promise<ErasureSlice> {
    const limit = Math.max(1, maxChunks);
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<ErasureSlice>> => {
        const changes: VectorChanges = { added: [], superseded: [], removed: [], at: Date.now() };
        const texts: ChunkTextChanges = { generation: 0n, added: [], superseded: [], removed: [], at: changes.at };
        const found = await tx.all(
          `SELECT d.doc_key, (SELECT count(*) FROM chunks c WHERE c.doc_key = d.doc_key) FROM documents d
            WHERE d.resource_id = $1 ORDER BY d.doc_key LIMIT ${limit + 1}`,
          [resourceId],
        );
        const docKeys: number[] = [];
        let chunks = 0;
        for (const r of found) {
          const n = Number(r[1]);
          if (docKeys.length > 0 && chunks + n > limit) break;
          docKeys.push(Number(r[0]));
          chunks += n;
        }
        const done = docKeys.length === found.length;
        if (docKeys.length > 0) {
          const docs = keyList(docKeys);
          const chunkRows = await tx.all(`DELETE FROM chunks WHERE list_contains(${docs}, doc_key) RETURNING chunk_key`);
          const chunkKeys = chunkRows.map((r) => Number(r[0]));
          texts.removed.push(...chunkKeys);
          if (chunkKeys.length > 0) {
            const vectorRows = await tx.all(
              `DELETE FROM chunk_vectors WHERE list_contains(${keyList(chunkKeys)}, chunk_key) RETURNING chunk_key`,
            );
            changes.removed.push(...vectorRows.map((r) => Number(r[0])));
          }
          await tx.run(`DELETE FROM documents WHERE list_contains(${docs}, doc_key)`);
        }
        if (done) {
          await tx.run("DELETE FROM chunk_vectors WHERE resource_id = $1", [resourceId]);
          texts.clearResource = resourceId;
        }
        const generation = bump(tx);
        texts.generation = generation;
        return {
          outcome: { documents: docKeys.length, chunks, vectors: changes.removed.length, changes, done, generation },
          texts,
        };
      },
      (r) => this.committed(r),
    );
    return outcome;
  }

  /** A DuckDB checkpoint: the WAL is folded into the file and the erased rows' blocks are let go. */
  async reclaimSpace(): Promise<void> {
    await this.db.checkpoint();
  }

  async chunksWithoutVector(resourceId: string, afterKey: number, limit: number): Promise<ChunkToEmbed[]> {
    const rows = await this.db.query(
      `SELECT c.chunk_key, c.text FROM chunks c
        WHERE c.resource_id = $1 AND c.chunk_key > $2 AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_key = c.chunk_key)
        ORDER BY c.chunk_key LIMIT ${Math.max(1, Math.floor(limit))}`,
      [resourceId, BigInt(afterKey)],
    );
    return rows.map((r) => ({ chunkKey: Number(r[0]), text: String(r[1]) }));
  }

  async setChunkVectors(
    resourceId: string,
    vectors: ReadonlyArray<{ chunkKey: number; vector: Float32Array }>,
  ): Promise<StoredChunkVectors> {
    const { outcome } = await this.db.write(
      async (tx): Promise<WriteResult<StoredChunkVectors>> => {
        const byKey = new Map(vectors.map((v) => [v.chunkKey, v.vector]));
        const rows =
          vectors.length === 0
            ? []
            : await tx.all(
                `SELECT c.chunk_key, c.path, c.superseded_at FROM chunks c
                  WHERE c.resource_id = $1 AND list_contains(${keyList([...byKey.keys()])}, c.chunk_key)
                    AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_key = c.chunk_key)
                  ORDER BY c.chunk_key`,
                [resourceId],
              );
        const added: VectorEntry[] = rows.map((r) => ({
          chunkKey: Number(r[0]),
          resourceId,
          path: String(r[1]),
          supersededAt: numberOrNull(r[2]),
          vector: byKey.get(Number(r[0]))!,
        }));
        if (added.length > 0) await appendVectorRows(tx, added, this.db.dimension);
        const generation = bump(tx);
        // The chunk texts did not change: the keyword index is told of the generation only (as bumpGeneration does).
        return { outcome: { added, generation }, texts: { generation, added: [], superseded: [], removed: [], at: 0 } };
      },
      (r) => this.committed(r),
    );
    return outcome;
  }

  private committed(r: WriteResult<{ generation: bigint }>): void {
    if (r.texts.generation > 0n) this.opts.onChunkTexts?.(r.texts);
  }
}

/** Bumps the generation in `tx` (written with its commit), answering the new value. */
function bump(tx: DuckDbWriteTx): bigint {
  tx.state.generation += 1n;
  return tx.state.generation;
}

/** The live stored documents of `paths` (path → key and fingerprint). */
async function liveDocs(tx: DuckDbTx, resourceId: string, paths: readonly string[]): Promise<Map<string, LiveDoc>> {
  const live = new Map<string, LiveDoc>();
  if (paths.length === 0) return live;
  const rows = await tx.all(
    "SELECT doc_key, path, fingerprint FROM documents WHERE resource_id = $1 AND superseded_at IS NULL AND list_contains($2::VARCHAR[], path)",
    [resourceId, stringList(paths)],
  );
  for (const r of rows) live.set(String(r[1]), { docKey: Number(r[0]), fingerprint: String(r[2]) });
  return live;
}

/** Stamps stored documents, their chunks and vectors superseded at `now`. */
async function supersedeDocs(
  tx: DuckDbTx,
  docKeys: readonly number[],
  now: number,
  vectors: VectorChanges,
  texts: ChunkTextChanges,
): Promise<void> {
  if (docKeys.length === 0) return;
  const keys = keyList(docKeys);
  await tx.run(`UPDATE documents SET superseded_at = ${now} WHERE list_contains(${keys}, doc_key)`);
  const chunkRows = await tx.all(`UPDATE chunks SET superseded_at = ${now} WHERE list_contains(${keys}, doc_key) RETURNING chunk_key`);
  const chunkKeys = chunkRows.map((r) => Number(r[0]));
  texts.superseded.push(...chunkKeys);
  if (chunkKeys.length === 0) return;
  const vectorRows = await tx.all(
    `UPDATE chunk_vectors SET superseded_at = ${now} WHERE list_contains(${keyList(chunkKeys)}, chunk_key) RETURNING chunk_key`,
  );
  vectors.superseded.push(...vectorRows.map((r) => Number(r[0])));
}

/** Drops the superseded versions of `paths` beyond the retention cap, with their chunks and vectors. */
async function expire(
  tx: DuckDbTx,
  resourceId: string,
  paths: readonly string[],
  retained: number,
  vectors: VectorChanges,
  texts: ChunkTextChanges,
): Promise<void> {
  if (paths.length === 0) return;
  const rows = await tx.all(
    `SELECT doc_key FROM (
       SELECT doc_key, row_number() OVER (PARTITION BY path ORDER BY superseded_at DESC, doc_key DESC) AS n
         FROM documents WHERE resource_id = $1 AND superseded_at IS NOT NULL AND list_contains($2::VARCHAR[], path)
     ) WHERE n > ${retained}`,
    [resourceId, stringList(paths)],
  );
  if (rows.length === 0) return;
  const docs = keyList(rows.map((r) => Number(r[0])));
  const chunkRows = await tx.all(`DELETE FROM chunks WHERE list_contains(${docs}, doc_key) RETURNING chunk_key`);
  const chunkKeys = chunkRows.map((r) => Number(r[0]));
  texts.removed.push(...chunkKeys);
  if (chunkKeys.length > 0) {
    const vectorRows = await tx.all(`DELETE FROM chunk_vectors WHERE list_contains(${keyList(chunkKeys)}, chunk_key) RETURNING chunk_key`);
    vectors.removed.push(...vectorRows.map((r) => Number(r[0])));
  }
  await tx.run(`DELETE FROM documents WHERE list_contains(${docs}, doc_key)`);
}

/** A nullable BIGINT cell. */
function bigOrNull(v: number | null): bigint | null {
  return v === null ? null : BigInt(v);
}

const DOCUMENT_TYPES = [BIGINT, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, BIGINT, BIGINT];
const CHUNK_TYPES = [BIGINT, BIGINT, VARCHAR, VARCHAR, INTEGER, VARCHAR, BIGINT];

/** Appends the message's new document versions, chunks and vectors (DuckDB's appender, inside the transaction). */
async function appendDocs(tx: DuckDbTx, resourceId: string, docs: readonly PendingDoc[], now: number, dimension: number): Promise<void> {
  const created = BigInt(now);
  await tx.append("documents", DOCUMENT_TYPES, [
    docs.map((d) => BigInt(d.docKey)),
    docs.map(() => resourceId),
    docs.map((d) => d.path),
    docs.map((d) => d.content),
    docs.map((d) => d.metadata),
    docs.map((d) => d.fingerprint),
    docs.map(() => created),
    docs.map((d) => bigOrNull(d.supersededAt)),
  ]);
  const chunks = docs.flatMap((doc) => doc.chunks.map((chunk, index) => ({ doc, chunk, index })));
  await tx.append("chunks", CHUNK_TYPES, [
    chunks.map((c) => BigInt(c.chunk.chunkKey)),
    chunks.map((c) => BigInt(c.doc.docKey)),
    chunks.map(() => resourceId),
    chunks.map((c) => c.doc.path),
    chunks.map((c) => c.index),
    chunks.map((c) => c.chunk.text),
    chunks.map((c) => bigOrNull(c.doc.supersededAt)),
  ]);
  const entries: VectorEntry[] = [];
  for (const { doc, chunk } of chunks) {
    if (chunk.embedding)
      entries.push({ chunkKey: chunk.chunkKey, resourceId, path: doc.path, supersededAt: doc.supersededAt, vector: chunk.embedding });
  }
  await appendVectorRows(tx, entries, dimension);
}

/** Appends `chunk_vectors` rows (the caller has removed any row of the same key). */
export async function appendVectorRows(tx: DuckDbTx, entries: readonly VectorEntry[], dimension: number): Promise<void> {
  // A data chunk's array cell takes the first `dimension` items and nulls the ones missing: refused here instead.
  for (const e of entries) {
    if (e.vector.length !== dimension)
      throw new RangeError(`chunk ${e.chunkKey} has a ${e.vector.length}-dimensional embedding, the DuckDB file holds ${dimension}`);
  }
  await tx.append(
    "chunk_vectors",
    [BIGINT, VARCHAR, VARCHAR, BIGINT, ARRAY(FLOAT, dimension)],
    [
      entries.map((e) => BigInt(e.chunkKey)),
      entries.map((e) => e.resourceId),
      entries.map((e) => e.path),
      entries.map((e) => bigOrNull(e.supersededAt)),
      entries.map((e) => arrayValue(Array.from(e.vector))),
    ],
  );
}

/** A `chunk_vectors` row (chunk_key, resource_id, path, superseded_at, embedding) as an entry. */
export function vectorEntryOf(r: DuckDBValue[]): VectorEntry {
  const items = (r[4] as { items: number[] }).items;
  return {
    chunkKey: Number(r[0]),
    resourceId: String(r[1]),
    path: String(r[2]),
    supersededAt: numberOrNull(r[3]),
    vector: Float32Array.from(items),
  };
}
