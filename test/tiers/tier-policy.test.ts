import { tiersForRole } from "../../src/domain/actor-role.js";
import { tierAbove, tierBelow } from "../../src/domain/tier-fragment.js";
import { LruTierPolicy } from "../../src/domain/tier-policy.js";

const budgets = { maxTokensHot: 100, maxDecisionsWarm: 2, maxDecisionsCold: 2 };

function ids(p: LruTierPolicy, tier: "hot" | "warm" | "cold"): string[] {
  return [...p.evictionOrder(tier)].map((e) => e.key);
}

describe("LruTierPolicy", () => {
  test("keeps each tier in least-recently-used order; touch moves an entry to the end", () => {
    const p = new LruTierPolicy(budgets);
    p.place("a", "hot", 10, p.nextSeq());
    p.place("b", "hot", 10, p.nextSeq());
    p.place("c", "hot", 10, p.nextSeq());
    expect(ids(p, "hot")).toEqual(["a", "b", "c"]);
    p.touch("a", p.nextSeq());
    expect(ids(p, "hot")).toEqual(["b", "c", "a"]);
    expect(p.tokens("hot")).toBe(30);
    expect(p.size("hot")).toBe(3);
  });

  test("place moves an entry between tiers, keeping one entry per id and the token totals right", () => {
    const p = new LruTierPolicy(budgets);
    p.place("a", "hot", 40, p.nextSeq());
    p.place("a", "warm", 40, p.nextSeq());
    expect(ids(p, "hot")).toEqual([]);
    expect(ids(p, "warm")).toEqual(["a"]);
    expect(p.tokens("hot")).toBe(0);
    expect(p.tokens("warm")).toBe(40);
    expect(p.get("a")?.tier).toBe("warm");
    p.remove("a");
    expect(p.get("a")).toBeUndefined();
    expect(p.tokens("warm")).toBe(0);
  });

  test("hot is over budget by tokens, warm and cold by count", () => {
    const p = new LruTierPolicy(budgets);
    p.place("a", "hot", 60, p.nextSeq());
    p.place("b", "hot", 40, p.nextSeq());
    expect(p.over("hot")).toBe(false);
    p.place("c", "hot", 1, p.nextSeq());
    expect(p.over("hot")).toBe(true);
    for (const id of ["w1", "w2"]) p.place(id, "warm", 1000, p.nextSeq());
    expect(p.over("warm")).toBe(false);
    p.place("w3", "warm", 1, p.nextSeq());
    expect(p.over("warm")).toBe(true);
  });

  test("the overflow plan takes the topmost over-budget tier's LRU entry one tier down, and deletes out of cold", () => {
    const p = new LruTierPolicy(budgets);
    p.place("a", "hot", 80, p.nextSeq());
    p.place("b", "hot", 40, p.nextSeq());
    expect(p.nextOverflowMove()).toEqual({ key: "a", from: "hot", to: "warm" });
    p.place("a", "warm", 80, p.nextSeq());
    expect(p.nextOverflowMove()).toBeUndefined();
    for (const id of ["c1", "c2", "c3"]) p.place(id, "cold", 1, p.nextSeq());
    expect(p.nextOverflowMove()).toEqual({ key: "c1", from: "cold", to: undefined });
  });

  test("a cascade resolves top down until every tier fits", () => {
    const p = new LruTierPolicy({ maxTokensHot: 10, maxDecisionsWarm: 1, maxDecisionsCold: 1 });
    p.place("w", "warm", 5, p.nextSeq());
    p.place("c", "cold", 5, p.nextSeq());
    p.place("h1", "hot", 8, p.nextSeq());
    p.place("h2", "hot", 8, p.nextSeq());
    const moves = [];
    for (let m = p.nextOverflowMove(); m; m = p.nextOverflowMove()) {
      moves.push(m);
      if (m.to) p.place(m.key, m.to, p.get(m.key)!.tokens, p.nextSeq());
      else p.remove(m.key);
    }
    expect(moves).toEqual([
      { key: "h1", from: "hot", to: "warm" },
      { key: "w", from: "warm", to: "cold" },
      { key: "c", from: "cold", to: undefined },
    ]);
    expect(ids(p, "hot")).toEqual(["h2"]);
    expect(ids(p, "warm")).toEqual(["h1"]);
    expect(ids(p, "cold")).toEqual(["w"]);
  });

  test("fits refuses into hot only what exceeds the whole hot budget", () => {
    const p = new LruTierPolicy(budgets);
    expect(p.fits("hot", 100)).toBe(true);
    expect(p.fits("hot", 101)).toBe(false);
    expect(p.fits("warm", 1_000_000)).toBe(true);
  });

  test("nextSeq stays above every placed seq (loading from a store)", () => {
    const p = new LruTierPolicy(budgets);
    p.place("a", "cold", 1, 41);
    expect(p.nextSeq()).toBe(42);
  });
});

describe("tiers and roles", () => {
  test("one step up and down", () => {
    expect([tierAbove("cold"), tierAbove("warm"), tierAbove("hot")]).toEqual(["warm", "hot", undefined]);
    expect([tierBelow("hot"), tierBelow("warm"), tierBelow("cold")]).toEqual(["warm", "cold", undefined]);
  });

  test("strategist sees hot, warm and cold; executor hot and warm; reviewer hot", () => {
    expect(tiersForRole("strategist")).toEqual(["hot", "warm", "cold"]);
    expect(tiersForRole("executor")).toEqual(["hot", "warm"]);
    expect(tiersForRole("reviewer")).toEqual(["hot"]);
  });
});
