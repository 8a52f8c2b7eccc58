import { readFileSync, renameSync, writeFileSync } from "node:fs";
import usearch, { type BatchMatches, type Matches } from "usearch";
import { quantizeRow } from "./int8-nearest-rows.js";
import { copyStoreRows } from "./store-graph.js";
import type { VectorPartition } from "./vector-partition.js";

/** How many k-means passes over the training sample. */
const KMEANS_ITERATIONS = 8;

/** Training sample rows per cell (FAISS asks for at least 39; more only slows the training). */
const SAMPLE_ROWS_PER_CELL = 64;

/** Rows placed per batch (one native call to find their cells). */
const ROWS_PER_STEP = 256;

/** Multiply-adds one step of the background work may take (a few milliseconds on one core). */
const STEP_WORK = 8_000_000;

/** Rows copied per step while taking the training sample (a few MB of float32). */
const SAMPLE_ROWS_PER_STEP = 2048;

/** The layout of a saved centroids file: [format, dimension, cells, trained rows] as float64, then the centroids as float32. */
const CENTROIDS_FORMAT = 1;
const CENTROIDS_HEADER_BYTES = 32;

/** Centroids trained before (saved by `saveCentroids`), and how many rows they were trained on. */
export interface SavedCentroids {
  centroids: Float32Array;
  trainedRows: number;
}

/** Positions are packed with their cell into one number: cell * POSITION_SPAN + row. */
const POSITION_SPAN = 2 ** 26;

/**
 * One cell: the int8 codes of its rows back to back (a buffer of its own, as usearch reads from offset 0),
 * their keys, and the ordinal of each row's partition (a scope's rows are picked by it without a lookup).
 */
interface Cell {
  codes: Int8Array;
  keys: Float64Array;
  owners: Float64Array;
  count: number;
}

/** How many cells for a store of `rows` rows: about its square root (the usual choice for an inverted-file index). */
export function cellCountFor(rows: number): number {
  return Math.max(8, Math.min(4096, Math.round(Math.sqrt(rows))));
}

/** How many of `cells` cells a search reads: 8, or a fortieth of the cells when that is more. */
export function probesFor(cells: number): number {
  return Math.min(cells, Math.max(8, Math.ceil(cells / 40)));
}

/** A candidate of a cell search: a chunk key and its int8 distance to the query (smaller is nearer). */
export interface CellCandidate {
  key: number;
  distance: number;
}

/**
 * An inverted-file index over every vector of the store: k-means centroids (trained on a sample of the
 * rows) split the store into cells of nearby rows, each holding its rows' int8 codes contiguously. A search
 * reads the cells of the few centroids nearest the query (`probesFor`) and scans them in usearch's int8
 * kernels. Unlike a graph, what it reads does not depend on the scope: a scope holding few rows near the
 * query (a query about something its resources barely cover) costs the same as any other, where a graph
 * search filtered by scope must widen again and again. Rows stay in the partitions; candidates are
 * re-scored from their float32 rows and filtered by scope by the caller.
 *
 * Built in the background (`buildSteps`): training, then assigning every row, a step per event-loop turn;
 * writes made meanwhile are applied at once (`sync`, `remove`), and the build skips rows already placed.
 */
export class StoreCells {
  /** Set once every row held at the start of the build is placed: searches may use it from then on. */
  ready = false;
  /** Set when the backend lets this index go (a newer one replaces it): a running build stops. */
  detached = false;
  /** How many rows the centroids were trained on (the backend retrains once the store has doubled). */
  trainedRows = 0;
  private centroids: Float32Array | null = null;
  private cells: Cell[] = [];
  /** Where each placed key is: cell * POSITION_SPAN + row. */
  private readonly where = new Map<number, number>();

  constructor(
    private readonly partitionOfKey: ReadonlyMap<number, VectorPartition>,
    readonly dimension: number,
  ) {}

  /** How many cells (0 until trained). */
  get cellCount(): number {
    return this.cells.length;
  }

  /** How many rows are placed in cells. */
  get placed(): number {
    return this.where.size;
  }

  /** Puts the current rows of `keys` into their nearest cells (replacing a key's earlier row); nothing before training. */
  sync(keys: readonly number[]): void {
    if (!this.centroids || keys.length === 0) return;
    for (let i = 0; i < keys.length; i += ROWS_PER_STEP) this.place(this.copyRows(keys.slice(i, i + ROWS_PER_STEP)));
  }

  /** Drops `key` from its cell. */
  remove(key: number): void {
    const at = this.where.get(key);
    if (at === undefined) return;
    this.where.delete(key);
    const cell = this.cells[Math.floor(at / POSITION_SPAN)];
    const row = at % POSITION_SPAN;
    const last = cell.count - 1;
    if (row !== last) {
      const d = this.dimension;
      cell.codes.copyWithin(row * d, last * d, last * d + d);
      const moved = cell.keys[last];
      cell.keys[row] = moved;
      cell.owners[row] = cell.owners[last];
      this.where.set(moved, at);
    }
    cell.count = last;
  }

  /** Whether this index trained its centroids (false when it took saved ones). */
  trained = false;

  /**
   * The background build, one bounded step per call of the generator (the caller yields to the event loop
   * between steps and stops when `detached`): k-means over a sample of the rows held now (or `saved`
   * centroids), then every row held now placed in its cell. Rows written meanwhile are placed by `sync` as
   * soon as centroids exist.
   */
  *buildSteps(saved?: SavedCentroids): Generator<void, void, void> {
    const d = this.dimension;
    if (saved) {
      if (this.detached) return;
      this.startPlacing(saved.centroids, saved.trainedRows);
    } else {
      const keys = Array.from(this.partitionOfKey.keys());
      let centroids: Float32Array | undefined;
      for (const step of this.trainSteps(keys)) {
        if (step) centroids = step;
        else yield;
      }
      if (!centroids || this.detached) return;
      this.trained = true;
      this.startPlacing(centroids, keys.length);
    }
    // Every row held now (writes from here on are placed by sync): rows written while training are in it.
    const all = Array.from(this.partitionOfKey.keys());
    const rowsPerStep = Math.max(8, Math.floor(STEP_WORK / (this.cells.length * d)));
    yield;
    for (let from = 0; from < all.length; from += rowsPerStep) {
      if (this.detached) return;
      const slice = all.slice(from, from + rowsPerStep).filter((k) => !this.where.has(k));
      this.place(this.copyRows(slice));
      yield;
    }
    this.ready = true;
  }

  /** Takes `centroids` (trained on `trainedRows` rows), with empty cells: from here on writes are placed. */
  private startPlacing(centroids: Float32Array, trainedRows: number): void {
    const d = this.dimension;
    this.centroids = centroids;
    this.trainedRows = trainedRows;
    this.cells = Array.from({ length: centroids.length / d }, () => ({
      codes: new Int8Array(16 * d),
      keys: new Float64Array(16),
      owners: new Float64Array(16),
      count: 0,
    }));
  }

  /** Writes the centroids to `path` (through a temp file and a rename), so a restart need not train them again. */
  saveCentroids(path: string): void {
    const centroids = this.centroids;
    if (!centroids) return;
    const header = Float64Array.of(CENTROIDS_FORMAT, this.dimension, this.cells.length, this.trainedRows);
    writeFileSync(
      `${path}.tmp`,
      Buffer.concat([Buffer.from(header.buffer), Buffer.from(centroids.buffer, centroids.byteOffset, centroids.byteLength)]),
    );
    renameSync(`${path}.tmp`, path);
  }

  /** The centroids saved at `path` for this dimension; undefined when missing, of another layout or dimension, or damaged. */
  static loadCentroids(path: string, dimension: number): SavedCentroids | undefined {
    try {
      const raw = readFileSync(path);
      if (raw.length < CENTROIDS_HEADER_BYTES) return undefined;
      const header = new Float64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + CENTROIDS_HEADER_BYTES));
      const [format, dim, cells, trainedRows] = header;
      if (format !== CENTROIDS_FORMAT || dim !== dimension || !Number.isInteger(cells) || cells < 1 || !(trainedRows >= cells))
        return undefined;
      if (raw.length !== CENTROIDS_HEADER_BYTES + cells * dimension * 4) return undefined;
      const centroids = new Float32Array(raw.buffer.slice(raw.byteOffset + CENTROIDS_HEADER_BYTES, raw.byteOffset + raw.length));
      if (!centroids.every(Number.isFinite)) return undefined;
      return { centroids, trainedRows };
    } catch {
      return undefined;
    }
  }

  /**
   * k-means over a sample of `keys`' rows, a bounded step per yield of undefined; yields the centroids last
   * (nothing when there are too few rows for the cells).
   */
  private *trainSteps(keys: readonly number[]): Generator<Float32Array | undefined, void, void> {
    const cellCount = cellCountFor(keys.length);
    const sampleSize = Math.min(keys.length, cellCount * SAMPLE_ROWS_PER_CELL);
    const stride = keys.length / sampleSize;
    const sampleKeys = Array.from({ length: sampleSize }, (_, i) => keys[Math.floor(i * stride)]);
    const d = this.dimension;
    const parts: Float32Array[] = [];
    let rows = 0;
    for (let from = 0; from < sampleKeys.length; from += SAMPLE_ROWS_PER_STEP) {
      yield;
      const part = this.copyRows(sampleKeys.slice(from, from + SAMPLE_ROWS_PER_STEP)).vectors;
      parts.push(part);
      rows += part.length / d;
    }
    if (rows < cellCount) return;
    const sample = { vectors: new Float32Array(rows * d) };
    let offset = 0;
    for (const part of parts) {
      sample.vectors.set(part, offset);
      offset += part.length;
    }
    const rowsPerStep = Math.max(8, Math.floor(STEP_WORK / (cellCount * d)));
    // Seeds spread over the sample (keys come grouped by resource, so spread means varied).
    const centroids = new Float32Array(cellCount * d);
    for (let c = 0; c < cellCount; c++) {
      const r = Math.floor((c * rows) / cellCount);
      centroids.set(sample.vectors.subarray(r * d, r * d + d), c * d);
    }
    for (let pass = 0; pass < KMEANS_ITERATIONS; pass++) {
      const sums = new Float64Array(cellCount * d);
      const counts = new Int32Array(cellCount);
      for (let from = 0; from < rows; from += rowsPerStep) {
        const to = Math.min(rows, from + rowsPerStep);
        const batch = sample.vectors.slice(from * d, to * d);
        const nearest = nearestCentroids(centroids, batch, d);
        for (let i = 0; i < nearest.length; i++) {
          const c = nearest[i];
          counts[c] += 1;
          const base = c * d;
          const row = i * d;
          for (let j = 0; j < d; j++) sums[base + j] += batch[row + j];
        }
        yield;
      }
      // Spherical k-means: each centroid the normalised mean of its rows; an empty cell keeps its centroid.
      for (let c = 0; c < cellCount; c++) {
        if (counts[c] === 0) continue;
        let norm = 0;
        for (let j = 0; j < d; j++) norm += sums[c * d + j] ** 2;
        norm = Math.sqrt(norm);
        if (norm === 0) continue;
        for (let j = 0; j < d; j++) centroids[c * d + j] = sums[c * d + j] / norm;
      }
    }
    yield centroids;
  }

  /**
   * Up to `wanted` candidates from each of the `probes` cells nearest `query` (a unit vector; `queryCodes`
   * its int8 codes, in a buffer of their own), among the rows of the partitions whose ordinals are in
   * `owners` (every row when undefined; `share`: the part of the store they hold), nearest first over all of
   * them. A cell's in-scope rows are copied aside and scanned together, so a query near rows the scope
   * barely holds finds them however far down the whole cell's ranking they are; a scope holding most of the
   * store first takes its rows among the cell's nearest.
   */
  search(
    query: Float32Array,
    queryCodes: Int8Array,
    probes: number,
    wanted: number,
    owners: ReadonlySet<number> | undefined,
    share = 1,
  ): CellCandidate[] {
    const centroids = this.centroids;
    if (!centroids || this.cells.length === 0) return [];
    const d = this.dimension;
    const nearest = usearch.exactSearch(centroids, query, d, Math.min(probes, this.cells.length), usearch.MetricKind.IP, 1) as Matches;
    const out: CellCandidate[] = [];
    for (const c of nearest.keys) {
      const cell = this.cells[Number(c)];
      if (cell.count === 0) continue;
      if (owners === undefined) {
        this.scanInto(out, cell.codes, cell.keys, cell.count, queryCodes, wanted);
        continue;
      }
      // A scope holding most of the store: its share of the cell's nearest rows is usually enough.
      if (share >= 0.5) {
        const k = Math.min(cell.count, Math.ceil((2 * wanted) / share));
        const found = usearch.exactSearch(cell.codes.subarray(0, cell.count * d), queryCodes, d, k, usearch.MetricKind.IP, 1) as Matches;
        const taken: CellCandidate[] = [];
        for (let i = 0; i < found.keys.length && taken.length < wanted; i++) {
          const row = Number(found.keys[i]);
          if (owners.has(cell.owners[row])) taken.push({ key: cell.keys[row], distance: found.distances[i] });
        }
        if (taken.length >= wanted || k === cell.count) {
          for (const t of taken) out.push(t);
          continue;
        }
      }
      // Else the scope's rows of the cell, copied aside and scanned together; a partition's rows mostly sit
      // side by side in a cell (the build places them partition by partition), so they are copied by runs.
      const codes = this.scratchCodes(cell.count);
      const keys = new Float64Array(cell.count);
      let n = 0;
      for (let r = 0; r < cell.count;) {
        if (!owners.has(cell.owners[r])) {
          r += 1;
          continue;
        }
        const owner = cell.owners[r];
        let end = r + 1;
        while (end < cell.count && (cell.owners[end] === owner || owners.has(cell.owners[end]))) end += 1;
        codes.set(cell.codes.subarray(r * d, end * d), n * d);
        keys.set(cell.keys.subarray(r, end), n);
        n += end - r;
        r = end;
      }
      if (n === cell.count) this.scanInto(out, cell.codes, cell.keys, cell.count, queryCodes, wanted);
      else this.scanInto(out, codes, keys, n, queryCodes, wanted);
    }
    return out.sort((a, b) => a.distance - b.distance);
  }

  /** Appends the `wanted` rows nearest `queryCodes` among the first `n` of `codes` (keys alongside) to `out`. */
  private scanInto(out: CellCandidate[], codes: Int8Array, keys: Float64Array, n: number, queryCodes: Int8Array, wanted: number): void {
    const k = Math.min(wanted, n);
    if (k <= 0) return;
    const found = usearch.exactSearch(
      codes.subarray(0, n * this.dimension),
      queryCodes,
      this.dimension,
      k,
      usearch.MetricKind.IP,
      1,
    ) as Matches;
    for (let i = 0; i < found.keys.length; i++) out.push({ key: keys[Number(found.keys[i])], distance: found.distances[i] });
  }

  private scratch = new Int8Array(0);

  /** A buffer of its own (usearch reads from offset 0) for `rows` codes, reused between searches. */
  private scratchCodes(rows: number): Int8Array {
    if (this.scratch.length < rows * this.dimension) this.scratch = new Int8Array(Math.max(rows, 1024) * this.dimension * 2);
    return this.scratch;
  }

  /** The unit rows of `keys` still held, from their partitions. */
  private copyRows(keys: readonly number[]): { keys: number[]; vectors: Float32Array; owners: number[] } {
    return copyStoreRows(this.partitionOfKey, keys, this.dimension);
  }

  /** Places rows (a batch from copyRows) in their nearest cells, each replacing the key's earlier row. */
  private place(rows: { keys: number[]; vectors: Float32Array; owners: number[] }): void {
    if (!this.centroids || rows.keys.length === 0) return;
    const d = this.dimension;
    const nearest = nearestCentroids(this.centroids, rows.vectors, d);
    for (let i = 0; i < rows.keys.length; i++) {
      const key = rows.keys[i];
      this.remove(key);
      const cellIndex = nearest[i];
      const cell = this.cells[cellIndex];
      if (cell.count === cell.keys.length) grow(cell, d);
      quantizeRow(rows.vectors, i * d, cell.codes, cell.count * d, d);
      cell.keys[cell.count] = key;
      cell.owners[cell.count] = rows.owners[i];
      this.where.set(key, cellIndex * POSITION_SPAN + cell.count);
      cell.count += 1;
    }
  }
}

/** The nearest centroid of each row of `rows` (unit rows back to back, in a buffer of their own). */
function nearestCentroids(centroids: Float32Array, rows: Float32Array, d: number): Int32Array {
  const n = rows.length / d;
  const out = new Int32Array(n);
  if (n === 0) return out;
  const found = usearch.exactSearch(centroids, rows, d, 1, usearch.MetricKind.IP, 1) as Matches | BatchMatches;
  for (let i = 0; i < n; i++) out[i] = Number(found.keys[i]);
  return out;
}

function grow(cell: Cell, d: number): void {
  const capacity = cell.keys.length * 2;
  const codes = new Int8Array(capacity * d);
  codes.set(cell.codes.subarray(0, cell.count * d));
  const keys = new Float64Array(capacity);
  keys.set(cell.keys.subarray(0, cell.count));
  const owners = new Float64Array(capacity);
  owners.set(cell.owners.subarray(0, cell.count));
  cell.codes = codes;
  cell.keys = keys;
  cell.owners = owners;
}
