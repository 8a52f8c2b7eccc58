import type { TemporalScope } from "./scope.js";

/**
 * Whether a document version superseded at `supersededAt` (null while live) is visible under a temporal
 * scope: `current` sees live versions only, `recent` also versions superseded within `windowMs` before
 * `now`, `all` every retained version.
 */
export function isVersionVisible(temporal: TemporalScope, supersededAt: number | null, now: number, windowMs: number): boolean {
  if (supersededAt === null) return true;
  if (temporal === "all") return true;
  if (temporal === "recent") return supersededAt >= now - windowMs;
  return false;
}

/** The earliest supersession time still visible, or undefined when every version is (`all`), or Infinity (`current`). */
export function supersededCutoff(temporal: TemporalScope, now: number, windowMs: number): number | undefined {
  if (temporal === "all") return undefined;
  if (temporal === "recent") return now - windowMs;
  return Number.POSITIVE_INFINITY;
}
