/**
 * Soak: several tenants under steady load while one tenant runs each attack in turn (SPARQL inspection
 * bomb, backtracking glob, idle connections, a flood of slow SPARQL, quota abuse). Prints, per phase, the
 * other tenants' p50/p99 and error rate, their p99 as a ratio of the no-attacker baseline measured in the
 * same run (the figure), health latency, what the attacker got, and memory before and after. Loopback
 * only, bounded in time: each phase lasts max(1 s, 10 s x BENCH_SCALE).
 */
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { GraphBackendService, TermKind } from "../gen/acms/v1/graph_pb.js";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { createBackends } from "../src/server/composition-root.js";
import { loadConfig } from "../src/server/config.js";
import { generateKey, hashKey, KeyRing } from "../src/server/key-ring.js";
import { startServer, type AcmsServer } from "../src/server/server.js";
import { RequestLog } from "../src/server/request-log.js";
import { formatMs, percentile } from "./bench-timing.js";

const VICTIMS = 3;
const bearer = (key: string | undefined, scopeId?: string): Interceptor => (next) => async (req) => {
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
  health: number[];
  attacker: Map<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1");
  const phaseMs = Math.max(1000, Math.round(10_000 * scale));
  const docs = Math.max(20, Math.round(400 * scale));
  const dataDir = mkdtempSync(join(tmpdir(), "acms-soak-"));
  const names = [...Array.from({ length: VICTIMS }, (_, i) => `victim${i}`), "attacker"];
  const keys = Object.fromEntries(names.map((n) => [n, generateKey()]));
  const config = loadConfig({
    ACMS_HOST: "127.0.0.1",
    ACMS_PORT: "0",
    ACMS_DATA_DIR: dataDir,
    ACMS_EMBEDDING_DIM: "4",
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
              ...Array.from({ length: docs }, (_, i) => ({ path: `docs/page-${i}.md`, content: `soak page ${i} about retry and backoff number ${i % 7}` })),
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
    const victimClients = tenants
      .slice(0, VICTIMS)
      .map((v) => ({ text: client(TextBackendService, v.key, v.scope), graph: client(GraphBackendService, v.key, v.scope) }));
    const health = client(Health);
    const attacker = tenants[VICTIMS];

    /** Runs the victims' load and health probes for one phase while `attack` runs; `attack` gets a stop signal. */
    async function phase(attack?: (stop: AbortSignal, note: (what: string) => void) => Promise<void>): Promise<Phase> {
      const out: Phase = { latencies: [], errors: 0, calls: 0, health: [], attacker: new Map() };
      const note = (what: string) => out.attacker.set(what, (out.attacker.get(what) ?? 0) + 1);
      const stop = new AbortController();
      const end = performance.now() + phaseMs;
      const loops = victimClients.flatMap(({ text, graph }) => {
        const loop = async (call: () => Promise<unknown>) => {
          while (performance.now() < end) {
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
        return [loop(() => text.search({ query: "retry backoff", maxResults: 10 })), loop(() => graph.sparqlQuery({ query: "SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT 5" }))];
      });
      const probes = (async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          await health.check({}).catch(() => undefined);
          out.health.push(performance.now() - t0);
          await sleep(50);
        }
      })();
      const attacking = attack?.(stop.signal, note);
      await Promise.all([...loops, probes]);
      stop.abort();
      await attacking;
      return out;
    }

    /** Repeats `call` on `parallel` loops until `stop`, counting the codes it ends with. */
    const hammer = async (stop: AbortSignal, note: (w: string) => void, parallel: number, call: () => Promise<unknown>) => {
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          while (!stop.aborted) {
            try {
              await call();
              note("OK");
            } catch (e) {
              note(Code[ConnectError.from(e).code]);
            }
          }
        }),
      );
    };

    const atkGraph = client(GraphBackendService, attacker.key, attacker.scope);
    const atkScopes = client(ScopeService, attacker.key);
    const atkRegistry = client(RegistryService, attacker.key);
    const attacks: Array<[string, (stop: AbortSignal, note: (w: string) => void) => Promise<void>]> = [
      ["SPARQL inspection bomb (64 KB of one letter)", (stop, note) => hammer(stop, note, 2, () => atkGraph.sparqlQuery({ query: `SELECT * WHERE { ${"€".repeat(64 * 1024 - 64)} }` }))],
      [
        "backtracking globs ({a,aa}x30, extglob)",
        async (stop, note) => {
          const { scope } = await atkScopes.resolveScope({ projects: [attacker.project], includePaths: ["{a,aa}".repeat(30) + "b", "{a,aa}".repeat(30) + "*c"] });
          const text = client(TextBackendService, attacker.key, scope!.scopeId);
          await hammer(stop, note, 2, async () => {
            await atkScopes.resolveScope({ projects: [attacker.project], includePaths: ["+(a*)"] }).catch((e: unknown) => note(`extglob:${Code[ConnectError.from(e).code]}`));
            await text.search({ query: "soak" });
          });
        },
      ],
      [
        "idle connections (200, preface only, no key)",
        async (stop, note) => {
          const sockets: net.Socket[] = [];
          for (let i = 0; i < 200 && !stop.aborted; i++) {
            const s = net.connect({ port: server.port, host: "127.0.0.1", localAddress: "127.0.0.2" });
            s.on("error", () => undefined);
            s.on("data", () => undefined);
            s.on("close", () => {
              if (!stop.aborted) note("closed by server");
            });
            s.on("connect", () => s.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
            sockets.push(s);
          }
          await new Promise((r) => stop.addEventListener("abort", r, { once: true }));
          for (const s of sockets) s.destroy();
        },
      ],
      [
        "flood of slow SPARQL (8 at a time)",
        (stop, note) =>
          hammer(stop, note, 8, () =>
            atkGraph.sparqlQuery({ query: `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(" ")} }` }),
          ),
      ],
      ["quota abuse (50 calls at a time)", (stop, note) => hammer(stop, note, 50, () => atkRegistry.listProjects({}))],
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
        formatMs(percentile(p.health, 0.99)),
        [...p.attacker.entries()].map(([k, v]) => `${k}:${v}`).join(" ") || "-",
      ]);
    };
    row("no attacker (baseline)", baseline);
    for (const [name, attack] of attacks) row(name, await phase(attack));
    const head = ["phase", "victims p50", "victims p99", "p99 / baseline", "victim errors", "health p99", "attacker got"];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
    process.stdout.write(`${VICTIMS} victim tenants (text search + SPARQL loops), phases of ${phaseMs} ms\n${line(head)}\n`);
    for (const r of rows) process.stdout.write(`${line(r)}\n`);
    const rssAfter = process.memoryUsage().rss;
    process.stdout.write("(the load, the attacker and the server share one process: an attacker's client CPU counts against the victims too)\n");
    process.stdout.write(`memory (rss, server and load in one process): ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssAfter / 2 ** 20).toFixed(0)} MiB after\n`);
  } finally {
    for (const s of sessions) s.abort();
    await server.close(2000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
