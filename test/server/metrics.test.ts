import http from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runServe } from "../../src/cli/serve.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { RequestLog } from "../../src/server/observability/request-log.js";
import { doc, upsert } from "../index/index-fixture.js";
import { seedTenants, type Seeded } from "../interop/interop-fixture.js";
import { expectCode } from "../support/call-failure.js";
import { prng } from "../support/prng.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A real HTTP/1.1 GET, as Prometheus scrapes. */
function get(url: string): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"]), body }));
      })
      .on("error", reject);
  });
}

/** The value of the sample `name` whose labels include `labels`, from Prometheus text; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[2] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) got[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return 0;
}

function memoryLog(level: "info" | "debug"): { log: RequestLog; lines: () => Record<string, unknown>[]; raw: () => string } {
  let raw = "";
  return {
    log: new RequestLog(level, { write: (l: string) => (raw += l) }),
    lines: () =>
      raw
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    raw: () => raw,
  };
}

/** TCP servers listening in this process. */
const listeningServers = () => process.getActiveResourcesInfo().filter((r) => r === "TCPServerWrap").length;

const REGISTRY = "acms.v1.RegistryService";
const SCOPE = "acms.v1.ScopeService";
const TEXT = "acms.v1.TextBackendService";

describe("ACMS_METRICS_PORT", () => {
  let t: TestServer;
  let seeded: Seeded & { otherProject: string };
  const logs = memoryLog("info");
  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_METRICS_PORT: "0" }, log: logs.log });
    seeded = await seedTenants(t);
  });
  afterAll(async () => {
    await t.close(true);
  });
  const scrape = async () => {
    const r = await get(t.server.metricsUrl!);
    expect(r.status).toBe(200);
    expect(r.contentType).toContain("text/plain");
    return r.body;
  };

  it("serves /metrics on a loopback listener of its own, and nothing else there", async () => {
    const url = new URL(t.server.metricsUrl!);
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.pathname).toBe("/metrics");
    expect(url.port).not.toBe(String(t.server.port));
    expect((await get(`${url.origin}/`)).status).toBe(404);
    // The API port does not answer /metrics.
    expect((await get(`${t.server.url}/metrics`)).status).not.toBe(200);
    const text = await scrape();
    // prom-client's default metrics: event-loop lag among them.
    expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
    expect(text).toContain("# TYPE acms_rpc_duration_seconds histogram");
    // The API listener and the metrics listener.
    expect(listeningServers()).toBe(2);
  });

  it("counts Connect and gRPC calls by service, method and code, with their latency", async () => {
    const before = await scrape();
    const ok = { service: REGISTRY, method: "CreateProject", code: "ok" };
    await t.client(RegistryService, "admin", undefined, "connect").createProject({ name: "local/metrics-connect" });
    await t.client(RegistryService, "admin", undefined, "grpc").createProject({ name: "local/metrics-grpc" });
    await expectCode(
      t.client(RegistryService, "admin", undefined, "grpc").createProject({ name: "local/metrics-grpc" }),
      Code.AlreadyExists,
    );
    await expectCode(
      t.client(RegistryService, "reader", undefined, "connect").createProject({ name: "local/nope" }),
      Code.PermissionDenied,
    );
    const after = await scrape();
    expect(sample(after, "acms_rpc_calls_total", ok) - sample(before, "acms_rpc_calls_total", ok)).toBe(2);
    const exists = { service: REGISTRY, method: "CreateProject", code: "already_exists" };
    expect(sample(after, "acms_rpc_calls_total", exists) - sample(before, "acms_rpc_calls_total", exists)).toBe(1);
    const denied = { service: REGISTRY, method: "CreateProject", code: "permission_denied" };
    expect(sample(after, "acms_rpc_calls_total", denied) - sample(before, "acms_rpc_calls_total", denied)).toBe(1);
    // A write refusal is not a scope violation.
    expect(sample(after, "acms_scope_violations_total", { service: REGISTRY, method: "CreateProject" })).toBe(0);
    const count = { service: REGISTRY, method: "CreateProject" };
    expect(sample(after, "acms_rpc_duration_seconds_count", count) - sample(before, "acms_rpc_duration_seconds_count", count)).toBe(4);
    expect(
      sample(after, "acms_rpc_duration_seconds_bucket", { ...count, le: "+Inf" }) -
        sample(before, "acms_rpc_duration_seconds_bucket", { ...count, le: "+Inf" }),
    ).toBe(4);
  });

  it("counts scope violations over gRPC", async () => {
    const before = await scrape();
    const scope = t.client(ScopeService, "writer", seeded.scopeId, "grpc");
    await expectCode(scope.validateResourceScope({ requestedResourceIds: [seeded.c] }), Code.PermissionDenied);
    await expectCode(scope.validateResourceScope({ requestedResourceIds: [seeded.ghost] }), Code.PermissionDenied);
    await scope.validateResourceScope({ requestedResourceIds: [seeded.a] });
    const after = await scrape();
    const labels = { service: SCOPE, method: "ValidateResourceScope" };
    expect(sample(after, "acms_scope_violations_total", labels) - sample(before, "acms_scope_violations_total", labels)).toBe(2);
    expect(
      sample(after, "acms_rpc_calls_total", { ...labels, code: "permission_denied" }) -
        sample(before, "acms_rpc_calls_total", { ...labels, code: "permission_denied" }),
    ).toBe(2);
    expect(
      sample(after, "acms_rpc_calls_total", { ...labels, code: "ok" }) - sample(before, "acms_rpc_calls_total", { ...labels, code: "ok" }),
    ).toBe(1);
  });

  it("counts streams and the messages they send, and reads index and tier sizes at scrape time", async () => {
    const before = await scrape();
    const generationBefore = sample(before, "acms_index_generation");
    await upsert(t, "admin", [{ resourceId: seeded.a, documents: [doc("a.md", "quokka one"), doc("b.md", "quokka two")] }]);
    const text = t.client(TextBackendService, "writer", seeded.scopeId, "grpc");
    let sent = 0;
    for await (const _ of text.searchStream({ query: "quokka" })) sent += 1;
    expect(sent).toBe(2);
    await t
      .client(ContextTierService, "writer", seeded.scopeId, "connect")
      .storeFragment({ fragment: { content: "a decision", tier: Tier.HOT, projectName: "local/api" } });
    const after = await scrape();
    const stream = { service: TEXT, method: "SearchStream" };
    expect(
      sample(after, "acms_rpc_stream_messages_sent_total", stream) - sample(before, "acms_rpc_stream_messages_sent_total", stream),
    ).toBe(2);
    expect(
      sample(after, "acms_rpc_calls_total", { ...stream, code: "ok" }) - sample(before, "acms_rpc_calls_total", { ...stream, code: "ok" }),
    ).toBe(1);
    expect(sample(after, "acms_rpc_streams_active", stream)).toBe(0);
    expect(sample(after, "acms_index_generation")).toBeGreaterThan(generationBefore);
    expect(sample(after, "acms_index_vectors")).toBe(0);
    expect(sample(after, "acms_index_documents") - sample(before, "acms_index_documents")).toBe(2);
    expect(sample(after, "acms_index_chunks") - sample(before, "acms_index_chunks")).toBe(2);
    expect(sample(after, "acms_tier_fragments", { tier: "hot" }) - sample(before, "acms_tier_fragments", { tier: "hot" })).toBe(1);
    expect(sample(after, "acms_tier_tokens", { tier: "hot" })).toBeGreaterThan(0);
  });

  it("counts live documents and chunks, counted again after every write", async () => {
    const before = await scrape();
    const live = (text: string) => [
      sample(text, "acms_index_documents") - sample(before, "acms_index_documents"),
      sample(text, "acms_index_chunks") - sample(before, "acms_index_chunks"),
    ];
    await upsert(t, "admin", [
      {
        resourceId: seeded.a,
        documents: [doc("count/a.md", "one two", { chunks: [{ text: "one" }, { text: "two" }] }), doc("count/b.md", "three")],
      },
    ]);
    expect(live(await scrape())).toEqual([2, 3]);
    // A change supersedes a.md's two chunks with one; scraping twice without a write counts the same.
    await upsert(t, "admin", [{ resourceId: seeded.a, documents: [doc("count/a.md", "one only")] }]);
    expect(live(await scrape())).toEqual([2, 2]);
    expect(live(await scrape())).toEqual([2, 2]);
    await t.client(IndexService, "admin").deleteDocuments({ resourceId: seeded.a, paths: ["count/a.md", "count/b.md"] });
    expect(live(await scrape())).toEqual([0, 0]);
  });

  it("counts tier hits, misses and movements deployment-wide, every tenant summed", async () => {
    const before = await scrape();
    const delta = (text: string, name: string, labels: Record<string, string> = {}) =>
      sample(text, name, labels) - sample(before, name, labels);
    const writer = t.client(ContextTierService, "writer", seeded.scopeId, "connect");
    const { fragment } = await writer.storeFragment({
      fragment: { content: "a decision to look up", tier: Tier.HOT, projectName: "local/api" },
    });
    await writer.getFragment({ fragmentId: fragment!.fragmentId });
    await writer.demoteFragment({ fragmentId: fragment!.fragmentId });
    await writer.getFragment({ fragmentId: fragment!.fragmentId });
    await writer.promoteFragment({ fragmentId: fragment!.fragmentId });
    await expectCode(writer.getFragment({ fragmentId: "no-such-fragment" }), Code.NotFound);
    // Another tenant's miss counts here too (the operator's figures), never in the writer's GetMetrics.
    const otherScope = (await t.client(ScopeService, "other").resolveScope({ projects: [seeded.otherProject] })).scope!.scopeId;
    const other = t.client(ContextTierService, "other", otherScope, "connect");
    await expectCode(other.getFragment({ fragmentId: "no-such-fragment" }), Code.NotFound);
    const mine = await writer.getMetrics({});
    const after = await scrape();
    expect(delta(after, "acms_tier_hits_total", { tier: "hot" })).toBe(1);
    expect(delta(after, "acms_tier_hits_total", { tier: "warm" })).toBe(1);
    expect(delta(after, "acms_tier_hits_total", { tier: "cold" })).toBe(0);
    expect(delta(after, "acms_tier_misses_total", { tier: "hot" })).toBe(3);
    expect(delta(after, "acms_tier_misses_total", { tier: "warm" })).toBe(2);
    expect(delta(after, "acms_tier_misses_total", { tier: "cold" })).toBe(2);
    expect(delta(after, "acms_tier_demotions_total")).toBe(1);
    expect(delta(after, "acms_tier_promotions_total")).toBe(1);
    expect(delta(after, "acms_tier_evictions_total")).toBe(0);
    expect(after).toContain("# TYPE acms_tier_hits_total counter");
    // The caller's own figures, scoped: the other tenant's lookup is not among them.
    const mineAfter = await writer.getMetrics({});
    expect(mineAfter.hotMisses - mine.hotMisses).toBe(0n);
    expect((await other.getMetrics({})).misses).toBeGreaterThanOrEqual(1n);
  });

  it.each(["connect", "grpc"] as const)(
    "counts a client that cancels mid-stream (%s) as canceled, in metrics and the request log",
    async (protocol) => {
      // 100 results of about 7 KiB each: far more than HTTP/2 flow control lets through unread (a 64 KiB
      // window), so the server is still sending when the client cancels after its first message (asserted below).
      const rnd = prng(protocol === "connect" ? 41 : 42);
      const filler = () => Array.from({ length: 1100 }, () => Math.floor(rnd() * 36 ** 6).toString(36)).join(" ");
      const documents = Array.from({ length: 100 }, (_, i) => {
        const body = `wombat ${filler()}`;
        return doc(`cancel-${protocol}/${i}.md`, body, { chunks: [{ text: body }] });
      });
      await upsert(t, "admin", [{ resourceId: seeded.a, documents }]);
      const stream = { service: TEXT, method: "SearchStream" };
      const before = await scrape();
      const requestId = `cancel-${protocol}`;
      const text = t.client(TextBackendService, "writer", seeded.scopeId, protocol);
      const cancel = new AbortController();
      let received = 0;
      await expectCode(
        (async () => {
          for await (const _ of text.searchStream(
            { query: "wombat", maxResults: 100 },
            { headers: { "x-request-id": requestId }, signal: cancel.signal },
          )) {
            received += 1;
            // A ConnectError reason: under jest, the client's AbortError check fails across realms.
            cancel.abort(new ConnectError("the client stopped reading", Code.Canceled));
          }
        })(),
        Code.Canceled,
      );
      expect(received).toBe(1);
      // The server notices the cancel asynchronously: wait for the stream to end there (no time bound).
      let after = await scrape();
      while (sample(after, "acms_rpc_streams_active", stream) > 0 || !logs.lines().some((l) => l.request_id === requestId)) {
        await new Promise((r) => setTimeout(r, 20));
        after = await scrape();
      }
      const delta = (code: string) =>
        sample(after, "acms_rpc_calls_total", { ...stream, code }) - sample(before, "acms_rpc_calls_total", { ...stream, code });
      expect(delta("canceled")).toBe(1);
      expect(delta("ok")).toBe(0);
      expect(delta("internal")).toBe(0);
      expect(delta("unknown")).toBe(0);
      const sent =
        sample(after, "acms_rpc_stream_messages_sent_total", stream) - sample(before, "acms_rpc_stream_messages_sent_total", stream);
      expect(sent).toBeGreaterThanOrEqual(1);
      expect(sent).toBeLessThan(100);
      const logged = logs.lines().filter((l) => l.request_id === requestId);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ msg: "call", service: TEXT, method: "SearchStream", code: "canceled", principal: "writer" });
      expect(logs.lines().some((l) => l.level === "error")).toBe(false);
    },
  );

  it("logs refusals as one JSON line each with the request id, never the key", async () => {
    const registry = t.client(RegistryService, "reader", undefined, "connect");
    await expectCode(registry.createProject({ name: "local/logged" }, { headers: { "x-request-id": "refused-1" } }), Code.PermissionDenied);
    const line = logs.lines().find((l) => l.request_id === "refused-1");
    expect(line).toMatchObject({ msg: "call", service: REGISTRY, method: "CreateProject", code: "permission_denied", principal: "reader" });
    expect(logs.lines().filter((l) => l.request_id === "refused-1")).toHaveLength(1);
    for (const key of Object.values(t.keys)) expect(logs.raw()).not.toContain(key);
    // Successful calls are not logged at level info.
    await registry.listProjects({}, { headers: { "x-request-id": "fine-1" } });
    expect(logs.lines().some((l) => l.request_id === "fine-1")).toBe(false);
  });
});

describe("x-request-id", () => {
  let t: TestServer;
  const logs = memoryLog("debug");
  beforeAll(async () => {
    t = await startTestServer({ log: logs.log });
  });
  afterAll(async () => {
    await t.close(true);
  });

  it.each(["connect", "grpc"] as const)("is echoed over %s: the caller's, else a new one, on errors too", async (protocol) => {
    const registry = t.client(RegistryService, "admin", undefined, protocol);
    let echoed: string | null = null;
    await registry.listProjects(
      {},
      { headers: { "x-request-id": `given-${protocol}` }, onHeader: (h) => (echoed = h.get("x-request-id")) },
    );
    expect(echoed).toBe(`given-${protocol}`);
    await registry.listProjects({}, { onHeader: (h) => (echoed = h.get("x-request-id")) });
    expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
    // Not a plain token: replaced rather than copied into logs.
    await registry.listProjects({}, { headers: { "x-request-id": 'a b"c' }, onHeader: (h) => (echoed = h.get("x-request-id")) });
    expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
    const err = await expectCode(
      t.client(RegistryService, undefined, undefined, protocol).listProjects({}, { headers: { "x-request-id": `bad-${protocol}` } }),
      Code.Unauthenticated,
    );
    expect(err.metadata.get("x-request-id")).toBe(`bad-${protocol}`);
    // Level debug logs every call, successful ones too.
    expect(logs.lines().find((l) => l.request_id === `given-${protocol}`)).toMatchObject({
      level: "debug",
      code: "ok",
      principal: "admin",
    });
    expect(logs.lines().find((l) => l.request_id === `bad-${protocol}`)).toMatchObject({ level: "info", code: "unauthenticated" });
  });

  it("has no metrics listener when ACMS_METRICS_PORT is unset", () => {
    expect(t.config.metricsPort).toBeUndefined();
    expect(t.server.metricsUrl).toBeUndefined();
    // The API's own TCP listener is the only one open (the metrics suite above closed its server).
    expect(listeningServers()).toBe(1);
  });
});

describe("internal errors", () => {
  it("are logged with the request id of their call, as class and stack frames, never the message", () => {
    const logs = memoryLog("info");
    logs.log.internalError(new TypeError("the secret document text"), "rid-7");
    const [line] = logs.lines();
    expect(line).toMatchObject({ level: "error", msg: "internal error", request_id: "rid-7", error: "TypeError" });
    expect((line.stack as string[]).length).toBeGreaterThan(0);
    expect(logs.raw()).not.toContain("secret");
  });
});

describe("config", () => {
  it("validates ACMS_METRICS_PORT and ACMS_LOG_LEVEL with one-line errors", () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ ACMS_METRICS_PORT: " " }).metricsPort).toBeUndefined();
    expect(loadConfig({ ACMS_METRICS_PORT: "9464" }).metricsPort).toBe(9464);
    expect(() => loadConfig({ ACMS_METRICS_PORT: "abc" })).toThrow(/^ACMS_METRICS_PORT must be an integer, got "abc"$/);
    expect(() => loadConfig({ ACMS_METRICS_PORT: "70000" })).toThrow(/^ACMS_METRICS_PORT must be between 0 and 65535/);
    expect(() => loadConfig({ ACMS_PORT: "9464", ACMS_METRICS_PORT: "9464" })).toThrow(/^ACMS_METRICS_PORT must differ from ACMS_PORT/);
    expect(loadConfig({}).logLevel).toBe("info");
    expect(loadConfig({ ACMS_LOG_LEVEL: "debug" }).logLevel).toBe("debug");
    expect(() => loadConfig({ ACMS_LOG_LEVEL: "loud" })).toThrow(/^ACMS_LOG_LEVEL must be "info" or "debug", got "loud"$/);
  });
});

describe("acms serve --metrics-port", () => {
  it("prints where metrics are served, and refuses a busy metrics port in one line", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-metrics-serve-"));
    let err = "";
    const io = {
      env: { ACMS_DATA_DIR: dataDir },
      stdout: { write: (_: string) => true },
      stderr: { write: (s: string) => (err += s) },
      setExitCode: () => undefined,
    };
    let out = "";
    io.stdout.write = (s: string) => ((out += s), true);
    const running = await runServe({ io, port: "0", metricsPort: "0", handleSignals: false });
    try {
      expect(out).toContain(`acms: Prometheus metrics at ${running.server.metricsUrl}`);
      expect((await get(running.server.metricsUrl!)).body).toContain("acms_rpc_calls_total");
      const busy = new URL(running.server.metricsUrl!).port;
      const other = mkdtempSync(join(tmpdir(), "acms-metrics-serve-"));
      try {
        await expect(
          runServe({ io: { ...io, env: { ACMS_DATA_DIR: other } }, port: "0", metricsPort: busy, handleSignals: false }),
        ).rejects.toThrow(
          new RegExp(`^cannot serve metrics on 127\\.0\\.0\\.1:${busy}: the port is already in use \\(set ACMS_METRICS_PORT\\)$`),
        );
      } finally {
        rmSync(other, { recursive: true, force: true });
      }
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
