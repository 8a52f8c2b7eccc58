import { BodyDeadline, type BodyDeadlineMiss } from "../../src/server/transport/body-deadline.js";

/** A deadline on jest's fake clock (Date.now moves with the fake timers). */
function deadline(opts: { stallMs: number; minBytesPerSecond?: number; graceMs?: number }): {
  d: BodyDeadline;
  misses: BodyDeadlineMiss[];
} {
  const misses: BodyDeadlineMiss[] = [];
  const d = new BodyDeadline(
    { stallMs: opts.stallMs, minBytesPerSecond: opts.minBytesPerSecond ?? 0, graceMs: opts.graceMs ?? opts.stallMs },
    (m) => misses.push(m),
    () => Date.now(),
  );
  return { d, misses };
}

/** Waits on `d` and expects the stall to be missed exactly `stallMs` later (not a millisecond before). */
function expectStalledAfter(d: BodyDeadline, misses: BodyDeadlineMiss[], stallMs: number): void {
  const before = misses.length;
  d.waiting();
  jest.advanceTimersByTime(stallMs - 1);
  expect(misses).toHaveLength(before);
  jest.advanceTimersByTime(1);
  expect(misses.slice(before).map((m) => m.reason)).toEqual(["stalled"]);
}

describe("BodyDeadline", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("misses a body that sends nothing for the stall deadline, not a millisecond before", () => {
    const { d, misses } = deadline({ stallMs: 1000 });
    expectStalledAfter(d, misses, 1000);
    expect(misses).toEqual([{ reason: "stalled", message: "the request body stalled: no bytes for 1000 ms" }]);
  });

  it("counts the stall from the last bytes: a body that keeps sending is never missed", () => {
    const { d, misses } = deadline({ stallMs: 1000 });
    for (let i = 0; i < 20; i++) {
      d.waiting();
      jest.advanceTimersByTime(900);
      d.received(10);
    }
    expect(misses).toEqual([]);
    expectStalledAfter(d, misses, 1000);
  });

  it("never counts the time the server is not waiting (its own backpressure)", () => {
    const { d, misses } = deadline({ stallMs: 1000, minBytesPerSecond: 1000, graceMs: 1000 });
    d.waiting();
    jest.advanceTimersByTime(500);
    d.received(2000);
    // The server works on what it read for a long time, without waiting for more.
    jest.advanceTimersByTime(60_000);
    expect(misses).toEqual([]);
    expectStalledAfter(d, misses, 1000);
  });

  it("misses a body that trickles under the minimum rate once the grace has passed", () => {
    const { d, misses } = deadline({ stallMs: 10_000, minBytesPerSecond: 100, graceMs: 2000 });
    // One byte every 400 ms: inside the stall deadline, far under 100 bytes/s.
    let sent = 0;
    for (let t = 0; t < 2000; t += 400) {
      d.waiting();
      jest.advanceTimersByTime(400);
      if (misses.length > 0) break;
      d.received(1);
      sent++;
    }
    expect(sent).toBe(5);
    expect(misses).toEqual([]);
    // Past the grace: missed at the next check (a chunk's arrival or the timer, RATE_CHECK_MS apart).
    d.waiting();
    jest.advanceTimersByTime(260);
    expect(misses).toHaveLength(1);
    expect(misses[0].reason).toBe("too-slow");
    expect(misses[0].message).toMatch(/^the request body arrived too slowly: \d+ bytes\/s over \d+ ms, under the minimum of 100$/);
  });

  it("keeps a body that averages the minimum rate past the grace", () => {
    const { d, misses } = deadline({ stallMs: 10_000, minBytesPerSecond: 100, graceMs: 1000 });
    for (let i = 0; i < 50; i++) {
      d.waiting();
      jest.advanceTimersByTime(200);
      d.received(25);
    }
    expect(misses).toEqual([]);
  });

  it("misses a single late chunk that leaves the average under the rate (checked on arrival)", () => {
    const { d, misses } = deadline({ stallMs: 60_000, minBytesPerSecond: 1000, graceMs: 1000 });
    d.waiting();
    jest.advanceTimersByTime(1100);
    // The timer's check may already have missed it; if not, the chunk's arrival does.
    if (misses.length === 0) d.received(10);
    expect(misses.map((m) => m.reason)).toEqual(["too-slow"]);
  });

  it("misses at most once, and never after stop()", () => {
    const a = deadline({ stallMs: 100 });
    a.d.waiting();
    jest.advanceTimersByTime(10_000);
    a.d.received(1);
    a.d.waiting();
    jest.advanceTimersByTime(10_000);
    expect(a.misses).toHaveLength(1);

    const b = deadline({ stallMs: 100, minBytesPerSecond: 1000, graceMs: 100 });
    b.d.waiting();
    jest.advanceTimersByTime(50);
    b.d.stop();
    jest.advanceTimersByTime(10_000);
    b.d.waiting();
    jest.advanceTimersByTime(10_000);
    expect(b.misses).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("holds one timer a body however many chunks arrive", () => {
    const { d } = deadline({ stallMs: 30_000, minBytesPerSecond: 240, graceMs: 30_000 });
    d.waiting();
    for (let i = 0; i < 100; i++) {
      d.received(100);
      d.waiting();
      expect(jest.getTimerCount()).toBe(1);
    }
    d.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
