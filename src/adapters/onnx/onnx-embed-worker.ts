/**
 * The program of one embedding worker thread, written as a function and started from its source text
 * (`onnxEmbedWorkerSource`), as the graph workers are: the tests run the TypeScript sources and the server
 * runs the bundle, and neither has a separate worker file to point a Worker at. It loads the tokenizer
 * (`@huggingface/tokenizers`, pure JavaScript) and the ONNX session (`onnxruntime-node`) once, then embeds
 * one batch per message: WordPiece ids truncated to `maxTokens` (the closing special token kept), padded to
 * the batch's longest, the model's last hidden state pooled (mean over the attention mask, or the first
 * token) and L2-normalised, as the sentence-transformers model card does it.
 */

import { workerSource } from "../kit/worker-source.js";

/** What the worker is started with. */
export interface OnnxWorkerData {
  ortPath: string;
  tokenizersPath: string;
  modelPath: string;
  tokenizerPath: string;
  pooling: "mean" | "cls";
  maxTokens: number;
  intraOpThreads: number;
}

/** A batch to embed. */
export interface OnnxWorkerRequest {
  id: number;
  texts: string[];
}

/** What the worker answers: `ready` once loaded, then one `done` or `failed` per request. */
export type OnnxWorkerReply =
  | { type: "ready"; dimension: number; inputs: string[] }
  | { type: "load-failed"; message: string }
  | { type: "done"; id: number; vectors: Float32Array[] }
  | { type: "failed"; id: number; message: string };

/* eslint-disable @typescript-eslint/no-require-imports */
function runOnnxEmbedWorker(req: NodeJS.Require): void {
  const { parentPort, workerData } = req("node:worker_threads") as typeof import("node:worker_threads");
  const fs = req("node:fs") as typeof import("node:fs");
  const data = workerData as OnnxWorkerData;
  const port = parentPort as import("node:worker_threads").MessagePort;
  type Session = {
    inputNames: readonly string[];
    outputNames: readonly string[];
    outputMetadata?: ReadonlyArray<{ shape?: ReadonlyArray<number | string> }>;
    run(feeds: Record<string, unknown>): Promise<Record<string, { data: Float32Array; dims: readonly number[] }>>;
  };
  const ort = req(data.ortPath) as {
    InferenceSession: { create(path: string, opts: Record<string, unknown>): Promise<Session> };
    Tensor: new (type: string, values: BigInt64Array, dims: number[]) => unknown;
  };
  const { Tokenizer } = req(data.tokenizersPath) as {
    Tokenizer: new (json: unknown, config: unknown) => { encode(text: string): { ids: number[] } };
  };

  let session: Session;
  let tokenizer: { encode(text: string): { ids: number[] } };

  function ids(text: string): number[] {
    const all = tokenizer.encode(text).ids;
    if (all.length <= data.maxTokens) return all;
    // Truncated as the model card's max_seq_length does: the head kept, the closing [SEP] put back.
    const head = all.slice(0, data.maxTokens - 1);
    head.push(all[all.length - 1]);
    return head;
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map(ids);
    const width = Math.max(...encoded.map((e) => e.length));
    const n = texts.length;
    const inputIds = new BigInt64Array(n * width);
    const mask = new BigInt64Array(n * width);
    encoded.forEach((e, i) => {
      for (let j = 0; j < e.length; j++) {
        inputIds[i * width + j] = BigInt(e[j]);
        mask[i * width + j] = 1n;
      }
    });
    const feeds: Record<string, unknown> = {};
    for (const name of session.inputNames) {
      if (name === "input_ids") feeds[name] = new ort.Tensor("int64", inputIds, [n, width]);
      else if (name === "attention_mask") feeds[name] = new ort.Tensor("int64", mask, [n, width]);
      else if (name === "token_type_ids") feeds[name] = new ort.Tensor("int64", new BigInt64Array(n * width), [n, width]);
    }
    const out = await session.run(feeds);
    const hidden = out[session.outputNames[0]];
    const dim = hidden.dims[2];
    const values = hidden.data;
    return encoded.map((e, i) => {
      const v = new Float32Array(dim);
      const base = i * width * dim;
      const count = data.pooling === "cls" ? 1 : e.length;
      for (let t = 0; t < count; t++) {
        const row = base + t * dim;
        for (let d = 0; d < dim; d++) v[d] += values[row + d];
      }
      let norm = 0;
      for (let d = 0; d < dim; d++) {
        v[d] /= count;
        norm += v[d] * v[d];
      }
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < dim; d++) v[d] /= norm;
      return v;
    });
  }

  async function load(): Promise<void> {
    const json = JSON.parse(fs.readFileSync(data.tokenizerPath, "utf8"));
    tokenizer = new Tokenizer(json, {});
    session = await ort.InferenceSession.create(data.modelPath, {
      intraOpNumThreads: data.intraOpThreads,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
    if (!session.inputNames.includes("input_ids"))
      throw new Error(`the model takes no input_ids (inputs: ${session.inputNames.join(", ")})`);
    const shape = session.outputMetadata?.[0]?.shape;
    let dimension = typeof shape?.[2] === "number" ? shape[2] : 0;
    // A model whose output shape leaves the width symbolic: one probe tells.
    if (dimension <= 0) dimension = (await embed(["dimension"]))[0].length;
    port.postMessage({ type: "ready", dimension, inputs: [...session.inputNames] });
  }

  load().then(
    () => {
      port.on("message", (msg: OnnxWorkerRequest) => {
        embed(msg.texts).then(
          (vectors) =>
            port.postMessage(
              { type: "done", id: msg.id, vectors },
              vectors.map((v) => v.buffer as ArrayBuffer),
            ),
          (err: unknown) => port.postMessage({ type: "failed", id: msg.id, message: err instanceof Error ? err.message : String(err) }),
        );
      });
    },
    (err: unknown) => port.postMessage({ type: "load-failed", message: err instanceof Error ? err.message : String(err) }),
  );
}

/** The worker's program text (see the file's comment). */
export function onnxEmbedWorkerSource(): string {
  return workerSource(runOnnxEmbedWorker);
}
