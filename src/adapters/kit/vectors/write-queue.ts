/**
 * Writes on a vector port are synchronous for its callers and applied in the background, in order: a
 * search awaits `flushed()` first, so it sees every write made before it, and a failed write fails the next
 * `flushed()` (once) instead of vanishing.
 */
export class WriteQueue {
  private queue: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  /** Runs `write` after every write queued before it. */
  enqueue(write: () => Promise<unknown>): void {
    this.queue = this.queue
      .then(write)
      .then(() => undefined)
      .catch((err: unknown) => {
        this.failure ??= err instanceof Error ? err : new Error(String(err));
      });
  }

  /** Resolves when every queued write is applied; throws the first failed one's error, once. */
  async flushed(): Promise<void> {
    await this.queue;
    if (this.failure) {
      const err = this.failure;
      this.failure = undefined;
      throw err;
    }
  }

  /** Resolves when every queued write has finished, failed or not (for closing). */
  async idle(): Promise<void> {
    await this.queue;
  }
}
