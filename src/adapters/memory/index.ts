/**
 * The in-memory engine: ports held in the process only, for tests and throw-away runs (nothing survives a
 * restart). The in-process indexes that durable engines hold (BM25, vectors) are in the adapters' kit (src/adapters/kit).
 */
import type { TierStore } from "../../ports/tier-store.js";
import { MemoryTierStore } from "./memory-tier-store.js";

export { MemoryTierStore };

/** The ports the in-memory engine serves. */
export interface MemoryEngine {
  tierStore: TierStore;
}

/**
 * Opens the in-memory engine (nothing to open: each call is a fresh, empty store).
 * @example const { tierStore } = openMemory(); const tiers = await TierService.open(tierStore, opts);
 */
export function openMemory(): MemoryEngine {
  return { tierStore: new MemoryTierStore() };
}
