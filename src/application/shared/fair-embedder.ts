import { UnavailableError } from "../../domain/errors.js";
import { FairQueue } from "../../domain/fair-queue.js";
import type { Embedder } from "../../ports/embedder.js";

/**
 * What a call embeds for: `query` is search text a caller waits on (one short text), served before any bulk
 * work; `bulk` is the chunks of an upload or a rebuild, cut into slices of about `sliceMs` of model time.
 */
export type EmbedPriority = "query" | "bulk";

/** One call waiting for (or partly through) the embedder: its texts are taken a slice at a time. */
interface Call {
  tenant: string;
  priority: EmbedPriority;
  texts: readonly string[];
  /** The first text no slice has taken yet. */
  next: number;
  /** Slices of it running on the embedder. */
  running: number;
  out: Float32Array[];
  /** Texts of its last slice (0 before the first): the next takes at most twice as many. */
  lastSlice: number;
  signal?: AbortSignal;
  settled: boolean;
  resolve(v: Float32Array[]): void;
  reject(e: unknown): void;
}

/** Options of the shared embedder pool. */
export interface FairEmbedderOptions {
  /** Batches run at once on the embedder (its workers, or the requests one endpoint is sent at once); default 1. */
  slots?: number;
  /** The most texts one batch takes; default and cap: the embedder's maxBatch. */
  batchSize?: number;
  /**
   * The model time one bulk slice should take, in ms (default DEFAULT_EMBED_SLICE_MS): a bulk batch holds as
   * many texts as fit it at the cost measured on the batches before (at least one text, at most batchSize).
   * A query waits for at most the slices already running, so this bounds another tenant's query latency.
   */
  sliceMs?: number;
  /** Slots kept free of bulk work, for queries only (default 0; at most slots - 1). */
  querySlots?: number;
  /** The clock batches are timed with (ms); tests pass one they move. Default: performance.now. */
  now?: () => number;
}

/** The model time a bulk slice should take (ACMS_EMBED_SLICE_MS): what a query may wait behind an upload. */
export const DEFAULT_EMBED_SLICE_MS = 100;

/**
 * Query batches served in a row, at most, while bulk work waits: queries go first, but a flood of them never
 * stops every upload (one bulk slice after this many).
 */
export const QUERY_BURST_MAX = 8;

/**
 * The cost model of a batch: the model pads a batch to its longest text and reads at most its maximum of word
 * pieces, so a batch costs about (texts) x (its longest text, capped) in characters, plus a fixed cost per
 * text (special tokens, the tokenizer) counted as PER_TEXT_CHARS more.
 */
const COST_CAP_CHARS = 2048;
const PER_TEXT_CHARS = 32;

function costChars(text: string): number {
  return Math.min(text.length, COST_CAP_CHARS) + PER_TEXT_CHARS;
}

/**
 * The embedder shared fairly between tenants (API.md, "Shared pools"). Each tenant's calls wait in that tenant's
 * own queue, in two classes: query embeddings (search text a caller waits on) are served before bulk work
 * (uploads, rebuilds) of any tenant, and a free slot takes the next call of a class from the tenant holding
 * the fewest slots, served longest ago among equals. A bulk call is not run whole: each time it is served, one
 * slice of its texts goes to the embedder, as many as fit `sliceMs` of model time at the cost per character
 * measured on the bulk batches before, and the call goes back to its tenant's queue for the rest. So another
 * tenant's query waits at most for the slices already running (one per slot, about `sliceMs` each), never for
 * an upload, whatever the model's speed or the machine's load; and bulk calls of several tenants share the
 * slots slice by slice. With `querySlots`, that many slots never take bulk work, so a query need not wait at all.
 * @example const vectors = await pool.embed("agent-a", chunkTexts, signal);
 */
export class FairEmbedder {
  readonly maxInputChars: number;
  private readonly slots: number;
  private readonly batchSize: number;
  private readonly sliceMs: number;
  private readonly queries = new FairQueue<Call>();
  private readonly bulk = new FairQueue<Call>();
  private readonly held = new Map<string, number>();
  private running = 0;
  private bulkRunning = 0;
  private readonly querySlots: number;
  private queryBurst = 0;
  /** Model time per cost character of the last bulk batches (a moving average); undefined before the first. */
  private msPerChar: number | undefined;
  private closed = false;
  private readonly now: () => number;

  constructor(
    private readonly embedder: Embedder,
    opts: FairEmbedderOptions = {},
  ) {
    this.slots = Math.max(1, opts.slots ?? 1);
    this.batchSize = Math.max(1, Math.min(opts.batchSize ?? embedder.maxBatch, embedder.maxBatch));
    this.sliceMs = Math.max(1, opts.sliceMs ?? DEFAULT_EMBED_SLICE_MS);
    this.querySlots = Math.min(this.slots - 1, Math.max(0, opts.querySlots ?? 0));
    this.maxInputChars = embedder.maxInputChars;
    this.now = opts.now ?? (() => performance.now());
  }

  /** What runs, for the start-up log. */
  get description(): string {
    return this.embedder.description;
  }

  /** The model's dimension once the embedder answers (see Embedder.ready). */
  ready(): Promise<number> {
    return this.embedder.ready();
  }

  /** Calls waiting for a slot (whole or for their remaining texts), over every tenant (metrics, tests). */
  get waiting(): number {
    return this.queries.size + this.bulk.size;
  }

  /**
   * `texts`' vectors, in order, embedded in `tenant`'s queue (the embedder's input rules apply): as a query
   * (served before bulk work) or in bulk slices (the default).
   */
  async embed(tenant: string, texts: readonly string[], signal?: AbortSignal, priority: EmbedPriority = "bulk"): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    if (this.closed) throw new UnavailableError("the embedder closed");
    return new Promise<Float32Array[]>((resolve, reject) => {
      const call: Call = {
        tenant,
        priority,
        texts,
        next: 0,
        running: 0,
        out: new Array(texts.length),
        lastSlice: 0,
        signal,
        settled: false,
        resolve,
        reject,
      };
      // A cancelled call leaves the queue at once; its running slices finish, their answers dropped.
      const onAbort = () => this.fail(call, signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      call.resolve = (v) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(v);
      };
      call.reject = (e) => {
        signal?.removeEventListener("abort", onAbort);
        reject(e);
      };
      this.queueOf(call).push(tenant, call);
      this.pump();
    });
  }

  /** Refuses what waits (UNAVAILABLE) and closes the embedder. */
  async close(): Promise<void> {
    this.closed = true;
    const gone = new UnavailableError("the embedder closed");
    for (const call of [...this.queries.drain(), ...this.bulk.drain()]) this.fail(call, gone);
    await this.embedder.close();
  }

  private queueOf(call: Call): FairQueue<Call> {
    return call.priority === "query" ? this.queries : this.bulk;
  }

  /** Settles `call` as failed and takes it out of its queue. */
  private fail(call: Call, err: unknown): void {
    if (call.settled) return;
    call.settled = true;
    this.queueOf(call).remove(call.tenant, call);
    call.reject(err);
  }

  /** The next call to serve a slice of: queries first (but not more than QUERY_BURST_MAX in a row while bulk waits). */
  private nextCall(): Call | undefined {
    const held = (tenant: string) => this.held.get(tenant) ?? 0;
    const bulkMay = this.bulk.size > 0 && this.bulkRunning < this.slots - this.querySlots;
    if (this.queries.size > 0 && (!bulkMay || this.queryBurst < QUERY_BURST_MAX)) {
      // Counted only while bulk work waits to go: queries served with none waiting never delay the next upload.
      this.queryBurst = bulkMay ? this.queryBurst + 1 : 0;
      return this.queries.shift(held);
    }
    this.queryBurst = 0;
    return bulkMay ? this.bulk.shift(held) : undefined;
  }

  /** How many of `call`'s remaining texts its next slice takes. */
  private sliceSize(call: Call): number {
    const left = call.texts.length - call.next;
    const cap = Math.min(left, this.batchSize);
    if (call.priority === "query") return cap;
    if (this.msPerChar === undefined) return 1;
    // At most twice the call's last slice (a cheap batch may have been luck).
    const max = call.lastSlice > 0 ? Math.min(cap, call.lastSlice * 2) : cap;
    let longest = 0;
    let n = 0;
    while (n < max) {
      const width = Math.max(longest, costChars(call.texts[call.next + n]));
      if (n > 0 && (n + 1) * width * this.msPerChar > this.sliceMs) break;
      longest = width;
      n += 1;
    }
    return n;
  }

  private pump(): void {
    while (this.running < this.slots) {
      const call = this.nextCall();
      if (!call) return;
      const from = call.next;
      const n = this.sliceSize(call);
      call.next += n;
      // The rest waits in its tenant's queue again, behind the tenant's turn (FairQueue.unshift).
      if (call.next < call.texts.length) this.queueOf(call).unshift(call.tenant, call);
      this.run(call, from, n);
    }
  }

  private run(call: Call, from: number, n: number): void {
    const texts = call.texts.slice(from, from + n);
    this.running += 1;
    call.running += 1;
    this.held.set(call.tenant, (this.held.get(call.tenant) ?? 0) + 1);
    call.lastSlice = n;
    if (call.priority === "bulk") this.bulkRunning += 1;
    const started = this.now();
    this.embedder.embed(texts, call.signal).then(
      (vectors) => {
        if (call.priority === "bulk") this.learn(texts, this.now() - started);
        this.release(call);
        if (!call.settled) {
          for (let i = 0; i < n; i++) call.out[from + i] = vectors[i];
          if (call.running === 0 && call.next >= call.texts.length) {
            call.settled = true;
            call.resolve(call.out);
          }
        }
        this.pump();
      },
      (e: unknown) => {
        this.release(call);
        // One failed slice fails the call: its remaining texts leave the queue.
        this.fail(call, e);
        this.pump();
      },
    );
  }

  /** Folds a bulk batch's time into the cost per character (half the old estimate, half the new). */
  private learn(texts: readonly string[], tookMs: number): void {
    const width = Math.max(...texts.map(costChars));
    const sample = tookMs / (texts.length * width);
    this.msPerChar = this.msPerChar === undefined ? sample : (this.msPerChar + sample) / 2;
  }

  /** A slice of `call` has ended: its slot is free. */
  private release(call: Call): void {
    this.running -= 1;
    if (call.priority === "bulk") this.bulkRunning -= 1;
    call.running -= 1;
    const h = (this.held.get(call.tenant) ?? 1) - 1;
    if (h <= 0) this.held.delete(call.tenant);
    else this.held.set(call.tenant, h);
  }
}
