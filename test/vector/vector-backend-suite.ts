import type { VectorBackend, VectorEntry } from "../../src/ports/vector-backend.js";
import { clusteredVectors, cosine, R, randomVector, referenceSearch, searchOpts, viewOf } from "./vector-fixtures.js";
import { gaussian, prng } from "../support/prng.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** How one adapter of the VectorBackend port is run through the shared suite. */
export interface VectorBackendSuiteOptions extends ConformanceOptions {
  create(dimension: number): VectorBackend | Promise<VectorBackend>;
  /** Waits until written vectors are served the way the adapter means to serve them (e.g. graphs built). */
  settle?(backend: VectorBackend): Promise<void>;
  /** Whether every answer must be exact (`exhaustive` true). False for an approximate path. */
  exact: boolean;
}

const DIM = 8;

function unit(i: number, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  v[i] = 1;
  return v;
}

function entry(
  chunkKey: number,
  resourceId: string,
  vector: Float32Array,
  path = "src/a.ts",
  supersededAt: number | null = null,
): VectorEntry {
  return { chunkKey, resourceId, path, supersededAt, vector };
}

/** A vector at cosine `c` from unit(0) inside the plane of unit(0) and unit(axis). */
function atCosine(c: number, axis = 1, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  v[0] = c;
  v[axis] = Math.sqrt(Math.max(0, 1 - c * c));
  return v;
}

/**
 * The conformance suite of the VectorBackend port: ordering, ties, min_score, negative cosines, scope
 * isolation, path and temporal filters, writes, cancellation, and recall against brute force. Every
 * adapter (and every mode of one) runs it.
 */
export function runVectorBackendSuite(opts: VectorBackendSuiteOptions): void {
  conformanceSuite("VectorBackend", opts, (test) => {
    let backend: VectorBackend;
    const open: VectorBackend[] = [];
    async function make(dimension = DIM): Promise<VectorBackend> {
      const b = await opts.create(dimension);
      open.push(b);
      return b;
    }
    async function load(b: VectorBackend, entries: VectorEntry[]): Promise<void> {
      b.upsert(entries);
      await opts.settle?.(b);
    }
    beforeEach(async () => {
      backend = await make();
    });
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
    });

    test("reports its dimension", async () => {
      expect(backend.dimension).toBe(DIM);
    });

    test("orders by cosine descending and honours topK", async () => {
      const cs = [0.2, 0.9, 0.5, 0.99, 0.7, 0.1];
      await load(
        backend,
        cs.map((c, i) => entry(i + 1, R.a, atCosine(c, 1 + (i % 3)))),
      );
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 4 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([4, 2, 5, 3]);
      hits.forEach((h, i) => expect(h.score).toBeCloseTo([0.99, 0.9, 0.7, 0.5][i], 5));
      expect(hits.every((h) => h.resourceId === R.a && h.path === "src/a.ts")).toBe(true);
    });

    test("scores are cosines whatever the stored and query norms", async () => {
      const v = Float32Array.from([3, 4, 0, 0, 0, 0, 0, 0]);
      await load(backend, [entry(1, R.a, v)]);
      const q = Float32Array.from([10, 0, 0, 0, 0, 0, 0, 0]);
      const { hits } = await backend.search(viewOf([R.a]), q, searchOpts());
      expect(hits).toHaveLength(1);
      expect(hits[0].score).toBeCloseTo(0.6, 6);
    });

    test("breaks score ties by chunk key", async () => {
      await load(
        backend,
        [9, 3, 7, 5].map((k) => entry(k, R.a, atCosine(0.8))),
      );
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 3 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([3, 5, 7]);
    });

    test("ties across partitions are broken by chunk key too", async () => {
      await load(backend, [entry(8, R.a, unit(0)), entry(2, R.b, unit(0)), entry(5, R.c, unit(0))]);
      const { hits } = await backend.search(viewOf([R.a, R.b, R.c]), unit(0), searchOpts({ topK: 2 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([2, 5]);
    });

    test("drops candidates under minScore", async () => {
      await load(
        backend,
        [0.95, 0.6, 0.59, 0.3].map((c, i) => entry(i + 1, R.a, atCosine(c))),
      );
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts({ minScore: 0.6 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([1, 2]);
      expect(hits.every((h) => h.score >= 0.6 - 1e-6)).toBe(true);
    });

    test("never returns a negative cosine, even when nothing else exists", async () => {
      const neg = unit(0).map((x) => -x);
      await load(backend, [entry(1, R.a, neg), entry(2, R.a, atCosine(-0.3)), entry(3, R.a, atCosine(0, 2))]);
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 10 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([3]);
      expect(hits[0].score).toBeGreaterThanOrEqual(0);
    });

    test("scores stay within [0, 1]", async () => {
      await load(backend, [
        entry(1, R.a, unit(0)),
        entry(
          2,
          R.a,
          Float32Array.from(unit(0), (x) => x * 1e-3),
        ),
      ]);
      const { hits } = await backend.search(
        viewOf([R.a]),
        Float32Array.from(unit(0), (x) => x * 7),
        searchOpts(),
      );
      expect(hits).toHaveLength(2);
      for (const h of hits) {
        expect(h.score).toBeLessThanOrEqual(1);
        expect(h.score).toBeGreaterThan(0.999);
      }
    });

    test("never returns an out-of-scope resource, even its exact match", async () => {
      const q = unit(0);
      await load(backend, [entry(1, R.b, q), entry(2, R.b, q), entry(3, R.a, atCosine(0.1)), entry(4, R.c, atCosine(0.99))]);
      const { hits } = await backend.search(viewOf([R.a]), q, searchOpts({ topK: 100 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([3]);
      const none = await backend.search(viewOf([R.d]), q, searchOpts({ topK: 100 }));
      expect(none.hits).toEqual([]);
      const empty = await backend.search(viewOf([]), q, searchOpts({ topK: 100 }));
      expect(empty.hits).toEqual([]);
    });

    test("a large out-of-scope partition does not crowd out in-scope results", async () => {
      const rnd = prng(7);
      const near = Array.from({ length: 300 }, (_, i) =>
        entry(
          1000 + i,
          R.b,
          Float32Array.from(unit(0), (x, j) => x + 0.05 * (j === 0 ? 0 : rnd())),
        ),
      );
      await load(backend, [...near, entry(1, R.a, atCosine(0.2)), entry(2, R.a, atCosine(0.3))]);
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 5 }));
      expect(hits.map((h) => h.chunkKey)).toEqual([2, 1]);
    });

    test("applies include and exclude path globs", async () => {
      await load(backend, [
        entry(1, R.a, atCosine(0.9), "src/a.ts"),
        entry(2, R.a, atCosine(0.8), "src/deep/b.ts"),
        entry(3, R.a, atCosine(0.7), "docs/c.md"),
        entry(4, R.a, atCosine(0.6), "src/gen/d.ts"),
      ]);
      const inc = await backend.search(viewOf([R.a], { includePaths: ["src/**"] }), unit(0), searchOpts());
      expect(inc.hits.map((h) => h.chunkKey)).toEqual([1, 2, 4]);
      const both = await backend.search(viewOf([R.a], { includePaths: ["src/**"], excludePaths: ["src/gen/**"] }), unit(0), searchOpts());
      expect(both.hits.map((h) => h.chunkKey)).toEqual([1, 2]);
      const exc = await backend.search(viewOf([R.a], { excludePaths: ["**/*.ts"] }), unit(0), searchOpts());
      expect(exc.hits.map((h) => h.chunkKey)).toEqual([3]);
    });

    test("temporal: current sees live versions, recent those superseded within the window, all every one", async () => {
      const now = 1_000_000;
      await load(backend, [
        entry(1, R.a, atCosine(0.9), "a.md", null),
        entry(2, R.a, atCosine(0.95), "a.md", now - 500),
        entry(3, R.a, atCosine(0.99), "a.md", now - 5000),
      ]);
      const o = searchOpts({ now, recentWindowMs: 1000 });
      const keys = async (temporal: "current" | "recent" | "all") =>
        (await backend.search(viewOf([R.a], { temporal }), unit(0), o)).hits.map((h) => h.chunkKey);
      expect(await keys("current")).toEqual([1]);
      expect(await keys("recent")).toEqual([2, 1]);
      expect(await keys("all")).toEqual([3, 2, 1]);
    });

    test("supersede hides a version from current scopes from then on", async () => {
      await load(backend, [entry(1, R.a, atCosine(0.9)), entry(2, R.a, atCosine(0.8))]);
      backend.supersede([1, 99], 999_500);
      await opts.settle?.(backend);
      const cur = await backend.search(viewOf([R.a]), unit(0), searchOpts({ now: 1_000_000, recentWindowMs: 1000 }));
      expect(cur.hits.map((h) => h.chunkKey)).toEqual([2]);
      const recent = await backend.search(
        viewOf([R.a], { temporal: "recent" }),
        unit(0),
        searchOpts({ now: 1_000_000, recentWindowMs: 1000 }),
      );
      expect(recent.hits.map((h) => h.chunkKey)).toEqual([1, 2]);
    });

    test("upsert of a held key replaces its vector, path and supersession", async () => {
      await load(backend, [entry(1, R.a, atCosine(0.1), "old.md", 5)]);
      await load(backend, [entry(1, R.a, atCosine(0.9), "new.md", null)]);
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts());
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ chunkKey: 1, path: "new.md" });
      expect(hits[0].score).toBeCloseTo(0.9, 5);
    });

    test("a key written twice in one batch keeps its last version", async () => {
      await load(backend, [entry(3, R.b, atCosine(0.1)), entry(4, R.a, atCosine(0.1), "other.md")]);
      await load(backend, [
        entry(1, R.a, atCosine(0.9), "first.md"),
        entry(2, R.a, atCosine(0.5)),
        entry(1, R.a, atCosine(0.3), "second.md"),
      ]);
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts());
      expect(hits.map((h) => [h.chunkKey, h.path])).toEqual([
        [2, "src/a.ts"],
        [1, "second.md"],
        [4, "other.md"],
      ]);
    });

    test("remove drops versions; unknown keys are ignored", async () => {
      await load(
        backend,
        [1, 2, 3, 4].map((k) => entry(k, R.a, atCosine(0.5 + k / 10))),
      );
      backend.remove([2, 4, 77]);
      await opts.settle?.(backend);
      const { hits } = await backend.search(viewOf([R.a]), unit(0), searchOpts());
      expect(hits.map((h) => h.chunkKey)).toEqual([3, 1]);
    });

    test("clearResource drops one resource and leaves the others", async () => {
      await load(backend, [entry(1, R.a, unit(0)), entry(2, R.b, unit(0)), entry(3, R.a, atCosine(0.5))]);
      backend.clearResource(R.a);
      backend.clearResource(R.d);
      await opts.settle?.(backend);
      const { hits } = await backend.search(viewOf([R.a, R.b]), unit(0), searchOpts());
      expect(hits.map((h) => h.chunkKey)).toEqual([2]);
      await load(backend, [entry(4, R.a, unit(0))]);
      const again = await backend.search(viewOf([R.a, R.b]), unit(0), searchOpts());
      expect(again.hits.map((h) => h.chunkKey)).toEqual([2, 4]);
    });

    test("replaceResource swaps one resource's entries for the given ones and leaves the others", async () => {
      await load(backend, [entry(1, R.a, unit(0)), entry(2, R.b, unit(0)), entry(3, R.a, atCosine(0.5))]);
      await backend.replaceResource(R.a, [entry(4, R.a, atCosine(0.9)), entry(5, R.a, atCosine(0.7), "src/b.ts")]);
      await opts.settle?.(backend);
      const a = await backend.search(viewOf([R.a]), unit(0), searchOpts());
      expect(a.hits.map((h) => [h.chunkKey, h.path])).toEqual([
        [4, "src/a.ts"],
        [5, "src/b.ts"],
      ]);
      const b = await backend.search(viewOf([R.b]), unit(0), searchOpts());
      expect(b.hits.map((h) => h.chunkKey)).toEqual([2]);
      await backend.replaceResource(R.a, []);
      await opts.settle?.(backend);
      expect((await backend.search(viewOf([R.a, R.b]), unit(0), searchOpts())).hits.map((h) => h.chunkKey)).toEqual([2]);
      await expect(backend.replaceResource(R.a, [entry(6, R.b, unit(0))])).rejects.toThrow(/resource/);
      await expect(backend.replaceResource(R.a, [entry(6, R.a, new Float32Array(DIM - 1).fill(1))])).rejects.toThrow(/dimension/);
    });

    test("a search while replaceResource runs sees the old entries or the new ones, never a mix", async () => {
      await load(backend, [entry(1, R.a, unit(0)), entry(2, R.a, atCosine(0.8)), entry(3, R.a, atCosine(0.6))]);
      const rnd = prng(7);
      const fresh = Array.from({ length: 1500 }, (_, i) =>
        entry(
          100 + i,
          R.a,
          Float32Array.from(unit(0), (x) => x + 0.5 * rnd()),
        ),
      );
      const replacing = backend.replaceResource(R.a, fresh);
      const seen: number[][] = [];
      let done = false;
      void replacing.finally(() => (done = true));
      while (!done) {
        seen.push((await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 5 }))).hits.map((h) => h.chunkKey));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await replacing;
      await opts.settle?.(backend);
      seen.push((await backend.search(viewOf([R.a]), unit(0), searchOpts({ topK: 5 }))).hits.map((h) => h.chunkKey));
      expect(seen.length).toBeGreaterThan(1);
      for (const keys of seen) {
        expect(keys).toHaveLength(keys.every((k) => k < 100) ? 3 : 5);
        expect(keys.every((k) => k < 100) || keys.every((k) => k >= 100)).toBe(true);
      }
      expect(seen[seen.length - 1].every((k) => k >= 100)).toBe(true);
    });

    test("a zero query vector matches nothing", async () => {
      await load(backend, [entry(1, R.a, unit(0))]);
      const { hits } = await backend.search(viewOf([R.a]), new Float32Array(DIM), searchOpts());
      expect(hits).toEqual([]);
    });

    test("a query of the wrong dimension is refused", async () => {
      await expect(backend.search(viewOf([R.a]), new Float32Array(DIM + 1).fill(1), searchOpts())).rejects.toThrow(/dimension/);
    });

    test("an entry of the wrong dimension is refused", async () => {
      expect(() => backend.upsert([entry(1, R.a, new Float32Array(DIM - 1).fill(1))])).toThrow(/dimension/);
    });

    test("an already cancelled search does no work and rejects", async () => {
      await load(backend, [entry(1, R.a, unit(0))]);
      const ctl = new AbortController();
      ctl.abort(new Error("client went away"));
      await expect(backend.search(viewOf([R.a]), unit(0), searchOpts({ signal: ctl.signal }))).rejects.toThrow("client went away");
    });

    test("a search cancelled while it runs stops between partitions", async () => {
      const rnd = prng(3);
      const ids = Array.from({ length: 60 }, (_, i) => `01J000000000000000000${String(i).padStart(5, "0")}`);
      await load(
        backend,
        ids.flatMap((id, i) => Array.from({ length: 40 }, (_, j) => entry(i * 100 + j + 1, id, randomVector(rnd, DIM)))),
      );
      const ctl = new AbortController();
      const pending = backend.search(viewOf(ids), unit(0), searchOpts({ signal: ctl.signal }));
      ctl.abort(new Error("cancelled mid-search"));
      await expect(pending).rejects.toThrow("cancelled mid-search");
    });

    test("matches brute force on random data under mixed scopes and filters", async () => {
      const rnd = prng(11);
      const ids = [R.a, R.b, R.c, R.d];
      const paths = ["src/a.ts", "src/b/c.ts", "docs/x.md", "test/y.ts"];
      const entries: VectorEntry[] = Array.from({ length: 400 }, (_, i) =>
        entry(
          i + 1,
          ids[i % 4],
          randomVector(rnd, DIM),
          paths[Math.floor(rnd() * 4)],
          rnd() < 0.2 ? 999_000 + Math.floor(rnd() * 1000) : null,
        ),
      );
      await load(backend, entries);
      const views = [
        viewOf([R.a]),
        viewOf([R.a, R.c], { includePaths: ["src/**"] }),
        viewOf(ids, { excludePaths: ["docs/**"], temporal: "recent" }),
        viewOf([R.b, R.d], { temporal: "all" }),
      ];
      let agree = 0;
      let total = 0;
      for (const view of views) {
        for (let q = 0; q < 10; q++) {
          const query = randomVector(rnd, DIM);
          const o = searchOpts({ topK: 7, minScore: q % 3 === 0 ? 0.3 : 0, now: 1_000_000, recentWindowMs: 600 });
          const got = await backend.search(view, query, o);
          const want = referenceSearch(entries, view, query, o);
          for (const h of got.hits) {
            expect(view.allows(h.resourceId, h.path)).toBe(true);
            expect(h.score).toBeCloseTo(cosine(query, entries[h.chunkKey - 1].vector), 4);
            expect(h.score).toBeGreaterThanOrEqual(o.minScore - 1e-6);
          }
          for (let i = 1; i < got.hits.length; i++) expect(got.hits[i - 1].score).toBeGreaterThanOrEqual(got.hits[i].score);
          if (opts.exact) {
            expect(got.hits.map((h) => h.chunkKey)).toEqual(want.map((h) => h.chunkKey));
            expect(got.exhaustive).toBe(true);
          }
          const wantKeys = new Set(want.map((h) => h.chunkKey));
          agree += got.hits.filter((h) => wantKeys.has(h.chunkKey)).length;
          total += want.length;
        }
      }
      expect(agree / total).toBeGreaterThanOrEqual(0.95);
    });

    test("recall@10 on clustered data is at least 0.95 of brute force", async () => {
      const dim = 48;
      const b = await make(dim);
      const rnd = prng(42);
      const vectors = clusteredVectors(rnd, dim, 6000, 40, 0.9);
      const entries = vectors.map((v, i) => entry(i + 1, i < 4500 ? R.a : i < 5500 ? R.b : R.c, v, `doc/${i % 97}.md`));
      await load(b, entries);
      const queries = vectors.slice(0, 60).map((v) => Float32Array.from(v, (x) => x + 0.5 * (rnd() - 0.5)));
      let found = 0;
      let exhaustive = true;
      for (const view of [viewOf([R.a]), viewOf([R.a, R.b, R.c])]) {
        for (const q of queries) {
          const o = searchOpts({ topK: 10 });
          const got = await b.search(view, q, o);
          exhaustive &&= got.exhaustive;
          const want = new Set(referenceSearch(entries, view, q, o).map((h) => h.chunkKey));
          found += got.hits.filter((h) => want.has(h.chunkKey)).length;
        }
      }
      expect(found / (queries.length * 2 * 10)).toBeGreaterThanOrEqual(0.95);
      expect(exhaustive).toBe(opts.exact);
      // The time limit only stops a hang: graph builds take minutes on a loaded machine.
    }, 600_000);

    test("recall@10 >= 0.99 at every scope shape over many small partitions, and exhaustive only when exact", async () => {
      // 800 resources of 25 rows (20,000 of 128 dimensions, loosely clustered): scopes of 1 to 800 resources,
      // among them ones of many small partitions covering under a quarter of the store (past what an exact
      // scan answers, too small a share for a store-wide graph; the store-wide cells alone gave recall@10 of
      // 0.83 at 190 resources here), with queries drawn from the whole store and from inside the scope.
      const dim = 128;
      const perResource = 25;
      const b = await make(dim);
      const rnd = prng(29);
      const ids = Array.from({ length: 800 }, (_, i) => `01JSHAPE${String(i).padStart(18, "0")}`);
      const centres = Array.from({ length: 256 }, () => randomVector(rnd, dim));
      const entries: VectorEntry[] = [];
      ids.forEach((id, r) => {
        const topics = [0, 1, 2].map(() => centres[Math.floor(rnd() * centres.length)]);
        for (let j = 0; j < perResource; j++) {
          const c = rnd() < 0.8 ? topics[j % 3] : centres[Math.floor(rnd() * centres.length)];
          entries.push(
            entry(
              r * perResource + j + 1,
              id,
              Float32Array.from(c, (x) => x + 1.5 * gaussian(rnd)),
              `doc/${j}.md`,
            ),
          );
        }
      });
      await load(b, entries);
      const near = (v: Float32Array) => Float32Array.from(v, (x) => x + 0.4 * gaussian(rnd));
      const counts = [1, 10, 40, 100, 190, 300, 800];
      const shapes: Array<{ shape: string; recall: string; dishonest: number; inexact: number }> = [];
      for (const count of counts) {
        // Resources spread over the store (every k-th), not its first ones.
        const picked = Array.from({ length: count }, (_, i) => Math.floor((i * ids.length) / count));
        const view = viewOf(picked.map((i) => ids[i]));
        const queries = [
          ...Array.from({ length: 12 }, () => near(entries[Math.floor(rnd() * entries.length)].vector)),
          ...Array.from({ length: 8 }, () =>
            near(entries[picked[Math.floor(rnd() * count)] * perResource + Math.floor(rnd() * perResource)].vector),
          ),
        ];
        let found = 0;
        let wanted = 0;
        let dishonest = 0;
        let inexact = 0;
        for (const q of queries) {
          const o = searchOpts({ topK: 10 });
          const got = await b.search(view, q, o);
          const want = referenceSearch(entries, view, q, o).map((h) => h.chunkKey);
          const keys = got.hits.map((h) => h.chunkKey);
          const wantKeys = new Set(want);
          found += keys.filter((k) => wantKeys.has(k)).length;
          wanted += want.length;
          // exhaustive vouches for the answer: it must then be the exact top 10.
          if (got.exhaustive && JSON.stringify(keys) !== JSON.stringify(want)) dishonest += 1;
          if (!got.exhaustive) inexact += 1;
        }
        const recall = found / wanted;
        shapes.push({
          shape: `${count} resources`,
          recall: recall >= 0.99 ? ">= 0.99" : recall.toFixed(3),
          dishonest,
          inexact: opts.exact ? inexact : 0,
        });
      }
      expect(shapes).toEqual(counts.map((count) => ({ shape: `${count} resources`, recall: ">= 0.99", dishonest: 0, inexact: 0 })));
    }, 900_000);
  });
}
