/**
 * Vector benchmark: the embedded vector backend in its automatic mode (exact scans for small scopes,
 * int8 scans and HNSW graphs with over-fetch and exact re-scoring past them) against a pure exact scan
 * of the same data in the same run: recall@10 and latency per scope size, as ratios. It also measures,
 * per partition size, an exact float32 scan, an int8 scan and a graph search (the basis of
 * EXACT_SCAN_THRESHOLD and PARTITION_GRAPH_MIN_ROWS).
 *
 * Data: BENCH_SCALE x 100,000 vectors of 384 dimensions drawn around 256 cluster centres (deterministic
 * PRNG), spread over 1,000 resources with Zipf sizes (a few large repositories, many small ones), and
 * queries drawn near random stored vectors. Scopes: the largest resource, the 10 and 100 largest, all 1,000.
 * Each scope prints p50 and p95 of the exact scan and of the service (three passes over the queries), and the service's recall@10, and
 * the load average (the figures are ratios measured in the same run, on 2 shared cores).
 */
import { loadavg } from "node:os";
import {
  EXACT_SCAN_THRESHOLD,
  PARTITION_GRAPH_MIN_ROWS,
  PartitionedVectorBackend,
  STORE_GRAPH_MIN_SHARE,
} from "../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry, VectorSearchOptions } from "../src/ports/vector-backend.js";
import { gaussian, prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { formatMs as fmt, median, percentile } from "./bench-timing.js";

const DIM = 384;
const RESOURCES = 1000;
const CLUSTERS = 256;
/** How many times the service answers each query (its p50 and p95 are over all of them). */
const SERVICE_PASSES = 3;

function resourceId(i: number): string {
  return `01JBENCH${String(i).padStart(18, "0")}`;
}

/** Zipf(1) sizes summing to `total`, every resource holding at least one vector. */
function zipfSizes(total: number, count: number): number[] {
  const h = Array.from({ length: count }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
  const sizes = Array.from({ length: count }, (_, i) => Math.max(1, Math.floor(total / (i + 1) / h)));
  let missing = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; missing > 0; i = (i + 1) % count, missing--) sizes[i] += 1;
  return sizes;
}

/** Random unit-free rows of one partition, for the threshold measurement. */
function rows(count: number, rnd: () => number, resource: string, firstKey: number): VectorEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    chunkKey: firstKey + i,
    resourceId: resource,
    path: "p.md",
    supersededAt: null,
    vector: Float32Array.from({ length: DIM }, () => gaussian(rnd)),
  }));
}

const benchView = (resourceIds: string[]) =>
  viewOver(resourceIds, { scopeId: "01JBENCHSCOPE0000000000000", owner: "bench", projectNames: ["bench/vectors"] });

/** Runs the vector benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const total = Math.max(2000, Math.round(100_000 * scale));
  const queryCount = Math.max(40, Math.round(100 * Math.min(1, scale * 4)));
  const rnd = prng(2024);

  const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: DIM }, () => gaussian(rnd)));
  const sizes = zipfSizes(total, RESOURCES);
  const entries: VectorEntry[] = [];
  let key = 1;
  sizes.forEach((size, r) => {
    // Each resource draws from a handful of topics, as a repository covers a few subjects.
    const topics = Array.from({ length: 4 }, () => centres[Math.floor(rnd() * CLUSTERS)]);
    for (let i = 0; i < size; i++) {
      const c = rnd() < 0.8 ? topics[Math.floor(rnd() * topics.length)] : centres[Math.floor(rnd() * CLUSTERS)];
      entries.push({
        chunkKey: key++,
        resourceId: resourceId(r),
        path: `docs/${i % 50}.md`,
        supersededAt: null,
        vector: Float32Array.from(c, (x) => x + 0.9 * gaussian(rnd)),
      });
    }
  });
  const queries = Array.from({ length: queryCount }, () => {
    const base = entries[Math.floor(rnd() * entries.length)].vector;
    return Float32Array.from(base, (x) => x + 0.6 * gaussian(rnd));
  });

  const exact = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: Number.MAX_SAFE_INTEGER });
  // BENCH_VECTOR_GRAPH_DIR keeps the service's graphs between runs (as a server's data directory does):
  // the first run builds and saves them, later ones over the same data load them.
  const graphDir = process.env.BENCH_VECTOR_GRAPH_DIR || undefined;
  const service = new PartitionedVectorBackend({ dimension: DIM, graphDir });
  let t0 = performance.now();
  exact.replaceAll(entries);
  const loadMs = performance.now() - t0;
  t0 = performance.now();
  service.replaceAll(entries);
  await service.whenIndexed();
  const serviceLoadMs = performance.now() - t0;
  const indexedRows = sizes.filter((s) => s >= PARTITION_GRAPH_MIN_ROWS).reduce((a, b) => a + b, 0);
  process.stdout.write(
    `data: ${total} vectors x ${DIM} dims, ${RESOURCES} resources (Zipf sizes ${sizes[0]} .. ${sizes[RESOURCES - 1]}), ${queryCount} queries\n` +
      `load: exact ${fmt(loadMs)}; service ${fmt(serviceLoadMs)} (${(serviceLoadMs / loadMs).toFixed(1)}x; graphs ${service.graphCounts.loaded} loaded from ${graphDir ?? "-"}, ${service.graphCounts.built} built), building in the background HNSW graphs over ${indexedRows} rows in partitions >= ${PARTITION_GRAPH_MIN_ROWS} rows (smaller ones get int8 scans past ${EXACT_SCAN_THRESHOLD} in-scope rows) and a store-wide graph over all ${total} (used by scopes holding >= ${STORE_GRAPH_MIN_SHARE * 100}% of the store); cells: ${service.cellStats ? `${service.cellStats.cells} over ${service.cellStats.rows} rows, ${service.cellStats.probes} read a search` : "none"}\n`,
  );

  const opts: VectorSearchOptions = { topK: 10, minScore: 0, now: Date.now(), recentWindowMs: 0 };
  const scopes: Array<[string, string[]]> = [
    ["1 resource (the largest)", [resourceId(0)]],
    ["10 resources (the largest)", Array.from({ length: 10 }, (_, i) => resourceId(i))],
    ["100 resources (the largest)", Array.from({ length: 100 }, (_, i) => resourceId(i))],
    [`${RESOURCES} resources (all)`, Array.from({ length: RESOURCES }, (_, i) => resourceId(i))],
  ];
  process.stdout.write(
    "scope                          in-scope  exact p50   exact p95   service p50  service p95  recall@10  p50 speed-up  approximate\n",
  );
  for (const [label, ids] of scopes) {
    const view = benchView(ids);
    const inScope = ids.reduce((a, id) => a + sizes[Number(id.slice(8))], 0);
    for (const q of queries.slice(0, 5)) {
      await exact.search(view, q, opts);
      await service.search(view, q, opts);
    }
    // The exact answers first (the truth, and the exact scan's times), then the service's searches back
    // to back: interleaved, each exact scan (tens of MB) left the caches cold for the search after it.
    const exactMs: number[] = [];
    const truths: Set<number>[] = [];
    for (const q of queries) {
      const s = performance.now();
      const truth = await exact.search(view, q, opts);
      exactMs.push(performance.now() - s);
      truths.push(new Set(truth.hits.map((h) => h.chunkKey)));
    }
    // Three passes over the queries (each a different moment of this shared machine), recall from the first.
    const serviceMs: number[] = [];
    let found = 0;
    let wanted = 0;
    let approximate = 0;
    for (let pass = 0; pass < SERVICE_PASSES; pass++) {
      for (const [i, q] of queries.entries()) {
        const s = performance.now();
        const got = await service.search(view, q, opts);
        serviceMs.push(performance.now() - s);
        if (pass > 0) continue;
        if (!got.exhaustive) approximate += 1;
        wanted += truths[i].size;
        found += got.hits.filter((h) => truths[i].has(h.chunkKey)).length;
      }
    }
    process.stdout.write(
      `${label.padEnd(30)} ${String(inScope).padStart(8)}  ${fmt(median(exactMs)).padStart(9)}  ${fmt(percentile(exactMs, 0.95)).padStart(10)}  ${fmt(median(serviceMs)).padStart(11)}  ${fmt(percentile(serviceMs, 0.95)).padStart(11)}  ${(found / Math.max(1, wanted)).toFixed(3).padStart(9)}  ${(median(exactMs) / median(serviceMs)).toFixed(1).padStart(11)}x  ${String(approximate).padStart(5)}/${queries.length}  load ${loadavg()[0].toFixed(1)}\n`,
    );
  }
  await exact.close();
  await service.close();

  process.stdout.write(
    `threshold: one partition, top_k 20, exact float32 scan vs int8 scan vs HNSW graph (EXACT_SCAN_THRESHOLD = ${EXACT_SCAN_THRESHOLD}, PARTITION_GRAPH_MIN_ROWS = ${PARTITION_GRAPH_MIN_ROWS})\n`,
  );
  const trnd = prng(7);
  const probe = Array.from({ length: 100 }, () => Float32Array.from({ length: DIM }, () => gaussian(trnd)));
  const topK20: VectorSearchOptions = { topK: 20, minScore: 0, now: 0, recentWindowMs: 0 };
  for (const size of [256, 1024, 4096, ...(scale >= 0.5 ? [16384] : [])]) {
    const data = rows(size, trnd, resourceId(0), 1);
    const scan = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: Number.MAX_SAFE_INTEGER });
    const int8 = new PartitionedVectorBackend({
      dimension: DIM,
      exactThreshold: 0,
      graphMinRows: Number.MAX_SAFE_INTEGER,
      storeGraph: false,
    });
    const graph = new PartitionedVectorBackend({ dimension: DIM, exactThreshold: 0, storeGraph: false });
    scan.replaceAll(data);
    int8.replaceAll(data);
    graph.replaceAll(data);
    await graph.whenIndexed();
    const view = benchView([resourceId(0)]);
    const time = async (b: PartitionedVectorBackend) => {
      for (const q of probe.slice(0, 10)) await b.search(view, q, topK20);
      const s = performance.now();
      for (const q of probe) await b.search(view, q, topK20);
      return (performance.now() - s) / probe.length;
    };
    const scanMs = await time(scan);
    const int8Ms = await time(int8);
    const graphMs = await time(graph);
    process.stdout.write(
      `  ${String(size).padStart(5)} rows: exact ${fmt(scanMs).padStart(8)}, int8 ${fmt(int8Ms).padStart(8)}, graph ${fmt(graphMs).padStart(8)}; exact/int8 ${(scanMs / int8Ms).toFixed(2)}, graph/int8 ${(graphMs / int8Ms).toFixed(2)}\n`,
    );
    await scan.close();
    await int8.close();
    await graph.close();
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await run();
