import type { DocumentStore } from "../../src/ports/document-store.js";
import type { CorpusDocument, TextCorpusLoader } from "./text-corpus.js";

/**
 * Writes a corpus through a document store, as the server's indexer does, for keyword backends that read
 * the same store (FTS5 through its triggers, the in-memory BM25 fallback through its snapshots).
 */
export function documentStoreLoader(store: Pick<DocumentStore, "upsertDocuments" | "deleteDocuments" | "getChunks">): TextCorpusLoader {
  return {
    async upsert(doc: CorpusDocument, at: number) {
      await store.upsertDocuments(
        doc.resourceId,
        [{ path: doc.path, content: doc.chunks.join(""), metadata: doc.metadata ?? {}, chunks: doc.chunks.map((text) => ({ text })) }],
        at,
      );
    },
    async remove(resourceId: string, path: string, at: number) {
      await store.deleteDocuments(resourceId, [path], at);
    },
    async describe(chunkKey: number) {
      const c = (await store.getChunks([chunkKey])).get(chunkKey);
      return c && { ukoUri: c.ukoUri, supersededAt: c.supersededAt };
    },
  };
}
