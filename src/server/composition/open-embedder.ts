import { setTimeout as delay } from "node:timers/promises";
import { openOnnxEmbedder } from "../../adapters/onnx/index.js";
import { openOpenAiEmbedder } from "../../adapters/openai-embeddings/index.js";
import { FairEmbedder } from "../../application/shared/fair-embedder.js";
import type { Embedder } from "../../ports/embedder.js";
import type { Config, EmbedderConfig } from "./config.js";

/** How long the start waits for an HTTP embedder's first answer before serving without it (health NOT_SERVING for vectors). */
export const HTTP_EMBEDDER_START_WAIT_MS = 5_000;

/** The server's embedder, shared fairly, and when it is ready. */
export interface OpenedEmbedder {
  embedder: FairEmbedder;
  /** Resolves once the embedder answers with the deployment's dimension; health waits on it. */
  embedderReady: Promise<void>;
}

function mismatch(dim: number, config: Config, what: string): Error {
  return new Error(
    `the embedding model (${what}) makes ${dim}-dimensional vectors, but ACMS_EMBEDDING_DIM is ${config.embeddingDim}: set ACMS_EMBEDDING_DIM=${dim} (a fresh data directory), or use a model of ${config.embeddingDim} dimensions`,
  );
}

/**
 * Opens the embedder config names (undefined when none) and checks its dimension against ACMS_EMBEDDING_DIM:
 * the in-process model is loaded before the start goes on (a broken model directory or another dimension
 * stops the start with a clear error); an HTTP endpoint is given HTTP_EMBEDDER_START_WAIT_MS to answer (a
 * mismatch then stops the start too), and when it does not, the server starts with vector search NOT_SERVING
 * until it answers (a later mismatch is logged and keeps it so).
 */
export async function openEmbedder(config: Config): Promise<OpenedEmbedder | undefined> {
  const c: EmbedderConfig | undefined = config.embedder;
  if (!c) return undefined;
  if (c.kind === "onnx") {
    const raw = openOnnxEmbedder({
      modelDir: c.modelDir,
      workers: c.workers + c.queryWorkers,
      intraOpThreads: c.threads,
      maxBatch: Math.max(c.batch, 32),
    });
    let dim: number;
    try {
      dim = await raw.ready();
    } catch (err) {
      await raw.close();
      throw new Error(
        `ACMS_EMBED_MODEL_DIR: the model in ${c.modelDir} could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (dim !== config.embeddingDim) {
      await raw.close();
      throw mismatch(dim, config, c.modelDir);
    }
    return {
      embedder: new FairEmbedder(raw, {
        slots: c.workers + c.queryWorkers,
        querySlots: c.queryWorkers,
        batchSize: c.batch,
        sliceMs: c.sliceMs,
      }),
      embedderReady: Promise.resolve(),
    };
  }
  const raw: Embedder = openOpenAiEmbedder({
    url: c.url,
    model: c.model,
    apiKey: c.apiKey,
    dimension: config.embeddingDim,
    timeoutMs: c.timeoutMs,
    maxBatch: c.batch,
  });
  const ready = raw.ready();
  const early = await Promise.race([
    ready.then(
      (dim) => ({ dim }),
      (err: unknown) => ({ err }),
    ),
    delay(HTTP_EMBEDDER_START_WAIT_MS, undefined, { ref: false }),
  ]);
  if (early && "err" in early) {
    await raw.close();
    throw new Error(`ACMS_EMBEDDINGS_URL: ${early.err instanceof Error ? early.err.message : String(early.err)}`);
  }
  const embedderReady = ready.then((dim) => {
    if (dim !== config.embeddingDim) throw mismatch(dim, config, c.model);
  });
  embedderReady.catch(() => undefined);
  return {
    embedder: new FairEmbedder(raw, {
      slots: c.concurrency + c.queryWorkers,
      querySlots: c.queryWorkers,
      batchSize: c.batch,
      sliceMs: c.sliceMs,
    }),
    embedderReady,
  };
}
