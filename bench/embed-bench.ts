/**
 * Embeddings benchmark, on the real model (all-MiniLM-L6-v2 as ONNX, scripts/embedding-model.sh) through the
 * real server:
 * - Relevance: nDCG@10 of keyword Search, SimilaritySearch(text) and HybridSearch (query embedded by the
 *   server) side by side, on a collection written for it (bench/embed-relevance-corpus.ts) with two query
 *   sets: paraphrased queries that share no word with their document (keyword search is known to fail), and
 *   keyword queries that reuse the document's words. Hybrid should beat text on the first and not lose on the second.
 * - Throughput: chunks embedded per second in process (worker threads) and over HTTP (the OpenAI-compatible
 *   Python server of the same ONNX model, test/support/embeddings/serve_embeddings.py), batches of 32.
 * - Ingest slowdown: UpsertDocuments of the same server-chunked documents with the embedder against without it.
 * - Fairness: another tenant's SimilaritySearch(text) latency while a large upload is being embedded, against
 *   the same searches on an idle server (API.md "Shared pools": at most one bulk slice of delay, see fairness()).
 * BENCH_SCALE scales the throughput and ingest sets (default 1: 1,024 chunks, 400 documents).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient, type AcmsClient } from "../src/client/create-acms-client.js";
import { openOnnxEmbedder } from "../src/adapters/onnx/index.js";
import { openOpenAiEmbedder } from "../src/adapters/openai-embeddings/index.js";
import type { Embedder } from "../src/ports/embedder.js";
import { loadConfig } from "../src/server/composition/config.js";
import { createBackends } from "../src/server/composition/composition-root.js";
import { generateKey, hashKey, KeyRing } from "../src/application/access/key-ring.js";
import { startServer, type AcmsServer } from "../src/server/composition/server.js";
import { requireEmbeddingModelDir, startEmbeddingsServer } from "../test/support/embeddings/embedding-model.js";
import { EMBED_CORPUS, KEYWORD_QUERIES, PARAPHRASED_QUERIES, type EmbedJudgedQuery } from "./embed-relevance-corpus.js";
import { median, percentile } from "./bench-timing.js";
import { ndcgAt } from "./planted-relevance.js";

const scale = (() => {
  const raw = process.env.BENCH_SCALE ?? "1";
  return raw === "small" ? 0.1 : Number(raw) || 1;
})();

interface Served {
  server: AcmsServer;
  keys: Record<string, string>;
  client(principal: string): AcmsClient;
  close(): Promise<void>;
}

async function serve(work: string, name: string, env: Record<string, string>): Promise<Served> {
  const keys = { a: generateKey(), b: generateKey() };
  const config = loadConfig({ ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_DATA_DIR: join(work, name), ...env });
  const server = await startServer({
    config,
    keys: new KeyRing([
      { name: "a", key_sha256: hashKey(keys.a), projects: ["bench/*"], write: true },
      { name: "b", key_sha256: hashKey(keys.b), projects: ["other/*"], write: true },
    ]),
    backends: await createBackends(config),
  });
  const clients: AcmsClient[] = [];
  return {
    server,
    keys,
    client(principal) {
      const c = createAcmsClient({ baseUrl: server.url, apiKey: keys[principal as "a" | "b"] });
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) c.close();
      await server.close(0);
    },
  };
}

/** BENCH_EMBED_PARTS=fairness runs the fairness row alone (default: every row). */
const parts = new Set((process.env.BENCH_EMBED_PARTS ?? "all").split(",").map((p) => p.trim()));

type Docs = Array<{ path: string; content: string }>;

/**
 * One upload stream is one call, and a call's time budget (ACMS_QUOTA_CALL_MS, default 60 s) covers the embedding
 * of all its chunks: on a loaded 2-core machine a few hundred documents take longer, so the ingest rows lift it.
 */
const LONG_CALLS = { ACMS_QUOTA_CALL_MS: "1800000" };

async function upload(client: AcmsClient, resourceId: string, docs: Docs, perMessage = 50): Promise<void> {
  async function* stream() {
    for (let i = 0; i < docs.length; i += perMessage)
      yield { resourceId, documents: docs.slice(i, i + perMessage).map((d) => ({ ...d, metadata: {}, chunks: [] })) };
  }
  await client.index.upsertDocuments(stream());
}

async function resourceIn(client: AcmsClient, project: string, alias: string): Promise<{ resourceId: string; scoped: AcmsClient }> {
  await client.registry.createProject({ name: project });
  const resourceId = (await client.registry.registerResource({ project, alias, kind: "docs" })).resource!.id;
  const scopeId = (await client.scope.resolveScope({ projects: [project] })).scope!.scopeId;
  return { resourceId, scoped: client.withScope(scopeId) };
}

async function relevance(s: Served): Promise<void> {
  const { resourceId, scoped } = await resourceIn(s.client("a"), "bench/relevance", "kb");
  await upload(s.client("a"), resourceId, [...EMBED_CORPUS]);
  const grade = (q: EmbedJudgedQuery) => new Map([[q.relevant, 1]]);
  const rows: Array<[string, number, number, number]> = [];
  for (const [name, set] of [
    ["paraphrased (keyword search fails)", PARAPHRASED_QUERIES],
    ["keyword-friendly", KEYWORD_QUERIES],
  ] as const) {
    const sums = { text: 0, vector: 0, hybrid: 0 };
    for (const q of set) {
      const text = await scoped.text.search({ query: q.query, maxResults: 10 });
      const vector = await scoped.vector.similaritySearch({ text: q.query, topK: 10 });
      const hybrid = await scoped.rag.hybridSearch({ query: q.query, topK: 10 });
      sums.text += ndcgAt(
        10,
        text.results.map((r) => r.path),
        grade(q),
      );
      sums.vector += ndcgAt(
        10,
        vector.results.map((r) => r.path),
        grade(q),
      );
      sums.hybrid += ndcgAt(
        10,
        hybrid.results.map((r) => r.path),
        grade(q),
      );
    }
    rows.push([name, sums.text / set.length, sums.vector / set.length, sums.hybrid / set.length]);
  }
  process.stdout.write(`relevance, nDCG@10 over ${EMBED_CORPUS.length} documents (${PARAPHRASED_QUERIES.length} queries per set):\n`);
  for (const [name, t, v, h] of rows) {
    process.stdout.write(
      `  ${name.padEnd(36)} text ${t.toFixed(4)}  vector ${v.toFixed(4)}  hybrid ${h.toFixed(4)}  hybrid - text ${(h - t >= 0 ? "+" : "") + (h - t).toFixed(4)}\n`,
    );
  }
  const [para, kw] = rows;
  if (!(para[3] > para[1])) process.stdout.write("  WARNING: hybrid does not beat text on the paraphrased set\n");
  if (kw[3] < kw[1]) process.stdout.write("  WARNING: hybrid loses to text on the keyword-friendly set\n");
}

function chunkTexts(n: number): string[] {
  const corpus = EMBED_CORPUS.map((d) => d.content);
  return Array.from({ length: n }, (_, i) => `${corpus[i % corpus.length]} (variant ${i}: ${corpus[(i * 7) % corpus.length]})`);
}

async function throughput(e: Embedder, texts: string[]): Promise<number> {
  await e.embed(texts.slice(0, 4)); // warm
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 32) await e.embed(texts.slice(i, i + 32));
  return texts.length / ((performance.now() - started) / 1000);
}

function docsOf(n: number): Docs {
  const corpus = EMBED_CORPUS.map((d) => d.content);
  return Array.from({ length: n }, (_, i) => ({
    path: `d${i}.md`,
    content: Array.from({ length: 3 }, (_, p) => corpus[(i * 5 + p * 11) % corpus.length]).join("\n\n") + ` Document ${i}.`,
  }));
}

export async function run(): Promise<void> {
  const modelDir = requireEmbeddingModelDir();
  const work = mkdtempSync(join(tmpdir(), "acms-embed-bench-"));
  if (!parts.has("all")) {
    try {
      if (parts.has("fairness")) await fairness(work, modelDir);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return;
  }
  const httpServer = await startEmbeddingsServer(modelDir);
  try {
    // Relevance.
    const withModel = await serve(work, "relevance", { ACMS_EMBED_MODEL_DIR: modelDir });
    try {
      await relevance(withModel);
    } finally {
      await withModel.close();
    }

    // Throughput.
    const n = Math.max(64, Math.round(1024 * scale));
    const texts = chunkTexts(n);
    const local = openOnnxEmbedder({ modelDir, workers: 1 });
    const remote = openOpenAiEmbedder({ url: httpServer.url, model: "all-minilm-l6-v2", dimension: 384 });
    try {
      await local.ready();
      const inProcess = await throughput(local, texts);
      const overHttp = await throughput(remote, texts);
      process.stdout.write(
        `throughput (${n} chunks, batches of 32): in process ${inProcess.toFixed(1)} chunks/s (${local.description}); over HTTP ${overHttp.toFixed(1)} chunks/s; HTTP / in process ${(overHttp / inProcess).toFixed(2)}\n`,
      );
    } finally {
      await local.close();
      await remote.close();
    }

    // Ingest slowdown.
    const docs = docsOf(Math.max(40, Math.round(400 * scale)));
    const timeIngest = async (name: string, env: Record<string, string>) => {
      const s = await serve(work, name, env);
      try {
        const { resourceId } = await resourceIn(s.client("a"), "bench/ingest", "docs");
        const started = performance.now();
        await upload(s.client("a"), resourceId, docs);
        return (performance.now() - started) / 1000;
      } finally {
        await s.close();
      }
    };
    const plain = await timeIngest("ingest-plain", LONG_CALLS);
    const embedded = await timeIngest("ingest-onnx", { ACMS_EMBED_MODEL_DIR: modelDir, ...LONG_CALLS });
    const overHttp = await timeIngest("ingest-http", {
      ACMS_EMBEDDINGS_URL: httpServer.url,
      ACMS_EMBEDDINGS_MODEL: "all-minilm-l6-v2",
      ...LONG_CALLS,
    });
    process.stdout.write(
      `ingest of ${docs.length} server-chunked documents: no embedder ${plain.toFixed(2)} s; in process ${embedded.toFixed(2)} s (x${(embedded / plain).toFixed(1)}); over HTTP ${overHttp.toFixed(2)} s (x${(overHttp / plain).toFixed(1)})\n`,
    );

    // Fairness: tenant b's text searches while tenant a's upload is embedded.
    await fairness(work, modelDir);
  } finally {
    await httpServer.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Tenant b's SimilaritySearch(text) (each text distinct: the query cache never answers) on an idle server, then
 * while tenant a uploads a large set of server-chunked documents to be embedded (only the searches that ended
 * while the upload still ran count). The bound is one bulk slice (ACMS_EMBED_SLICE_MS of model time, at least
 * one chunk) plus b's own embedding and search.
 */
async function fairness(work: string, modelDir: string): Promise<void> {
  await fairnessRow(work, "fairness", "1 worker", { ACMS_EMBED_MODEL_DIR: modelDir, ...LONG_CALLS });
  await fairnessRow(work, "fairness-query-worker", "1 worker + 1 kept for queries", {
    ACMS_EMBED_MODEL_DIR: modelDir,
    ACMS_EMBED_QUERY_WORKERS: "1",
    ...LONG_CALLS,
  });
}

async function fairnessRow(work: string, name: string, label: string, env: Record<string, string>): Promise<void> {
  const s = await serve(work, name, env);
  try {
    const a = await resourceIn(s.client("a"), "bench/big", "big");
    const b = await resourceIn(s.client("b"), "other/small", "small");
    await upload(s.client("b"), b.resourceId, [...EMBED_CORPUS]);
    let n = 0;
    const search = async (round: string) => {
      const query = PARAPHRASED_QUERIES[n % PARAPHRASED_QUERIES.length].query;
      const started = performance.now();
      await b.scoped.vector.similaritySearch({ text: `${query} ${round} ${n++}`, topK: 5 });
      return performance.now() - started;
    };
    await search("warm");
    const idle: number[] = [];
    for (let i = 0; i < 16; i++) idle.push(await search("idle"));
    const docs = docsOf(Math.max(60, Math.round(600 * scale)));
    let uploading = true;
    const uploadStarted = performance.now();
    const big = upload(s.client("a"), a.resourceId, docs, 200).finally(() => (uploading = false));
    await new Promise((r) => setTimeout(r, 200));
    const busy: number[] = [];
    while (uploading && busy.length < 40) {
      const ms = await search("busy");
      if (uploading) busy.push(ms);
    }
    await big;
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    const p50 = (xs: number[]) => (xs.length > 0 ? median(xs) : NaN);
    const p90 = (xs: number[]) => (xs.length > 0 ? percentile(xs, 0.9) : NaN);
    process.stdout.write(
      `fairness (${label}): tenant b's SimilaritySearch(text) p50 ${p50(idle).toFixed(1)} ms alone (p90 ${p90(idle).toFixed(1)}), ` +
        `p50 ${p50(busy).toFixed(1)} ms during tenant a's upload of ${docs.length} documents (p90 ${p90(busy).toFixed(1)}, ${busy.length} searches, upload ${uploadSeconds.toFixed(1)} s): x${(p50(busy) / p50(idle)).toFixed(2)}\n`,
    );
  } finally {
    await s.close();
  }
}
