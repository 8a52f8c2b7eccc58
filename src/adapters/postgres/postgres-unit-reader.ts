import type { ChunkSnapshot, UnitAddress, UnitReader, UnitRecord, UnitVisibility } from "../../ports/unit-reader.js";
import { inTransaction, type PostgresPool } from "./postgres-pool.js";
import { groupBy } from "../kit/group-by.js";
import { toChunkText, unitFromVersions, type SnapshotChunkRow } from "../kit/unit-rows.js";

interface VersionRow {
  resource_id: string;
  path: string;
  doc_key: number;
  content: string;
  metadata: string;
  superseded_at: number | null;
}

/**
 * UnitReader over the tables PostgresDocumentStore keeps. Each call is one repeatable-read transaction
 * (one committed state). Versions of a document are tried newest first (the live one, then superseded
 * ones by supersession time), and the first the visibility allows answers, as the embedded reader does.
 */
export class PostgresUnitReader implements UnitReader {
  constructor(private readonly pool: PostgresPool) {}

  async readUnits(addresses: readonly UnitAddress[], v: UnitVisibility): Promise<Array<UnitRecord | undefined>> {
    if (addresses.length === 0) return [];
    return inTransaction(
      this.pool,
      async (c) => {
        const versions = await c.query<VersionRow>(
          `SELECT d.resource_id, d.path, d.doc_key, d.content, d.metadata, d.superseded_at
             FROM documents d JOIN (SELECT DISTINCT r, p FROM unnest($1::text[], $2::text[]) AS a (r, p)) a ON d.resource_id = a.r AND d.path = a.p
            ORDER BY d.superseded_at IS NOT NULL, d.superseded_at DESC, d.doc_key DESC`,
          [addresses.map((a) => a.resourceId), addresses.map((a) => a.path)],
        );
        const byDocument = groupBy(versions.rows, (row) => `${row.resource_id}\u0000${row.path}`);
        const wanted = addresses.filter((a) => a.chunkIndex !== undefined);
        const chunkText = new Map<string, string>();
        if (wanted.length > 0) {
          const docKeys = [
            ...new Set(wanted.flatMap((a) => (byDocument.get(`${a.resourceId}\u0000${a.path}`) ?? []).map((r) => r.doc_key))),
          ];
          const indexes = [...new Set(wanted.map((a) => a.chunkIndex!))];
          const chunks = await c.query<{ doc_key: number; chunk_index: number; text: string }>(
            "SELECT doc_key, chunk_index, text FROM chunks WHERE doc_key = ANY($1::bigint[]) AND chunk_index = ANY($2::integer[])",
            [docKeys, indexes],
          );
          for (const r of chunks.rows) chunkText.set(`${r.doc_key}#${r.chunk_index}`, r.text);
        }
        return addresses.map((a) =>
          unitFromVersions(a, byDocument.get(`${a.resourceId}\u0000${a.path}`) ?? [], v, (docKey, chunkIndex) =>
            chunkText.get(`${docKey}#${chunkIndex}`),
          ),
        );
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  async snapshotChunks(): Promise<ChunkSnapshot> {
    return inTransaction(
      this.pool,
      async (c) => {
        const generation = BigInt((await c.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1")).rows[0].g);
        const { rows } = await c.query<SnapshotChunkRow>(
          "SELECT chunk_key, resource_id, path, chunk_index, text, superseded_at FROM chunks ORDER BY chunk_key",
        );
        return { generation, chunks: rows.map(toChunkText) };
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }
}
