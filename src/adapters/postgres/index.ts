/**
 * The PostgreSQL engine (ACMS_POSTGRES_URL): registry, scopes, documents with BM25 in SQL, the tiers (cold
 * included) and the vectors (pgvector, or in process and followed through LISTEN/NOTIFY) in one database that
 * several servers share.
 */
export { openPostgres, type PostgresEngine, type PostgresEngineConfig } from "./open-postgres.js";
