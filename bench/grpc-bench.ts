/**
 * gRPC benchmark: the whole service (auth, scope, field checks, search, hydration, framing) against a
 * plain @grpc/grpc-js server answering the same FTS5 query on the same SQLite file, each in its own
 * process, driven by a grpc-js load generator in a third process. At concurrency 1, 16 and 64 it prints
 * throughput, p50 and p99 latency and server CPU per call (the server process's own cpuUsage), medians of
 * repeated runs alternating between the two servers, and the service/plain ratios: Search on a 1-resource
 * scope against the plain statement, Health Check against a plain trivial handler. Then SearchStream of
 * 1,000 results (first-result latency, results/s) against the unary Search of the same 1,000, and tier
 * GetFragment through gRPC against the same call in process.
 * BENCH_SCALE (default 1) scales the corpus (20,000 chunks) and the calls per run;
 * BENCH_GRPC_CPU_PROF=DIR writes a V8 CPU profile of the service process to DIR.
 * The three child processes run JavaScript compiled by esbuild as `npm run build` compiles the server
 * (no tsx: its keep-names wrapper defines a `name` on every closure the service creates per call).
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { SearchRequestSchema, SearchStreamRequestSchema } from "../gen/acms/v1/text_pb.js";
import { ContextTierService, GetFragmentRequestSchema, Tier } from "../gen/acms/v1/tiers_pb.js";
import { HealthCheckRequestSchema } from "../gen/grpc/health/v1/health_pb.js";
import { openSqliteDatabase } from "../src/adapters/sqlite/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteRegistryStore } from "../src/adapters/sqlite/sqlite-registry-store.js";
import { SqliteFileTierStore } from "../src/adapters/tiers/sqlite-file-tier-store.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { generateKey, hashKey } from "../src/server/key-ring.js";
import { TierService } from "../src/application/tier-service.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
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

/**
 * Compiles the bench's child programs (`name.ts` in bench/) into `outDir` with esbuild, bundled the way
 * scripts/build.mjs bundles the server: the bench measures the compiled service, as deployed, not tsx.
 * `outDir` is under the repository, so the packages left as imports resolve from its node_modules.
 */
async function compileChildren(outDir: string, names: string[]): Promise<void> {
  await compilePrograms(Object.fromEntries(names.map((n) => [n, join(here, `${n}.ts`)])), outDir);
}

/** A child process spoken to over IPC, one request and one answer at a time. */
class Child {
  private constructor(private readonly proc: ChildProcess) {}

  /** Forks `file` (compiled JavaScript) and waits for its first message. */
  static async fork(file: string, args: string[], execArgv: string[] = []): Promise<{ child: Child; hello: Record<string, unknown> }> {
    const proc = fork(file, args, { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const child = new Child(proc);
    return { child, hello: await child.next() };
  }

  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`child exited with ${code}`));
      this.proc.once("exit", onExit);
      this.proc.once("message", (m) => {
        this.proc.off("exit", onExit);
        resolve(m as Record<string, unknown>);
      });
    });
  }

  async ask(msg: unknown): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.proc.send(msg as string);
    return answer;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.proc.once("exit", resolve));
    this.proc.send("stop");
    await exited;
  }
}

/** A server child: its address and its own CPU clock. */
class ServerProcess {
  constructor(readonly child: Child, readonly address: string) {}

  static async start(programs: string, args: string[], execArgv: string[] = []): Promise<ServerProcess> {
    const { child, hello } = await Child.fork(join(programs, "grpc-bench-server.mjs"), args, execArgv);
    return new ServerProcess(child, `127.0.0.1:${hello.port as number}`);
  }

  async cpuMicros(): Promise<number> {
    const { cpu } = (await this.child.ask("cpu")) as { cpu: NodeJS.CpuUsage };
    return cpu.user + cpu.system;
  }
}

interface Measured extends LoadResult {
  /** Server CPU per call, µs. */
  cpuPerCall: number;
}

function bytes<D extends DescMessage>(schema: D, init: MessageInitShape<D>): string {
  return Buffer.from(toBinary(schema, create(schema, init))).toString("base64");
}

async function measure(load: Child, server: ServerProcess, job: Omit<LoadJob, "address">): Promise<Measured> {
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
  return { callsPerSecond: pick((m) => m.callsPerSecond), p50: pick((m) => m.p50), p99: pick((m) => m.p99), cpuPerCall: pick((m) => m.cpuPerCall), errors: 0 };
}

function row(label: string, m: Measured): string {
  return `${label.padEnd(8)} ${Math.round(m.callsPerSecond).toString().padStart(7)}/s  p50 ${m.p50.toFixed(2).padStart(6)} ms  p99 ${m.p99.toFixed(2).padStart(6)} ms  cpu ${Math.round(m.cpuPerCall).toString().padStart(5)} µs/call`;
}

/** Service against plain at every concurrency; prints both and the ratios, returns the throughput ratios. */
async function compare(
  title: string,
  load: Child,
  service: ServerProcess,
  plain: ServerProcess,
  serviceJob: Omit<LoadJob, "address" | "concurrency" | "calls" | "warmup">,
  plainJob: Omit<LoadJob, "address" | "concurrency" | "calls" | "warmup">,
  calls: number,
): Promise<{ ratios: number[]; plain: Measured[] }> {
  process.stdout.write(`${title}\n`);
  const ratios: number[] = [];
  const plainRuns: Measured[] = [];
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
    process.stdout.write(
      `  concurrency ${concurrency}\n    ${row("service", sm)}\n    ${row("plain", pm)}\n` +
        `    service/plain: throughput ${(sm.callsPerSecond / pm.callsPerSecond).toFixed(2)}x, ` +
        `p50 ${(sm.p50 / pm.p50).toFixed(2)}x, p99 ${(sm.p99 / pm.p99).toFixed(2)}x, cpu per call ${(sm.cpuPerCall / pm.cpuPerCall).toFixed(2)}x\n`,
    );
  }
  return { ratios, plain: plainRuns };
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

/** GetFragment in process, one caller (the tier bench's baseline), over the durable embedded store. */
async function tierGetInProcess(n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "acms-grpc-bench-tiers-"));
  const db = openSqliteDatabase(join(dir, "acms.db"));
  try {
    const tiers = await TierService.open(new SqliteFileTierStore(db, join(dir, "cold")), {
      budgets: { maxTokensHot: 100_000_000, maxDecisionsWarm: 1_000_000, maxDecisionsCold: 1_000_000 },
      summaryTokens: 32,
    });
    const view = viewOver([], { scopeId: newUlid(), owner: "bench", projectNames: ["bench/one"], createdAt: new Date() });
    await tiers.storeFragment(view, { id: "f", content: "the plan", tier: undefined, projectName: "bench/one", resourceId: "", metadata: {} });
    for (let i = 0; i < 200; i++) await tiers.getFragment(view, "f");
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await tiers.getFragment(view, "f");
    const rate = n / ((performance.now() - t0) / 1000);
    await tiers.close();
    return rate;
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
    process.stdout.write(`corpus: ${resources * CHUNKS_PER_RESOURCE} chunks in ${resources} resources (${((performance.now() - t0) / 1000).toFixed(1)} s); ${calls} calls per run, medians of ${ROUNDS} runs\n`);

    const key = generateKey();
    const profileDir = process.env.BENCH_GRPC_CPU_PROF;
    const service = await ServerProcess.start(programs, ["service", dataDir, hashKey(key)], profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []);
    started.push(service.child);
    const plain = await ServerProcess.start(programs, ["plain", join(dataDir, "acms.db"), one]);
    started.push(plain.child);
    const { child: load } = await Child.fork(join(programs, "grpc-load-generator.mjs"), []);
    started.push(load);

    sessionManager = new Http2SessionManager(`http://${service.address}`);
    const transport = (scopeId?: string) =>
      createGrpcTransport({ baseUrl: `http://${service.address}`, sessionManager, interceptors: [bearer(key, scopeId)] });
    const scopes = createClient(ScopeService, transport());
    const oneScope = (await scopes.resolveScope({ projects: ["bench/one"] })).scope!.scopeId;
    const allScope = (await scopes.resolveScope({ projects: ["bench/all"] })).scope!.scopeId;
    await createClient(ContextTierService, transport(oneScope)).storeFragment({
      fragment: { fragmentId: "f", content: "the plan", projectName: "bench/one", tier: Tier.HOT },
    });
    sessionManager.abort();

    const query = `${syntheticWord(3)} ${syntheticWord(40)} ${syntheticWord(300)}`;
    const searchPath = "/acms.v1.TextBackendService/Search";
    const search = bytes(SearchRequestSchema, { query, maxResults: 20 });
    const auth = { authorization: `Bearer ${key}`, "acms-scope": oneScope };
    const { ratios: searchRatios } = await compare(
      `Search, 1-resource scope (${CHUNKS_PER_RESOURCE} chunks), "${query}", 20 results`,
      load,
      service,
      plain,
      { kind: "unary", path: searchPath, request: search, metadata: auth },
      { kind: "unary", path: searchPath, request: search, metadata: {} },
      calls,
    );
    const healthPath = "/grpc.health.v1.Health/Check";
    const health = bytes(HealthCheckRequestSchema, { service: "" });
    const { ratios: healthRatios, plain: plainHealth } = await compare(
      "Health Check",
      load,
      service,
      plain,
      { kind: "unary", path: healthPath, request: health, metadata: {} },
      { kind: "unary", path: healthPath, request: health, metadata: {} },
      calls * 2,
    );

    const streamQuery = `${syntheticWord(0)} ${syntheticWord(1)} ${syntheticWord(2)}`;
    const allAuth = { authorization: `Bearer ${key}`, "acms-scope": allScope };
    const streamCalls = Math.max(10, Math.round(40 * scale));
    const sizes = { concurrency: 1, calls: streamCalls, warmup: 5 };
    const unaryRuns: Measured[] = [];
    const streamRuns: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      unaryRuns.push(await measure(load, service, { kind: "unary", path: searchPath, request: bytes(SearchRequestSchema, { query: streamQuery, maxResults: STREAM_RESULTS }), metadata: allAuth, ...sizes }));
      streamRuns.push(await measure(load, service, { kind: "stream", path: "/acms.v1.TextBackendService/SearchStream", request: bytes(SearchStreamRequestSchema, { query: streamQuery, maxResults: STREAM_RESULTS }), metadata: allAuth, ...sizes }));
    }
    const unary = medianOf(unaryRuns);
    const stream = { ...medianOf(streamRuns), firstP50: median(streamRuns.map((r) => r.firstP50!)), messages: streamRuns[0].messages! };
    process.stdout.write(
      `SearchStream of ${stream.messages} results (scope of ${resources} resources), one caller\n` +
        `  unary Search: ${unary.p50.toFixed(2)} ms p50 for the whole answer (${Math.round((STREAM_RESULTS * 1000) / unary.p50)} results/s)\n` +
        `  SearchStream: first result ${stream.firstP50.toFixed(2)} ms p50 (${(stream.firstP50 / unary.p50).toFixed(2)}x the unary answer), ` +
        `last ${stream.p50.toFixed(2)} ms p50 (${Math.round((stream.messages * 1000) / stream.p50)} results/s, ${(unary.p50 / stream.p50).toFixed(2)}x unary's rate)\n`,
    );

    const tierCalls = calls * 2;
    const inProcess = await tierGetInProcess(tierCalls);
    const getRuns: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      getRuns.push(await measure(load, service, {
        kind: "unary",
        path: "/acms.v1.ContextTierService/GetFragment",
        request: bytes(GetFragmentRequestSchema, { fragmentId: "f" }),
        metadata: auth,
        concurrency: 16,
        calls: tierCalls,
        warmup: 100,
      }));
    }
    const overGrpc = medianOf(getRuns);
    process.stdout.write(
      `Tier GetFragment: in process ${Math.round(inProcess)} ops/s (one caller); through gRPC ${Math.round(overGrpc.callsPerSecond)} ops/s ` +
        `(16 callers, p50 ${overGrpc.p50.toFixed(2)} ms, cpu ${Math.round(overGrpc.cpuPerCall)} µs/call): ${(overGrpc.callsPerSecond / inProcess).toFixed(2)}x in process, ` +
        `${(overGrpc.callsPerSecond / plainHealth[CONCURRENCIES.indexOf(16)].callsPerSecond).toFixed(2)}x a plain grpc-js trivial handler at 16 callers (the wire's ceiling)\n`,
    );
    const fmt = (rs: number[]) => rs.map((r) => r.toFixed(2)).join(" / ");
    process.stdout.write(`summary: service/plain throughput at concurrency ${CONCURRENCIES.join(" / ")}: Search ${fmt(searchRatios)}, Health ${fmt(healthRatios)}\n`);
  } finally {
    sessionManager?.abort();
    for (const c of started.reverse()) await c.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(programs, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
