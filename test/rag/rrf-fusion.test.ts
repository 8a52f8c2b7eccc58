import fc from "fast-check";
import { DEFAULT_RRF_K, fuseRrf, type RankedList } from "../../src/domain/rrf-fusion.js";

type Src = "text" | "vector" | "graph";
const list = (source: Src, keys: string[], scores?: number[]): RankedList<Src, string> => ({
  source,
  items: keys.map((key, i) => ({ key, score: scores?.[i] ?? 1 - i / 100, payload: `${source}:${key}` })),
});

describe("fuseRrf arithmetic", () => {
  it("sums weight / (k + rank) with ranks from 1 and normalises by the best achievable sum", () => {
    const r = fuseRrf([list("text", ["a", "b"]), list("vector", ["b", "c"])], { k: 60 });
    const max = 2 / 61;
    expect(r.items.map((i) => i.key)).toEqual(["b", "a", "c"]);
    const b = r.items[0];
    expect(b.rawScore).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(b.score).toBeCloseTo((1 / 62 + 1 / 61) / max, 15);
    expect(r.items[1].rawScore).toBeCloseTo(1 / 61, 15);
    expect(r.items[1].score).toBeCloseTo(1 / 61 / max, 15);
    expect(r.items[2].score).toBeCloseTo(1 / 62 / max, 15);
  });

  it("explains every result: rank and own score in each source that found it, in list order", () => {
    const r = fuseRrf([list("text", ["a", "b"], [0.9, 0.4]), list("vector", ["b"], [0.77])], { k: 60 });
    const b = r.items.find((i) => i.key === "b")!;
    expect(b.contributions).toEqual([
      { source: "text", rank: 2, score: 0.4 },
      { source: "vector", rank: 1, score: 0.77 },
    ]);
  });

  it("scores 1 for a unit ranked first by every source, and k changes the spread", () => {
    const lists = [list("text", ["a", "b"]), list("vector", ["a", "b"]), list("graph", ["a"])];
    expect(fuseRrf(lists, { k: 60 }).items[0]).toMatchObject({ key: "a", score: 1 });
    const k1 = fuseRrf(lists, { k: 1 }).items[1].score;
    const k60 = fuseRrf(lists, { k: 60 }).items[1].score;
    expect(k1).toBeCloseTo((1 / 3 + 1 / 3) / (3 / 2), 12);
    expect(k60).toBeGreaterThan(k1);
  });

  it("applies per-source weights, including zero", () => {
    const lists = [list("text", ["a", "b"]), list("vector", ["b", "a"])];
    const weights = new Map<Src, number>([
      ["text", 3],
      ["vector", 1],
    ]);
    const r = fuseRrf(lists, { k: 60, weights });
    expect(r.items.map((i) => i.key)).toEqual(["a", "b"]);
    expect(r.items[0].rawScore).toBeCloseTo(3 / 61 + 1 / 62, 15);
    expect(r.items[0].score).toBeCloseTo((3 / 61 + 1 / 62) / (4 / 61), 15);
    const zero = fuseRrf(lists, { k: 60, weights: new Map<Src, number>([["text", 0]]) });
    expect(zero.items.map((i) => i.key)).toEqual(["b", "a"]);
  });

  it("breaks ties by key, deterministically", () => {
    const r = fuseRrf([list("text", ["z", "m"]), list("vector", ["m", "z"])], { k: 60 });
    expect(r.items.map((i) => i.key)).toEqual(["m", "z"]);
    expect(r.items[0].score).toBe(r.items[1].score);
  });

  it("applies min_score and top_k after fusion, and counts the candidates", () => {
    const lists = [list("text", ["a", "b", "c", "d"]), list("vector", ["a", "c"])];
    const all = fuseRrf(lists, { k: 60 });
    expect(all.items.map((i) => i.key)).toEqual(["a", "c", "b", "d"]);
    const cut = fuseRrf(lists, { k: 60, topK: 2 });
    expect(cut.items.map((i) => i.key)).toEqual(["a", "c"]);
    expect(cut.candidates).toBe(4);
    const min = fuseRrf(lists, { k: 60, minScore: all.items[1].score });
    expect(min.items.map((i) => i.key)).toEqual(["a", "c"]);
  });

  it("honours explicit shared ranks and keeps the best-ranked payload", () => {
    const graph: RankedList<Src, string> = {
      source: "graph",
      items: [
        { key: "doc#0", score: 1, rank: 1, payload: "g0" },
        { key: "doc#1", score: 1, rank: 1, payload: "g1" },
        { key: "x", score: 0.5, rank: 2, payload: "gx" },
      ],
    };
    const r = fuseRrf([list("text", ["x", "doc#1"]), graph], { k: 60 });
    expect(r.items.find((i) => i.key === "doc#0")!.contributions).toEqual([{ source: "graph", rank: 1, score: 1 }]);
    expect(r.items.find((i) => i.key === "x")!.payload).toBe("text:x");
    expect(r.items.find((i) => i.key === "doc#1")!.payload).toBe("g1");
  });

  it("ignores a key repeated within one list (its best rank counts)", () => {
    const r = fuseRrf([list("text", ["a", "b", "a"])], { k: 60 });
    expect(r.items.map((i) => [i.key, i.contributions[0].rank])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });

  it("refuses bad k, weights and ranks", () => {
    expect(() => fuseRrf([list("text", ["a"])], { k: 0 })).toThrow(RangeError);
    expect(() => fuseRrf([list("text", ["a"])], { k: 60, weights: new Map<Src, number>([["text", -1]]) })).toThrow(RangeError);
    const bad: RankedList<Src, string> = {
      source: "text",
      items: [
        { key: "a", score: 1, rank: 2, payload: "" },
        { key: "b", score: 1, rank: 1, payload: "" },
      ],
    };
    expect(() => fuseRrf([bad], { k: 60 })).toThrow(RangeError);
  });

  it("normalises over the sources that answered: an empty list adds nothing to the best achievable sum", () => {
    // Keyword-only evidence beside a graph source that found nothing: the top unit is first in every
    // source that answered, so it scores 1 (it capped at 0.5 while the empty list counted).
    const r = fuseRrf([list("text", ["a", "b"]), list("graph", [])], { k: 60 });
    expect(r.items.map((i) => i.key)).toEqual(["a", "b"]);
    expect(r.items[0].score).toBe(1);
    expect(r.items[1].score).toBeCloseTo(1 / 62 / (1 / 61), 15);
    // A source that did answer still counts where a unit lacks its evidence.
    const both = fuseRrf([list("text", ["a"]), list("graph", ["b"]), list("vector", [])], { k: 60 });
    expect(both.items.map((i) => i.score)).toEqual([0.5, 0.5]);
    // Weights of sources that answered only.
    const weighted = fuseRrf([list("text", ["a"]), list("graph", [])], { k: 60, weights: new Map<Src, number>([["graph", 5]]) });
    expect(weighted.items[0].score).toBe(1);
  });

  it("returns nothing for no lists or empty lists", () => {
    expect(fuseRrf<Src, string>([], { k: DEFAULT_RRF_K }).items).toEqual([]);
    expect(fuseRrf([list("text", [])], { k: DEFAULT_RRF_K }).items).toEqual([]);
  });
});

const keysArb = fc.uniqueArray(fc.constantFrom(...Array.from({ length: 30 }, (_, i) => `uko://k${String(i).padStart(2, "0")}`)), {
  maxLength: 20,
});
const sources: Src[] = ["text", "vector", "graph"];
const listsArb = fc.array(keysArb, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((keys, i) => list(sources[i], keys)));
const optsArb = fc.record({
  k: fc.integer({ min: 1, max: 1000 }),
  weights: fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 3, maxLength: 3 }),
});

describe("fuseRrf properties", () => {
  it("a unit ranked first by every source is ranked first after fusion, with score 1", () => {
    fc.assert(
      fc.property(listsArb, optsArb, (lists, o) => {
        const top = "uko://top";
        const withTop = lists.map((l) => ({ ...l, items: [{ key: top, score: 1, payload: "" }, ...l.items] }));
        const weights = new Map<Src, number>(sources.map((s, i) => [s, o.weights[i] + 0.01]));
        const r = fuseRrf(withTop, { k: o.k, weights });
        expect(r.items[0].key).toBe(top);
        expect(r.items[0].score).toBeCloseTo(1, 12);
      }),
    );
  });

  it("fusing a single source keeps its order", () => {
    fc.assert(
      fc.property(keysArb, fc.integer({ min: 1, max: 1000 }), (keys, k) => {
        const r = fuseRrf([list("text", keys)], { k });
        expect(r.items.map((i) => i.key)).toEqual(keys);
      }),
    );
  });

  it("scores lie in [0, 1], are ordered descending with ties by key, and every unit of every list appears once", () => {
    fc.assert(
      fc.property(listsArb, optsArb, (lists, o) => {
        const weights = new Map<Src, number>(sources.map((s, i) => [s, o.weights[i]]));
        const r = fuseRrf(lists, { k: o.k, weights });
        const expected = new Set(lists.flatMap((l) => l.items.map((i) => i.key)));
        expect(new Set(r.items.map((i) => i.key))).toEqual(expected);
        expect(r.items.length).toBe(expected.size);
        for (let i = 0; i < r.items.length; i++) {
          const it = r.items[i];
          expect(it.score).toBeGreaterThanOrEqual(0);
          expect(it.score).toBeLessThanOrEqual(1);
          if (i > 0) {
            const prev = r.items[i - 1];
            expect(prev.score > it.score || (prev.score === it.score && prev.key < it.key)).toBe(true);
          }
        }
      }),
    );
  });

  it("the order does not depend on the order the lists are given in", () => {
    fc.assert(
      fc.property(listsArb, fc.integer({ min: 1, max: 200 }), (lists, k) => {
        const a = fuseRrf(lists, { k }).items.map((i) => [i.key, i.score]);
        const b = fuseRrf([...lists].reverse(), { k }).items.map((i) => [i.key, i.score]);
        expect(b).toEqual(a);
      }),
    );
  });

  it("top_k is a prefix of the uncut answer and min_score a filter of it", () => {
    fc.assert(
      fc.property(listsArb, fc.integer({ min: 1, max: 25 }), fc.double({ min: 0, max: 1, noNaN: true }), (lists, topK, minScore) => {
        const all = fuseRrf(lists, { k: 60 }).items;
        expect(fuseRrf(lists, { k: 60, topK }).items).toEqual(all.slice(0, topK));
        expect(fuseRrf(lists, { k: 60, minScore }).items).toEqual(all.filter((i) => i.score >= minScore));
      }),
    );
  });

  it("raising a unit's rank in one source never lowers its fused position", () => {
    fc.assert(
      fc.property(
        listsArb.filter((ls) => ls[0].items.length >= 2),
        fc.nat(),
        (lists, pick) => {
          const items = lists[0].items;
          const idx = 1 + (pick % (items.length - 1));
          const key = items[idx].key;
          const before = fuseRrf(lists, { k: 60 }).items.findIndex((i) => i.key === key);
          const promoted = [...items];
          [promoted[idx - 1], promoted[idx]] = [promoted[idx], promoted[idx - 1]];
          const after = fuseRrf([{ ...lists[0], items: promoted }, ...lists.slice(1)], { k: 60 }).items.findIndex((i) => i.key === key);
          expect(after).toBeLessThanOrEqual(before);
        },
      ),
    );
  });
});
