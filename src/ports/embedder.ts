/**
 * The embedder port: turns texts into unit vectors of one model. Two adapters: a local ONNX sentence model
 * run on worker threads (src/adapters/onnx-embedder) and any OpenAI-compatible `POST {url}/embeddings`
 * endpoint (src/adapters/openai-embeddings). Both pass the shared conformance suite
 * (test/embedder/embedder-conformance.ts).
 *
 * Contract of `embed`: one L2-normalised Float32Array of `dimension` values per text, in input order; a batch
 * gives what the texts give one by one (within float tolerance); an empty (blank) text, or one longer than
 * `maxInputChars`, is refused with INVALID_ARGUMENT naming `texts[i]`, before any work; an aborted `signal`
 * rejects with its reason; an endpoint that is down or failing is UNAVAILABLE. More than `maxBatch` texts
 * per call is the caller's to split (INVALID_ARGUMENT otherwise).
 */
export interface Embedder {
  /** What runs, for the start-up log (no secrets): e.g. "all-MiniLM-L6-v2 (ONNX, in process, 1 worker)". */
  readonly description: string;
  /** The most texts one `embed` call takes. */
  readonly maxBatch: number;
  /** The longest text accepted, in characters. */
  readonly maxInputChars: number;
  /**
   * Resolves with the model's dimension once the embedder answers (the model loaded, or the endpoint seen
   * answering); rejects when it never can (a broken model directory). Health waits on it.
   */
  ready(): Promise<number>;
  /** The texts' vectors, in order (see the contract above). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Stops the workers or connections; pending calls reject with UNAVAILABLE. */
  close(): Promise<void>;
}
