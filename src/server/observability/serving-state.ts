/**
 * Whether the server still accepts work, and which of its services are ready. Health answers from it: a
 * service whose backend is still loading at start (the embedded graph store fills its query workers in the
 * background, so start-up does not grow with the triples held) is NOT_SERVING until it is loaded, and
 * everything flips to NOT_SERVING the moment a graceful shutdown starts, so load balancers stop routing
 * here while in-flight calls finish.
 */
export class ServingState {
  private draining = false;
  private readonly listeners = new Set<() => void>();
  /** Services with a backend still loading (or failed to load), and how many of their backends are. */
  private readonly loading = new Map<string, number>();

  /** True until `startDraining` is called. */
  get serving(): boolean {
    return !this.draining;
  }

  /** True while not draining and `service` is not waiting for its backend. */
  isServing(service: string): boolean {
    return !this.draining && !this.loading.has(service);
  }

  /**
   * Marks `services` as not ready until `loaded` resolves (each watcher is told then); a service waiting
   * on several loads (RAG fuses vectors and the graph) is ready once all have. When one rejects its
   * services stay NOT_SERVING (their calls answer UNAVAILABLE from the backend) and `onFailure` gets the error.
   */
  waitFor(services: readonly string[], loaded: Promise<void>, onFailure: (err: unknown) => void): void {
    for (const s of services) this.loading.set(s, (this.loading.get(s) ?? 0) + 1);
    loaded.then(
      () => {
        for (const s of services) {
          const left = (this.loading.get(s) ?? 1) - 1;
          if (left > 0) this.loading.set(s, left);
          else this.loading.delete(s);
        }
        this.notify();
      },
      (err: unknown) => onFailure(err),
    );
  }

  /** Marks the server as shutting down and tells every watcher, once. */
  startDraining(): void {
    if (this.draining) return;
    this.draining = true;
    this.notify();
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
    const once = () => {
      if (!this.draining) return;
      this.listeners.delete(once);
      listener();
    };
    this.listeners.add(once);
    return () => {
      this.listeners.delete(once);
    };
  }

  /** Calls `listener` at every change (a service became ready, draining started) until unsubscribed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
