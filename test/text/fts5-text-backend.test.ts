import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { resourceToken, SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import {
  Fts5TextBackend,
  RID_MATCH_MAX_RESOURCES,
  rankedSearchSql,
  SCOPE_KEYS_CACHE_VIEWS,
  scopedMatch,
  scoreParams,
} from "../../src/adapters/sqlite/fts5-text-backend.js";
import { queryTerms } from "../../src/adapters/sqlite/fts5-match-query.js";
import { docsizeTokens, KeywordRows } from "../../src/adapters/sqlite/keyword-rows.js";
import { normaliseBm25 } from "../../src/domain/bm25-normalise.js";
import type { TextBackend } from "../../src/ports/text-backend.js";
import { prng } from "../support/prng.js";
import { runTextBackendSuite, type TextBackendHarness } from "./text-backend-suite.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { withReaderConnection } from "./fts5-cache-checks.js";
import { testView } from "./text-corpus.js";
import { viewOver } from "../support/view-over.js";

/** The FTS5 adapter with its loader: documents go in through SqliteDocumentStore, like the server's. */
/**
 * `topKMaxRows`: the ranking pass's cap (past it, the counts alone and a ranking statement of their own);
 * `postingsCacheBytes`: the posting cache's budget (0: every ranking in FTS5); `chunkRowCacheBytes`: the
 * chunk row cache's (0: every row read from SQLite).
 */
function createFts5Harness(
  topKMaxRows?: number,
  postingsCacheBytes?: number,
  chunkRowCacheBytes?: number,
): TextBackendHarness & { db: SqliteDatabase; store: SqliteDocumentStore } {
  const db = openSqliteDatabase(":memory:");
  const store = new SqliteDocumentStore(db);
  const backend = new Fts5TextBackend(db, topKMaxRows, undefined, undefined, postingsCacheBytes, chunkRowCacheBytes);
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

runTextBackendSuite({ name: "fts5", create: () => createFts5Harness() });
// Every ranking in FTS5 (whole-index and large scopes rank on the posting cache by default).
runTextBackendSuite({ name: "fts5 without the posting cache", golden: "fts5", create: () => createFts5Harness(undefined, 0) });
// A posting cache too small to hold most terms (those searches rank in FTS5) and evicting the rest.
runTextBackendSuite({ name: "fts5 with a posting cache of 4 KiB", golden: "fts5", create: () => createFts5Harness(undefined, 4096) });
// Every search past the one-pass ranking's cap (one matched row): counted by the pass, ranked by acms_bm25.
runTextBackendSuite({ name: "fts5 past the ranking pass's cap", golden: "fts5", create: () => createFts5Harness(1, 0) });
// Every row of every answer read from SQLite; and a chunk row cache of 2 KiB, evicting nearly everything it reads.
runTextBackendSuite({ name: "fts5 without the chunk row cache", golden: "fts5", create: () => createFts5Harness(undefined, undefined, 0) });
runTextBackendSuite({
  name: "fts5 with a chunk row cache of 2 KiB",
  golden: "fts5",
  create: () => createFts5Harness(undefined, undefined, 2048),
});

/**
 * A scope's BM25 statistics counted here from FTS5's own tables, independently of the adapter's counters and
 * its counting pass: the scope's keyword rows, their tokens (FTS5's docsize records) and each term's rows.
 */
function scopeStatistics(db: SqliteDatabase, scope: readonly string[], query: string) {
  const rid = `rid : (${scope.map((id) => `"${resourceToken(id)}"`).join(" OR ")})`;
  const keys = db.prepare("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?").pluck().all(rid) as number[];
  const size = db.prepare("SELECT sz FROM chunks_fts_docsize WHERE id = ?").pluck();
  const tokens = keys.reduce((sum, key) => sum + docsizeTokens(size.get(key) as Buffer), 0);
  const count = db.prepare("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?").pluck();
  const phraseRows = queryTerms(query).map((t) => count.get(`body : "${t}" AND ${rid}`) as number);
  const whole = keys.length === (db.prepare("SELECT count(*) FROM chunks_fts").pluck().get() as number);
  return { rows: keys.length, tokens, phraseRows, whole };
}

describe("Fts5TextBackend specifics", () => {
  const opts = { maxResults: 20, now: 2_000, recentWindowMs: 1_000 };
  const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
  const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
  let h: ReturnType<typeof createFts5Harness>;
  beforeEach(() => {
    h = createFts5Harness();
  });
  afterEach(() => h.close());

  it("reads a view's totals again after every keyword write of its resources (upload, supersession or deletion)", async () => {
    const view = testView([A, B]);
    const fresh = () => new Fts5TextBackend(h.db).search(view, "alpha", opts);
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta", "gamma delta"] }, 1_000);
    await h.loader.upsert({ resourceId: "01JCCCCCCCCCCCCCCCCCCCCCCC", path: "c.md", chunks: ["alpha"] }, 1_000);
    const first = await h.backend.search(view, "alpha", opts);
    expect(first).toEqual(await fresh());
    const writes: Array<() => unknown> = [
      () => h.loader.upsert({ resourceId: B, path: "b.md", chunks: ["alpha alpha delta epsilon zeta"] }, 1_100),
      () => h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta beta beta beta", "gamma"] }, 1_200),
      () => h.loader.remove(B, "b.md", 1_300),
      () => h.loader.upsert({ resourceId: A, path: "x.md", chunks: ["eta theta iota kappa lambda mu"] }, 1_400),
    ];
    let before = first;
    for (const write of writes) {
      await write();
      const after = await h.backend.search(view, "alpha", opts);
      expect(after).toEqual(await fresh());
      expect(after.hits.map((x) => x.score)).not.toEqual(before.hits.map((x) => x.score));
      before = after;
    }
  });

  it("on a connection of its own, reads a view's totals and chunk keys again after another connection's commit", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `01JW${String(i).padStart(22, "0")}`);
    await withReaderConnection(
      "acms-fts5-reader-",
      async ({ loader }) => {
        for (const id of ids) await loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id.slice(-3)} beta`] }, 1_000);
      },
      async ({ loader, readerDb }) => {
        // 35 of 40 resources: the ranking pass keeps to the scope's chunk keys (held per view).
        const view = testView(ids.slice(0, 35));
        const reader = new Fts5TextBackend(readerDb);
        const first = await reader.search(view, "alpha", opts);
        expect(first.hits).toHaveLength(20);
        await loader.upsert({ resourceId: ids[0], path: "b.md", chunks: ["alpha alpha alpha"] }, 1_100);
        await loader.upsert({ resourceId: ids[39], path: "b.md", chunks: ["alpha gamma"] }, 1_100);
        const after = await reader.search(view, "alpha", opts);
        expect(after).toEqual(await new Fts5TextBackend(readerDb).search(view, "alpha", opts));
        expect(after.hits[0].path).toBe("b.md");
        expect(after.hits.map((x) => x.score)).not.toEqual(first.hits.map((x) => x.score));
      },
    );
  });

  it("tells a scope holding the whole index from one that no longer does after any keyword write, this connection's or another's", async () => {
    // A scope holding every row searches unfiltered with the index's own totals, which the adapter holds until
    // a keyword write: held a write too long, the scope would be taken for the whole index and answer C's rows.
    const C = "01JCCCCCCCCCCCCCCCCCCCCCCC";
    const view = testView([A, B]);
    const expectScoped = async (backend: TextBackend, db: SqliteDatabase, withC: boolean) => {
      const answer = await backend.search(view, "alpha", opts);
      expect(answer).toEqual(await new Fts5TextBackend(db).search(view, "alpha", opts));
      expect(answer.hits.map((x) => x.resourceId).sort()).toEqual([A, B]);
      expect((await backend.search(testView([A, B, C]), "alpha", opts)).hits).toHaveLength(withC ? 3 : 2);
    };
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta"] }, 1_000);
    await h.loader.upsert({ resourceId: B, path: "b.md", chunks: ["alpha gamma delta"] }, 1_000);
    await expectScoped(h.backend, h.db, false);
    await h.loader.upsert({ resourceId: C, path: "c.md", chunks: ["alpha alpha"] }, 1_100);
    await expectScoped(h.backend, h.db, true);
    await h.loader.remove(C, "c.md", 1_200);
    await expectScoped(h.backend, h.db, false);
    await withReaderConnection(
      "acms-fts5-whole-",
      async ({ loader }) => {
        await loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta"] }, 1_000);
        await loader.upsert({ resourceId: B, path: "b.md", chunks: ["alpha gamma delta"] }, 1_000);
      },
      async ({ loader, readerDb }) => {
        const reader = new Fts5TextBackend(readerDb);
        await expectScoped(reader, readerDb, false);
        await loader.upsert({ resourceId: C, path: "c.md", chunks: ["alpha alpha"] }, 1_100);
        await expectScoped(reader, readerDb, true);
        await loader.remove(C, "c.md", 1_200);
        await expectScoped(reader, readerDb, false);
      },
    );
  });

  it("answers nothing, without failing, for a large scope whose keyword rows no chunk backs", async () => {
    // Keyword rows a crash of an older version could leave (no chunk row): counted in the scope's totals,
    // never answered; a scope of 40 resources keeps to its chunk keys, of which there are none.
    const ids = Array.from({ length: 40 }, (_, i) => `01JS${String(i).padStart(22, "0")}`);
    const rows = new KeywordRows(h.db);
    ids.forEach((id, i) => rows.insert(2_000_000_000 + i, "alpha stray", resourceToken(id)));
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha"] }, 1_000);
    expect(await h.backend.search(testView(ids), "alpha", opts)).toEqual({ hits: [], exhaustive: true });
    expect((await h.backend.search(testView([A, ...ids]), "alpha", opts)).hits.map((x) => x.path)).toEqual(["a.md"]);
  });

  it("reads a scope's chunk keys again after a keyword write of one of its resources, never after another's", async () => {
    const ids = Array.from({ length: 41 }, (_, i) => `01JV${String(i).padStart(22, "0")}`);
    for (const id of ids) await h.loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id}`] }, 1_000);
    const backend = h.backend as Fts5TextBackend;
    const view = testView(ids.slice(0, 40));
    const fresh = () => new Fts5TextBackend(h.db).search(view, "alpha", opts);
    await backend.search(view, "alpha", opts);
    const reads = backend.heldScopeKeys.reads;
    // Another tenant's upload: the scope's keys and totals stand.
    await h.loader.upsert({ resourceId: ids[40], path: "b.md", chunks: ["alpha beta"] }, 1_100);
    expect(await backend.search(view, "alpha", opts)).toEqual(await fresh());
    expect(backend.heldScopeKeys.reads).toBe(reads);
    // An upload to one of the scope's resources: read again, and the new chunk is found.
    await h.loader.upsert({ resourceId: ids[3], path: "b.md", chunks: ["alpha alpha alpha"] }, 1_200);
    const after = await backend.search(view, "alpha", opts);
    expect(after).toEqual(await fresh());
    expect(after.hits[0].path).toBe("b.md");
    expect(backend.heldScopeKeys.reads).toBe(reads + 1);
  });

  it("holds the chunk keys of at most SCOPE_KEYS_CACHE_VIEWS scopes, the least recently used let go first", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `01JK${String(i).padStart(22, "0")}`);
    for (const id of ids) await h.loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id}`] }, 1_000);
    // A different set of the 40 resources for each i (the bits of i leave out some of the first eleven).
    const scopeOf = (i: number) => ids.filter((_, k) => k >= 11 || ((i >> k) & 1) === 0);
    const first = testView(scopeOf(2047));
    const answer = await h.backend.search(first, "alpha", opts);
    for (let i = 1; i <= SCOPE_KEYS_CACHE_VIEWS + 50; i++) {
      const got = await h.backend.search(testView(scopeOf(i)), "alpha", opts);
      expect(got.hits.length).toBeGreaterThan(0);
      expect((h.backend as Fts5TextBackend).heldScopeKeys.views).toBeLessThanOrEqual(SCOPE_KEYS_CACHE_VIEWS);
    }
    expect((h.backend as Fts5TextBackend).heldScopeKeys.views).toBe(SCOPE_KEYS_CACHE_VIEWS);
    // The first view's keys were let go; asked again, they are read again, the answer the same.
    expect(await h.backend.search(first, "alpha", opts)).toEqual(answer);
  });

  it("holds each principal's scope keys apart: another principal's scopes neither warm nor evict them", async () => {
    // 40 resources of 41: a scope of the whole index would need no keys.
    const all = Array.from({ length: 41 }, (_, i) => `01JP${String(i).padStart(22, "0")}`);
    for (const id of all) await h.loader.upsert({ resourceId: id, path: "a.md", chunks: [`alpha ${id}`] }, 1_000);
    const ids = all.slice(0, 40);
    const backend = h.backend as Fts5TextBackend;
    const as = (owner: string, resources: readonly string[]) =>
      viewOver(resources, { scopeId: "01JSC0PE000000000000000000", owner, projectNames: ["local/test"] });
    const quiet = as("quiet", ids);
    const answer = await backend.search(quiet, "alpha", opts);
    const reads = backend.heldScopeKeys.reads;
    // The same resource list for another principal: read again (one principal's searches never make another's faster).
    expect(await backend.search(as("other", ids), "alpha", opts)).toEqual(answer);
    expect(backend.heldScopeKeys).toMatchObject({ reads: reads + 1, principals: 2 });
    // Another principal searches more scopes than are held at once: it gives up its own, never the quiet one's.
    const scopeOf = (i: number) => ids.filter((_, k) => k >= 11 || ((i >> k) & 1) === 0);
    for (let i = 1; i <= SCOPE_KEYS_CACHE_VIEWS + 50; i++) {
      await backend.search(as("flooder", scopeOf(i)), "alpha", opts);
      expect(backend.heldScopeKeys.views).toBeLessThanOrEqual(SCOPE_KEYS_CACHE_VIEWS);
    }
    const before = backend.heldScopeKeys.reads;
    expect(await backend.search(quiet, "alpha", opts)).toEqual(answer);
    expect(backend.heldScopeKeys.reads).toBe(before);
  });

  it("stems English words (porter)", async () => {
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["The runner was running quickly"] }, 1_000);
    const { hits } = await h.backend.search(testView([A]), "runs", opts);
    expect(hits.length).toBe(1);
  });

  it("gives a chunk the score its scope's rows give it, whatever the scope's size or mode", async () => {
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["alpha beta gamma", "beta only here", "gamma and more words"] }, 1_000);
    await h.loader.upsert({ resourceId: B, path: "b.md", chunks: ["alpha alpha delta", "alpha again"] }, 1_000);
    const many = Array.from({ length: RID_MATCH_MAX_RESOURCES + 5 }, (_, i) => `01JC${String(i).padStart(22, "0")}`);
    // Resources without rows add nothing to the statistics: a scope of 1 (rid in the MATCH) and of 38 (the join) agree.
    const small = await h.backend.search(testView([A]), "alpha beta", opts);
    const large = await h.backend.search(testView([A, ...many]), "alpha beta", opts);
    expect(small.hits).toEqual(large.hits);
    // B's rows are in [A, B]'s statistics (bm25() over the whole table: alpha is in 3 of 5 rows) and not in [A]'s (1 of 3).
    const both = await h.backend.search(testView([A, B, ...many]), "alpha beta", opts);
    const whole = h.db
      .prepare("SELECT rowid, bm25(chunks_fts, 1.0, 0.0) AS r FROM chunks_fts WHERE chunks_fts MATCH ?")
      .all('body : ("alpha" OR "beta")') as Array<{ rowid: number; r: number }>;
    for (const hit of both.hits) expect(hit.score).toBe(normaliseBm25(-whole.find((w) => w.rowid === hit.chunkKey)!.r));
    const aOfBoth = both.hits.find((x) => x.chunkKey === small.hits[0].chunkKey)!;
    expect(aOfBoth.score).not.toBe(small.hits[0].score);
    const alone = createFts5Harness();
    try {
      await alone.loader.upsert(
        { resourceId: A, path: "a.md", chunks: ["alpha beta gamma", "beta only here", "gamma and more words"] },
        1_000,
      );
      const own = await alone.backend.search(testView([A]), "alpha beta", opts);
      expect(small.hits.map((x) => x.score)).toEqual(own.hits.map((x) => x.score));
    } finally {
      alone.close();
    }
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
  it("breaks a tie at the cut by UKO URI, whatever order the index ranks tied rows in", async () => {
    // Forty identical chunks score alike; written last-path-first, so the index meets them in the reverse of URI order.
    for (let i = 39; i >= 0; i--) {
      await h.loader.upsert({ resourceId: A, path: `p${String(i).padStart(2, "0")}.md`, chunks: ["tied words here"] }, 1_000);
    }
    const { hits, exhaustive } = await h.backend.search(testView([A]), "tied", { ...opts, maxResults: 3 });
    expect(hits.map((x) => x.path)).toEqual(["p00.md", "p01.md", "p02.md"]);
    expect(exhaustive).toBe(false);
  });

  it("finds the live version when superseded versions rank above it", async () => {
    for (let v = 0; v < 10; v++) {
      await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["needle needle needle needle"] }, 1_000 + v);
      await h.loader.upsert({ resourceId: A, path: `other${v}.md`, chunks: ["hay"] }, 1_000 + v);
    }
    await h.loader.upsert({ resourceId: A, path: "a.md", chunks: ["one needle in a long line of words and more words"] }, 1_100);
    const { hits, exhaustive } = await h.backend.search(testView([A]), "needle", { ...opts, maxResults: 1 });
    expect(hits.map((x) => [x.path, x.chunk?.supersededAt])).toEqual([["a.md", null]]);
    expect(exhaustive).toBe(true);
    // Under `all` a URI answers with its best-ranked version: here a superseded one.
    const all = await h.backend.search(testView([A], { temporal: "all" }), "needle", { ...opts, maxResults: 1 });
    expect(all.hits[0].chunk?.text).toBe("needle needle needle needle");
    expect(all.hits[0].chunk?.supersededAt).not.toBeNull();
  });

  it("never answers from an upload not yet published, even when its rows rank first", async () => {
    await h.loader.upsert({ resourceId: A, path: "live.md", chunks: ["needle among many other plain words"] }, 1_000);
    let during: Awaited<ReturnType<Fts5TextBackend["search"]>> | undefined;
    const staged = Array.from({ length: 30 }, (_, i) => ({
      path: `staged${i}.md`,
      content: "needle needle needle",
      metadata: {},
      chunks: [{ text: "needle needle needle" }],
    }));
    await h.store.upsertDocuments(A, staged, 1_500, {
      beforePublish: async () => {
        during = await h.backend.search(testView([A]), "needle", { ...opts, maxResults: 1 });
      },
    });
    expect(during!.hits.map((x) => x.path)).toEqual(["live.md"]);
    expect(during!.exhaustive).toBe(true);
  });

  it("answers as the one-statement ranking does, at every scope size, temporal scope and path filter", async () => {
    const rand = prng(5);
    const words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"];
    const ids = Array.from({ length: RID_MATCH_MAX_RESOURCES + 8 }, (_, i) => `01JR${String(i).padStart(22, "0")}`);
    for (let round = 0; round < 3; round++) {
      for (const [r, id] of ids.entries()) {
        for (let d = 0; d < 4; d++) {
          if (round > 0 && rand() < 0.5) continue;
          const text = Array.from({ length: 3 + Math.floor(rand() * 6) }, () => words[Math.floor(rand() * words.length)]).join(" ");
          await h.loader.upsert(
            { resourceId: id, path: `${d % 2 ? "src" : "docs"}/${r}-${d}.md`, chunks: [text, `${text} beta`] },
            1_000 + round * 100,
          );
        }
      }
    }
    const now = 1_250;
    const capped = new Fts5TextBackend(h.db, 3, undefined, undefined, 0);
    const inFts5 = new Fts5TextBackend(h.db, undefined, undefined, undefined, 0);
    for (const scope of [ids.slice(0, 1), ids.slice(0, 5), ids.slice(0, RID_MATCH_MAX_RESOURCES + 4), ids]) {
      for (const temporal of ["current", "recent", "all"] as const) {
        for (const excludePaths of [[], ["src/**"]]) {
          const view = testView(scope, { temporal, excludePaths });
          for (const query of ["alpha", "beta gamma", "theta zeta eta delta"]) {
            for (const maxResults of [1, 7, 500]) {
              const got = await h.backend.search(view, query, { maxResults, now, recentWindowMs: 200 });
              // Past the ranking pass's cap the answer is the same.
              expect(await capped.search(view, query, { maxResults, now, recentWindowMs: 200 })).toEqual(got);
              // And ranked in FTS5 rather than on the posting cache.
              expect(await inFts5.search(view, query, { maxResults, now, recentWindowMs: 200 })).toEqual(got);
              const ridInMatch = scope.length <= RID_MATCH_MAX_RESOURCES;
              const stats = scopeStatistics(h.db, scope, query);
              const rows = h.db.prepare(rankedSearchSql(temporal, ridInMatch, stats.whole ? undefined : stats.phraseRows.length)).all({
                match: scopedMatch(query, scope, ridInMatch),
                rids: JSON.stringify(scope),
                cutoff: now - 200,
                limit: 100_000,
                offset: 0,
                ...(stats.whole ? {} : scoreParams(stats, stats.phraseRows)),
              }) as Array<{
                uko_uri: string;
                path: string;
                bm25_rank: number;
              }>;
              const seen = new Set<string>();
              const expected = rows.filter((r) => {
                if (seen.has(r.uko_uri)) return false;
                seen.add(r.uko_uri);
                return !(excludePaths.length > 0 && r.path.startsWith("src/"));
              });
              expect(got.hits.map((x) => x.chunk?.ukoUri)).toEqual(expected.slice(0, maxResults).map((r) => r.uko_uri));
              expect(got.hits.map((x) => x.score)).toEqual(expected.slice(0, maxResults).map((r) => normaliseBm25(-r.bm25_rank)));
              // Exhaustive: fewer answers than asked, or the last answer is the last row ranked (as before).
              const lastRow = expected.length === maxResults && rows[rows.length - 1] === expected[maxResults - 1];
              expect(got.exhaustive).toBe(expected.length < maxResults || lastRow);
            }
          }
        }
      }
    }
  });

  it("ranks long rows of every length for long queries exactly as the one-statement ranking (rows' lengths read only where they may rank)", async () => {
    // The ranking pass bounds each row's rank with the least length its term counts allow and reads the
    // length only of rows whose bound may reach the cut: rows long and short, holding many of the query's
    // terms or few, in scopes of one resource, some and all, must rank exactly as acms_bm25 ranks them all.
    const rand = prng(11);
    const vocabulary = Array.from(
      { length: 60 },
      (_, i) => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`,
    );
    const ids = Array.from({ length: 40 }, (_, i) => `01JL${String(i).padStart(22, "0")}`);
    for (const [r, id] of ids.entries()) {
      for (let d = 0; d < 10; d++) {
        const length = 1 + Math.floor(rand() ** 2 * 300);
        // Zipf-like word draws: a few words in most rows (low IDF), most words rare.
        const text = Array.from({ length }, () => vocabulary[Math.floor(rand() ** 3 * vocabulary.length)]).join(" ");
        await h.loader.upsert({ resourceId: id, path: `${r}/${d}.md`, chunks: [text] }, 1_000);
      }
    }
    // One resource and five (named in the MATCH), 35 (the scope's chunk keys) and all (no filter).
    for (const scope of [ids.slice(0, 1), ids.slice(0, 5), ids.slice(0, 35), ids]) {
      const view = testView(scope);
      for (let q = 0; q < 8; q++) {
        const query = Array.from({ length: 4 + q * 2 }, () => vocabulary[Math.floor(rand() * vocabulary.length)]).join(" ");
        const stats = scopeStatistics(h.db, scope, query);
        const ridInMatch = scope.length <= RID_MATCH_MAX_RESOURCES;
        const expected = h.db.prepare(rankedSearchSql("current", ridInMatch, stats.whole ? undefined : stats.phraseRows.length)).all({
          match: scopedMatch(query, scope, ridInMatch),
          rids: JSON.stringify(scope),
          cutoff: 0,
          limit: 100_000,
          offset: 0,
          ...(stats.whole ? {} : scoreParams(stats, stats.phraseRows)),
        }) as Array<{ uko_uri: string; bm25_rank: number }>;
        for (const maxResults of [1, 5, 20, 100]) {
          const got = await h.backend.search(view, query, { maxResults, now: 2_000, recentWindowMs: 0 });
          expect(got.hits.map((x) => x.chunk?.ukoUri)).toEqual(expected.slice(0, maxResults).map((r) => r.uko_uri));
          expect(got.hits.map((x) => x.score)).toEqual(expected.slice(0, maxResults).map((r) => normaliseBm25(-r.bm25_rank)));
        }
      }
    }
  });
});
