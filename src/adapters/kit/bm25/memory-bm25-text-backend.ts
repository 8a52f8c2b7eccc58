import { keywordQueryPhrases } from "../../../domain/keyword-query.js";
import { normaliseBm25 } from "../../../domain/bm25-normalise.js";
import type { ScopedBackendView } from "../../../domain/scoped-backend-view.js";
import { isVersionVisible } from "../../../domain/temporal-filter.js";
import type { TextBackend, TextHit, TextSearchOptions } from "../../../ports/text-backend.js";
import type { ChunkSnapshot, ChunkTextChanges } from "../../../ports/unit-reader.js";
import { Bm25Index } from "./bm25-index.js";
import { compareBinary } from "../../../domain/binary-order.js";

/** Where the fallback reads chunk texts from: a consistent snapshot, and the current generation. */
export interface ChunkTextSource {
  /** The store's current generation (cheap; polled on every search). */
  generation(): Promise<bigint>;
  /** Every retained chunk version with its text, in one consistent snapshot. */
  snapshotChunks(): Promise<ChunkSnapshot>;
}

/** Options of the in-memory BM25 fallback. */
export interface MemoryBm25Options {
  /** Tokens added to every row's length (1 reproduces the FTS5 backend's scores; see Bm25IndexOptions). */
  lengthOffset?: number;
  /** Chunks analysed between yields while an index builds (default 512). */
  sliceSize?: number;
  /**
   * True when the store reports every commit to `apply` (DuckDbDocumentStore's `onChunkTexts`): the
   * index is built once from a snapshot and then kept current commit by commit, never rebuilt.
   */
  incremental?: boolean;
}

/**
 * Keyword search for stores without a native keyword index: an in-memory BM25 index built from the
 * stored chunk texts with FTS5's tokenizer (`porter unicode61`), FTS5's BM25 and statistics, FTS5's
 * query semantics (distinct words OR-ed) and the FTS5 backend's order (score, then UKO URI, then live
 * before superseded) and score map (`r / (1 + r)`), so both give the same ranking on the same corpus.
 *
 * Generations: each search first makes sure the index is at least as new as the store's generation at
 * the time of the call (so a client reads its own writes). A stale index is rebuilt from one consistent
 * snapshot, off to the side, in slices; concurrent searches share that build and are answered from the
 * finished index only, never from a half-built one. Full and incremental rebuilds are both just a new
 * generation here: the index is always rebuilt whole from what the store holds.
 *
 * Incremental mode (`incremental`, for a store that reports its commits): the index is built once (at
 * the first search, or `load()` at start) and each commit's changes are applied to it in place, in
 * commit order; commits reported while the first build runs are applied when it is done (those the
 * snapshot already holds are skipped by generation). A full re-index of a resource drops that
 * resource's rows and adds them again; an incremental one replaces them row by row and drops nothing.
 */
export class MemoryBm25TextBackend implements TextBackend {
  readonly hasNativeKeywordSearch = false;
  private current: Bm25Index | undefined;
  private building: Promise<Bm25Index> | undefined;
  private readonly lengthOffset: number;
  private readonly sliceSize: number;
  private readonly incremental: boolean;
  /** Commits reported while the first incremental build runs, applied when it is done. */
  private pendingChanges: ChunkTextChanges[] = [];
  private firstBuilt!: () => void;
  private readonly built = new Promise<void>((resolve) => (this.firstBuilt = resolve));

  constructor(
    private readonly source: ChunkTextSource,
    opts: MemoryBm25Options = {},
  ) {
    this.lengthOffset = opts.lengthOffset ?? 1;
    this.sliceSize = opts.sliceSize ?? 512;
    this.incremental = opts.incremental ?? false;
  }

  /** Builds the index now (at start), rather than at the first search. */
  async load(): Promise<void> {
    await this.indexAtLeast(await this.source.generation());
  }

  /**
   * Resolves once an index has been built, by whichever call built it: `load()` at start or, when that
   * failed, the build a later search started. Never rejects (a failed build is tried again by the next search).
   */
  whenBuilt(): Promise<void> {
    return this.built;
  }

  /** Applies one commit of the store (incremental mode; called in commit order). */
  apply(changes: ChunkTextChanges): void {
    if (!this.incremental) throw new Error("apply() needs a backend made with { incremental: true }");
    if (this.current && !this.building) this.current.apply(changes);
    else this.pendingChanges.push(changes);
  }

  /** Rows the index holds (undefined before the first build). */
  get size(): number | undefined {
    return this.current?.size;
  }

  /** The generation of the index searches are answered from (undefined before the first build). */
  get indexedGeneration(): bigint | undefined {
    return this.current?.generation;
  }

  async search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const phrases = keywordQueryPhrases(query);
    if (phrases.length === 0 || view.resourceIds.length === 0) return { hits: [], exhaustive: true };
    const index = await this.indexAtLeast(await this.source.generation(), opts.signal);
    opts.signal?.throwIfAborted();
    const scored = index.score(phrases, view.resourceSet, (row) =>
      isVersionVisible(view.temporalScope, row.supersededAt, opts.now, opts.recentWindowMs),
    );
    const rows = index.rows;
    scored.sort((x, y) => {
      if (x.score !== y.score) return y.score - x.score;
      const a = rows[x.row]!;
      const b = rows[y.row]!;
      const byUri = compareBinary(a.ukoUri, b.ukoUri);
      if (byUri !== 0) return byUri;
      if ((a.supersededAt === null) !== (b.supersededAt === null)) return a.supersededAt === null ? -1 : 1;
      return (b.supersededAt ?? 0) - (a.supersededAt ?? 0);
    });
    const hits: TextHit[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < scored.length; i++) {
      const row = rows[scored[i].row]!;
      if (seen.has(row.ukoUri)) continue;
      seen.add(row.ukoUri);
      if (!view.allows(row.resourceId, row.path)) continue;
      hits.push({ chunkKey: row.chunkKey, resourceId: row.resourceId, path: row.path, score: normaliseBm25(scored[i].score) });
      if (hits.length === opts.maxResults) return { hits, exhaustive: i === scored.length - 1 };
    }
    return { hits, exhaustive: true };
  }

  /** An index of generation `generation` or newer: the current one, or the one being built, or a new build. */
  private async indexAtLeast(generation: bigint, signal?: AbortSignal): Promise<Bm25Index> {
    for (;;) {
      if (this.current && this.current.generation >= generation) return this.current;
      if (!this.building) {
        this.building = this.source
          .snapshotChunks()
          .then((snapshot) => Bm25Index.build(snapshot, { lengthOffset: this.lengthOffset, sliceSize: this.sliceSize }))
          .then((index) => {
            if (this.incremental) {
              for (const c of this.pendingChanges.splice(0)) index.apply(c);
            }
            if (!this.current || index.generation >= this.current.generation) this.current = index;
            this.firstBuilt();
            return index;
          })
          .finally(() => {
            this.building = undefined;
          });
      }
      const built = await this.building;
      signal?.throwIfAborted();
      if (built.generation >= generation) return this.current ?? built;
    }
  }
}
