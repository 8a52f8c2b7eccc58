import { setImmediate as nextTurn } from "node:timers/promises";
import { bm25Term, fts5Idf } from "../../domain/bm25.js";
import { analyzeKeywords } from "../../domain/keyword-query.js";
import { formatUkoUri } from "../../domain/uko-uri.js";
import type { ChunkSnapshot } from "../../ports/unit-reader.js";

/** One indexed chunk version. */
export interface IndexedRow {
  chunkKey: number;
  resourceId: string;
  path: string;
  supersededAt: number | null;
  ukoUri: string;
  /** Tokens counted in the row's length (its text's, plus the configured offset). */
  length: number;
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
 * An immutable in-memory inverted index over one generation of chunk texts: term → row → positions,
 * with the row lengths BM25 needs. Built off to the side in slices (yielding between them, so searches
 * keep being served from the previous index) and swapped in whole.
 */
export class Bm25Index {
  private constructor(
    readonly generation: bigint,
    readonly rows: readonly IndexedRow[],
    private readonly postings: ReadonlyMap<string, ReadonlyMap<number, readonly number[]>>,
    private readonly totalLength: number,
  ) {}

  /** Indexes a snapshot of chunk texts. */
  static async build(snapshot: ChunkSnapshot, opts: Bm25IndexOptions): Promise<Bm25Index> {
    const rows: IndexedRow[] = new Array(snapshot.chunks.length);
    const postings = new Map<string, Map<number, number[]>>();
    let totalLength = 0;
    for (let i = 0; i < snapshot.chunks.length; i++) {
      if (i > 0 && i % opts.sliceSize === 0) {
        await nextTurn();
        opts.signal?.throwIfAborted();
      }
      const c = snapshot.chunks[i];
      const terms = analyzeKeywords(c.text);
      terms.forEach((term, pos) => {
        let byRow = postings.get(term);
        if (!byRow) postings.set(term, (byRow = new Map()));
        let positions = byRow.get(i);
        if (!positions) byRow.set(i, (positions = []));
        positions.push(pos);
      });
      const length = terms.length + opts.lengthOffset;
      totalLength += length;
      rows[i] = {
        chunkKey: c.chunkKey,
        resourceId: c.resourceId,
        path: c.path,
        supersededAt: c.supersededAt,
        ukoUri: formatUkoUri(c.resourceId, c.path, c.chunkIndex),
        length,
      };
    }
    return new Bm25Index(snapshot.generation, rows, postings, totalLength);
  }

  /** Rows per phrase occurrence count: phrase → row → count (empty for a phrase no row holds). */
  private phraseCounts(phrase: readonly string[]): Map<number, number> {
    const counts = new Map<number, number>();
    if (phrase.length === 0) return counts;
    const first = this.postings.get(phrase[0]);
    if (!first) return counts;
    const rest = phrase.slice(1).map((t) => this.postings.get(t));
    if (rest.some((p) => p === undefined)) return counts;
    for (const [row, positions] of first) {
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
   * BM25 scores (FTS5's formula and statistics: IDF and average length over every row of the index) of
   * the rows that hold any phrase and that `accept` lets through.
   */
  score(phrases: readonly (readonly string[])[], accept: (row: IndexedRow) => boolean): Array<{ row: number; score: number }> {
    const n = this.rows.length;
    if (n === 0) return [];
    const avgLength = this.totalLength / n;
    const counts = phrases.map((p) => this.phraseCounts(p));
    const idfs = counts.map((c) => fts5Idf(n, c.size));
    const candidates = new Set<number>();
    for (const c of counts) for (const row of c.keys()) if (accept(this.rows[row])) candidates.add(row);
    const out: Array<{ row: number; score: number }> = [];
    for (const row of candidates) {
      const length = this.rows[row].length;
      let score = 0;
      for (let i = 0; i < counts.length; i++) {
        score += bm25Term(counts[i].get(row) ?? 0, idfs[i], length, avgLength);
      }
      out.push({ row, score });
    }
    return out;
  }
}
