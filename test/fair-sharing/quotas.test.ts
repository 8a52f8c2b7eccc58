/**
 * Per-principal quotas: a concurrency cap, a rate with RetryInfo (decoded by Connect and grpc-js clients),
 * a per-call cost budget (rows, time), each principal's quota its own, health never throttled.
 */
import * as grpc from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { IndexService, type UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { assertCode, CONTRACT_ENV, drain, failure, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { doc } from "../index/index-fixture.js";
import { GrpcJsGenericClient } from "../interop/grpc-js-generic-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

function retryDelayMs(err: ConnectError): number {
  const [info] = err.findDetails(RetryInfoSchema);
  expect(info?.retryDelay).toBeDefined();
  return Number(info!.retryDelay!.seconds) * 1000 + info!.retryDelay!.nanos / 1e6;
}

async function healthy(t: TestServer): Promise<void> {
  for (let i = 0; i < 20; i++) expect((await t.client(Health, undefined, undefined, "grpc").check({})).status).toBe(ServingStatus.SERVING);
}

describe("concurrency and cost", () => {
  let t: TestServer;
  let w: ContractWorld;

  beforeAll(async () => {
    t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_CONCURRENT: "2", ACMS_QUOTA_RESULT_ROWS: "10" } });
    w = await seedWorld(t);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("a principal's calls past its concurrency cap are RESOURCE_EXHAUSTED; other principals and health are served", async () => {
    const releases: Array<() => void> = [];
    const uploads = [0, 1].map((i) => {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      releases.push(release);
      async function* held(): AsyncIterable<MessageInitShape<typeof UpsertDocumentsRequestSchema>> {
        yield { resourceId: w.guide, documents: [doc(`held/${i}.md`, "held upload")] };
        await released;
      }
      return t.client(IndexService, "writer", undefined, "grpc").upsertDocuments(held());
    });
    // Until both uploads are in flight, a third call may still pass: wait for the cap to bite.
    let err: ConnectError | undefined;
    for (let i = 0; i < 200 && !err; i++) {
      try {
        await t.client(RegistryService, "writer").listProjects({});
        await new Promise((r) => setTimeout(r, 10));
      } catch (e) {
        err = ConnectError.from(e);
      }
    }
    assertCode(err!, Code.ResourceExhausted);
    expect(err!.rawMessage).toMatch(/in flight/);
    expect(retryDelayMs(err!)).toBeGreaterThan(0);
    // Another principal (even with more than two calls at once) and health are not held back.
    await Promise.all([0, 1, 2].map(() => t.client(RegistryService, "other").listProjects({})));
    await healthy(t);
    for (const r of releases) r();
    await Promise.all(uploads);
    await t.client(RegistryService, "writer").listProjects({});
  });

  it("an answer past the per-call row budget is RESOURCE_EXHAUSTED, unary and streamed", async () => {
    const text = t.client(TextBackendService, "writer", w.apiScope);
    expect((await text.search({ query: "common", maxResults: 10 })).results.length).toBe(10);
    const err = await failure(text.search({ query: "common", maxResults: 11 }));
    assertCode(err, Code.ResourceExhausted);
    expect(err.rawMessage).toMatch(/10 rows/);
    const streamed: unknown[] = [];
    const streamErr = await failure(
      (async () => {
        for await (const r of text.searchStream({ query: "common", maxResults: 20 })) streamed.push(r);
      })(),
    );
    assertCode(streamErr, Code.ResourceExhausted);
    expect(streamed.length).toBe(10);
    expect((await drain(text.searchStream({ query: "common", maxResults: 10 }))).length).toBe(10);
  });
});

describe("time", () => {
  let t: TestServer;
  let w: ContractWorld;

  beforeAll(async () => {
    t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_CALL_MS: "500" } });
    w = await seedWorld(t);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("a call past its time budget is DEADLINE_EXCEEDED, and health answers meanwhile", async () => {
    const graph = t.client(GraphBackendService, "writer", w.apiScope, "grpc");
    const vars = Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(" ");
    const slow = failure(graph.sparqlQuery({ query: `SELECT (COUNT(*) AS ?n) WHERE { ${vars} }` }));
    await healthy(t);
    assertCode(await slow, Code.DeadlineExceeded);
  });
});

describe("rate", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_RATE: "2", ACMS_QUOTA_BURST: "4" } });
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("calls past the burst are RESOURCE_EXHAUSTED with RetryInfo; waiting that long is enough; others are unaffected", async () => {
    const reg = t.client(RegistryService, "reader");
    // Sent all at once: one after another, a slow (loaded) machine could refill the bucket between calls.
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => reg.listProjects({})));
    const passed = outcomes.filter((o) => o.status === "fulfilled").length;
    const refusal = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(passed).toBeGreaterThanOrEqual(4);
    expect(refusal).toBeDefined();
    const err = ConnectError.from(refusal!.reason);
    assertCode(err, Code.ResourceExhausted);
    const delay = retryDelayMs(err);
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(500);
    // Another principal's bucket is full, and health is not counted at all.
    for (let i = 0; i < 4; i++) await t.client(RegistryService, "admin").listProjects({});
    await healthy(t);

    // grpc-js reads the same RetryInfo from the grpc-status-details-bin trailer.
    const g = new GrpcJsGenericClient(`127.0.0.1:${t.server.port}`);
    try {
      const gOutcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          g.unary(RegistryService.method.listProjects, {}, GrpcJsGenericClient.metadata(t.keys.reader)).then(
            () => undefined,
            (e: grpc.ServiceError) => e,
          ),
        ),
      );
      const gErr = gOutcomes.find((e) => e !== undefined);
      if (!gErr) throw new Error("grpc-js calls were never refused");
      expect(gErr.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const [raw] = gErr.metadata.get("grpc-status-details-bin");
      const status = fromBinary(StatusSchema, typeof raw === "string" ? Buffer.from(raw, "base64") : raw);
      const info = status.details.map((d) => anyUnpack(d, RetryInfoSchema)).find((x) => x !== undefined);
      expect(info?.retryDelay).toBeDefined();
      // Waiting as long as RetryInfo says is enough. Not the batch's first refusal: a loaded machine refills a
      // token while the batch is still arriving and a later call of the batch spends it (CI flake). A refusal
      // with no call after it: the bucket is empty now (a call that passes only means it had refilled).
      let last: ConnectError | undefined;
      for (let i = 0; i < 50 && !last; i++) {
        try {
          await reg.listProjects({});
        } catch (e) {
          last = ConnectError.from(e);
        }
      }
      expect(last).toBeDefined();
      assertCode(last!, Code.ResourceExhausted);
      await new Promise((r) => setTimeout(r, retryDelayMs(last!) + 20));
      await reg.listProjects({});
    } finally {
      g.close();
    }
  });
});
