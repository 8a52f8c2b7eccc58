import http from "node:http";
import type { AddressInfo } from "node:net";
import { isCi } from "../support/conformance-suite.js";
import { openOnnxEmbedder } from "../../src/adapters/onnx/index.js";
import { openOpenAiEmbedder } from "../../src/adapters/openai-embeddings/index.js";
import {
  embeddingModel,
  embeddingsServerPython,
  startEmbeddingsServer,
  type EmbeddingsServer,
} from "../support/embeddings/embedding-model.js";
import { runEmbedderSuite } from "./embedder-conformance.js";

// Both adapters of the Embedder port over one real model, all-MiniLM-L6-v2 (scripts/embedding-model.sh): in
// process on worker threads, and over HTTP from an OpenAI-compatible server of the same ONNX export
// (test/support/embeddings/serve_embeddings.py: ONNX Runtime and Rust tokenizers in Python).

const model = embeddingModel();
const unavailable = "unavailable" in model ? model.unavailable : undefined;
const modelDir = "modelDir" in model ? model.modelDir : "";
// The HTTP adapter's server needs its venv besides the model.
const py = unavailable ? undefined : embeddingsServerPython();
const httpUnavailable = unavailable ?? (py && "unavailable" in py ? py.unavailable : undefined);

runEmbedderSuite({
  name: "in process (ONNX, worker threads)",
  dimension: 384,
  unavailable,
  create: async () => openOnnxEmbedder({ modelDir, workers: 1, intraOpThreads: 1 }),
});

let server: EmbeddingsServer | undefined;
afterAll(async () => {
  await server?.close();
});

runEmbedderSuite({
  name: "OpenAI-compatible HTTP",
  dimension: 384,
  unavailable: httpUnavailable,
  create: async () => {
    server ??= await startEmbeddingsServer(modelDir);
    return openOpenAiEmbedder({ url: server.url, model: "all-minilm-l6-v2", dimension: 384, maxBatch: 32 });
  },
});

describe("the two embedders on one model", () => {
  const texts = [
    "How do I rotate the API keys of a deployment?",
    "Vector search ranks chunks by cosine similarity.",
    "naïve café – déjà vu, 東京 and emoji 🚀",
    `A long one: ${"the quick brown fox jumps over the lazy dog ".repeat(60)}`,
  ];
  const run = httpUnavailable ? it.skip : it;
  if (httpUnavailable && isCi()) it("has its model and server", () => expect(httpUnavailable).toBeUndefined());

  run(
    "agree: the same text gives the same vector in process and over HTTP",
    async () => {
      server ??= await startEmbeddingsServer(modelDir);
      const local = openOnnxEmbedder({ modelDir, workers: 1, intraOpThreads: 1 });
      const remote = openOpenAiEmbedder({ url: server.url, model: "all-minilm-l6-v2", dimension: 384 });
      try {
        const [a, b] = await Promise.all([local.embed(texts), remote.embed(texts)]);
        texts.forEach((_, i) => {
          let cos = 0;
          for (let d = 0; d < 384; d++) cos += a[i][d] * b[i][d];
          expect(cos).toBeGreaterThan(0.9999);
        });
      } finally {
        await local.close();
        await remote.close();
      }
    },
    60_000,
  );
});

describe("the OpenAI-compatible embedder against failures", () => {
  const run = httpUnavailable ? it.skip : it;
  if (httpUnavailable && isCi()) it("has its model and server", () => expect(httpUnavailable).toBeUndefined());

  /** A proxy in front of the real server that answers `faults` first (status, headers), then forwards. */
  async function faultyProxy(faults: Array<{ status: number; headers?: Record<string, string> } | "hang">) {
    server ??= await startEmbeddingsServer(modelDir);
    const target = server.port;
    const seen: number[] = [];
    const proxy = http.createServer((req, res) => {
      const fault = faults.shift();
      seen.push(Date.now());
      if (fault === "hang") return; // never answers: the client's timeout must end it
      if (fault) {
        res.writeHead(fault.status, { "content-type": "application/json", ...(fault.headers ?? {}) });
        res.end(JSON.stringify({ error: { message: `injected ${fault.status}` } }));
        return;
      }
      const fwd = http.request({ host: "127.0.0.1", port: target, path: req.url, method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(fwd);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    const port = (proxy.address() as AddressInfo).port;
    return {
      url: `http://127.0.0.1:${port}/v1`,
      seen,
      close: () => new Promise<void>((r) => (proxy.closeAllConnections(), proxy.close(() => r()))),
    };
  }

  run(
    "retries 429 and 5xx with backoff, honouring Retry-After, then answers",
    async () => {
      const proxy = await faultyProxy([{ status: 429, headers: { "retry-after": "1" } }, { status: 503 }]);
      const e = openOpenAiEmbedder({ url: proxy.url, model: "m", dimension: 384, backoffMs: 10 });
      try {
        const [v] = await e.embed(["retry me"]);
        expect(v.length).toBe(384);
        expect(proxy.seen).toHaveLength(3);
        // The first retry waited the second Retry-After asked for, not the 10 ms backoff.
        expect(proxy.seen[1] - proxy.seen[0]).toBeGreaterThanOrEqual(950);
      } finally {
        await e.close();
        await proxy.close();
      }
    },
    60_000,
  );

  run(
    "gives UNAVAILABLE once the retries are spent, and at once on a 4xx other than 429",
    async () => {
      const proxy = await faultyProxy([{ status: 500 }, { status: 502 }, { status: 401 }]);
      const e = openOpenAiEmbedder({ url: proxy.url, model: "m", dimension: 384, backoffMs: 1, retries: 1 });
      try {
        await expect(e.embed(["x"])).rejects.toMatchObject({ kind: "unavailable", message: expect.stringContaining("HTTP 502") });
        await expect(e.embed(["x"])).rejects.toMatchObject({ kind: "unavailable", message: expect.stringContaining("HTTP 401") });
        expect(proxy.seen).toHaveLength(3);
      } finally {
        await e.close();
        await proxy.close();
      }
    },
    60_000,
  );

  run(
    "times a hung request out and retries it",
    async () => {
      const proxy = await faultyProxy(["hang"]);
      const e = openOpenAiEmbedder({ url: proxy.url, model: "m", dimension: 384, timeoutMs: 300, backoffMs: 1 });
      try {
        const [v] = await e.embed(["after a hang"]);
        expect(v.length).toBe(384);
        expect(proxy.seen).toHaveLength(2);
      } finally {
        await e.close();
        await proxy.close();
      }
    },
    60_000,
  );

  run(
    "is UNAVAILABLE when nothing listens, and ready() waits until the endpoint answers",
    async () => {
      const free = http.createServer();
      await new Promise<void>((r) => free.listen(0, "127.0.0.1", () => r()));
      const port = (free.address() as AddressInfo).port;
      await new Promise<void>((r) => free.close(() => r()));
      const e = openOpenAiEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: "m", retries: 1, backoffMs: 1, probeIntervalMs: 50 });
      try {
        await expect(e.embed(["x"])).rejects.toMatchObject({ kind: "unavailable" });
        let ready = false;
        void e.ready().then(
          () => (ready = true),
          () => undefined,
        );
        await new Promise((r) => setTimeout(r, 200));
        expect(ready).toBe(false);
      } finally {
        await e.close();
      }
    },
    60_000,
  );

  run(
    "refuses an endpoint of another dimension, and sends the API key",
    async () => {
      const keyed = await startEmbeddingsServer(modelDir, { apiKey: "sekret" });
      const wrongDim = openOpenAiEmbedder({ url: keyed.url, model: "m", dimension: 768, apiKey: "sekret" });
      const noKey = openOpenAiEmbedder({ url: keyed.url, model: "m", dimension: 384, retries: 0 });
      const withKey = openOpenAiEmbedder({ url: keyed.url, model: "m", dimension: 384, apiKey: "sekret" });
      try {
        await expect(wrongDim.ready()).rejects.toThrow("768 (ACMS_EMBEDDING_DIM)");
        await expect(noKey.embed(["x"])).rejects.toMatchObject({ kind: "unavailable", message: expect.stringContaining("HTTP 401") });
        expect((await withKey.embed(["x"]))[0].length).toBe(384);
        expect(await withKey.ready()).toBe(384);
      } finally {
        await Promise.all([wrongDim.close(), noKey.close(), withKey.close(), keyed.close()]);
      }
    },
    60_000,
  );
});

describe("the in-process embedder closing", () => {
  const run = unavailable ? it.skip : it;
  run(
    "closes while a batch runs and while the model loads: the pending call and later ones are UNAVAILABLE",
    async () => {
      const busy = openOnnxEmbedder({ modelDir, workers: 1, intraOpThreads: 1 });
      await busy.ready();
      const pending = busy.embed(Array.from({ length: 32 }, (_, i) => `a batch in flight ${i} `.repeat(20)));
      await new Promise((r) => setTimeout(r, 20));
      await busy.close();
      await expect(pending).rejects.toMatchObject({ kind: "unavailable" });
      const loading = openOnnxEmbedder({ modelDir, workers: 1, intraOpThreads: 1 });
      await loading.close();
      await expect(loading.embed(["after close"])).rejects.toMatchObject({ kind: "unavailable" });
    },
    60_000,
  );
});
