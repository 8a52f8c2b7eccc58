/**
 * gRPC benchmark: the whole service (auth, scope, field checks, search, hydration, framing) against a
 * plain @grpc/grpc-js server answering the same FTS5 query on the same SQLite file, each in its own
 * process, driven by a grpc-js load generator in a third process. At concurrency 1, 16 and 64 it prints
 * throughput, p50 and p99 latency and server CPU per call (the server process's own cpuUsage), medians of
 * repeated runs alternating between the two servers, and the service/plain ratios: Search on a 1-resource
 * scope against the plain statement, Health Check against a plain trivial handler. Then SearchStream of
 * 1,000 results (first-result latency, results/s) against the unary Search of the same 1,000, and the tier
 * RPCs (GetFragment, StoreFragment, GetMetrics, GetForActor) through gRPC against the same calls in process
 * at the same concurrency, and against the plain trivial handler and Health through the service.
 * BENCH_SCALE (default 1) scales the corpus (20,000 chunks) and the calls per run;
 * BENCH_GRPC_CPU_PROF=DIR writes a V8 CPU profile of the service process to DIR; BENCH_GRPC_PARTS picks some of
 * `search,health,stream,tiers` (default all; `tiers` needs the Health figures it compares with, so it runs `health`
 * too), e.g. to profile one kind of call alone.
 * The three child processes run JavaScript compiled by esbuild as `npm run build` compiles the server
 * (no tsx: its keep-names wrapper defines a `name` on every closure the service creates per call).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { SearchRequestSchema, SearchStreamRequestSchema } from "../gen/acms/v1/text_pb.js";
import {
  ContextTierService,
  GetForActorRequestSchema,
  GetFragmentRequestSchema,
  GetMetricsRequestSchema,
  Role,
  StoreFragmentRequestSchema,
  Tier,
} from "../gen/acms/v1/tiers_pb.js";
import { HealthCheckRequestSchema } from "../gen/grpc/health/v1/health_pb.js";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteRegistryStore } from "../src/adapters/sqlite/sqlite-registry-store.js";
import { SqliteFileTierStore } from "../src/adapters/sqlite/sqlite-file-tier-store.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { generateKey, hashKey } from "../src/application/access/key-ring.js";
import { TierService } from "../src/application/tiers/tier-service.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { BenchChild } from "./bench-child.js";
import { compilePrograms } from "../scripts/build.mjs";
import { median } from "./bench-timing.js";
import type { LoadJob, LoadResult } from "./grpc-load-generator.js";
import { syntheticWord, zipfRank } from "./synthetic-corpus.js";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, "..");
const CHUNKS_PER_RESOURCE = 50;
const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const ROUNDS = 3;
const CONCURRENCIES = [1, 16, 64];
const STREAM_RESULTS = 1000;
/** Callers of the tier runs (one of CONCURRENCIES, so the plain and Health figures of that concurrency compare). */
const TIER_CONCURRENCY = 16;

/**
 * Compiles the bench's child programs (`name.ts` in bench/) into `outDir` with esbuild, bundled the way
 * scripts/build.mjs bundles the server: the bench measures the compiled service, as deployed, not tsx.
 * `outDir` is under the repository, so the packages left as imports resolve from its node_modules.
 */
async function compileChildren(outDir: string, names: string[]): Promise<void> {
  await compilePrograms(Object.fromEntries(names.map((n) => [n, join(here, `${n}.ts`)])), outDir);
}

/** A server child: its address and its own CPU clock. */
class ServerProcess {
  constructor(
    readonly child: BenchChild,
    readonly address: string,
  ) {}

  static async start(programs: string, args: string[], execArgv: string[] = []): Promise<ServerProcess> {
    const { child, hello } = await BenchChild.fork(join(programs, "grpc-bench-server.mjs"), args, execArgv);
    return new ServerProcess(child, `127.0.0.1:${hello.port as number}`);
  }

  cpuMicros(): Promise<number> {
    return this.child.cpuMicros();
  }
}

interface Measured extends LoadResult {
  /** Server CPU per call, µs. */
  cpuPerCall: number;
}

function bytes<D extends DescMessage>(schema: D, init: MessageInitShape<D>): string {
  return Buffer.from(toBinary(schema, create(schema, init))).toString("base64");
}

async function measure(load: BenchChild, server: ServerProcess, job: Omit<LoadJob, "address">): Promise<Measured> {
  const before = await server.cpuMicros();
  const answer = await load.ask({ job: { ...job, address: server.address } });
  const after = await server.cpuMicros();
  if (answer.error) throw new Error(String(answer.error));
  const result = answer.result as LoadResult;
  if (result.errors > 0) throw new Error(`${result.errors} calls of ${job.path} failed`);
  return { ...result, cpuPerCall: (after - before) / (job.calls + job.warmup) };
}

function medianOf(runs: Measured[]): Measured {
  const pick = (f: (m: Measured) => number) => median(runs.map(f));
  return {
    callsPerSecond: pick((m) => m.callsPerSecond),
    p50: pick((m) => m.p50),
    p99: pick((m) => m.p99),
    cpuPerCall: pick((m) => m.cpuPerCall),
    errors: 0,
  };
}

function row(label: string, m: Measured): string {
  return `${label.padEnd(8)} ${Math.round(m.callsPerSecond).toString().padStart(7)}/s  p50 ${m.p50.toFixed(2).padStart(6)} ms  p99 ${m.p99.toFixed(2).padStart(6)} ms  cpu ${Math.round(m.cpuPerCall).toString().padStart(5)} µs/call`;
}

/** Service against plain at every concurrency; prints both and the ratios, returns the throughput ratios. */
async function compare(
  title: string,
  load: BenchChild,
  service: ServerProcess,
  plain: ServerProcess,
  serviceJob: Omit<LoadJob, "address" | "concurrency" | "calls" | "warmup">,
  plainJob: Omit<LoadJob, "address" | "concurrency" | "calls" | "warmup">,
  calls: number,
): Promise<{ ratios: number[]; plain: Measured[]; service: Measured[] }> {
  process.stdout.write(`${title}\n`);
  const ratios: number[] = [];
  const plainRuns: Measured[] = [];
  const serviceRuns: Measured[] = [];
  for (const concurrency of CONCURRENCIES) {
    const sizes = { concurrency, calls, warmup: Math.max(50, Math.round(calls / 4)) };
    const s: Measured[] = [];
    const p: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      s.push(await measure(load, service, { ...serviceJob, ...sizes }));
      p.push(await measure(load, plain, { ...plainJob, ...sizes }));
    }
    const sm = medianOf(s);
    const pm = medianOf(p);
    ratios.push(sm.callsPerSecond / pm.callsPerSecond);
    plainRuns.push(pm);
    serviceRuns.push(sm);
    process.stdout.write(
      `  concurrency ${concurrency}\n    ${row("service", sm)}\n    ${row("plain", pm)}\n` +
        `    service/plain: throughput ${(sm.callsPerSecond / pm.callsPerSecond).toFixed(2)}x, ` +
        `p50 ${(sm.p50 / pm.p50).toFixed(2)}x, p99 ${(sm.p99 / pm.p99).toFixed(2)}x, cpu per call ${(sm.cpuPerCall / pm.cpuPerCall).toFixed(2)}x\n`,
    );
  }
  return { ratios, plain: plainRuns, service: serviceRuns };
}

function bearer(key: string, scopeId?: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

/** Writes the corpus straight into the data directory's SQLite file (as the server would store it). */
async function buildCorpus(dataDir: string, resources: number): Promise<{ all: string[]; one: string }> {
  const db = openSqliteDatabase(join(dataDir, "acms.db"));
  const registry = new SqliteRegistryStore(db);
  const documents = new SqliteDocumentStore(db);
  await registry.createProject("bench/all");
  await registry.createProject("bench/one");
  const rand = prng(42);
  const all: string[] = [];
  for (let r = 0; r < resources; r++) {
    const id = newUlid();
    all.push(id);
    await registry.registerResource({ id, project: "bench/all", alias: `r${r}`, kind: "docs", parentIds: [], metadata: {} });
    const docs = [];
    for (let d = 0; d < CHUNKS_PER_RESOURCE; d++) {
      const words: string[] = [];
      for (let w = 0; w < WORDS_PER_CHUNK; w++) words.push(syntheticWord(zipfRank(rand, VOCABULARY)));
      const text = words.join(" ");
      docs.push({ path: `docs/${d}.md`, content: text, metadata: { n: String(d), kind: "note" }, chunks: [{ text }] });
    }
    await documents.upsertDocuments(id, docs, Date.now());
  }
  await registry.linkResource({ project: "bench/one", resourceId: all[0], alias: "only" });
  db.close();
  return { all, one: all[0] };
}

/** The tier RPCs the bench drives, in process and through gRPC. */
const TIER_OPS = ["get", "store", "metrics", "view"] as const;
type TierOp = (typeof TIER_OPS)[number];
const TIER_RPC: Record<TierOp, string> = { get: "GetFragment", store: "StoreFragment", metrics: "GetMetrics", view: "GetForActor" };
/** The fragment every tier call reads (stored before any is timed), and the one StoreFragment replaces. */
const TIER_FRAGMENT = { id: "f", content: "the plan", project: "bench/one" };
const TIER_STORED = "s";

/** `n` calls of `op` with at most `concurrency` in flight; calls per second. */
async function callsPerSecond(n: number, concurrency: number, op: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next += 1;
      await op();
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return n / ((performance.now() - t0) / 1000);
}

/**
 * The tier calls in process over the durable embedded store (SQLite written through plus cold files), the
 * same calls the gRPC runs make, at `concurrency` callers: calls per second of each, medians of ROUNDS.
 * `calls(op)` is the number of calls per run.
 */
async function tierInProcess(calls: (op: TierOp) => number, concurrency: number): Promise<Record<TierOp, number>> {
  const dir = mkdtempSync(join(tmpdir(), "acms-grpc-bench-tiers-"));
  const db = openSqliteDatabase(join(dir, "acms.db"));
  try {
    const tiers = await TierService.open(new SqliteFileTierStore(db, join(dir, "cold")), {
      budgets: { maxTokensHot: 100_000_000, maxDecisionsWarm: 1_000_000, maxDecisionsCold: 1_000_000 },
      summaryTokens: 32,
    });
    const view = viewOver([], { scopeId: newUlid(), owner: "bench", projectNames: [TIER_FRAGMENT.project], createdAt: new Date() });
    const store = (id: string) =>
      tiers.storeFragment(view, {
        id,
        content: TIER_FRAGMENT.content,
        tier: undefined,
        projectName: TIER_FRAGMENT.project,
        resourceId: "",
        metadata: {},
      });
    await store(TIER_FRAGMENT.id);
    const ops: Record<TierOp, () => Promise<unknown>> = {
      get: () => tiers.getFragment(view, TIER_FRAGMENT.id),
      store: () => store(TIER_STORED),
      metrics: () => tiers.getMetrics(view),
      view: () => tiers.getForActor(view, "reviewer", [], false),
    };
    const rates = {} as Record<TierOp, number>;
    for (const op of TIER_OPS) {
      await callsPerSecond(op === "store" ? 10 : calls(op), concurrency, ops[op]);
      const runs: number[] = [];
      for (let round = 0; round < ROUNDS; round++) runs.push(await callsPerSecond(calls(op), concurrency, ops[op]));
      rates[op] = median(runs);
    }
    await tiers.close();
    return rates;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the gRPC benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const resources = Math.max(40, Math.round(400 * scale));
  const calls = Math.max(300, Math.round(3000 * scale));
  const parts = new Set((process.env.BENCH_GRPC_PARTS ?? "search,health,stream,tiers").split(",").map((p) => p.trim()));
  if (parts.has("tiers")) parts.add("health");
  const dataDir = mkdtempSync(join(tmpdir(), "acms-grpc-bench-"));
  const cacheDir = join(ROOT, "node_modules", ".cache");
  mkdirSync(cacheDir, { recursive: true });
  const programs = mkdtempSync(join(cacheDir, "acms-grpc-bench-"));
  const started: Array<{ stop(): Promise<void> }> = [];
  let sessionManager: Http2SessionManager | undefined;
  try {
    await compileChildren(programs, ["grpc-bench-server", "grpc-load-generator"]);
    const t0 = performance.now();
    const { all, one } = await buildCorpus(dataDir, resources);
    process.stdout.write(
      `corpus: ${resources * CHUNKS_PER_RESOURCE} chunks in ${resources} resources (${((performance.now() - t0) / 1000).toFixed(1)} s); ${calls} calls per run, medians of ${ROUNDS} runs\n`,
    );

    const key = generateKey();
    const profileDir = process.env.BENCH_GRPC_CPU_PROF;
    const service = await ServerProcess.start(
      programs,
      ["service", dataDir, hashKey(key)],
      profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    );
    started.push(service.child);
    const plain = await ServerProcess.start(programs, ["plain", join(dataDir, "acms.db"), one]);
    started.push(plain.child);
    const { child: load } = await BenchChild.fork(join(programs, "grpc-load-generator.mjs"), []);
    started.push(load);

    sessionManager = new Http2SessionManager(`http://${service.address}`);
    const transport = (scopeId?: string) =>
      createGrpcTransport({ baseUrl: `http://${service.address}`, sessionManager, interceptors: [bearer(key, scopeId)] });
    const scopes = createClient(ScopeService, transport());
    const oneScope = (await scopes.resolveScope({ projects: ["bench/one"] })).scope!.scopeId;
    const allScope = (await scopes.resolveScope({ projects: ["bench/all"] })).scope!.scopeId;
    await createClient(ContextTierService, transport(oneScope)).storeFragment({
      fragment: { fragmentId: TIER_FRAGMENT.id, content: TIER_FRAGMENT.content, projectName: TIER_FRAGMENT.project, tier: Tier.HOT },
    });
    sessionManager.abort();

    const query = `${syntheticWord(3)} ${syntheticWord(40)} ${syntheticWord(300)}`;
    const searchPath = "/acms.v1.TextBackendService/Search";
    const search = bytes(SearchRequestSchema, { query, maxResults: 20 });
    const auth = { authorization: `Bearer ${key}`, "acms-scope": oneScope };
    const searchRatios = !parts.has("search")
      ? undefined
      : (
          await compare(
            `Search, 1-resource scope (${CHUNKS_PER_RESOURCE} chunks), "${query}", 20 results`,
            load,
            service,
            plain,
            { kind: "unary", path: searchPath, request: search, metadata: auth },
            { kind: "unary", path: searchPath, request: search, metadata: {} },
            calls,
          )
        ).ratios;
    const healthPath = "/grpc.health.v1.Health/Check";
    const health = bytes(HealthCheckRequestSchema, { service: "" });
    const healthRun = !parts.has("health")
      ? undefined
      : await compare(
          "Health Check",
          load,
          service,
          plain,
          { kind: "unary", path: healthPath, request: health, metadata: {} },
          { kind: "unary", path: healthPath, request: health, metadata: {} },
          calls * 2,
        );

    if (parts.has("stream")) {
      const streamQuery = `${syntheticWord(0)} ${syntheticWord(1)} ${syntheticWord(2)}`;
      const allAuth = { authorization: `Bearer ${key}`, "acms-scope": allScope };
      const streamCalls = Math.max(10, Math.round(40 * scale));
      const sizes = { concurrency: 1, calls: streamCalls, warmup: 5 };
      const unaryRuns: Measured[] = [];
      const streamRuns: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        unaryRuns.push(
          await measure(load, service, {
            kind: "unary",
            path: searchPath,
            request: bytes(SearchRequestSchema, { query: streamQuery, maxResults: STREAM_RESULTS }),
            metadata: allAuth,
            ...sizes,
          }),
        );
        streamRuns.push(
          await measure(load, service, {
            kind: "stream",
            path: "/acms.v1.TextBackendService/SearchStream",
            request: bytes(SearchStreamRequestSchema, { query: streamQuery, maxResults: STREAM_RESULTS }),
            metadata: allAuth,
            ...sizes,
          }),
        );
      }
      const unary = medianOf(unaryRuns);
      const stream = { ...medianOf(streamRuns), firstP50: median(streamRuns.map((r) => r.firstP50!)), messages: streamRuns[0].messages! };
      process.stdout.write(
        `SearchStream of ${stream.messages} results (scope of ${resources} resources), one caller\n` +
          `  unary Search: ${unary.p50.toFixed(2)} ms p50 for the whole answer (${Math.round((STREAM_RESULTS * 1000) / unary.p50)} results/s)\n` +
          `  SearchStream: first result ${stream.firstP50.toFixed(2)} ms p50 (${(stream.firstP50 / unary.p50).toFixed(2)}x the unary answer), ` +
          `last ${stream.p50.toFixed(2)} ms p50 (${Math.round((stream.messages * 1000) / stream.p50)} results/s, ${(unary.p50 / stream.p50).toFixed(2)}x unary's rate)\n`,
      );
    }

    /** GetFragment at TIER_CONCURRENCY through gRPC, against in process and against the plain trivial handler. */
    let tierGet: { inProcess: number; plain: number } | undefined;
    if (healthRun && parts.has("tiers")) {
      const { plain: plainHealth, service: serviceHealth } = healthRun;
      // GetFragment at TIER_CONCURRENCY is the headline figure (the most calls); the others are smaller, a store being an fsync.
      const tierCalls = (op: TierOp, concurrency = TIER_CONCURRENCY) =>
        op === "get" && concurrency === TIER_CONCURRENCY
          ? calls * 2
          : op === "store"
            ? Math.max(60, Math.round(calls / 5))
            : Math.max(150, Math.round(calls / 2));
      const tierRequests: Record<TierOp, string> = {
        get: bytes(GetFragmentRequestSchema, { fragmentId: TIER_FRAGMENT.id }),
        store: bytes(StoreFragmentRequestSchema, {
          fragment: { fragmentId: TIER_STORED, content: TIER_FRAGMENT.content, projectName: TIER_FRAGMENT.project, tier: Tier.HOT },
        }),
        metrics: bytes(GetMetricsRequestSchema, {}),
        view: bytes(GetForActorRequestSchema, { role: Role.REVIEWER }),
      };
      const tierOverGrpc = async (op: TierOp, concurrency: number): Promise<Measured> => {
        const runs: Measured[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          runs.push(
            await measure(load, service, {
              kind: "unary",
              path: `/acms.v1.ContextTierService/${TIER_RPC[op]}`,
              request: tierRequests[op],
              metadata: auth,
              concurrency,
              calls: tierCalls(op, concurrency),
              warmup: op === "store" ? 20 : Math.max(100, Math.round(tierCalls(op, concurrency) / 4)),
            }),
          );
        }
        return medianOf(runs);
      };
      // In process a read costs microseconds: as many calls as the headline run, so the rate is not a timer's noise.
      const inProcessCalls = (op: TierOp) => (op === "store" ? tierCalls(op) : calls * 2);
      const inProcessOne = await tierInProcess(inProcessCalls, 1);
      const inProcessMany = await tierInProcess(inProcessCalls, TIER_CONCURRENCY);
      const at = CONCURRENCIES.indexOf(TIER_CONCURRENCY);
      const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
      process.stdout.write(
        `Tier RPCs: in process (durable embedded store, no wire) and through gRPC (the load generator's process), calls/s; ` +
          `a plain grpc-js trivial handler does ${Math.round(plainHealth[at].callsPerSecond)}/s and Health through the service ` +
          `${Math.round(serviceHealth[at].callsPerSecond)}/s (cpu ${Math.round(serviceHealth[at].cpuPerCall)} µs/call) at ${TIER_CONCURRENCY} callers\n`,
      );
      const getOne = await tierOverGrpc("get", 1);
      process.stdout.write(
        `  GetFragment, 1 caller: in process ${Math.round(inProcessOne.get)}/s; gRPC ${row("", getOne).trim()}: ${ratio(getOne.callsPerSecond, inProcessOne.get)} in process\n`,
      );
      for (const op of TIER_OPS) {
        const m = await tierOverGrpc(op, TIER_CONCURRENCY);
        if (op === "get")
          tierGet = { inProcess: m.callsPerSecond / inProcessMany.get, plain: m.callsPerSecond / plainHealth[at].callsPerSecond };
        process.stdout.write(
          `  ${TIER_RPC[op].padEnd(13)} ${TIER_CONCURRENCY} callers: in process ${Math.round(inProcessMany[op])}/s (1 caller ${Math.round(inProcessOne[op])}/s); ` +
            `gRPC ${row("", m).trim()}: ${ratio(m.callsPerSecond, inProcessMany[op])} in process, ` +
            `${ratio(m.callsPerSecond, plainHealth[at].callsPerSecond)} the plain trivial handler, ${ratio(m.callsPerSecond, serviceHealth[at].callsPerSecond)} Health through the service, ` +
            `cpu ${ratio(m.cpuPerCall, serviceHealth[at].cpuPerCall)} Health's\n`,
        );
      }
    }
    const fmt = (rs: number[]) => rs.map((r) => r.toFixed(2)).join(" / ");
    const summary = [searchRatios ? `Search ${fmt(searchRatios)}` : "", healthRun ? `Health ${fmt(healthRun.ratios)}` : ""].filter(Boolean);
    if (summary.length > 0)
      process.stdout.write(`summary: service/plain throughput at concurrency ${CONCURRENCIES.join(" / ")}: ${summary.join(", ")}\n`);
    if (tierGet) {
      process.stdout.write(
        `summary: tier GetFragment through gRPC at ${TIER_CONCURRENCY} callers: ${tierGet.inProcess.toFixed(2)}x in process, ${tierGet.plain.toFixed(2)}x the plain trivial handler\n`,
      );
    }
  } finally {
    sessionManager?.abort();
    for (const c of started.reverse()) await c.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(programs, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
