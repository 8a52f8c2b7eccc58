import type { VectorEntry } from "../../../ports/vector-backend.js";

/** A backend that can take its whole content at once (the embedded one, `PartitionedVectorBackend`). */
export interface BulkLoadableVectors {
  load(entries: AsyncIterable<VectorEntry> | Iterable<VectorEntry>): Promise<void>;
}

/**
 * Fills the vector backend from the document store's retained vectors, at start or after a full
 * rebuild. The store is the source of truth; the vectors are built aside a batch per event-loop turn and
 * swapped in at once, so searches running meanwhile see the old content or the new (or UNAVAILABLE
 * while loading), never half of it, and writes made meanwhile are applied after, in order.
 * @example await loadVectors(vectors, documents.iterateVectors());
 */
export async function loadVectors(
  backend: BulkLoadableVectors,
  entries: AsyncIterable<VectorEntry> | Iterable<VectorEntry>,
): Promise<void> {
  await backend.load(entries);
}
