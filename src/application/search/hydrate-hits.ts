import type { ChunkRecord, DocumentStore } from "../../ports/document-store.js";

/** One hydrated search result: a chunk's identity, text and document metadata, with the hit's score. */
export interface HitRecord {
  ukoUri: string;
  resourceId: string;
  path: string;
  content: string;
  /** The backend's score (BM25-derived for keyword search, cosine in [0, 1] for similarity search). */
  score: number;
  metadata: Record<string, string>;
}

/**
 * Turns a backend's chunk hits into results the way keyword and similarity search both answer: hydrates
 * text and metadata from the document store (hits the backend already read with their chunk skip that), drops hits whose chunk is gone or that `keep` rejects, keeps
 * one result per UKO URI (several versions of a chunk share one; the best-scoring wins) and orders by
 * score descending then UKO URI, so equal scores rank the same on every call.
 */
export async function hydrateHits(
  documents: Pick<DocumentStore, "getChunks">,
  hits: readonly { chunkKey: number; score: number; chunk?: ChunkRecord }[],
  keep: (chunk: ChunkRecord) => boolean = () => true,
): Promise<HitRecord[]> {
  const missing = hits.filter((h) => h.chunk === undefined).map((h) => h.chunkKey);
  const chunks = missing.length > 0 ? await documents.getChunks(missing) : undefined;
  const byUri = new Map<string, HitRecord>();
  for (const hit of hits) {
    const chunk = hit.chunk ?? chunks?.get(hit.chunkKey);
    if (!chunk || !keep(chunk)) continue;
    const prev = byUri.get(chunk.ukoUri);
    if (prev && prev.score >= hit.score) continue;
    byUri.set(chunk.ukoUri, {
      ukoUri: chunk.ukoUri,
      resourceId: chunk.resourceId,
      path: chunk.path,
      content: chunk.text,
      score: hit.score,
      metadata: chunk.metadata,
    });
  }
  return [...byUri.values()].sort((a, b) => b.score - a.score || (a.ukoUri < b.ukoUri ? -1 : a.ukoUri > b.ukoUri ? 1 : 0));
}
