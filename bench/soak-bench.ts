/**
 * Soak: several tenants under steady load while one tenant runs each attack in turn (SPARQL inspection
 * bomb, backtracking glob, idle connections, a flood of slow SPARQL, quota abuse, an upload of 20k
 * documents in one message). Prints, per phase, the other tenants' p50/p99 and error rate, their p99 as a
 * ratio of the no-attacker baseline measured in the same run (the figure), the p50/p99 of their own small
 * writes (one document each, to their own resources) with the p99 ratio too (the upload attack's figure:
 * another tenant's large upload must not hold their writes), health latency (p99 and worst, the worst also
 * as a ratio of the baseline's p99), the serving thread's longest event-loop delay (perf_hooks
 * monitorEventLoopDelay; the server and the victims' load share this process's loop) with its ratio to the
 * baseline's, what the attacker got, and memory before and after.
 * The attacker runs in a child process (bench/soak-attacker.ts), so its client work competes with the
 * server like a real client's. Loopback only, bounded in time: each phase lasts max(1 s, 10 s x
 * BENCH_SCALE), and an upload phase at least until one upload has been acknowledged. The upload attacks
 * send UPLOAD_DOCS documents per message (scaled down below BENCH_SCALE 1, at least 2,000), without and
 * with one 64-dimension vector each. SOAK_ONLY=upload,upload-vectors runs only the attacks named (the
 * baseline always runs).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { GraphBackendService, TermKind } from "../gen/acms/v1/graph_pb.js";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { createBackends } from "../src/server/composition/composition-root.js";
import { loadConfig } from "../src/server/composition/config.js";
import { generateKey, hashKey, KeyRing } from "../src/application/access/key-ring.js";
import { startServer, type AcmsServer } from "../src/server/composition/server.js";
import { RequestLog } from "../src/server/observability/request-log.js";
import { formatMs, percentile } from "./bench-timing.js";
import type { SoakAttack, SoakAttackerArgs } from "./soak-attacker.js";

const VICTIMS = 3;
/** Documents in each UpsertDocuments message of the upload attacks, at BENCH_SCALE 1. */
const UPLOAD_DOCS = 20_000;
/** The vector dimension of the upload-vectors attack. */
const EMBEDDING_DIM = 64;
const bearer =
  (key: string | undefined, scopeId?: string): Interceptor =>
  (next) =>
  async (req) => {
    if (key) req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };

interface Tenant {
  name: string;
  key: string;
  project: string;
  resource: string;
  scope: string;
}

/** One phase's observations. */
interface Phase {
  latencies: number[];
  errors: number;
  calls: number;
  /** The victims' small writes: latencies (ms) and failures. */
  writes: number[];
  writeErrors: number;
  health: number[];
  /** The longest event-loop delay seen during the phase, ms. */
  loopDelayMax: number;
  attacker: Map<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1");
  const phaseMs = Math.max(1000, Math.round(10_000 * scale));
  const docs = Math.max(20, Math.round(400 * scale));
  const uploadDocs = Math.max(2000, Math.round(UPLOAD_DOCS * Math.min(1, scale)));
  const only = (process.env.SOAK_ONLY ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  const dataDir = mkdtempSync(join(tmpdir(), "acms-soak-"));
  const names = [...Array.from({ length: VICTIMS }, (_, i) => `victim${i}`), "attacker"];
  const keys = Object.fromEntries(names.map((n) => [n, generateKey()]));
  const config = loadConfig({
    ACMS_HOST: "127.0.0.1",
    ACMS_PORT: "0",
    ACMS_DATA_DIR: dataDir,
    ACMS_EMBEDDING_DIM: String(EMBEDDING_DIM),
    ACMS_SPARQL_TIMEOUT_MS: "1000",
    ACMS_GRAPH_WORKERS: "2",
    ACMS_QUOTA_CONCURRENT: "16",
    ACMS_QUOTA_RATE: "300",
    ACMS_QUOTA_BURST: "300",
    ACMS_MAX_CONNECTIONS_PER_PEER: "64",
    ACMS_HANDSHAKE_TIMEOUT_MS: "1000",
    ACMS_IDLE_TIMEOUT_MS: "2000",
  });
  const server: AcmsServer = await startServer({
    config,
    keys: new KeyRing(names.map((n) => ({ name: n, key_sha256: hashKey(keys[n]), projects: [`soak/${n}`], write: true }))),
    backends: await createBackends(config),
    onInternalError: () => undefined,
    // The attacks are refused by the thousand: a log line for each would drown the figures.
    log: new RequestLog("info", { write: () => true }),
  });
  const sessions: Http2SessionManager[] = [];
  const client = <S extends DescService>(service: S, key?: string, scope?: string): Client<S> => {
    const sessionManager = new Http2SessionManager(server.url);
    sessions.push(sessionManager);
    return createClient(service, createGrpcTransport({ baseUrl: server.url, sessionManager, interceptors: [bearer(key, scope)] }));
  };
  const rssBefore = process.memoryUsage().rss;
  try {
    const tenants: Tenant[] = [];
    for (const name of names) {
      const project = `soak/${name}`;
      await client(RegistryService, keys[name]).createProject({ name: project });
      const { resource } = await client(RegistryService, keys[name]).registerResource({ project, alias: "docs", kind: "repo" });
      const resourceId = resource!.id;
      const long = name === "attacker" ? [45, 90, 180].map((n) => `${"a".repeat(n)}c`) : [];
      await client(IndexService, keys[name]).upsertDocuments(
        (async function* () {
          yield {
            resourceId,
            documents: [
              ...Array.from({ length: docs }, (_, i) => ({
                path: `docs/page-${i}.md`,
                content: `soak page ${i} about retry and backoff number ${i % 7}`,
              })),
              ...long.map((path) => ({ path, content: "soak long name" })),
            ],
          };
        })(),
      );
      await client(IndexService, keys[name]).putTriples({
        resourceId,
        replace: true,
        triples: Array.from({ length: 8 }, (_, i) => ({
          subject: { kind: TermKind.IRI, value: `http://example.org/${name}/${i}` },
          predicate: { kind: TermKind.IRI, value: "http://example.org/next" },
          object: { kind: TermKind.IRI, value: `http://example.org/${name}/${i + 1}` },
        })),
      });
      const { scope } = await client(ScopeService, keys[name]).resolveScope({ projects: [project] });
      tenants.push({ name, key: keys[name], project, resource: resourceId, scope: scope!.scopeId });
    }
    const victimClients = tenants.slice(0, VICTIMS).map((v) => ({
      tenant: v,
      text: client(TextBackendService, v.key, v.scope),
      graph: client(GraphBackendService, v.key, v.scope),
      index: client(IndexService, v.key),
    }));
    const health = client(Health);
    const attacker = tenants[VICTIMS];

    /**
     * Starts the attacker process and resolves once it is connected (its start-up is not part of the
     * phase); `rounds` counts the uploads it reports, `finish` stops it and answers what its calls got.
     */
    async function startAttacker(attack: SoakAttack): Promise<{ rounds: () => number; finish: () => Promise<Map<string, number>> }> {
      const args: SoakAttackerArgs = {
        attack,
        url: server.url,
        port: server.port,
        key: attacker.key,
        scope: attacker.scope,
        project: attacker.project,
        resource: attacker.resource,
        uploadDocs,
        embeddingDim: EMBEDDING_DIM,
      };
      const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "soak-attacker.ts"), JSON.stringify(args)], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      let rounds = 0;
      let result: Map<string, number> | undefined;
      const exited = new Promise<void>((resolve, reject) =>
        child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the attacker process (${attack}) exited with ${code}`)))),
      );
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on("line", (line) => {
          if (line === "ready") resolve();
          else if (line === "round") rounds += 1;
          else if (line.startsWith("[")) result = new Map(JSON.parse(line) as Array<[string, number]>);
        });
        exited.catch(reject);
      });
      return {
        rounds: () => rounds,
        finish: async () => {
          child.stdin!.end("stop\n");
          await exited;
          return result ?? new Map();
        },
      };
    }

    /** Runs the victims' load and health probes for one phase while `attack` runs in its own process. */
    async function phase(attack?: SoakAttack): Promise<Phase> {
      const out: Phase = {
        latencies: [],
        errors: 0,
        calls: 0,
        writes: [],
        writeErrors: 0,
        health: [],
        loopDelayMax: 0,
        attacker: new Map(),
      };
      const attacking = attack ? await startAttacker(attack) : undefined;
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const end = performance.now() + phaseMs;
      // An upload phase lasts until one upload has been acknowledged, so the probes cover a whole one.
      const running = () => performance.now() < end || (attack?.startsWith("upload") === true && attacking!.rounds() < 1);
      const writeLoops = victimClients.map(async ({ tenant, index }) => {
        for (let n = 0; running(); n++) {
          const t0 = performance.now();
          try {
            await index.upsertDocuments(
              (async function* () {
                yield {
                  resourceId: tenant.resource,
                  documents: [{ path: `notes/${n % 50}.md`, content: `soak note ${n} about retry and backoff` }],
                };
              })(),
            );
          } catch {
            out.writeErrors += 1;
          }
          out.writes.push(performance.now() - t0);
          await sleep(20);
        }
      });
      const loops = victimClients.flatMap(({ text, graph }) => {
        const loop = async (call: () => Promise<unknown>) => {
          while (running()) {
            const t0 = performance.now();
            try {
              await call();
            } catch {
              out.errors += 1;
            }
            out.calls += 1;
            out.latencies.push(performance.now() - t0);
            await sleep(5);
          }
        };
        return [
          loop(() => text.search({ query: "retry backoff", maxResults: 10 })),
          loop(() => graph.sparqlQuery({ query: "SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT 5" })),
        ];
      });
      const probes = (async () => {
        while (running()) {
          const t0 = performance.now();
          await health.check({}).catch(() => undefined);
          out.health.push(performance.now() - t0);
          await sleep(50);
        }
      })();
      await Promise.all([...loops, ...writeLoops, probes]);
      loopDelay.disable();
      out.loopDelayMax = loopDelay.max / 1e6;
      if (attacking) out.attacker = await attacking.finish();
      return out;
    }

    const attacks: Array<[string, SoakAttack]> = [
      ["SPARQL inspection bomb (64 KB of one letter)", "sparql-bomb"],
      ["backtracking globs ({a,aa}x30, extglob)", "globs"],
      ["idle connections (200, preface only, no key)", "idle-connections"],
      ["flood of slow SPARQL (8 at a time)", "slow-sparql"],
      ["quota abuse (50 calls at a time)", "quota"],
      [`upload of ${uploadDocs / 1000}k documents in one message`, "upload"],
      [`upload of ${uploadDocs / 1000}k documents with ${EMBEDDING_DIM}-dim vectors in one message`, "upload-vectors"],
    ];

    const baseline = await phase();
    const rows: string[][] = [];
    const row = (name: string, p: Phase) => {
      const p99 = percentile(p.latencies, 0.99);
      rows.push([
        name,
        formatMs(percentile(p.latencies, 0.5)),
        formatMs(p99),
        `${(p99 / percentile(baseline.latencies, 0.99)).toFixed(2)}x`,
        `${((100 * p.errors) / Math.max(1, p.calls)).toFixed(1)}%`,
        formatMs(percentile(p.writes, 0.5)),
        formatMs(percentile(p.writes, 0.99)),
        `${(percentile(p.writes, 0.99) / percentile(baseline.writes, 0.99)).toFixed(2)}x${p.writeErrors > 0 ? ` (${p.writeErrors} failed)` : ""}`,
        formatMs(percentile(p.health, 0.99)),
        `${formatMs(Math.max(...p.health))} (${(Math.max(...p.health) / percentile(baseline.health, 0.99)).toFixed(1)}x)`,
        `${formatMs(p.loopDelayMax)} (${(p.loopDelayMax / baseline.loopDelayMax).toFixed(1)}x)`,
        [...p.attacker.entries()].map(([k, v]) => `${k}:${v}`).join(" ") || "-",
      ]);
    };
    row("no attacker (baseline)", baseline);
    for (const [name, attack] of attacks) if (only.length === 0 || only.includes(attack)) row(name, await phase(attack));
    const head = [
      "phase",
      "victims p50",
      "victims p99",
      "p99 / baseline",
      "victim errors",
      "writes p50",
      "writes p99",
      "writes p99 / baseline",
      "health p99",
      "health worst (/ baseline p99)",
      "loop delay max (/ baseline)",
      "attacker got",
    ];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
    process.stdout.write(
      `${VICTIMS} victim tenants (text search + SPARQL loops, and a loop of one-document writes each), phases of ${phaseMs} ms\n${line(head)}\n`,
    );
    for (const r of rows) process.stdout.write(`${line(r)}\n`);
    const rssAfter = process.memoryUsage().rss;
    process.stdout.write("(the attacker runs in its own process; the victims' load and the server share this one)\n");
    process.stdout.write(
      `memory (rss, server and victims' load in one process): ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssAfter / 2 ** 20).toFixed(0)} MiB after\n`,
    );
  } finally {
    for (const s of sessions) s.abort();
    await server.close(2000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
