import type { Statement } from "better-sqlite3";
import type { ChunkSnapshot, ChunkText, UnitAddress, UnitReader, UnitRecord, UnitVisibility } from "../../ports/unit-reader.js";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { toChunkText, unitFromVersions, type SnapshotChunkRow } from "../kit/unit-rows.js";

interface VersionRow {
  doc_key: number;
  content: string;
  metadata: string;
  superseded_at: number | null;
}

type ChunkRow = SnapshotChunkRow;

/**
 * UnitReader over the tables SqliteDocumentStore keeps (`documents`, `chunks`, `index_state`): read-only,
 * so it can share the store's connection. Versions of a document are tried newest first (the live one,
 * then superseded ones by supersession time), and the first the visibility allows answers. Documents of an
 * upload not yet published are left out (read through SqliteDocumentStore's `visible_documents` view).
 */
export class SqliteUnitReader implements UnitReader {
  private readonly versions: Statement<[string, string], VersionRow>;
  private readonly chunkOf: Statement<[number, number], { text: string }>;
  private readonly allChunks: Statement<[], ChunkRow>;
  private readonly generation: Statement<[], bigint>;
  private readonly snapshot: () => ChunkSnapshot;

  constructor(private readonly db: SqliteDatabase) {
    this.versions = db.prepare<[string, string], VersionRow>(
      `SELECT doc_key, content, metadata, superseded_at FROM visible_documents WHERE resource_id = ? AND path = ?
       ORDER BY superseded_at IS NOT NULL, superseded_at DESC, doc_key DESC`,
    );
    this.chunkOf = db.prepare<[number, number], { text: string }>("SELECT text FROM chunks WHERE doc_key = ? AND chunk_index = ?");
    this.allChunks = db.prepare<[], ChunkRow>(
      `SELECT c.chunk_key, c.resource_id, c.path, c.chunk_index, c.text, d.superseded_at FROM chunks c
       JOIN visible_documents d ON d.doc_key = c.doc_key ORDER BY c.chunk_key`,
    );
    this.generation = db
      .prepare<[], bigint>("SELECT generation FROM index_state WHERE id = 1")
      .pluck()
      .safeIntegers() as unknown as Statement<[], bigint>;
    this.snapshot = db.transaction((): ChunkSnapshot => {
      const generation = this.generation.get() ?? 0n;
      const chunks: ChunkText[] = this.allChunks.all().map(toChunkText);
      return { generation, chunks };
    });
  }

  async readUnits(addresses: readonly UnitAddress[], visibility: UnitVisibility): Promise<Array<UnitRecord | undefined>> {
    const read = this.db.transaction(() => addresses.map((a) => this.readOne(a, visibility)));
    return read();
  }

  async snapshotChunks(): Promise<ChunkSnapshot> {
    return this.snapshot();
  }

  private readOne(address: UnitAddress, v: UnitVisibility): UnitRecord | undefined {
    return unitFromVersions(
      address,
      this.versions.all(address.resourceId, address.path),
      v,
      (docKey, chunkIndex) => this.chunkOf.get(docKey, chunkIndex)?.text,
    );
  }
}
