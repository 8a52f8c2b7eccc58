import { DEFAULT_QUOTA_LIMITS, QuotaLedger, type QuotaRefusal } from "../../src/server/quotas/quota-ledger.js";

describe("QuotaLedger", () => {
  it("keeps each principal's concurrency and rate apart, and says when to retry", () => {
    let now = 0;
    const ledger = new QuotaLedger({ ...DEFAULT_QUOTA_LIMITS, concurrent: 2, ratePerSecond: 10, burst: 3 }, () => now);
    const a1 = ledger.admit("a") as { release: () => void };
    const a2 = ledger.admit("a") as { release: () => void };
    expect((ledger.admit("a") as QuotaRefusal).reason).toMatch(/in flight/);
    expect("release" in ledger.admit("b")).toBe(true);
    a1.release();
    a1.release();
    expect("release" in ledger.admit("a")).toBe(true);
    // Three tokens spent by a: the bucket is empty until a tenth of a second has passed.
    a2.release();
    const refused = ledger.admit("a") as QuotaRefusal;
    expect(refused.reason).toMatch(/per second/);
    expect(refused.retryAfterMs).toBe(100);
    now += 100;
    expect("release" in ledger.admit("a")).toBe(true);
  });
});
