import { FairQueue } from "../../src/domain/fair-queue.js";

describe("FairQueue", () => {
  it("serves tenants round robin, whatever one tenant has queued", () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 5; i++) q.push("a", `a${i}`);
    q.push("b", "b0");
    q.push("b", "b1");
    q.push("c", "c0");
    const order: string[] = [];
    for (let x = q.shift(); x !== undefined; x = q.shift()) order.push(x);
    expect(order).toEqual(["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"]);
    expect(q.size).toBe(0);
  });

  it("removes a waiting entry and keeps the rotation", () => {
    const q = new FairQueue<string>();
    q.push("a", "a0");
    q.push("b", "b0");
    q.push("a", "a1");
    expect(q.remove("b", "b0")).toBe(true);
    expect(q.remove("b", "b0")).toBe(false);
    expect(q.waiting("a")).toBe(2);
    expect([q.shift(), q.shift(), q.shift()]).toEqual(["a0", "a1", undefined]);
  });

  it("given the servers each tenant holds, serves the tenant holding the fewest first, round robin among equals", () => {
    const q = new FairQueue<string>();
    q.push("a", "a0");
    q.push("a", "a1");
    q.push("b", "b0");
    q.push("c", "c0");
    const held: Record<string, number> = { a: 1, b: 2, c: 1 };
    expect(q.shift((t) => held[t])).toBe("a0");
    held.a = 2;
    expect(q.shift((t) => held[t])).toBe("c0");
    expect(q.shift((t) => held[t])).toBe("b0");
    expect(q.shift((t) => held[t])).toBe("a1");
    expect(q.shift((t) => held[t])).toBeUndefined();
  });

  it("puts a preempted entry back at the head of its tenant's queue, the tenant last in the rotation", () => {
    const q = new FairQueue<string>();
    q.push("a", "a1");
    q.push("b", "b0");
    q.unshift("a", "a0");
    expect([...q.heads()]).toEqual([
      ["b", "b0"],
      ["a", "a0"],
    ]);
    q.unshift("c", "c0");
    expect(q.size).toBe(4);
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual(["b0", "a0", "c0", "a1"]);
  });

  it("serves a newcomer before a tenant with a backlog that was just served (not behind it in the rotation)", () => {
    const q = new FairQueue<string>();
    q.push("a", "a0");
    q.push("a", "a1");
    expect(q.shift()).toBe("a0");
    // b arrives while a's backlog waits: a was served last, so b goes first.
    q.push("b", "b0");
    expect([q.shift(), q.shift()]).toEqual(["b0", "a1"]);
  });
});
