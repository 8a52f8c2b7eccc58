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
 * Why `values` cannot be an embedding of `dimension`, or undefined when it can: finite numbers, not all zero
 * as the vector stores keep and compare them, in float32. Connect JSON carries doubles, and a double such as
 * `1e-50` is 0 in float32: judged as a double it would pass and be searched or stored as a vector with no
 * direction.
 */
export function embeddingProblem(values: readonly number[], dimension: number): string | undefined {
  if (values.length !== dimension) return `must have ${dimension} dimensions (the deployment's), got ${values.length}`;
  let nonZero = false;
  for (const v of values) {
    if (!Number.isFinite(v)) return "must hold only finite numbers";
    if (Math.fround(v) !== 0) nonZero = true;
  }
  if (nonZero) return undefined;
  return values.some((v) => v !== 0)
    ? "must not be the zero vector (every value rounds to 0 in float32, the precision vectors are kept in)"
    : "must not be the zero vector";
}

/**
 * Checks a query embedding against the deployment's dimension: not empty, exactly `dimension` numbers,
 * finite and not all zero once in float32 (a zero vector has no direction, so no cosine).
 */
export function requireEmbedding(field: string, values: readonly number[], dimension: number): Float32Array {
  if (values.length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  const problem = embeddingProblem(values, dimension);
  if (problem) throw InvalidArgumentError.field(field, problem);
  return Float32Array.from(values);
}
