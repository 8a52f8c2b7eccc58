import { randomBytes } from "node:crypto";
import { createAcmsClient, type AcmsClient, type AcmsProtocol } from "../../src/index.js";
import { ConnectError } from "@connectrpc/connect";
import { startCollector, type CollectedSpan, type Collector } from "../support/otel-collector.js";
import { spawnServer, type SpawnedServer } from "../support/spawned-server.js";

// Tracing against a real OpenTelemetry Collector (built from the Go module proxy, test/support/otel-collector/):
// `acms serve` (a real process, its OTEL_* variables as an operator sets them) exports over OTLP/HTTP, the
// collector receives and forwards, and the test reads what it got.

const SERVER = 2; // OTLP SpanKind
const INTERNAL = 1;

/** Secrets planted in every place a span must never quote: queries, contents, names, aliases, keys. */
const SECRET = {
  project: "local/zebraproject",
  otherProject: "other/quokkaproject",
  alias: "walrusalias",
  query: "narwhalquery",
  content: "The pangolincontent is kept with the onboarding checklist.",
  fragment: "axolotlfragment holds a decision",
  path: "okapipath.md",
};

let collector: Collector;
let t: SpawnedServer;
let admin: AcmsClient;
let scopeId: string;

function newTraceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

function client(protocol: AcmsProtocol, key: string, scope?: string): AcmsClient {
  return createAcmsClient({ baseUrl: t.url, apiKey: key, scopeId: scope, protocol });
}

/** The server span continuing `tp` for `name`, once the collector has it, and the engine spans under it. */
async function callSpan(tp: { traceId: string; spanId: string }, name: string): Promise<{ call: CollectedSpan; engine: CollectedSpan[] }> {
  const spans = await collector.waitFor((all) => all.some((s) => s.traceId === tp.traceId && s.name === name && s.kind === SERVER));
  const call = spans.find((s) => s.traceId === tp.traceId && s.name === name && s.kind === SERVER)!;
  // Engine spans end before their call's span, so they are exported no later than it.
  const engine = spans.filter((s) => s.parentSpanId === call.spanId);
  return { call, engine };
}

beforeAll(async () => {
  collector = await startCollector();
  t = await spawnServer({
    ACMS_EMBEDDING_DIM: "4",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_SERVICE_NAME: "acms-tracing-test",
    OTEL_BSP_SCHEDULE_DELAY: "20",
  });
  admin = createAcmsClient({ baseUrl: t.url, apiKey: t.keys.admin });
  await admin.registry.createProject({ name: SECRET.project });
  await admin.registry.createProject({ name: SECRET.otherProject });
  const { resource } = await admin.registry.registerResource({ project: SECRET.project, alias: SECRET.alias, kind: "docs" });
  await admin.index.upsertDocuments(
    (async function* () {
      yield {
        resourceId: resource!.id,
        documents: [{ path: SECRET.path, content: SECRET.content, chunks: [{ text: SECRET.content, embedding: [1, 0, 0, 0] }] }],
      };
    })(),
  );
  const resolved = await client("connect", t.keys.writer).scope.resolveScope({ projects: [SECRET.project] });
  scopeId = resolved.scope!.scopeId;
}, 600_000);

afterAll(async () => {
  admin?.close();
  await t?.close();
  await collector?.close();
});

test.each<[AcmsProtocol, string]>([
  ["connect", "the Connect protocol (connect-node's pipeline)"],
  ["grpc", "gRPC (the fast path on Node's HTTP/2 streams)"],
  ["grpc-web", "gRPC-Web (connect-node's pipeline)"],
])(
  "a unary search over %s continues the caller's traceparent, with engine spans under the call span (%s)",
  async (protocol) => {
    const tp = newTraceparent();
    const acms = client(protocol, t.keys.writer, scopeId);
    try {
      const res = await acms.text.search({ query: "pangolincontent", maxResults: 5 }, { headers: { traceparent: tp.header } });
      expect(res.results).toHaveLength(1);
    } finally {
      acms.close();
    }
    const { call, engine } = await callSpan(tp, "acms.v1.TextBackendService/Search");
    expect(call.parentSpanId).toBe(tp.spanId);
    expect(call.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "acms.v1.TextBackendService",
      "rpc.method": "Search",
      "rpc.grpc.status_code": 0,
      "acms.protocol": protocol,
      "acms.scope_id": scopeId,
      "acms.response.results.count": 1,
      "gen_ai.operation.name": "search_memory",
    });
    expect(call.resource["service.name"]).toBe("acms-tracing-test");
    expect(engine.map((s) => s.name)).toContain("text.search");
    for (const s of engine) {
      expect(s.kind).toBe(INTERNAL);
      expect(s.traceId).toBe(tp.traceId);
    }
  },
  60_000,
);

test.each<AcmsProtocol>(["connect", "grpc"])(
  "a server stream over %s is one span that lasts until its last message, its engine calls under it",
  async (protocol) => {
    const tp = newTraceparent();
    const acms = client(protocol, t.keys.writer, scopeId);
    const got: unknown[] = [];
    try {
      for await (const m of acms.vector.similaritySearchStream(
        { embedding: [1, 0, 0, 0], topK: 3 },
        { headers: { traceparent: tp.header } },
      ))
        got.push(m);
    } finally {
      acms.close();
    }
    expect(got).toHaveLength(1);
    const { call, engine } = await callSpan(tp, "acms.v1.VectorBackendService/SimilaritySearchStream");
    expect(call.parentSpanId).toBe(tp.spanId);
    expect(call.attributes).toMatchObject({
      "acms.response.messages": 1,
      "rpc.grpc.status_code": 0,
      "gen_ai.operation.name": "search_memory",
    });
    expect(engine.map((s) => s.name)).toContain("vector.search");
  },
  60_000,
);

test("a hybrid search's engine calls (keyword, vector, documents) are children of its call span", async () => {
  const tp = newTraceparent();
  const acms = client("grpc", t.keys.writer, scopeId);
  try {
    await acms.rag.hybridSearch({ query: "pangolincontent", embedding: [1, 0, 0, 0], topK: 3 }, { headers: { traceparent: tp.header } });
  } finally {
    acms.close();
  }
  const { call, engine } = await callSpan(tp, "acms.v1.RagService/HybridSearch");
  expect(call.parentSpanId).toBe(tp.spanId);
  const names = engine.map((s) => s.name);
  expect(names).toEqual(expect.arrayContaining(["text.search", "vector.search"]));
  for (const s of engine) expect(s.attributes["acms.adapter"]).toEqual(expect.any(String));
}, 60_000);

test("writes are update_memory spans; a fragment stored and recalled keeps its content out of the trace", async () => {
  const tp = newTraceparent();
  const acms = client("connect", t.keys.writer, scopeId);
  try {
    await acms.tiers.storeFragment(
      { fragment: { content: SECRET.fragment, projectName: SECRET.project } },
      { headers: { traceparent: tp.header } },
    );
  } finally {
    acms.close();
  }
  const { call } = await callSpan(tp, "acms.v1.ContextTierService/StoreFragment");
  expect(call.attributes["gen_ai.operation.name"]).toBe("update_memory");
}, 60_000);

test("a refused call is traced with its code's name and nothing of the refusal's text", async () => {
  const tp = newTraceparent();
  const acms = client("grpc", t.keys.writer, scopeId);
  let refused: unknown;
  try {
    await acms.rag.fetchContent(
      { ukoUris: [`uko://${SECRET.otherProject}/01ARZ3NDEKTSV4RRFFQ69G5FAV/x.md`] },
      { headers: { traceparent: tp.header } },
    );
  } catch (err) {
    refused = err;
  } finally {
    acms.close();
  }
  expect(refused).toBeInstanceOf(ConnectError);
  const { call } = await callSpan(tp, "acms.v1.RagService/FetchContent");
  expect(call.attributes["error.type"]).toMatch(/^(permission_denied|invalid_argument)$/);
  expect(call.status.code).toBe(2); // ERROR
  expect(call.status.message ?? "").toBe("");
}, 60_000);

test("a call without traceparent starts a trace of its own (a root server span)", async () => {
  const before = new Set(collector.spans().map((s) => s.traceId));
  const acms = client("connect", t.keys.reader);
  try {
    await acms.scope.resolveScope({ projects: [SECRET.project] });
  } finally {
    acms.close();
  }
  const spans = await collector.waitFor((all) =>
    all.some((s) => s.name === "acms.v1.ScopeService/ResolveScope" && s.kind === SERVER && !before.has(s.traceId)),
  );
  const root = spans.find((s) => s.name === "acms.v1.ScopeService/ResolveScope" && !before.has(s.traceId))!;
  expect(root.parentSpanId).toBe("");
  expect(root.attributes["gen_ai.operation.name"]).toBeUndefined();
}, 60_000);

test("an MCP tool call continues the traceparent of its _meta: the search RPC it runs is a span of that trace", async () => {
  const tp = newTraceparent();
  const res = await fetch(`${t.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${t.keys.writer}`,
      "acms-scope": scopeId,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "search", arguments: { query: "pangolincontent", mode: "text", top_k: 5 }, _meta: { traceparent: tp.header } },
    }),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { result?: { isError?: boolean } };
  expect(answer.result?.isError).not.toBe(true);
  const { call, engine } = await callSpan(tp, "acms.v1.TextBackendService/Search");
  expect(call.parentSpanId).toBe(tp.spanId);
  expect(call.attributes["gen_ai.operation.name"]).toBe("search_memory");
  expect(engine.map((s) => s.name)).toContain("text.search");
}, 60_000);

test("no exported byte quotes a query, a content, a path, a key, an alias or any project name", async () => {
  // Every call above has been exported (each test waited for its span); wait for the last batch to settle too.
  const tp = newTraceparent();
  const acms = client("connect", t.keys.writer, scopeId);
  try {
    await acms.text.search({ query: SECRET.query }, { headers: { traceparent: tp.header } });
  } finally {
    acms.close();
  }
  await callSpan(tp, "acms.v1.TextBackendService/Search");
  const exported = collector.rawBodies().join("\n");
  expect(exported.length).toBeGreaterThan(0);
  const planted = [
    ...Object.values(SECRET),
    "zebraproject",
    "quokkaproject",
    "pangolincontent",
    "axolotlfragment",
    ...Object.values(t.keys),
  ];
  for (const secret of planted) expect({ secret, found: exported.includes(secret) }).toEqual({ secret, found: false });
  // And the same for every attribute value one by one (the raw scan above also covers names, events, statuses).
  for (const span of collector.spans())
    for (const [key, value] of Object.entries({ ...span.attributes, ...span.resource }))
      for (const secret of planted) expect({ key, leaked: String(value).includes(secret) }).toEqual({ key, leaked: false });
}, 60_000);
