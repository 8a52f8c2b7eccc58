/**
 * Writes the L2-normalised `source` into `target` at `offset` and returns the norm (0 for a zero or
 * non-finite vector, leaving zeros). Stored and query vectors are unit length, so a dot product is the
 * cosine and no norm is recomputed per candidate.
 */
export function normalizeInto(source: ArrayLike<number>, target: Float32Array, offset = 0): number {
  const d = source.length;
  let sum = 0;
  for (let i = 0; i < d; i++) sum += source[i] * source[i];
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    target.fill(0, offset, offset + d);
    return 0;
  }
  const inv = 1 / norm;
  for (let i = 0; i < d; i++) target[offset + i] = source[i] * inv;
  return norm;
}

/** The dot product of `q` with the row of `data` starting at `offset` (length `q.length`). */
export function dotAt(q: Float32Array, data: Float32Array, offset: number): number {
  const d = q.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < d; i += 4) {
    s0 += q[i] * data[offset + i];
    s1 += q[i + 1] * data[offset + i + 1];
    s2 += q[i + 2] * data[offset + i + 2];
    s3 += q[i + 3] * data[offset + i + 3];
  }
  for (; i < d; i++) s0 += q[i] * data[offset + i];
  return s0 + s1 + s2 + s3;
}

/** The L2 norm of `v`. */
export function l2Norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}
