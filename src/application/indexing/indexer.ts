import type { ChunkingOptions } from "../../domain/chunking.js";
import type { RdfTriple } from "../../domain/rdf-term.js";
import { validateDocumentPath } from "../../domain/document-path.js";
import { nextSliceSize } from "../../domain/next-slice-size.js";
import { InvalidArgumentError, UnimplementedError, type FieldViolation } from "../../domain/errors.js";
import {
  refusedInSeries,
  type DeleteOutcome,
  type DocumentInputRecord,
  type DocumentStore,
  type UpsertOutcome,
  type VectorChanges,
} from "../../ports/document-store.js";
import type { FairEmbedder } from "../shared/fair-embedder.js";
import type { GraphBackend } from "../../ports/graph-backend.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import type { Principal } from "../../domain/principal.js";
import type { VectorEntry } from "../../ports/vector-backend.js";
import { KeyedSerialQueue } from "../shared/keyed-serial-queue.js";
import { validateUpsertMessage, type UpsertMessage } from "./upsert-validation.js";
import type { TextChunker } from "../../ports/text-chunker.js";
import type { UploadTurn } from "./upload-order.js";
import { isWritableResource, resourceNotFound } from "../shared/writable-resource.js";

/**
 * How long one slice of vector additions (by an upload or an incremental Rebuild) may hold the event loop,
 * in milliseconds. Once the in-memory backend keeps an HNSW graph (of the resource, or store-wide), each
 * call inserts into it synchronously at a cost per row that varies by orders of magnitude (well under
 * 0.1 ms on an idle machine, 1.5-3.5 ms per row of 64 dimensions measured under a load average of 20, more
 * for near-duplicate vectors), so no fixed slice size is right: a fixed 256 held the loop 0.5-0.9 s under
 * load, while slices of 16-64 made a 20,000-vector upload several times slower where rows are cheap (a
 * fixed cost per call). Slices are sized from the time the previous one took (see nextSliceSize).
 */
export const VECTOR_SLICE_BUDGET_MS = 10;

/** Chunks the first erasure transaction removes (then sized from the time the previous one took). */
const ERASE_SLICE_FIRST = 32;

/** Chunks one erasure transaction removes at most. */
const ERASE_SLICE_MAX = 2048;

/** The first slice of a batch of vector additions: small, as the cost per row is not known yet. */
const VECTOR_SLICE_FIRST = 16;

/** The largest slice of vector additions (where rows are cheap, as without any graph). */
const VECTOR_SLICE_MAX = 4096;

/** Chunks without a vector that Rebuild reads, embeds and stores at a time (the embedder slices each page by time). */
const REBUILD_EMBED_PAGE = 256;

/** What the write pipeline runs on. */
export interface IndexerDeps {
  documents: DocumentStore;
  registry: RegistryStore;
  vector?: VectorBackend;
  graph?: GraphBackend;
  embeddingDim: number;
  chunking?: ChunkingOptions;
  /** The clock stamping versions (ms since epoch); tests pass a fake one. */
  now?: () => number;
  /** Server-side chunking off the serving thread (the chunking workers); absent: chunked on the serving thread. */
  chunker?: TextChunker;
  /** The shared embedder: chunks sent without an embedding (and server-chunked content) get one. Absent: they stay without. */
  embedder?: FairEmbedder;
}

/** Who writes and whether the call still wants the answer: the embedder queues a write in its caller's fair queue. */
export interface UpsertCallOptions {
  /** The calling principal (the fair queue it waits in); default: the resource. */
  tenant?: string;
  signal?: AbortSignal;
  /**
   * The caller answers only after a later `syncWrites()` (an UpsertDocuments stream answers once, at its
   * end): the message may resolve once committed and visible, before it is durable (see
   * UpsertHooks.deferDurability), so a stream of many messages pays one durable sync, not one a message.
   */
  deferDurability?: boolean;
  /**
   * The message's place in its UpsertDocuments stream when the stream hands over its next messages before
   * this one has committed (UploadOrder): it is checked, chunked and embedded at once, written only in its
   * turn, and refused (FailedPrecondition, writing nothing) once a message before it has failed.
   */
  turn?: UploadTurn;
}

/** What one Rebuild did. */
export interface RebuildOutcome {
  generation: bigint;
  resourcesRebuilt: number;
  documentsReindexed: number;
}

/**
 * The write pipeline behind IndexService: validates a request, commits it to the document store in one
 * transaction (which also updates the FTS5 rows), then applies the committed vector changes to the vector
 * backend. The store is the source of truth: a vector backend that missed a change is repaired by Rebuild.
 *
 * Store writes and the vector changes they return run in a serialised section per resource (a
 * KeyedSerialQueue): with an asynchronous store, two writes of one document could otherwise commit in one
 * order and have their vector changes applied in the other (a superseded version left live in the vector
 * index). Writes of different resources run concurrently (their changes commute), so one tenant's large
 * upload does not hold another tenant's writes: the store interleaves them a slice at a time. Validation
 * and the registry look-ups run before the section, concurrently.
 *
 * A message's vectors are added a slice per event-loop turn (see addInSlices): while the store holds the message
 * staged (see UpsertHooks.beforePublish), so the publish shows its text and vectors at once, or after the
 * commit for a store that writes in one step. Supersessions follow the publish at once (UpsertHooks.afterPublish)
 * or the commit; removals follow the commit.
 */
export class Indexer {
  private readonly now: () => number;
  private readonly writes = new KeyedSerialQueue();
  /** UpsertDocuments messages between their arrival and their outcome: more than one lets the store group-commit them. */
  private upsertsUnderWay = 0;
  /**
   * UpsertDocuments streams open: with more than one, a message lets the store wait a turn for the others'
   * next message and commit them together. A stream's next message is read only once its last one is
   * committed, so when messages are small their lifetimes rarely overlap, and counting them alone committed
   * small messages from four streams one by one (a commit each: FTS5 writes a segment at every commit).
   */
  private uploadsOpen = 0;

  /** An UpsertDocuments stream opens; the function returned closes it (once, however often it is called). */
  openUpload(): () => void {
    this.uploadsOpen += 1;
    let closed = false;
    return () => {
      if (!closed) this.uploadsOpen -= 1;
      closed = true;
    };
  }

  constructor(private readonly deps: IndexerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** One UpsertDocuments message: all of it is written, or (on any invalid field) none of it. */
  async upsert(msg: UpsertMessage, call: UpsertCallOptions = {}): Promise<UpsertOutcome> {
    this.upsertsUnderWay += 1;
    try {
      const outcome = await this.upsertNow(msg, call);
      call.turn?.done(true);
      return outcome;
    } catch (err) {
      call.turn?.done(false);
      throw err;
    } finally {
      this.upsertsUnderWay -= 1;
    }
  }

  private async upsertNow(msg: UpsertMessage, call: UpsertCallOptions): Promise<UpsertOutcome> {
    await this.requireResource(msg.resourceId);
    const docs = await validateUpsertMessage(msg, {
      embeddingDim: this.deps.embeddingDim,
      chunking: this.deps.chunking,
      chunker: this.deps.chunker,
      tenant: call.tenant,
      signal: call.signal,
    });
    if (this.deps.embedder) await embedMissing(this.deps.embedder, docs, call.tenant ?? msg.resourceId, call.signal);
    if (call.turn) {
      await call.turn.turn;
      if (call.turn.series.failedBefore) throw refusedInSeries();
    }
    return this.writes.run(msg.resourceId, async () => {
      // Again in the resource's write section: an erasure begun while the message was checked, chunked or
      // embedded runs in this section before it, and the message must not write the resource back.
      await this.requireResource(msg.resourceId);
      const vector = this.deps.vector;
      let staged: readonly VectorEntry[] | undefined;
      let supersededAtPublish = false;
      let outcome: UpsertOutcome;
      try {
        outcome = await this.deps.documents.upsertDocuments(msg.resourceId, docs, this.now(), {
          // Only a message with vectors has work before its publish (a store may then write the rest in one step).
          beforePublish: docs.some((d) => d.chunks.some((c) => c.embedding))
            ? async (added) => {
                staged = added;
                if (vector) await addInSlices(vector, added);
              }
            : undefined,
          afterPublish: (superseded, at) => {
            supersededAtPublish = true;
            if (vector && superseded.length > 0) vector.supersede(superseded, at);
          },
          deferDurability: call.deferDurability,
          groupCommit: this.upsertsUnderWay > 1 || this.uploadsOpen > 1 || call.turn !== undefined,
          series: call.turn?.series,
        });
      } catch (err) {
        // Never published: the entries added for it go (their chunks are gone too). Published, its chunks stay.
        if (vector && staged && staged.length > 0 && !supersededAtPublish) vector.remove(staged.map((e) => e.chunkKey));
        throw err;
      }
      if (vector && staged === undefined) await addInSlices(vector, outcome.vectors.added);
      this.applyRetirements(supersededAtPublish ? { ...outcome.vectors, superseded: [] } : outcome.vectors);
      return outcome;
    });
  }

  /**
   * Makes every upsert that resolved before the call durable (those made with `deferDurability`): the
   * UpsertDocuments stream awaits it before its one answer. A store whose writes are durable on resolving
   * has nothing to do.
   */
  async syncWrites(): Promise<void> {
    await this.deps.documents.syncWrites?.();
  }

  /** Deletes (supersedes) the live documents at `paths`; paths without a live document count nothing. */
  async delete(resourceId: string, paths: readonly string[]): Promise<DeleteOutcome> {
    await this.requireResource(resourceId);
    if (paths.length === 0) throw InvalidArgumentError.field("paths", "must not be empty");
    const violations: FieldViolation[] = [];
    paths.forEach((p, i) => {
      const why = validateDocumentPath(p);
      if (why) violations.push({ field: `paths[${i}]`, description: why });
    });
    if (violations.length > 0) throw new InvalidArgumentError(violations);
    return this.writes.run(resourceId, async () => {
      const outcome = await this.deps.documents.deleteDocuments(resourceId, paths, this.now());
      this.applyRetirements(outcome.vectors);
      return outcome;
    });
  }

  /**
   * Writes triples (already checked and converted from the wire by the caller) into the resource's
   * named graph, replacing its triples when `replace`.
   */
  async putTriples(resourceId: string, triples: readonly RdfTriple[], replace: boolean): Promise<{ count: number; generation: bigint }> {
    await this.requireResource(resourceId);
    if (triples.length === 0 && !replace)
      throw InvalidArgumentError.field("triples", "must not be empty (unless replace clears the graph)");
    const graph = this.deps.graph;
    if (!graph) throw new UnimplementedError("no graph backend is configured on this server");
    const count = await graph.putTriples(resourceId, triples, replace);
    // The write reaches the graph outside the resource's write section (a SPARQL endpoint's queue, another
    // server's erasure on a shared deployment): had an erasure begun meanwhile, its removal of the graph may
    // have run first. Read again after the write, the resource being erased or gone takes the graph with it
    // again and the call is NOT_FOUND, so no triple is left after the erasure (an erasure whose intent is
    // recorded only after this read removes the graph itself, later).
    if (!(await isWritableResource(this.deps.registry, resourceId))) {
      await graph.eraseResource(resourceId);
      throw resourceNotFound(resourceId);
    }
    return { count, generation: await this.deps.documents.bumpGeneration() };
  }

  /**
   * Re-indexes resources from their stored documents. `ids` empty means every resource `principal` may
   * write (owned by a project its key allows). Nothing of it is one long step: the store re-indexes a
   * resource in slices (see DocumentStore.reindexResource), and the vectors follow, inside the write
   * section so no other write interleaves. Incremental (`full` false) re-upserts the stored vectors,
   * a slice per event-loop turn, dropping nothing (re-upserting what is held is invisible
   * to searches). Full replaces the resource's vectors through `replaceResource`, which builds them
   * aside and swaps them in at once, so no search sees the resource empty or half loaded.
   * Triples are not derived from documents and are left alone. With an embedder, the chunks stored without a
   * vector (before one was configured) are then embedded and stored, a page at a time (see embedStored).
   */
  async rebuild(principal: Principal, ids: readonly string[], full: boolean, signal?: AbortSignal): Promise<RebuildOutcome> {
    const targets = ids.length > 0 ? [...new Set(ids)] : await this.writableResources(principal);
    for (const id of targets) await this.requireResource(id);
    let documentsReindexed = 0;
    let generation = await this.deps.documents.generation();
    for (const id of targets) {
      const outcome = await this.writes.run(id, async () => {
        const reindexed = await this.deps.documents.reindexResource(id, full);
        const vector = this.deps.vector;
        if (vector && full) await vector.replaceResource(id, reindexed.vectors);
        else if (vector) await addInSlices(vector, reindexed.vectors);
        return reindexed;
      });
      documentsReindexed += outcome.documents;
      generation = outcome.generation;
      await yieldToEventLoop();
      // With an embedder: the chunks stored without a vector (before it was configured) get one now.
      if (this.deps.embedder) generation = (await this.embedStored(id, this.deps.embedder, principal.name, signal)) ?? generation;
    }
    return { generation, resourcesRebuilt: targets.length, documentsReindexed };
  }

  /**
   * Embeds the chunks of `resourceId` stored without a vector (live and retained versions), a page of
   * REBUILD_EMBED_PAGE at a time: each page is embedded in `tenant`'s fair queue as bulk work (slices of the
   * shared embedder, outside the write section, so the resource's other writes go on), then its vectors are
   * stored in one transaction (a chunk gone or embedded meanwhile is skipped) and added to the vector backend,
   * inside the write section. A call cut short keeps the pages already stored (a Rebuild again goes on from
   * there). Returns the generation of the last page stored, or undefined when none was missing.
   */
  private async embedStored(resourceId: string, embedder: FairEmbedder, tenant: string, signal?: AbortSignal): Promise<bigint | undefined> {
    let generation: bigint | undefined;
    let after = 0;
    for (;;) {
      signal?.throwIfAborted();
      const page = await this.deps.documents.chunksWithoutVector(resourceId, after, REBUILD_EMBED_PAGE);
      if (page.length === 0) return generation;
      after = page[page.length - 1].chunkKey;
      const vectors = await embedder.embed(
        tenant,
        page.map((c) => c.text.slice(0, embedder.maxInputChars)),
        signal,
      );
      const stored = await this.writes.run(resourceId, async () => {
        const out = await this.deps.documents.setChunkVectors(
          resourceId,
          page.map((c, i) => ({ chunkKey: c.chunkKey, vector: vectors[i] })),
        );
        if (this.deps.vector) await addInSlices(this.deps.vector, out.added);
        return out;
      });
      generation = stored.generation;
    }
  }

  /**
   * The resources `principal` may write: owned by a project its key allows. A resource another tenant owns
   * and merely linked into one of those projects is readable there, never the caller's to rebuild.
   */
  private async writableResources(principal: Principal): Promise<string[]> {
    const ids = new Set<string>();
    for (const project of await this.deps.registry.listProjects()) {
      if (!principal.allowsProject(project.name)) continue;
      for (const r of await this.deps.registry.listResources(project.name)) if (principal.allowsProject(r.ownerProject)) ids.add(r.id);
    }
    return [...ids].sort();
  }

  private async requireResource(resourceId: string): Promise<void> {
    if (resourceId.length === 0) throw InvalidArgumentError.field("resource_id", "must not be empty");
    if (!(await isWritableResource(this.deps.registry, resourceId))) throw resourceNotFound(resourceId);
  }

  /**
   * Erases every document version, chunk, keyword row and vector of a resource, in the resource's write
   * section (no upload, deletion or rebuild of it interleaves): the store removes a slice of chunks per
   * transaction, sized to take about VECTOR_SLICE_BUDGET_MS (see nextSliceSize: FTS5's secure delete costs
   * a lot per row under load), a turn of the event loop between slices, so other tenants' calls and writes
   * run meanwhile. The vector backend lets go of the resource first, with every index that kept its vectors
   * (tombstones, saved files); each slice's removed keys are passed on too (a no-op here; a store's change
   * log carries them to other servers). The registry is not touched here.
   */
  async eraseResource(resourceId: string): Promise<{ documents: number; chunks: number; vectors: number }> {
    return this.writes.run(resourceId, async () => {
      const totals = { documents: 0, chunks: 0, vectors: 0 };
      // The vectors go first, at once (an in-process index drops the partition whole instead of removing a
      // slice of keys at a time, which would churn its graphs); the store's rows follow in slices.
      const vector = this.deps.vector;
      if (vector) {
        if (vector.eraseResource) await vector.eraseResource(resourceId);
        else vector.clearResource(resourceId);
      }
      let size = ERASE_SLICE_FIRST;
      for (;;) {
        const started = performance.now();
        const slice = await this.deps.documents.eraseResourceSlice(resourceId, size);
        size = nextSliceSize(size, Math.max(1, slice.chunks), performance.now() - started, VECTOR_SLICE_BUDGET_MS, ERASE_SLICE_MAX);
        totals.documents += slice.documents;
        totals.chunks += slice.chunks;
        totals.vectors += slice.vectors;
        if (this.deps.vector && slice.changes.removed.length > 0) this.deps.vector.remove(slice.changes.removed);
        if (slice.done) break;
        await yieldToEventLoop();
      }
      return totals;
    });
  }

  /**
   * Applies a committed write's supersessions and removals, after its additions: a version added and
   * superseded (or dropped) by the same message, as when one message names a path twice, must end
   * superseded (or gone), not live.
   */
  private applyRetirements(changes: VectorChanges): void {
    const vector = this.deps.vector;
    if (!vector) return;
    if (changes.superseded.length > 0) vector.supersede(changes.superseded, changes.at);
    if (changes.removed.length > 0) vector.remove(changes.removed);
  }
}

/**
 * Gives every chunk of `docs` that has no embedding one from the shared embedder, in `tenant`'s fair queue
 * (batches run off the serving thread, see FairEmbedder), before the write section: a slow model never holds
 * the resource's other writes. A chunk longer than the embedder takes is embedded from its head (the model
 * reads only its first word pieces anyway).
 */
async function embedMissing(
  embedder: FairEmbedder,
  docs: readonly DocumentInputRecord[],
  tenant: string,
  signal?: AbortSignal,
): Promise<void> {
  const missing = docs.flatMap((d) => d.chunks.filter((c) => c.embedding === undefined));
  if (missing.length === 0) return;
  const vectors = await embedder.embed(
    tenant,
    missing.map((c) => c.text.slice(0, embedder.maxInputChars)),
    signal,
  );
  missing.forEach((c, i) => (c.embedding = vectors[i]));
}

/**
 * Adds entries to the vector backend a slice per event-loop turn, each slice sized to take about
 * VECTOR_SLICE_BUDGET_MS (see nextSliceSize).
 */
async function addInSlices(vector: VectorBackend, entries: readonly VectorEntry[]): Promise<void> {
  let size = VECTOR_SLICE_FIRST;
  for (let i = 0; i < entries.length;) {
    if (i > 0) await yieldToEventLoop();
    const slice = i === 0 && entries.length <= size ? entries : entries.slice(i, i + size);
    const started = performance.now();
    vector.upsert(slice);
    size = nextSliceSize(size, slice.length, performance.now() - started, VECTOR_SLICE_BUDGET_MS, VECTOR_SLICE_MAX);
    i += slice.length;
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
