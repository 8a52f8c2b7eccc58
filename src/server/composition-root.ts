import { mkdirSync } from "node:fs";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.js";
import type { Config } from "./config.js";
import type { Backends } from "./backends.js";
import { openSqliteDatabase } from "../adapters/sqlite/sqlite-database.js";
import { SqliteRegistryStore } from "../adapters/sqlite/sqlite-registry-store.js";
import { SqliteScopeStore } from "../adapters/sqlite/sqlite-scope-store.js";
import { SqliteFileTierStore } from "../adapters/tiers/sqlite-file-tier-store.js";
import { TierService } from "./tier-service.js";
import { SqliteDocumentStore } from "../adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../adapters/sqlite/fts5-text-backend.js";
import { SqliteUnitReader } from "../adapters/sqlite/sqlite-unit-reader.js";
import { chooseTextBackend } from "./choose-text-backend.js";
import { PartitionedVectorBackend } from "../adapters/memory-vector/partitioned-vector-backend.js";
import { loadVectors } from "../adapters/memory-vector/load-vectors.js";
import { OxigraphGraphBackend } from "../adapters/oxigraph/oxigraph-graph-backend.js";
import { openPostgres } from "../adapters/postgres/open-postgres.js";

/**
 * The one place that picks adapters: the embedded default (SQLite under the data directory) for now.
 * External engines plug in here, chosen by config.
 */
export async function createBackends(config: Config): Promise<Backends> {
  mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  try {
    if (config.postgresUrl !== undefined) return await openOnPostgres(config, config.postgresUrl, lock);
    return await openEmbedded(config, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function openEmbedded(config: Config, lock: DataDirLock): Promise<Backends> {
  const db = openSqliteDatabase(`${config.dataDir}/acms.db`);
  try {
    const registry = new SqliteRegistryStore(db);
    const scopes = new SqliteScopeStore(db);
    const tiers = await TierService.open(new SqliteFileTierStore(db, `${config.dataDir}/cold`), {
      budgets: config.tiers,
      summaryTokens: config.tiers.summaryTokens,
    });
    const documents = new SqliteDocumentStore(db);
    const units = new SqliteUnitReader(db);
    const text = chooseTextBackend(new Fts5TextBackend(db), { generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() }, config.keywordIndex);
    const vector = new PartitionedVectorBackend({ dimension: config.embeddingDim });
    await loadVectors(vector, documents.iterateVectors());
    const graph = await OxigraphGraphBackend.open({ path: `${config.dataDir}/graph.db` });
    return {
      registry,
      scopes,
      tiers,
      documents,
      text,
      vector,
      graph,
      units,
      async close() {
        await vector.close();
        await graph.close();
        await tiers.close();
        await scopes.close();
        await registry.close();
        db.close();
        lock.release();
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

/** ACMS_POSTGRES_URL: every PostgreSQL adapter (openPostgres); the graph and cold files stay under the data directory. */
async function openOnPostgres(config: Config, postgresUrl: string, lock: DataDirLock): Promise<Backends> {
  const pg = await openPostgres({ postgresUrl, embeddingDim: config.embeddingDim, dataDir: config.dataDir });
  try {
    const tiers = await TierService.open(pg.tierStore, { budgets: config.tiers, summaryTokens: config.tiers.summaryTokens });
    const { documents, units } = pg;
    const text = chooseTextBackend(pg.text, { generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() }, config.keywordIndex);
    const graph = await OxigraphGraphBackend.open({ path: `${config.dataDir}/graph.db` });
    return {
      registry: pg.registry,
      scopes: pg.scopes,
      tiers,
      documents,
      text,
      vector: pg.vector,
      graph,
      units,
      async close() {
        await graph.close();
        await tiers.close();
        await pg.close();
        lock.release();
      },
    };
  } catch (err) {
    await pg.close();
    throw err;
  }
}
