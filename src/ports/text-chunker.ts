import type { ChunkingOptions } from "../domain/chunking.js";

/**
 * Server-side chunking of documents sent without chunks, off the serving thread (the adapter:
 * src/adapters/kit/chunk-workers.ts). Each text gives exactly `chunkText(text, opts)`'s chunks.
 */
export interface TextChunker {
  /** The chunks of each of `texts`, in order; `tenant` is the fair queue the work waits in. Rejects once `signal` aborts. */
  chunk(tenant: string, texts: readonly string[], opts: ChunkingOptions, signal?: AbortSignal): Promise<string[][]>;
  close(): Promise<void>;
}
