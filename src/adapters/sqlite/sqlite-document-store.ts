import { documentFingerprint } from "../../domain/document-fingerprint.js";
import type {
  ChunkRecord,
  DeleteOutcome,
  DocumentInputRecord,
  DocumentStore,
  ReindexOutcome,
  StoreCounts,
  UpsertOutcome,
  VectorChanges,
} from "../../ports/document-store.js";
import type { VectorEntry } from "../../ports/vector-backend.js";
import { formatUkoUri } from "../../domain/uko-uri.js";
import type { SqliteDatabase } from "./sqlite-database.js";

/** Superseded versions kept per document by default; older ones are dropped when a newer write happens. */
export const DEFAULT_RETAINED_VERSIONS = 16;

/** Options of the SQLite document store. */
export interface SqliteDocumentStoreOptions {
  /** Superseded versions kept per document (live version not counted). */
  retainedVersions?: number;
}

/**
 * The FTS5 token that tags a chunk's resource in the `rid` column. The trailing digit keeps the porter
 * stemmer from touching it (every porter rule strips a letter suffix), so two ids never share a token.
 */
export function resourceToken(resourceId: string): string {
  return `r${resourceId.toLowerCase()}0`;
}

interface ChunkRow {
  chunk_key: number;
  doc_key: number;
  resource_id: string;
  path: string;
  chunk_index: number;
  text: string;
  embedding: Buffer | null;
  superseded_at: number | null;
}

function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function fromBlob(b: Buffer): Float32Array {
  // Copy: a Buffer's offset into its pool need not be 4-byte aligned.
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

/**
 * The embedded document store: documents, their versions and chunks in SQLite, with the FTS5 keyword
 * index (`chunks_fts`, read by Fts5TextBackend) kept in the same transactions. Chunk keys are
 * AUTOINCREMENT row ids, never reused, so a vector index keyed by them cannot confuse two versions.
 * `chunks_fts` keeps its own copy of the text: SQLite's contentless tables (`contentless_delete=1`)
 * miscount BM25's statistics when rows are deleted and re-inserted, which would make scores drift.
 *
 * Retention: a document keeps its live version plus at most `retainedVersions` superseded ones (16 by
 * default); writing the document drops the oldest beyond that. A deleted document keeps its versions
 * (visible to `recent` within the window and to `all`) until it is written again and they age out.
 */
export class SqliteDocumentStore implements DocumentStore {
  private readonly retained: number;
  private gen: bigint;
  /**
   * Live documents and their chunks: counted once at open, then moved by each committed write (a count
   * over the tables costs tens of milliseconds at 100k rows, on the serving thread).
   */
  private readonly live: StoreCounts;
  private readonly stmts;

  constructor(private readonly db: SqliteDatabase, opts: SqliteDocumentStoreOptions = {}) {
    this.retained = opts.retainedVersions ?? DEFAULT_RETAINED_VERSIONS;
    db.exec(`
      CREATE TABLE IF NOT EXISTS index_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        generation INTEGER NOT NULL
      );
      INSERT OR IGNORE INTO index_state (id, generation) VALUES (1, 0);
      CREATE TABLE IF NOT EXISTS documents (
        doc_key INTEGER PRIMARY KEY AUTOINCREMENT,
        resource_id TEXT NOT NULL,
        path TEXT NOT NULL,
        content TEXT NOT NULL,
        metadata TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        superseded_at INTEGER
      );
      CREATE UNIQUE INDEX IF NOT EXISTS documents_live ON documents (resource_id, path) WHERE superseded_at IS NULL;
      CREATE INDEX IF NOT EXISTS documents_versions ON documents (resource_id, path, superseded_at);
      CREATE TABLE IF NOT EXISTS chunks (
        chunk_key INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_key INTEGER NOT NULL REFERENCES documents (doc_key) ON DELETE CASCADE,
        resource_id TEXT NOT NULL,
        path TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB,
        superseded_at INTEGER
      );
      CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_key);
      CREATE INDEX IF NOT EXISTS chunks_by_resource ON chunks (resource_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (body, rid, tokenize = 'porter unicode61');
    `);
    this.stmts = {
      generation: db.prepare("SELECT generation FROM index_state WHERE id = 1").pluck().safeIntegers(),
      // Index-only: the partial index of live documents, then each one's chunks through chunks_by_doc.
      counts: db.prepare<[], StoreCounts>(
        `SELECT (SELECT COUNT(*) FROM documents WHERE superseded_at IS NULL) AS documents,
                (SELECT COUNT(*) FROM documents d JOIN chunks c ON c.doc_key = d.doc_key WHERE d.superseded_at IS NULL) AS chunks`,
      ),
      bump: db.prepare("UPDATE index_state SET generation = generation + 1 WHERE id = 1 RETURNING generation").pluck().safeIntegers(),
      live: db.prepare<[string, string], { doc_key: number; fingerprint: string }>(
        "SELECT doc_key, fingerprint FROM documents WHERE resource_id = ? AND path = ? AND superseded_at IS NULL",
      ),
      supersedeDoc: db.prepare<[number, number]>("UPDATE documents SET superseded_at = ? WHERE doc_key = ?"),
      supersedeChunks: db.prepare<[number, number], { chunk_key: number; has_vector: number }>(
        "UPDATE chunks SET superseded_at = ? WHERE doc_key = ? RETURNING chunk_key, embedding IS NOT NULL AS has_vector",
      ),
      insertDoc: db.prepare<[string, string, string, string, string, number]>(
        "INSERT INTO documents (resource_id, path, content, metadata, fingerprint, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      insertChunk: db.prepare<[number, string, string, number, string, Buffer | null]>(
        "INSERT INTO chunks (doc_key, resource_id, path, chunk_index, text, embedding) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      insertFts: db.prepare<[number, string, string]>("INSERT INTO chunks_fts (rowid, body, rid) VALUES (?, ?, ?)"),
      replaceFts: db.prepare<[number, string, string]>("INSERT OR REPLACE INTO chunks_fts (rowid, body, rid) VALUES (?, ?, ?)"),
      deleteFts: db.prepare<[number]>("DELETE FROM chunks_fts WHERE rowid = ?"),
      deleteFtsOfResource: db.prepare<[string]>(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)",
      ),
      expired: db.prepare<[string, string, number], { doc_key: number }>(
        `SELECT doc_key FROM documents WHERE resource_id = ? AND path = ? AND superseded_at IS NOT NULL
         ORDER BY superseded_at DESC, doc_key DESC LIMIT -1 OFFSET ?`,
      ),
      chunksOfDoc: db.prepare<[number], { chunk_key: number; has_vector: number }>(
        "SELECT chunk_key, embedding IS NOT NULL AS has_vector FROM chunks WHERE doc_key = ?",
      ),
      deleteDoc: db.prepare<[number]>("DELETE FROM documents WHERE doc_key = ?"),
      getChunks: db.prepare<[string], ChunkRow & { metadata: string }>(
        `SELECT c.chunk_key, c.doc_key, c.resource_id, c.path, c.chunk_index, c.text, NULL AS embedding, c.superseded_at, d.metadata
         FROM chunks c JOIN documents d ON d.doc_key = c.doc_key
         WHERE c.chunk_key IN (SELECT value FROM json_each(?))`,
      ),
      vectors: db.prepare<[], ChunkRow>(
        "SELECT chunk_key, resource_id, path, embedding, superseded_at FROM chunks WHERE embedding IS NOT NULL ORDER BY chunk_key",
      ),
      chunksOfResource: db.prepare<[string], ChunkRow>(
        "SELECT chunk_key, doc_key, resource_id, path, chunk_index, text, embedding, superseded_at FROM chunks WHERE resource_id = ? ORDER BY chunk_key",
      ),
    };
    this.gen = this.stmts.generation.get() as bigint;
    this.live = this.stmts.counts.get()!;
  }

  async generation(): Promise<bigint> {
    return this.gen;
  }

  async counts(): Promise<StoreCounts> {
    return { ...this.live };
  }

  async bumpGeneration(): Promise<bigint> {
    this.gen = this.stmts.bump.get() as bigint;
    return this.gen;
  }

  async getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
    const out = new Map<number, ChunkRecord>();
    if (keys.length === 0) return out;
    const metadataByDoc = new Map<number, Record<string, string>>();
    for (const row of this.stmts.getChunks.all(JSON.stringify(keys))) {
      let metadata = metadataByDoc.get(row.doc_key);
      if (!metadata) {
        metadata = JSON.parse(row.metadata) as Record<string, string>;
        metadataByDoc.set(row.doc_key, metadata);
      }
      out.set(row.chunk_key, {
        chunkKey: row.chunk_key,
        resourceId: row.resource_id,
        path: row.path,
        chunkIndex: row.chunk_index,
        text: row.text,
        metadata,
        supersededAt: row.superseded_at,
        ukoUri: formatUkoUri(row.resource_id, row.path, row.chunk_index),
      });
    }
    return out;
  }

  async *iterateVectors(): AsyncIterable<VectorEntry> {
    // Read whole before the first yield: one committed state, and no statement held open while the
    // consumer awaits (better-sqlite3 refuses other statements on a connection with an open iterator).
    for (const row of this.stmts.vectors.all()) {
      yield { chunkKey: row.chunk_key, resourceId: row.resource_id, path: row.path, supersededAt: row.superseded_at, vector: fromBlob(row.embedding!) };
    }
  }

  async upsertDocuments(resourceId: string, documents: readonly DocumentInputRecord[], now: number): Promise<UpsertOutcome> {
    const run = this.db.transaction((): { outcome: UpsertOutcome; delta: StoreCounts } => {
      const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
      let documentsUpserted = 0;
      let documentsUnchanged = 0;
      let chunksIndexed = 0;
      const delta: StoreCounts = { documents: 0, chunks: 0 };
      const rid = resourceToken(resourceId);
      for (const doc of documents) {
        const print = documentFingerprint(doc);
        const live = this.stmts.live.get(resourceId, doc.path);
        if (live && live.fingerprint === print) {
          documentsUnchanged += 1;
          continue;
        }
        if (live) delta.chunks -= this.supersede(live.doc_key, now, vectors);
        else delta.documents += 1;
        delta.chunks += doc.chunks.length;
        const docKey = Number(
          this.stmts.insertDoc.run(resourceId, doc.path, doc.content, JSON.stringify(doc.metadata), print, now).lastInsertRowid,
        );
        doc.chunks.forEach((chunk, index) => {
          const chunkKey = Number(
            this.stmts.insertChunk.run(docKey, resourceId, doc.path, index, chunk.text, chunk.embedding ? toBlob(chunk.embedding) : null).lastInsertRowid,
          );
          this.stmts.insertFts.run(chunkKey, chunk.text, rid);
          if (chunk.embedding) {
            vectors.added.push({ chunkKey, resourceId, path: doc.path, supersededAt: null, vector: chunk.embedding });
          }
        });
        chunksIndexed += doc.chunks.length;
        documentsUpserted += 1;
        if (live) this.expire(resourceId, doc.path, vectors);
      }
      const generation = documentsUpserted > 0 ? (this.stmts.bump.get() as bigint) : this.gen;
      return { outcome: { documentsUpserted, documentsUnchanged, chunksIndexed, vectorsIndexed: vectors.added.length, generation, vectors }, delta };
    });
    const { outcome, delta } = run.immediate();
    this.gen = outcome.generation;
    this.live.documents += delta.documents;
    this.live.chunks += delta.chunks;
    return outcome;
  }

  async deleteDocuments(resourceId: string, paths: readonly string[], now: number): Promise<DeleteOutcome> {
    const run = this.db.transaction((): DeleteOutcome & { chunks: number } => {
      const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
      let deleted = 0;
      let chunks = 0;
      for (const path of new Set(paths)) {
        const live = this.stmts.live.get(resourceId, path);
        if (!live) continue;
        chunks += this.supersede(live.doc_key, now, vectors);
        this.expire(resourceId, path, vectors);
        deleted += 1;
      }
      const generation = deleted > 0 ? (this.stmts.bump.get() as bigint) : this.gen;
      return { deleted, generation, vectors, chunks };
    });
    const { chunks, ...outcome } = run.immediate();
    this.gen = outcome.generation;
    this.live.documents -= outcome.deleted;
    this.live.chunks -= chunks;
    return outcome;
  }

  async reindexResource(resourceId: string, full: boolean): Promise<ReindexOutcome> {
    const run = this.db.transaction((): ReindexOutcome => {
      const rid = resourceToken(resourceId);
      if (full) this.stmts.deleteFtsOfResource.run(`rid : "${rid}"`);
      const write = full ? this.stmts.insertFts : this.stmts.replaceFts;
      const docs = new Set<number>();
      const vectors: VectorEntry[] = [];
      let chunks = 0;
      for (const row of this.stmts.chunksOfResource.all(resourceId)) {
        write.run(row.chunk_key, row.text, rid);
        docs.add(row.doc_key);
        chunks += 1;
        if (row.embedding) {
          vectors.push({ chunkKey: row.chunk_key, resourceId, path: row.path, supersededAt: row.superseded_at, vector: fromBlob(row.embedding) });
        }
      }
      return { documents: docs.size, chunks, vectors, generation: this.stmts.bump.get() as bigint };
    });
    const outcome = run.immediate();
    this.gen = outcome.generation;
    return outcome;
  }

  /** Supersedes a live version with its chunks; returns how many chunks it had. */
  private supersede(docKey: number, now: number, vectors: VectorChanges): number {
    this.stmts.supersedeDoc.run(now, docKey);
    const chunks = this.stmts.supersedeChunks.all(now, docKey);
    for (const c of chunks) {
      if (c.has_vector) vectors.superseded.push(c.chunk_key);
    }
    return chunks.length;
  }

  /** Drops the superseded versions of a document beyond the retention cap, with their chunks and rows. */
  private expire(resourceId: string, path: string, vectors: VectorChanges): void {
    for (const { doc_key } of this.stmts.expired.all(resourceId, path, this.retained)) {
      for (const c of this.stmts.chunksOfDoc.all(doc_key)) {
        this.stmts.deleteFts.run(c.chunk_key);
        if (c.has_vector) vectors.removed.push(c.chunk_key);
      }
      this.stmts.deleteDoc.run(doc_key);
    }
  }
}
