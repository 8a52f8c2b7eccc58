import { setTimeout as sleep } from "node:timers/promises";
import { UnavailableError } from "../../domain/errors.js";
import type { Embedder } from "../../ports/embedder.js";
import { checkEmbedTexts } from "../kit/check-embed-texts.js";

/** Options of the OpenAI-compatible embeddings client. */
export interface OpenAiEmbedderOptions {
  /** The API base (ACMS_EMBEDDINGS_URL), e.g. `http://127.0.0.1:11434/v1`: requests go to `{url}/embeddings`. */
  url: string;
  /** The `model` field sent (ACMS_EMBEDDINGS_MODEL). */
  model: string;
  /** Sent as `Authorization: Bearer` (ACMS_EMBEDDINGS_API_KEY); never logged. */
  apiKey?: string;
  /** The dimension the deployment expects: an answer of another width is refused (UNAVAILABLE). */
  dimension?: number;
  /** Texts per request (default 64). */
  maxBatch?: number;
  /** Longest text, in characters (default 32 KiB). */
  maxInputChars?: number;
  /** Time limit of one HTTP request, in ms (default 30 s). */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx or a connection failure (default 3), with exponential backoff from `backoffMs`. */
  retries?: number;
  /** The first backoff, in ms (default 250), doubled per retry with jitter; a Retry-After header wins (capped at `maxBackoffMs`). */
  backoffMs?: number;
  /** The longest single wait between tries, in ms (default 10 s). */
  maxBackoffMs?: number;
  /** How often `ready()` probes an endpoint that did not answer yet, in ms (default 2 s). */
  probeIntervalMs?: number;
}

/** Why a try failed, and whether another may succeed. */
class TryFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value.trim()) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Any OpenAI-compatible embeddings endpoint (Ollama, vLLM, text-embeddings-inference, LM Studio, OpenAI):
 * `POST {url}/embeddings` with `{model, input: [texts]}`, the vectors read from `data[].embedding` by `index`
 * and L2-normalised (not every server normalises). A 429, a 5xx or a refused connection is retried with
 * exponential backoff (a Retry-After header is honoured); each try has a time limit; the caller's signal
 * cancels the request in flight and any wait. What still fails is UNAVAILABLE, with the status and the
 * start of the server's message, never the key.
 * @example const e = openOpenAiEmbedder({ url: "http://127.0.0.1:11434/v1", model: "all-minilm" });
 */
export class OpenAiEmbedder implements Embedder {
  readonly description: string;
  readonly maxBatch: number;
  readonly maxInputChars: number;
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly closer = new AbortController();
  private readyPromise?: Promise<number>;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    this.endpoint = `${opts.url.replace(/\/+$/, "")}/embeddings`;
    this.maxBatch = opts.maxBatch ?? 64;
    this.maxInputChars = opts.maxInputChars ?? 32 * 1024;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retries = opts.retries ?? 3;
    this.backoffMs = opts.backoffMs ?? 250;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10_000;
    const u = new URL(this.endpoint);
    this.description = `${opts.model} at ${u.origin}${u.pathname} (OpenAI-compatible HTTP)`;
  }

  /**
   * Probes the endpoint with one short text until it answers (every `probeIntervalMs`), and resolves with
   * the width of its vectors; rejects at once when an answer's width differs from `dimension`, or when closed.
   */
  ready(): Promise<number> {
    this.readyPromise ??= (async () => {
      for (;;) {
        try {
          const [v] = await this.request(["dimension probe"], this.closer.signal, true);
          return v.length;
        } catch (err) {
          if (this.closer.signal.aborted) throw new UnavailableError("the embedder closed");
          if (err instanceof UnavailableError && err.message.includes("dimensions")) throw err;
          await sleep(this.opts.probeIntervalMs ?? 2000, undefined, { signal: this.closer.signal }).catch(() => undefined);
        }
      }
    })();
    this.readyPromise.catch(() => undefined);
    return this.readyPromise;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    checkEmbedTexts(texts, this.maxBatch, this.maxInputChars);
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    return this.request(texts, signal, false);
  }

  async close(): Promise<void> {
    this.closer.abort(new UnavailableError("the embedder closed"));
  }

  private async request(texts: readonly string[], signal: AbortSignal | undefined, probe: boolean): Promise<Float32Array[]> {
    const both = signal ? AbortSignal.any([signal, this.closer.signal]) : this.closer.signal;
    let last: TryFailure | undefined;
    const tries = probe ? 1 : this.retries + 1;
    for (let attempt = 0; attempt < tries; attempt++) {
      if (attempt > 0) {
        const backoff = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
        const wait = Math.min(this.maxBackoffMs, last?.retryAfterMs ?? backoff);
        await sleep(wait, undefined, { signal: both }).catch(() => undefined);
      }
      both.throwIfAborted();
      try {
        return await this.once(texts, both);
      } catch (err) {
        both.throwIfAborted();
        if (!(err instanceof TryFailure)) throw err;
        last = err;
        if (!err.retryable) break;
      }
    }
    throw new UnavailableError(`the embeddings endpoint failed: ${last?.message ?? "no answer"}`);
  }

  private async once(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.opts.model, input: texts }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (err) {
      signal.throwIfAborted();
      const why = err instanceof Error && err.name === "TimeoutError" ? `no answer within ${this.timeoutMs} ms` : describeFetchError(err);
      throw new TryFailure(why, true);
    }
    if (!res.ok) {
      const body = (await res.text().catch(() => "")).slice(0, 200).replace(/\s+/g, " ");
      const retryable = res.status === 429 || res.status >= 500;
      throw new TryFailure(`HTTP ${res.status}${body ? `: ${body}` : ""}`, retryable, parseRetryAfter(res.headers.get("retry-after")));
    }
    let json: { data?: Array<{ embedding?: unknown; index?: number }> };
    try {
      json = (await res.json()) as typeof json;
    } catch {
      throw new TryFailure("the answer is not JSON", false);
    }
    const data = Array.isArray(json.data) ? json.data : [];
    if (data.length !== texts.length) throw new TryFailure(`${data.length} embeddings for ${texts.length} inputs`, false);
    const out: Float32Array[] = new Array(texts.length);
    data.forEach((d, i) => {
      const at = typeof d.index === "number" ? d.index : i;
      if (!Array.isArray(d.embedding) || at < 0 || at >= texts.length) throw new TryFailure("an embedding is missing or misplaced", false);
      out[at] = normalise(d.embedding as number[]);
    });
    const want = this.opts.dimension;
    for (const v of out) {
      if (!v) throw new TryFailure("an input got no embedding", false);
      if (want !== undefined && v.length !== want) {
        throw new UnavailableError(
          `the embeddings endpoint answers ${v.length} dimensions, the deployment has ${want} (ACMS_EMBEDDING_DIM)`,
        );
      }
    }
    return out;
  }
}

function describeFetchError(err: unknown): string {
  const cause = err instanceof Error ? (err as Error & { cause?: { code?: string; message?: string } }).cause : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function normalise(values: readonly number[]): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm);
  if (!Number.isFinite(norm) || norm === 0) throw new TryFailure("an embedding is zero or not finite", false);
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
