import { MemoryBm25TextBackend, type ChunkTextSource } from "../adapters/memory-bm25/memory-bm25-text-backend.js";
import type { TextBackend } from "../ports/text-backend.js";

/** Which keyword index serves searches: the store's own when it has one, or the in-memory BM25 one. */
export type KeywordIndexChoice = "native" | "memory";

/**
 * Picks the keyword search backend: the store's native index (FTS5, PostgreSQL) when the adapter declares
 * one (`hasNativeKeywordSearch`) and config does not ask for the in-memory index, else the in-memory
 * BM25 fallback built from the stored chunk texts (same tokenizer, BM25 and order as FTS5).
 */
export function chooseTextBackend(native: TextBackend | undefined, source: ChunkTextSource, choice: KeywordIndexChoice): TextBackend {
  if (native && native.hasNativeKeywordSearch && choice === "native") return native;
  return new MemoryBm25TextBackend(source);
}
