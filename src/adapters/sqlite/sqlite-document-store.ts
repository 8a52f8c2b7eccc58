import type { Statement } from "better-sqlite3";
import { documentFingerprint } from "../../domain/document-fingerprint.js";
import {
  refusedInSeries,
  type ChunkRecord,
  type ChunkToEmbed,
  type DeleteOutcome,
  type DocumentInputRecord,
  type DocumentStore,
  type ErasureSlice,
  type ReindexOutcome,
  type StoreCounts,
  type StoredChunkVectors,
  type UpsertHooks,
  type UpsertOutcome,
  type VectorChanges,
} from "../../ports/document-store.js";
import type { VectorEntry } from "../../ports/vector-backend.js";
import { checkpointWal, openSqliteReader, type SqliteDatabase } from "../kit/sqlite-database.js";
import { withoutFsync } from "../kit/without-fsync.js";
import { WalSync } from "../kit/wal-sync.js";
import { chunkRecordsOf, type StoredChunkRow } from "../kit/chunk-rows.js";
import { DEFAULT_RETAINED_VERSIONS } from "../kit/retention.js";
import { vectorFromBytes, vectorToBytes } from "../kit/vectors/vector-bytes.js";
import type { SnapshotChunkRow } from "../kit/unit-rows.js";
import { KeywordRows } from "./keyword-rows.js";
import { beginDocumentWrite, documentWriteLog, endDocumentWrite, type DocumentWriteLog } from "./document-write-log.js";

/** Every retained chunk version with an embedding, in key order (`iterateVectors`). */
const VECTORS_SQL = `SELECT c.chunk_key, c.resource_id, c.path, c.embedding, d.superseded_at FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
  WHERE c.embedding IS NOT NULL ORDER BY c.chunk_key`;

/**
 * Chunks (with their documents) staged per transaction by default: some 10-20 ms of synchronous
 * work on 2 busy cores, the longest an upload holds the event loop between two turns.
 */
export const DEFAULT_STAGE_BATCH_CHUNKS = 128;

/** Content bytes staged per transaction at most (a batch of few large chunks ends on this bound). */
const STAGE_BATCH_BYTES = 1024 * 1024;

/** Options of the SQLite document store. */
export interface SqliteDocumentStoreOptions {
  /** Superseded versions kept per document (live version not counted). */
  retainedVersions?: number;
  /** Chunks staged per transaction (default DEFAULT_STAGE_BATCH_CHUNKS); tests pass small values to force many batches. */
  stageBatchChunks?: number;
}

/** A document of the message being staged: its new row and the live version it replaces. */
interface StagedDocument {
  path: string;
  /** The staged row. */
  docKey: number;
  replaces: number | undefined;
  /** The chunk keys of `replaces` that carry a vector (superseded in the vector index once published). */
  replacedVectors: number[];
  /** How many chunks the live count gains once published: the new version's less those of `replaces`. */
  chunkDelta: number;
  /** Whether `replaces` is a version staged earlier in the same message (one path named twice). */
  replacesStaged: boolean;
  /** The superseded versions that fall beyond retention once `replaces` is superseded too. */
  expires: number[];
}

/**
 * The FTS5 token that tags a chunk's resource in the `rid` column. The trailing digit keeps the porter
 * stemmer from touching it (every porter rule strips a letter suffix), so two ids never share a token.
 */
export function resourceToken(resourceId: string): string {
  return `r${resourceId.toLowerCase()}0`;
}

/** A message waiting to be written in one step with others (see `writeInOneStep`). */
interface OneStepWrite {
  resourceId: string;
  documents: readonly DocumentInputRecord[];
  now: number;
  hooks: UpsertHooks | undefined;
  /** Its size as a staging slice counts it. */
  chunks: number;
  bytes: number;
  resolve(outcome: UpsertOutcome): void;
  reject(err: unknown): void;
}

/** What the rows of one one-step message changed. */
interface OneStepRows {
  upserted: number;
  unchanged: number;
  chunksIndexed: number;
  newDocuments: number;
  chunkDelta: number;
  vectors: VectorChanges;
}

interface ChunkRow extends SnapshotChunkRow {
  doc_key: number;
  embedding: Buffer | null;
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
 *
 * Sharing the event loop: the writes of one resource run one at a time, those of different resources
 * interleave between slices (so one tenant's large upload does not hold another's writes), and a large
 * one never holds the loop for long; an upload is staged in slices and published in one short
 * transaction (see `upsertDocuments`), a rebuild re-indexes in slices (see `reindexResource`). Opening drops rows staged by a process that died
 * mid-upload, so one database has one store at a time (as the data-directory lock ensures).
 */
export class SqliteDocumentStore implements DocumentStore {
  private readonly retained: number;
  private readonly stageBatchChunks: number;
  /**
   * The last write queued per resource: the writes of one resource run one at a time (a message staged
   * over many turns must not interleave with another write of its documents), those of different
   * resources interleave a slice at a time.
   */
  private readonly writeTails = new Map<string, Promise<unknown>>();
  private stageSeq = 0;
  private gen: bigint;
  /**
   * Live documents and their chunks: counted once at open, then moved by each committed write (a count
   * over the tables costs tens of milliseconds at 100k rows, on the serving thread).
   */
  private readonly live: StoreCounts;
  private readonly stmts;
  /** Every write of `chunks_fts` goes through it: it keeps the per-resource BM25 statistics in step. */
  private readonly keywords: KeywordRows;
  /** The connection's marks of the resources being written (see `serially`). */
  private readonly writes: DocumentWriteLog;
  /**
   * The WAL of a file database, synced at `syncWrites()`: the publish of an upsert with `deferDurability`
   * (a message of an UpsertDocuments stream) commits without an fsync, and the stream's one fsync, off the
   * serving thread, covers all of its messages (each was an fsync on the serving thread, ~7 ms apiece).
   */
  private readonly wal: WalSync | undefined;
  /** One-step writes waiting for their group commit (see `writeInOneStep`), and the turn that commits the next group. */
  private oneStepQueue: OneStepWrite[] = [];
  private oneStepFlush: NodeJS.Immediate | undefined;
  /** A group of one-step writes and one generation bump (if any wrote), in one transaction. */
  private readonly oneStepTransaction;
  private embedPrepared?: {
    missing: Statement<[string, number, number], { chunk_key: number; text: string }>;
    target: Statement<[number, string], { path: string; superseded_at: number | null }>;
    set: Statement<[Buffer, number]>;
  };

  constructor(
    private readonly db: SqliteDatabase,
    opts: SqliteDocumentStoreOptions = {},
  ) {
    this.retained = opts.retainedVersions ?? DEFAULT_RETAINED_VERSIONS;
    this.wal = !db.memory && db.pragma("journal_mode", { simple: true }) === "wal" ? new WalSync(`${db.name}-wal`) : undefined;
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
      CREATE INDEX IF NOT EXISTS documents_versions ON documents (resource_id, path, superseded_at);
      CREATE TABLE IF NOT EXISTS chunks (
        chunk_key INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_key INTEGER NOT NULL REFERENCES documents (doc_key) ON DELETE CASCADE,
        resource_id TEXT NOT NULL,
        path TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB
      );
      CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_key);
      CREATE INDEX IF NOT EXISTS chunks_by_resource ON chunks (resource_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (body, rid, tokenize = 'porter unicode61');
    `);
    migrateToStaging(db);
    // FTS5 keeps a deleted row's terms in its index segments until they are merged; secure-delete removes
    // them at once, so an erased chunk's words are in no segment (a persistent setting of the table).
    db.exec("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('secure-delete', 1)");
    this.keywords = new KeywordRows(db);
    this.writes = documentWriteLog(db);
    this.stmts = {
      generation: db.prepare("SELECT generation FROM index_state WHERE id = 1").pluck().safeIntegers(),
      // Index-only: the partial index of live published documents, then each one's chunks through chunks_by_doc.
      counts: db.prepare<[], StoreCounts>(
        `SELECT (SELECT COUNT(*) FROM documents WHERE superseded_at IS NULL AND staged IS NULL) AS documents,
                (SELECT COUNT(*) FROM documents d JOIN chunks c ON c.doc_key = d.doc_key WHERE d.superseded_at IS NULL AND d.staged IS NULL) AS chunks`,
      ),
      bump: db.prepare("UPDATE index_state SET generation = generation + 1 WHERE id = 1 RETURNING generation").pluck().safeIntegers(),
      live: db.prepare<[string, string], { doc_key: number; fingerprint: string }>(
        "SELECT doc_key, fingerprint FROM documents WHERE resource_id = ? AND path = ? AND superseded_at IS NULL AND staged IS NULL",
      ),
      stageDoc: db.prepare<[string, string, string, string, string, number, number]>(
        "INSERT INTO documents (resource_id, path, content, metadata, fingerprint, created_at, staged) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      markReplaced: db.prepare<[number, number]>("UPDATE documents SET superseded_by = ? WHERE doc_key = ?"),
      unmarkReplaced: db.prepare<[number, number]>(
        "UPDATE documents SET superseded_by = NULL WHERE doc_key IN (SELECT doc_key FROM documents WHERE superseded_by = ? LIMIT ?)",
      ),
      publishStage: db.prepare<[number, number]>("INSERT INTO published_stages (stage, at) VALUES (?, ?)"),
      sweepReplaced: db.prepare<[number, number]>("UPDATE documents SET superseded_at = ?, superseded_by = NULL WHERE doc_key = ?"),
      sweepStaged: db.prepare<[number]>("UPDATE documents SET staged = NULL WHERE doc_key = ?"),
      forgetStage: db.prepare<[number]>("DELETE FROM published_stages WHERE stage = ?"),
      publishedStages: db.prepare<[], { stage: number }>("SELECT stage FROM published_stages"),
      finishReplaced: db.prepare<[{ stage: number }]>(
        "UPDATE documents SET superseded_at = (SELECT at FROM published_stages WHERE stage = @stage), superseded_by = NULL WHERE superseded_by = @stage",
      ),
      finishStaged: db.prepare<[number]>("UPDATE documents SET staged = NULL WHERE staged = ?"),
      unmarkAll: db.prepare("UPDATE documents SET superseded_by = NULL WHERE superseded_by IS NOT NULL"),
      stagedChunks: db.prepare<[number, number], { chunk_key: number }>(
        "SELECT c.chunk_key FROM chunks c JOIN documents d ON d.doc_key = c.doc_key WHERE d.staged = ? LIMIT ?",
      ),
      stagedDocs: db.prepare<[number, number], { doc_key: number }>("SELECT doc_key FROM documents WHERE staged = ? LIMIT ?"),
      anyStage: db.prepare<[], { staged: number }>("SELECT DISTINCT staged FROM documents WHERE staged IS NOT NULL"),
      supersedeDoc: db.prepare<[number, number]>("UPDATE documents SET superseded_at = ? WHERE doc_key = ?"),
      insertDoc: db.prepare<[string, string, string, string, string, number]>(
        "INSERT INTO documents (resource_id, path, content, metadata, fingerprint, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      insertChunk: db.prepare<[number, string, string, number, string, Buffer | null]>(
        "INSERT INTO chunks (doc_key, resource_id, path, chunk_index, text, embedding) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      strayFts: db.prepare<[string, string, number], { rowid: number }>(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid NOT IN (SELECT chunk_key FROM chunks WHERE resource_id = ?) LIMIT ?",
      ),
      expired: db.prepare<[string, string, number], { doc_key: number }>(
        `SELECT doc_key FROM documents WHERE resource_id = ? AND path = ? AND superseded_at IS NOT NULL
         ORDER BY superseded_at DESC, doc_key DESC LIMIT -1 OFFSET ?`,
      ),
      chunksOfDoc: db.prepare<[number], { chunk_key: number; has_vector: number }>(
        "SELECT chunk_key, embedding IS NOT NULL AS has_vector FROM chunks WHERE doc_key = ?",
      ),
      deleteDoc: db.prepare<[number]>("DELETE FROM documents WHERE doc_key = ?"),
      deleteChunk: db.prepare<[number]>("DELETE FROM chunks WHERE chunk_key = ?"),
      getChunks: db.prepare<[string], StoredChunkRow>(
        `SELECT c.chunk_key, c.doc_key, c.resource_id, c.path, c.chunk_index, c.text, NULL AS embedding, d.superseded_at, d.metadata
         FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
         WHERE c.chunk_key IN (SELECT value FROM json_each(?))`,
      ),
      vectors: db.prepare<[], ChunkRow>(VECTORS_SQL),
      docsOfResource: db.prepare<[string, number], { doc_key: number; live: number; chunks: number }>(
        `SELECT d.doc_key, (d.superseded_at IS NULL AND d.staged IS NULL) AS live, (SELECT COUNT(*) FROM chunks c WHERE c.doc_key = d.doc_key) AS chunks
           FROM documents d WHERE d.resource_id = ? LIMIT ?`,
      ),
      ftsOfResource: db.prepare<[string, number], { rowid: number }>("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?"),
      chunksOfResourceAfter: db.prepare<[string, number, number], ChunkRow>(
        `SELECT c.chunk_key, c.doc_key, c.resource_id, c.path, c.chunk_index, c.text, c.embedding, d.superseded_at
         FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
         WHERE c.resource_id = ? AND c.chunk_key > ? ORDER BY c.chunk_key LIMIT ?`,
      ),
    };
    this.gen = this.stmts.generation.get() as bigint;
    this.oneStepTransaction = db.transaction((group: readonly OneStepWrite[]) => {
      // The keyword counters move once a resource of the group, not once a chunk.
      const writes = this.keywords.batch(() => group.map((w) => this.writeOneStepRows(w)));
      const generation = writes.some((o) => o.upserted > 0) ? (this.stmts.bump.get() as bigint) : this.gen;
      return { writes, generation };
    });
    this.stageBatchChunks = Math.max(1, opts.stageBatchChunks ?? DEFAULT_STAGE_BATCH_CHUNKS);
    // A process killed while publishing leaves a published stage not yet swept: finished here. One killed
    // while staging leaves staged rows (never visible) and marks on the versions they would replace: dropped here.
    db.transaction(() => {
      for (const { stage } of this.stmts.publishedStages.all()) this.finishStage(stage);
      this.stmts.unmarkAll.run();
    }).immediate();
    for (const { staged } of this.stmts.anyStage.all()) this.discardSlice(staged, Number.MAX_SAFE_INTEGER);
    this.live = this.stmts.counts.get()!;
  }

  async counts(): Promise<StoreCounts> {
    return { ...this.live };
  }

  async generation(): Promise<bigint> {
    return this.gen;
  }

  async bumpGeneration(): Promise<bigint> {
    this.gen = this.stmts.bump.get() as bigint;
    return this.gen;
  }

  async getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
    if (keys.length === 0) return new Map();
    return chunkRecordsOf(this.stmts.getChunks.all(JSON.stringify(keys)));
  }

  /**
   * Streams the retained vectors from one committed state without reading them whole: on a file database
   * a read-only connection of its own holds a read transaction (WAL: writers go on meanwhile) while its
   * statement steps row by row, so the consumer takes them a batch per event-loop turn and neither the
   * rows nor their blobs are ever all in memory at once (better-sqlite3 refuses other statements only on
   * a connection with an open iterator, and this one runs no other). An in-memory database has no second
   * connection: read whole there (tests).
   */
  async *iterateVectors(): AsyncIterable<VectorEntry> {
    const entry = (row: ChunkRow): VectorEntry => ({
      chunkKey: row.chunk_key,
      resourceId: row.resource_id,
      path: row.path,
      supersededAt: row.superseded_at,
      vector: vectorFromBytes(row.embedding!),
    });
    if (this.db.memory) {
      for (const row of this.stmts.vectors.all()) yield entry(row);
      return;
    }
    const reader = openSqliteReader(this.db.name);
    try {
      reader.exec("BEGIN");
      for (const row of reader.prepare<[], ChunkRow>(VECTORS_SQL).iterate()) yield entry(row);
      reader.exec("COMMIT");
    } finally {
      reader.close();
    }
  }

  /**
   * Stages the message over many event-loop turns, publishes it with one small statement, then settles
   * it over many turns again; no step is linear in the message's size on the serving thread.
   *
   * Staging writes the new document versions, their chunks and keyword rows in transactions of at most
   * `stageBatchChunks` chunks (or 1 MiB of text), yielding to the event loop between them, with rows
   * marked `staged` (the message's stage id) and the live versions they replace marked `superseded_by`
   * it; readers see documents through the `visible_documents` view, which shows a staged row, and treats
   * a marked one as superseded, only once its stage is in `published_stages`. Writes of other resources
   * run between those slices. Once staged, `hooks.beforePublish` gets the message's vector entries
   * (invisible until the publish). Publishing is one transaction of two statements: the stage's row in
   * `published_stages` and the generation bump. From that commit on every reader sees the whole message
   * (the versions it replaces superseded at `now`), and before it none of it; `hooks.afterPublish` is told
   * at once. Settling then rewrites the rows to their plain form (supersession times, `staged` cleared) and
   * drops versions beyond retention, a slice per turn, which no reader can tell from the published state;
   * then the stage's row goes. The promise resolves once settled (the next write of the resource sees
   * plain rows). A failure while staging (the message was validated before) removes what was staged and
   * the marks, so nothing of it remains; a crash while staging leaves rows the next open drops, a crash
   * once published leaves a stage the next open settles.
   */
  async upsertDocuments(
    resourceId: string,
    documents: readonly DocumentInputRecord[],
    now: number,
    hooks?: UpsertHooks,
  ): Promise<UpsertOutcome> {
    return this.serially(resourceId, async () => {
      if (hooks?.series?.failedBefore) throw refusedInSeries();
      if (
        !hooks?.beforePublish &&
        this.sliceEnd(documents, 0) === documents.length &&
        documents.every((d) => d.chunks.every((c) => !c.embedding))
      )
        return this.writeInOneStep(resourceId, documents, now, hooks);
      const stage = ++this.stageSeq;
      const staged: StagedDocument[] = [];
      const added: VectorEntry[] = [];
      let documentsUnchanged = 0;
      let chunksIndexed = 0;
      const rid = resourceToken(resourceId);
      // A path named twice in one message: its later version replaces the one staged earlier, as if
      // the message were applied document by document (the embedded store's rule before staging).
      const stagedByPath = new Map<string, { doc_key: number; fingerprint: string }>();
      const stageRows = (from: number, to: number) => {
        for (let i = from; i < to; i++) {
          const doc = documents[i];
          const print = documentFingerprint(doc);
          const earlier = stagedByPath.get(doc.path);
          const live = earlier ?? this.stmts.live.get(resourceId, doc.path);
          if (live && live.fingerprint === print) {
            documentsUnchanged += 1;
            continue;
          }
          const docKey = Number(
            this.stmts.stageDoc.run(resourceId, doc.path, doc.content, JSON.stringify(doc.metadata), print, now, stage).lastInsertRowid,
          );
          doc.chunks.forEach((chunk, index) => {
            const chunkKey = Number(
              this.stmts.insertChunk.run(
                docKey,
                resourceId,
                doc.path,
                index,
                chunk.text,
                chunk.embedding ? vectorToBytes(chunk.embedding) : null,
              ).lastInsertRowid,
            );
            this.keywords.insert(chunkKey, chunk.text, rid);
            if (chunk.embedding) added.push({ chunkKey, resourceId, path: doc.path, supersededAt: null, vector: chunk.embedding });
          });
          chunksIndexed += doc.chunks.length;
          if (live) this.stmts.markReplaced.run(stage, live.doc_key);
          // (A repeated path's retention is settled once its versions are superseded.)
          const expires = live && !earlier ? this.stmts.expired.all(resourceId, doc.path, this.retained - 1).map((r) => r.doc_key) : [];
          const replaced = live ? this.stmts.chunksOfDoc.all(live.doc_key) : [];
          const replacedVectors = replaced.filter((c) => c.has_vector).map((c) => c.chunk_key);
          staged.push({
            path: doc.path,
            docKey,
            replaces: live?.doc_key,
            replacedVectors,
            chunkDelta: doc.chunks.length - replaced.length,
            replacesStaged: earlier !== undefined,
            expires,
          });
          stagedByPath.set(doc.path, { doc_key: docKey, fingerprint: print });
        }
      };
      // The keyword counters move once a slice, not once a chunk.
      const stageSlice = this.db.transaction((from: number, to: number) => this.keywords.batch(() => stageRows(from, to)));
      const vectors: VectorChanges = { added, superseded: [], removed: [], at: now };
      const publish = this.db.transaction((): bigint => {
        this.stmts.publishStage.run(stage, now);
        return this.stmts.bump.get() as bigint;
      });
      try {
        for (let from = 0; from < documents.length;) {
          const to = this.sliceEnd(documents, from);
          // Staged rows are invisible until the publish, and dropped at open after a crash: no fsync of their
          // own; the publish commit (synchronous FULL) syncs the WAL with every slice before it.
          withoutFsync(this.db, () => stageSlice.immediate(from, to));
          from = to;
          if (from < documents.length) await yieldToEventLoop();
        }
        if (hooks?.beforePublish) await hooks.beforePublish(added);
        if (staged.length > 0) this.gen = this.commitPublish(() => publish.immediate(), hooks?.deferDurability === true);
      } catch (err) {
        await this.discard(stage);
        throw err;
      }
      for (const d of staged) {
        vectors.superseded.push(...d.replacedVectors);
        if (d.replaces === undefined) this.live.documents += 1;
        this.live.chunks += d.chunkDelta;
      }
      if (staged.length > 0) {
        hooks?.afterPublish?.(vectors.superseded, now);
        await this.settle(resourceId, stage, staged, vectors);
      }
      return {
        documentsUpserted: staged.length,
        documentsUnchanged,
        chunksIndexed,
        vectorsIndexed: added.length,
        generation: this.gen,
        vectors,
      };
    });
  }

  /**
   * A message no larger than one staging slice, without vectors, whose caller has nothing to do before it is
   * published (no `beforePublish`), written in one transaction: the same rows, versions and retention as
   * staging, publishing and settling it would leave, with one commit in place of several (a message of one
   * small document cost ~2.4 ms in five commits and three event-loop turns). The vectors of the versions it
   * supersedes go to `afterPublish` at once, as a publish's do.
   *
   * Group commit: when the caller says other writes are under way (`hooks.groupCommit`), the message joins
   * the writes of this kind queued by other callers (other streams, other resources; a resource has one
   * write in flight at a time, see `serially`) and the next event-loop turn commits them together, as many
   * as fit one staging slice, in one transaction; else, with nothing queued, it commits at once. Each commit of a small
   * message used to cost more than its rows (FTS5 writes its pending terms as a new segment at every commit,
   * and segments are merged later). The group is no longer than one staging slice, so it holds the event loop
   * no longer than before; each message resolves once its group is committed and visible. A group whose
   * transaction fails is written again a message per transaction, so a message that fails does so alone and
   * the others commit as they would have.
   */
  private writeInOneStep(
    resourceId: string,
    documents: readonly DocumentInputRecord[],
    now: number,
    hooks?: UpsertHooks,
  ): Promise<UpsertOutcome> {
    return new Promise<UpsertOutcome>((resolve, reject) => {
      let chunks = 0;
      let bytes = 0;
      for (const doc of documents) {
        chunks += Math.max(1, doc.chunks.length);
        bytes += doc.content.length;
        for (const c of doc.chunks) bytes += c.text.length;
      }
      this.oneStepQueue.push({ resourceId, documents, now, hooks, chunks, bytes, resolve, reject });
      // Queued in order: the next write of its series may be handed over, to commit with it or after it.
      hooks?.series?.queued();
      // A lone writer (nothing queued, no other write under way) commits at once: it would wait for nobody.
      if (this.oneStepQueue.length === 1 && hooks?.groupCommit !== true) this.commitOneStepGroup();
      else this.scheduleOneStep();
    });
  }

  private scheduleOneStep(): void {
    if (this.oneStepFlush !== undefined || this.oneStepQueue.length === 0) return;
    this.oneStepFlush = setImmediate(() => {
      this.oneStepFlush = undefined;
      this.commitOneStepGroup();
      // One group a turn: what is left waits for the next, after the reads and other writes queued meanwhile.
      this.scheduleOneStep();
    });
  }

  /** Takes the queue's first writes that fit one staging slice (at least one) and commits them. */
  private commitOneStepGroup(): void {
    // A write whose series failed before it is refused (see UpsertHooks.series), never written.
    for (let i = 0; i < this.oneStepQueue.length;) {
      const w = this.oneStepQueue[i];
      if (w.hooks?.series?.failedBefore) {
        this.oneStepQueue.splice(i, 1);
        w.reject(refusedInSeries());
      } else i += 1;
    }
    let chunks = 0;
    let bytes = 0;
    let n = 0;
    for (const w of this.oneStepQueue) {
      if (n > 0 && (chunks + w.chunks > this.stageBatchChunks || bytes + w.bytes > STAGE_BATCH_BYTES)) break;
      chunks += w.chunks;
      bytes += w.bytes;
      n += 1;
    }
    const group = this.oneStepQueue.splice(0, n);
    if (group.length === 0) return;
    let committed: ReturnType<typeof this.commitOneStep>;
    try {
      committed = this.commitOneStep(group);
    } catch (err) {
      if (group.length === 1) {
        failOneStep(group[0], err);
        return;
      }
      // Rolled back whole: each message on its own, in order, so only the one that fails fails (and the
      // writes of its series after it are refused, as they would not have been sent after it).
      for (const w of group) {
        if (w.hooks?.series?.failedBefore) {
          w.reject(refusedInSeries());
          continue;
        }
        let alone: ReturnType<typeof this.commitOneStep>;
        try {
          alone = this.commitOneStep([w]);
        } catch (e) {
          failOneStep(w, e);
          continue;
        }
        this.settleOneStep([w], alone);
      }
      return;
    }
    this.settleOneStep(group, committed);
  }

  /** Writes `group` in one transaction: durable at commit unless every message defers it. */
  private commitOneStep(group: readonly OneStepWrite[]): { writes: OneStepRows[]; generation: bigint } {
    const out = this.commitPublish(
      () => this.oneStepTransaction.immediate(group),
      group.every((w) => w.hooks?.deferDurability === true),
    );
    this.gen = out.generation;
    return out;
  }

  /** After the commit: each message's counts, its hook (a hook that throws rejects its own message) and its outcome. */
  private settleOneStep(group: readonly OneStepWrite[], out: { writes: OneStepRows[]; generation: bigint }): void {
    out.writes.forEach((o, i) => {
      const w = group[i];
      this.live.documents += o.newDocuments;
      this.live.chunks += o.chunkDelta;
      try {
        if (o.upserted > 0) w.hooks?.afterPublish?.(o.vectors.superseded, w.now);
      } catch (err) {
        failOneStep(w, err);
        return;
      }
      w.resolve({
        documentsUpserted: o.upserted,
        documentsUnchanged: o.unchanged,
        chunksIndexed: o.chunksIndexed,
        vectorsIndexed: 0,
        generation: out.generation,
        vectors: o.vectors,
      });
    });
  }

  /** The rows of one message written in one step (inside `oneStepTransaction`), and what they changed. */
  private writeOneStepRows(w: OneStepWrite): OneStepRows {
    const { resourceId, documents, now } = w;
    const rid = resourceToken(resourceId);
    const vectors: VectorChanges = { added: [], superseded: [], removed: [], at: now };
    let upserted = 0;
    let unchanged = 0;
    let chunksIndexed = 0;
    let newDocuments = 0;
    let chunkDelta = 0;
    for (const doc of documents) {
      const print = documentFingerprint(doc);
      const live = this.stmts.live.get(resourceId, doc.path);
      if (live && live.fingerprint === print) {
        unchanged += 1;
        continue;
      }
      if (live) chunkDelta -= this.supersede(live.doc_key, now, vectors);
      else newDocuments += 1;
      const docKey = Number(
        this.stmts.insertDoc.run(resourceId, doc.path, doc.content, JSON.stringify(doc.metadata), print, now).lastInsertRowid,
      );
      doc.chunks.forEach((chunk, index) => {
        const chunkKey = Number(this.stmts.insertChunk.run(docKey, resourceId, doc.path, index, chunk.text, null).lastInsertRowid);
        this.keywords.insert(chunkKey, chunk.text, rid);
      });
      chunksIndexed += doc.chunks.length;
      chunkDelta += doc.chunks.length;
      if (live) this.expire(resourceId, doc.path, vectors);
      upserted += 1;
    }
    return { upserted, unchanged, chunksIndexed, newDocuments, chunkDelta, vectors };
  }

  /**
   * Settles a published stage a slice of `stageBatchChunks` documents per transaction (see
   * `upsertDocuments`): each replaced version gets its supersession time and each staged row its plain
   * form, in message order (a path named twice supersedes its first version after that version is
   * plain); then versions beyond retention are dropped, reporting their vectors in `vectors.removed`, and
   * the stage's row goes. Should a slice fail, the stage is settled in one step (any leftover would mislead
   * the next write's look-up of live versions) and the retention drops are left to the next write of each
   * document; only when that fails too does the (published) write reject.
   */
  private async settle(resourceId: string, stage: number, staged: readonly StagedDocument[], vectors: VectorChanges): Promise<void> {
    const repeated = [...new Set(staged.filter((d) => d.replacesStaged).map((d) => d.path))];
    const sweep = this.db.transaction((from: number) => {
      for (const d of staged.slice(from, from + this.stageBatchChunks)) {
        if (d.replaces !== undefined) this.stmts.sweepReplaced.run(vectors.at, d.replaces);
        this.stmts.sweepStaged.run(d.docKey);
      }
    });
    const retire = this.db.transaction((from: number) => {
      for (const d of staged.slice(from, from + this.stageBatchChunks)) for (const docKey of d.expires) this.dropVersion(docKey, vectors);
    });
    const retireRepeated = this.db.transaction((from: number) => {
      for (const path of repeated.slice(from, from + this.stageBatchChunks)) this.expire(resourceId, path, vectors);
    });
    // Settling changes no answer (the publish is what readers see) and a stage left half settled is finished
    // at open: its slices commit without an fsync of their own; the next durable commit syncs them.
    try {
      for (let from = 0; from < staged.length; from += this.stageBatchChunks) {
        await yieldToEventLoop();
        withoutFsync(this.db, () => sweep.immediate(from));
      }
      withoutFsync(this.db, () => this.stmts.forgetStage.run(stage));
      for (let from = 0; from < staged.length; from += this.stageBatchChunks) {
        if (!staged.slice(from, from + this.stageBatchChunks).some((d) => d.expires.length > 0)) continue;
        await yieldToEventLoop();
        withoutFsync(this.db, () => retire.immediate(from));
      }
      for (let from = 0; from < repeated.length; from += this.stageBatchChunks) {
        await yieldToEventLoop();
        withoutFsync(this.db, () => retireRepeated.immediate(from));
      }
    } catch {
      this.db.transaction(() => this.finishStage(stage)).immediate();
    }
  }

  /**
   * Commits a publish: when `deferred` (and the WAL is synced by `syncWrites`) without an fsync, marked for the
   * next `syncWrites()`, which the caller awaits before acknowledging the write; else as the connection commits
   * (`synchronous = FULL`). Readers see it at once either way. A process killed meanwhile loses nothing (the
   * WAL frames are written); after a power loss the WAL replays in commit order, so the database is at some
   * commit: a prefix of the publishes, and every acknowledged one.
   */
  private commitPublish<T>(publish: () => T, deferred: boolean): T {
    const wal = this.wal;
    if (!wal || !deferred) return publish();
    const out = withoutFsync(this.db, publish);
    wal.wrote();
    return out;
  }

  async syncWrites(): Promise<void> {
    await this.wal?.sync();
  }

  /** How many fsyncs `syncWrites` made (each covering every deferred publish before it): a figure for tests and operators. */
  get walSyncs(): number {
    return this.wal?.syncs ?? 0;
  }

  /** Syncs what is left and lets go of the WAL handle (the database itself is closed by its opener). */
  async close(): Promise<void> {
    // Writes still waiting for their group commit are written first (their callers have not heard yet).
    if (this.oneStepFlush !== undefined) clearImmediate(this.oneStepFlush);
    this.oneStepFlush = undefined;
    while (this.oneStepQueue.length > 0) this.commitOneStepGroup();
    await this.wal?.close();
  }

  /** Settles a published stage in one step (at open, or when settling it in slices failed). */
  private finishStage(stage: number): void {
    this.stmts.finishReplaced.run({ stage });
    this.stmts.finishStaged.run(stage);
    this.stmts.forgetStage.run(stage);
  }

  /**
   * Runs `write` after every write of `resourceId` queued before it has settled, marked in the connection's
   * DocumentWriteLog from its start to its end (caches of what readers read of the resource go by it).
   */
  private serially<T>(resourceId: string, write: () => Promise<T>): Promise<T> {
    const marked = async (): Promise<T> => {
      beginDocumentWrite(this.writes, resourceId);
      try {
        return await write();
      } finally {
        endDocumentWrite(this.writes, resourceId);
      }
    };
    const result = (this.writeTails.get(resourceId) ?? Promise.resolve()).then(marked);
    const tail = result.catch(() => undefined);
    this.writeTails.set(resourceId, tail);
    void tail.then(() => {
      if (this.writeTails.get(resourceId) === tail) this.writeTails.delete(resourceId);
    });
    return result;
  }

  /** The end of the staging slice that starts at `from`: at least one document, then up to the chunk and byte bounds. */
  private sliceEnd(documents: readonly DocumentInputRecord[], from: number): number {
    let chunks = 0;
    let bytes = 0;
    let i = from;
    do {
      const doc = documents[i];
      chunks += Math.max(1, doc.chunks.length);
      bytes += doc.content.length;
      for (const c of doc.chunks) bytes += c.text.length;
      i += 1;
    } while (
      i < documents.length &&
      chunks + Math.max(1, documents[i].chunks.length) <= this.stageBatchChunks &&
      bytes < STAGE_BATCH_BYTES
    );
    return i;
  }

  /** Removes an unpublished stage's marks and rows (keyword rows, chunks, documents) a slice at a time. */
  private async discard(stage: number): Promise<void> {
    // Rows of a stage never published: no reader sees them, and open drops what a crash leaves.
    while (withoutFsync(this.db, () => this.discardSlice(stage, this.stageBatchChunks))) await yieldToEventLoop();
  }

  /** Removes up to `limit` of a stage's marks, else chunks (and, once none are left, its documents); true while some remain. */
  private discardSlice(stage: number, limit: number): boolean {
    return this.db
      .transaction((): boolean => {
        if (this.stmts.unmarkReplaced.run(stage, limit).changes === limit) return true;
        const chunks = this.stmts.stagedChunks.all(stage, limit);
        for (const c of chunks) {
          this.keywords.delete(c.chunk_key);
          this.stmts.deleteChunk.run(c.chunk_key);
        }
        if (chunks.length === limit) return true;
        const docs = this.stmts.stagedDocs.all(stage, limit);
        for (const d of docs) this.stmts.deleteDoc.run(d.doc_key);
        return docs.length === limit;
      })
      .immediate();
  }

  async deleteDocuments(resourceId: string, paths: readonly string[], now: number): Promise<DeleteOutcome> {
    return this.serially(resourceId, async () => this.deleteNow(resourceId, paths, now));
  }

  private deleteNow(resourceId: string, paths: readonly string[], now: number): DeleteOutcome {
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

  /**
   * Re-indexes in slices of `stageBatchChunks` chunks, one transaction each, yielding between them: every
   * chunk's keyword row is rewritten (INSERT OR REPLACE, so at every moment each chunk has its row and a
   * search finds what it found before), then, when `full`, keyword rows tagged with the resource that
   * no chunk of it backs are deleted, a slice at a time too (no search ever joins them to a chunk; they
   * only skew BM25 statistics). The generation is bumped once, at the end.
   */
  async reindexResource(resourceId: string, full: boolean): Promise<ReindexOutcome> {
    return this.serially(resourceId, async () => {
      const rid = resourceToken(resourceId);
      const docs = new Set<number>();
      const vectors: VectorEntry[] = [];
      let chunks = 0;
      let after = -1;
      const rewrite = this.db.transaction((): number => {
        const rows = this.stmts.chunksOfResourceAfter.all(resourceId, after, this.stageBatchChunks);
        for (const row of rows) {
          this.keywords.replace(row.chunk_key, row.text, rid);
          docs.add(row.doc_key);
          if (row.embedding) {
            vectors.push({
              chunkKey: row.chunk_key,
              resourceId,
              path: row.path,
              supersededAt: row.superseded_at,
              vector: vectorFromBytes(row.embedding),
            });
          }
          after = row.chunk_key;
        }
        return rows.length;
      });
      // Each slice rewrites keyword rows as they were (a crash keeps either copy): no fsync of its own; the
      // generation's bump at the end commits with one.
      const rewriteSlice = () => withoutFsync(this.db, () => rewrite.immediate());
      for (let n = rewriteSlice(); n > 0; n = rewriteSlice()) {
        chunks += n;
        await yieldToEventLoop();
      }
      const dropStrays = this.db.transaction((): number => {
        const strays = this.stmts.strayFts.all(`rid : "${rid}"`, resourceId, this.stageBatchChunks);
        for (const s of strays) this.keywords.delete(s.rowid);
        return strays.length;
      });
      if (full) while (withoutFsync(this.db, () => dropStrays.immediate()) > 0) await yieldToEventLoop();
      this.gen = this.stmts.bump.get() as bigint;
      return { documents: docs.size, chunks, vectors, generation: this.gen };
    });
  }

  /**
   * Erases a slice of the resource's document versions (whole documents, about `maxChunks` chunks) with
   * their chunks and keyword rows in one transaction; once none is left, keyword rows tagged with the
   * resource that no chunk backs. Runs in the resource's write order, so no upload of it interleaves.
   */
  async eraseResourceSlice(resourceId: string, maxChunks: number): Promise<ErasureSlice> {
    return this.serially(resourceId, async () => {
      const limit = Math.max(1, maxChunks);
      const changes: VectorChanges = { added: [], superseded: [], removed: [], at: Date.now() };
      const run = this.db.transaction(() => {
        const docs = this.stmts.docsOfResource.all(resourceId, limit + 1);
        let chunks = 0;
        let documents = 0;
        let liveDocs = 0;
        let liveChunks = 0;
        for (const d of docs) {
          if (documents > 0 && chunks + d.chunks > limit) break;
          this.dropVersion(d.doc_key, changes);
          documents += 1;
          chunks += d.chunks;
          if (d.live) {
            liveDocs += 1;
            liveChunks += d.chunks;
          }
        }
        let done = documents === docs.length;
        if (done) {
          const strays = this.stmts.ftsOfResource.all(`rid : "${resourceToken(resourceId)}"`, limit);
          for (const r of strays) this.keywords.delete(r.rowid);
          done = strays.length < limit;
        }
        const generation = this.stmts.bump.get() as bigint;
        return { documents, chunks, liveDocs, liveChunks, done, generation };
      });
      // The intent is durable in the registry and a crash redoes what was lost: a slice needs no fsync of its
      // own (the checkpoint at the end, `reclaimSpace`, syncs the file).
      const out = withoutFsync(this.db, () => run.immediate());
      this.gen = out.generation;
      this.live.documents -= out.liveDocs;
      this.live.chunks -= out.liveChunks;
      await yieldToEventLoop();
      return {
        documents: out.documents,
        chunks: out.chunks,
        vectors: changes.removed.length,
        changes,
        done: out.done,
        generation: out.generation,
      };
    });
  }

  async reclaimSpace(): Promise<void> {
    await checkpointWal(this.db);
  }

  async chunksWithoutVector(resourceId: string, afterKey: number, limit: number): Promise<ChunkToEmbed[]> {
    return this.embedStmts.missing.all(resourceId, afterKey, Math.max(1, limit)).map((r) => ({ chunkKey: r.chunk_key, text: r.text }));
  }

  async setChunkVectors(
    resourceId: string,
    vectors: ReadonlyArray<{ chunkKey: number; vector: Float32Array }>,
  ): Promise<StoredChunkVectors> {
    // In the resource's write order: never between the slices of a message being staged.
    return this.serially(resourceId, async () => {
      const added: VectorEntry[] = [];
      this.db
        .transaction(() => {
          for (const v of vectors) {
            const row = this.embedStmts.target.get(v.chunkKey, resourceId);
            if (!row) continue;
            this.embedStmts.set.run(vectorToBytes(v.vector), v.chunkKey);
            added.push({ chunkKey: v.chunkKey, resourceId, path: row.path, supersededAt: row.superseded_at, vector: v.vector });
          }
          this.gen = this.stmts.bump.get() as bigint;
        })
        .immediate();
      return { added, generation: this.gen };
    });
  }

  /** The statements of chunksWithoutVector and setChunkVectors (prepared on first use). */
  private get embedStmts() {
    this.embedPrepared ??= {
      missing: this.db.prepare<[string, number, number], { chunk_key: number; text: string }>(
        `SELECT c.chunk_key, c.text FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
          WHERE c.resource_id = ? AND c.chunk_key > ? AND c.embedding IS NULL ORDER BY c.chunk_key LIMIT ?`,
      ),
      target: this.db.prepare<[number, string], { path: string; superseded_at: number | null }>(
        `SELECT c.path, d.superseded_at FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
          WHERE c.chunk_key = ? AND c.resource_id = ? AND c.embedding IS NULL`,
      ),
      set: this.db.prepare<[Buffer, number]>("UPDATE chunks SET embedding = ? WHERE chunk_key = ?"),
    };
    return this.embedPrepared;
  }

  /** Supersedes a live version; returns how many chunks it had. */
  private supersede(docKey: number, now: number, vectors: VectorChanges): number {
    this.stmts.supersedeDoc.run(now, docKey);
    const chunks = this.stmts.chunksOfDoc.all(docKey);
    for (const c of chunks) if (c.has_vector) vectors.superseded.push(c.chunk_key);
    return chunks.length;
  }

  /** Drops the superseded versions of a document beyond the retention cap, with their chunks and rows. */
  private expire(resourceId: string, path: string, vectors: VectorChanges): void {
    for (const { doc_key } of this.stmts.expired.all(resourceId, path, this.retained)) this.dropVersion(doc_key, vectors);
  }

  /** Drops one document version with its chunks and keyword rows. */
  private dropVersion(docKey: number, vectors: VectorChanges): void {
    for (const c of this.stmts.chunksOfDoc.all(docKey)) {
      this.keywords.delete(c.chunk_key);
      if (c.has_vector) vectors.removed.push(c.chunk_key);
    }
    this.stmts.deleteDoc.run(docKey);
  }
}

/**
 * Brings a database made by an older version up to date: adds the `staged` mark (documents of a message
 * not yet settled) and the `superseded_by` mark (a live version a staged message replaces), the
 * `published_stages` table and the `visible_documents` view every reader goes through (see
 * `upsertDocuments`), keeps staged rows out of the live-version index (so a staged version never
 * collides with the live one), and drops the chunks' own `superseded_at` (the document row's is the one truth).
 */
function migrateToStaging(db: SqliteDatabase): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('documents')").pluck().all() as string[];
  const chunkColumns = db.prepare("SELECT name FROM pragma_table_info('chunks')").pluck().all() as string[];
  db.transaction(() => {
    if (!columns.includes("staged")) db.exec("ALTER TABLE documents ADD COLUMN staged INTEGER");
    if (!columns.includes("superseded_by")) db.exec("ALTER TABLE documents ADD COLUMN superseded_by INTEGER");
    // A chunk's version is its document's: the copy chunks once kept would cost a second UPDATE per chunk when publishing.
    if (chunkColumns.includes("superseded_at")) db.exec("ALTER TABLE chunks DROP COLUMN superseded_at");
    db.exec(`
      DROP INDEX IF EXISTS documents_live;
      CREATE UNIQUE INDEX IF NOT EXISTS documents_live_published ON documents (resource_id, path) WHERE superseded_at IS NULL AND staged IS NULL;
      CREATE INDEX IF NOT EXISTS documents_staged ON documents (staged) WHERE staged IS NOT NULL;
      CREATE INDEX IF NOT EXISTS documents_superseded_by ON documents (superseded_by) WHERE superseded_by IS NOT NULL;
      CREATE TABLE IF NOT EXISTS published_stages (stage INTEGER PRIMARY KEY, at INTEGER NOT NULL);
      DROP VIEW IF EXISTS visible_documents;
      CREATE VIEW visible_documents AS
        SELECT doc_key, resource_id, path, content, metadata, fingerprint, created_at,
          CASE WHEN superseded_by IS NULL THEN superseded_at
               ELSE (SELECT at FROM published_stages WHERE stage = documents.superseded_by) END AS superseded_at
        FROM documents
        WHERE staged IS NULL OR staged IN (SELECT stage FROM published_stages);
    `);
  })();
}

/** A one-step write failed: its series stops there, then its caller hears. */
function failOneStep(w: OneStepWrite, err: unknown): void {
  w.hooks?.series?.fail();
  w.reject(err);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
