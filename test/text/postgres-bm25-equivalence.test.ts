import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend, RID_MATCH_MAX_RESOURCES } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { PostgresTextBackend } from "../../src/adapters/postgres/postgres-text-backend.js";
import type { DocumentInputRecord } from "../../src/ports/document-store.js";
import type { TextBackend, TextSearchOptions } from "../../src/ports/text-backend.js";
import type { TemporalScope } from "../../src/domain/scope.js";
import { prng } from "../support/prng.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { loadFixtureCorpus, testView, type CorpusDocument } from "./text-corpus.js";

/**
 * PostgreSQL's BM25 against SQLite FTS5 itself, on the fixture corpus with several versions per
 * document and deletions: the same queries under the same scopes must give the same chunks in the same
 * order with bit-identical scores (not merely the golden file's six decimals).
 */
describe("PostgreSQL BM25 equals FTS5 bm25()", () => {
  const T0 = 1_700_000_000_000;
  const WINDOW = 60_000;
  const opts: TextSearchOptions = { maxResults: 1000, now: T0 + 100 * WINDOW, recentWindowMs: 50 * WINDOW };
  let db: PostgresTestDatabase;
  let sqlite: ReturnType<typeof openSqliteDatabase>;
  let fts5: TextBackend;
  let postgres: TextBackend;
  let ftsStore: SqliteDocumentStore;
  let pgStore: PostgresDocumentStore;
  const corpus = loadFixtureCorpus();
  const resources = Object.values(corpus.resources);

  const input = (d: CorpusDocument, chunks = d.chunks): DocumentInputRecord => ({
    path: d.path,
    content: chunks.join(""),
    metadata: d.metadata ?? {},
    chunks: chunks.map((text) => ({ text })),
  });

  async function both(
    fn: (s: {
      upsertDocuments: SqliteDocumentStore["upsertDocuments"] | PostgresDocumentStore["upsertDocuments"];
      deleteDocuments: SqliteDocumentStore["deleteDocuments"] | PostgresDocumentStore["deleteDocuments"];
    }) => unknown,
  ) {
    await fn(ftsStore);
    await fn(pgStore);
  }

  beforeAll(async () => {
    db = await openTestPostgres();
    sqlite = openSqliteDatabase(":memory:");
    ftsStore = new SqliteDocumentStore(sqlite);
    pgStore = new PostgresDocumentStore(db.pool);
    fts5 = new Fts5TextBackend(sqlite);
    postgres = new PostgresTextBackend(db.pool);
    const rnd = prng(7);
    let at = T0;
    for (const d of corpus.documents) await both((s) => s.upsertDocuments(d.resourceId, [input(d)], at));
    // Versions: rewrite a third of the documents (reversed chunks) up to three times, delete some.
    for (let round = 0; round < 3; round++) {
      at += 30 * WINDOW;
      for (const d of corpus.documents) {
        if (rnd() < 0.33)
          await both((s) =>
            s.upsertDocuments(
              d.resourceId,
              [
                input(
                  d,
                  [...d.chunks].reverse().map((c) => `${c} v${round}`),
                ),
              ],
              at,
            ),
          );
      }
    }
    for (const d of corpus.documents) if (rnd() < 0.1) await both((s) => s.deleteDocuments(d.resourceId, [d.path], at));
  });
  afterAll(async () => {
    sqlite?.close();
    await db?.close();
  });

  const queries = [
    ...corpus.queries.map((q) => q.query),
    "the",
    "a of and",
    "retry",
    "Running runners ran",
    "naïve café",
    "error handling HTTP 500",
    "zzzz-nothing",
    "server client request response timeout",
    // A mark outside U+0300-U+036F joins a query word but splits it into two tokens: a two-term phrase.
    "export\u0903function",
    "in\u0903a",
    "token\u0903from\u0903the",
    "users\u0903email",
  ];

  async function ranked(backend: TextBackend, q: string, ids: readonly string[], temporal: TemporalScope) {
    const { hits, exhaustive } = await backend.search(testView(ids, { temporal }), q, opts);
    return { exhaustive, hits: hits.map((h) => [h.resourceId, h.path, h.score]) };
  }

  test.each(["current", "recent", "all"] as TemporalScope[])("every query, scope of all resources, temporal %s", async (temporal) => {
    let nonEmpty = 0;
    for (const q of queries) {
      const expected = await ranked(fts5, q, resources, temporal);
      if (expected.hits.length > 0) nonEmpty++;
      expect({ q, ...(await ranked(postgres, q, resources, temporal)) }).toEqual({ q, ...expected });
    }
    expect(nonEmpty).toBeGreaterThan(queries.length / 2);
    expect((await ranked(postgres, "export\u0903function", resources, temporal)).hits.length).toBeGreaterThan(0);
  });

  test("every query, one resource at a time, and a scope larger than FTS5's rid-MATCH limit", async () => {
    const padding = Array.from({ length: RID_MATCH_MAX_RESOURCES + 3 }, (_, i) => `01JZ${String(i).padStart(22, "0")}`);
    for (const q of queries) {
      for (const id of resources)
        expect({ q, id, ...(await ranked(postgres, q, [id], "all")) }).toEqual({ q, id, ...(await ranked(fts5, q, [id], "all")) });
      expect({ q, ...(await ranked(postgres, q, [...resources, ...padding], "current")) }).toEqual({
        q,
        ...(await ranked(fts5, q, [...resources, ...padding], "current")),
      });
    }
  });

  test("after a full re-index the keyword statistics and scores are unchanged", async () => {
    const before = await ranked(postgres, "retry requests server", resources, "all");
    for (const id of resources) await pgStore.reindexResource(id, true);
    expect(await ranked(postgres, "retry requests server", resources, "all")).toEqual(before);
    const { rows } = await db.pool.query<{ ok: boolean }>(
      `SELECT (SELECT keyword_rows FROM index_state) = (SELECT count(*) FROM keyword_rows)
          AND (SELECT keyword_tokens FROM index_state) = (SELECT sum(length) FROM keyword_rows)
          AND NOT EXISTS (SELECT 1 FROM term_df d FULL JOIN (SELECT term, count(*) AS n FROM postings GROUP BY term) p USING (term)
                           WHERE coalesce(d.df, 0) <> coalesce(p.n, 0)) AS ok`,
    );
    expect(rows[0].ok).toBe(true);
  });
});
