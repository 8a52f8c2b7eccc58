import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { openSqlite } from "../../src/adapters/sqlite/index.js";
import { requireAcmsFts5 } from "../../src/adapters/sqlite/acms-fts5-extension.js";
import { Fts5TextBackend, RID_MATCH_MAX_RESOURCES, scoreParams, scoreSql } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { docsizeTokens, fts5TableTotals, KEYWORD_STATS_TABLE, KeywordRows } from "../../src/adapters/sqlite/keyword-rows.js";
import { resourceToken, SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { matchAnyTerm, queryTerms } from "../../src/adapters/sqlite/fts5-match-query.js";
import { prng } from "../support/prng.js";
import { loadFixtureCorpus, testView } from "./text-corpus.js";

/**
 * Issue 24, finding 4 on the embedded engine: the pieces behind per-scope BM25 statistics. The acms_fts5
 * extension's `acms_bm25` given the whole table's statistics is FTS5's bm25() bit for bit; the store's
 * per-resource counters equal what FTS5 itself holds after every kind of write (and after a reopen, and when
 * filled for a database made before them); scopes past RID_MATCH_MAX_RESOURCES and temporal scopes score
 * from the same statistics; and without the extension the engine offers no FTS5 search at all.
 */
const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
const opts = { maxResults: 50, now: 10_000, recentWindowMs: 5_000 };
const doc = (path: string, chunks: string[]) => ({
  path,
  content: chunks.join("\n"),
  metadata: {},
  chunks: chunks.map((text) => ({ text })),
});

/** The counters, and what FTS5's own tables say per resource token (rows; tokens from the docsize records). */
function countersAndTruth(db: SqliteDatabase) {
  const counters = new Map<string, { rows: number; tokens: number }>();
  for (const r of db.prepare(`SELECT rid, rows, tokens FROM ${KEYWORD_STATS_TABLE}`).all() as Array<{
    rid: string;
    rows: number;
    tokens: number;
  }>) {
    if (r.rows !== 0 || r.tokens !== 0) counters.set(r.rid, { rows: r.rows, tokens: r.tokens });
  }
  const truth = new Map<string, { rows: number; tokens: number }>();
  const rows = db.prepare("SELECT c.c1 AS rid, d.sz FROM chunks_fts_content c JOIN chunks_fts_docsize d ON d.id = c.id").all() as Array<{
    rid: string;
    sz: Buffer;
  }>;
  for (const r of rows) {
    const t = truth.get(r.rid) ?? { rows: 0, tokens: 0 };
    t.rows += 1;
    t.tokens += docsizeTokens(r.sz);
    truth.set(r.rid, t);
  }
  return { counters, truth };
}

describe("FTS5 per-scope BM25 statistics (embedded engine)", () => {
  let dir: string;
  let db: SqliteDatabase;
  let store: SqliteDocumentStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-fts5-stats-"));
    db = openSqliteDatabase(join(dir, "acms.db"));
    store = new SqliteDocumentStore(db, { retainedVersions: 2, stageBatchChunks: 3 });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("acms_bm25 with the whole table's statistics is bm25() bit for bit", async () => {
    const corpus = loadFixtureCorpus();
    for (const d of corpus.documents) await store.upsertDocuments(d.resourceId, [doc(d.path, d.chunks)], 1_000);
    requireAcmsFts5(db);
    const totals = fts5TableTotals(db.prepare("SELECT block FROM chunks_fts_data WHERE id = 1").pluck().get() as Buffer);
    const count = db.prepare("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?").pluck();
    let compared = 0;
    for (const q of corpus.queries) {
      const terms = queryTerms(q.query);
      const match = matchAnyTerm("body", terms)!;
      const phraseRows = terms.map((t) => count.get(`body : "${t}"`) as number);
      const rows = db
        .prepare(`SELECT bm25(chunks_fts, 1.0, 0.0) AS a, ${scoreSql(terms.length)} AS b FROM chunks_fts WHERE chunks_fts MATCH @match`)
        .all({ match, ...scoreParams(totals, phraseRows) }) as Array<{ a: number; b: number }>;
      for (const r of rows) expect(r.b).toBe(r.a);
      compared += rows.length;
    }
    expect(compared).toBeGreaterThan(20);
  });

  it("keeps the per-resource counters equal to FTS5's own rows and tokens through every kind of write, a reopen and a migration", async () => {
    const rand = prng(11);
    const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    const text = () => Array.from({ length: 1 + Math.floor(rand() * 9) }, () => words[Math.floor(rand() * words.length)]).join(" ");
    for (let round = 0; round < 6; round++) {
      for (const r of [A, B]) {
        const docs = Array.from({ length: 5 }, (_, i) => doc(`d${i}.md`, Array.from({ length: 1 + (i % 3) }, text)));
        await store.upsertDocuments(r, docs, 1_000 + round);
      }
      await store.deleteDocuments(A, [`d${round % 5}.md`], 1_000 + round);
    }
    // A failed upload (its staged rows removed again) and a full reindex.
    await expect(
      store.upsertDocuments(A, [doc("x.md", ["alpha"]), doc("y.md", ["beta"])], 2_000, {
        beforePublish: () => {
          throw new Error("refused");
        },
      }),
    ).rejects.toThrow("refused");
    await store.reindexResource(B, true);
    let { counters, truth } = countersAndTruth(db);
    expect(counters).toEqual(truth);
    expect(truth.size).toBe(2);
    const table = fts5TableTotals(db.prepare("SELECT block FROM chunks_fts_data WHERE id = 1").pluck().get() as Buffer);
    expect(table).toEqual({
      rows: [...truth.values()].reduce((s, t) => s + t.rows, 0),
      tokens: [...truth.values()].reduce((s, t) => s + t.tokens, 0),
    });
    // Erasing a resource in slices takes its share to zero.
    while (!(await store.eraseResourceSlice(B, 4)).done);
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    expect(truth.has(resourceToken(B))).toBe(false);
    expect(db.prepare(`SELECT count(*) FROM ${KEYWORD_STATS_TABLE} WHERE rid = ?`).pluck().get(resourceToken(B))).toBe(0);
    // A database made before the counters: filled at open from the rows it holds.
    db.exec(`DROP TABLE ${KEYWORD_STATS_TABLE}`);
    db.close();
    db = openSqliteDatabase(join(dir, "acms.db"));
    store = new SqliteDocumentStore(db);
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    expect(truth.get(resourceToken(A))!.rows).toBeGreaterThan(10);
  });

  it("moves a batch's counters once a resource, in its transaction, whether the batch returns or throws", async () => {
    // The store's tables (chunks_fts among them), then a writer of its own to drive batches directly.
    await store.upsertDocuments(A, [doc("seed.md", ["alpha beta"])], 1_000);
    const rows = new KeywordRows(db);
    const statements = () => db.prepare(`SELECT rid, rows, tokens FROM ${KEYWORD_STATS_TABLE} ORDER BY rid`).all();
    let key = 1_000_000;
    const [a, b] = [resourceToken(A), resourceToken(B)];
    // Inserted in a batch, over two resources, with a delete of another row in between.
    const seedKey = db.prepare("SELECT id FROM chunks_fts_docsize").pluck().get() as number;
    db.transaction(() =>
      rows.batch(() => {
        rows.insert(key++, "gamma delta epsilon", a);
        rows.insert(key++, "zeta", b);
        rows.delete(seedKey);
        rows.insert(key++, "eta theta", a);
        // Nested: the outer batch writes.
        rows.batch(() => rows.insert(key++, "iota", b));
      }),
    )();
    let { counters, truth } = countersAndTruth(db);
    expect(counters).toEqual(truth);
    expect(truth.get(a)).toEqual({ rows: 2, tokens: 2 * 1 + 5 });
    expect(truth.get(b)).toEqual({ rows: 2, tokens: 2 * 1 + 2 });
    // A batch that throws after inserting, caught within a transaction that commits: its rows stay, counted.
    db.transaction(() => {
      expect(() =>
        rows.batch(() => {
          rows.insert(key++, "kappa lambda", a);
          throw new Error("refused midway");
        }),
      ).toThrow("refused midway");
    })();
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    expect(truth.get(a)!.rows).toBe(3);
    // One that throws out of its transaction: neither its rows nor their counters stay.
    const before = statements();
    expect(() =>
      db.transaction(() =>
        rows.batch(() => {
          rows.insert(key++, "mu nu xi", b);
          throw new Error("rolled back");
        }),
      )(),
    ).toThrow("rolled back");
    expect(statements()).toEqual(before);
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    // Outside a batch an insert moves the counters at once.
    db.transaction(() => rows.insert(key++, "omicron", a))();
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    expect(truth.get(a)!.rows).toBe(4);
    // A batch that takes a resource's last rows leaves no counter row for it.
    const ofB = db.prepare("SELECT id FROM chunks_fts_content WHERE c1 = ?").pluck().all(b) as number[];
    expect(ofB.length).toBe(2);
    db.transaction(() => rows.batch(() => ofB.forEach((k) => rows.delete(k))))();
    ({ counters, truth } = countersAndTruth(db));
    expect(counters).toEqual(truth);
    expect(db.prepare(`SELECT count(*) FROM ${KEYWORD_STATS_TABLE} WHERE rid = ?`).pluck().get(b)).toBe(0);
  });

  // Up to 32 resources the MATCH names the scope's resources; up to RID_MATCH_MAX_RESOURCES too in an index of
  // RID_MATCH_ROWS_PER_RESOURCE rows a resource (0 here: any index); past it (or where they cost less) the
  // ranking keeps to the scope's chunk keys, or past SCOPE_KEYS_MAX_ROWS rows (0 here: always) names them in
  // the MATCH where it may, else joins each row's chunk.
  it.each([
    [8, undefined, undefined],
    [8, undefined, 0],
    [40, undefined, undefined],
    [40, undefined, 0],
    [40, 0, 0],
    [40, 0, undefined],
    [RID_MATCH_MAX_RESOURCES, 0, 0],
    [RID_MATCH_MAX_RESOURCES, 0, undefined],
  ])(
    "scores a scope of %i + 2 resources, and every temporal scope, from the scope's rows only (rows a resource for the MATCH: %p, rows for the chunk keys: %p)",
    async (size, ridMatchRowsPerResource, scopeKeysMaxRows) => {
      const others = Array.from({ length: size + 3 }, (_, i) => `01JQ${String(i).padStart(22, "0")}`);
      for (const [i, r] of others.entries()) await store.upsertDocuments(r, [doc("n.md", [`needle ${"hay ".repeat(i % 7)}`])], 1_000);
      await store.upsertDocuments(A, [doc("a.md", ["needle in the old haystack"])], 1_000);
      await store.upsertDocuments(A, [doc("a.md", ["needle in the new haystack", "and straw"])], 8_000);
      const text = new Fts5TextBackend(db, undefined, ridMatchRowsPerResource, scopeKeysMaxRows);
      const big = testView([A, ...others.slice(0, size + 1)]);
      const scores = async () =>
        Promise.all(
          (["current", "recent", "all"] as const).map(async (temporal) =>
            (await text.search({ ...big, temporalScope: temporal }, "needle haystack", { ...opts, maxResults: 1000 })).hits.map((x) => [
              x.chunkKey,
              x.score,
            ]),
          ),
        );
      const before = await scores();
      expect(before[2].length).toBeGreaterThan(size);
      // Ranked on the posting cache or in FTS5, alike.
      const inFts5 = new Fts5TextBackend(db, undefined, ridMatchRowsPerResource, scopeKeysMaxRows, 0);
      for (const [t, temporal] of (["current", "recent", "all"] as const).entries()) {
        const got = (await inFts5.search({ ...big, temporalScope: temporal }, "needle haystack", { ...opts, maxResults: 1000 })).hits;
        expect(got.map((x) => [x.chunkKey, x.score])).toEqual(before[t]);
      }
      // The last two resources are outside the scope: flooding them moves nothing inside it.
      for (const r of others.slice(-2)) {
        await store.upsertDocuments(
          r,
          Array.from({ length: 80 }, (_, i) => doc(`flood/${i}.md`, ["needle haystack needle haystack"])),
          9_000,
        );
      }
      expect(await scores()).toEqual(before);
      // A store holding only the scope's resources scores the same.
      const aloneDb = openSqliteDatabase(":memory:");
      try {
        const alone = new SqliteDocumentStore(aloneDb);
        for (const [i, r] of others.entries()) {
          if (i <= size) await alone.upsertDocuments(r, [doc("n.md", [`needle ${"hay ".repeat(i % 7)}`])], 1_000);
        }
        await alone.upsertDocuments(A, [doc("a.md", ["needle in the old haystack"])], 1_000);
        await alone.upsertDocuments(A, [doc("a.md", ["needle in the new haystack", "and straw"])], 8_000);
        const own = new Fts5TextBackend(aloneDb);
        for (const [t, temporal] of (["current", "recent", "all"] as const).entries()) {
          const got = (await own.search({ ...big, temporalScope: temporal }, "needle haystack", { ...opts, maxResults: 1000 })).hits.map(
            (x) => x.score,
          );
          expect(before[t].map(([, s]) => s)).toEqual(got);
        }
      } finally {
        aloneDb.close();
      }
    },
  );

  it("offers no FTS5 search without its extension (the composition root then takes the in-memory index)", () => {
    const engine = openSqlite({
      path: join(dir, "other.db"),
      coldDir: join(dir, "cold"),
      fts5Extension: join(dir, "missing", "acms_fts5.so"),
    });
    try {
      expect(engine.text).toBeUndefined();
      expect(engine.textUnavailable).toContain("could not be loaded");
    } finally {
      void engine.close();
    }
    const built = openSqlite({ path: join(dir, "built.db"), coldDir: join(dir, "cold2") });
    try {
      expect(built.text?.hasNativeKeywordSearch).toBe(true);
    } finally {
      void built.close();
    }
  });
});
