import { FairShareCache } from "../../src/adapters/kit/fair-share-cache.js";

/** The keys `principal` still holds, of `keys`. */
function heldOf(cache: FairShareCache<string, string>, principal: string, keys: string[]): string[] {
  return keys.filter((k) => cache.get(principal, k) !== undefined);
}

describe("FairShareCache", () => {
  it("never holds more than its budget, and gives up the principal-holding-the-most's entries first", () => {
    const cache = new FairShareCache<string, string>(100);
    for (let i = 0; i < 5; i++) cache.set("small", `s${i}`, "v", 5);
    for (let i = 0; i < 30; i++) {
      cache.set("big", `b${i}`, "v", 10);
      expect(cache.holdings.bytes).toBeLessThanOrEqual(100);
    }
    expect(heldOf(cache, "small", ["s0", "s1", "s2", "s3", "s4"])).toHaveLength(5);
    expect(cache.holdings).toEqual({ entries: 12, bytes: 95, principals: 2 });
  });

  it("evicts the oldest entry not used since it was last passed over (second chance)", () => {
    const cache = new FairShareCache<string, string>(40);
    for (const k of ["a", "b", "c", "d"]) cache.set("p", k, k, 10);
    // a and c used: setting e evicts b, the oldest unused (a, passed over, moves to the back unmarked).
    expect(cache.get("p", "a")).toBe("a");
    expect(cache.get("p", "c")).toBe("c");
    cache.set("p", "e", "e", 10);
    expect(heldOf(cache, "p", ["a", "b", "c", "d", "e"])).toEqual(["a", "c", "d", "e"]);
  });

  it("keeps a used entry over unused ones however often the budget is passed", () => {
    const cache = new FairShareCache<string, string>(30);
    cache.set("p", "hot", "h", 10);
    for (let i = 0; i < 50; i++) {
      expect(cache.get("p", "hot")).toBe("h");
      cache.set("p", `cold${i}`, "c", 10);
      expect(cache.holdings.bytes).toBeLessThanOrEqual(30);
    }
    expect(cache.get("p", "hot")).toBe("h");
  });

  it("comes round to an entry when every entry was used, and never evicts the entry being set", () => {
    const cache = new FairShareCache<string, string>(30);
    for (const k of ["a", "b", "c"]) cache.set("p", k, k, 10);
    for (const k of ["a", "b", "c"]) cache.get("p", k);
    cache.set("p", "d", "d", 10);
    expect(heldOf(cache, "p", ["a", "b", "c", "d"])).toEqual(["b", "c", "d"]);
    const alone = new FairShareCache<string, string>(10);
    alone.set("p", "x", "x", 50);
    expect(alone.get("p", "x")).toBe("x");
    alone.set("p", "y", "y", 50);
    expect(heldOf(alone, "p", ["x", "y"])).toEqual(["y"]);
  });

  it("serves each principal only its own entries", () => {
    const cache = new FairShareCache<string, string>(100);
    cache.set("p", "k", "mine", 10);
    expect(cache.get("q", "k")).toBeUndefined();
    cache.deleteEverywhere("k");
    expect(cache.get("p", "k")).toBeUndefined();
    expect(cache.holdings).toEqual({ entries: 0, bytes: 0, principals: 0 });
  });
});
