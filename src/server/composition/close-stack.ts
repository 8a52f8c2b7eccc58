/**
 * What an open path (the composition root's) has opened so far, to close in reverse order: all of it when a
 * later step fails, so a failed start leaves no timer, background load or lock behind, and all of it at
 * close, so the two never drift apart.
 * @example const opened = new CloseStack(); const db = opened.push(open(), (d) => d.close()); … await opened.closeAll();
 */
export class CloseStack {
  private readonly closers: Array<() => unknown> = [];

  /** Registers `close(resource)` to run at `closeAll`, before everything pushed earlier; returns `resource`. */
  push<T>(resource: T, close: (resource: T) => unknown): T {
    this.closers.push(() => close(resource));
    return resource;
  }

  /**
   * Runs every closer, the last pushed first, each even when one before it failed (a close that throws must
   * not keep the rest open); then throws the first failure. A second call finds nothing left to close.
   */
  async closeAll(): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }
}
