import { Worker } from "node:worker_threads";
import { createChunker, type ChunkingOptions } from "../../domain/chunking.js";
import { FairQueue } from "../../domain/fair-queue.js";
import type { TextChunker } from "../../ports/text-chunker.js";
import { resolvePackage } from "./resolve-package.js";
import { workerSource } from "./worker-source.js";

/** Characters of text one task takes at most (a longer document is a task of its own). */
export const CHUNK_TASK_CHARS = 256 * 1024;

/**
 * Threads that chunk at once by default. Each holds its own tokenizer tables (about 100 MB resident), so one:
 * a tenant's large document then delays another's by at most the task running.
 */
export const DEFAULT_CHUNK_WORKERS = 1;

/** A thread idle this long stops (its memory goes back); the next large document starts one again. */
export const CHUNK_WORKER_IDLE_MS = 30_000;

interface ChunkWorkerData {
  tokenizerPath: string;
  constantsPath: string;
}

interface ChunkRequest {
  id: number;
  texts: string[];
  opts: ChunkingOptions;
}

type ChunkReply = { id: number; chunks: string[][] } | { id: number; error: string };

/**
 * The program of one chunking thread: the server's own chunker (`createChunker`, its source text put in the
 * worker by workerSource) over gpt-tokenizer's CommonJS build, one request at a time.
 */
function runChunkWorker(req: NodeJS.Require, makeChunker: typeof createChunker): void {
  const { parentPort, workerData } = req("node:worker_threads") as typeof import("node:worker_threads");
  const data = workerData as ChunkWorkerData;
  const tok = req(data.tokenizerPath) as typeof import("gpt-tokenizer");
  const { O200K_TOKEN_SPLIT_REGEX } = req(data.constantsPath) as { O200K_TOKEN_SPLIT_REGEX: RegExp };
  const chunker = makeChunker({
    countTokens: tok.countTokens,
    encodeGenerator: tok.encodeGenerator,
    decode: tok.decode,
    encode: tok.encode,
    splitSource: O200K_TOKEN_SPLIT_REGEX.source,
  });
  const port = parentPort as import("node:worker_threads").MessagePort;
  port.on("message", (msg: ChunkRequest) => {
    try {
      port.postMessage({ id: msg.id, chunks: msg.texts.map((t) => chunker.chunkText(t, msg.opts)) });
    } catch (err) {
      port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
}

const WORKER_SOURCE = workerSource(runChunkWorker, createChunker);

/** Stops a slot's thread on purpose (closing, or idle): its exit is no death, and nothing of it is heard again. */
async function stopSlot(slot: Slot): Promise<void> {
  if (slot.idle) clearTimeout(slot.idle);
  slot.worker.removeAllListeners();
  slot.worker.on("error", () => undefined);
  await slot.worker.terminate();
}

/** One task: some consecutive texts of one call. */
interface Task {
  tenant: string;
  texts: string[];
  opts: ChunkingOptions;
  call: Call;
  /** Where the task's first text is in the call's texts. */
  at: number;
}

interface Call {
  out: string[][];
  left: number;
  settled: boolean;
  resolve(chunks: string[][]): void;
  reject(err: unknown): void;
  /** Takes the call's abort listener off its signal (nothing, without one). */
  detach(): void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
  id: number;
  idle: NodeJS.Timeout | undefined;
}

/**
 * Server-side chunking off the serving thread: a pool of worker threads, each running the server's chunker
 * (src/domain/chunking.ts, the same code) on one task at a time. Chunking a large document is seconds of
 * tokenizer work (a 4 MB document of unseen words held the serving thread 1.4 s); here the serving thread only
 * posts the texts and takes the chunks back. A call's texts are cut into tasks of about CHUNK_TASK_CHARS,
 * queued per tenant (FairQueue): a free thread takes the next task of the tenant holding the fewest threads,
 * served longest ago, so one tenant's large upload delays another's by at most the tasks already running.
 * The threads start on first use, never keep the process alive when idle, and stop after CHUNK_WORKER_IDLE_MS
 * idle (each holds ~100 MB of tokenizer tables); one that dies fails its task (the call is refused) and is
 * replaced at the next task.
 */
export class ChunkWorkers implements TextChunker {
  private readonly queue = new FairQueue<Task>();
  private readonly slots: Slot[] = [];
  private readonly held = new Map<string, number>();
  private readonly data: ChunkWorkerData;
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly threads = DEFAULT_CHUNK_WORKERS,
    private readonly idleMs = CHUNK_WORKER_IDLE_MS,
  ) {
    this.data = {
      tokenizerPath: resolvePackage("gpt-tokenizer", "the chunking workers"),
      constantsPath: resolvePackage("gpt-tokenizer/encodingParams/constants", "the chunking workers"),
    };
  }

  /** Threads running now (started on first use, at most `threads`): a figure for tests. */
  get started(): number {
    return this.slots.length;
  }

  chunk(tenant: string, texts: readonly string[], opts: ChunkingOptions, signal?: AbortSignal): Promise<string[][]> {
    if (this.closed) return Promise.reject(new Error("the chunking workers are closed"));
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise<string[][]>((resolve, reject) => {
      const call: Call = { out: new Array<string[]>(texts.length), left: 0, settled: false, resolve, reject, detach: () => undefined };
      const tasks: Task[] = [];
      for (let i = 0; i < texts.length;) {
        let chars = texts[i].length;
        let j = i + 1;
        while (j < texts.length && chars + texts[j].length <= CHUNK_TASK_CHARS) chars += texts[j++].length;
        tasks.push({ tenant, texts: texts.slice(i, j), opts, call, at: i });
        i = j;
      }
      call.left = tasks.length;
      for (const t of tasks) this.queue.push(tenant, t);
      if (signal) {
        const onAbort = () => {
          for (const t of tasks) this.queue.remove(tenant, t);
          this.settle(call, signal.reason ?? new Error("aborted"));
        };
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener("abort", onAbort, { once: true });
          call.detach = () => signal.removeEventListener("abort", onAbort);
        }
      }
      this.pump();
    });
  }

  /** Fails what waits and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.drain()) this.settle(t.call, new Error("the chunking workers are closed"));
    await Promise.all(
      this.slots.splice(0).map(async (slot) => {
        if (slot.task) this.settle(slot.task.call, new Error("the chunking workers are closed"));
        await stopSlot(slot);
      }),
    );
  }

  /**
   * Ends `call` once: failed with `err`, else answered with its chunks. Its abort listener goes with it, however
   * it ends: a stream's signal outlives thousands of calls, and a listener left behind would keep the call's
   * texts alive until the stream ends.
   */
  private settle(call: Call, err?: unknown): void {
    if (call.settled) return;
    call.settled = true;
    call.detach();
    if (err !== undefined) call.reject(err);
    else call.resolve(call.out);
  }

  private pump(): void {
    while (!this.closed && this.queue.size > 0) {
      let slot = this.slots.find((s) => s.task === undefined);
      if (!slot && this.slots.length < this.threads) slot = this.startSlot();
      if (!slot) return;
      const task = this.queue.shift((tenant) => this.held.get(tenant) ?? 0)!;
      if (task.call.settled) continue;
      slot.task = task;
      slot.id = ++this.nextId;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = undefined;
      this.held.set(task.tenant, (this.held.get(task.tenant) ?? 0) + 1);
      slot.worker.ref();
      slot.worker.postMessage({ id: slot.id, texts: task.texts, opts: task.opts } satisfies ChunkRequest);
    }
  }

  private startSlot(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.data });
    worker.unref();
    const slot: Slot = { worker, task: undefined, id: 0, idle: undefined };
    this.slots.push(slot);
    worker.on("message", (reply: ChunkReply) => {
      const task = slot.task;
      if (!task || reply.id !== slot.id) return;
      this.release(slot);
      if ("error" in reply) this.settle(task.call, new Error(`chunking failed: ${reply.error}`));
      else if (!task.call.settled) {
        reply.chunks.forEach((c, i) => (task.call.out[task.at + i] = c));
        task.call.left -= 1;
        if (task.call.left === 0) this.settle(task.call);
      }
      this.pump();
    });
    // A thread that dies fails the task it held; the next task starts a new one.
    const onDeath = (why: string) => {
      const at = this.slots.indexOf(slot);
      if (at < 0) return;
      this.slots.splice(at, 1);
      const task = slot.task;
      if (task) {
        this.release(slot);
        this.settle(task.call, new Error(`a chunking thread stopped: ${why}`));
      }
      this.pump();
    };
    worker.on("error", (err) => onDeath(err.message));
    worker.on("exit", (code) => onDeath(`exit code ${code}`));
    return slot;
  }

  private release(slot: Slot): void {
    const task = slot.task!;
    slot.task = undefined;
    slot.worker.unref();
    // Stopped once idle for idleMs (a task taken meanwhile clears this); removed from the slots first, so
    // its exit is no death.
    slot.idle = setTimeout(() => {
      const at = this.slots.indexOf(slot);
      if (at < 0 || slot.task) return;
      this.slots.splice(at, 1);
      void stopSlot(slot);
    }, this.idleMs);
    slot.idle.unref();
    const n = (this.held.get(task.tenant) ?? 1) - 1;
    if (n > 0) this.held.set(task.tenant, n);
    else this.held.delete(task.tenant);
  }
}
