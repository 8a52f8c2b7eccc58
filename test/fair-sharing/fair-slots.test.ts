/**
 * The adapters' fair pool of slots (`FairSlots`, used by the SPARQL endpoint adapter; the real-engine attack
 * is test/security/graph-fairness-virtuoso.test.ts). Tasks here are timers that stop when their attempt's
 * signal aborts, so what is asserted is the order of events, never how long anything took.
 */
import { FairSlots, type SlotAttempt } from "../../src/adapters/kit/fair-slots.js";

/** A task that runs until `release()` (answering `value`) or until its attempt is stopped; logs its starts and stops. */
function controllable(log: string[], name: string) {
  let release: (() => void) | undefined;
  const task = (attempt: SlotAttempt) =>
    new Promise<string>((resolve, reject) => {
      log.push(`start ${name}`);
      release = () => resolve(name);
      attempt.signal.addEventListener("abort", () => {
        log.push(`stop ${name}`);
        reject(attempt.signal.reason);
      });
    });
  return { task, release: () => release?.() };
}

const LONG = 600_000;

function pool(extra: Partial<ConstructorParameters<typeof FairSlots>[0]> = {}): FairSlots {
  return new FairSlots({ slots: 2, queueTimeoutMs: LONG, maxQueuedPerTenant: 64, sliceMs: 20, what: "graph query", ...extra });
}

let slots: FairSlots | undefined;
afterEach(() => slots?.close());

it("runs at most `slots` tasks; a newcomer's task takes the slot of the holder's newest after a slice, which runs again later", async () => {
  const s = (slots = pool());
  const log: string[] = [];
  const a = [0, 1, 2].map((i) => controllable(log, `a${i}`));
  const runs = a.map((t) => s.run({ tenant: "a", timeoutMs: LONG }, t.task));
  expect(s.active).toBe(2);
  expect(log).toEqual(["start a0", "start a1"]);
  const b = controllable(log, "b0");
  const bDone = s.run({ tenant: "b", timeoutMs: LONG }, b.task);
  // After a slice, a1 (A's newest, never its longest-running a0) is stopped and b0 takes its slot.
  while (!log.includes("start b0")) await new Promise((r) => setTimeout(r, 5));
  expect(log).toEqual(["start a0", "start a1", "stop a1", "start b0"]);
  expect(s.preemptions).toBe(1);
  b.release();
  expect(await bDone).toBe("b0");
  // The freed slot goes back to A: its preempted a1 first (the head of A's queue), then a2.
  while (!log.includes("start a1", 2)) await new Promise((r) => setTimeout(r, 5));
  expect(log.filter((l) => l === "start a1")).toHaveLength(2);
  a[0].release();
  a[1].release();
  while (!log.includes("start a2")) await new Promise((r) => setTimeout(r, 5));
  a[2].release();
  expect(await Promise.all(runs)).toEqual(["a0", "a1", "a2"]);
});

it("with lingerMs, a stopped attempt counts against its tenant until its limit: the tenant starts nothing while they fill every slot, others do", async () => {
  const s = (slots = pool({ slots: 1, lingerMs: 0 }));
  const log: string[] = [];
  const cancel = new AbortController();
  const a0 = controllable(log, "a0");
  const first = s.run({ tenant: "a", timeoutMs: 2_000, signal: cancel.signal }, a0.task).catch((e: Error) => e.message);
  cancel.abort();
  expect(await first).toMatch(/cancelled/);
  expect(log).toEqual(["start a0", "stop a0"]);
  // a0 may still run on the engine until its 2 s limit: A's next waits, B's runs at once.
  const a1 = controllable(log, "a1");
  const second = s.run({ tenant: "a", timeoutMs: LONG }, a1.task);
  const b0 = controllable(log, "b0");
  const bDone = s.run({ tenant: "b", timeoutMs: LONG }, b0.task);
  expect(log).toEqual(["start a0", "stop a0", "start b0"]);
  // Several slices pass: B holds the only slot while A waits, but A could not take it, so B is not preempted.
  await new Promise((r) => setTimeout(r, 100));
  expect(s.preemptions).toBe(0);
  expect(log).toEqual(["start a0", "stop a0", "start b0"]);
  b0.release();
  await bDone;
  // Then the slot idles for A until a0's limit has passed, and a1 starts.
  while (!log.includes("start a1")) await new Promise((r) => setTimeout(r, 5));
  a1.release();
  expect(await second).toBe("a1");
});

it("a task past its time limit is DEADLINE_EXCEEDED and stopped; a waiting one past the queue bound is RESOURCE_EXHAUSTED", async () => {
  const s = (slots = pool({ slots: 1, queueTimeoutMs: 100 }));
  const log: string[] = [];
  const slow = s.run({ tenant: "a", timeoutMs: 300 }, controllable(log, "a0").task).catch((e: Error) => e.constructor.name);
  const waiting = s.run({ tenant: "a", timeoutMs: LONG }, controllable(log, "a1").task).catch((e: Error) => e.constructor.name);
  expect(await waiting).toBe("ResourceExhaustedError");
  expect(await slow).toBe("DeadlineExceededError");
  expect(log).toEqual(["start a0", "stop a0"]);
  expect(s.active).toBe(0);
});
