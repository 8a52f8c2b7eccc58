import type { VectorSearchOptions } from "../../../ports/vector-backend.js";

/** The preconditions every vector port's `search` checks first: not cancelled, the deployment's dimension, a positive topK. */
export function assertVectorQuery(query: Float32Array, dimension: number, opts: VectorSearchOptions): void {
  opts.signal?.throwIfAborted();
  if (query.length !== dimension) throw new RangeError(`query has ${query.length} dimensions, the backend ${dimension}`);
  if (!Number.isInteger(opts.topK) || opts.topK <= 0) throw new RangeError(`topK must be a positive integer, got ${opts.topK}`);
}
