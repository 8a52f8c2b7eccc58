/**
 * Runs async tasks one at a time, in call order. The tier service runs every operation through one, so a
 * move (several awaited writes) is never interleaved with another call's and a fragment is in exactly one
 * tier at any moment, whatever the concurrency of callers. A failed task does not stop the ones queued
 * behind it.
 * @example const q = new SerialQueue(); await Promise.all([q.run(a), q.run(b)]); // b starts after a ends
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  /** Tasks queued or running, not yet settled. */
  private pending = 0;
  private readonly settled = (): void => {
    this.pending -= 1;
  };

  /**
   * Whether no task is queued or running: work that is synchronous from start to end may then run at once,
   * outside the queue, and is still never interleaved with a queued task (none is between two of its awaits).
   */
  get idle(): boolean {
    return this.pending === 0;
  }

  /** Runs `task` after every task queued before it has settled. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.pending += 1;
    const result = this.tail.then(() => task());
    this.tail = result.then(this.settled, this.settled);
    return result;
  }

  /** Resolves when every task queued so far has settled. */
  async drain(): Promise<void> {
    await this.tail;
  }
}
