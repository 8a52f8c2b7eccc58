import type { GraphHolder } from "./graph-holder.js";
import type { HnswIndex } from "./hnsw-index.js";
import { int8NearestRows, quantizeRow } from "./int8-nearest-rows.js";
import type { TopKHeap } from "./top-k-heap.js";
import { dotAt, normalizeInto } from "./vector-math.js";

/** What one partition scan needs to know about the request, computed once per search. */
export interface PartitionFilter {
  /** The unit query vector. */
  query: Float32Array;
  /** Its int8 codes (`quantizeRow`), for the int8 scans; a buffer of its own (offset 0). */
  queryCodes: Int8Array;
  /** The least score kept: max(min_score, 0), so a negative cosine never qualifies. */
  minScore: number;
  /** A row is visible when its supersededAt (Infinity while live) is >= this. */
  supersededCutoff: number;
  /** Whether a path is in scope; undefined when every path is. */
  pathAllowed?: (path: string) => boolean;
  /** Answers of `pathAllowed` so far (chunks of one document share a path), shared by every partition. */
  pathCache: Map<string, boolean>;
}

/** What the candidates of one graph search came to: how many passed the filters. */
export interface GraphTally {
  visible: number;
}

/**
 * Whether a graph search settled the answer: at least `need` candidates passed the filters, or the graph
 * gave back every member. A graph's candidates are not a sure prefix of the true ranking (int8
 * graph scores, near-duplicate clusters), so the answer is trusted only with the same margin of visible
 * candidates an unfiltered search re-scores: a filter that lets through just `wanted` of them leaves the
 * boundary to the graph's approximate order, and the caller then widens the search or scans exactly.
 */
export function graphAnswered(tally: GraphTally, returned: number, members: number, need: number): boolean {
  return tally.visible >= need || returned >= members;
}

/** How much wider a filtered graph search may grow before an exact scan of the partition is cheaper. */
const MAX_WIDENINGS = 3;

const LIVE = Number.POSITIVE_INFINITY;
let partitionsMade = 0;
const INITIAL_ROWS = 16;

/**
 * The vectors of one resource: unit float32 rows stored back to back in one buffer that grows by
 * doubling, their int8 codes in a second one (for fast approximate scans, re-scored from the float32
 * rows), with parallel columns for chunk key, path and supersession time. Removal moves the last row
 * into the hole, so the rows stay dense and a scan touches no dead row. A large partition also carries an
 * HNSW graph (`index`) and possibly one being built in the background (`building`); every write goes to
 * both, so whichever serves is complete.
 */
export class VectorPartition implements GraphHolder {
  private data: Float32Array;
  private codes: Int8Array;
  private keys: Float64Array;
  private superseded: Float64Array;
  private paths: string[] = [];
  private readonly rowOf = new Map<number, number>();
  private count = 0;
  private supersededCount = 0;
  /** The graph searches use, once built. */
  index: HnswIndex | null = null;
  /** A graph under construction, swapped in when complete. */
  building: HnswIndex | null = null;
  /** Set when the partition is dropped, so a background build stops. */
  detached = false;
  private readonly scratch: Float32Array;

  /** A number no other partition of this process has had (the cell index tags rows with it). */
  readonly ordinal = ++partitionsMade;

  constructor(
    readonly resourceId: string,
    readonly dimension: number,
    initialRows = INITIAL_ROWS,
  ) {
    const rows = Math.max(1, initialRows);
    this.data = new Float32Array(rows * dimension);
    this.codes = new Int8Array(rows * dimension);
    this.keys = new Float64Array(rows);
    this.superseded = new Float64Array(rows);
    this.scratch = new Float32Array(dimension);
  }

  get size(): number {
    return this.count;
  }

  /** The path of a held chunk version, or undefined once it is gone. */
  pathOf(key: number): string | undefined {
    const row = this.rowOf.get(key);
    return row === undefined ? undefined : this.paths[row];
  }

  /** Every chunk key held, in row order (a snapshot). */
  keySnapshot(): number[] {
    return Array.from(this.keys.subarray(0, this.count));
  }

  /** Copies the unit rows of `keys` (those still held) back to back; returns the keys copied. */
  copyRows(keys: readonly number[]): { keys: number[]; vectors: Float32Array } {
    const d = this.dimension;
    const found: number[] = [];
    const vectors = new Float32Array(keys.length * d);
    for (const k of keys) {
      const row = this.rowOf.get(k);
      if (row === undefined) continue;
      vectors.set(this.data.subarray(row * d, row * d + d), found.length * d);
      found.push(k);
    }
    return { keys: found, vectors: vectors.subarray(0, found.length * d) };
  }

  /**
   * Adds or replaces one chunk version; `vector` is normalised on the way in. Returns "changed" when the
   * rows changed (the caller then passes the key to `syncGraphs`), "same" when an identical version was
   * already held (a re-upsert by an incremental rebuild costs no graph work), and "rejected" (holding
   * nothing for the key) when the vector has no direction, as a zero vector can be no one's neighbour.
   */
  upsert(key: number, path: string, supersededAt: number | null, vector: ArrayLike<number>): "changed" | "same" | "rejected" {
    const d = this.dimension;
    if (normalizeInto(vector, this.scratch) === 0) {
      this.remove(key);
      return "rejected";
    }
    let row = this.rowOf.get(key);
    const sup = supersededAt ?? LIVE;
    if (row !== undefined) {
      if (this.paths[row] === path && this.superseded[row] === sup && sameRow(this.scratch, this.data, row * d)) return "same";
      if (this.superseded[row] !== LIVE) this.supersededCount -= 1;
    } else {
      if (this.count === this.keys.length) this.grow();
      row = this.count++;
      this.rowOf.set(key, row);
    }
    this.data.set(this.scratch, row * d);
    quantizeRow(this.scratch, 0, this.codes, row * d, d);
    this.keys[row] = key;
    this.paths[row] = path;
    this.superseded[row] = sup;
    if (sup !== LIVE) this.supersededCount += 1;
    return "changed";
  }

  /**
   * Puts the current rows of `keys` into the serving graph, in one batch; a graph being built drops the ones
   * it holds (their rows changed) and takes them from the background builder, as every row new since it started.
   */
  syncGraphs(keys: readonly number[]): void {
    if (keys.length === 0 || (!this.index && !this.building)) return;
    if (this.building) for (const k of keys) this.building.remove(k);
    if (!this.index) return;
    const rows = this.copyRows(keys);
    this.index.addMany(rows.keys, rows.vectors);
  }

  /** Marks a held chunk version superseded at `at`; returns whether the key is held. */
  supersede(key: number, at: number): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    if (this.superseded[row] === LIVE) this.supersededCount += 1;
    this.superseded[row] = at;
    return true;
  }

  /** Drops a chunk version; returns whether it was held. */
  remove(key: number): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    this.rowOf.delete(key);
    if (this.superseded[row] !== LIVE) this.supersededCount -= 1;
    const last = this.count - 1;
    if (row !== last) {
      const d = this.dimension;
      this.data.copyWithin(row * d, last * d, last * d + d);
      this.codes.copyWithin(row * d, last * d, last * d + d);
      const movedKey = this.keys[last];
      this.keys[row] = movedKey;
      this.paths[row] = this.paths[last];
      this.superseded[row] = this.superseded[last];
      this.rowOf.set(movedKey, row);
    }
    this.paths.length = last;
    this.count = last;
    if (this.keys.length > INITIAL_ROWS && last < this.keys.length / 4) this.resize(this.keys.length / 2);
    this.index?.remove(key);
    this.building?.remove(key);
    return true;
  }

  /** Scores every visible row exactly and offers the ones that qualify to `heap` (tagged with `tag`). */
  scanExact(filter: PartitionFilter, heap: TopKHeap, tag: number): void {
    const { query, minScore, pathAllowed, pathCache } = filter;
    const cutoff = this.supersededCount === 0 ? Number.NEGATIVE_INFINITY : filter.supersededCutoff;
    const d = this.dimension;
    const data = this.data;
    const n = this.count;
    for (let row = 0; row < n; row++) {
      if (this.superseded[row] < cutoff) continue;
      const score = dotAt(query, data, row * d);
      if (score < minScore || score < heap.floor()) continue;
      if (pathAllowed && !allowedCached(this.paths[row], pathAllowed, pathCache)) continue;
      heap.push(clampScore(score), this.keys[row], tag);
    }
  }

  /**
   * Re-scores one graph candidate exactly from the float32 row and offers it to `heap` when the filter
   * lets it through, counting it in `tally`. Unknown keys (removed since) are ignored.
   */
  offerCandidate(key: number, filter: PartitionFilter, heap: TopKHeap, tag: number, tally: GraphTally): void {
    if (!this.isVisible(key, filter)) return;
    tally.visible += 1;
    this.offerScored(key, filter, heap, tag);
  }

  /** Scores a held, visible key exactly and offers it to `heap` when it reaches the least score. */
  private offerScored(key: number, filter: PartitionFilter, heap: TopKHeap, tag: number): void {
    const score = dotAt(filter.query, this.data, this.rowOf.get(key)! * this.dimension);
    if (score >= filter.minScore) heap.push(clampScore(score), key, tag);
  }

  /**
   * Searches this partition's graph for `fetch` candidates and offers the visible ones to `heap`. When
   * the filters (paths, supersession) let fewer than `need` through, the search is widened in proportion
   * to the share that passed, until it either has `need` visible candidates or would fetch half the
   * partition (an exact scan is then as cheap and sure). Returns false when the graph could not answer
   * for sure: the caller then scans exactly. Nothing is offered to `heap` on a false return.
   */
  searchIndexed(filter: PartitionFilter, heap: TopKHeap, tag: number, fetch: number, need: number): boolean {
    const index = this.index;
    if (!index) return false;
    let k = fetch;
    for (let round = 0; ; round++) {
      const candidates = index.search(filter.query, k);
      const visible = candidates.filter((key) => this.isVisible(key, filter));
      if (graphAnswered({ visible: visible.length }, candidates.length, index.size, need)) {
        for (const key of visible) this.offerScored(key, filter, heap, tag);
        return true;
      }
      const wider = Math.ceil((k * need) / Math.max(1, visible.length));
      if (round >= MAX_WIDENINGS || wider * 2 >= index.size) return false;
      k = Math.max(wider, k * 2);
    }
  }

  /**
   * Scans the int8 codes of every row for the `fetch` best candidates and offers the visible ones to
   * `heap`, re-scored exactly from the float32 rows. The same rule as a graph search settles it (at least
   * `need` visible candidates, else widen in proportion to the share that passed, up to half the
   * partition); returns false, having offered nothing, when the caller must scan exactly instead.
   */
  scanQuantized(filter: PartitionFilter, heap: TopKHeap, tag: number, fetch: number, need: number): boolean {
    const n = this.count;
    let k = Math.min(fetch, n);
    for (let round = 0; ; round++) {
      const rows = int8NearestRows(this.codes, n, filter.queryCodes, this.dimension, k);
      const visible = rows.filter((row) => this.rowVisible(row, filter));
      if (graphAnswered({ visible: visible.length }, rows.length, n, need)) {
        for (const row of visible) this.offerRow(row, filter, heap, tag);
        return true;
      }
      const wider = Math.ceil((k * need) / Math.max(1, visible.length));
      if (round >= MAX_WIDENINGS || wider * 2 >= n) return false;
      k = Math.max(wider, k * 2);
    }
  }

  /** Copies this partition's int8 codes (`size` rows) into `target` from row `atRow` (a pooled scan of small partitions). */
  copyCodesInto(target: Int8Array, atRow: number): void {
    target.set(this.codes.subarray(0, this.count * this.dimension), atRow * this.dimension);
  }

  /** Offers row `row` to `heap`, re-scored exactly, when it passes the filters; returns whether it passed (was visible). */
  offerRowIfVisible(row: number, filter: PartitionFilter, heap: TopKHeap, tag: number): boolean {
    if (!this.rowVisible(row, filter)) return false;
    this.offerRow(row, filter, heap, tag);
    return true;
  }

  /** Scores a visible row exactly and offers it to `heap` when it reaches the least score. */
  private offerRow(row: number, filter: PartitionFilter, heap: TopKHeap, tag: number): void {
    const score = dotAt(filter.query, this.data, row * this.dimension);
    if (score >= filter.minScore) heap.push(clampScore(score), this.keys[row], tag);
  }

  /** Whether the row of `key` is held and passes the supersession and path filters. */
  private isVisible(key: number, filter: PartitionFilter): boolean {
    const row = this.rowOf.get(key);
    return row !== undefined && this.rowVisible(row, filter);
  }

  /** Whether row `row` (held) passes the supersession and path filters. */
  isRowVisible(row: number, filter: PartitionFilter): boolean {
    return this.rowVisible(row, filter);
  }

  /** Whether a held row passes the supersession and path filters. */
  private rowVisible(row: number, filter: PartitionFilter): boolean {
    if (this.superseded[row] < filter.supersededCutoff) return false;
    return !filter.pathAllowed || allowedCached(this.paths[row], filter.pathAllowed, filter.pathCache);
  }

  /** Copies the unit row of `key` into `target` at `offset`; false when the key is not held. */
  copyRowInto(key: number, target: Float32Array, offset: number): boolean {
    const row = this.rowOf.get(key);
    if (row === undefined) return false;
    target.set(this.data.subarray(row * this.dimension, (row + 1) * this.dimension), offset);
    return true;
  }

  private grow(): void {
    this.resize(this.keys.length * 2);
  }

  /** Moves the rows into buffers of `rows` capacity (doubling when full, halving when a quarter full). */
  private resize(rows: number): void {
    const data = new Float32Array(rows * this.dimension);
    data.set(this.data.subarray(0, this.count * this.dimension));
    this.data = data;
    const codes = new Int8Array(rows * this.dimension);
    codes.set(this.codes.subarray(0, this.count * this.dimension));
    this.codes = codes;
    const keys = new Float64Array(rows);
    keys.set(this.keys.subarray(0, this.count));
    this.keys = keys;
    const superseded = new Float64Array(rows);
    superseded.set(this.superseded.subarray(0, this.count));
    this.superseded = superseded;
  }
}

function sameRow(unit: Float32Array, data: Float32Array, offset: number): boolean {
  for (let i = 0; i < unit.length; i++) if (unit[i] !== data[offset + i]) return false;
  return true;
}

function allowedCached(path: string, allowed: (path: string) => boolean, cache: Map<string, boolean>): boolean {
  let ok = cache.get(path);
  if (ok === undefined) {
    ok = allowed(path);
    cache.set(path, ok);
  }
  return ok;
}

/** Float32 rounding can push the dot of two unit vectors a hair past 1. */
function clampScore(score: number): number {
  return score > 1 ? 1 : score;
}
