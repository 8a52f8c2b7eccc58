import { existsSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import { Worker } from "node:worker_threads";
import { UnavailableError } from "../../domain/errors.js";
import { checkEmbedTexts } from "../kit/check-embed-texts.js";
import { resolvePackage } from "../kit/resolve-package.js";
import type { Embedder } from "../../ports/embedder.js";
import { onnxEmbedWorkerSource, type OnnxWorkerData, type OnnxWorkerReply } from "./onnx-embed-worker.js";

const WORKER_SOURCE = onnxEmbedWorkerSource();

/** The longest text accepted, in characters: far past what the model reads (maxTokens word pieces). */
export const DEFAULT_MAX_INPUT_CHARS = 32 * 1024;
/** Word pieces the model reads of a text, as all-MiniLM-L6-v2's card says (max_seq_length 256). */
export const DEFAULT_MAX_TOKENS = 256;
/** How long `close` waits for a worker's batch in flight before terminating it anyway. */
const CLOSE_WAIT_MS = 30_000;
/** Texts per worker call. */
export const DEFAULT_ONNX_BATCH = 32;

/** Options of the in-process embedder. */
export interface OnnxEmbedderOptions {
  /** The model directory: an ONNX file (`model.onnx`, `onnx/model.onnx` or the one `*.onnx`) and `tokenizer.json`. */
  modelDir: string;
  /** Worker threads, each with its own session (default 1). */
  workers?: number;
  /** ONNX Runtime's intra-op threads per worker (default: the cores less one, 1 to 4). */
  intraOpThreads?: number;
  maxTokens?: number;
  maxBatch?: number;
  maxInputChars?: number;
}

interface Pending {
  texts: string[];
  resolve(v: Float32Array[]): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  /** Whether its session has loaded (only then is it handed batches). */
  loaded: boolean;
  busy?: { id: number; job: Pending };
}

/** The model and tokenizer files of `dir` (see OnnxEmbedderOptions.modelDir); throws naming what is missing. */
export function findModelFiles(dir: string): { modelPath: string; tokenizerPath: string; pooling: "mean" | "cls"; maxTokens?: number } {
  if (!existsSync(dir)) throw new Error(`ACMS_EMBED_MODEL_DIR: ${dir} does not exist`);
  const onnx = [join(dir, "model.onnx"), join(dir, "onnx", "model.onnx")].find((p) => existsSync(p));
  const anyOnnx = readdirSync(dir).filter((f) => f.endsWith(".onnx"));
  const modelPath = onnx ?? (anyOnnx.length === 1 ? join(dir, anyOnnx[0]) : undefined);
  if (!modelPath) throw new Error(`ACMS_EMBED_MODEL_DIR: no model.onnx (or onnx/model.onnx, or a single *.onnx) in ${dir}`);
  const tokenizers = readdirSync(dir).filter((f) => f === "tokenizer.json" || f.endsWith("-tokenizer.json"));
  const tokenizerPath = tokenizers.includes("tokenizer.json")
    ? join(dir, "tokenizer.json")
    : tokenizers.length === 1
      ? join(dir, tokenizers[0])
      : undefined;
  if (!tokenizerPath) throw new Error(`ACMS_EMBED_MODEL_DIR: no tokenizer.json in ${dir}`);
  // sentence-transformers' own files, when the export kept them, say how the model card pools and truncates.
  let pooling: "mean" | "cls" = "mean";
  const poolingFile = join(dir, "1_Pooling", "config.json");
  if (existsSync(poolingFile)) {
    const cfg = JSON.parse(readFileSync(poolingFile, "utf8")) as Record<string, unknown>;
    if (cfg.pooling_mode_cls_token === true) pooling = "cls";
  }
  let maxTokens: number | undefined;
  const stFile = join(dir, "sentence_bert_config.json");
  if (existsSync(stFile)) {
    const cfg = JSON.parse(readFileSync(stFile, "utf8")) as Record<string, unknown>;
    if (typeof cfg.max_seq_length === "number") maxTokens = cfg.max_seq_length;
  }
  return { modelPath, tokenizerPath, pooling, maxTokens };
}

/**
 * A local sentence-embedding model run on worker threads (never on the serving thread): each worker holds
 * one ONNX Runtime session and embeds one batch at a time; calls queue in arrival order (the application's
 * fair embedder decides that order between tenants). The dimension is read from the model's output shape.
 * @example const e = openOnnxEmbedder({ modelDir }); const dim = await e.ready(); const [v] = await e.embed(["hello"]);
 */
export class OnnxEmbedder implements Embedder {
  readonly description: string;
  readonly maxBatch: number;
  readonly maxInputChars: number;
  private readonly data: OnnxWorkerData;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private readonly readyPromise: Promise<number>;
  private nextId = 1;
  private closed = false;

  constructor(opts: OnnxEmbedderOptions) {
    const files = findModelFiles(opts.modelDir);
    const workers = Math.max(1, opts.workers ?? 1);
    const threads = opts.intraOpThreads ?? Math.min(4, Math.max(1, availableParallelism() - 1));
    this.maxBatch = opts.maxBatch ?? DEFAULT_ONNX_BATCH;
    this.maxInputChars = opts.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS;
    this.data = {
      ortPath: resolvePackage("onnxruntime-node", "the embedding worker"),
      tokenizersPath: resolvePackage("@huggingface/tokenizers", "the embedding worker"),
      modelPath: files.modelPath,
      tokenizerPath: files.tokenizerPath,
      pooling: files.pooling,
      maxTokens: opts.maxTokens ?? files.maxTokens ?? DEFAULT_MAX_TOKENS,
      intraOpThreads: threads,
    };
    this.description = `${basename(opts.modelDir)} (ONNX in process, ${workers} worker${workers === 1 ? "" : "s"} x ${threads} thread${threads === 1 ? "" : "s"}, ${files.pooling} pooling)`;
    const started: Promise<number>[] = [];
    for (let i = 0; i < workers; i++) started.push(this.spawn());
    this.readyPromise = Promise.all(started).then((dims) => dims[0]);
    this.readyPromise.catch(() => undefined);
  }

  ready(): Promise<number> {
    return this.readyPromise;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    checkEmbedTexts(texts, this.maxBatch, this.maxInputChars);
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    if (this.closed) throw new UnavailableError("the embedder is closed");
    await this.readyPromise.catch((err: unknown) => {
      throw new UnavailableError(`the embedding model could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    });
    signal?.throwIfAborted();
    // Closed while the model loaded: the queue was already emptied, and nothing would ever take this batch.
    if (this.closed) throw new UnavailableError("the embedder is closed");
    return new Promise<Float32Array[]>((resolve, reject) => {
      const job: Pending = { texts: [...texts], resolve, reject, signal };
      if (signal) {
        job.onAbort = () => {
          const at = this.queue.indexOf(job);
          if (at >= 0) this.queue.splice(at, 1);
          // A running batch finishes in its worker; its answer is dropped.
          reject(signal.reason);
        };
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const gone = new UnavailableError("the embedder closed");
    for (const job of this.queue.splice(0)) settle(job, () => job.reject(gone));
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.busy) settle(slot.busy.job, () => slot.busy?.job.reject(gone));
        // Terminating a worker inside ONNX Runtime's run (or its session's creation) aborts the whole process
        // (a native exception escapes): a busy or loading worker is let finish that step first, for at most
        // CLOSE_WAIT_MS.
        if (slot.busy || !slot.loaded) await this.settled(slot.worker);
        slot.worker.removeAllListeners();
        slot.worker.on("error", () => undefined);
        await slot.worker.terminate();
      }),
    );
  }

  /** Resolves at `worker`'s next message or exit, or after CLOSE_WAIT_MS. */
  private settled(worker: Worker): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      worker.once("message", done);
      worker.once("exit", done);
    });
  }

  /** Starts one worker; resolves with the model's dimension once it has loaded. */
  private spawn(): Promise<number> {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.data });
    const slot: Slot = { worker, loaded: false };
    this.slots.push(slot);
    return new Promise<number>((resolve, reject) => {
      let loaded = false;
      worker.on("message", (msg: OnnxWorkerReply) => {
        if (msg.type === "ready") {
          loaded = true;
          slot.loaded = true;
          resolve(msg.dimension);
          this.pump();
        } else if (msg.type === "load-failed") reject(new Error(msg.message));
        else if (slot.busy && slot.busy.id === msg.id) {
          const job = slot.busy.job;
          slot.busy = undefined;
          // Rebuilt over the transferred buffers in this realm (no copy).
          if (msg.type === "done")
            settle(job, () => job.resolve(msg.vectors.map((v) => new Float32Array(v.buffer, v.byteOffset, v.length))));
          else settle(job, () => job.reject(new UnavailableError(`the embedding model failed: ${msg.message}`)));
          this.pump();
        }
      });
      const onDeath = (why: string) => {
        if (!loaded) {
          reject(new Error(why));
          return;
        }
        const at = this.slots.indexOf(slot);
        if (at >= 0) this.slots.splice(at, 1);
        if (slot.busy) {
          const job = slot.busy.job;
          settle(job, () => job.reject(new UnavailableError(`an embedding worker died: ${why}`)));
        }
        // A worker that died after loading is replaced, so the pool keeps its size.
        if (!this.closed) this.spawn().catch(() => undefined);
      };
      worker.on("error", (err) => onDeath(err.message));
      worker.on("exit", (code) => {
        if (!this.closed) onDeath(`exit code ${code}`);
      });
    });
  }

  /** Hands queued batches to idle, loaded workers. */
  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy || !slot.loaded) continue;
      const job = this.queue.shift();
      if (!job) return;
      const id = this.nextId++;
      slot.busy = { id, job };
      slot.worker.postMessage({ id, texts: job.texts });
    }
  }
}

/** Settles `job` once, taking its abort listener off first. */
function settle(job: Pending, act: () => void): void {
  if (job.signal && job.onAbort) job.signal.removeEventListener("abort", job.onAbort);
  if (job.signal?.aborted) return;
  act();
}
