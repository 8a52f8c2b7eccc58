/**
 * Robustness benchmark: how fast the real server refuses hostile requests, how responsive it stays while
 * heavy work runs, how soon a SPARQL query past its limit stops and how soon a close with an idle
 * keep-alive connection completes. These were wall-clock bounds in test/robustness and
 * test/interop/graceful-shutdown (which now assert only what happens); here each is a ratio against a
 * baseline measured in the same run: a health check, a small valid search, the configured time limit,
 * or a close with no idle connection. BENCH_SCALE grows the hostile inputs (default 100k entries).
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { GraphBackendService, TermKind } from "../gen/acms/v1/graph_pb.js";
import { IndexService, type UpsertDocumentsRequestSchema } from "../gen/acms/v1/index_pb.js";
import { RagService } from "../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { newUlid } from "../src/domain/ulid-id.js";
import { startTestServer, type TestServer } from "../test/support/test-server.js";
import { formatMs, median, sampleTimes } from "./bench-timing.js";

type UpsertInit = MessageInitShape<typeof UpsertDocumentsRequestSchema>;

/** Times a call that is expected to fail (the failure is the point); answers its latency in ms. */
async function timeRefusal(call: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let refused = false;
  try {
    await call();
  } catch {
    refused = true;
  }
  const ms = performance.now() - t0;
  if (!refused) throw new Error("a hostile request was accepted");
  return ms;
}

async function medianRefusal(rounds: number, call: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) times.push(await timeRefusal(call));
  return median(times);
}

async function* oneMessage(m: UpsertInit): AsyncIterable<UpsertInit> {
  yield m;
}

const iri = (name: string) => ({ kind: TermKind.IRI, value: `http://example.org/${name}` });

const line = (label: string, ms: number, base: number, baseName: string) =>
  process.stdout.write(`${label}: ${formatMs(ms, 1)} (${(ms / base).toFixed(1)}x ${baseName})\n`);

/** Runs the robustness benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  // At least 5,000: below that some lists fit the server's caps and would be (rightly) accepted.
  const n = Math.max(5000, Math.round(100_000 * scale));
  const t: TestServer = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4", ACMS_SPARQL_TIMEOUT_MS: "1000" } });
  try {
    const registry = t.client(RegistryService, "writer", undefined, "grpc");
    await registry.createProject({ name: "local/bench" });
    const resourceId = (await registry.registerResource({ project: "local/bench", alias: "docs", kind: "repo" })).resource!.id;
    const index = t.client(IndexService, "writer", undefined, "grpc");
    const docs = Array.from({ length: 50 }, (_, i) => ({ path: `d${i}.md`, content: `zebra document number ${i}` }));
    await index.upsertDocuments(oneMessage({ resourceId, documents: docs }));
    const scopeId = (await t.client(ScopeService, "writer", undefined, "grpc").resolveScope({ projects: ["local/bench"] })).scope!.scopeId;
    const health = t.client(Health, "writer", undefined, "grpc");
    const text = t.client(TextBackendService, "writer", scopeId, "grpc");

    const healthMs = median(await sampleTimes(3, 30, () => health.check({})));
    const searchMs = median(await sampleTimes(3, 30, () => text.search({ query: "zebra" })));
    process.stdout.write(`baselines: health check ${formatMs(healthMs, 1)}, small search ${formatMs(searchMs, 1)}\n`);

    const rag = t.client(RagService, "writer", scopeId, "grpc");
    const scopes = t.client(ScopeService, "writer", undefined, "grpc");
    const graph = t.client(GraphBackendService, "writer", scopeId, "grpc");
    const uris = Array.from({ length: n }, (_, i) => `uko://${resourceId}/f${i}.md`);
    const projects = Array.from({ length: n }, (_, i) => `local/p${i}`);
    const parents = Array.from({ length: n }, () => newUlid());
    const bigQuery = "zebra ".repeat(175_000);
    const nested = `SELECT * WHERE ${"{ ".repeat(5000)}?s ?p ?o${" }".repeat(5000)}`;
    const refusals: Array<[string, () => Promise<unknown>]> = [
      [`FetchContent with ${n} URIs refused`, () => rag.fetchContent({ ukoUris: uris })],
      [`ResolveScope with ${n} projects refused`, () => scopes.resolveScope({ projects })],
      [
        `RegisterResource with ${n} parents refused`,
        () => registry.registerResource({ project: "local/bench", alias: "many", kind: "repo", parentIds: parents }),
      ],
      ["a 1 MiB keyword query refused", () => text.search({ query: bigQuery })],
      ["a pathological glob refused", () => scopes.resolveScope({ projects: ["local/bench"], includePaths: ["*{a,b}*{a,b}*{a,b}*c"] })],
      ["SPARQL nested 5000 deep refused", () => graph.sparqlQuery({ query: nested })],
    ];
    for (const [label, call] of refusals) line(label, await medianRefusal(3, call), healthMs, "a health check");

    // Responsiveness while one client uploads n tiny documents in one message.
    const many = Array.from({ length: n }, (_, i) => ({ path: `many/${i}.md`, content: `tiny document ${i}` }));
    let uploading = true;
    const t0 = performance.now();
    const upload = index.upsertDocuments(oneMessage({ resourceId, documents: many })).finally(() => (uploading = false));
    const during: number[] = [];
    while (uploading) {
      const h0 = performance.now();
      await health.check({});
      during.push(performance.now() - h0);
    }
    await upload;
    const uploadMs = performance.now() - t0;
    const worst = Math.max(...during);
    const p99 = [...during].sort((a, b) => a - b)[Math.min(during.length - 1, Math.floor(during.length * 0.99))];
    process.stdout.write(
      `upload of ${n} documents: ${formatMs(uploadMs)} (${(uploadMs / searchMs).toFixed(0)}x a small search); ` +
        `${during.length} health checks meanwhile, worst ${formatMs(worst, 1)} (${(worst / healthMs).toFixed(1)}x an idle one), ` +
        `p99 ${formatMs(p99, 1)} (${(p99 / healthMs).toFixed(1)}x)\n`,
    );

    // A query past the server's SPARQL time limit (1000 ms here): how long until DEADLINE_EXCEEDED.
    const vars = Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(" ");
    await index.putTriples({
      resourceId,
      replace: true,
      triples: Array.from({ length: 30 }, (_, i) => ({ subject: iri(`n${i}`), predicate: iri("p"), object: iri(`n${(i + 1) % 30}`) })),
    });
    const cutMs = await timeRefusal(() => graph.sparqlQuery({ query: `SELECT (COUNT(*) AS ?n) WHERE { ${vars} }` })).catch(() => NaN);
    process.stdout.write(`a cartesian SPARQL query stopped after ${formatMs(cutMs)} (${(cutMs / 1000).toFixed(2)}x the 1000 ms limit)\n`);
  } finally {
    await t.close(true);
  }

  // Graceful close: with an idle HTTP/1.1 keep-alive connection against none (each on a fresh server).
  const closeMs = async (keepAlive: boolean): Promise<number> => {
    const s = await startTestServer();
    try {
      if (keepAlive) {
        const res = await fetch(`${s.server.url}/grpc.health.v1.Health/Check`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        await res.json();
      } else {
        const sessionManager = new Http2SessionManager(s.server.url);
        await createClient(Health, createGrpcTransport({ baseUrl: s.server.url, sessionManager })).check({});
        sessionManager.abort();
      }
      const t0 = performance.now();
      await s.server.close(60_000);
      return performance.now() - t0;
    } finally {
      await s.close(true).catch(() => undefined);
    }
  };
  const bare = median([await closeMs(false), await closeMs(false), await closeMs(false)]);
  const idle = median([await closeMs(true), await closeMs(true), await closeMs(true)]);
  process.stdout.write(
    `close with an idle keep-alive connection: ${formatMs(idle, 1)} (${(idle / bare).toFixed(1)}x a close with none, ${formatMs(bare, 1)})\n`,
  );
}
