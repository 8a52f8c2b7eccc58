import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { KeywordRows } from "../../src/adapters/sqlite/keyword-rows.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { prng } from "../support/prng.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { expectSameAnswers, withReaderConnection, zipfChunkText } from "./fts5-cache-checks.js";
import { testView } from "./text-corpus.js";
import { viewOver } from "../support/view-over.js";

// The posting cache (KeywordPostings) ranks whole-index and large-scope searches instead of FTS5: every
// answer must be the one FTS5 gives (the backend with the cache disabled), scores bit for bit, through
// every kind of write.

const resource = (i: number) => `01JP${String(i).padStart(22, "0")}`;
const WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"];

/** A chunk of Zipf-like words (the first words common, the last rare), some repeated. */
const chunkText = (rand: () => number) => zipfChunkText(rand, WORDS, 12, 2.5);

const QUERIES = [
  "alpha",
  "mu",
  "lambda kappa",
  "beta gamma delta",
  "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu",
  "nothing here",
  "mu mu theta",
];

const expectSame = (cached: Fts5TextBackend, inFts5: Fts5TextBackend, views: ScopedBackendView[], now: number) =>
  expectSameAnswers(cached, inFts5, views, QUERIES, [1, 4, 30, 1000], now);

describe("Fts5TextBackend's posting cache", () => {
  let db: SqliteDatabase;
  let store: SqliteDocumentStore;
  beforeEach(() => {
    db = openSqliteDatabase(":memory:");
    store = new SqliteDocumentStore(db);
  });
  afterEach(() => db.close());

  it("ranks as FTS5 does, bit for bit, through uploads, new versions, deletions and erasures, at every scope and temporal scope", async () => {
    const rand = prng(29);
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 60 }, (_, i) => resource(i));
    const cached = new Fts5TextBackend(db);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    const views = (temporal: "current" | "recent" | "all") => [
      testView(ids, { temporal }), // every resource: the whole index
      testView(ids.slice(0, 50), { temporal }), // most of it, by chunk keys
      testView(ids.slice(10, 30), { temporal }), // a band of it
      testView(
        ids.slice(5, 45).filter((_, i) => i % 3 !== 0),
        { temporal },
      ), // a band with holes
      testView(ids.slice(0, 3), { temporal }), // named in the MATCH
    ];
    let at = 1_000;
    for (let round = 0; round < 5; round++) {
      for (const [r, id] of ids.entries()) {
        for (let d = 0; d < 3; d++) {
          const roll = rand();
          if (round > 0 && roll < 0.6) continue;
          if (round > 0 && roll < 0.7) await loader.remove(id, `d${r}-${d}.md`, at);
          else await loader.upsert({ resourceId: id, path: `d${r}-${d}.md`, chunks: [chunkText(rand), chunkText(rand)] }, at);
        }
      }
      // An erasure removes keyword rows (a deletion only supersedes them).
      if (round > 1) await store.eraseResourceSlice(ids[round * 7], 10_000);
      at += 100;
      for (const temporal of ["current", "recent", "all"] as const) await expectSame(cached, inFts5, views(temporal), at);
    }
    // The cache did rank (and held what it read).
    expect(cached.heldPostingCache.reads).toBeGreaterThan(0);
    expect(cached.heldPostingCache.terms).toBeGreaterThan(0);
  });

  it("reads only the rows added since for a term it holds, and marks the rows removed since without reading again", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 10 }, (_, i) => resource(i));
    for (const [i, id] of ids.entries())
      await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha beta ${"gamma ".repeat(i)}`] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    const view = testView(ids);
    const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
    const same = async (q: string) => expect(await cached.search(view, q, opts)).toEqual(await inFts5.search(view, q, opts));
    await cached.search(view, "alpha gamma", opts);
    const first = cached.heldPostingCache;
    expect(first.terms).toBe(2);
    // Held: searching again reads nothing.
    await cached.search(view, "gamma alpha", opts);
    expect(cached.heldPostingCache.reads).toBe(first.reads);
    // An upload: each term reads the rows after its last, and holds one posting more (16 bytes).
    await loader.upsert(
      { resourceId: ids[0], path: "b.md", chunks: ["alpha gamma gamma gamma gamma gamma gamma gamma gamma gamma gamma"] },
      1_100,
    );
    await same("alpha gamma");
    expect(cached.heldPostingCache.reads).toBe(first.reads + 2);
    expect(cached.heldPostingCache.bytes).toBe(first.bytes + 2 * 16);
    // A removal (an erasure of a resource): its rows are marked in the lists holding them, nothing is read.
    await store.eraseResourceSlice(ids[3], 1_000);
    await same("alpha gamma");
    await same("gamma");
    expect(cached.heldPostingCache).toMatchObject({ terms: 2, reads: first.reads + 2, bytes: first.bytes + 2 * 16 });
    // Once the marked rows are a quarter of a list (3 of alpha's 11 rows, of gamma's 10) they leave it.
    await store.eraseResourceSlice(ids[4], 1_000);
    await store.eraseResourceSlice(ids[5], 1_000);
    await same("alpha gamma");
    expect(cached.heldPostingCache).toMatchObject({ terms: 2, reads: first.reads + 2, bytes: first.bytes + 2 * 16 - 2 * 3 * 16 });
    await same("gamma alpha");
  });

  it("drops what it holds when a deletion it was told of rolls back", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 6 }, (_, i) => resource(i));
    for (const [i, id] of ids.entries())
      await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${"beta ".repeat(i + 1)}`] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    const view = testView(ids);
    const opts = { maxResults: 10, now: 2_000, recentWindowMs: 0 };
    await cached.search(view, "alpha beta", opts);
    const reads = cached.heldPostingCache.reads;
    // A transaction deletes a keyword row (through KeywordRows, as every write does), then fails.
    const row = db.prepare("SELECT max(rowid) FROM chunks_fts").pluck().get() as number;
    const rows = new KeywordRows(db);
    expect(() =>
      db.transaction(() => {
        rows.delete(row);
        throw new Error("a later statement failed");
      })(),
    ).toThrow("a later statement failed");
    // The row is still there: it is ranked, read again from FTS5.
    const answer = await cached.search(view, "alpha beta", opts);
    expect(answer).toEqual(await inFts5.search(view, "alpha beta", opts));
    expect(answer.hits).toHaveLength(6);
    expect(cached.heldPostingCache.reads).toBe(reads + 2);
  });

  it("holds each principal's postings apart: one principal's searches never warm another's", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 10 }, (_, i) => resource(i));
    for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha beta ${id.slice(-2)}`] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const of = (owner: string) => viewOver(ids, { scopeId: "01JSC0PE000000000000000000", owner, projectNames: ["local/test"] });
    const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
    const a = await cached.search(of("tenant-a"), "alpha beta", opts);
    const afterA = cached.heldPostingCache.reads;
    expect(afterA).toBe(2);
    await cached.search(of("tenant-a"), "beta alpha", opts);
    expect(cached.heldPostingCache.reads).toBe(afterA);
    // Another principal reads (and holds) its own, and gets the same answer.
    expect(await cached.search(of("tenant-b"), "alpha beta", opts)).toEqual(a);
    expect(cached.heldPostingCache.reads).toBe(afterA + 2);
    expect(cached.heldPostingCache.terms).toBe(4);
  });

  it("past its budget, evicts from the principal holding the most: a principal searching many words never evicts one holding less", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 40 }, (_, i) => resource(i));
    // "alpha" and "beta" in every row; one word of its own in each.
    for (const [i, id] of ids.entries()) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha beta own${i}x`] }, 1_000);
    const budget = 4_096;
    const cached = new Fts5TextBackend(db, undefined, undefined, undefined, budget);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    const of = (owner: string) => viewOver(ids, { scopeId: "01JSC0PE000000000000000000", owner, projectNames: ["local/test"] });
    const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
    await cached.search(of("quiet"), "alpha beta", opts);
    const quiet = cached.heldPostingCache;
    expect(quiet.terms).toBe(2);
    // Another principal searches forty words of its own, far past the budget.
    for (let i = 0; i < ids.length; i++) {
      const q = `own${i}x`;
      expect(await cached.search(of("flooder"), q, opts)).toEqual(await inFts5.search(of("flooder"), q, opts));
      expect(cached.heldPostingCache.bytes).toBeLessThanOrEqual(budget);
    }
    // The quiet principal's two words are still held: its next search reads nothing.
    const reads = cached.heldPostingCache.reads;
    expect(await cached.search(of("quiet"), "beta alpha", opts)).toEqual(await inFts5.search(of("quiet"), "beta alpha", opts));
    expect(cached.heldPostingCache.reads).toBe(reads);
  });

  it("never holds more than its budget, and ranks in FTS5 what it cannot hold", async () => {
    const rand = prng(7);
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 30 }, (_, i) => resource(i));
    for (const [r, id] of ids.entries()) {
      for (let d = 0; d < 6; d++) await loader.upsert({ resourceId: id, path: `${r}-${d}.md`, chunks: [chunkText(rand)] }, 1_000);
    }
    const budget = 2_048;
    const cached = new Fts5TextBackend(db, undefined, undefined, undefined, budget);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    for (const query of [...QUERIES, ...WORDS]) {
      const opts = { maxResults: 10, now: 2_000, recentWindowMs: 0 };
      for (const view of [testView(ids), testView(ids.slice(0, 25))]) {
        expect(await cached.search(view, query, opts)).toEqual(await inFts5.search(view, query, opts));
        expect(cached.heldPostingCache.bytes).toBeLessThanOrEqual(budget);
      }
    }
    // The rare terms fit (and were held); "alpha" (in most rows) never does.
    expect(cached.heldPostingCache.reads).toBeGreaterThan(0);
  });

  it("keeps a whole tie at the cut, as FTS5's ranking pass does", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 40 }, (_, i) => resource(i));
    for (const id of ids) {
      for (let d = 0; d < 8; d++)
        await loader.upsert({ resourceId: id, path: `t/${d}.md`, chunks: ["alpha beta", d % 2 ? "alpha" : "beta"] }, 1_000);
    }
    const cached = new Fts5TextBackend(db);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    for (const view of [testView(ids), testView(ids.slice(0, 36))]) {
      for (const maxResults of [1, 3, 17, 120, 200, 1000]) {
        const opts = { maxResults, now: 2_000, recentWindowMs: 0 };
        const got = await cached.search(view, "alpha beta", opts);
        expect(got).toEqual(await inFts5.search(view, "alpha beta", opts));
        expect(got.hits.length).toBe(Math.min(maxResults, view.resourceIds.length * 16));
      }
    }
    expect(cached.heldPostingCache.terms).toBe(2);
  });

  it("ranks in FTS5 a scope whose rows are spread far apart among many others", async () => {
    const loader = documentStoreLoader(store);
    const ids = Array.from({ length: 200 }, (_, i) => resource(i));
    for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: ["alpha beta"] }, 1_000);
    const cached = new Fts5TextBackend(db);
    const inFts5 = new Fts5TextBackend(db, undefined, undefined, undefined, 0);
    // Two resources at either end: their keys span the whole index, 100 rows for each of theirs.
    const view = testView([ids[0], ids[199]]);
    const opts = { maxResults: 10, now: 2_000, recentWindowMs: 0 };
    expect(await cached.search(view, "alpha", opts)).toEqual(await inFts5.search(view, "alpha", opts));
    expect(cached.heldPostingCache.reads).toBe(0);
  });

  it("on a connection of its own, drops what it holds after another connection's commit", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => resource(i));
    await withReaderConnection(
      "acms-postings-reader-",
      async ({ loader }) => {
        for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id.slice(-2)} beta`] }, 1_000);
      },
      async ({ store, loader, readerDb }) => {
        const reader = new Fts5TextBackend(readerDb);
        const inFts5 = new Fts5TextBackend(readerDb, undefined, undefined, undefined, 0);
        const view = testView(ids);
        const opts = { maxResults: 5, now: 2_000, recentWindowMs: 0 };
        await reader.search(view, "alpha beta", opts);
        expect(reader.heldPostingCache.terms).toBe(2);
        for (const write of [
          () => loader.upsert({ resourceId: ids[3], path: "b.md", chunks: ["alpha alpha alpha"] }, 1_100),
          () => loader.remove(ids[5], "a.md", 1_200),
          () => store.eraseResourceSlice(ids[6], 1_000),
          () => loader.upsert({ resourceId: ids[3], path: "b.md", chunks: ["beta"] }, 1_300),
        ]) {
          await write();
          const got = await reader.search(view, "alpha beta", opts);
          expect(got).toEqual(await inFts5.search(view, "alpha beta", opts));
        }
        expect((await reader.search(view, "alpha", opts)).hits.map((x) => x.path)).not.toContain("b.md");
      },
    );
  });
});
