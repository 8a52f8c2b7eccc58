/**
 * The size of the next slice of work done a slice per event-loop turn, from the last one (`rows` done in
 * `tookMs`): as many rows as fit `budgetMs` at the last cost per row, at least one, at most twice the last
 * size (a cheap slice may have been luck) and at most `max`. For work whose cost per row varies by orders
 * of magnitude with the data and the machine's load (inserts into an HNSW graph: well under 0.1 ms a row
 * on an idle machine, several ms under load), where any fixed slice size either holds the loop for
 * seconds or pays a fixed cost per slice thousands of times.
 */
export function nextSliceSize(size: number, rows: number, tookMs: number, budgetMs: number, max: number): number {
  const fit = tookMs > 0 ? Math.floor((budgetMs * rows) / tookMs) : Number.POSITIVE_INFINITY;
  return Math.max(1, Math.min(fit, size * 2, max));
}
