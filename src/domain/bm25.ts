/**
 * Okapi BM25 exactly as SQLite FTS5's `bm25()` computes it, so an in-memory index ranks like an FTS5
 * table: `score(D) = Σ_phrases idf · f·(k1 + 1) / (f + k1·(1 − b + b·|D| / avgdl))`, where `f` is the
 * phrase's (column-weighted) count in D, `|D|` the row's token count over every column, and `avgdl` the
 * table's tokens per row. Parameters and IDF are FTS5's: k1 = 1.2, b = 0.75,
 * `idf = ln((N − n + 0.5) / (n + 0.5))` over all N rows of the table (n rows hold the phrase), floored at
 * 1e-6 so a phrase in more than half of the rows still counts a little instead of counting against.
 */

/** BM25's free parameters. */
export interface Bm25Params {
  k1: number;
  b: number;
}

/** FTS5's fixed parameters. */
export const FTS5_BM25: Bm25Params = { k1: 1.2, b: 0.75 };

/** The smallest IDF FTS5 allows. */
export const FTS5_MIN_IDF = 1e-6;

/**
 * FTS5's IDF of a phrase held by `rowsWithPhrase` of `rowCount` rows.
 * @example fts5Idf(100, 1) // ln(99.5 / 1.5) ≈ 4.19
 */
export function fts5Idf(rowCount: number, rowsWithPhrase: number): number {
  const idf = Math.log((rowCount - rowsWithPhrase + 0.5) / (rowsWithPhrase + 0.5));
  return idf <= 0 ? FTS5_MIN_IDF : idf;
}

/**
 * One phrase's BM25 term for one row; a row's score is the sum of its phrases' terms, added in query
 * order (as FTS5 adds them, so equal inputs give bit-identical scores).
 */
export function bm25Term(freq: number, idf: number, docLength: number, avgDocLength: number, p: Bm25Params = FTS5_BM25): number {
  return idf * ((freq * (p.k1 + 1.0)) / (freq + p.k1 * (1 - p.b + (p.b * docLength) / avgDocLength)));
}
