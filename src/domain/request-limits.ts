import { InvalidArgumentError } from "./errors.js";

/**
 * Resolves a proto3 `optional` count (max_results, top_k, rrf_k): absent means `fallback`; present must be
 * in 1..cap, else INVALID_ARGUMENT naming the field.
 */
export function resolveCount(field: string, value: number | undefined, fallback: number, cap: number): number {
  if (value === undefined) return Math.min(fallback, cap);
  if (!Number.isInteger(value) || value <= 0) throw InvalidArgumentError.field(field, `must be greater than 0, got ${value}`);
  if (value > cap) throw InvalidArgumentError.field(field, `must be at most ${cap}, got ${value}`);
  return value;
}

/** The deepest Traverse accepted. */
export const MAX_DEPTH = 8;

/** Resolves an optional traversal depth: absent means `fallback`; present must be in 0..MAX_DEPTH. */
export function resolveDepth(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) throw InvalidArgumentError.field(field, `must be 0 or more, got ${value}`);
  if (value > MAX_DEPTH) throw InvalidArgumentError.field(field, `must be at most ${MAX_DEPTH}, got ${value}`);
  return value;
}

/** Resolves an optional min_score: absent means 0; present must be a finite number in [0, 1]. */
export function resolveMinScore(field: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw InvalidArgumentError.field(field, `must be a number in [0, 1], got ${value}`);
  }
  return value;
}

/** The longest query text accepted, in characters. */
export const MAX_QUERY_LENGTH = 16 * 1024;

/** Throws INVALID_ARGUMENT unless `value` has non-blank text of at most `max` characters. */
export function requireText(field: string, value: string, max: number = MAX_QUERY_LENGTH): string {
  if (value.trim().length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  if (value.length > max) throw InvalidArgumentError.field(field, `must be at most ${max} characters, got ${value.length}`);
  return value;
}

/**
 * Checks a query embedding against the deployment's dimension: not empty, exactly `dimension` finite
 * numbers, not all zero (a zero vector has no direction, so no cosine).
 */
export function requireEmbedding(field: string, values: readonly number[], dimension: number): Float32Array {
  if (values.length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  if (values.length !== dimension) {
    throw InvalidArgumentError.field(field, `must have ${dimension} dimensions (the deployment's), got ${values.length}`);
  }
  let norm = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) throw InvalidArgumentError.field(field, "must hold only finite numbers");
    norm += v * v;
  }
  if (norm === 0) throw InvalidArgumentError.field(field, "must not be the zero vector");
  return Float32Array.from(values);
}
