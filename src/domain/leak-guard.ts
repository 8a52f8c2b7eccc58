import type { ScopedBackendView } from "./scoped-backend-view.js";

/** Counts results that an adapter returned outside the view and the guard dropped. */
export interface LeakCounter {
  prevented: number;
}

/** The process-wide count of prevented leaks; tests assert it never moves. */
export const preventedLeaks: LeakCounter = { prevented: 0 };

/**
 * The last check on the way out: keeps only results whose resource (and path, when it has one) the view
 * allows. A dropped result means an adapter let something through that it should not have: it is
 * counted and logged, and never reaches the caller.
 */
export function guardResults<T extends { resourceId: string; path?: string }>(
  view: ScopedBackendView,
  results: readonly T[],
  source: string,
  counter: LeakCounter = preventedLeaks,
): T[] {
  const kept: T[] = [];
  for (const r of results) {
    if (view.allows(r.resourceId, r.path === "" ? undefined : r.path)) kept.push(r);
    else {
      counter.prevented += 1;
      process.stderr.write(`acms: prevented leak: ${source} returned ${r.resourceId}/${r.path ?? ""} outside scope ${view.scopeId}\n`);
    }
  }
  return kept;
}
