import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, openSqliteReader, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import type { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import type { TextSearchOptions } from "../../src/ports/text-backend.js";
import { documentStoreLoader } from "./document-store-loader.js";
import type { TextCorpusLoader } from "./text-corpus.js";

// What the tests of Fts5TextBackend's caches (the posting cache, the chunk row cache) share: random chunks of a
// few words, answers compared with a backend without the cache, and a reader on a connection of its own.

/** A chunk of 2 to 1 + `maxWords` of `words`, Zipf-like (the first common, the last rare; `spread` sets how fast they thin), some repeated. */
export function zipfChunkText(rand: () => number, words: readonly string[], maxWords: number, spread: number): string {
  const n = 2 + Math.floor(rand() * maxWords);
  return Array.from({ length: n }, () => words[Math.min(words.length - 1, Math.floor(-Math.log(1 - rand() * 0.999) * spread))]).join(" ");
}

/** Every view, query and `max_results` of `limits` answers alike from `cached` and `reference` (recent window 300 ms). */
export async function expectSameAnswers(
  cached: Fts5TextBackend,
  reference: Fts5TextBackend,
  views: readonly ScopedBackendView[],
  queries: readonly string[],
  limits: readonly number[],
  now: number,
): Promise<void> {
  for (const view of views) {
    for (const query of queries) {
      for (const maxResults of limits) {
        const opts: TextSearchOptions = { maxResults, now, recentWindowMs: 300 };
        expect(await cached.search(view, query, opts)).toEqual(await reference.search(view, query, opts));
      }
    }
  }
}

/**
 * Runs `body` with a database file written through `store`/`loader` on one connection and read on another
 * (`readerDb`, opened once `prepare` has loaded the file), then closes both and removes the file.
 */
export async function withReaderConnection(
  prefix: string,
  prepare: (w: { store: SqliteDocumentStore; loader: TextCorpusLoader }) => Promise<void>,
  body: (w: { store: SqliteDocumentStore; loader: TextCorpusLoader; readerDb: SqliteDatabase }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const writerDb = openSqliteDatabase(join(dir, "acms.db"));
  try {
    const store = new SqliteDocumentStore(writerDb);
    const loader = documentStoreLoader(store);
    await prepare({ store, loader });
    const readerDb = openSqliteReader(join(dir, "acms.db"));
    try {
      await body({ store, loader, readerDb });
    } finally {
      readerDb.close();
    }
  } finally {
    writerDb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
