import { FailedPreconditionError } from "../domain/errors.js";
import type { VectorEntry } from "./vector-backend.js";

/** One stored chunk version, as search results and FetchContent need it. */
export interface ChunkRecord {
  /** Stable id of this chunk version (unique across versions, never reused). */
  chunkKey: number;
  resourceId: string;
  path: string;
  chunkIndex: number;
  text: string;
  /** The document's metadata. */
  metadata: Record<string, string>;
  /** When this version was superseded (ms since epoch); null while live. */
  supersededAt: number | null;
  /** `uko://<resource>/<path>#<chunkIndex>`. */
  ukoUri: string;
}

/** One chunk of a document to store: its text and, for client-made chunks, its embedding. */
export interface ChunkInputRecord {
  text: string;
  embedding?: Float32Array;
}

/** One document to upsert, already validated (path, sizes, embedding dimension). */
export interface DocumentInputRecord {
  path: string;
  content: string;
  metadata: Record<string, string>;
  chunks: ChunkInputRecord[];
}

/**
 * What a committed write changed in the vector index, for the caller to apply to a vector backend after
 * the commit: new entries, chunk versions superseded at `at`, and chunk versions dropped by retention,
 * applied in that order (one message may add a version and supersede it: a path named twice).
 */
export interface VectorChanges {
  added: VectorEntry[];
  superseded: number[];
  removed: number[];
  at: number;
}

/** What a caller of `upsertDocuments` may do while the message is written. */
export interface UpsertHooks {
  /**
   * Called at most once, after the message is staged and before it is published, with the vector entries
   * it adds: their chunks are invisible to every reader until the publish, so a caller may add them to a
   * vector index a slice at a time now (a search that finds one drops it when it hydrates the chunk), and
   * the publish then makes text and vectors visible at once. When it rejects, nothing is published (the
   * rejection is the write's). A store that writes a message in one transaction need not call it; the
   * entries are in the outcome's `vectors.added` either way.
   */
  beforePublish?(added: readonly VectorEntry[]): Promise<void>;
  /**
   * Called at most once, synchronously, as soon as the message is published (visible to readers), with the
   * chunk keys of the versions it superseded and when, when the store goes on settling the message after
   * publishing it (over several turns): the caller supersedes them in its vector index at once, so no search
   * sees the old and the new version live together. The outcome lists them in `vectors.superseded` too.
   */
  afterPublish?(superseded: readonly number[], at: number): void;
  /**
   * The caller acknowledges this write only after a later `syncWrites()` (one stream of many messages, one
   * answer at its end): the store may resolve once the write is committed and visible, before it is
   * durable, and make it durable with the others at that `syncWrites()` (one fsync for the whole stream,
   * not one a message). A store without `syncWrites` ignores this: its writes are durable on resolving.
   */
  deferDurability?: boolean;
  /**
   * Other writes are under way (other messages being validated or written): the store may hold this one
   * for a moment to commit it in one transaction with theirs (group commit). Without it the store writes at
   * once: a lone writer gains nothing by waiting.
   */
  groupCommit?: boolean;
  /**
   * The write is one of an ordered series (the messages of one UpsertDocuments stream) whose caller may hand
   * it over before the earlier ones have committed, so that a stream's small messages can commit together.
   * A store that queues writes to commit in order calls `series.queued()` once this write is queued: the
   * caller then hands over the next write of the series, which must commit after this one, in the same
   * transaction or a later one. Such a store refuses (writes nothing of) a write whose series has failed
   * before it (`series.failedBefore`), and calls `series.fail()` when this write fails, before it tries any
   * later write of the series (a group written again a write per transaction stops the series there). A
   * write that fails after its transaction committed (its `afterPublish` hook threw) leaves the later writes
   * committed with it. A store that never calls `queued()` gets the next write only once this one has resolved.
   */
  series?: WriteInSeries;
}

/** The refusal of a write whose series failed before it (see UpsertHooks.series): nothing of it is written. */
export function refusedInSeries(): FailedPreconditionError {
  return new FailedPreconditionError("an earlier message of this stream failed: this one was not written");
}

/** One write's place in an ordered series of writes (see UpsertHooks.series). */
export interface WriteInSeries {
  /** An earlier write of the series failed: this one must not be written. */
  readonly failedBefore: boolean;
  /** This write failed: no later write of the series may be written. */
  fail(): void;
  /** This write is queued to commit in order: the caller may hand over the next one. */
  queued(): void;
}

/** The live contents of a document store, deployment-wide. */
export interface StoreCounts {
  documents: number;
  chunks: number;
}

/** The outcome of one committed UpsertDocuments message. */
export interface UpsertOutcome {
  /** Documents written (new or changed); identical re-upserts are not counted. */
  documentsUpserted: number;
  /** Documents whose content, metadata and chunks were identical to the live version: nothing written. */
  documentsUnchanged: number;
  chunksIndexed: number;
  vectorsIndexed: number;
  generation: bigint;
  vectors: VectorChanges;
}

/** The outcome of one committed DeleteDocuments. */
export interface DeleteOutcome {
  /** Live documents that were deleted (paths with no live document count nothing). */
  deleted: number;
  generation: bigint;
  vectors: VectorChanges;
}

/** The outcome of re-indexing one resource from its stored documents. */
export interface ReindexOutcome {
  /** Document versions (live and retained superseded ones) re-indexed. */
  documents: number;
  chunks: number;
  /** Every retained chunk version of the resource that has an embedding, to (re)load a vector index. */
  vectors: VectorEntry[];
  generation: bigint;
}

/** What one slice of a resource's erasure removed (every version counts). */
export interface ErasureSlice {
  documents: number;
  chunks: number;
  /** Chunk versions that carried an embedding. */
  vectors: number;
  /** The vector changes to apply (`removed`: the erased chunk keys that carried a vector). */
  changes: VectorChanges;
  /** True once no row of the resource is left. */
  done: boolean;
  generation: bigint;
}

/**
 * The document store port. It keeps documents, their versions and chunks (with embeddings) durably, and is
 * the source every index is rebuilt from.
 *
 * Asynchronous, so a networked engine can implement it. Guarantees every implementation gives:
 * - Each write method (`upsertDocuments`, `deleteDocuments`, `reindexResource`, `bumpGeneration`) takes
 *   effect whole or not at all, and is durable when its promise resolves (an upsert with `deferDurability`:
 *   once a later `syncWrites()` resolves). A store may stage a large write
 *   over several transactions (so no single one holds its engine or the event loop for long), as long as
 *   no reader sees any of it before all of it, a failure leaves none of it, and a crash loses only what
 *   was never acknowledged.
 * - One committed state: a store that also holds a native keyword index (SQLite FTS5, PostgreSQL)
 *   updates it in the same transaction, so a search sees a write entirely or not at all; each read
 *   method (`getChunks`, `iterateVectors`) answers from one committed state.
 * - `index_generation` is monotonic: every committed write bumps it, an outcome carries the generation
 *   of its own commit, and `generation()` answers at least the generation of every write whose promise
 *   resolved before the call (never an older one). A concurrent reader sees the state before a write or
 *   after it, and a generation no newer than the state it read.
 * - Writes may be issued concurrently and commit in some order; the vector changes of their outcomes must
 *   be applied to a vector backend in commit order, so callers that apply them (the Indexer) serialise
 *   the writes of one resource. Writes of different resources touch different rows and chunk keys, so
 *   their vector changes commute: they may run concurrently, and a store that stages a large write
 *   lets another resource's writes run between its slices.
 *
 * Versions: re-upserting a changed document supersedes the live version (it keeps its chunks, stamped
 * with `supersededAt`) and adds a new one; deleting supersedes the live version without a successor.
 * Superseded versions are retained up to a per-document cap (the oldest beyond it are dropped).
 */
export interface DocumentStore {
  /** The chunks of the given keys (missing keys are absent from the map). */
  getChunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>>;
  /** Every retained chunk version that has an embedding, to load the vector index at start. */
  iterateVectors(): AsyncIterable<VectorEntry>;
  /** The current index generation (bumped by every committed write). */
  generation(): Promise<bigint>;
  /**
   * How many live documents (not superseded, not deleted) the store holds, and their chunks, from one
   * committed state: for operators' metrics, read at scrape time, so it must not block the serving thread
   * (SQLite keeps them in memory, moved by each commit; PostgreSQL counts asynchronously).
   */
  counts(): Promise<StoreCounts>;
  /** Stores one batch of documents of one resource at time `now` (ms) in one transaction. */
  upsertDocuments(resourceId: string, documents: readonly DocumentInputRecord[], now: number, hooks?: UpsertHooks): Promise<UpsertOutcome>;
  /** Deletes (supersedes) the live documents at `paths` in one transaction. */
  deleteDocuments(resourceId: string, paths: readonly string[], now: number): Promise<DeleteOutcome>;
  /**
   * Re-indexes a resource's keyword rows from its stored chunks in one transaction. `full` first wipes
   * the resource's keyword rows (stray ones included); otherwise rows are replaced one by one and
   * nothing is dropped.
   */
  reindexResource(resourceId: string, full: boolean): Promise<ReindexOutcome>;
  /** Bumps the generation for a write held elsewhere (e.g. triples), returning the new value. */
  bumpGeneration(): Promise<bigint>;
  /**
   * Erases up to about `maxChunks` chunks of `resourceId` (every version, live, superseded or staged), their
   * documents, keyword rows and stored vectors, in one transaction, bumping the generation. Callers repeat
   * until `done`, yielding between slices, so a large resource never holds the engine or the event loop.
   */
  eraseResourceSlice(resourceId: string, maxChunks: number): Promise<ErasureSlice>;
  /**
   * Makes erased bytes leave the files once an erasure is over: SQLite checkpoints its WAL (secure_delete
   * has zeroed freed pages), DuckDB checkpoints, PostgreSQL vacuums the touched tables. Best effort.
   */
  reclaimSpace(): Promise<void>;
  /**
   * Makes every write that resolved before the call durable (those written with `deferDurability`); resolves
   * once they are, rejects when they cannot be made so. Optional: a store whose writes are durable when they
   * resolve has nothing to do.
   */
  syncWrites?(): Promise<void>;
  /**
   * Up to `limit` chunk versions of `resourceId` (published, live or retained superseded) stored without an
   * embedding, with keys above `afterKey`, in key order: what Rebuild embeds once the server has an embedder.
   */
  chunksWithoutVector(resourceId: string, afterKey: number, limit: number): Promise<ChunkToEmbed[]>;
  /**
   * Stores embeddings of chunks of `resourceId` that have none, in one transaction bumping the generation: a key
   * of another resource, gone (erased, expired) or holding an embedding by now is skipped. Returns the vector
   * entries stored (their current supersession included), for the caller to add to a vector index.
   */
  setChunkVectors(resourceId: string, vectors: ReadonlyArray<{ chunkKey: number; vector: Float32Array }>): Promise<StoredChunkVectors>;
}

/** A stored chunk without an embedding (see DocumentStore.chunksWithoutVector). */
export interface ChunkToEmbed {
  chunkKey: number;
  text: string;
}

/** What DocumentStore.setChunkVectors stored. */
export interface StoredChunkVectors {
  added: VectorEntry[];
  generation: bigint;
}
