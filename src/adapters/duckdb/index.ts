/**
 * The DuckDB engine (ACMS_DUCKDB_PATH): documents, chunks and vectors in one DuckDB file, vector search in SQL.
 * Keyword search is the in-process BM25 (adapters/kit/bm25), fed through `onChunkTexts`.
 */
import type { DocumentStore } from "../../ports/document-store.js";
import type { ChunkTextChanges, UnitReader } from "../../ports/unit-reader.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import { DuckDbDatabase } from "./duckdb-database.js";
import { DuckDbDocumentStore } from "./duckdb-document-store.js";
import { DuckDbUnitReader } from "./duckdb-unit-reader.js";
import { DuckDbVectorBackend } from "./duckdb-vector-backend.js";

export { DuckDbDatabase, DuckDbDocumentStore, DuckDbUnitReader, DuckDbVectorBackend };

/** What openDuckDb reads from the server's config. */
export interface DuckDbEngineConfig {
  /** The DuckDB file (created when missing). */
  path: string;
  /** The deployment's vector dimension. */
  dimension: number;
  /** Called after each committed write, in commit order, with what it changed in the chunk texts. */
  onChunkTexts?(changes: ChunkTextChanges): void;
}

/** The ports the DuckDB engine serves. */
export interface DuckDbEngine {
  documents: DocumentStore;
  units: UnitReader;
  /** Vector search in SQL over the document store's rows (written in its transactions). */
  vector: VectorBackend;
  /** Closes the DuckDB file. */
  close(): Promise<void>;
}

/**
 * Opens the DuckDB file and every port over it.
 * @example const duck = await openDuckDb({ path: "/data/acms.duckdb", dimension: 384, onChunkTexts: (c) => text.apply(c) });
 */
export async function openDuckDb(config: DuckDbEngineConfig): Promise<DuckDbEngine> {
  const db = await DuckDbDatabase.open({ path: config.path, dimension: config.dimension });
  return {
    documents: new DuckDbDocumentStore(db, { onChunkTexts: config.onChunkTexts }),
    units: new DuckDbUnitReader(db),
    vector: new DuckDbVectorBackend(db, { ownWrites: false }),
    close: () => db.close(),
  };
}
