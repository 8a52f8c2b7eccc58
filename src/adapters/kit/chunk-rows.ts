import { formatUkoUri } from "../../domain/uko-uri.js";
import type { ChunkRecord } from "../../ports/document-store.js";

/** A stored chunk joined with its document's metadata, as every document engine reads it for getChunks. */
export interface StoredChunkRow {
  chunk_key: number;
  doc_key: number;
  resource_id: string;
  path: string;
  chunk_index: number;
  text: string;
  superseded_at: number | null;
  /** The document's metadata as stored (a JSON object). */
  metadata: string;
}

/**
 * getChunks' answer from its rows: one record per chunk key, each document's metadata parsed once and
 * shared by its chunks.
 */
export function chunkRecordsOf(rows: Iterable<StoredChunkRow>): Map<number, ChunkRecord> {
  const out = new Map<number, ChunkRecord>();
  const metadataByDoc = new Map<number, Record<string, string>>();
  for (const row of rows) {
    let metadata = metadataByDoc.get(row.doc_key);
    if (!metadata) metadataByDoc.set(row.doc_key, (metadata = JSON.parse(row.metadata) as Record<string, string>));
    out.set(row.chunk_key, {
      chunkKey: row.chunk_key,
      resourceId: row.resource_id,
      path: row.path,
      chunkIndex: row.chunk_index,
      text: row.text,
      metadata,
      supersededAt: row.superseded_at,
      ukoUri: formatUkoUri(row.resource_id, row.path, row.chunk_index),
    });
  }
  return out;
}
