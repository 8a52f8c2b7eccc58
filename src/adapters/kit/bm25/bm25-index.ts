import { setImmediate as nextTurn } from "node:timers/promises";
import { bm25Term, fts5Idf } from "../../../domain/bm25.js";
import { analyzeKeywords } from "../../../domain/keyword-query.js";
import { formatUkoUri } from "../../../domain/uko-uri.js";
import type { ChunkSnapshot, ChunkText, ChunkTextChanges } from "../../../ports/unit-reader.js";

/** One indexed chunk version. */
export interface IndexedRow {
  chunkKey: number;
  resourceId: string;
  path: string;
  supersededAt: number | null;
  ukoUri: string;
  /** Tokens counted in the row's length (its text's, plus the configured offset). */
  length: number;
  /** The row's distinct terms (to take it out of the postings again). */
  terms: readonly string[];
}

/** How an index is built. */
export interface Bm25IndexOptions {
  /**
   * Tokens added to every row's length. The FTS5 backend's rows hold one resource tag token in a second
   * column, which FTS5 counts in the row length (|D| and avgdl); an offset of 1 reproduces its scores.
   */
  lengthOffset: number;
  /** Chunks analysed between two yields to the event loop while building. */
  sliceSize: number;
  signal?: AbortSignal;
}

/**
 * An in-memory inverted index over chunk texts: term → row slot → positions, with the row lengths BM25
 * needs. Built off to the side in slices (yielding between them, so searches keep being served from the
 * previous index) and swapped in whole; or, for a store that reports its commits (`ChunkTextChanges`),
 * built once and then kept current with `apply`, one commit at a time. Slots of dropped rows stay empty.
 */
export class Bm25Index {
  private readonly rowSlots: Array<IndexedRow | undefined> = [];
  private readonly slotOf = new Map<number, number>();
  private readonly postings = new Map<string, Map<number, number[]>>();
  private totalLength = 0;
  private live = 0;
  /** Rows and summed lengths per resource: the statistics of a view are those of its resources only. */
  private readonly perResource = new Map<string, { rows: number; length: number }>();

  private constructor(
    /** The generation of the store state the index holds. */
    public generation: bigint,
    private readonly lengthOffset: number,
  ) {}

  /** Row slots (indexes of `score`'s results); undefined where a row was dropped. */
  get rows(): ReadonlyArray<IndexedRow | undefined> {
    return this.rowSlots;
  }

  /** Rows held. */
  get size(): number {
    return this.live;
  }

  /** Indexes a snapshot of chunk texts. */
  static async build(snapshot: ChunkSnapshot, opts: Bm25IndexOptions): Promise<Bm25Index> {
    const index = new Bm25Index(snapshot.generation, opts.lengthOffset);
    for (let i = 0; i < snapshot.chunks.length; i++) {
      if (i > 0 && i % opts.sliceSize === 0) {
        await nextTurn();
        opts.signal?.throwIfAborted();
      }
      index.add(snapshot.chunks[i]);
    }
    return index;
  }

  /**
   * Applies one commit of the store, if it is newer than the index (an older one is already held):
   * drops a fully re-indexed resource's rows, supersedes and drops rows, and adds (or replaces) rows.
   */
  apply(changes: ChunkTextChanges): void {
    if (changes.generation <= this.generation) return;
    if (changes.clearResource !== undefined) {
      for (const row of this.rowSlots) if (row && row.resourceId === changes.clearResource) this.drop(row.chunkKey);
    }
    for (const key of changes.superseded) {
      const slot = this.slotOf.get(key);
      if (slot !== undefined) this.rowSlots[slot]!.supersededAt = changes.at;
    }
    for (const key of changes.removed) this.drop(key);
    for (const chunk of changes.added) this.add(chunk);
    this.generation = changes.generation;
  }

  private add(c: ChunkText): void {
    this.drop(c.chunkKey);
    const slot = this.rowSlots.length;
    const terms = analyzeKeywords(c.text);
    terms.forEach((term, pos) => {
      let bySlot = this.postings.get(term);
      if (!bySlot) this.postings.set(term, (bySlot = new Map()));
      let positions = bySlot.get(slot);
      if (!positions) bySlot.set(slot, (positions = []));
      positions.push(pos);
    });
    const length = terms.length + this.lengthOffset;
    this.totalLength += length;
    this.live += 1;
    const stats = this.perResource.get(c.resourceId);
    if (stats) {
      stats.rows += 1;
      stats.length += length;
    } else this.perResource.set(c.resourceId, { rows: 1, length });
    this.slotOf.set(c.chunkKey, slot);
    this.rowSlots.push({
      chunkKey: c.chunkKey,
      resourceId: c.resourceId,
      path: c.path,
      supersededAt: c.supersededAt,
      ukoUri: formatUkoUri(c.resourceId, c.path, c.chunkIndex),
      length,
      terms: [...new Set(terms)],
    });
  }

  private drop(chunkKey: number): void {
    const slot = this.slotOf.get(chunkKey);
    if (slot === undefined) return;
    const row = this.rowSlots[slot]!;
    for (const term of row.terms) {
      const bySlot = this.postings.get(term);
      bySlot?.delete(slot);
      if (bySlot?.size === 0) this.postings.delete(term);
    }
    this.totalLength -= row.length;
    this.live -= 1;
    const stats = this.perResource.get(row.resourceId)!;
    stats.rows -= 1;
    stats.length -= row.length;
    if (stats.rows === 0) this.perResource.delete(row.resourceId);
    this.slotOf.delete(chunkKey);
    this.rowSlots[slot] = undefined;
  }

  /** Rows and summed row lengths of the given resources (every version the index holds of them). */
  statistics(resources: ReadonlySet<string>): { rows: number; length: number } {
    let rows = 0;
    let length = 0;
    for (const id of resources) {
      const stats = this.perResource.get(id);
      if (stats) {
        rows += stats.rows;
        length += stats.length;
      }
    }
    return { rows, length };
  }

  /**
   * Rows per phrase occurrence count, among the rows of `resources` (undefined: every row): phrase →
   * row → count (empty for a phrase no such row holds).
   */
  private phraseCounts(phrase: readonly string[], resources: ReadonlySet<string> | undefined): Map<number, number> {
    const counts = new Map<number, number>();
    if (phrase.length === 0) return counts;
    const first = this.postings.get(phrase[0]);
    if (!first) return counts;
    const rest = phrase.slice(1).map((t) => this.postings.get(t));
    if (rest.some((p) => p === undefined)) return counts;
    for (const [row, positions] of first) {
      if (resources && !resources.has(this.rowSlots[row]!.resourceId)) continue;
      let n = 0;
      if (rest.length === 0) n = positions.length;
      else {
        const later = rest.map((p) => p!.get(row));
        if (later.some((p) => p === undefined)) continue;
        for (const start of positions) {
          if (later.every((p, i) => p!.includes(start + i + 1))) n++;
        }
      }
      if (n > 0) counts.set(row, n);
    }
    return counts;
  }

  /**
   * BM25 scores (FTS5's formula) of the rows of `resources` that hold any phrase and that `accept` lets
   * through. The statistics (row count, average length, each phrase's row count) are those of the rows of
   * `resources` only, every version the index holds of them: what the caller's scope can see, so that no
   * write to another resource moves a score, and a view scores as an index holding only its resources
   * would. When `resources` covers every resource of the index, these are FTS5's whole-table statistics.
   */
  score(
    phrases: readonly (readonly string[])[],
    resources: ReadonlySet<string>,
    accept: (row: IndexedRow) => boolean,
  ): Array<{ row: number; score: number }> {
    const whole = this.perResource.size <= resources.size && [...this.perResource.keys()].every((id) => resources.has(id));
    const stats = whole ? { rows: this.live, length: this.totalLength } : this.statistics(resources);
    const n = stats.rows;
    if (n === 0) return [];
    const avgLength = stats.length / n;
    const within = whole ? undefined : resources;
    const counts = phrases.map((p) => this.phraseCounts(p, within));
    const idfs = counts.map((c) => fts5Idf(n, c.size));
    const candidates = new Set<number>();
    for (const c of counts)
      for (const row of c.keys()) if (resources.has(this.rowSlots[row]!.resourceId) && accept(this.rowSlots[row]!)) candidates.add(row);
    const out: Array<{ row: number; score: number }> = [];
    for (const row of candidates) {
      const length = this.rowSlots[row]!.length;
      let score = 0;
      for (let i = 0; i < counts.length; i++) {
        score += bm25Term(counts[i].get(row) ?? 0, idfs[i], length, avgLength);
      }
      out.push({ row, score });
    }
    return out;
  }
}
