import type { ChunkSnapshot, UnitAddress, UnitReader, UnitRecord, UnitVisibility } from "../../ports/unit-reader.js";
import { groupBy } from "../kit/group-by.js";
import { toChunkText, unitFromVersions } from "../kit/unit-rows.js";
import { numberOrNull, type DuckDbDatabase } from "./duckdb-database.js";

/**
 * UnitReader over the tables DuckDbDocumentStore keeps. One read transaction per call, so every answer
 * of a `readUnits` call and every chunk of a snapshot come from one committed state. The versions of all
 * addressed documents are read in one query (newest first: the live one, then superseded ones by
 * supersession time) and the addressed chunks in a second; answers are assembled in request order.
 */
export class DuckDbUnitReader implements UnitReader {
  constructor(private readonly db: DuckDbDatabase) {}

  async readUnits(addresses: readonly UnitAddress[], visibility: UnitVisibility): Promise<Array<UnitRecord | undefined>> {
    if (addresses.length === 0) return [];
    const pairs = [...new Map(addresses.map((a) => [`${a.resourceId}\u0000${a.path}`, a])).values()];
    const { versions, chunkTexts } = await this.db.read(async (tx) => {
      const values = pairs.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(", ");
      const params = pairs.flatMap((a) => [a.resourceId, a.path]);
      const versions = await tx.all(
        `SELECT d.doc_key, d.resource_id, d.path, d.content, d.metadata, d.superseded_at
           FROM documents d JOIN (VALUES ${values}) AS w(resource_id, path) ON d.resource_id = w.resource_id AND d.path = w.path
          ORDER BY d.superseded_at IS NOT NULL, d.superseded_at DESC, d.doc_key DESC`,
        params,
      );
      const wanted = addresses.filter((a) => a.chunkIndex !== undefined);
      const chunkTexts = new Map<string, string>();
      if (wanted.length > 0 && versions.length > 0) {
        const docs = versions.map((v) => Number(v[0]));
        const indexes = [...new Set(wanted.map((a) => a.chunkIndex as number))];
        const rows = await tx.all(
          `SELECT doc_key, chunk_index, text FROM chunks WHERE list_contains([${docs.join(",")}]::BIGINT[], doc_key) AND list_contains([${indexes.join(",")}]::INTEGER[], chunk_index)`,
        );
        for (const r of rows) chunkTexts.set(`${Number(r[0])}#${Number(r[1])}`, String(r[2]));
      }
      return { versions, chunkTexts };
    });
    const byDoc = groupBy(
      versions.map((v) => ({
        key: `${String(v[1])}\u0000${String(v[2])}`,
        doc_key: Number(v[0]),
        content: String(v[3]),
        metadata: String(v[4]),
        superseded_at: numberOrNull(v[5]),
      })),
      (v) => v.key,
    );
    return addresses.map((a) =>
      unitFromVersions(a, byDoc.get(`${a.resourceId}\u0000${a.path}`) ?? [], visibility, (docKey, chunkIndex) =>
        chunkTexts.get(`${docKey}#${chunkIndex}`),
      ),
    );
  }

  async snapshotChunks(): Promise<ChunkSnapshot> {
    return this.db.read(async (tx) => {
      const generation = BigInt((await tx.all("SELECT generation FROM index_state WHERE id = 1"))[0][0] as bigint);
      const rows = await tx.all("SELECT chunk_key, resource_id, path, chunk_index, text, superseded_at FROM chunks ORDER BY chunk_key");
      return {
        generation,
        chunks: rows.map((r) =>
          toChunkText({
            chunk_key: Number(r[0]),
            resource_id: String(r[1]),
            path: String(r[2]),
            chunk_index: Number(r[3]),
            text: String(r[4]),
            superseded_at: numberOrNull(r[5]),
          }),
        ),
      };
    });
  }
}
