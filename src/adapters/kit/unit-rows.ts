import { isVersionVisible } from "../../domain/temporal-filter.js";
import type { ChunkText, UnitAddress, UnitRecord, UnitVisibility } from "../../ports/unit-reader.js";

/** One stored version of a document, newest first among its versions, as every unit reader reads it. */
export interface StoredVersionRow {
  doc_key: number;
  content: string;
  /** A JSON object. */
  metadata: string;
  superseded_at: number | null;
}

/** A stored chunk as the keyword index's snapshot reads it. */
export interface SnapshotChunkRow {
  chunk_key: number;
  resource_id: string;
  path: string;
  chunk_index: number;
  text: string;
  superseded_at: number | null;
}

/**
 * The unit at `address` from its document's versions (newest first): the first version the call may see
 * that holds the addressed chunk (`chunkText` answers a version's chunk, undefined when it has none), or the
 * whole document when no chunk is addressed; undefined when no version qualifies.
 */
export function unitFromVersions(
  address: UnitAddress,
  versions: Iterable<StoredVersionRow>,
  visibility: UnitVisibility,
  chunkText: (docKey: number, chunkIndex: number) => string | undefined,
): UnitRecord | undefined {
  for (const version of versions) {
    if (!isVersionVisible(visibility.temporal, version.superseded_at, visibility.now, visibility.recentWindowMs)) continue;
    let content = version.content;
    if (address.chunkIndex !== undefined) {
      const text = chunkText(version.doc_key, address.chunkIndex);
      if (text === undefined) continue;
      content = text;
    }
    return {
      resourceId: address.resourceId,
      path: address.path,
      chunkIndex: address.chunkIndex,
      content,
      metadata: JSON.parse(version.metadata) as Record<string, string>,
      supersededAt: version.superseded_at,
    };
  }
  return undefined;
}

export function toChunkText(r: SnapshotChunkRow): ChunkText {
  return {
    chunkKey: r.chunk_key,
    resourceId: r.resource_id,
    path: r.path,
    chunkIndex: r.chunk_index,
    text: r.text,
    supersededAt: r.superseded_at,
  };
}
