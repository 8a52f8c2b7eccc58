import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { PostgresTextBackend } from "../../src/adapters/postgres/postgres-text-backend.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { runTextBackendSuite, type TextBackendHarness } from "./text-backend-suite.js";
import type { CorpusDocument, TextCorpusLoader } from "./text-corpus.js";

/**
 * The PostgreSQL keyword backend with its loader: documents go in through PostgresDocumentStore, like
 * the server's. The suite's `describe` is synchronous, so the loader keeps every chunk's UKO URI and
 * supersession time, re-read after each write.
 */
async function createPostgresHarness(): Promise<TextBackendHarness> {
  const db = await openTestPostgres();
  const store = new PostgresDocumentStore(db.pool);
  const described = new Map<number, { ukoUri: string; supersededAt: number | null }>();
  const refresh = async () => {
    const { rows } = await db.pool.query<{ chunk_key: number }>("SELECT chunk_key FROM chunks");
    const chunks = await store.getChunks(rows.map((r) => r.chunk_key));
    described.clear();
    for (const c of chunks.values()) described.set(c.chunkKey, { ukoUri: c.ukoUri, supersededAt: c.supersededAt });
  };
  const loader: TextCorpusLoader = {
    async upsert(doc: CorpusDocument, at: number) {
      await store.upsertDocuments(
        doc.resourceId,
        [{ path: doc.path, content: doc.chunks.join(""), metadata: doc.metadata ?? {}, chunks: doc.chunks.map((text) => ({ text })) }],
        at,
      );
      await refresh();
    },
    async remove(resourceId: string, path: string, at: number) {
      await store.deleteDocuments(resourceId, [path], at);
      await refresh();
    },
    describe: (chunkKey) => described.get(chunkKey),
  };
  return { backend: new PostgresTextBackend(db.pool), loader, close: () => db.close() };
}

// The golden file test/text/golden/postgres.json is a copy of fts5.json: PostgreSQL must rank exactly as FTS5.
runTextBackendSuite({ name: "postgres", create: createPostgresHarness });
