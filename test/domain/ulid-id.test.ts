import { isUlid, newUlid } from "../../src/domain/ulid-id.js";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

describe("newUlid", () => {
  it("gives canonical ULIDs, distinct, in order within a millisecond and across them", () => {
    const seen = new Set<string>();
    let last = "";
    for (let i = 0; i < 5_000; i++) {
      const id = newUlid(1_700_000_000_000 + Math.floor(i / 7));
      expect(isUlid(id)).toBe(true);
      expect(id > last).toBe(true);
      seen.add(id);
      last = id;
    }
    expect(seen.size).toBe(5_000);
  });

  it("draws its random characters evenly from the whole alphabet (past the 4 KiB pool's refills)", () => {
    const counts = new Array<number>(32).fill(0);
    const n = 4_000;
    for (let i = 0; i < n; i++) {
      // A new millisecond each time: 16 fresh random characters (the same millisecond would increment).
      for (const c of newUlid(1_800_000_000_000 + i * 2).slice(10)) counts[CROCKFORD.indexOf(c)]++;
    }
    const expected = (n * 16) / 32;
    const chiSquare = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 31 degrees of freedom: above 70 has a chance below 1e-4 for an even source; a skewed or stuck one is far above.
    expect(chiSquare).toBeLessThan(70);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });
});
