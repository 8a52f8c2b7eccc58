import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TextBackend, TextHit, TextSearchOptions } from "../../src/ports/text-backend.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { loadFixtureCorpus, testView, type CorpusDocument, type FixtureCorpus, type TextCorpusLoader } from "./text-corpus.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** One adapter under test: the backend and the loader that writes its corpus. */
export interface TextBackendHarness {
  backend: TextBackend;
  loader: TextCorpusLoader;
  close(): void | Promise<void>;
}

/** How to run the suite for one adapter. */
export interface TextBackendSuiteOptions extends ConformanceOptions {
  /** The adapter's name; also names its golden file `test/text/golden/<name>.json` unless `golden` does. */
  name: string;
  /** The golden file's name when another variant of an adapter shares it (same engine, same rankings). */
  golden?: string;
  /** A fresh, empty backend with its loader. */
  create(): TextBackendHarness | Promise<TextBackendHarness>;
}

const WINDOW = 60_000;
const T0 = 1_700_000_000_000;

function options(over: Partial<TextSearchOptions> = {}): TextSearchOptions {
  return { maxResults: 20, now: T0 + 10 * WINDOW, recentWindowMs: WINDOW, ...over };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * The conformance suite of the TextBackend port. Every adapter (SQLite FTS5, an in-memory BM25, ...)
 * runs it through its own `create`; the corpus goes in through the adapter's TextCorpusLoader.
 * Relevance is checked two ways: clear-cut queries must rank their document first (any sane BM25), and
 * the full ranking must equal the adapter's golden file, regenerated only with UPDATE_GOLDEN=1.
 */
export function runTextBackendSuite(opts: TextBackendSuiteOptions): void {
  conformanceSuite("TextBackend", opts, (test) => {
    let h: TextBackendHarness;
    let corpus: FixtureCorpus;
    let all: string[];
    const described = (hits: readonly TextHit[]) => Promise.all(hits.map((x) => h.loader.describe(x.chunkKey)));
    const uris = async (hits: readonly TextHit[]) => (await described(hits)).map((d, i) => d?.ukoUri ?? `?${hits[i].chunkKey}`);
    const supersededAts = async (hits: readonly TextHit[]) => (await described(hits)).map((d) => d!.supersededAt);
    const search = (view: ScopedBackendView, q: string, o: Partial<TextSearchOptions> = {}) => h.backend.search(view, q, options(o));

    beforeEach(async () => {
      h = await opts.create();
      corpus = loadFixtureCorpus();
      all = Object.values(corpus.resources);
      for (const doc of corpus.documents) await h.loader.upsert(doc, T0);
    });
    afterEach(async () => {
      await h.close();
    });

    test("clear-cut queries rank their document first", async () => {
      for (const q of corpus.queries) {
        if (!q.expect) continue;
        const { hits } = await search(testView(all), q.query);
        expect({ query: q.query, top: (await uris(hits))[0] }).toEqual({ query: q.query, top: q.expect });
      }
    });

    test("rankings match the golden file", async () => {
      const file = join(__dirname, "golden", `${opts.golden ?? opts.name}.json`);
      const actual: Record<string, Array<{ uri: string; score: number }>> = {};
      for (const q of corpus.queries) {
        const { hits } = await search(testView(all), q.query, { maxResults: 5 });
        const hitUris = await uris(hits);
        actual[q.query] = hits.map((x, i) => ({ uri: hitUris[i], score: round(x.score) }));
      }
      if (process.env.UPDATE_GOLDEN === "1") {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
      }
      if (!existsSync(file)) throw new Error(`no golden file ${file}: run once with UPDATE_GOLDEN=1 and review it`);
      expect(actual).toEqual(JSON.parse(readFileSync(file, "utf8")));
    });

    test("scores are in [0, 1], descending, and independent of max_results", async () => {
      const big = await search(testView(all), "retry requests server", { maxResults: 50 });
      expect(big.hits.length).toBeGreaterThan(3);
      for (let i = 0; i < big.hits.length; i++) {
        expect(big.hits[i].score).toBeGreaterThanOrEqual(0);
        expect(big.hits[i].score).toBeLessThanOrEqual(1);
        if (i > 0) expect(big.hits[i].score).toBeLessThanOrEqual(big.hits[i - 1].score);
      }
      const small = await search(testView(all), "retry requests server", { maxResults: 2 });
      expect(small.hits.map((x) => [x.chunkKey, x.score])).toEqual(big.hits.slice(0, 2).map((x) => [x.chunkKey, x.score]));
      expect(small.exhaustive).toBe(false);
      expect(big.exhaustive).toBe(true);
    });

    test("ties are ordered by UKO URI wherever max_results cuts them, however large the tie", async () => {
      // Identical chunks score alike: a tie of 30 rows, written in an order unlike their URIs' (paths descending,
      // resources interleaved). Cut at 1 and 10 the tie is larger than a ranking pass keeps beyond its page,
      // at 20 it is not; every cut must be the first rows of the whole ranking in URI order.
      const ids = ["01JT3ZZZZZZZZZZZZZZZZZZZZZ", "01JT1ZZZZZZZZZZZZZZZZZZZZZ", "01JT2ZZZZZZZZZZZZZZZZZZZZZ"];
      for (let i = 29; i >= 0; i--) {
        await h.loader.upsert({ resourceId: ids[i % 3], path: `tie/${String(i).padStart(2, "0")}.md`, chunks: ["zebra quokka"] }, T0);
      }
      const whole = await search(testView(ids), "zebra quokka", { maxResults: 100 });
      const wholeUris = await uris(whole.hits);
      expect(wholeUris.length).toBe(30);
      expect(new Set(whole.hits.map((x) => x.score)).size).toBe(1);
      expect(wholeUris).toEqual([...wholeUris].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      for (const maxResults of [1, 10, 20, 29]) {
        const cut = await search(testView(ids), "zebra quokka", { maxResults });
        expect({ maxResults, uris: await uris(cut.hits) }).toEqual({ maxResults, uris: wholeUris.slice(0, maxResults) });
        expect(cut.exhaustive).toBe(false);
      }
    });

    test("only resources of the view are searched, with full recall inside it", async () => {
      const notes = corpus.resources.notes;
      const { hits } = await search(testView([notes]), "run requests server retry key", { maxResults: 50 });
      expect(hits.length).toBeGreaterThan(0);
      expect(new Set(hits.map((x) => x.resourceId))).toEqual(new Set([notes]));
      const onlyNotes = corpus.documents.filter((d) => d.resourceId === notes && /\brun/i.test(d.chunks.join(" ")));
      expect(hits.length).toBeGreaterThanOrEqual(onlyNotes.length);
    });

    test("an empty view or a view of unknown resources answers nothing", async () => {
      expect((await search(testView([]), "database")).hits).toEqual([]);
      expect((await search(testView(["01JZZZZZZZZZZZZZZZZZZZZZZZ"]), "database")).hits).toEqual([]);
    });

    test("path filters apply before the limit, so excluded matches cost no recall", async () => {
      const api = corpus.resources.api;
      const unfiltered = await search(testView([api]), "database postgresql connection", { maxResults: 50 });
      const dbPaths = unfiltered.hits.filter((x) => x.path.startsWith("src/db/"));
      expect(dbPaths.length).toBeGreaterThan(0);
      const view = testView([api], { excludePaths: ["src/db/**"] });
      const filtered = await search(view, "database postgresql connection", { maxResults: 2 });
      expect(filtered.hits.every((x) => !x.path.startsWith("src/db/"))).toBe(true);
      expect(filtered.hits.length).toBe(Math.min(2, unfiltered.hits.length - dbPaths.length));
      const included = await search(testView([api], { includePaths: ["docs/*.md"] }), "key request", { maxResults: 50 });
      expect(included.hits.length).toBeGreaterThan(0);
      expect(included.hits.every((x) => /^docs\/[^/]+\.md$/.test(x.path))).toBe(true);
    });

    test("hostile query syntax is plain text and never an error", async () => {
      const view = testView(all);
      for (const q of [
        '"',
        "NEAR(a b",
        "body:secret",
        "rid : *",
        "a AND OR NOT",
        ")(",
        "*",
        "^x",
        "'; DROP TABLE chunks; --",
        "{body rid}: x",
      ]) {
        await expect(search(view, q)).resolves.toHaveProperty("hits");
      }
      expect((await search(view, "!!! --- ???")).hits).toEqual([]);
      const other = await search(testView([corpus.resources.notes]), `rid ${corpus.resources.api.toLowerCase()} api`);
      expect(other.hits.every((x) => x.resourceId === corpus.resources.notes)).toBe(true);
    });

    test("matching ignores case and punctuation", async () => {
      const lower = await search(testView(all), "perseids");
      const upper = await search(testView(all), "PERSEIDS!!");
      expect(await uris(upper.hits)).toEqual(await uris(lower.hits));
      expect((await uris(lower.hits))[0]).toContain("meteor-showers.md");
    });

    test("temporal scopes: current sees live versions, recent the window, all every retained version", async () => {
      const notes = corpus.resources.notes;
      const doc: CorpusDocument = { resourceId: notes, path: "history/glacier.md", chunks: ["the old glacier melted"] };
      await h.loader.upsert(doc, T0);
      await h.loader.upsert({ ...doc, chunks: ["the new glacier grew"] }, T0 + 2 * WINDOW);
      await h.loader.upsert({ ...doc, chunks: ["the newest glacier glacier retreated"] }, T0 + 9.5 * WINDOW);
      const q = "glacier melted grew retreated";
      const current = await search(testView([notes], { temporal: "current" }), q);
      expect(await supersededAts(current.hits)).toEqual([null]);
      const recent = await search(testView([notes], { temporal: "recent" }), q);
      const all3 = await search(testView([notes], { temporal: "all" }), q);
      // Versions share one UKO URI: each answer holds it once, the best-scoring version.
      expect(await uris(recent.hits)).toEqual(["uko://" + notes + "/history/glacier.md#0"]);
      expect(await uris(all3.hits)).toEqual(["uko://" + notes + "/history/glacier.md#0"]);
      expect(all3.hits[0].score).toBeGreaterThanOrEqual(recent.hits[0].score);
    });

    test("a superseded version is reachable through recent and all, not current", async () => {
      const notes = corpus.resources.notes;
      const doc: CorpusDocument = { resourceId: notes, path: "history/volcano.md", chunks: ["zanzibar volcano erupted"] };
      await h.loader.upsert(doc, T0);
      await h.loader.upsert({ ...doc, chunks: ["a quiet island"] }, T0 + 9 * WINDOW);
      const q = "zanzibar";
      expect((await search(testView([notes], { temporal: "current" }), q)).hits).toEqual([]);
      const recent = await search(testView([notes], { temporal: "recent" }), q);
      expect(await supersededAts(recent.hits)).toEqual([T0 + 9 * WINDOW]);
      expect((await search(testView([notes], { temporal: "all" }), q)).hits.length).toBe(1);
    });

    test("versions superseded before the recent window are seen by all only", async () => {
      const notes = corpus.resources.notes;
      const doc: CorpusDocument = { resourceId: notes, path: "history/ancient.md", chunks: ["quetzalcoatl temple"] };
      await h.loader.upsert(doc, T0);
      await h.loader.upsert({ ...doc, chunks: ["parking lot"] }, T0 + WINDOW);
      expect((await search(testView([notes], { temporal: "recent" }), "quetzalcoatl")).hits).toEqual([]);
      expect((await search(testView([notes], { temporal: "all" }), "quetzalcoatl")).hits.length).toBe(1);
    });

    test("a deleted document is visible to recent and all only", async () => {
      const notes = corpus.resources.notes;
      await h.loader.remove(notes, "cooking/risotto.md", T0 + 9 * WINDOW);
      expect((await search(testView([notes]), "risotto parmesan")).hits).toEqual([]);
      expect((await uris((await search(testView([notes], { temporal: "recent" }), "risotto parmesan")).hits))[0]).toContain("risotto.md");
      expect((await uris((await search(testView([notes], { temporal: "all" }), "risotto parmesan")).hits))[0]).toContain("risotto.md");
    });

    // Issue 24, finding 4: BM25's statistics (row count, average row length, each phrase's row count) come
    // from the rows of the view's resources only (every retained version of them, as the index holds them),
    // so no write outside the view can move a score inside it, and a view's scores are those of a store
    // holding only its resources. A view of every resource scores as before (the golden file above).
    test("statistics come from the view's resources only: another resource's writes never move a score", async () => {
      const view = testView([corpus.resources.notes, corpus.resources.api]);
      const q = "run requests server retry key database";
      const scored = async () => {
        const { hits } = await search(view, q, { maxResults: 50 });
        const hitUris = await uris(hits);
        return hits.map((x, i) => [hitUris[i], x.score] as const);
      };
      const before = await scored();
      expect(before.length).toBeGreaterThan(3);
      // Another tenant floods its own resource with the query's words (more rows than the view holds, so
      // global statistics would floor every IDF), then with other words (moving the average length).
      const other = "01JQ0THERTENANT00000000000";
      for (let i = 0; i < 3 * corpus.documents.length; i++) {
        await h.loader.upsert(
          { resourceId: other, path: `flood/${i}.md`, chunks: [i % 2 ? "run requests server retry key database ".repeat(9) : "zzz"] },
          T0,
        );
      }
      expect((await search(testView([other]), q)).hits.length).toBeGreaterThan(0);
      const after = await scored();
      expect(after.map(([u]) => u)).toEqual(before.map(([u]) => u));
      after.forEach(([, score], i) => expect(score).toBeCloseTo(before[i][1], 12));
    });

    test("a view's scores equal those of a store that holds only the view's resources", async () => {
      const kept = [corpus.resources.notes, corpus.resources.api];
      const alone = await opts.create();
      try {
        for (const doc of corpus.documents) if (kept.includes(doc.resourceId)) await alone.loader.upsert(doc, T0);
        for (const q of corpus.queries) {
          const shared = await search(testView(kept), q.query, { maxResults: 10 });
          const own = await alone.backend.search(testView(kept), q.query, options({ maxResults: 10 }));
          const ownUris = await Promise.all(own.hits.map(async (x) => (await alone.loader.describe(x.chunkKey))?.ukoUri));
          expect({ query: q.query, uris: await uris(shared.hits) }).toEqual({ query: q.query, uris: ownUris });
          shared.hits.forEach((x, i) => expect(x.score).toBeCloseTo(own.hits[i].score, 12));
        }
      } finally {
        await alone.close();
      }
    });

    test("an aborted signal stops the search", async () => {
      const ctl = new AbortController();
      ctl.abort();
      await expect(search(testView(all), "database", { signal: ctl.signal })).rejects.toBeDefined();
    });
  });
}
