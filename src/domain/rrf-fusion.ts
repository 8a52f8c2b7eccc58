/**
 * Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, 2009), as a pure function.
 *
 * Each source contributes `weight / (k + rank)` for every unit it found, with ranks starting at 1 (the
 * best unit of a source has rank 1). The fused score of a unit is the sum of its terms, normalised by the
 * largest sum any unit could reach from the lists fused, `Σ weight / (k + 1)` over the sources that
 * answered, so it lies in [0, 1] as every score on the wire does, and 1 means "ranked first by every source
 * that answered". A source answered when its list holds at least one unit: an empty list (asked, found
 * nothing) or a failed source (not fused at all) adds nothing any unit could reach, so it does not count in
 * the maximum either; otherwise a keyword-only answer beside an empty graph source would cap at 0.5.
 *
 * Defaults: `k = 60` (the paper's value), weight 1 per source. Order: fused score descending, ties by key
 * ascending (the key is the unit's UKO URI), so the answer is deterministic. `minScore` and `topK` apply
 * after fusion, to the normalised score.
 */

/** One unit in one source's ranked list. */
export interface RankedItem<P> {
  /** The unit's identity across sources (its UKO URI). */
  key: string;
  /** The source's own score for the unit (reported, not used by fusion). */
  score: number;
  /**
   * The unit's rank in its source, from 1. Absent: its position in the list plus one. Items that share a
   * rank (e.g. several chunks standing for one document) must be adjacent; ranks never decrease.
   */
  rank?: number;
  /** What the caller needs to answer with the unit (content, metadata, ...). */
  payload: P;
}

/** One source's answer, best first. */
export interface RankedList<S, P> {
  source: S;
  items: readonly RankedItem<P>[];
}

/** How to fuse; every field but `k` has a neutral default. */
export interface FusionOptions<S> {
  /** The RRF constant (> 0); 60 is the customary default. */
  k: number;
  /** Per-source weights (>= 0, finite); a source not named weighs 1. */
  weights?: ReadonlyMap<S, number>;
  /** At most this many fused units (default: all). */
  topK?: number;
  /** Drop fused units whose normalised score is below this (default 0). */
  minScore?: number;
}

/** A source's evidence for a fused unit. */
export interface Contribution<S> {
  source: S;
  /** The unit's rank in that source, from 1. */
  rank: number;
  /** The source's own score. */
  score: number;
}

/** One fused unit. */
export interface FusedItem<S, P> {
  key: string;
  /** The normalised fused score, in [0, 1]. */
  score: number;
  /** The raw RRF sum, before normalisation. */
  rawScore: number;
  /** Every source that found the unit, in the order the lists were given. */
  contributions: Contribution<S>[];
  /** The payload of the unit's best-ranked occurrence (ties: the earlier list). */
  payload: P;
}

/** The fused answer. */
export interface FusionResult<S, P> {
  items: FusedItem<S, P>[];
  /** How many fused units passed `minScore` before `topK` cut the list. */
  candidates: number;
}

/** The default RRF constant. */
export const DEFAULT_RRF_K = 60;

interface Accumulator<S, P> {
  key: string;
  terms: number[];
  contributions: Contribution<S>[];
  payload: P;
  bestRank: number;
}

/**
 * Fuses ranked lists with Reciprocal Rank Fusion. Within a list, a key seen again is ignored (its first,
 * best-ranked occurrence counts).
 * @example
 * fuseRrf([{ source: "text", items: [{ key: "a", score: 0.9, payload: 1 }] },
 *          { source: "vector", items: [{ key: "a", score: 0.8, payload: 1 }] }], { k: 60 })
 * // → [{ key: "a", score: 1, rawScore: 2/61, contributions: [text rank 1, vector rank 1], payload: 1 }]
 */
export function fuseRrf<S, P>(lists: readonly RankedList<S, P>[], opts: FusionOptions<S>): FusionResult<S, P> {
  const k = opts.k;
  if (!Number.isFinite(k) || k <= 0) throw new RangeError(`RRF k must be a positive number, got ${k}`);
  const weightOf = (s: S): number => {
    const w = opts.weights?.get(s) ?? 1;
    if (!Number.isFinite(w) || w < 0) throw new RangeError(`RRF weight must be a finite number >= 0, got ${w}`);
    return w;
  };
  const byKey = new Map<string, Accumulator<S, P>>();
  let maxSum = 0;
  for (const list of lists) {
    const weight = weightOf(list.source);
    if (list.items.length > 0) maxSum += weight / (k + 1);
    const seen = new Set<string>();
    let previousRank = 0;
    list.items.forEach((item, position) => {
      const rank = item.rank ?? position + 1;
      if (!Number.isInteger(rank) || rank < 1 || rank < previousRank) {
        throw new RangeError(`ranks must be integers from 1, never decreasing: got ${rank} after ${previousRank}`);
      }
      previousRank = rank;
      if (seen.has(item.key)) return;
      seen.add(item.key);
      let acc = byKey.get(item.key);
      if (!acc) {
        acc = { key: item.key, terms: [], contributions: [], payload: item.payload, bestRank: rank };
        byKey.set(item.key, acc);
      } else if (rank < acc.bestRank) {
        acc.payload = item.payload;
        acc.bestRank = rank;
      }
      acc.terms.push(weight / (k + rank));
      acc.contributions.push({ source: list.source, rank, score: item.score });
    });
  }
  const minScore = opts.minScore ?? 0;
  const fused: FusedItem<S, P>[] = [];
  for (const acc of byKey.values()) {
    // Summing in a canonical order makes equal evidence give bit-identical sums, so ties are real ties.
    acc.terms.sort((a, b) => b - a);
    let raw = 0;
    for (const t of acc.terms) raw += t;
    const score = maxSum > 0 ? Math.min(1, raw / maxSum) : 0;
    if (score < minScore) continue;
    fused.push({ key: acc.key, score, rawScore: raw, contributions: acc.contributions, payload: acc.payload });
  }
  fused.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const candidates = fused.length;
  const items = opts.topK === undefined ? fused : fused.slice(0, opts.topK);
  return { items, candidates };
}
