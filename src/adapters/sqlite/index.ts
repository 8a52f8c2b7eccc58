/**
 * The embedded engine: one SQLite file (better-sqlite3) holds the registry, scopes, documents with FTS5
 * keyword search, and the tier catalogue (cold fragments as files beside it). The embedded default.
 */
import type { DocumentStore } from "../../ports/document-store.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { ScopeStore } from "../../ports/scope-store.js";
import type { TextBackend } from "../../ports/text-backend.js";
import type { TierStore } from "../../ports/tier-store.js";
import type { UnitReader } from "../../ports/unit-reader.js";
import { openSqliteDatabase, type SqliteDatabase } from "../kit/sqlite-database.js";
import { WalCheckpointer } from "../kit/wal-checkpointer.js";
import { loadAcmsFts5 } from "./acms-fts5-extension.js";
import { Fts5TextBackend } from "./fts5-text-backend.js";
import { SqliteDocumentStore } from "./sqlite-document-store.js";
import { SqliteFileTierStore } from "./sqlite-file-tier-store.js";
import { SqliteRegistryStore } from "./sqlite-registry-store.js";
import { SqliteScopeStore } from "./sqlite-scope-store.js";
import { SqliteUnitReader } from "./sqlite-unit-reader.js";

export { Fts5TextBackend, SqliteDocumentStore, SqliteFileTierStore, SqliteRegistryStore, SqliteScopeStore, SqliteUnitReader };

/** Where the embedded engine keeps its data. */
export interface SqliteEngineConfig {
  /** The SQLite file (created when missing). */
  path: string;
  /** Where cold tier fragments are kept as files. */
  coldDir: string;
  /** The acms_fts5 extension FTS5 keyword search needs (default: the one scripts/build-native.mjs built, see acmsFts5Path). */
  fts5Extension?: string;
}

/** The catalogue part: what the SQLite file holds beside another document engine (DuckDB). */
export interface SqliteCatalog {
  db: SqliteDatabase;
  registry: RegistryStore;
  scopes: ScopeStore;
  /** Closed by the tier service that opens over it. */
  tierStore: TierStore;
  /** Closes the registry, the scopes and the database file (the tier service closes first). */
  close(): Promise<void>;
}

/** Every port the embedded engine serves. */
export interface SqliteEngine extends SqliteCatalog {
  documents: DocumentStore;
  units: UnitReader;
  /**
   * FTS5 keyword search over the stored chunks (`hasNativeKeywordSearch`); undefined when its SQLite extension
   * (BM25 from each scope's own statistics) is not built or does not load, `textUnavailable` saying why.
   */
  text: TextBackend | undefined;
  textUnavailable?: string;
}

/**
 * Opens the catalogue (registry, scopes, tier store) in `config.path`; no document tables are made.
 * @example const catalog = openSqliteCatalog({ path: `${dataDir}/acms.db`, coldDir: `${dataDir}/cold` });
 */
export function openSqliteCatalog(config: SqliteEngineConfig): SqliteCatalog {
  const db = openSqliteDatabase(config.path);
  // The WAL is copied into the database from a thread of its own, never inside a commit on the serving thread.
  const checkpointer = WalCheckpointer.start(db);
  try {
    const registry = new SqliteRegistryStore(db);
    const scopes = new SqliteScopeStore(db);
    return {
      db,
      registry,
      scopes,
      tierStore: new SqliteFileTierStore(db, config.coldDir),
      async close() {
        await scopes.close();
        await registry.close();
        await checkpointer?.stop();
        db.close();
      },
    };
  } catch (err) {
    void checkpointer?.stop().finally(() => db.close());
    throw err;
  }
}

/**
 * Opens every port of the embedded engine in `config.path`.
 * @example const engine = openSqlite({ path: `${dataDir}/acms.db`, coldDir: `${dataDir}/cold` });
 */
export function openSqlite(config: SqliteEngineConfig): SqliteEngine {
  const catalog = openSqliteCatalog(config);
  const documents = new SqliteDocumentStore(catalog.db);
  const textUnavailable = loadAcmsFts5(catalog.db, config.fts5Extension);
  const text = textUnavailable === undefined ? new Fts5TextBackend(catalog.db) : undefined;
  return {
    ...catalog,
    documents,
    units: new SqliteUnitReader(catalog.db),
    text,
    textUnavailable,
    async close() {
      await documents.close();
      await catalog.close();
    },
  };
}
