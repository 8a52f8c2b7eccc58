import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { prng } from "../support/prng.js";
import { viewOver } from "../support/view-over.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { expectSameAnswers, withReaderConnection, zipfChunkText } from "./fts5-cache-checks.js";
import { testView } from "./text-corpus.js";

// The chunk row cache (ChunkRowCache) holds the rows keyword answers are made of: every answer must be the one
// read from SQLite row by row (the backend with the cache disabled), through every kind of write, and nothing
// erased may stay held.

const resource = (i: number) => `01JR${String(i).padStart(22, "0")}`;
const WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
const QUERIES = ["alpha", "theta", "beta gamma", "alpha beta gamma delta epsilon zeta eta theta", "nothing here"];

const chunkText = (rand: () => number) => zipfChunkText(rand, WORDS, 10, 2);

const uncached = (db: SqliteDatabase) => new Fts5TextBackend(db, undefined, undefined, undefined, undefined, 0);
const of = (ids: readonly string[], owner: string) =>
  viewOver(ids, { scopeId: "01JSC0PE000000000000000000", owner, projectNames: ["local/test"] });

const expectSame = (cached: Fts5TextBackend, fromSqlite: Fts5TextBackend, views: ScopedBackendView[], now: number) =>
  expectSameAnswers(cached, fromSqlite, views, QUERIES, [1, 7, 1000], now);

describe("Fts5TextBackend's chunk row cache", () => {
  let db: SqliteDatabase;
  let store: SqliteDocumentStore;
  beforeEach(() => {
    db = openSqliteDatabase(":memory:");
    store = new SqliteDocumentStore(db);
  });
  afterEach(() => db.close());

  it("answers as reading every row does, through uploads, new versions, deletions and erasures, at every temporal scope", async () => {
    const rand = prng(31);
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 30 }, (_, i) => resource(i));
    const cached = new Fts5TextBackend(db);
    const fromSqlite = uncached(db);
    const views = (temporal: "current" | "recent" | "all") => [
      testView(ids, { temporal }),
      testView(ids.slice(0, 4), { temporal }),
      testView(ids.slice(5, 25), { temporal, excludePaths: ["d*-1.md"] }),
    ];
    let at = 1_000;
    for (let round = 0; round < 6; round++) {
      for (const [r, id] of ids.entries()) {
        for (let d = 0; d < 3; d++) {
          const roll = rand();
          if (round > 0 && roll < 0.6) continue;
          if (round > 0 && roll < 0.7) await loader.remove(id, `d${r}-${d}.md`, at);
          else await loader.upsert({ resourceId: id, path: `d${r}-${d}.md`, chunks: [chunkText(rand), chunkText(rand)] }, at);
        }
        // A search between the writes of a round, so the cache holds rows the next writes change.
        if (r % 10 === 0) await expectSame(cached, fromSqlite, views("current"), at);
      }
      if (round > 1) await store.eraseResourceSlice(ids[round * 4], 10_000);
      at += 100;
      for (const temporal of ["current", "recent", "all"] as const) await expectSame(cached, fromSqlite, views(temporal), at);
    }
    // The cache answered (it held rows, and the last searches read fewer times than they searched).
    expect(cached.heldChunkRows.rows).toBeGreaterThan(0);
    const reads = cached.heldChunkRows.reads;
    await expectSame(cached, fromSqlite, views("current"), at);
    expect(cached.heldChunkRows.reads).toBe(reads);
  });

  it("holds nothing a publication changes: a search while an upload is staged, then after it is published", async () => {
    const A = resource(1);
    const loader = documentStoreLoader(store);
    // The old version ranks above the new one, so a stale "live" copy of it would win the URI.
    await loader.upsert({ resourceId: A, path: "a.md", chunks: ["needle needle needle"] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const fromSqlite = uncached(db);
    const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
    const view = testView([A]);
    let during: Awaited<ReturnType<Fts5TextBackend["search"]>> | undefined;
    let published: Promise<[unknown, unknown]> | undefined;
    await store.upsertDocuments(
      A,
      [{ path: "a.md", content: "x", metadata: {}, chunks: [{ text: "one needle among other words" }] }],
      1_500,
      {
        beforePublish: async () => {
          during = await cached.search(view, "needle", opts);
        },
        // Published, not yet settled (the write still under way): what was read before must not answer.
        afterPublish: () => {
          published = Promise.all([cached.search(view, "needle", opts), fromSqlite.search(view, "needle", opts)]);
        },
      },
    );
    expect(during!.hits.map((h) => h.chunk?.text)).toEqual(["needle needle needle"]);
    const [cachedThen, fromSqliteThen] = await published!;
    expect(cachedThen).toEqual(fromSqliteThen);
    const after = await cached.search(view, "needle", opts);
    expect(after.hits.map((h) => [h.chunk?.text, h.chunk?.supersededAt])).toEqual([["one needle among other words", null]]);
    expect(after).toEqual(await fromSqlite.search(view, "needle", opts));
    const all = testView([A], { temporal: "all" });
    expect(await cached.search(all, "needle", opts)).toEqual(await fromSqlite.search(all, "needle", opts));
  });

  it("drops an erased chunk's row, of every principal, before any search, and keeps the others", async () => {
    const loader = documentStoreLoader(store);
    const ids = [resource(1), resource(2)];
    for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: ["secret words here", "more words"] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const opts = { maxResults: 10, now: 2_000, recentWindowMs: 0 };
    await cached.search(of(ids, "tenant-a"), "words", opts);
    await cached.search(of(ids, "tenant-b"), "words", opts);
    expect(cached.heldChunkRows.rows).toBe(8);
    const { bytes } = cached.heldChunkRows;
    await store.eraseResourceSlice(ids[0], 1_000);
    // No search since: the erased chunks' text is held by no principal; the other resource's rows stay, each
    // principal's half of what it held.
    expect(cached.heldChunkRows).toMatchObject({ rows: 4, bytes: bytes / 2, principals: 2 });
    const reads = cached.heldChunkRows.reads;
    expect((await cached.search(of(ids, "tenant-a"), "secret", opts)).hits.map((h) => h.resourceId)).toEqual([ids[1]]);
    expect((await cached.search(of(ids, "tenant-b"), "more", opts)).hits.map((h) => h.resourceId)).toEqual([ids[1]]);
    expect(cached.heldChunkRows.reads).toBe(reads);
  });

  it("keeps the rows of every resource but the one written, whatever else the connection writes", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 4 }, (_, i) => resource(i));
    for (const id of ids)
      await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha beta ${id.slice(-2)}`, "alpha gamma"] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const fromSqlite = uncached(db);
    const opts = { maxResults: 10, now: 2_000, recentWindowMs: 0 };
    const others = testView(ids.slice(1));
    const all = testView(ids);
    await cached.search(all, "alpha", opts);
    const reads = cached.heldChunkRows.reads;
    // Another store's write on the same connection (a tier fragment, a registry row, a scope): nothing changes.
    db.exec("CREATE TABLE other_store (x INTEGER); INSERT INTO other_store VALUES (1)");
    expect(await cached.search(all, "alpha", opts)).toEqual(await fromSqlite.search(all, "alpha", opts));
    expect(cached.heldChunkRows.reads).toBe(reads);
    // A new version of resource 0's document: only its rows are read again.
    await loader.upsert({ resourceId: ids[0], path: "a.md", chunks: ["alpha delta", "alpha gamma"] }, 1_500);
    expect(await cached.search(others, "alpha", opts)).toEqual(await fromSqlite.search(others, "alpha", opts));
    expect(cached.heldChunkRows.reads).toBe(reads);
    for (const temporal of ["current", "all"] as const) {
      const v = testView(ids, { temporal });
      expect(await cached.search(v, "alpha", opts)).toEqual(await fromSqlite.search(v, "alpha", opts));
    }
    expect(cached.heldChunkRows.reads).toBeGreaterThan(reads);
    // A deletion of resource 1's document supersedes its rows: read again, and the answer follows.
    const before = cached.heldChunkRows.reads;
    await loader.remove(ids[1], "a.md", 1_600);
    expect(await cached.search(others, "alpha", opts)).toEqual(await fromSqlite.search(others, "alpha", opts));
    expect(cached.heldChunkRows.reads).toBe(before + 1);
    const recent = testView(ids, { temporal: "all" });
    expect(await cached.search(recent, "alpha", opts)).toEqual(await fromSqlite.search(recent, "alpha", opts));
  });

  it("holds each principal's rows apart: one principal's searches never warm another's", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 6 }, (_, i) => resource(i));
    for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha beta ${id.slice(-2)}`] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
    const a = await cached.search(of(ids, "tenant-a"), "alpha", opts);
    expect(cached.heldChunkRows).toMatchObject({ reads: 1, principals: 1 });
    await cached.search(of(ids, "tenant-a"), "alpha beta", opts);
    expect(cached.heldChunkRows.reads).toBe(1);
    // Another principal reads (and holds) its own, and gets the same answer.
    expect(await cached.search(of(ids, "tenant-b"), "alpha", opts)).toEqual(a);
    expect(cached.heldChunkRows).toMatchObject({ reads: 2, principals: 2 });
  });

  it("never holds more than its budget, evicting from the principal holding the most", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 40 }, (_, i) => resource(i));
    for (const [i, id] of ids.entries())
      await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha own${i}x ${"pad ".repeat(20)}`] }, 1_000);
    const budget = 8_192;
    const cached = new Fts5TextBackend(db, undefined, undefined, undefined, undefined, budget);
    const fromSqlite = uncached(db);
    const opts = { maxResults: 3, now: 2_000, recentWindowMs: 0 };
    await cached.search(of(ids, "quiet"), "own0x own1x", opts);
    const quiet = cached.heldChunkRows;
    expect(quiet.rows).toBe(2);
    // Another principal searches far past the budget.
    for (let i = 0; i < ids.length; i++) {
      const q = `own${i}x alpha`;
      expect(await cached.search(of(ids, "flooder"), q, opts)).toEqual(await fromSqlite.search(of(ids, "flooder"), q, opts));
      expect(cached.heldChunkRows.bytes).toBeLessThanOrEqual(budget);
    }
    expect(cached.heldChunkRows.rows).toBeGreaterThan(quiet.rows);
    // The quiet principal's rows are still held: its next search reads nothing.
    const reads = cached.heldChunkRows.reads;
    expect(await cached.search(of(ids, "quiet"), "own1x own0x", opts)).toEqual(
      await fromSqlite.search(of(ids, "quiet"), "own1x own0x", opts),
    );
    expect(cached.heldChunkRows.reads).toBe(reads);
  });

  it("on a connection of its own, reads the rows again after another connection's commit", async () => {
    const ids = Array.from({ length: 5 }, (_, i) => resource(i));
    await withReaderConnection(
      "acms-chunk-rows-reader-",
      async ({ loader }) => {
        for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id.slice(-2)} beta`] }, 1_000);
      },
      async ({ store: writer, loader, readerDb }) => {
        const reader = new Fts5TextBackend(readerDb);
        const fromSqlite = uncached(readerDb);
        const view = testView(ids);
        const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
        await reader.search(view, "alpha beta", opts);
        for (const write of [
          () => loader.upsert({ resourceId: ids[3], path: "a.md", chunks: ["alpha beta beta beta"] }, 1_100),
          () => loader.remove(ids[1], "a.md", 1_200),
          () => writer.eraseResourceSlice(ids[2], 1_000),
        ]) {
          const reads = reader.heldChunkRows.reads;
          await write();
          expect(await reader.search(view, "alpha beta", opts)).toEqual(await fromSqlite.search(view, "alpha beta", opts));
          expect(reader.heldChunkRows.reads).toBe(reads + 1);
        }
      },
    );
  });
});
