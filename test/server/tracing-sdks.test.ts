import { randomBytes } from "node:crypto";
import { scenario, runSdkScenario, SDKS, type Sdk } from "../clients/scenario/run-sdk-scenarios.js";
import { startCollector, type Collector } from "../support/otel-collector.js";
import { spawnServer, type SpawnedServer } from "../support/spawned-server.js";

// Each SDK passes its own trace context (Go: the call's outgoing gRPC metadata; Python: the `headers` call
// option; TypeScript: Connect's `headers` call option): running the shared scenario in a trace of its own, every
// call the server traced continues that trace, as a child of the caller's span, over a real collector.

const SERVER = 2;

let collector: Collector;
let t: SpawnedServer;

/** The RPC each scenario call makes. */
const RPC: Record<string, string> = {
  createProject: "acms.v1.RegistryService/CreateProject",
  registerResource: "acms.v1.RegistryService/RegisterResource",
  upsertDocuments: "acms.v1.IndexService/UpsertDocuments",
  resolveScope: "acms.v1.ScopeService/ResolveScope",
  search: "acms.v1.TextBackendService/Search",
  similaritySearch: "acms.v1.VectorBackendService/SimilaritySearch",
  hybridSearch: "acms.v1.RagService/HybridSearch",
  searchStream: "acms.v1.TextBackendService/SearchStream",
  fetchContent: "acms.v1.RagService/FetchContent",
  storeFragment: "acms.v1.ContextTierService/StoreFragment",
  getFragment: "acms.v1.ContextTierService/GetFragment",
};

beforeAll(async () => {
  collector = await startCollector();
  t = await spawnServer({ ACMS_EMBEDDING_DIM: "4", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "20" });
}, 600_000);
afterAll(async () => {
  await t?.close();
  await collector?.close();
});

test.each<Sdk>(SDKS)(
  "the %s SDK's traceparent is continued by the server span of every call of the scenario",
  async (sdk) => {
    const traceId = randomBytes(16).toString("hex");
    const spanId = randomBytes(8).toString("hex");
    const project = `local/traced-${sdk}-${randomBytes(4).toString("hex")}`;
    const lines = await runSdkScenario(sdk, { url: t.url, apiKey: t.keys.writer, project, traceparent: `00-${traceId}-${spanId}-01` });
    // Every step up to the fragment's recall answered (the erasure steps after them are the scenario test's).
    const recalled = scenario.steps.findIndex((s) => s.tags?.includes("erasure"));
    expect(lines.slice(0, recalled)).toEqual(scenario.steps.slice(0, recalled).map((s, i) => `ok ${i + 1} ${s.name}`));
    const wanted = new Set(scenario.steps.slice(0, recalled).map((s) => RPC[s.call]));
    const spans = await collector.waitFor((all) => {
      const got = new Set(all.filter((s) => s.traceId === traceId && s.kind === SERVER).map((s) => s.name));
      return [...wanted].every((name) => got.has(name));
    });
    const calls = spans.filter((s) => s.traceId === traceId && s.kind === SERVER);
    for (const call of calls) expect({ name: call.name, parent: call.parentSpanId }).toEqual({ name: call.name, parent: spanId });
    // The engine calls of the searches sit under their call spans, in the same trace.
    const search = calls.find((s) => s.name === "acms.v1.TextBackendService/Search")!;
    expect(spans.filter((s) => s.parentSpanId === search.spanId).map((s) => s.name)).toContain("text.search");
  },
  600_000,
);
