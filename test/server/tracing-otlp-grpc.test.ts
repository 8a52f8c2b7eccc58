import { randomBytes } from "node:crypto";
import { createAcmsClient } from "../../src/index.js";
import { startCollector, type Collector } from "../support/otel-collector.js";
import { spawnServer, type SpawnedServer } from "../support/spawned-server.js";

// OTLP over gRPC: `acms serve` with OTEL_EXPORTER_OTLP_PROTOCOL=grpc (the standard variable) and the endpoint
// of the real collector's gRPC receiver (test/support/otel-collector/) exports there; the collector forwards
// what it received, and the test reads it. Its HTTP receiver is a different port, so a span that arrives came
// over gRPC. The headers of OTEL_EXPORTER_OTLP_HEADERS travel as gRPC metadata (the receiver accepts any).

const SERVER = 2; // OTLP SpanKind

let collector: Collector;
let t: SpawnedServer;

beforeAll(async () => {
  collector = await startCollector();
  t = await spawnServer({
    ACMS_EMBEDDING_DIM: "4",
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.grpcEndpoint,
    OTEL_EXPORTER_OTLP_HEADERS: "x-acms-test=grpc",
    OTEL_SERVICE_NAME: "acms-grpc-export-test",
    OTEL_BSP_SCHEDULE_DELAY: "20",
  });
}, 600_000);

afterAll(async () => {
  await t?.close();
  await collector?.close();
});

test("with OTEL_EXPORTER_OTLP_PROTOCOL=grpc the server's spans reach the collector over OTLP/gRPC, continuing the caller's trace", async () => {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  const acms = createAcmsClient({ baseUrl: t.url, apiKey: t.keys.writer, protocol: "grpc" });
  const project = `local/grpc-export-${randomBytes(4).toString("hex")}`;
  try {
    await acms.registry.createProject({ name: project }, { headers: { traceparent: `00-${traceId}-${spanId}-01` } });
  } finally {
    acms.close();
  }
  const spans = await collector.waitFor((all) => all.some((s) => s.traceId === traceId && s.kind === SERVER));
  const call = spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
  expect({ name: call.name, parent: call.parentSpanId, service: call.resource["service.name"] }).toEqual({
    name: "acms.v1.RegistryService/CreateProject",
    parent: spanId,
    service: "acms-grpc-export-test",
  });
  expect(call.attributes).toMatchObject({ "rpc.system": "grpc", "rpc.method": "CreateProject", "rpc.grpc.status_code": 0 });
}, 120_000);
