import { UnavailableError } from "../../domain/errors.js";
import { FairQueue } from "../../domain/fair-queue.js";
import type { Embedder } from "../../ports/embedder.js";

/** One batch waiting for the embedder. */
interface Job {
  tenant: string;
  texts: string[];
  signal?: AbortSignal;
  resolve(v: Float32Array[]): void;
  reject(e: unknown): void;
}

/** Options of the shared embedder pool. */
export interface FairEmbedderOptions {
  /** Batches run at once on the embedder (its workers, or the requests one endpoint is sent at once); default 1. */
  slots?: number;
  /** Texts per batch (a slice of work); default and cap: the embedder's maxBatch. */
  batchSize?: number;
}

/**
 * The embedder shared fairly between tenants (API.md, "Shared pools"): every call is cut into batches (one
 * slice of work each), each tenant's batches wait in that tenant's own queue, and a free slot takes the next
 * batch from the tenant holding the fewest slots, round robin among equals. So one tenant's large upload
 * never delays another tenant's query embedding (one batch) by more than the batches already running, one
 * slice per slot, and while others wait no tenant holds every slot for more than one batch.
 * @example const vectors = await pool.embed("agent-a", chunkTexts, signal);
 */
export class FairEmbedder {
  readonly maxInputChars: number;
  private readonly slots: number;
  private readonly batchSize: number;
  /** Each tenant's batches; the next comes from the tenant holding the fewest slots, served longest ago among those. */
  private readonly queue = new FairQueue<Job>();
  private readonly held = new Map<string, number>();
  private running = 0;
  private closed = false;

  constructor(
    private readonly embedder: Embedder,
    opts: FairEmbedderOptions = {},
  ) {
    this.slots = Math.max(1, opts.slots ?? 1);
    this.batchSize = Math.max(1, Math.min(opts.batchSize ?? embedder.maxBatch, embedder.maxBatch));
    this.maxInputChars = embedder.maxInputChars;
  }

  /** What runs, for the start-up log. */
  get description(): string {
    return this.embedder.description;
  }

  /** The model's dimension once the embedder answers (see Embedder.ready). */
  ready(): Promise<number> {
    return this.embedder.ready();
  }

  /** Batches waiting for a slot, over every tenant (metrics, tests). */
  get waiting(): number {
    return this.queue.size;
  }

  /** `texts`' vectors, in order, embedded a batch at a time in `tenant`'s queue (the embedder's input rules apply). */
  async embed(tenant: string, texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const jobs: Job[] = [];
    const batches: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize)
      batches.push(this.enqueue(tenant, texts.slice(i, i + this.batchSize), jobs, signal));
    // One listener per call, not per batch: a cancelled call's queued batches leave the queue at once.
    const onAbort = () => {
      for (const job of jobs) this.unqueue(job);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // One failed batch fails the call; the others still settle (their rejections handled here).
      const settled = await Promise.allSettled(batches);
      signal?.throwIfAborted();
      const out: Float32Array[] = [];
      for (const s of settled) {
        if (s.status === "rejected") throw s.reason;
        out.push(...s.value);
      }
      return out;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Refuses what waits (UNAVAILABLE) and closes the embedder. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new UnavailableError("the embedder closed"));
    await this.embedder.close();
  }

  private enqueue(tenant: string, texts: string[], jobs: Job[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new UnavailableError("the embedder closed"));
    return new Promise<Float32Array[]>((resolve, reject) => {
      const job: Job = { tenant, texts, signal, resolve, reject };
      jobs.push(job);
      this.queue.push(tenant, job);
      this.pump();
    });
  }

  /** Takes a cancelled call's batch out of its queue (a running one finishes; its answer is dropped). */
  private unqueue(job: Job): void {
    if (this.queue.remove(job.tenant, job)) job.reject(job.signal?.reason);
  }

  private pump(): void {
    while (this.running < this.slots) {
      const job = this.queue.shift((tenant) => this.held.get(tenant) ?? 0);
      if (!job) return;
      this.running += 1;
      this.held.set(job.tenant, (this.held.get(job.tenant) ?? 0) + 1);
      this.embedder.embed(job.texts, job.signal).then(
        (v) => this.done(job, () => job.resolve(v)),
        (e: unknown) => this.done(job, () => job.reject(e)),
      );
    }
  }

  private done(job: Job, act: () => void): void {
    this.running -= 1;
    const h = (this.held.get(job.tenant) ?? 1) - 1;
    if (h <= 0) this.held.delete(job.tenant);
    else this.held.set(job.tenant, h);
    act();
    this.pump();
  }
}
