import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { UnavailableError } from "../../../domain/errors.js";
import { nextSliceSize } from "../../../domain/next-slice-size.js";
import type { ScopedBackendView } from "../../../domain/scoped-backend-view.js";
import { supersededCutoff } from "../../../domain/temporal-filter.js";
import type { VectorBackend, VectorEntry, VectorHit, VectorSearchOptions } from "../../../ports/vector-backend.js";
import type { GraphHolder } from "./graph-holder.js";
import { DEFAULT_HNSW_PARAMS, HnswIndex, type HnswParams } from "./hnsw-index.js";
import { StoreCells, probesFor, type SavedCentroids } from "./store-cells.js";
import { StoreGraph } from "./store-graph.js";
import { quantizeRow } from "./int8-nearest-rows.js";
import { POOL_BATCH_ROWS, scanPooled, type PooledPart } from "./pooled-int8-scan.js";
import { TopKHeap } from "./top-k-heap.js";
import { normalizeInto } from "./vector-math.js";
import { graphAnswered, VectorPartition, type GraphTally, type PartitionFilter } from "./vector-partition.js";
import { assertVectorQuery } from "./vector-query-checks.js";

/**
 * Up to this many in-scope vectors a search scans exactly (float32, `exhaustive`); past it a search reads
 * int8 scans or HNSW graphs with exact re-scoring. Measured with bench/vector-bench.ts (384 dimensions, top_k 20, 2 shared cores): a graph
 * search draws level with an exact scan at about 128-256 rows, is 1.5-2.3x faster at 512, 3.5-6x at
 * 1,024 and 7x at 4,096. Up to 1,024 rows an exact scan costs under about 1 ms, less than a call's own
 * overhead, so the answer stays exact (and `exhaustive`) there; past it the graph wins clearly.
 */
export const EXACT_SCAN_THRESHOLD = 1024;

/** How long one background graph-build step may hold the event loop, in milliseconds (see runIndexer). */
const INDEX_STEP_BUDGET_MS = 10;

/**
 * A background graph build waits while writes keep coming (one within this many ms): a bulk load's writes
 * are acknowledged without graph insertions between them (profiled: 40% of an UpsertDocuments stream of
 * 10,000 vectors went to HNSW insertions), and the graphs catch up once it pauses. Searches meanwhile read
 * the rows as if no graph were built (exact, pooled int8 or cells, `exhaustive` saying which).
 */
const INDEX_WRITE_QUIET_MS = 25;

/** The longest a build step waits for writes to pause: under a steady stream of writes a graph still grows. */
const INDEX_MAX_BACKOFF_MS = 1000;

/** How many candidates per wanted result a graph search fetches before exact re-scoring and filtering. */
export const DEFAULT_OVERFETCH = 4;

/**
 * How many candidates per wanted result an int8 scan takes for exact re-scoring: twice a graph's, as
 * re-scoring a few dozen more rows costs microseconds against the scan's fraction of a millisecond.
 */
const INT8_OVERFETCH_FACTOR = 2;

/**
 * From this many rows a partition gets its own HNSW graph; smaller partitions are scanned through their
 * int8 codes past the exact threshold. Measured with bench/vector-bench.ts (384 dimensions): an int8
 * scan of 16k rows costs about as much as one graph search at the recall the defaults give, and it is
 * never wrong about what the graph would miss.
 */
export const PARTITION_GRAPH_MIN_ROWS = 32_768;

/**
 * Partitions under this many rows are not int8-scanned one by one (a native call each costs more than the
 * scan): past the threshold a scope's small partitions are pooled and int8-scanned together (scanPooled),
 * and scanned in float32 only when the pool holds fewer rows than this.
 */
const INT8_SCAN_MIN_ROWS = 256;

/**
 * Up to this much scan work (int8 rows, as PARTITION_SCAN_MAX_COST) a scope the store-wide graph cannot
 * answer (under STORE_GRAPH_MIN_SHARE of the store, or the graph not built yet) is answered partition by
 * partition rather than from the store-wide cells alone: the cells' nearest-cell probes gave recall@10 of
 * 0.66-0.94 at a scope of 100 resources of 100 rows (of 1,000), with nothing to check them against, where
 * an int8 scan of those 10,000 rows, re-scored exactly, costs about 1 ms and finds the true top 10. Past
 * it (scopes of more than 128k rows, under a quarter of a store of over half a million) the cells answer.
 */
export const SMALL_SHARE_SCAN_MAX_COST = 131_072;

/**
 * The least share of the store a scope must cover for a search to use the store-wide graph: its
 * candidates are post-filtered by scope, so it fetches `overfetch / share` per wanted result, at most 4x
 * more than a partition graph would.
 */
export const STORE_GRAPH_MIN_SHARE = 0.25;

/**
 * Up to this much scan work (in int8 rows; a partition scanned in float32 counts FLOAT_ROW_COST per row, one
 * searched through its own graph GRAPH_SEARCH_COST) a broad scope is answered partition by partition rather
 * than from the store-wide graph. Measured with bench/vector-bench.ts (100k x 384, top_k 10, 2 cores under
 * load ~25): an int8 scan of the largest resource (13,360 rows, 5 MB of codes) took about 1 ms, one of the
 * 10 largest (39k rows, 15 MB) 75 ms, past what the caches hold, where the store graph at ef 128 answered
 * the same scope in about 20-30 ms at the same recall.
 */
export const PARTITION_SCAN_MAX_COST = 16_384;

/**
 * The store-wide graph's tuning. Measured on bench/vector-bench.ts's 100k x 384 clustered set (the graph
 * alone, top 40 re-scored exactly, recall@10 against an exact scan of the store, quiet machine): M 32 /
 * efConstruction 256 / ef 128 gave 0.997 at 1.0-1.2 ms a search; M 16 / efConstruction 256 / ef 128 0.996
 * at 0.6-0.75 ms (ef 112: 0.994, ef 96: 0.991); M 16 / efConstruction 128 0.994 (ef 96: 0.990); M 24 /
 * efConstruction 128 0.996 at about the same time as M 16. A search walks about half as many edges per node
 * at M 16, and these searches are bound by fetching the rows they visit from memory. efConstruction 256
 * costs only build time (saved graphs are loaded at the next start). Earlier: ef 128, 256 and 512 at M 32
 * all gave 0.998 at scopes of 100 and 1,000 resources.
 */
export const STORE_GRAPH_PARAMS: HnswParams = { connectivity: 16, expansionAdd: 256, expansionSearch: 128 };

/** The scan cost (int8 rows) of one float32 row scanned in JavaScript. */
const FLOAT_ROW_COST = 4;

/**
 * Small partitions' rows are pooled into an int8 scan (approximate, re-scored exactly) only from this many:
 * fewer are scanned exactly in float32, about a millisecond at most, and the answer stays exact.
 */
const POOL_MIN_ROWS = EXACT_SCAN_THRESHOLD;

/** The scan cost (int8 rows) of one row of a small partition scanned in a pool: the scan, and its share of copying the codes. */
const POOLED_ROW_COST = 1.25;

/** The scan cost (int8 rows) of one partition-graph search. */
const GRAPH_SEARCH_COST = 16_384;

/** How many times a store-graph search too few of whose candidates are in scope is widened before the per-partition path answers. */
const STORE_GRAPH_WIDENINGS = 2;

/** The most candidates one store-graph search fetches; past it the per-partition path answers. */
const STORE_GRAPH_MAX_FETCH = 4096;

/** Options of the embedded vector backend. */
export interface PartitionedVectorBackendOptions {
  /** The deployment's embedding dimension. */
  dimension: number;
  /**
   * In-scope vector count up to which a search is exact, and the partition size from which a graph is
   * built (default EXACT_SCAN_THRESHOLD). 0 forces the graph path everywhere (tests of the HNSW path).
   */
  exactThreshold?: number;
  /**
   * The partition size from which a partition gets its own HNSW graph (default PARTITION_GRAPH_MIN_ROWS, or
   * `exactThreshold` when that is given: tests of the graph path set a small one).
   */
  graphMinRows?: number;
  /**
   * Scan work (int8 rows) up to which a broad scope is answered partition by partition rather than from
   * the store-wide graph (default PARTITION_SCAN_MAX_COST, or 0 when `exactThreshold` is given: tests of
   * the graph paths use small ones).
   */
  partitionScanMaxCost?: number;
  /**
   * Scan work (int8 rows) up to which a scope the store-wide graph cannot answer is answered partition by
   * partition rather than from the cells (default SMALL_SHARE_SCAN_MAX_COST, or 0 when `exactThreshold` is given).
   */
  smallShareScanMaxCost?: number;
  /** Candidates fetched from a graph per wanted result (default DEFAULT_OVERFETCH). */
  overfetch?: number;
  /** HNSW tuning of the partition graphs (what is given here applies to the store-wide graph too, else STORE_GRAPH_PARAMS). */
  hnsw?: Partial<HnswParams>;
  /**
   * Rows added to a graph per background step at most, between which searches and writes run (default
   * 256; a step is also cut to about INDEX_STEP_BUDGET_MS, as its cost per row varies a hundredfold with load).
   */
  indexBatchRows?: number;
  /** A search gives the event loop a turn (and notices cancellation) after this much work, ms (default 4). */
  yieldEveryMs?: number;
  /**
   * Whether to keep a store-wide graph for scopes covering a large share of the store (default true).
   * It is built once the store holds 4x `exactThreshold` vectors.
   */
  storeGraph?: boolean;
  /**
   * Whether to keep a store-wide inverted-file index (StoreCells) for scopes too large to scan partition by
   * partition (default true, or false when `exactThreshold` is given: tests of the graph paths turn it on
   * themselves). It is built, like the store-wide graph, once the store holds 4x `exactThreshold` vectors.
   */
  cells?: boolean;
  /**
   * A folder to keep built graphs in, so a restart loads them instead of rebuilding (building HNSW over
   * 100k vectors takes most of a minute). A saved graph is used only when it holds exactly the keys it is
   * loaded for; a stale, partial or corrupt one is rebuilt. Graphs are saved when built and on close. The
   * store-wide cells' centroids are kept there too (`cells.f32`, saved when trained): a restart places the
   * rows in them instead of training again, until the store has doubled since.
   */
  graphDir?: string;
}

/** Graphs with more removals than this (and than live members) are rebuilt, as HNSW degrades under churn. */
const MIN_REMOVALS_FOR_REBUILD = 1024;

/**
 * The embedded default vector backend: vectors live in memory, one partition per resource, so a search
 * reads only the partitions of the view's resources and scope filtering never costs recall. Small
 * searches are exact scans; past EXACT_SCAN_THRESHOLD in-scope rows a partition is scanned through its
 * int8 codes (usearch's SIMD kernels) and the best candidates re-scored in float32, and partitions of
 * PARTITION_GRAPH_MIN_ROWS or more carry an HNSW graph (usearch) instead, searched with over-fetch and
 * the same re-scoring; either falls back to an exact scan when filters leave too few candidates.
 * Scopes covering a large share of the store (many small resources) use one store-wide graph instead,
 * whose candidates are filtered by scope before anything else, with the per-partition path as fallback.
 * Graphs are built in the background, a batch at a time, and swapped in when complete: until then the
 * rows are scanned exactly. The document store stays the source of truth and feeds this backend after
 * each commit, and through `replaceAll` (see `loadVectors`) at start.
 *
 * @example
 * const vectors = new PartitionedVectorBackend({ dimension: 384 });
 * await loadVectors(vectors, documents.iterateVectors());
 * const { hits } = await vectors.search(view, query, { topK: 10, minScore: 0, now: Date.now(), recentWindowMs });
 */
export class PartitionedVectorBackend implements VectorBackend {
  readonly dimension: number;
  private readonly exactThreshold: number;
  private readonly indexMinRows: number;
  private readonly overfetch: number;
  private readonly hnswParams: HnswParams;
  private readonly storeGraphParams: HnswParams;
  private readonly indexBatchRows: number;
  private readonly yieldEveryMs: number;
  private readonly useStoreGraph: boolean;
  private readonly storeGraphMinRows: number;
  private readonly partitionScanMaxCost: number;
  private readonly smallShareScanMaxCost: number;
  private partitions = new Map<string, VectorPartition>();
  /** Bumped whenever a partition is added to or dropped from `partitions` (the scope layouts cached below go stale). */
  private layoutEpoch = 0;
  /** Per view (views are cached per scope by the server), its partitions as of `layoutEpoch`. */
  private readonly layouts = new WeakMap<ScopedBackendView, ScopeLayout>();
  private partitionOfKey = new Map<number, VectorPartition>();
  private storeGraph: StoreGraph;
  private readonly useCells: boolean;
  /** The inverted-file index searches use, once built; the one being built aside (a first one, or a retraining). */
  private cells: StoreCells | null = null;
  private cellsBuilding: StoreCells | null = null;
  private cellsBuilder: Promise<void> | null = null;
  private readonly indexQueue = new Set<GraphHolder>();
  private indexer: Promise<void> | null = null;
  private closed = false;
  /** When the last write arrived (performance.now()): background graph builds wait for writes to pause. */
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private readonly graphDir: string | undefined;
  /** Searches answered by the store-wide cells and by the store-wide graph, since construction (tests and the bench read them). */
  readonly answeredBy = { cells: 0, storeGraph: 0 };
  /** Cell indexes that trained their centroids and that took saved ones, since construction. */
  readonly cellCounts = { trained: 0, loaded: 0 };
  /** Graphs loaded from `graphDir` and graphs built, since construction (the log and tests read them). */
  readonly graphCounts = { loaded: 0, built: 0 };
  /**
   * While `load` runs: the writes that arrived meanwhile, replayed in order once the loaded rows are in
   * (searches answer UNAVAILABLE until then). Null when no load runs.
   */
  private deferred: Array<() => unknown> | null = null;
  /** Why the last `load` failed: searches answer UNAVAILABLE rather than from partial rows. */
  private loadError: unknown = undefined;
  /** Settles when the running `load` ends (with the rows in, or failed); null when none runs. */
  private loadDone: Promise<void> | null = null;
  /** True while a deferred write is being applied (it must run, not queue again). */
  private replaying = false;
  /** Saved graphs still to load (by the background indexer, after `load`), each with its size threshold. */
  private readonly graphsToLoad = new Map<GraphHolder, number>();
  /** False while `load` swaps its rows in: saved graphs are then loaded by the indexer, not inline. */
  private loadGraphsInline = true;

  constructor(opts: PartitionedVectorBackendOptions) {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0)
      throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    this.dimension = opts.dimension;
    this.exactThreshold = opts.exactThreshold ?? EXACT_SCAN_THRESHOLD;
    if (!Number.isInteger(this.exactThreshold) || this.exactThreshold < 0)
      throw new RangeError(`exactThreshold must be an integer >= 0, got ${this.exactThreshold}`);
    this.indexMinRows = Math.max(
      1,
      opts.graphMinRows ?? (opts.exactThreshold === undefined ? PARTITION_GRAPH_MIN_ROWS : this.exactThreshold),
    );
    this.overfetch = opts.overfetch ?? DEFAULT_OVERFETCH;
    if (!(this.overfetch >= 1)) throw new RangeError(`overfetch must be >= 1, got ${this.overfetch}`);
    this.hnswParams = { ...DEFAULT_HNSW_PARAMS, ...opts.hnsw };
    this.storeGraphParams = { ...STORE_GRAPH_PARAMS, ...opts.hnsw };
    this.indexBatchRows = opts.indexBatchRows ?? 256;
    this.yieldEveryMs = opts.yieldEveryMs ?? 4;
    this.useStoreGraph = opts.storeGraph ?? true;
    this.useCells = opts.cells ?? opts.exactThreshold === undefined;
    this.storeGraphMinRows = Math.max(1, this.exactThreshold * 4);
    this.partitionScanMaxCost = opts.partitionScanMaxCost ?? (opts.exactThreshold === undefined ? PARTITION_SCAN_MAX_COST : 0);
    this.smallShareScanMaxCost = Math.max(
      this.partitionScanMaxCost,
      opts.smallShareScanMaxCost ?? (opts.exactThreshold === undefined ? SMALL_SHARE_SCAN_MAX_COST : 0),
    );
    this.storeGraph = new StoreGraph(this.partitionOfKey, this.dimension);
    this.graphDir = opts.graphDir;
    if (this.graphDir) mkdirSync(this.graphDir, { recursive: true });
  }

  /** How many chunk versions are held. */
  get size(): number {
    return this.partitionOfKey.size;
  }

  upsert(entries: readonly VectorEntry[]): void {
    this.assertOpen();
    for (const e of entries) this.checkEntry(e);
    if (this.deferWhileLoading(() => this.upsert(entries))) return;
    this.lastWriteAt = performance.now();
    const changed = new Map<VectorPartition, Set<number>>();
    const storeChanged = new Set<number>();
    for (const e of entries) {
      const held = this.partitionOfKey.get(e.chunkKey);
      if (held && held.resourceId !== e.resourceId) {
        held.remove(e.chunkKey);
        if (!changed.has(held)) changed.set(held, new Set());
      }
      let p = this.partitions.get(e.resourceId);
      if (!p) {
        p = new VectorPartition(e.resourceId, this.dimension);
        this.partitions.set(e.resourceId, p);
        this.layoutEpoch += 1;
      }
      let keys = changed.get(p);
      if (!keys) changed.set(p, (keys = new Set()));
      const outcome = p.upsert(e.chunkKey, e.path, e.supersededAt, e.vector);
      if (outcome === "rejected") {
        this.partitionOfKey.delete(e.chunkKey);
        this.storeGraph.remove(e.chunkKey);
        this.removeFromCells(e.chunkKey);
      } else {
        this.partitionOfKey.set(e.chunkKey, p);
      }
      if (outcome === "changed") {
        keys.add(e.chunkKey);
        storeChanged.add(e.chunkKey);
      }
    }
    for (const [p, keys] of changed) {
      p.syncGraphs([...keys]);
      this.afterPartitionWrite(p);
    }
    this.storeGraph.sync([...storeChanged]);
    this.syncCells([...storeChanged]);
    this.maintainStoreGraph();
  }

  supersede(chunkKeys: readonly number[], at: number): void {
    this.assertOpen();
    if (!Number.isFinite(at)) throw new RangeError(`supersede time must be finite, got ${at}`);
    if (this.deferWhileLoading(() => this.supersede(chunkKeys, at))) return;
    for (const k of chunkKeys) this.partitionOfKey.get(k)?.supersede(k, at);
  }

  remove(chunkKeys: readonly number[]): void {
    this.assertOpen();
    if (this.deferWhileLoading(() => this.remove(chunkKeys))) return;
    const touched = new Set<VectorPartition>();
    for (const k of chunkKeys) {
      const p = this.partitionOfKey.get(k);
      if (!p) continue;
      p.remove(k);
      this.partitionOfKey.delete(k);
      this.storeGraph.remove(k);
      this.removeFromCells(k);
      touched.add(p);
    }
    for (const p of touched) this.afterPartitionWrite(p);
    this.maintainStoreGraph();
  }

  clearResource(resourceId: string): void {
    this.assertOpen();
    if (this.deferWhileLoading(() => this.clearResource(resourceId))) return;
    const p = this.partitions.get(resourceId);
    if (!p) return;
    for (const k of p.keySnapshot()) {
      this.partitionOfKey.delete(k);
      this.storeGraph.remove(k);
      this.removeFromCells(k);
    }
    this.drop(p);
    this.forgetGraph(p);
    this.partitions.delete(resourceId);
    this.layoutEpoch += 1;
    this.maintainStoreGraph();
  }

  /**
   * Erases the resource's entries for good: its partition goes with its graph and saved graph file (as in
   * `clearResource`), and the store-wide graph, whose HNSW nodes keep removed vectors as tombstones (in
   * memory and in its saved file), is let go with its file and rebuilt in the background from the rows held.
   * The store-wide cells' centroids are averages of the rows they were trained on, so when the resource held
   * rows they go too (in memory and `cells.f32`), and cells are trained again on the rows held (and saved).
   */
  async eraseResource(resourceId: string): Promise<void> {
    this.assertOpen();
    if (this.deferred !== null && !this.replaying) {
      return new Promise((resolve, reject) => this.deferred!.push(() => this.eraseResource(resourceId).then(resolve, reject)));
    }
    // The store-wide graph goes first (when it holds any of the resource), so its rows are not tombstoned one by one.
    const path = this.graphPath(this.storeGraph);
    const saved = path !== undefined && existsSync(`${path}.usearch`);
    const held = this.partitions.get(resourceId);
    if (held && (this.storeGraph.index || this.storeGraph.building || saved)) {
      this.forgetGraph(this.storeGraph);
      this.drop(this.storeGraph);
      for (const k of held.keySnapshot()) this.partitionOfKey.delete(k);
      this.storeGraph = new StoreGraph(this.partitionOfKey, this.dimension);
    }
    if (held && held.size > 0) this.forgetCentroids();
    this.clearResource(resourceId);
  }

  /**
   * Lets the store-wide cells go (serving and building: their centroids may average erased rows) and deletes
   * the saved centroids; the next maintainCells trains anew on the rows then held. Searches meanwhile use the
   * graphs and partitions, as before the first cells were built. A file that cannot be deleted fails the
   * erasure (it is not complete while the file holds averages of erased rows; a retry deletes it).
   */
  private forgetCentroids(): void {
    this.dropCells();
    if (this.graphDir === undefined) return;
    rmSync(join(this.graphDir, CENTROIDS_FILE), { force: true });
    rmSync(join(this.graphDir, `${CENTROIDS_FILE}.tmp`), { force: true });
  }

  /**
   * Builds the resource's new partition aside, `indexBatchRows` entries per event-loop turn, then swaps
   * it in in one step that only moves keys: the old partition (and searches still reading it) is let go,
   * and the graphs are rebuilt in the background (the store-wide one too, as its keys changed), the
   * new rows being scanned exactly until then. Writes to the same resource must not run meanwhile (the
   * Indexer runs a rebuild in its write section).
   */
  async replaceResource(resourceId: string, entries: readonly VectorEntry[]): Promise<void> {
    this.assertOpen();
    for (const e of entries) {
      this.checkEntry(e);
      if (e.resourceId !== resourceId) throw new RangeError(`chunk ${e.chunkKey} belongs to resource ${e.resourceId}, not ${resourceId}`);
    }
    if (this.deferred !== null && !this.replaying) {
      // Resolves once replayed after the load, so the caller's write section spans the real work.
      return new Promise((resolve, reject) => this.deferred!.push(() => this.replaceResource(resourceId, entries).then(resolve, reject)));
    }
    const fresh = new VectorPartition(resourceId, this.dimension);
    for (let i = 0; i < entries.length; i += this.indexBatchRows) {
      if (i > 0) {
        await yieldToEventLoop();
        this.assertOpen();
      }
      for (const e of entries.slice(i, i + this.indexBatchRows)) fresh.upsert(e.chunkKey, e.path, e.supersededAt, e.vector);
    }
    const old = this.partitions.get(resourceId);
    if (old) {
      for (const k of old.keySnapshot()) {
        this.partitionOfKey.delete(k);
        this.removeFromCells(k);
      }
      this.drop(old);
    }
    const keys = fresh.keySnapshot();
    for (const k of keys) {
      const held = this.partitionOfKey.get(k);
      if (held && held !== fresh) {
        held.remove(k);
        this.afterPartitionWrite(held);
      }
      this.partitionOfKey.set(k, fresh);
    }
    this.layoutEpoch += 1;
    if (fresh.size > 0) this.partitions.set(resourceId, fresh);
    else {
      this.partitions.delete(resourceId);
      this.forgetGraph(fresh);
    }
    if (old || keys.length > 0) {
      this.drop(this.storeGraph);
      this.storeGraph = new StoreGraph(this.partitionOfKey, this.dimension);
    }
    this.syncCells(keys);
    this.afterPartitionWrite(fresh);
    this.maintainStoreGraph();
  }

  /**
   * Replaces everything held with `entries` (the document store's retained vectors): the new partitions
   * are built aside and swapped in at once, so a search sees the old content or the new, never a mix.
   */
  replaceAll(entries: Iterable<VectorEntry>): void {
    this.assertOpen();
    if (this.deferred !== null) throw new Error("replaceAll while a load runs");
    const aside = new LoadAside(this.dimension);
    for (const e of entries) {
      this.checkEntry(e);
      aside.add(e);
    }
    this.swapIn(aside);
  }

  /**
   * Fills the backend from `entries` (the document store's retained vectors, at start) without holding
   * the event loop: reading starts on the next turn, rows are taken `LOAD_BATCH_ROWS` per turn and built aside, then swapped in at once,
   * and saved graphs are loaded afterwards by the background indexer (searches scan meanwhile). Until
   * the rows are in, searches wait (health says NOT_SERVING) and writes are queued from the call on, then replayed in
   * order: `entries` must come from a committed state no older than this call (the store's
   * `iterateVectors`, read on the first step), so the replay brings it up to date.
   */
  async load(entries: AsyncIterable<VectorEntry> | Iterable<VectorEntry>): Promise<void> {
    this.assertOpen();
    if (this.deferred !== null) throw new Error("a load is already running");
    this.deferred = [];
    this.loadError = undefined;
    let settle!: () => void;
    this.loadDone = new Promise((resolve) => (settle = resolve));
    try {
      // The caller (a server starting) gets to listen first: the store's read can be long, and every
      // write from now on is queued, so a state read later than this is brought up to date all the same.
      await yieldToEventLoop();
      this.assertOpen();
      const aside = new LoadAside(this.dimension);
      let n = 0;
      for await (const e of entries) {
        this.checkEntry(e);
        aside.add(e);
        if (++n % LOAD_BATCH_ROWS === 0) {
          await yieldToEventLoop();
          this.assertOpen();
        }
      }
      this.assertOpen();
      this.loadGraphsInline = false;
      try {
        this.swapIn(aside);
      } finally {
        this.loadGraphsInline = true;
      }
      while (this.deferred.length > 0) {
        const op = this.deferred.shift()!;
        this.replaying = true;
        let done: unknown;
        try {
          done = op();
        } catch (err) {
          // Each write was checked when it was queued; one failing now must not lose the others.
          process.stderr.write(
            `acms: a vector write made while loading failed on replay: ${err instanceof Error ? err.message : String(err)}\n`,
          );
        } finally {
          this.replaying = false;
        }
        await done;
      }
    } catch (err) {
      this.loadError = err;
      throw err;
    } finally {
      // After a failure (or close) the writes still queued run now: on a closed backend they fail as any
      // write would; otherwise they keep the rows current, though searches stay UNAVAILABLE.
      const left = this.deferred ?? [];
      this.deferred = null;
      this.loadDone = null;
      settle();
      for (const op of left) {
        try {
          (op() as Promise<unknown> | undefined)?.catch?.(() => undefined);
        } catch {
          // The caller's promise (replaceResource) carries the error; sync writes have no caller left.
        }
      }
    }
  }

  /** Whether `load` is still running (searches wait for it meanwhile). */
  get loading(): boolean {
    return this.deferred !== null;
  }

  /** Queues a write made while `load` runs (true), or lets it run now (false). */
  private deferWhileLoading(op: () => unknown): boolean {
    if (this.deferred === null || this.replaying) return false;
    this.deferred.push(op);
    return true;
  }

  /** Swaps the partitions built aside in for everything held, and maintains their graphs. */
  private swapIn(aside: LoadAside): void {
    const { partitions, partitionOfKey } = aside;
    this.loadError = undefined;
    const old = this.partitions;
    this.partitions = partitions;
    this.layoutEpoch += 1;
    this.partitionOfKey = partitionOfKey;
    this.drop(this.storeGraph);
    this.storeGraph = new StoreGraph(partitionOfKey, this.dimension);
    this.dropCells();
    for (const p of old.values()) {
      this.drop(p);
      if (!partitions.has(p.resourceId)) this.forgetGraph(p);
    }
    for (const p of partitions.values()) this.afterPartitionWrite(p);
    this.maintainStoreGraph();
    this.sweepGraphDir();
  }

  async search(
    view: ScopedBackendView,
    query: Float32Array,
    opts: VectorSearchOptions,
  ): Promise<{ hits: VectorHit[]; exhaustive: boolean }> {
    this.assertOpen();
    if (this.loadDone !== null) {
      // Health says NOT_SERVING meanwhile; a search that comes anyway waits (within its deadline).
      await settledOrAborted(this.loadDone, opts.signal);
      this.assertOpen();
    }
    if (this.loadError !== undefined)
      throw new UnavailableError(
        `the vectors could not be loaded: ${this.loadError instanceof Error ? this.loadError.message : String(this.loadError)}`,
      );
    assertVectorQuery(query, this.dimension, opts);
    const unit = new Float32Array(this.dimension);
    if (normalizeInto(query, unit) === 0) return { hits: [], exhaustive: true };
    const queryCodes = new Int8Array(this.dimension);
    quantizeRow(unit, 0, queryCodes, 0, this.dimension);

    const layout = this.layoutOf(view);
    const inScope = layout.partitions;
    let candidates = 0;
    for (const p of inScope) candidates += p.size;
    const paths = view.paths;
    const filter: PartitionFilter = {
      query: unit,
      queryCodes,
      minScore: Math.max(0, opts.minScore),
      supersededCutoff: supersededCutoff(view.temporalScope, opts.now, opts.recentWindowMs) ?? Number.NEGATIVE_INFINITY,
      pathAllowed: paths.matchesAll ? undefined : (path) => paths.matches(path),
      pathCache: new Map(),
    };
    const useGraphs = candidates > this.exactThreshold;
    const fetch = Math.ceil(opts.topK * this.overfetch);
    // Visible candidates a graph answer must rest on: half the over-fetch, so the k-th result is never
    // decided by the graph's approximate order at the edge of what the filters let through.
    const need = Math.max(opts.topK, Math.ceil(fetch / 2));
    const fromGraphs = useGraphs ? this.answerFromStoreIndexes(layout, candidates, filter, opts.topK, fetch, need) : null;
    if (fromGraphs) return { hits: this.hitsOf(fromGraphs, inScope), exhaustive: false };
    const heap = new TopKHeap(opts.topK);
    let exhaustive = true;
    let lastYield = performance.now();
    // Past the threshold, the small partitions' codes are scanned together, a batch at a time (scanPooled).
    const pooled: PooledPart[] = [];
    let pooledRows = 0;
    const scanPool = () => {
      if (pooled.length === 0) return;
      const outcome = pooledRows >= POOL_MIN_ROWS ? scanPooled(pooled, filter, heap, fetch * INT8_OVERFETCH_FACTOR, need) : "unsettled";
      if (outcome === "approximate") exhaustive = false;
      else if (outcome === "unsettled") for (const { partition, tag } of pooled) partition.scanExact(filter, heap, tag);
      pooled.length = 0;
      pooledRows = 0;
    };
    for (let i = 0; i < inScope.length; i++) {
      const p = inScope[i];
      if (useGraphs && !p.index && p.size < INT8_SCAN_MIN_ROWS) {
        // Scanned with the pool (its rows read then, so a write meanwhile is seen as in any scan).
        if (pooledRows + p.size > POOL_BATCH_ROWS) scanPool();
        pooled.push({ partition: p, tag: i });
        pooledRows += p.size;
      } else if (useGraphs && p.index && p.searchIndexed(filter, heap, i, fetch, need)) exhaustive = false;
      else if (
        useGraphs &&
        p.size >= INT8_SCAN_MIN_ROWS &&
        p.size < this.indexMinRows &&
        p.scanQuantized(filter, heap, i, fetch * INT8_OVERFETCH_FACTOR, need)
      ) {
        // A partition too small for a graph of its own; one waiting for its graph is scanned exactly.
        exhaustive = false;
      } else p.scanExact(filter, heap, i);
      if (performance.now() - lastYield >= this.yieldEveryMs && i + 1 < inScope.length) {
        await yieldToEventLoop();
        this.assertOpen();
        opts.signal?.throwIfAborted();
        lastYield = performance.now();
      }
    }
    opts.signal?.throwIfAborted();
    scanPool();
    return { hits: this.hitsOf(heap, inScope), exhaustive };
  }

  /**
   * Answers from the store-wide graph when the scope covers enough of the store (the caller has checked that
   * the partitions would cost more): candidates are kept
   * only when their partition is in scope (and pass the filters), after exact re-scoring; a search that
   * finds too few in scope first asks `afterFirstRound` (the cells) and, when that cannot settle it either, is
   * widened (STORE_GRAPH_WIDENINGS). Returns the answer's heap, or null when the graph is not there, the
   * scope is cheaper to scan, or the graph could not settle the answer.
   */
  private searchStoreGraph(
    layout: ScopeLayout,
    candidates: number,
    filter: PartitionFilter,
    topK: number,
    need: number,
    afterFirstRound: () => TopKHeap | null,
  ): TopKHeap | null {
    const graph = this.storeGraph.index;
    const total = this.partitionOfKey.size;
    if (!graph || total === 0 || candidates < STORE_GRAPH_MIN_SHARE * total) return null;
    // Twice the visible candidates it needs, scaled up by the share of the store the scope leaves out.
    let fetch = Math.ceil((need * 2 * total) / candidates);
    for (let round = 0; fetch <= STORE_GRAPH_MAX_FETCH; round++) {
      const heap = new TopKHeap(topK);
      const keys = graph.search(filter.query, fetch);
      const tally = this.offerInScope(layout, keys, filter, heap, Number.POSITIVE_INFINITY);
      const answered = graphAnswered(tally, keys.length, graph.size, need);
      if (round === 0) {
        // What this view's first rounds come to, for the order of later searches (kept to recent ones).
        if (layout.graphRounds >= 4 * LEARN_ROUNDS) {
          layout.graphRounds /= 2;
          layout.graphMisses /= 2;
        }
        layout.graphRounds += 1;
        if (!answered) layout.graphMisses += 1;
      }
      if (answered) return heap;
      if (round === 0) {
        const other = afterFirstRound();
        if (other) return other;
      }
      // The query's neighbourhood lies mostly outside the scope: widen in proportion to the share of the
      // candidates that passed (a wider beam costs far less than scanning the scope's partitions).
      fetch = Math.max(fetch * 2, Math.ceil((fetch * need) / Math.max(1, tally.visible)));
      // Past half the store, the partitions' own scans are as cheap and sure.
      if (round >= STORE_GRAPH_WIDENINGS || fetch * 2 >= graph.size) return null;
    }
    return null;
  }

  /**
   * The view's partitions (those of its resources this backend holds, by their position in the list), kept
   * per view until a partition is added or dropped: a scope of 1,000 resources looked up one by one cost
   * about 0.2 ms a search, a tenth of a store-graph answer.
   */
  private layoutOf(view: ScopedBackendView): ScopeLayout {
    const held = this.layouts.get(view);
    if (held && held.epoch === this.layoutEpoch && held.source === this.partitions) return held;
    const partitions: VectorPartition[] = [];
    for (const id of view.resourceSet) {
      const p = this.partitions.get(id);
      if (p && p.size > 0) partitions.push(p);
    }
    const layout: ScopeLayout = {
      epoch: this.layoutEpoch,
      source: this.partitions,
      partitions,
      tagOf: null,
      graphRounds: 0,
      graphMisses: 0,
      searches: 0,
      checks: 0,
      agreement: 0,
    };
    this.layouts.set(view, layout);
    return layout;
  }

  /**
   * Answers from the store-wide indexes, or null when neither settles it (the partitions then answer). The
   * store graph goes first, as it holds up however the data clusters; when its first candidates lie mostly
   * outside the scope, the cells answer (they read the scope's own rows near the query), and only then is the
   * graph widened. A view learns which to ask first: now and then (and for its first searches) both answer
   * and the cells' top k is compared with the graph's; a view whose graph searches mostly miss, or whose
   * cells agree with the graph (CELLS_AGREEMENT), asks the cells first, and keeps checking now and then.
   */
  private answerFromStoreIndexes(
    layout: ScopeLayout,
    candidates: number,
    filter: PartitionFilter,
    topK: number,
    fetch: number,
    need: number,
  ): TopKHeap | null {
    // A scope cheap to answer partition by partition asks neither (checked once here, for both); so does one
    // the store-wide graph cannot answer (too small a share, or no graph yet) while its scans stay affordable:
    // the cells alone have nothing to check their answer against.
    const cost = this.smallShareScanMaxCost > 0 ? this.partitionScanCost(layout.partitions, this.smallShareScanMaxCost) : Infinity;
    if (cost <= this.partitionScanMaxCost) return null;
    const graphCovers = this.storeGraph.index !== null && candidates >= STORE_GRAPH_MIN_SHARE * this.partitionOfKey.size;
    if (!graphCovers && cost <= this.smallShareScanMaxCost) return null;
    const cellsReady = this.cells?.ready === true;
    layout.searches += 1;
    const check = cellsReady && (layout.searches % RECHECK_EVERY === 0 || layout.checks < LEARN_ROUNDS);
    const answered = this.answeredBy;
    const cells = () => {
      const heap = this.searchCells(layout, candidates, filter, topK, fetch, need);
      if (heap) answered.cells += 1;
      return heap;
    };
    if (cellsReady && !check && cellsPreferred(layout)) {
      const first = cells();
      if (first) return first;
      const graph = this.searchStoreGraph(layout, candidates, filter, topK, need, () => null);
      if (graph) answered.storeGraph += 1;
      return graph;
    }
    let triedCells = false;
    let fromCells: TopKHeap | null = null;
    const graph = this.searchStoreGraph(layout, candidates, filter, topK, need, () => {
      triedCells = true;
      return (fromCells = cells());
    });
    if (graph && graph !== fromCells) answered.storeGraph += 1;
    if (!graph) return triedCells ? null : cells();
    if (check && !triedCells) {
      // The graph answered: how much of its answer the cells give too (they answer nothing when they cannot settle it).
      const other = this.searchCells(layout, candidates, filter, topK, fetch, need);
      const mine = new Set(graph.keptKeys());
      const agreed = other ? other.keptKeys().filter((k) => mine.has(k)).length : 0;
      layout.checks += 1;
      layout.agreement += mine.size === 0 ? 1 : agreed / mine.size;
    }
    return graph;
  }

  /**
   * Answers from the inverted-file index when the scope is too large to scan partition by partition: the
   * cells nearest the query are scanned for up to `fetch` in-scope candidates each, and the nearest visible
   * ones over all of them (at most `fetch`) are re-scored exactly. Null when the index is not ready or fewer
   * than `need` candidates passed (the store graph and the partitions then answer).
   */
  private searchCells(
    layout: ScopeLayout,
    candidates: number,
    filter: PartitionFilter,
    topK: number,
    fetch: number,
    need: number,
  ): TopKHeap | null {
    const cells = this.cells;
    const total = this.partitionOfKey.size;
    if (!cells?.ready || total === 0 || candidates === 0) return null;
    // Every partition held in scope: every row qualifies, and the cells are scanned as they are.
    if (!layout.ordinals)
      layout.ordinals = layout.partitions.length === this.partitions.size ? "all" : new Set(layout.partitions.map((p) => p.ordinal));
    const owners = layout.ordinals === "all" ? undefined : layout.ordinals;
    const found = cells.search(filter.query, filter.queryCodes, probesFor(cells.cellCount), fetch, owners, candidates / total);
    const heap = new TopKHeap(topK);
    // A row is tagged with its partition when placed; one moved or removed since is checked by its key here.
    const tally = this.offerInScope(
      layout,
      found.map((c) => c.key),
      filter,
      heap,
      fetch,
    );
    return tally.visible >= need ? heap : null;
  }

  /**
   * Offers the candidates among `keys` (in order) that are held in one of the view's partitions to `heap`,
   * re-scored exactly and filtered, until `limit` have passed; returns how many passed.
   */
  private offerInScope(layout: ScopeLayout, keys: readonly number[], filter: PartitionFilter, heap: TopKHeap, limit: number): GraphTally {
    if (!layout.tagOf) layout.tagOf = new Map(layout.partitions.map((p, i) => [p, i]));
    const tagOf = layout.tagOf;
    const tally: GraphTally = { visible: 0 };
    for (const key of keys) {
      if (tally.visible >= limit) break;
      const p = this.partitionOfKey.get(key);
      const tag = p === undefined ? undefined : tagOf.get(p);
      if (tag !== undefined) p!.offerCandidate(key, filter, heap, tag, tally);
    }
    return tally;
  }

  /**
   * What answering these partitions one by one costs, in int8 rows scanned (see PARTITION_SCAN_MAX_COST), counted
   * up to past `limit`. Small partitions are pooled into one int8 scan (scanPooled), so their rows count as
   * int8 rows, plus the copy (POOLED_ROW_COST).
   */
  private partitionScanCost(inScope: VectorPartition[], limit: number): number {
    let cost = 0;
    let small = 0;
    for (const p of inScope) {
      if (p.index) cost += GRAPH_SEARCH_COST;
      else if (p.size >= INT8_SCAN_MIN_ROWS) cost += p.size;
      else small += p.size;
      if (cost + small > limit) break;
    }
    return cost + (small >= POOL_MIN_ROWS ? small * POOLED_ROW_COST : small * FLOAT_ROW_COST);
  }

  /** The heap's entries as hits, best first; a key removed since it was scored is left out. */
  private hitsOf(heap: TopKHeap, inScope: VectorPartition[]): VectorHit[] {
    const hits: VectorHit[] = [];
    for (const { score, key, tag } of heap.drain()) {
      const p = inScope[tag];
      const path = p.pathOf(key);
      if (path !== undefined) hits.push({ chunkKey: key, resourceId: p.resourceId, path, score });
    }
    return hits;
  }

  /** The serving inverted-file index's cells and how many a search reads (null until one is built): the bench prints them. */
  get cellStats(): { cells: number; probes: number; rows: number } | null {
    const cells = this.cells;
    return cells ? { cells: cells.cellCount, probes: probesFor(cells.cellCount), rows: cells.placed } : null;
  }

  /** Resolves once no graph or cell index is being built (tests and benchmarks wait for the graph paths with it). */
  async whenIndexed(): Promise<void> {
    while (this.indexer || this.cellsBuilder) {
      if (this.indexer) await this.indexer;
      if (this.cellsBuilder) await this.cellsBuilder;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.partitions.values()) this.saveGraph(p);
    this.saveGraph(this.storeGraph);
    for (const p of this.partitions.values()) this.drop(p);
    this.drop(this.storeGraph);
    this.dropCells();
    this.partitions = new Map();
    this.layoutEpoch += 1;
    this.partitionOfKey = new Map();
    this.indexQueue.clear();
    this.graphsToLoad.clear();
    await this.whenIndexed();
  }

  private checkEntry(e: VectorEntry): void {
    if (!Number.isSafeInteger(e.chunkKey) || e.chunkKey < 0)
      throw new RangeError(`chunkKey must be a non-negative safe integer, got ${e.chunkKey}`);
    if (e.vector.length !== this.dimension) {
      throw new RangeError(`chunk ${e.chunkKey} has ${e.vector.length} dimensions, the backend ${this.dimension}`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError("the vector backend is closed");
  }

  /** Keeps a partition in step after writes: gone when empty, its graph maintained. */
  private afterPartitionWrite(p: VectorPartition): void {
    if (p.size === 0) {
      this.drop(p);
      if (this.partitions.get(p.resourceId) === p) {
        this.partitions.delete(p.resourceId);
        this.layoutEpoch += 1;
        this.forgetGraph(p);
      }
      return;
    }
    this.maintainGraph(p, this.indexMinRows);
  }

  private maintainStoreGraph(): void {
    if (this.useStoreGraph) this.maintainGraph(this.storeGraph, this.storeGraphMinRows);
    this.maintainCells();
  }

  /** Puts the current rows of `keys` into the inverted-file indexes (serving and building). */
  private syncCells(keys: readonly number[]): void {
    this.cells?.sync(keys);
    this.cellsBuilding?.sync(keys);
  }

  private removeFromCells(key: number): void {
    this.cells?.remove(key);
    this.cellsBuilding?.remove(key);
  }

  /** Lets both inverted-file indexes go (every row was replaced): the next maintainCells builds anew. */
  private dropCells(): void {
    if (this.cells) this.cells.detached = true;
    if (this.cellsBuilding) this.cellsBuilding.detached = true;
    this.cells = null;
    this.cellsBuilding = null;
  }

  /**
   * Starts building the inverted-file index once the store holds storeGraphMinRows rows, and a retrained one
   * once it holds twice the rows the serving one was trained on (the centroids then fit the data less well),
   * in the background a step per event-loop turn; the serving one answers until the new one is complete.
   */
  private maintainCells(): void {
    if (!this.useCells || this.closed || this.cellsBuilding) return;
    const size = this.partitionOfKey.size;
    if (size < this.storeGraphMinRows) return;
    if (this.cells && size < 2 * this.cells.trainedRows) return;
    const building = new StoreCells(this.partitionOfKey, this.dimension);
    this.cellsBuilding = building;
    // A first index after a start takes the centroids a previous run saved, while they still fit the store's size.
    const savedAt = this.graphDir === undefined ? undefined : join(this.graphDir, CENTROIDS_FILE);
    let saved: SavedCentroids | undefined = !this.cells && savedAt ? StoreCells.loadCentroids(savedAt, this.dimension) : undefined;
    if (saved && size >= 2 * saved.trainedRows) saved = undefined;
    const run = async () => {
      try {
        // Each step after a turn of the event loop: never inside the write that started the build.
        for (const steps = building.buildSteps(saved); ;) {
          await yieldToEventLoop();
          if (this.closed || building.detached) return;
          if (steps.next().done) break;
        }
        if (building.ready && this.cellsBuilding === building) {
          if (this.cells) this.cells.detached = true;
          this.cells = building;
          this.cellCounts[building.trained ? "trained" : "loaded"] += 1;
          if (building.trained && savedAt) {
            try {
              building.saveCentroids(savedAt);
            } catch (err) {
              process.stderr.write(
                `acms: could not save the vector cells' centroids (they are trained again at the next start): ${err instanceof Error ? err.message : String(err)}\n`,
              );
            }
          }
        }
      } catch (err) {
        process.stderr.write(
          `acms: vector cell index build failed, searches use the graphs: ${err instanceof Error ? err.message : String(err)}\n`,
        );
      } finally {
        if (this.cellsBuilding === building) this.cellsBuilding = null;
        if (this.cellsBuilder === job) this.cellsBuilder = null;
      }
    };
    const job: Promise<void> = run();
    this.cellsBuilder = job;
  }

  /** Builds a holder's graph past `minRows`, drops it below half of that, and rebuilds it after heavy churn. */
  private maintainGraph(holder: GraphHolder, minRows: number, trySaved = true): void {
    if (holder.size < minRows / 2 || holder.size === 0) {
      if (holder.index || holder.building) this.forgetGraph(holder);
      holder.index = null;
      holder.building = null;
      this.indexQueue.delete(holder);
      this.graphsToLoad.delete(holder);
      return;
    }
    if (holder.building || this.graphsToLoad.has(holder)) return;
    const churned = holder.index !== null && holder.index.removals > Math.max(MIN_REMOVALS_FOR_REBUILD, holder.index.size);
    if (trySaved && holder.index === null && holder.size >= minRows && this.graphDir !== undefined) {
      if (!this.loadGraphsInline) {
        this.graphsToLoad.set(holder, minRows);
        if (!this.indexer) this.indexer = this.runIndexer();
        return;
      }
      if (this.loadGraph(holder)) return;
    }
    if ((holder.index === null && holder.size >= minRows) || churned) {
      holder.building = new HnswIndex(this.dimension, this.paramsOf(holder));
      this.indexQueue.add(holder);
      if (!this.indexer) this.indexer = this.runIndexer();
    }
  }

  /** The store-wide graph has its own tuning (STORE_GRAPH_PARAMS): fewer edges and a narrower beam than partition graphs. */
  private paramsOf(holder: GraphHolder): HnswParams {
    return holder === this.storeGraph ? this.storeGraphParams : this.hnswParams;
  }

  private graphPath(holder: GraphHolder): string | undefined {
    if (!this.graphDir) return undefined;
    return join(this.graphDir, holder === this.storeGraph ? "store" : `r-${(holder as VectorPartition).resourceId}`);
  }

  /** Takes the holder's saved graph when it matches the rows held; true when it did. */
  private loadGraph(holder: GraphHolder): boolean {
    const path = this.graphPath(holder);
    const graph = path === undefined ? undefined : HnswIndex.load(path, this.dimension, this.paramsOf(holder), holder.keySnapshot());
    if (!graph) return false;
    holder.index = graph;
    this.graphCounts.loaded += 1;
    return true;
  }

  /** Saves the holder's graph when it changed since it was saved or loaded; a failure only costs a rebuild later. */
  private saveGraph(holder: GraphHolder): void {
    const path = this.graphPath(holder);
    if (path === undefined || !holder.index?.dirty || holder.detached) return;
    try {
      holder.index.save(path);
    } catch (err) {
      process.stderr.write(
        `acms: could not save a vector graph (it is rebuilt at the next start): ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  }

  /** Deletes a holder's saved graph (its rows are gone, or too few for a graph): it could never load again. */
  private forgetGraph(holder: GraphHolder): void {
    const path = this.graphPath(holder);
    if (path === undefined) return;
    try {
      rmSync(`${path}.usearch`, { force: true });
      rmSync(`${path}.keys`, { force: true });
    } catch (err) {
      process.stderr.write(`acms: could not delete a saved vector graph: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }

  /**
   * Deletes, after a full load, the saved graphs nothing will load: those of resources no longer held (or
   * now too small for a graph), of the store graph when it is off or too small, and temp files a crash
   * left. A deleted resource's graph is deleted with it; this catches what a crash or an older version left.
   */
  private sweepGraphDir(): void {
    if (!this.graphDir) return;
    try {
      for (const name of readdirSync(this.graphDir)) {
        if (name === `${CENTROIDS_FILE}.tmp`) rmSync(join(this.graphDir, name), { force: true });
        const m = /^(?:r-(.+)|store)\.(?:usearch|keys)(\.tmp)?$/.exec(name);
        if (!m) continue;
        const held =
          m[1] === undefined
            ? this.useStoreGraph
              ? this.storeGraph.size >= this.storeGraphMinRows
              : false
            : (this.partitions.get(m[1])?.size ?? 0) >= this.indexMinRows;
        if (m[2] !== undefined || !held) rmSync(join(this.graphDir, name), { force: true });
      }
    } catch (err) {
      process.stderr.write(`acms: could not sweep the saved vector graphs: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }

  /** Stops a holder's graph work; searches still holding it keep reading its rows and graph. */
  private drop(holder: GraphHolder): void {
    holder.detached = true;
    holder.building = null;
    this.indexQueue.delete(holder);
    this.graphsToLoad.delete(holder);
  }

  /**
   * Loads one saved graph queued by `load` (the largest first: the store-wide one serves the broadest
   * scopes); one that does not load is built instead. True when there was one to take.
   */
  private loadNextSavedGraph(): boolean {
    let next: GraphHolder | undefined;
    for (const h of this.graphsToLoad.keys()) if (!next || h.size > next.size) next = h;
    if (!next) return false;
    const minRows = this.graphsToLoad.get(next)!;
    this.graphsToLoad.delete(next);
    if (!next.detached && next.index === null && !this.loadGraph(next)) this.maintainGraph(next, minRows, false);
    return true;
  }

  /** Gives the event loop a turn, then waits (up to INDEX_MAX_BACKOFF_MS) while writes keep arriving. */
  private async quietForIndexing(): Promise<void> {
    await yieldToEventLoop();
    const started = performance.now();
    for (;;) {
      const now = performance.now();
      const since = now - this.lastWriteAt;
      if (since >= INDEX_WRITE_QUIET_MS || now - started >= INDEX_MAX_BACKOFF_MS || this.closed) return;
      await new Promise((resolve) => setTimeout(resolve, INDEX_WRITE_QUIET_MS - since + 1));
    }
  }

  /** Builds queued graphs one batch at a time, yielding between batches so searches and writes go on. */
  private async runIndexer(): Promise<void> {
    try {
      await yieldToEventLoop();
      while (!this.closed) {
        if (this.loadNextSavedGraph()) {
          await yieldToEventLoop();
          continue;
        }
        const next = this.indexQueue.values().next();
        if (next.done) break;
        const p = next.value;
        this.indexQueue.delete(p);
        const graph = p.building;
        if (!graph || p.detached) continue;
        try {
          // Rounds until the graph holds every row: writes during a build are not inserted by the write
          // (see StoreGraph.sync), so each round takes the rows held then that the graph lacks.
          let size = Math.min(16, this.indexBatchRows);
          for (let keys = p.keySnapshot(); keys.length > 0; keys = p.keySnapshot().filter((k) => !graph.has(k))) {
            // Steps sized by time, at most indexBatchRows: a fixed 256 rows held the loop 0.5-0.9 s under load.
            for (let i = 0; i < keys.length;) {
              await this.quietForIndexing();
              if (this.closed || p.detached || p.building !== graph) break;
              const slice = keys.slice(i, i + size);
              const started = performance.now();
              const rows = p.copyRows(slice.filter((k) => !graph.has(k)));
              graph.addMany(rows.keys, rows.vectors);
              size = nextSliceSize(size, slice.length, performance.now() - started, INDEX_STEP_BUDGET_MS, this.indexBatchRows);
              i += slice.length;
            }
            if (this.closed || p.detached || p.building !== graph) break;
          }
        } catch (err) {
          // A failed build must not take the process down: drop it; searches of this holder stay exact.
          if (p.building === graph) p.building = null;
          process.stderr.write(
            `acms: vector graph build failed, searches stay exact: ${err instanceof Error ? err.message : String(err)}\n`,
          );
          continue;
        }
        if (!this.closed && !p.detached && p.building === graph) {
          p.index = graph;
          p.building = null;
          this.graphCounts.built += 1;
          this.saveGraph(p);
        }
      }
    } finally {
      this.indexer = null;
    }
  }
}

/** A view's partitions as of one layout epoch (see layoutOf); a partition's position is its tag in heaps. */
interface ScopeLayout {
  readonly epoch: number;
  readonly source: ReadonlyMap<string, VectorPartition>;
  readonly partitions: VectorPartition[];
  /** Partition to position, made when the store-wide graph first answers for the view. */
  tagOf: Map<VectorPartition, number> | null;
  /** The partitions' ordinals (or "all" when the view holds every partition), made when the cells first answer for it. */
  ordinals?: ReadonlySet<number> | "all";
  /** First rounds of store-graph searches for the view, and how many of them could not settle the answer. */
  graphRounds: number;
  graphMisses: number;
  /** Searches of the view through the store indexes; of them, those where both answered, and the cells' summed agreement then. */
  searches: number;
  checks: number;
  agreement: number;
}

/** The saved centroids of the store-wide cells, in the graph folder. */
const CENTROIDS_FILE = "cells.f32";

/** Searches of a view through the store indexes observed before their outcome decides the order (see answerFromStoreIndexes). */
const LEARN_ROUNDS = 8;

/** One search in this many of a view is answered by both store indexes, to keep its order current. */
const RECHECK_EVERY = 16;

/** The least mean share of the graph's top k the cells must give too for a view to ask the cells first. */
const CELLS_AGREEMENT = 0.98;

/** Whether a view asks the cells first: its graph searches mostly miss, or its cells agree with the graph. */
function cellsPreferred(layout: ScopeLayout): boolean {
  if (layout.graphRounds >= LEARN_ROUNDS && layout.graphMisses * 2 > layout.graphRounds) return true;
  return layout.checks >= LEARN_ROUNDS && layout.agreement >= CELLS_AGREEMENT * layout.checks;
}

/** Rows `load` takes per event-loop turn (normalising and quantising 2,048 rows of 384 takes some 2-5 ms). */
const LOAD_BATCH_ROWS = 2048;

/** Partitions being filled aside by `replaceAll` or `load`, swapped in once complete. */
class LoadAside {
  readonly partitions = new Map<string, VectorPartition>();
  readonly partitionOfKey = new Map<number, VectorPartition>();

  constructor(private readonly dimension: number) {}

  /** Takes one checked entry; a later entry for the same key replaces it (moving it between resources). */
  add(e: VectorEntry): void {
    const held = this.partitionOfKey.get(e.chunkKey);
    if (held && held.resourceId !== e.resourceId) held.remove(e.chunkKey);
    let p = this.partitions.get(e.resourceId);
    if (!p) {
      p = new VectorPartition(e.resourceId, this.dimension);
      this.partitions.set(e.resourceId, p);
    }
    if (p.upsert(e.chunkKey, e.path, e.supersededAt, e.vector) === "rejected") this.partitionOfKey.delete(e.chunkKey);
    else this.partitionOfKey.set(e.chunkKey, p);
  }
}

/** Resolves when `done` does, or rejects with the signal's reason once it aborts, whichever is first. */
function settledOrAborted(done: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return done;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    done.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
