/**
 * Peer bench, vector half (BENCH_ONLY=peers): the same vectors and queries through the service over gRPC (a
 * server process of its own, compiled as deployed) and, in the same run, in process: LanceDB 0.31
 * (IVF_HNSW_SQ index, cosine, prefiltered by a bitmap index on the resource), hnswlib (one global HNSW
 * index, post-filtered by scope: the naive approach) and PGlite + pgvector (an exact scan in SQL,
 * `WHERE resource = ANY(...)`). Two stores: 1,000 resources of equal size and 1,000 of Zipf(1) sizes, each
 * 100,000 vectors of 384 dimensions (clustered, see peer-vector-corpus.ts) at BENCH_SCALE 1; scopes of 1,
 * 10, 100 and all 1,000 resources. Per scope and system: p50 and p95 over three passes of the queries
 * (half drawn near vectors of the whole store, half near vectors inside the scope), recall@10 against the
 * exact cosine top 10, the service's share of answers flagged `exhaustive`, and the service/peer ratio of
 * p50s. Ingest: documents per second until acknowledged (the service: every vector a document of one chunk,
 * one UpsertDocuments stream of one message per resource, after registering the resources), and until
 * searchable at full speed (indexes built), with service/peer ratios. BENCH_SCALE 0.01 (CI) runs 100
 * resources of 10 vectors.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { VectorBackendService } from "../gen/acms/v1/vector_pb.js";
import { generateKey, hashKey } from "../src/application/access/key-ring.js";
import { compilePrograms } from "../scripts/build.mjs";
import { BenchChild } from "./bench-child.js";
import { formatMs as fmt, median, percentile } from "./bench-timing.js";
import { corpusQueries, makeVectorCorpus, PEER_DIM, zipfSizes, type VectorCorpus } from "./peer-vector-corpus.js";
import { REGISTER_IN_FLIGHT, registerResources } from "./peers/register-resources.js";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, "..");
const PASSES = 3;
const TOP_K = 10;
/** How many candidates the naive global index fetches before its post-filter keeps the in-scope ones. */
const HNSW_POST_FILTER_FETCH = 100;

/** One system under test: it takes the corpus, then answers scoped top-10 searches with chunk keys. */
interface System {
  readonly name: string;
  /** Loads the corpus; returns ms until every write is acknowledged and ms more until indexes are built. */
  ingest(corpus: VectorCorpus): Promise<{ ackMs: number; indexMs: number; note?: string }>;
  /** Prepares a scope over the resources `resources` (indexes into the corpus); returns its handle. */
  scope(resources: readonly number[], all: boolean): Promise<unknown>;
  search(scope: unknown, query: Float32Array): Promise<{ keys: number[]; exhaustive?: boolean }>;
  close(): Promise<void>;
}

/** The exact top k keys among the unit rows of the resources in scope (never a negative cosine, as the port's rule). */
function truthOf(corpus: VectorCorpus, units: Float32Array, resources: readonly number[], query: Float32Array): number[] {
  const d = corpus.dim;
  let n = 0;
  for (const x of query) n += x * x;
  const inv = 1 / Math.sqrt(n);
  const best: Array<[number, number]> = [];
  for (const r of resources) {
    for (let i = corpus.starts[r], end = i + corpus.sizes[r]; i < end; i++) {
      let dot = 0;
      for (let j = 0, o = i * d; j < d; j++) dot += query[j] * units[o + j];
      dot *= inv;
      if (dot < 0 || (best.length === TOP_K && dot <= best[TOP_K - 1][0])) continue;
      best.push([dot, i + 1]);
      best.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      if (best.length > TOP_K) best.pop();
    }
  }
  return best.map((b) => b[1]);
}

function unitRows(corpus: VectorCorpus): Float32Array {
  const d = corpus.dim;
  const out = new Float32Array(corpus.entries.length * d);
  corpus.entries.forEach((e, i) => {
    let n = 0;
    for (const x of e.vector) n += x * x;
    const inv = 1 / Math.sqrt(n);
    for (let j = 0; j < d; j++) out[i * d + j] = e.vector[j] * inv;
  });
  return out;
}

function bearer(key: string, scopeId?: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

/** The service over gRPC, in a process of its own. */
class ServiceSystem implements System {
  readonly name = "service (gRPC)";
  private child!: BenchChild;
  private sessions!: Http2SessionManager;
  private baseUrl = "";
  private readonly key = generateKey();
  private readonly dataDir: string;
  private resourceIds: string[] = [];
  private keyOf = new Map<string, number>();
  /** RegisterResource calls per second, measured during ingest. */
  registerPerSecond = 0;

  constructor(
    private readonly programs: string,
    work: string,
  ) {
    this.dataDir = join(work, "service-data");
  }

  private transport(scopeId?: string): Transport {
    return createGrpcTransport({ baseUrl: this.baseUrl, sessionManager: this.sessions, interceptors: [bearer(this.key, scopeId)] });
  }

  async ingest(corpus: VectorCorpus): Promise<{ ackMs: number; indexMs: number; note?: string }> {
    // Plain node on the compiled program (not this process's tsx loader), as the server is deployed.
    const { child, hello } = await BenchChild.fork(join(this.programs, "peer-vector-server.mjs"), [this.dataDir, hashKey(this.key)]);
    this.child = child;
    this.baseUrl = `http://127.0.0.1:${hello.port as number}`;
    this.sessions = new Http2SessionManager(this.baseUrl);
    const registry = createClient(RegistryService, this.transport());
    const index = createClient(IndexService, this.transport());
    const started = performance.now();
    await registry.createProject({ name: "peers/vectors" });
    const ids = this.resourceIds;
    const registeredIds = await registerResources(corpus.sizes.length, async (r) => {
      const { resource } = await registry.registerResource({ project: "peers/vectors", alias: `r${r}`, kind: "docs" });
      return resource!.id;
    });
    registeredIds.forEach((id, r) => (ids[r] = id));
    const registered = performance.now();
    this.registerPerSecond = corpus.sizes.length / ((registered - started) / 1000);
    async function* messages() {
      for (let r = 0; r < corpus.sizes.length; r++) {
        const documents = [];
        for (let i = corpus.starts[r], end = i + corpus.sizes[r]; i < end; i++) {
          const e = corpus.entries[i];
          documents.push({
            path: e.path,
            content: `vector ${e.chunkKey}`,
            chunks: [{ text: `vector ${e.chunkKey}`, embedding: Array.from(e.vector) }],
          });
        }
        yield { resourceId: ids[r], documents };
      }
    }
    const res = await index.upsertDocuments(messages());
    if (res.vectorsIndexed !== corpus.entries.length)
      throw new Error(`the service indexed ${res.vectorsIndexed} vectors of ${corpus.entries.length}`);
    const ackMs = performance.now() - started;
    corpus.entries.forEach((e) => this.keyOf.set(`${ids[Number(e.resourceId.slice(8))]}/${e.path}`, e.chunkKey));
    await this.child.ask("indexed");
    return {
      ackMs,
      indexMs: performance.now() - started - ackMs,
      note: `${corpus.sizes.length} RegisterResource calls (${REGISTER_IN_FLIGHT} in flight) took ${fmt(registered - started)} (${this.registerPerSecond.toFixed(0)}/s); the upload alone ${(corpus.entries.length / ((ackMs - (registered - started)) / 1000)).toFixed(0)} docs/s`,
    };
  }

  async scope(resources: readonly number[], all: boolean): Promise<unknown> {
    const scopes = createClient(ScopeService, this.transport());
    const { scope } = await scopes.resolveScope({
      projects: ["peers/vectors"],
      includeResources: all ? [] : resources.map((r) => this.resourceIds[r]),
    });
    return createClient(VectorBackendService, this.transport(scope!.scopeId));
  }

  async search(scope: unknown, query: Float32Array): Promise<{ keys: number[]; exhaustive: boolean }> {
    const client = scope as ReturnType<typeof createClient<typeof VectorBackendService>>;
    const res = await client.similaritySearch({ embedding: Array.from(query), topK: TOP_K });
    // uko://<resource id>/<path>#<chunk index>
    const keys = res.results.map((r) => this.keyOf.get(r.ukoUri.slice("uko://".length, r.ukoUri.lastIndexOf("#"))) ?? -1);
    return { keys, exhaustive: res.exhaustive };
  }

  async close(): Promise<void> {
    this.sessions?.abort();
    await this.child?.stop();
  }
}

/** LanceDB 0.31 in process: IVF_HNSW_SQ (cosine) when the table is large enough to train it, a bitmap index on the resource. */
class LanceSystem implements System {
  readonly name = "LanceDB";
  private table!: import("@lancedb/lancedb").Table;
  private indexed = false;

  constructor(private readonly dir: string) {}

  async ingest(corpus: VectorCorpus): Promise<{ ackMs: number; indexMs: number; note?: string }> {
    const lancedb = await import("@lancedb/lancedb");
    const started = performance.now();
    const db = await lancedb.connect(this.dir);
    const rows = (from: number, to: number) =>
      corpus.entries
        .slice(from, to)
        .map((e) => ({ id: e.chunkKey, resource: `r${Number(e.resourceId.slice(8))}`, vector: Array.from(e.vector) }));
    const BATCH = 10_000;
    this.table = await db.createTable("vectors", rows(0, BATCH));
    for (let i = BATCH; i < corpus.entries.length; i += BATCH) await this.table.add(rows(i, i + BATCH));
    const ackMs = performance.now() - started;
    // IVF needs rows to train its partitions: a small table (CI's scale) is searched by a flat scan.
    this.indexed = corpus.entries.length >= 10_000;
    if (this.indexed) await this.table.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "cosine" }) });
    await this.table.createIndex("resource", { config: lancedb.Index.bitmap() });
    return { ackMs, indexMs: performance.now() - started - ackMs, note: this.indexed ? "IVF_HNSW_SQ" : "flat (too few rows for IVF)" };
  }

  async scope(resources: readonly number[], all: boolean): Promise<unknown> {
    return all ? null : `resource IN (${resources.map((r) => `'r${r}'`).join(",")})`;
  }

  async search(scope: unknown, query: Float32Array): Promise<{ keys: number[] }> {
    let q = this.table.vectorSearch(Array.from(query)).distanceType("cosine").limit(TOP_K).select(["id", "_distance"]);
    if (scope) q = q.where(scope as string);
    const rows = (await q.toArray()) as Array<{ id: number }>;
    return { keys: rows.map((r) => Number(r.id)) };
  }

  async close(): Promise<void> {
    this.table?.close();
  }
}

/** hnswlib in process: one global HNSW index (M 16, efConstruction 200, ef 128), post-filtered by scope. */
class HnswlibSystem implements System {
  readonly name = "hnswlib global + post-filter";
  private index!: import("hnswlib-node").HierarchicalNSW;
  private resourceOf!: Int32Array;

  async ingest(corpus: VectorCorpus): Promise<{ ackMs: number; indexMs: number; note?: string }> {
    const { HierarchicalNSW } = (await import("hnswlib-node")).default ?? (await import("hnswlib-node"));
    const started = performance.now();
    this.index = new HierarchicalNSW("cosine", corpus.dim);
    this.index.initIndex(corpus.entries.length, 16, 200, 100);
    this.resourceOf = new Int32Array(corpus.entries.length + 1);
    for (const e of corpus.entries) {
      this.index.addPoint(Array.from(e.vector), e.chunkKey);
      this.resourceOf[e.chunkKey] = Number(e.resourceId.slice(8));
    }
    this.index.setEf(128);
    return { ackMs: performance.now() - started, indexMs: 0, note: `fetches ${HNSW_POST_FILTER_FETCH}, keeps the in-scope ones` };
  }

  async scope(resources: readonly number[], all: boolean): Promise<unknown> {
    return all ? null : new Set(resources);
  }

  async search(scope: unknown, query: Float32Array): Promise<{ keys: number[] }> {
    const set = scope as Set<number> | null;
    const n = Math.min(set ? HNSW_POST_FILTER_FETCH : TOP_K, this.index.getCurrentCount());
    const { neighbors } = this.index.searchKnn(Array.from(query), n);
    const keys = set ? neighbors.filter((k) => set.has(this.resourceOf[k])) : neighbors;
    return { keys: keys.slice(0, TOP_K) };
  }

  async close(): Promise<void> {}
}

/** PGlite (PostgreSQL in WebAssembly) with pgvector, in process: an exact scan, `WHERE resource = ANY(...)` on a btree. */
class PgliteSystem implements System {
  readonly name = "PGlite + pgvector (exact)";
  private db!: import("@electric-sql/pglite").PGlite;

  async ingest(corpus: VectorCorpus): Promise<{ ackMs: number; indexMs: number; note?: string }> {
    const { PGlite } = await import("@electric-sql/pglite");
    const { vector } = await import("@electric-sql/pglite-pgvector");
    const started = performance.now();
    this.db = await PGlite.create({ extensions: { vector } });
    await this.db.exec(
      `CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE v (id int PRIMARY KEY, resource int NOT NULL, embedding vector(${corpus.dim}) NOT NULL)`,
    );
    // COPY in batches (2.6x the rows/s of multi-row INSERTs here).
    const BATCH = 5000;
    for (let i = 0; i < corpus.entries.length; i += BATCH) {
      const csv = corpus.entries
        .slice(i, i + BATCH)
        .map((e) => `${e.chunkKey},${Number(e.resourceId.slice(8))},"[${Array.from(e.vector).join(",")}]"`)
        .join("\n");
      await this.db.query("COPY v (id, resource, embedding) FROM '/dev/blob' WITH (FORMAT csv)", [], { blob: new Blob([csv]) });
    }
    const ackMs = performance.now() - started;
    await this.db.exec("CREATE INDEX ON v (resource); ANALYZE v");
    return { ackMs, indexMs: performance.now() - started - ackMs };
  }

  async scope(resources: readonly number[], all: boolean): Promise<unknown> {
    return all ? null : [...resources];
  }

  async search(scope: unknown, query: Float32Array): Promise<{ keys: number[] }> {
    const q = `[${Array.from(query).join(",")}]`;
    const res = scope
      ? await this.db.query<{ id: number }>("SELECT id FROM v WHERE resource = ANY($1::int[]) ORDER BY embedding <=> $2::vector LIMIT 10", [
          scope,
          q,
        ])
      : await this.db.query<{ id: number }>("SELECT id FROM v ORDER BY embedding <=> $1::vector LIMIT 10", [q]);
    return { keys: res.rows.map((r) => r.id) };
  }

  async close(): Promise<void> {
    await this.db?.close();
  }
}

interface Figures {
  p50: number;
  p95: number;
  recall: number;
  exhaustive?: number;
}

async function measure(sys: System, scope: unknown, queries: Float32Array[], truths: number[][]): Promise<Figures> {
  for (const q of queries.slice(0, 3)) await sys.search(scope, q);
  const ms: number[] = [];
  let found = 0;
  let wanted = 0;
  let exhaustive = 0;
  let flagged = false;
  for (let pass = 0; pass < PASSES; pass++) {
    for (const [i, q] of queries.entries()) {
      const s = performance.now();
      const got = await sys.search(scope, q);
      ms.push(performance.now() - s);
      if (pass > 0) continue;
      const want = new Set(truths[i]);
      found += got.keys.slice(0, TOP_K).filter((k) => want.has(k)).length;
      wanted += truths[i].length;
      if (got.exhaustive !== undefined) flagged = true;
      if (got.exhaustive) exhaustive += 1;
    }
  }
  return {
    p50: median(ms),
    p95: percentile(ms, 0.95),
    recall: found / Math.max(1, wanted),
    exhaustive: flagged ? exhaustive / queries.length : undefined,
  };
}

/** Runs the vector half of the peer bench and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const total = Math.max(1000, Math.round(100_000 * scale));
  const resources = scale >= 0.1 ? 1000 : 100;
  const queryCount = scale >= 0.1 ? 100 : 20;
  const work = mkdtempSync(join(tmpdir(), "acms-peers-vector-"));
  const programs = join(ROOT, "node_modules", ".cache", "acms-peers-vector-bench");
  mkdirSync(programs, { recursive: true });
  await compilePrograms({ "peer-vector-server": join(here, "peer-vector-server.ts") }, programs);
  try {
    const shapes: Array<[string, number[]]> = [
      [`${resources} equal resources`, Array.from({ length: resources }, () => Math.round(total / resources))],
      [`${resources} Zipf-sized resources`, zipfSizes(total, resources)],
    ];
    for (const [label, sizes] of shapes) {
      const corpus = makeVectorCorpus(sizes);
      const units = unitRows(corpus);
      const n = corpus.entries.length;
      process.stdout.write(
        `\n${label}: ${n} vectors x ${PEER_DIM} dims (sizes ${Math.max(...sizes)} .. ${Math.min(...sizes)}), ${queryCount} queries a scope (half near the whole store, half near the scope), top ${TOP_K}, ${PASSES} passes\n`,
      );
      const dir = mkdtempSync(join(work, "shape-"));
      const systems: System[] = [
        new ServiceSystem(programs, dir),
        new LanceSystem(join(dir, "lance")),
        new HnswlibSystem(),
        new PgliteSystem(),
      ];
      const ingested: Array<{ ackMs: number; indexMs: number; note?: string }> = [];
      try {
        for (const sys of systems) ingested.push(await sys.ingest(corpus));
        const rate = (ms: number) => n / (ms / 1000);
        process.stdout.write("ingest                          docs/s acked   docs/s searchable   service/peer (acked, searchable)\n");
        systems.forEach((sys, i) => {
          const { ackMs, indexMs, note } = ingested[i];
          const ratio =
            i === 0
              ? ""
              : `${(rate(ingested[0].ackMs) / rate(ackMs)).toFixed(2)}x, ${(rate(ingested[0].ackMs + ingested[0].indexMs) / rate(ackMs + indexMs)).toFixed(2)}x`;
          process.stdout.write(
            `  ${sys.name.padEnd(30)} ${rate(ackMs).toFixed(0).padStart(12)}   ${rate(ackMs + indexMs)
              .toFixed(0)
              .padStart(17)}   ${ratio.padEnd(14)} ${note ?? ""}\n`,
          );
        });
        // Scopes: 1, 10, 100 resources spread over the store (every k-th, so Zipf scopes mix large and small), and all.
        const counts = [1, 10, 100, resources].filter((c, i, a) => c <= resources && a.indexOf(c) === i);
        process.stdout.write(
          `scope          rows  ${systems.map((s) => s.name.padEnd(36)).join("")}\n` +
            `                     ${systems.map((_, i) => (i === 0 ? "p50/p95 recall exhaustive".padEnd(36) : "p50/p95 recall service/peer".padEnd(36))).join("")}\n`,
        );
        for (const count of counts) {
          const picked = Array.from({ length: count }, (_, i) => Math.floor((i * resources) / count));
          const rows = picked.reduce((a, r) => a + sizes[r], 0);
          const all = count === resources;
          const queries = [
            ...corpusQueries(corpus, queryCount / 2, 100 + count),
            ...corpusQueries(corpus, queryCount / 2, 200 + count, picked),
          ];
          const truths = queries.map((q) => truthOf(corpus, units, picked, q));
          const figures: Figures[] = [];
          for (const sys of systems) figures.push(await measure(sys, await sys.scope(picked, all), queries, truths));
          const cells = figures.map((f, i) => {
            const base = `${fmt(f.p50)}/${fmt(f.p95)} ${f.recall.toFixed(3)}`;
            const extra = i === 0 ? ` ${((f.exhaustive ?? 0) * 100).toFixed(0)}%` : ` ${(figures[0].p50 / f.p50).toFixed(2)}x`;
            return (base + extra).padEnd(36);
          });
          process.stdout.write(`${String(count).padEnd(10)} ${String(rows).padStart(8)}  ${cells.join("")}\n`);
        }
      } finally {
        for (const sys of systems) await sys.close().catch(() => undefined);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await run();
