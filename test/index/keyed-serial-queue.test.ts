import { KeyedSerialQueue } from "../../src/application/shared/keyed-serial-queue.js";

/** A task that records its start and end and finishes when `release` is called. */
function gated(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    task: async () => {
      log.push(`${name} start`);
      await gate;
      log.push(`${name} end`);
      return name;
    },
    release: () => release(),
  };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

it("runs one key's tasks in call order and another key's alongside them", async () => {
  const q = new KeyedSerialQueue();
  const log: string[] = [];
  const a1 = gated(log, "a1");
  const a2 = gated(log, "a2");
  const b1 = gated(log, "b1");
  const p1 = q.run("a", a1.task);
  const p2 = q.run("a", a2.task);
  const p3 = q.run("b", b1.task);
  await turns(3);
  // b1 started while a1 holds key a; a2 waits for a1.
  expect(log).toEqual(["a1 start", "b1 start"]);
  b1.release();
  expect(await p3).toBe("b1");
  expect(log).toEqual(["a1 start", "b1 start", "b1 end"]);
  a1.release();
  await p1;
  await turns(3);
  expect(log).toEqual(["a1 start", "b1 start", "b1 end", "a1 end", "a2 start"]);
  a2.release();
  await p2;
  await turns(2);
  expect(q.activeKeys).toBe(0);
});

it("a failed task does not stop the ones queued behind it under its key", async () => {
  const q = new KeyedSerialQueue();
  const failed = q.run("a", async () => {
    throw new Error("boom");
  });
  const next = q.run("a", async () => "after");
  await expect(failed).rejects.toThrow("boom");
  expect(await next).toBe("after");
});
