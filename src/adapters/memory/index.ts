/**
 * The in-memory engine: ports held in the process only, for tests and throw-away runs (nothing survives a
 * restart). The in-process indexes that durable engines hold (BM25, vectors) are in adapters/shared.
 */
export { MemoryTierStore } from "./memory-tier-store.js";
