/**
 * PostgreSQL benchmark, beside the embedded engine in the same run (ratios, since machines here are
 * shared and noisy). It starts its own PostgreSQL 15 cluster (test/support/engines/postgres-cluster.ts).
 *
 * - Ingest: chunks per second through PostgresDocumentStore and through SqliteDocumentStore (same
 *   synthetic corpus, 50 one-chunk documents per message, each chunk with a 384-d embedding).
 * - Scoped BM25 at 1, 10 and 1,000 resources: the adapter against its own raw SQL statement on
 *   PostgreSQL, and PostgreSQL's raw statement against FTS5's.
 * - Vectors: the in-process follower (PostgreSQL without pgvector) answers from the embedded backend, so
 *   its recall and latency are the embedded ones plus one generation check per search: both are printed.
 *   pgvector runs on PGlite (WebAssembly, one session) at a small size: recall@10 against brute force
 *   and its latency as a ratio to the follower's (PGlite's latency says nothing about a native server).
 * - Relevance: nDCG@10 of FTS5 and of PostgreSQL's BM25 on a collection with planted relevance judgments
 *   (bench/planted-relevance.ts; no public IR collection can be fetched here), or on a public one in the BEIR
 *   layout with `BENCH_IR_COLLECTION=<dir>` (bench/beir-collection.ts), their difference, and how many
 *   queries' top 10 differ, and whether only in the order of equal scores.
 * - A server over the corpus on each engine: start-up time to SERVING and its RSS once serving.
 * BENCH_SCALE scales the chunk count (1 = 100,000; CI runs 0.05).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { PartitionedVectorBackend } from "../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { ensureVectorTable, PgvectorBackend } from "../src/adapters/postgres/pgvector-backend.js";
import { PostgresDocumentStore } from "../src/adapters/postgres/postgres-document-store.js";
import { migrate } from "../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool } from "../src/adapters/postgres/postgres-pool.js";
import { phraseParams, postgresRankedSql, PostgresTextBackend } from "../src/adapters/postgres/postgres-text-backend.js";
import { PostgresVectorFollower } from "../src/adapters/postgres/postgres-vector-follower.js";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend, rankedSearchSql, scopedMatch } from "../src/adapters/sqlite/fts5-text-backend.js";
import type { TextBackend } from "../src/ports/text-backend.js";
import type { VectorEntry } from "../src/ports/vector-backend.js";
import { startPgliteVector } from "../test/support/engines/pglite-pgvector.js";
import { startPostgresCluster, stopPostgresCluster } from "../test/support/engines/postgres-cluster.js";
import { gaussian, prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { median, percentile, sampleTimes } from "./bench-timing.js";
import { readBeirCollection } from "./beir-collection.js";
import { ndcgAt, plantedCollection } from "./planted-relevance.js";
import { syntheticUlid, syntheticWord, zipfRank } from "./synthetic-corpus.js";

const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const DIM = 384;
const DOCS_PER_MESSAGE = 50;
const ROUNDS = 5;
const QUERIES = 20;

function view(resourceIds: string[]) {
  return viewOver(resourceIds, { scopeId: "01JBENCH000000000000000000", owner: "bench", projectNames: ["local/bench"] });
}

function embeddingOf(rand: () => number, dim = DIM): Float32Array {
  return Float32Array.from({ length: dim }, () => gaussian(rand));
}

async function timeEach(queries: string[], fn: (q: string) => unknown): Promise<number> {
  return median(await sampleTimes(ROUNDS, queries.length, (i) => fn(queries[i])));
}

/** Time from spawn to SERVING, and RSS once serving, of `acms serve` with `env`. */
async function serverStart(env: Record<string, string>): Promise<{ seconds: number; rssMb: number }> {
  const dir = mkdtempSync(join(tmpdir(), "acms-bench-serve-"));
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
    const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
    return { seconds, rssMb: rssKb / 1024 };
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * nDCG@10 of both engines on the planted collection: the same documents written through each store
 * (ten resources, 50 documents per message), the same queries over a scope of every resource.
 */
async function relevance(clusterUrl: string, sqlitePath: string, scale: number): Promise<void> {
  // Queries may share documents (each query plants its own topic words), so a small collection stays judged.
  const publicDir = process.env.BENCH_IR_COLLECTION;
  const col = publicDir ? readBeirCollection(publicDir) : plantedCollection(11, Math.max(1000, Math.round(50_000 * scale)), 300);
  const documents = col.documents.length;
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  await admin.query("CREATE DATABASE relevance");
  await admin.end();
  const pool = openPostgresPool(clusterUrl.replace(/\/postgres$/, "/relevance"));
  const sqlite = openSqliteDatabase(sqlitePath);
  try {
    await migrate(pool);
    const stores = [new SqliteDocumentStore(sqlite), new PostgresDocumentStore(pool)];
    const rids = Array.from({ length: 10 }, (_, i) => syntheticUlid(900_000 + i));
    for (const store of stores) {
      for (let i = 0; i < col.documents.length; i += 50) {
        const docs = col.documents
          .slice(i, i + 50)
          .map((d) => ({ path: `docs/${d.id}.md`, content: d.text, metadata: {}, chunks: [{ text: d.text }] }));
        await store.upsertDocuments(rids[(i / 50) % rids.length], docs, 1);
      }
    }
    const engines: TextBackend[] = [new Fts5TextBackend(sqlite), new PostgresTextBackend(pool)];
    const v = view(rids);
    const sums = [0, 0];
    let differ = 0;
    let tiesOnly = 0;
    let refused = 0;
    for (const q of col.queries) {
      const lists = [];
      // A public collection's query may be refused by a text backend's checks (it is counted, scored 0 on both).
      const answers = await Promise.all(
        engines.map((engine) => engine.search(v, q.text, { maxResults: 10, now: 2, recentWindowMs: 0 }).catch(() => undefined)),
      );
      if (answers.some((a) => a === undefined)) {
        refused += 1;
        continue;
      }
      for (const [e, answer] of answers.entries()) {
        const { hits } = answer!;
        const ids = hits.map((h) => /docs\/(d\d+)\.md/.exec(h.path)![1]);
        sums[e] += ndcgAt(10, ids, q.grades);
        lists.push(hits.map((h, i) => ({ id: ids[i], score: h.score })));
      }
      const [x, y] = lists;
      if (x.length === y.length && x.every((h, i) => h.id === y[i].id)) continue;
      differ += 1;
      // Only ties: the same scores position by position, and each score's documents the same set.
      const sameScores = x.length === y.length && x.every((h, i) => h.score === y[i].score);
      const groups = (l: typeof x) =>
        new Map(
          [...new Set(l.map((h) => h.score))].map((s) => [
            s,
            l
              .filter((h) => h.score === s)
              .map((h) => h.id)
              .sort()
              .join(),
          ]),
        );
      const gx = groups(x);
      const gy = groups(y);
      // The last score group may be cut at 10 differently: compare all but it.
      const last = x.at(-1)?.score;
      if (sameScores && [...gx].every(([s, ids]) => s === last || gy.get(s) === ids)) tiesOnly += 1;
    }
    const [fts, pgn] = sums.map((s) => s / col.queries.length);
    const judged = publicDir ? `judged queries of ${publicDir} (BEIR layout)` : "queries with planted judgments";
    const shape = publicDir ? `${refused} refused by an engine, scored 0` : "3 grade-2 and 6 grade-1 documents per query";
    process.stdout.write(`relevance: ${col.queries.length} ${judged} over ${documents} documents (${shape})\n`);
    process.stdout.write(
      `  nDCG@10 FTS5 ${fts.toFixed(4)}, PostgreSQL ${pgn.toFixed(4)}, difference ${(pgn - fts).toFixed(4)}; top-10 order differs for ${differ} queries (${tiesOnly} of them only among equal scores)\n`,
    );
  } finally {
    sqlite.close();
    await pool.end();
  }
}

/** Runs the PostgreSQL benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(5000, Math.round(100_000 * scale));
  const resources = Math.max(1000, Math.round(chunks / 50));
  const perResource = Math.ceil(chunks / resources);
  const ids = Array.from({ length: resources }, (_, i) => syntheticUlid(i));
  const cluster = await startPostgresCluster();
  const dataDir = mkdtempSync(join(tmpdir(), "acms-bench-pg-"));
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query("CREATE DATABASE bench");
    await admin.end();
    const url = cluster.url.replace(/\/postgres$/, "/bench");
    const pool = openPostgresPool(url);
    await migrate(pool);
    const pgStore = new PostgresDocumentStore(pool);
    const sqlite = openSqliteDatabase(join(dataDir, "acms.db"));
    const liteStore = new SqliteDocumentStore(sqlite);

    // Ingest: the same messages into both stores.
    const rand = prng(42);
    const messages: Array<{ id: string; docs: Parameters<PostgresDocumentStore["upsertDocuments"]>[1] }> = [];
    for (let r = 0; r < resources; r++) {
      const docs = [];
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
    for (const m of messages) await pgStore.upsertDocuments(m.id, m.docs, 1);
    const pgRate = total / ((performance.now() - t0) / 1000);
    process.stdout.write(
      `ingest of ${total} chunks in ${resources} resources (${DIM}-d embeddings, ${DOCS_PER_MESSAGE} documents per message)\n`,
    );
    process.stdout.write(
      `  SQLite ${liteRate.toFixed(0)} chunks/s, PostgreSQL ${pgRate.toFixed(0)} chunks/s (PostgreSQL/SQLite ${(pgRate / liteRate).toFixed(2)})\n`,
    );

    // Scoped BM25.
    const qrand = prng(7);
    const queries = Array.from(
      { length: QUERIES },
      () =>
        `${syntheticWord(20 + Math.floor(qrand() * 400))} ${syntheticWord(5 + Math.floor(qrand() * 100))} ${syntheticWord(Math.floor(qrand() * 2000))}`,
    );
    const text = new PostgresTextBackend(pool);
    const rawLite = sqlite.prepare(rankedSearchSql("current"));
    const rawPg = postgresRankedSql("current");
    process.stdout.write("scope  raw PG SQL (ms)  adapter/raw  raw PG/raw FTS5\n");
    for (const size of [1, 10, 1000]) {
      const scopeIds = ids.filter((_, i) => i % Math.floor(resources / size) === 0).slice(0, size);
      const v = view(scopeIds);
      const rids = JSON.stringify(v.resourceIds);
      const liteMs = await timeEach(queries, (q) =>
        rawLite.all({ match: scopedMatch(q, v.resourceIds), rids, cutoff: 0, limit: 20, offset: 0 }),
      );
      const rawMs = await timeEach(queries, (q) => {
        const p = phraseParams(q)!;
        return pool.query(rawPg, [p.phrase, p.offset, p.term, v.resourceIds, 21, 0]);
      });
      const adapterMs = await timeEach(queries, (q) => text.search(v, q, { maxResults: 20, now: 2, recentWindowMs: 0 }));
      process.stdout.write(
        `${String(size).padStart(5)}  ${rawMs.toFixed(3).padStart(15)}  ${(adapterMs / rawMs).toFixed(2).padStart(11)}  ${(rawMs / liteMs).toFixed(2).padStart(15)}\n`,
      );
    }

    await relevance(cluster.url, join(dataDir, "relevance.db"), scale);

    // Vectors, in process (no pgvector): recall and latency against an exact scan of the same data.
    const inner = new PartitionedVectorBackend({ dimension: DIM });
    const follower = await PostgresVectorFollower.open(pool, url, inner);
    const exact = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: Number.MAX_SAFE_INTEGER });
    const entries: VectorEntry[] = [];
    for await (const e of pgStore.iterateVectors()) entries.push(e);
    exact.replaceAll(entries);
    await inner.whenIndexed();
    const vq = prng(9);
    const vqueries = Array.from({ length: QUERIES }, () => embeddingOf(vq));
    const vopts = { topK: 10, minScore: 0, now: 2, recentWindowMs: 0 };
    process.stdout.write("vectors in process (PostgreSQL without pgvector)\nscope  recall@10  p50 follower/exact\n");
    for (const size of [1, 10, 1000]) {
      const v = view(ids.slice(0, size));
      let found = 0;
      let want = 0;
      const fTimes: number[] = [];
      const eTimes: number[] = [];
      for (const q of vqueries) {
        let t = performance.now();
        const got = await follower.search(v, q, vopts);
        fTimes.push(performance.now() - t);
        t = performance.now();
        const ref = await exact.search(v, q, vopts);
        eTimes.push(performance.now() - t);
        const keys = new Set(ref.hits.map((h) => h.chunkKey));
        found += got.hits.filter((h) => keys.has(h.chunkKey)).length;
        want += ref.hits.length;
      }
      process.stdout.write(
        `${String(size).padStart(5)}  ${(found / Math.max(1, want)).toFixed(3).padStart(9)}  ${(median(fTimes) / median(eTimes)).toFixed(2).padStart(18)}\n`,
      );
    }
    await follower.close();

    // pgvector on PGlite, small: recall@10 against brute force, latency against the follower's exact path.
    const lite = await startPgliteVector();
    try {
      const lpool = openPostgresPool(lite.url, { max: 1 });
      const small = entries.slice(0, Math.min(entries.length, 3000)).map((e) => ({ ...e, vector: e.vector.slice(0, 64) }));
      await migrate(lpool);
      await ensureVectorTable(lpool, 64);
      // Loaded once (in WebAssembly each load keeps the HNSW index up to date row by row, the longest part of this
      // bench at CI's scale): the threshold only picks the search path, and the backend keeps no state of the rows.
      const writer = new PgvectorBackend(lpool, 64);
      for (let i = 0; i < small.length; i += 500) writer.upsert(small.slice(i, i + 500));
      await writer.flushed();
      const ref = new PartitionedVectorBackend({ dimension: 64, exactThreshold: Number.MAX_SAFE_INTEGER });
      ref.replaceAll(small);
      const v = view([...new Set(small.map((e) => e.resourceId))]);
      for (const threshold of [Number.MAX_SAFE_INTEGER, 0]) {
        const b = new PgvectorBackend(lpool, 64, { exactThreshold: threshold });
        let found = 0;
        let want = 0;
        const times: number[] = [];
        for (const q of vqueries.map((x) => x.slice(0, 64))) {
          const t = performance.now();
          const got = await b.search(v, q, vopts);
          times.push(performance.now() - t);
          const keys = new Set((await ref.search(v, q, vopts)).hits.map((h) => h.chunkKey));
          found += got.hits.filter((h) => keys.has(h.chunkKey)).length;
          want += keys.size;
        }
        process.stdout.write(
          `pgvector on PGlite, ${small.length} vectors, ${threshold === 0 ? "HNSW (iterative scan)" : "exact scan"}: recall@10 ${(found / want).toFixed(3)}, p50 ${median(times).toFixed(2)} ms, p95 ${percentile(times, 0.95).toFixed(2)} ms\n`,
        );
      }
      await lpool.end();
    } finally {
      await lite.stop();
    }

    // A server over the corpus on each engine: start-up time and RSS.
    sqlite.close();
    await pool.end();
    const embedded = await serverStart({ ACMS_DATA_DIR: dataDir });
    const pgDir = mkdtempSync(join(tmpdir(), "acms-bench-pg-serve-"));
    const onPg = await serverStart({ ACMS_DATA_DIR: pgDir, ACMS_POSTGRES_URL: url });
    rmSync(pgDir, { recursive: true, force: true });
    process.stdout.write(
      `server over ${total} chunks: start-up embedded ${embedded.seconds.toFixed(1)} s, PostgreSQL ${onPg.seconds.toFixed(1)} s (ratio ${(onPg.seconds / embedded.seconds).toFixed(2)})\n`,
    );
    process.stdout.write(
      `  RSS once serving: embedded ${embedded.rssMb.toFixed(0)} MB, PostgreSQL ${onPg.rssMb.toFixed(0)} MB (ratio ${(onPg.rssMb / embedded.rssMb).toFixed(2)}; without pgvector both hold every vector in process)\n`,
    );
  } finally {
    stopPostgresCluster(cluster);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
