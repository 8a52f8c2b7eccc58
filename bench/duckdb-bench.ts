/**
 * DuckDB provider benchmark (ACMS_DUCKDB_PATH), beside the embedded default in the same run (ratios,
 * since machines here are shared and noisy).
 *
 * - Ingest: chunks per second through DuckDbDocumentStore and SqliteDocumentStore (same synthetic
 *   corpus, 50 one-chunk documents per message, each chunk with a 384-d embedding).
 * - Vectors at 1, 10 and 1,000 resources: DuckDB's exact search in SQL (array_cosine_similarity)
 *   against the embedded exact scan in JS over the same vectors, and DuckDB's recall@10 against it.
 * - Keywords at 1, 10 and 1,000 resources: the in-memory BM25 (loaded from DuckDB, kept current from
 *   its commits) against FTS5 over the SQLite store.
 * - A server over the corpus on each: start-up time to SERVING and its RSS once serving.
 * BENCH_SCALE scales the chunk count (1 = 100,000 chunks, 50 documents per message; CI runs 0.01: 5,000
 * chunks, the floor, in 1,000 resources of 5 documents, one message each).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDbDatabase } from "../src/adapters/duckdb/duckdb-database.js";
import { DuckDbDocumentStore } from "../src/adapters/duckdb/duckdb-document-store.js";
import { DuckDbUnitReader } from "../src/adapters/duckdb/duckdb-unit-reader.js";
import { DuckDbVectorBackend } from "../src/adapters/duckdb/duckdb-vector-backend.js";
import { MemoryBm25TextBackend } from "../src/adapters/kit/bm25/memory-bm25-text-backend.js";
import { PartitionedVectorBackend } from "../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { Fts5TextBackend } from "../src/adapters/sqlite/fts5-text-backend.js";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import type { DocumentInputRecord } from "../src/ports/document-store.js";
import type { VectorEntry } from "../src/ports/vector-backend.js";
import { gaussian, prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { median, sampleTimes } from "./bench-timing.js";
import { syntheticUlid, syntheticWord, zipfRank } from "./synthetic-corpus.js";

const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const DIM = 384;
const DOCS_PER_MESSAGE = 50;
const ROUNDS = 3;
const QUERIES = 20;

function view(resourceIds: string[]) {
  return viewOver(resourceIds, { scopeId: "01JBENCH000000000000000000", owner: "bench", projectNames: ["local/bench"] });
}

function embeddingOf(rand: () => number): Float32Array {
  return Float32Array.from({ length: DIM }, () => gaussian(rand));
}

/** Time from spawn to SERVING, and RSS once serving, of `acms serve` with `env`. */
async function serverStart(env: Record<string, string>): Promise<{ seconds: number; rssMb: number }> {
  const port = 20000 + Math.floor(Math.random() * 30000);
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve"], {
    env: {
      ...process.env,
      ACMS_HOST: "127.0.0.1",
      ACMS_PORT: String(port),
      ACMS_KEYS: JSON.stringify([{ name: "b", key_sha256: "0".repeat(64), projects: ["*/*"], write: true }]),
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited: ${stderr.slice(-500)}`);
      const ok = await fetch(`http://127.0.0.1:${port}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
        .then((r) => r.json() as Promise<{ status?: string }>)
        .then((j) => j.status === "SERVING")
        .catch(() => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? "0");
    return { seconds, rssMb: rssKb / 1024 };
  } finally {
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
  }
}

/** Runs the DuckDB benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(5000, Math.round(100_000 * scale));
  const resources = Math.max(1000, Math.round(chunks / 50));
  const perResource = Math.ceil(chunks / resources);
  const ids = Array.from({ length: resources }, (_, i) => syntheticUlid(i));
  const liteDir = mkdtempSync(join(tmpdir(), "acms-bench-lite-"));
  const duckDir = mkdtempSync(join(tmpdir(), "acms-bench-duck-"));
  const duckPath = join(duckDir, "acms.duckdb");
  try {
    const sqlite = openSqliteDatabase(join(liteDir, "acms.db"));
    const liteStore = new SqliteDocumentStore(sqlite);
    const duck = await DuckDbDatabase.open({ path: duckPath, dimension: DIM });
    let memory: MemoryBm25TextBackend | undefined;
    const duckStore = new DuckDbDocumentStore(duck, { onChunkTexts: (c) => memory?.apply(c) });
    const reader = new DuckDbUnitReader(duck);

    const rand = prng(42);
    const messages: Array<{ id: string; docs: DocumentInputRecord[] }> = [];
    for (let r = 0; r < resources; r++) {
      const docs: DocumentInputRecord[] = [];
      for (let d = 0; d < perResource; d++) {
        const words: string[] = [];
        for (let w = 0; w < WORDS_PER_CHUNK; w++) words.push(syntheticWord(zipfRank(rand, VOCABULARY)));
        const text = words.join(" ");
        docs.push({ path: `docs/${d}.md`, content: text, metadata: { n: String(d) }, chunks: [{ text, embedding: embeddingOf(rand) }] });
      }
      for (let i = 0; i < docs.length; i += DOCS_PER_MESSAGE) messages.push({ id: ids[r], docs: docs.slice(i, i + DOCS_PER_MESSAGE) });
    }
    const total = resources * perResource;
    let t0 = performance.now();
    for (const m of messages) await liteStore.upsertDocuments(m.id, m.docs, 1);
    const liteRate = total / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    for (const m of messages) await duckStore.upsertDocuments(m.id, m.docs, 1);
    const duckRate = total / ((performance.now() - t0) / 1000);
    // The same corpus in fewer, larger messages (one transaction per 1,000 documents).
    const bulkPath = join(duckDir, "bulk.duckdb");
    const bulk = await DuckDbDatabase.open({ path: bulkPath, dimension: DIM });
    const bulkStore = new DuckDbDocumentStore(bulk);
    const flat = messages.flatMap((m) => m.docs.map((d) => ({ id: m.id, d })));
    t0 = performance.now();
    for (let i = 0; i < flat.length; i += 1000)
      await bulkStore.upsertDocuments(
        "01JBULK0000000000000000000",
        flat.slice(i, i + 1000).map((x, j) => ({ ...x.d, path: `${i + j}.md` })),
        1,
      );
    const bulkRate = total / ((performance.now() - t0) / 1000);
    await bulk.close();
    process.stdout.write(
      `ingest of ${total} chunks in ${resources} resources (${DIM}-d embeddings, ${Math.min(DOCS_PER_MESSAGE, perResource)} documents per message)\n`,
    );
    process.stdout.write(
      `  SQLite ${liteRate.toFixed(0)} chunks/s, DuckDB ${duckRate.toFixed(0)} chunks/s (DuckDB/SQLite ${(duckRate / liteRate).toFixed(2)}); DuckDB at 1,000 documents per message ${bulkRate.toFixed(0)} chunks/s (${(bulkRate / liteRate).toFixed(2)})\n`,
    );

    // Vectors: DuckDB's exact SQL search against the embedded exact scan of the same vectors.
    const entries: VectorEntry[] = [];
    for await (const e of duckStore.iterateVectors()) entries.push(e);
    const exact = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: Number.MAX_SAFE_INTEGER });
    exact.replaceAll(entries);
    const duckVectors = new DuckDbVectorBackend(duck, { ownWrites: false });
    const vq = prng(9);
    const vqueries = Array.from({ length: QUERIES }, () => embeddingOf(vq));
    const vopts = { topK: 10, minScore: 0, now: 2, recentWindowMs: 0 };
    process.stdout.write("vectors (exact both)\nscope  recall@10  JS exact p50  DuckDB p50  DuckDB/JS\n");
    for (const size of [1, 10, 1000]) {
      const v = view(ids.filter((_, i) => i % Math.floor(resources / size) === 0).slice(0, size));
      let found = 0;
      let want = 0;
      for (const q of vqueries) {
        const keys = new Set((await exact.search(v, q, vopts)).hits.map((h) => h.chunkKey));
        found += (await duckVectors.search(v, q, vopts)).hits.filter((h) => keys.has(h.chunkKey)).length;
        want += keys.size;
      }
      const jsMs = median(await sampleTimes(ROUNDS, QUERIES, (i) => exact.search(v, vqueries[i], vopts)));
      const duckMs = median(await sampleTimes(ROUNDS, QUERIES, (i) => duckVectors.search(v, vqueries[i], vopts)));
      process.stdout.write(
        `${String(size).padStart(5)}  ${(found / Math.max(1, want)).toFixed(3).padStart(9)}  ${jsMs.toFixed(3).padStart(12)}  ${duckMs.toFixed(3).padStart(10)}  ${(duckMs / jsMs).toFixed(2).padStart(9)}\n`,
      );
    }
    await exact.close();

    // Keywords: the in-memory BM25 loaded from DuckDB against FTS5.
    memory = new MemoryBm25TextBackend(
      { generation: () => duckStore.generation(), snapshotChunks: () => reader.snapshotChunks() },
      { incremental: true },
    );
    t0 = performance.now();
    await memory.load();
    const loadMs = performance.now() - t0;
    const fts = new Fts5TextBackend(sqlite);
    const qrand = prng(7);
    const queries = Array.from(
      { length: QUERIES },
      () =>
        `${syntheticWord(20 + Math.floor(qrand() * 400))} ${syntheticWord(5 + Math.floor(qrand() * 100))} ${syntheticWord(Math.floor(qrand() * 2000))}`,
    );
    const topts = { maxResults: 20, now: 2, recentWindowMs: 0 };
    process.stdout.write(
      `keywords (in-memory BM25 loaded from DuckDB in ${loadMs.toFixed(0)} ms)\nscope  FTS5 p50  memory p50  memory/FTS5\n`,
    );
    for (const size of [1, 10, 1000]) {
      const v = view(ids.filter((_, i) => i % Math.floor(resources / size) === 0).slice(0, size));
      const ftsMs = median(await sampleTimes(ROUNDS, QUERIES, (i) => fts.search(v, queries[i], topts)));
      const memMs = median(await sampleTimes(ROUNDS, QUERIES, (i) => memory!.search(v, queries[i], topts)));
      process.stdout.write(
        `${String(size).padStart(5)}  ${ftsMs.toFixed(3).padStart(8)}  ${memMs.toFixed(3).padStart(10)}  ${(memMs / ftsMs).toFixed(2).padStart(11)}\n`,
      );
    }

    // A server over the corpus on each: start-up time and RSS.
    sqlite.close();
    await duck.close();
    const embedded = await serverStart({ ACMS_DATA_DIR: liteDir });
    const onDuck = await serverStart({ ACMS_DATA_DIR: duckDir, ACMS_DUCKDB_PATH: duckPath });
    process.stdout.write(
      `server over ${total} chunks: start-up embedded ${embedded.seconds.toFixed(1)} s, DuckDB ${onDuck.seconds.toFixed(1)} s (ratio ${(onDuck.seconds / embedded.seconds).toFixed(2)})\n`,
    );
    process.stdout.write(
      `  RSS once serving: embedded ${embedded.rssMb.toFixed(0)} MB, DuckDB ${onDuck.rssMb.toFixed(0)} MB (ratio ${(onDuck.rssMb / embedded.rssMb).toFixed(2)}; DuckDB holds no vector in process, only the keyword index)\n`,
    );
  } finally {
    rmSync(liteDir, { recursive: true, force: true });
    rmSync(duckDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
