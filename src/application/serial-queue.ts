/**
 * Runs async tasks one at a time, in call order. The tier service runs every operation through one, so a
 * move (several awaited writes) is never interleaved with another call's and a fragment is in exactly one
 * tier at any moment, whatever the concurrency of callers. A failed task does not stop the ones queued
 * behind it.
 * @example const q = new SerialQueue(); await Promise.all([q.run(a), q.run(b)]); // b starts after a ends
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task queued before it has settled. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(() => task());
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves when every task queued so far has settled. */
  async drain(): Promise<void> {
    await this.tail;
  }
}
