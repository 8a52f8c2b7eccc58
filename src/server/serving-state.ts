/**
 * Whether the server still accepts work. Health answers from it, and flips to NOT_SERVING the moment a
 * graceful shutdown starts, so load balancers stop routing here while in-flight calls finish.
 */
export class ServingState {
  private draining = false;
  private readonly listeners = new Set<() => void>();

  /** True until `startDraining` is called. */
  get serving(): boolean {
    return !this.draining;
  }

  /** Marks the server as shutting down and tells every watcher, once. */
  startDraining(): void {
    if (this.draining) return;
    this.draining = true;
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * Calls `listener` when draining starts (at once if it already has). Returns the unsubscribe function,
   * which a health watch calls when its client goes away.
   */
  onDrain(listener: () => void): () => void {
    if (this.draining) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
