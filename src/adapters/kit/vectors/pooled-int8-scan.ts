import { int8NearestRows } from "./int8-nearest-rows.js";
import type { TopKHeap } from "./top-k-heap.js";
import { graphAnswered, type PartitionFilter, type VectorPartition } from "./vector-partition.js";

/**
 * The most rows one pooled scan copies and scans (6 MB of codes at 384 dimensions): a scope's small
 * partitions past it are pooled in several batches, each its own scan, so the buffer stays small.
 */
export const POOL_BATCH_ROWS = 16_384;

/** How much wider a pooled scan whose filters let too few candidates through may grow (as a partition's int8 scan). */
const MAX_WIDENINGS = 3;

/** The codes buffer the pooled scans share (a search runs one at a time on this thread, synchronously). */
let pool = new Int8Array(0);

/** A small partition of the scope and its tag (its position in the scope's list). */
export interface PooledPart {
  partition: VectorPartition;
  tag: number;
}

/**
 * Scans the int8 codes of several small partitions as one (their codes copied back to back into a shared
 * buffer, one native scan instead of one per partition: a scan of 100 partitions of 100 rows cost 3.4 ms
 * one by one and 1.1 ms pooled, plus 0.3 ms of copying) for the `fetch` best candidates, and offers the
 * visible ones to `heap`, re-scored exactly from the float32 rows. Settled by the same rule as a partition's
 * int8 scan (at least `need` visible candidates, else widened in proportion to the share that passed, up to
 * half the rows); returns "exact" when every row was re-scored (the answer is exact), "approximate" when the
 * int8 order chose the candidates, and "unsettled" (nothing offered) when the caller must scan exactly.
 */
export function scanPooled(
  parts: readonly PooledPart[],
  filter: PartitionFilter,
  heap: TopKHeap,
  fetch: number,
  need: number,
): "exact" | "approximate" | "unsettled" {
  const d = filter.query.length;
  let rows = 0;
  for (const { partition } of parts) rows += partition.size;
  if (rows === 0) return "exact";
  if (pool.length < rows * d) pool = new Int8Array(rows * d);
  // Where each partition's rows start in the pool, for mapping a pooled row back to its partition.
  const starts = new Int32Array(parts.length + 1);
  for (let i = 0; i < parts.length; i++) {
    parts[i].partition.copyCodesInto(pool, starts[i]);
    starts[i + 1] = starts[i] + parts[i].partition.size;
  }
  let k = Math.min(fetch, rows);
  for (let round = 0; ; round++) {
    const found = int8NearestRows(pool, rows, filter.queryCodes, d, k);
    // The candidates grouped back to their partitions by binary search over the starts.
    const owners = found.map((row) => ownerOf(starts, row));
    let visible = 0;
    const pass: boolean[] = found.map((row, i) => {
      const o = owners[i];
      const ok = parts[o].partition.isRowVisible(row - starts[o], filter);
      if (ok) visible += 1;
      return ok;
    });
    if (graphAnswered({ visible }, found.length, rows, need)) {
      for (let i = 0; i < found.length; i++) {
        if (!pass[i]) continue;
        const o = owners[i];
        parts[o].partition.offerRowIfVisible(found[i] - starts[o], filter, heap, parts[o].tag);
      }
      return found.length >= rows ? "exact" : "approximate";
    }
    const wider = Math.ceil((k * need) / Math.max(1, visible));
    if (round >= MAX_WIDENINGS || wider * 2 >= rows) return "unsettled";
    k = Math.max(wider, k * 2);
  }
}

/** The index of the partition whose rows hold pooled row `row` (`starts` ascending, its last entry the total). */
function ownerOf(starts: Int32Array, row: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
