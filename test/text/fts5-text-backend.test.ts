import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapter-kit/sqlite-database.js";
import { resourceToken, SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend, RID_MATCH_MAX_RESOURCES } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { runTextBackendSuite, type TextBackendHarness } from "./text-backend-suite.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { testView } from "./text-corpus.js";

/** The FTS5 adapter with its loader: documents go in through SqliteDocumentStore, like the server's. */
function createFts5Harness(): TextBackendHarness & { db: SqliteDatabase; store: SqliteDocumentStore } {
  const db = openSqliteDatabase(":memory:");
  const store = new SqliteDocumentStore(db);
  const backend = new Fts5TextBackend(db);
  return {
    db,
    store,
    backend,
    loader: documentStoreLoader(store),
    close() {
      db.close();
    },
  };
}

runTextBackendSuite({ name: "fts5", create: createFts5Harness });

describe("Fts5TextBackend specifics", () => {
  const opts = { maxResults: 20, now: 2_000, recentWindowMs: 1_000 };
  const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
  const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
  let h: ReturnType<typeof createFts5Harness>;
  beforeEach(() => {
    h = createFts5Harness();
  });
  afterEach(() => h.close());

  it("stems English words (porter)", async () => {
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["The runner was running quickly"] }, 1_000);
    const { hits } = await h.backend.search(testView([A]), "runs", opts);
    expect(hits.length).toBe(1);
  });

  it("gives a chunk the same score whatever the scope's size or mode", async () => {
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta gamma"] }, 1_000);
    await h.loader.upsert({ resourceId: B, path: "b.md", chunks: ["alpha alpha delta"] }, 1_000);
    const many = Array.from({ length: RID_MATCH_MAX_RESOURCES + 5 }, (_, i) => `01JC${String(i).padStart(22, "0")}`);
    const small = await h.backend.search(testView([A]), "alpha", opts);
    const large = await h.backend.search(testView([A, ...many]), "alpha", opts);
    expect(small.hits).toEqual(large.hits);
    const both = await h.backend.search(testView([A, B]), "alpha", opts);
    expect(both.hits.find((x) => x.resourceId === A)?.score).toBe(small.hits[0].score);
  });

  it("answers from the scope in SQL even when out-of-scope rows rank higher", async () => {
    for (let i = 0; i < 50; i++) {
      await h.loader.upsert({ resourceId: B, path: `b${i}.md`, chunks: ["needle needle needle"] }, 1_000);
    }
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["a lone needle among hay and straw and more hay"] }, 1_000);
    const { hits, exhaustive } = await h.backend.search(testView([A]), "needle", { ...opts, maxResults: 1 });
    expect(hits.map((x) => x.resourceId)).toEqual([A]);
    expect(exhaustive).toBe(true);
  });

  it("keeps reading pages until max_results pass the path filter", async () => {
    for (let i = 0; i < 200; i++) {
      await h.loader.upsert({ resourceId: A, path: `hidden/${i}.md`, chunks: ["needle needle needle"] }, 1_000);
    }
    for (let i = 0; i < 3; i++) {
      await h.loader.upsert({ resourceId: A, path: `open/${i}.md`, chunks: ["needle in a long sentence of many other words here"] }, 1_000);
    }
    const view = testView([A], { excludePaths: ["hidden/**"] });
    const { hits, exhaustive } = await h.backend.search(view, "needle", { ...opts, maxResults: 3 });
    expect(hits.map((x) => x.path).sort()).toEqual(["open/0.md", "open/1.md", "open/2.md"]);
    expect(exhaustive).toBe(true);
  });

  it("indexes resource tokens unstemmed, so ids that porter would merge stay apart", async () => {
    const ness = "01JAAAAAAAAAAAAAAAAAAANESS";
    const ment = "01JAAAAAAAAAAAAAAAAAAAMENT";
    await h.loader.upsert({ resourceId: ness, path: "a.md", chunks: ["kiwi"] }, 1_000);
    await h.loader.upsert({ resourceId: ment, path: "a.md", chunks: ["kiwi"] }, 1_000);
    h.db.exec("CREATE VIRTUAL TABLE temp.rid_vocab USING fts5vocab(main, chunks_fts, 'col')");
    const terms = h.db.prepare("SELECT term FROM temp.rid_vocab WHERE col = 'rid' ORDER BY term").pluck().all();
    expect(terms).toEqual([resourceToken(ment), resourceToken(ness)].sort());
    const rows = h.db
      .prepare("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?")
      .pluck()
      .all(`rid : "${resourceToken(ness)}"`);
    expect(rows).toHaveLength(1);
  });

  it("rebuild (incremental and full) keeps the answers identical", async () => {
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["one fish", "two fish"] }, 1_000);
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["red fish", "blue fish"] }, 1_500);
    const before = await h.backend.search(testView([A], { temporal: "all" }), "fish", opts);
    await h.store.reindexResource(A, false);
    expect(await h.backend.search(testView([A], { temporal: "all" }), "fish", opts)).toEqual(before);
    await h.store.reindexResource(A, true);
    expect(await h.backend.search(testView([A], { temporal: "all" }), "fish", opts)).toEqual(before);
  });
});
