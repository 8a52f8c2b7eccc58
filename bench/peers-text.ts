/**
 * The keyword half of the peer benchmark (issue 29; `BENCH_ONLY=peers`): one corpus (bench/peers/peer-corpus.ts)
 * and one set of queries through the service over gRPC (a server process of its own, the compiled program as
 * deployed, its SQLite FTS5 keyword index) and, in the same run, LanceDB 0.31 (its native full-text index),
 * MiniSearch and Orama in this process. For each layout (1,000 equal resources; 1,000 Zipf-sized ones), scope
 * (1, 10, 100, all 1,000 resources) and query form (long natural-language, short), it prints p50/p95 and
 * nDCG@10 and R@100 (distinct documents, judged within the scope) of each engine, and the service's p50 as a
 * ratio to each peer's (below 1: the service is faster), then the server process's CPU a service call over the
 * cell (ms; what the server spends, apart from the round trip). Beside them, "adapter" is the service's own keyword
 * adapter in this process on the server's database file (the rest of the service's time is the gRPC round
 * trip and the server's layers), and "1-statement" the ranked statement the adapter ran before issue 29
 * (`rankedSearchSql`: visibility, versions and URIs for every matched row), on the same file: before and after
 * in one run. The peers are handed the scope as a filter inside their query (LanceDB and Orama `IN` filters,
 * MiniSearch's filter, which runs before its ranking); at the all-resources scope they search unfiltered.
 * LanceDB answers ids and scores only (its fastest form, the one the service is held to); "LanceDB+text" is
 * the same search answering each result's text too, as the service does (the service's 100 results carry
 * ~50 KB of text, and its time grows with the results it returns, not only with the rows it ranks).
 *
 * Then the service alone at all 1,000 equal resources while another client writes elsewhere (document
 * versions, fragments), as a ratio of the same searches with no writer (`searchWhileWriting`).
 *
 * BENCH_SCALE scales the planted corpus (1 = 20,000 documents, 200 queries; CI's 0.01 = 1,000 and 20);
 * BENCH_PEERS_PASSES (default 2) is how many timed passes each engine makes over the queries.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as lancedb from "@lancedb/lancedb";
import MiniSearch from "minisearch";
import { create as createOrama, insertMultiple, search as searchOrama, type AnyOrama } from "@orama/orama";
import { createAcmsClient, type AcmsClient } from "../src/client/create-acms-client.js";
import { Tier } from "../gen/acms/v1/tiers_pb.js";
import { generateKey, hashKey } from "../src/application/access/key-ring.js";
import { openSqliteReader } from "../src/adapters/kit/sqlite-database.js";
import { loadAcmsFts5 } from "../src/adapters/sqlite/acms-fts5-extension.js";
import {
  Fts5TextBackend,
  ONE_STATEMENT_RID_MATCH_MAX_RESOURCES,
  rankedSearchSql,
  scopedMatch,
} from "../src/adapters/sqlite/fts5-text-backend.js";
import { viewOver } from "../test/support/view-over.js";
import { compilePrograms } from "../scripts/build.mjs";
import { BenchChild } from "./bench-child.js";
import { prng } from "../test/support/prng.js";
import { percentile } from "./bench-timing.js";
import {
  gradesWithin,
  loadPeerCorpus,
  ndcgAt,
  PEER_LAYOUTS,
  PEER_RESOURCES,
  PEER_SCOPES,
  QUERY_FORMS,
  recallAt,
  scopeResources,
  type PeerCorpus,
  type PeerLayout,
  type QueryForm,
} from "./peers/peer-corpus.js";
import { REGISTER_IN_FLIGHT, registerResources } from "./peers/register-resources.js";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, "..");
const TOP_K = 100;
const UPLOAD_BATCH = 256;
/** The seed of the engines' order in each cell (see measureCell). */
const PEER_ORDER_SEED = 29;
/** UpsertDocuments streams the ingest keeps in flight. */
const UPLOAD_STREAMS = 4;

/** A scope as each engine is handed it. */
interface Scope {
  layout: PeerLayout;
  size: number;
  resources: number[];
  /** The service's scope id. */
  scopeId: string;
  /** The service's resource ids (for the in-process adapter). */
  resourceIds: string[];
}

/** One engine: ranked distinct document ids for a query within a scope. */
interface Engine {
  name: string;
  search(scope: Scope, query: string): Promise<string[]>;
}

/**
 * The server process (bench/grpc-bench-server.ts compiled, on plain node as deployed): its address, and the
 * child to ask for its CPU time and to stop.
 */
async function startService(dataDir: string, keySha: string): Promise<{ url: string; child: BenchChild }> {
  const cacheDir = join(ROOT, "node_modules", ".cache");
  mkdirSync(cacheDir, { recursive: true });
  const programs = mkdtempSync(join(cacheDir, "acms-peers-bench-"));
  await compilePrograms({ "grpc-bench-server": join(here, "grpc-bench-server.ts") }, programs);
  const { child, hello } = await BenchChild.fork(join(programs, "grpc-bench-server.mjs"), ["service", dataDir, keySha]);
  rmSync(programs, { recursive: true, force: true });
  return { url: `http://127.0.0.1:${hello.port as number}`, child };
}

/**
 * Registers the 1,000 resources of each layout and uploads the corpus over gRPC; the resource ids by layout,
 * and the seconds spent registering and uploading (each upload is acknowledged, so durable, when it ends).
 */
async function ingest(
  acms: AcmsClient,
  corpus: PeerCorpus,
): Promise<{ ids: Record<PeerLayout, string[]>; seconds: number; registerSeconds: number }> {
  const t0 = performance.now();
  let registerMs = 0;
  const ids = { equal: [] as string[], zipf: [] as string[] };
  for (const layout of PEER_LAYOUTS) {
    const project = `bench/${layout}`;
    const registering = performance.now();
    await acms.registry.createProject({ name: project });
    ids[layout] = await registerResources(PEER_RESOURCES, async (r) => {
      const { resource } = await acms.registry.registerResource({ project, alias: `r${r}`, kind: "docs", parentIds: [], metadata: {} });
      return resource!.id;
    });
    registerMs += performance.now() - registering;
    const byResource = new Map<number, PeerCorpus["documents"]>();
    for (const d of corpus.documents) {
      const list = byResource.get(d.resource[layout]) ?? [];
      list.push(d);
      byResource.set(d.resource[layout], list);
    }
    // A few streams in flight at once, as several bulk loaders would send them, each carrying the messages of
    // its share of the resources (a message names its resource: one stream may write many). A stream is
    // acknowledged, so durable, when it answers, and a stream per resource would wait on a durable sync for
    // each (most resources hold a handful of documents here).
    const resources = [...byResource];
    const streams = Array.from({ length: UPLOAD_STREAMS }, (_, k) => resources.filter((_, i) => i % UPLOAD_STREAMS === k));
    await Promise.all(
      streams.map(async (share) => {
        async function* messages() {
          for (const [r, docs] of share) {
            for (let i = 0; i < docs.length; i += UPLOAD_BATCH) {
              yield {
                resourceId: ids[layout][r],
                documents: docs.slice(i, i + UPLOAD_BATCH).map((d) => ({ path: `${d.id}.md`, content: d.text, metadata: {}, chunks: [] })),
              };
            }
          }
        }
        await acms.index.upsertDocuments(messages());
      }),
    );
  }
  return { ids, seconds: (performance.now() - t0) / 1000, registerSeconds: registerMs / 1000 };
}

function distinctDocs(paths: Iterable<string>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const id = p.replace(/\.md$/, "");
    if (!seen.has(id)) {
      seen.add(id);
      out.push(id);
    }
  }
  return out;
}

/**
 * Ingest in documents per second: the service's uploads (each stream acknowledged, so durable, and searchable
 * at once) with and without registering the resources, against LanceDB's table write (acknowledged) and
 * table with its full-text and scalar indexes (searchable), and the service/LanceDB ratios (above 1: the
 * service is faster).
 */
function printIngest(
  serviceDocs: number,
  serviceSeconds: number,
  registerSeconds: number,
  lanceDocs: number,
  lanceTableSeconds: number,
  lanceIndexedSeconds: number,
): void {
  const upload = serviceDocs / (serviceSeconds - registerSeconds);
  const whole = serviceDocs / serviceSeconds;
  const table = lanceDocs / lanceTableSeconds;
  const indexed = lanceDocs / lanceIndexedSeconds;
  process.stdout.write(
    `ingest docs/s: service uploads ${upload.toFixed(0)} (with registering ${whole.toFixed(0)}); LanceDB table ${table.toFixed(0)} (with indexes ${indexed.toFixed(0)}); ` +
      `service/LanceDB acknowledged ${(upload / table).toFixed(2)}x (with registering ${(whole / table).toFixed(2)}x), searchable ${(upload / indexed).toFixed(2)}x (${(whole / indexed).toFixed(2)}x)\n`,
  );
}

async function lanceEngine(corpus: PeerCorpus, dir: string): Promise<Engine & { tableSeconds: number; withText: Engine }> {
  const db = await lancedb.connect(dir);
  const t0 = performance.now();
  const table = await db.createTable(
    "docs",
    corpus.documents.map((d) => ({ id: d.id, text: d.text, equal: d.resource.equal, zipf: d.resource.zipf })),
  );
  const tableSeconds = (performance.now() - t0) / 1000;
  await table.createIndex("text", {
    config: lancedb.Index.fts({ withPosition: false, stem: true, lowercase: true, removeStopWords: false, asciiFolding: true }),
  });
  for (const layout of PEER_LAYOUTS) await table.createIndex(layout, { config: lancedb.Index.btree() });
  const searchColumns = (columns: string[]) => async (scope: Scope, query: string) => {
    let q = table.search(query, "fts").select(columns).limit(TOP_K);
    if (scope.size < PEER_RESOURCES)
      q = q.where(scope.size === 1 ? `${scope.layout} = ${scope.resources[0]}` : `${scope.layout} IN (${scope.resources.join(",")})`);
    const rows = (await q.toArray()) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  };
  return {
    name: "LanceDB",
    tableSeconds,
    // Ids and scores only: LanceDB at its fastest, the figure the service is held to.
    search: searchColumns(["id", "_score"]),
    // With each result's text, as the service answers (and as a retriever for RAG asks): for the record.
    withText: { name: "LanceDB+text", search: searchColumns(["id", "text", "_score"]) },
  };
}

function miniSearchEngine(corpus: PeerCorpus): Engine {
  const index = new MiniSearch<{ id: string; text: string; equal: number; zipf: number }>({
    fields: ["text"],
    storeFields: ["equal", "zipf"],
  });
  index.addAll(corpus.documents.map((d) => ({ id: d.id, text: d.text, equal: d.resource.equal, zipf: d.resource.zipf })));
  const sets = new Map<string, Set<number>>();
  return {
    name: "MiniSearch",
    async search(scope, query) {
      const key = `${scope.layout}:${scope.size}`;
      let set = sets.get(key);
      if (!set) sets.set(key, (set = new Set(scope.resources)));
      const inScope = set;
      const hits =
        scope.size < PEER_RESOURCES ? index.search(query, { filter: (r) => inScope.has(r[scope.layout] as number) }) : index.search(query);
      return hits.slice(0, TOP_K).map((h) => String(h.id));
    },
  };
}

async function oramaEngine(corpus: PeerCorpus): Promise<Engine> {
  const db: AnyOrama = createOrama({ schema: { id: "string", text: "string", equal: "enum", zipf: "enum" } as const });
  await insertMultiple(
    db,
    corpus.documents.map((d) => ({ id: d.id, text: d.text, equal: d.resource.equal, zipf: d.resource.zipf })),
    1000,
  );
  return {
    name: "Orama",
    async search(scope, query) {
      const where = scope.size < PEER_RESOURCES ? { [scope.layout]: { in: scope.resources } } : undefined;
      const res = await searchOrama(db, { term: query, properties: ["text"], limit: TOP_K, ...(where ? { where } : {}) });
      return res.hits.map((h) => String(h.document.id));
    },
  };
}

function fmt(ms: number): string {
  return ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

/** Runs the keyword peer benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const passes = Math.max(1, Number(process.env.BENCH_PEERS_PASSES ?? "2") || 2);
  const corpus = loadPeerCorpus(scale);
  const work = mkdtempSync(join(tmpdir(), "acms-peers-text-"));
  const dataDir = join(work, "data");
  mkdirSync(dataDir);
  const key = generateKey();
  const service = await startService(dataDir, hashKey(key));
  const acms = createAcmsClient({ baseUrl: service.url, apiKey: key, protocol: "grpc" });
  const reader = openSqliteReader(join(dataDir, "acms.db"));
  // The adapter in process ranks as the server does: with the view's own BM25 statistics (issue 24).
  const unavailable = loadAcmsFts5(reader);
  if (unavailable !== undefined) throw new Error(unavailable);
  try {
    process.stdout.write(`corpus: ${corpus.source}; ${PEER_RESOURCES} resources per layout; top ${TOP_K}; ${passes} timed passes\n`);
    const { ids, seconds, registerSeconds } = await ingest(acms, corpus);
    process.stdout.write(
      `service: ${2 * corpus.documents.length} documents (both layouts) uploaded over gRPC in ${seconds.toFixed(1)} s (${registerSeconds.toFixed(1)} s of it registering ${2 * PEER_RESOURCES} resources, ${REGISTER_IN_FLIGHT} calls in flight)\n`,
    );
    let t0 = performance.now();
    const lance = await lanceEngine(corpus, join(work, "lance"));
    process.stdout.write(
      `LanceDB: table written in ${lance.tableSeconds.toFixed(2)} s, table and indexes built in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
    printIngest(
      2 * corpus.documents.length,
      seconds,
      registerSeconds,
      corpus.documents.length,
      lance.tableSeconds,
      (performance.now() - t0) / 1000,
    );
    t0 = performance.now();
    const mini = miniSearchEngine(corpus);
    process.stdout.write(`MiniSearch: indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    t0 = performance.now();
    const orama = await oramaEngine(corpus);
    process.stdout.write(`Orama: indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    const adapterBackend = new Fts5TextBackend(reader);
    const serviceEngine: Engine = {
      name: "service",
      async search(scope, query) {
        const { results } = await acms.withScope(scope.scopeId).text.search({ query, maxResults: TOP_K });
        return distinctDocs(results.map((r) => r.path));
      },
    };
    // One view per scope, as the server keeps its resolved views (building one over 1,000 resources costs
    // ~0.6 ms, which the adapter's column counted in every search before).
    const adapterViews = new Map<string, ReturnType<typeof viewOver>>();
    const adapterEngine: Engine = {
      name: "adapter",
      async search(scope, query) {
        let view = adapterViews.get(scope.scopeId);
        if (view === undefined)
          adapterViews.set(
            scope.scopeId,
            (view = viewOver(scope.resourceIds, { scopeId: scope.scopeId, owner: "bench", projectNames: [`bench/${scope.layout}`] })),
          );
        const { hits } = await adapterBackend.search(view, query, { maxResults: TOP_K, now: Date.now(), recentWindowMs: 0 });
        return distinctDocs(hits.map((h) => h.path));
      },
    };
    const oneStatement = { current: [true, false].map((small) => reader.prepare(rankedSearchSql("current", small))) };
    const statementEngine: Engine = {
      name: "1-statement",
      async search(scope, query) {
        const small = scope.resourceIds.length <= ONE_STATEMENT_RID_MATCH_MAX_RESOURCES;
        const rows = oneStatement.current[small ? 0 : 1].all({
          match: scopedMatch(query, scope.resourceIds),
          rids: JSON.stringify(scope.resourceIds),
          cutoff: 0,
          limit: TOP_K + 1,
          offset: 0,
        }) as Array<{ path: string }>;
        return distinctDocs(rows.map((r) => r.path)).slice(0, TOP_K);
      },
    };
    const engines = [serviceEngine, adapterEngine, statementEngine, lance, lance.withText, mini, orama];
    const docResource = new Map(corpus.documents.map((d) => [d.id, d.resource]));

    for (const layout of PEER_LAYOUTS) {
      for (const form of QUERY_FORMS) {
        process.stdout.write(
          `\n${layout} resources, ${form} queries (${corpus.queries.length}): p50 / p95 ms, nDCG@10, R@100; service p50 / peer p50\n`,
        );
        process.stdout.write(
          `scope  ${engines.map((e) => e.name.padEnd(28)).join(" ")}  ${engines
            .slice(3)
            .map((e) => `svc/${e.name}`.padStart(15))
            .join(" ")}  server CPU/call\n`,
        );
        for (const size of PEER_SCOPES) {
          const resources = scopeResources(size);
          const resourceIds = resources.map((r) => ids[layout][r]);
          const { scope } = await acms.scope.resolveScope({ projects: [`bench/${layout}`], includeResources: resourceIds });
          const sc: Scope = { layout, size, resources, scopeId: scope!.scopeId, resourceIds };
          // The server's CPU a service call over the cell (only the service's calls reach it): the same work
          // costs it more when other engines run between its calls (docs/benchmarks.md, session 25).
          const cpuBefore = await service.child.cpuMicros();
          const row = await measureCell(engines, sc, form, corpus, passes, docResource);
          const serverCpu = ((await service.child.cpuMicros()) - cpuBefore) / 1000 / (passes * corpus.queries.length);
          // The service and its adapter must rank alike: a difference is a bug, not a figure. The pre-issue-29
          // statement is timed as a baseline only: it ranks with table-wide BM25 statistics (both layouts' rows),
          // the scope's since issue 24, so its relevance is printed, not compared.
          for (const other of [row[1]]) {
            if (Math.abs(other.ndcg - row[0].ndcg) > 1e-9 || Math.abs(other.recall - row[0].recall) > 1e-9)
              throw new Error(
                `${layout} ${form} scope ${size}: the service's relevance differs from its adapter's or the one-statement form's`,
              );
          }
          const cells = row.map((r) => `${fmt(r.p50)}/${fmt(r.p95)} ${r.ndcg.toFixed(3)} ${r.recall.toFixed(3)}`.padEnd(28));
          const ratios = row.slice(3).map((r) => `${(row[0].p50 / r.p50).toFixed(2)}x`.padStart(15));
          process.stdout.write(`${String(size).padStart(5)}  ${cells.join(" ")}  ${ratios.join(" ")}  ${fmt(serverCpu).padStart(15)}\n`);
        }
      }
    }
    await searchWhileWriting(acms, service.url, key, ids, corpus, scale);
  } finally {
    acms.close();
    reader.close();
    await service.child.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Searches a phase of `searchWhileWriting` times (the queries over and over; a tenth as many below BENCH_SCALE 0.1). */
const WRITING_PHASE_SEARCHES = 400;

/**
 * The service's keyword search at all 1,000 equal resources while another client writes to another project:
 * a new version of one document every 100 ms (each, past retention, deletes an old version's keyword rows), or
 * a fragment stored every 50 ms. p50/p95 of each phase and its ratio to the phase with no writer, in the same
 * run (a search every ~15 ms, as the peers' turns space the service's calls). Before session 22 every deleted
 * keyword row dropped every principal's held postings, and any write on the connection (a fragment, a
 * registration) every held chunk row.
 */
async function searchWhileWriting(
  acms: AcmsClient,
  url: string,
  key: string,
  ids: Record<PeerLayout, string[]>,
  corpus: PeerCorpus,
  scale: number,
): Promise<void> {
  const { scope } = await acms.scope.resolveScope({ projects: ["bench/equal"], includeResources: ids.equal });
  const { scope: other } = await acms.scope.resolveScope({ projects: ["bench/zipf"] });
  const searcher = acms.withScope(scope!.scopeId);
  const writer = createAcmsClient({ baseUrl: url, apiKey: key, protocol: "grpc" });
  const target = ids.zipf[ids.zipf.length - 1];
  const n = scale < 0.1 ? WRITING_PHASE_SEARCHES / 10 : WRITING_PHASE_SEARCHES;
  const writers: Array<[string, number, ((i: number) => Promise<unknown>) | undefined]> = [
    ["no writer", 0, undefined],
    [
      "a new version of one document every 100 ms",
      100,
      (i) =>
        writer.index.upsertDocuments(
          (async function* () {
            yield {
              resourceId: target,
              documents: [
                {
                  path: "while-writing.md",
                  content: `version ${i} ${corpus.documents[i % corpus.documents.length].text}`,
                  metadata: {},
                  chunks: [],
                },
              ],
            };
          })(),
        ),
    ],
    [
      "a fragment stored every 50 ms",
      50,
      (i) =>
        writer
          .withScope(other!.scopeId)
          .tiers.storeFragment({ fragment: { content: `note ${i}`, tier: Tier.HOT, projectName: "bench/zipf" } }),
    ],
  ];
  try {
    for (const form of QUERY_FORMS) {
      process.stdout.write(
        `\nsearching all 1,000 equal resources (${form} queries) while another client writes elsewhere: p50 / p95 ms, p50 / the no-writer phase's\n`,
      );
      let idle = NaN;
      for (const [name, everyMs, write] of writers) {
        let stop = false;
        let writes = 0;
        const writing = (async () => {
          while (write && !stop) {
            await new Promise((r) => setTimeout(r, everyMs));
            if (!stop) await write(writes++);
          }
        })();
        const times: number[] = [];
        for (let i = 0; i < n; i++) {
          await new Promise((r) => setTimeout(r, 15));
          const q = corpus.queries[i % corpus.queries.length][form];
          const t0 = performance.now();
          await searcher.text.search({ query: q, maxResults: TOP_K });
          times.push(performance.now() - t0);
        }
        stop = true;
        await writing;
        const p50 = percentile(times, 0.5);
        if (write === undefined) idle = p50;
        process.stdout.write(
          `  ${name.padEnd(46)} ${fmt(p50)} / ${fmt(percentile(times, 0.95))}  ${(p50 / idle).toFixed(2)}x${writes > 0 ? `  (${writes} writes)` : ""}\n`,
        );
      }
    }
  } finally {
    writer.close();
  }
}

interface Cell {
  p50: number;
  p95: number;
  ndcg: number;
  recall: number;
}

/** Every engine over the queries in one scope and form: latencies over `passes` passes (interleaved), relevance from the first. */
async function measureCell(
  engines: Engine[],
  scope: Scope,
  form: QueryForm,
  corpus: PeerCorpus,
  passes: number,
  docResource: Map<string, Record<PeerLayout, number>>,
): Promise<Cell[]> {
  const inScope = new Set(scope.resources);
  const judged = corpus.queries.map((q) => gradesWithin(q.grades, (id) => inScope.has(docResource.get(id)![scope.layout])));
  const times = engines.map(() => [] as number[]);
  const quality = engines.map(() => ({ ndcg: 0, recall: 0, n: 0 }));
  // Engines interleaved query by query, so a busy moment of a shared machine falls on all alike, in a fresh
  // random order for each query (seeded: the same orders every run), so each engine follows each other
  // equally often. An engine pays for the garbage collection of the JS engines that ran before it in this
  // process (MiniSearch and Orama allocate the most): the rotation used before (i + k) put the service after
  // one of them on every query (see docs/benchmarks.md, session 18).
  const rand = prng(PEER_ORDER_SEED);
  const order = engines.map((_, e) => e);
  for (let pass = 0; pass < passes; pass++) {
    for (const [i, q] of corpus.queries.entries()) {
      for (let k = order.length - 1; k > 0; k--) {
        const j = Math.floor(rand() * (k + 1));
        [order[k], order[j]] = [order[j], order[k]];
      }
      for (const e of order) {
        const t0 = performance.now();
        const ranked = await engines[e].search(scope, q[form]);
        times[e].push(performance.now() - t0);
        if (pass === 0 && judged[i].size > 0) {
          quality[e].ndcg += ndcgAt(10, ranked, judged[i]);
          quality[e].recall += recallAt(TOP_K, ranked, judged[i]);
          quality[e].n += 1;
        }
      }
    }
  }
  return engines.map((_, e) => ({
    p50: percentile(times[e], 0.5),
    p95: percentile(times[e], 0.95),
    ndcg: quality[e].n > 0 ? quality[e].ndcg / quality[e].n : NaN,
    recall: quality[e].n > 0 ? quality[e].recall / quality[e].n : NaN,
  }));
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
