/**
 * Runs async tasks one at a time per key, in call order, while tasks of different keys run concurrently.
 * The indexer keys its writes by resource: two writes of one resource must commit, and have their vector
 * changes applied, in one order, but a write of another resource (another tenant's, typically) has nothing
 * to wait for, so one tenant's large upload never holds another's small write for the whole upload: the
 * store interleaves them a slice at a time. A failed task does not stop the ones queued behind it; a key
 * is forgotten once its last task settles.
 * @example const q = new KeyedSerialQueue(); await Promise.all([q.run("a", f), q.run("b", g), q.run("a", h)]); // h after f, g alongside
 */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every task queued before it under `key` has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(() => task());
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** How many keys have a task queued or running. */
  get activeKeys(): number {
    return this.tails.size;
  }
}
