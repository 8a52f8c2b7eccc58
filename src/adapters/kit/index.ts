/**
 * The adapters' kit: what several engines hold or do alike, so that copying between engine folders is
 * never the easy path. An engine folder may import from here; nothing here imports an engine folder.
 * - the SQLite handle (`sqlite-database`), WAL group commit (`wal-sync`) and relaxed commits (`without-fsync`);
 * - the stored-row conventions every document engine keeps (`retention`);
 * - the in-process indexes that engines hold or fall back to: BM25 (`bm25/`) and vectors (`vectors/`);
 * - a fair pool of slots with preemption, for engines whose tasks can be stopped (`fair-slots`);
 * - server-side chunking on worker threads, whatever the engine (`chunk-workers`).
 */
export { MemoryBm25TextBackend, type ChunkTextSource } from "./bm25/memory-bm25-text-backend.js";
export { DEFAULT_RETAINED_VERSIONS } from "./retention.js";
export { openSqliteDatabase, openSqliteReader, type SqliteDatabase } from "./sqlite-database.js";
export { loadVectors } from "./vectors/load-vectors.js";
export { PartitionedVectorBackend } from "./vectors/partitioned-vector-backend.js";
export { FairSlots, type FairSlotsOptions, type SlotAttempt, type SlotRequest } from "./fair-slots.js";
export { ChunkWorkers } from "./chunk-workers.js";
