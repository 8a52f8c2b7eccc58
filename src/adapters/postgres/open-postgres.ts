import { PartitionedVectorBackend } from "../kit/vectors/partitioned-vector-backend.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { ScopeStore } from "../../ports/scope-store.js";
import type { TextBackend } from "../../ports/text-backend.js";
import type { TierStore } from "../../ports/tier-store.js";
import type { UnitReader } from "../../ports/unit-reader.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import { ensureVectorTable, hasPgvector, PgvectorBackend } from "./pgvector-backend.js";
import { PostgresDocumentStore } from "./postgres-document-store.js";
import { migrate } from "./postgres-migrations.js";
import { openPostgresPool } from "./postgres-pool.js";
import { PostgresRegistryStore } from "./postgres-registry-store.js";
import { PostgresScopeStore } from "./postgres-scope-store.js";
import { PostgresTextBackend } from "./postgres-text-backend.js";
import { PostgresTierStore } from "./postgres-tier-store.js";
import { PostgresUnitReader } from "./postgres-unit-reader.js";
import { PostgresVectorFollower } from "./postgres-vector-follower.js";

/** What openPostgres reads from the server's config. */
export interface PostgresEngineConfig {
  /** `postgres://user:pass@host:port/db` (ACMS_POSTGRES_URL). */
  postgresUrl: string;
  embeddingDim: number;
  /** The server's data directory: cold tier files an earlier version left in `<dataDir>/cold` are moved into the database. */
  dataDir: string;
  /** Connections in the pool (default 10; PGlite, one session, needs 1). */
  postgresPoolSize?: number;
}

/** The adapters of one server over one PostgreSQL database. */
export interface PostgresEngine {
  registry: RegistryStore;
  scopes: ScopeStore;
  documents: DocumentStore;
  text: TextBackend;
  units: UnitReader;
  tierStore: TierStore;
  vector: VectorBackend;
  /** Where vectors are searched: `in-process` (loaded from PostgreSQL, kept current) or `pgvector`. */
  vectorMode: "in-process" | "pgvector";
  /** Stops following the database and closes the pool (the tier store is closed by its service). */
  close(): Promise<void>;
}

/**
 * Opens every PostgreSQL adapter over `config.postgresUrl`: one connection pool, the schema migrated to
 * the newest version first (safe when several servers start at once), then the registry, scopes,
 * documents with BM25 in SQL, the unit reader, the tiers (all three, cold included, in the database, so
 * servers share them) and the vectors. With the `vector`
 * extension available, vectors live in the database (pgvector, written by the document store in its
 * transactions); without it they are held in process, loaded from the database and kept current across
 * servers. The log says which.
 * @example const pg = await openPostgres({ postgresUrl, embeddingDim: 384, dataDir });
 */
export async function openPostgres(
  config: PostgresEngineConfig,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<PostgresEngine> {
  const pool = openPostgresPool(config.postgresUrl, { max: config.postgresPoolSize });
  try {
    await migrate(pool);
    const pgvector = await hasPgvector(pool);
    let vector: VectorBackend;
    if (pgvector) {
      await ensureVectorTable(pool, config.embeddingDim);
      vector = new PgvectorBackend(pool, config.embeddingDim, { ownWrites: false });
      log("acms: postgres: vectors in PostgreSQL with pgvector (exact scan for small scopes, HNSW with iterative scan for large ones)");
    } else {
      vector = await PostgresVectorFollower.open(
        pool,
        config.postgresUrl,
        new PartitionedVectorBackend({ dimension: config.embeddingDim }),
      );
      log(
        "acms: postgres: no vector extension in this database: vectors held in process, loaded from PostgreSQL and kept current through LISTEN/NOTIFY",
      );
    }
    const documents = new PostgresDocumentStore(pool, { vectorTable: pgvector });
    const registry = new PostgresRegistryStore(pool);
    await registry
      .listen(config.postgresUrl)
      .catch((err: unknown) =>
        log(
          `acms: postgres: cannot LISTEN for other servers' link removals (${(err as Error).message}): scopes see another server's UnlinkResource after a restart`,
        ),
      );
    return {
      registry,
      scopes: new PostgresScopeStore(pool),
      documents,
      text: new PostgresTextBackend(pool),
      units: new PostgresUnitReader(pool),
      tierStore: new PostgresTierStore(pool, `${config.dataDir}/cold`),
      vector,
      vectorMode: pgvector ? "pgvector" : "in-process",
      async close() {
        await vector.close();
        await registry.stopListening();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
