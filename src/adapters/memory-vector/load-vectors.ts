import type { VectorEntry } from "../../ports/vector-backend.js";

/** A backend that can take its whole content at once (the embedded one, `PartitionedVectorBackend`). */
export interface BulkLoadableVectors {
  replaceAll(entries: Iterable<VectorEntry>): void;
}

/**
 * Fills the vector backend from the document store's retained vectors, at start or after a full
 * rebuild. The store is the source of truth; the vectors are rebuilt aside and swapped in at once, so
 * searches running meanwhile see the old content or the new, never half of it.
 * @example await loadVectors(vectors, documents.iterateVectors());
 */
export async function loadVectors(backend: BulkLoadableVectors, entries: AsyncIterable<VectorEntry> | Iterable<VectorEntry>): Promise<void> {
  const all: VectorEntry[] = [];
  for await (const e of entries) all.push(e);
  backend.replaceAll(all);
}
