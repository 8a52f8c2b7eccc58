import { SerialQueue } from "../../src/application/shared/serial-queue.js";

describe("SerialQueue", () => {
  test("runs tasks one at a time in call order, and a failure does not stop the ones behind it", async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    const task =
      (name: string, ms: number, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([q.run(task("a", 20)), q.run(task("b", 1, true)), q.run(task("c", 5))]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    await q.drain();
  });
});

test("SerialQueue is idle only while no task is queued or running, failed ones included", async () => {
  const q = new SerialQueue();
  expect(q.idle).toBe(true);
  let release!: () => void;
  const first = q.run(() => new Promise<void>((r) => (release = r)));
  const second = q.run(async () => {
    throw new Error("second");
  });
  expect(q.idle).toBe(false);
  await Promise.resolve();
  release();
  await first;
  expect(q.idle).toBe(false);
  await expect(second).rejects.toThrow("second");
  expect(q.idle).toBe(true);
  await q.drain();
  expect(q.idle).toBe(true);
});
