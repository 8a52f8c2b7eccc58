import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresTextBackend } from "../../src/adapters/postgres/postgres-text-backend.js";
import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { testView } from "../text/text-corpus.js";
import { runDocumentStoreSuite, type DocumentStoreHarness } from "./document-store-suite.js";

async function postgresHarness(): Promise<DocumentStoreHarness> {
  const db = await openTestPostgres();
  return {
    store: new PostgresDocumentStore(db.pool),
    text: new PostgresTextBackend(db.pool),
    reopen: () => new PostgresDocumentStore(db.pool),
    close: () => db.close(),
  };
}

runDocumentStoreSuite({
  name: "PostgreSQL with BM25 in SQL",
  nativeKeywordIndex: true,
  create: postgresHarness,
  skip: {
    "incremental reindex keeps every keyword row; full reindex wipes stray ones":
      "keyword rows reference their chunk row (foreign key, cascading): a stray row cannot exist, so there is none to add; re-indexing rebuilds a resource's rows from its chunks either way",
  },
});

describe("PostgresDocumentStore across servers", () => {
  const R1 = "01JD0C00000000000000000001";
  const opts = { maxResults: 10, now: 10_000, recentWindowMs: 1_000 };
  let db: PostgresTestDatabase;
  beforeEach(async () => {
    db = await openTestPostgres();
  });
  afterEach(() => db.close());

  test("a message with one bad document writes nothing, and the generation does not move", async () => {
    const store = new PostgresDocumentStore(db.pool);
    const before = await store.generation();
    const good = { path: "a.md", content: "alpha", metadata: {}, chunks: [{ text: "alpha" }] };
    const bad = { path: "b.md", content: "be\u0000ta", metadata: {}, chunks: [{ text: "be\u0000ta" }] };
    await expect(store.upsertDocuments(R1, [good, bad], 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await store.generation()).toBe(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM documents")).rows[0].n).toBe(0);
  });

  test("a transaction that fails mid-message rolls back every row it wrote (documents, chunks, postings, totals)", async () => {
    const store = new PostgresDocumentStore(db.pool);
    await store.upsertDocuments(R1, [{ path: "a.md", content: "alpha", metadata: {}, chunks: [{ text: "alpha" }] }], 1_000);
    const before = (await db.pool.query("SELECT generation::text, keyword_rows::int, keyword_tokens::int FROM index_state")).rows[0];
    // A trigger that fails on the second chunk insert of the message: the first document's rows are already written.
    await db.pool.query(
      `CREATE FUNCTION fail_on_b() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.path = 'b.md' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$`,
    );
    await db.pool.query("CREATE TRIGGER fail_on_b BEFORE INSERT ON chunks FOR EACH ROW EXECUTE FUNCTION fail_on_b()");
    await expect(
      store.upsertDocuments(
        R1,
        [
          { path: "a.md", content: "alpha two", metadata: {}, chunks: [{ text: "alpha two" }] },
          { path: "b.md", content: "beta", metadata: {}, chunks: [{ text: "beta" }] },
        ],
        2_000,
      ),
    ).rejects.toThrow("boom");
    expect((await db.pool.query("SELECT generation::text, keyword_rows::int, keyword_tokens::int FROM index_state")).rows[0]).toEqual(
      before,
    );
    const docs = await db.pool.query("SELECT path, content, superseded_at FROM documents ORDER BY doc_key");
    expect(docs.rows).toEqual([{ path: "a.md", content: "alpha", superseded_at: null }]);
    const { hits } = await new PostgresTextBackend(db.pool).search(testView([R1]), "two beta", opts);
    expect(hits).toEqual([]);
  });

  test("term statistics stay exact through supersession, retention, deletion and re-indexing", async () => {
    const store = new PostgresDocumentStore(db.pool, { retainedVersions: 2 });
    for (let v = 0; v < 6; v++) {
      await store.upsertDocuments(
        R1,
        [{ path: "a.md", content: `alpha v${v}`, metadata: {}, chunks: [{ text: `alpha beta v${v}` }, { text: "gamma" }] }],
        1_000 + v,
      );
      await store.upsertDocuments(
        R1,
        [{ path: `b${v}.md`, content: "beta", metadata: {}, chunks: [{ text: "beta beta delta" }] }],
        1_000 + v,
      );
    }
    await store.deleteDocuments(R1, ["b0.md", "b1.md"], 2_000);
    await store.reindexResource(R1, true);
    const { rows } = await db.pool.query<{ ok: boolean; versions: number }>(
      `SELECT (SELECT keyword_rows FROM index_state) = (SELECT count(*) FROM keyword_rows)
          AND (SELECT keyword_tokens FROM index_state) = (SELECT sum(length) FROM keyword_rows)
          AND NOT EXISTS (SELECT 1 FROM term_df d FULL JOIN (SELECT term, count(*) AS n FROM postings GROUP BY term) p USING (term)
                           WHERE coalesce(d.df, 0) <> coalesce(p.n, 0)) AS ok,
              (SELECT count(*)::int FROM documents WHERE path = 'a.md') AS versions`,
    );
    expect(rows[0]).toEqual({ ok: true, versions: 3 });
  });

  test("a message naming one path twice writes both versions in order, as the embedded store does", async () => {
    const msg = [
      { path: "a.md", content: "first", metadata: {}, chunks: [{ text: "first" }] },
      { path: "b.md", content: "other", metadata: {}, chunks: [{ text: "other" }] },
      { path: "a.md", content: "second", metadata: {}, chunks: [{ text: "second" }] },
    ];
    const sqlite = openSqliteDatabase(":memory:");
    try {
      const embedded = await new SqliteDocumentStore(sqlite).upsertDocuments(R1, msg, 1_000);
      const onPg = await new PostgresDocumentStore(db.pool).upsertDocuments(R1, msg, 1_000);
      expect({ ...onPg, generation: 0n, vectors: undefined }).toEqual({ ...embedded, generation: 0n, vectors: undefined });
      const liteRows = sqlite.prepare("SELECT path, content, superseded_at FROM documents ORDER BY doc_key").all();
      const pgRows = (await db.pool.query("SELECT path, content, superseded_at FROM documents ORDER BY doc_key")).rows;
      expect(pgRows).toEqual(liteRows);
    } finally {
      sqlite.close();
    }
  });

  test("index_generation is one counter across servers: concurrent writers through several pools never reuse or reorder a value", async () => {
    const pools = [db.pool, openPostgresPool(db.url), openPostgresPool(db.url)];
    try {
      const stores = pools.map((p) => new PostgresDocumentStore(p));
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          stores[i % stores.length].upsertDocuments(
            R1,
            [{ path: `d${i}.md`, content: `doc ${i}`, metadata: {}, chunks: [{ text: `doc number ${i}` }] }],
            1_000 + i,
          ),
        ),
      );
      const generations = outcomes.map((o) => o.generation).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(generations).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i + 1)));
      for (const s of stores) expect(await s.generation()).toBe(30n);
      const { rows } = await db.pool.query<{ ok: boolean }>(
        `SELECT (SELECT keyword_rows FROM index_state) = (SELECT count(*) FROM keyword_rows)
            AND (SELECT keyword_tokens FROM index_state) = (SELECT sum(length) FROM keyword_rows)
            AND NOT EXISTS (SELECT 1 FROM term_df d FULL JOIN (SELECT term, count(*) AS n FROM postings GROUP BY term) p USING (term)
                             WHERE coalesce(d.df, 0) <> coalesce(p.n, 0)) AS ok`,
      );
      expect(rows[0].ok).toBe(true);
    } finally {
      await pools[1].end();
      await pools[2].end();
    }
  });
});
