/**
 * Start-up benchmark: how long the server takes from process start to listening, and its resident
 * memory then, over data directories holding 0, a tenth of and all of BENCH_SCALE x 100,000 chunks with
 * 384-dimension embeddings and as many triples (100 resources), best of three fresh processes (after an
 * untimed warm-up start) running grpc-bench-server.ts compiled as `npm run build` compiles the server
 * (scripts/build.mjs's compilePrograms; the empty directory also through tsx, alternating with the
 * compiled starts, for the compiled/tsx ratio). Start-up should
 * stay flat as the data grows: figures are ratios to the empty directory's, measured in the same run. The
 * vectors and the graph store load in the background (health reports their services NOT_SERVING
 * meanwhile): the times at which they are loaded (and the RSS once the vectors are in) are printed beside,
 * and the time at which every service is SERVING. Saved vector graphs load after the rows, in the
 * background too. Then the vector graphs over the full set: built from the rows (a first start) against
 * loaded from the files a previous run saved (every later start).
 */
import { fork } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadVectors } from "../src/adapters/kit/vectors/load-vectors.js";
import { PartitionedVectorBackend } from "../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { OxigraphGraphBackend } from "../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { compilePrograms } from "../scripts/build.mjs";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteRegistryStore } from "../src/adapters/sqlite/sqlite-registry-store.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { generateKey, hashKey } from "../src/application/access/key-ring.js";
import { gaussian, prng } from "../test/support/prng.js";

const here = dirname(fileURLToPath(import.meta.url));
const DIM = 384;
const RESOURCES = 100;

async function fill(dataDir: string, chunks: number): Promise<void> {
  const db = openSqliteDatabase(join(dataDir, "acms.db"));
  const registry = new SqliteRegistryStore(db);
  const documents = new SqliteDocumentStore(db);
  await registry.createProject("bench/startup");
  const rnd = prng(5);
  const perResource = Math.ceil(chunks / RESOURCES);
  const ids: string[] = [];
  for (let r = 0; r < RESOURCES && chunks > 0; r++) {
    const id = newUlid();
    ids.push(id);
    await registry.registerResource({ id, project: "bench/startup", alias: `r${r}`, kind: "docs", parentIds: [], metadata: {} });
    const docs = Array.from({ length: perResource }, (_, d) => ({
      path: `docs/${d}.md`,
      content: `chunk ${d} of resource ${r}`,
      metadata: {},
      chunks: [{ text: `chunk ${d} of resource ${r}`, embedding: Float32Array.from({ length: DIM }, () => gaussian(rnd)) }],
    }));
    await documents.upsertDocuments(id, docs, Date.now());
  }
  db.close();
  const graph = OxigraphGraphBackend.start({ path: join(dataDir, "graph.db"), workers: 1, spares: 0 });
  try {
    for (const [r, id] of ids.entries()) {
      const triples = Array.from({ length: perResource }, (_, d) => ({
        subject: { kind: "iri" as const, value: `uko://${id}/docs/${d}.md` },
        predicate: { kind: "iri" as const, value: d % 2 === 0 ? "http://example.org/mentions" : "http://example.org/title" },
        object:
          d % 2 === 0
            ? { kind: "iri" as const, value: `uko://${id}/docs/${(d * 7) % perResource}.md` }
            : { kind: "literal" as const, value: `chunk ${d} of resource ${r}` },
      }));
      await graph.putTriples(id, triples, false);
    }
  } finally {
    await graph.close();
  }
}

type Start = { ms: number; rss: number; graphMs: number; vectorMs: number; vectorRss: number };

/** How a server process is started: the compiled program (as `npm start` runs it), or the source through tsx. */
type Runtime = { program: string; execArgv: string[] };

/**
 * Forks a server over `dataDir`; resolves with the time to listening (ms), the RSS then (bytes) and the
 * times until its vectors and its graph store were loaded (ms from the fork, the server serving meanwhile).
 */
function startOnce(runtime: Runtime, dataDir: string): Promise<Start> {
  const t0 = performance.now();
  const proc = fork(runtime.program, ["service", dataDir, hashKey(generateKey())], {
    execArgv: runtime.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = () => new Promise<Record<string, number>>((resolve) => proc.once("message", (m) => resolve(m as Record<string, number>)));
  const exited = new Promise<never>((_, reject) => proc.once("exit", (code) => reject(new Error(`server exited with ${code}`))));
  const measured = (async () => {
    const { rss } = await next();
    const ms = performance.now() - t0;
    const vectors = next();
    proc.send("vectors");
    const { rss: vectorRss } = await vectors;
    const vectorMs = performance.now() - t0;
    const graph = next();
    proc.send("graph");
    await graph;
    const graphMs = performance.now() - t0;
    proc.removeAllListeners("exit");
    const gone = new Promise((resolve) => proc.once("exit", resolve));
    proc.send("stop");
    await gone;
    return { ms, rss, graphMs, vectorMs, vectorRss };
  })();
  return Promise.race([measured, exited]);
}

/** Time (ms) until every vector graph of `dataDir` is ready in a fresh backend, and how many were loaded and built. */
async function graphsReady(dataDir: string, graphDir: string): Promise<{ ms: number; loaded: number; built: number }> {
  const db = openSqliteDatabase(join(dataDir, "acms.db"));
  try {
    const t0 = performance.now();
    const vectors = new PartitionedVectorBackend({ dimension: DIM, graphDir });
    await loadVectors(vectors, new SqliteDocumentStore(db).iterateVectors());
    await vectors.whenIndexed();
    const ms = performance.now() - t0;
    await vectors.close();
    return { ms, ...vectors.graphCounts };
  } finally {
    db.close();
  }
}

/** The best (by time to listening) of three starts of each runtime, alternating between them so the machine's load weighs on both alike. */
async function bestOfThree(dataDir: string, ...runtimes: Runtime[]): Promise<Start[]> {
  const runs: Start[][] = runtimes.map(() => []);
  for (let round = 0; round < 3; round++) for (const [i, runtime] of runtimes.entries()) runs[i].push(await startOnce(runtime, dataDir));
  return runs.map((r) => r.reduce((a, b) => (b.ms < a.ms ? b : a)));
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Runs the start-up benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const full = Math.max(5000, Math.round(100_000 * scale));
  const cacheDir = join(here, "..", "node_modules", ".cache");
  mkdirSync(cacheDir, { recursive: true });
  const programs = mkdtempSync(join(cacheDir, "acms-startup-bench-"));
  try {
    await compilePrograms({ "grpc-bench-server": join(here, "grpc-bench-server.ts") }, programs);
    const compiled: Runtime = { program: join(programs, "grpc-bench-server.mjs"), execArgv: [] };
    const tsx: Runtime = { program: join(here, "grpc-bench-server.ts"), execArgv: ["--import", "tsx"] };
    // One untimed start of each first, so neither pays for a cold file cache in the figures.
    const warm = mkdtempSync(join(tmpdir(), "acms-startup-bench-"));
    try {
      await startOnce(compiled, warm);
      await startOnce(tsx, warm);
    } finally {
      rmSync(warm, { recursive: true, force: true });
    }
    let base: Start | undefined;
    process.stdout.write(
      `start-up to listening, fresh process (compiled as npm run build compiles), ${DIM}-dimension embeddings in ${RESOURCES} resources\n`,
    );
    for (const chunks of [0, Math.round(full / 10), full]) {
      const dataDir = mkdtempSync(join(tmpdir(), "acms-startup-bench-"));
      try {
        await fill(dataDir, chunks);
        // The empty directory also through tsx, alternating with the compiled starts.
        const [best, dev] = await bestOfThree(dataDir, ...(chunks === 0 ? [compiled, tsx] : [compiled]));
        base ??= best;
        const serving = Math.max(best.vectorMs, best.graphMs);
        const baseServing = Math.max(base.vectorMs, base.graphMs);
        process.stdout.write(
          `  ${String(chunks).padStart(7)} chunks and triples: listening ${seconds(best.ms)} (${(best.ms / base.ms).toFixed(2)}x empty), ` +
            `RSS ${(best.rss / 2 ** 20).toFixed(0)} MiB (${(best.rss / base.rss).toFixed(2)}x empty); vectors loaded at ${seconds(best.vectorMs)} (${(best.vectorMs / base.vectorMs).toFixed(2)}x empty), ` +
            `RSS then ${(best.vectorRss / 2 ** 20).toFixed(0)} MiB (${(best.vectorRss / base.vectorRss).toFixed(2)}x empty); graph store loaded at ${seconds(best.graphMs)} (${(best.graphMs / base.graphMs).toFixed(2)}x empty); ` +
            `every service SERVING at ${seconds(serving)} (${(serving / baseServing).toFixed(2)}x empty)\n`,
        );
        if (dev) {
          process.stdout.write(
            `  compiled against tsx (empty directory): listening ${seconds(best.ms)} against ${seconds(dev.ms)} (${(dev.ms / best.ms).toFixed(2)}x faster compiled)\n`,
          );
        }
        if (chunks === full) {
          const graphDir = join(dataDir, "bench-vectors");
          const built = await graphsReady(dataDir, graphDir);
          const loaded = await graphsReady(dataDir, graphDir);
          process.stdout.write(
            `  vector graphs over ${chunks} chunks ready: built ${seconds(built.ms)} (${built.built} built), ` +
              `loaded ${seconds(loaded.ms)} (${loaded.loaded} loaded, ${loaded.built} built): ${(built.ms / loaded.ms).toFixed(1)}x faster\n`,
          );
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(programs, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
