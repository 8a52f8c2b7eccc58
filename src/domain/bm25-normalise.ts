/**
 * Maps a BM25 relevance `r >= 0` (higher is better; SQLite FTS5's `bm25()` returns `-r`) into [0, 1) as
 * `r / (1 + r)`. The map is strictly increasing, so it keeps the engine's order, and it depends on
 * nothing but `r`: the same chunk scores the same for the same query whatever else the answer holds or
 * whatever `max_results` asked for (unlike dividing by the best score of the answer). Scores are
 * comparable within one query, not across queries. Negative or non-finite inputs count as no relevance.
 * @example normaliseBm25(3) // 0.75
 */
export function normaliseBm25(relevance: number): number {
  if (!Number.isFinite(relevance) || relevance <= 0) return 0;
  return relevance / (1 + relevance);
}
