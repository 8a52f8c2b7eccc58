/**
 * Red team, finding 7 of issue 24: `GET /console/api/scopes` was outside every quota (300 requests all
 * answered under a 20/s limit). Now it spends the same per-principal quotas as the RPCs (one ledger): over
 * them is 429 with Retry-After (RESOURCE_EXHAUSTED's HTTP status), an RPC after a burst of console requests
 * is refused too, and another principal is not touched.
 */
import http from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { CONTRACT_ENV, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

function get(port: number, path: string, key: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

let t: TestServer;
let w: ContractWorld;

beforeAll(async () => {
  // A sustained rate so low that no token comes back during the test: exactly the burst is admitted.
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_RATE: "1", ACMS_QUOTA_BURST: "200" } });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

it("console requests spend the principal's RPC quota, and past it are 429 with Retry-After", async () => {
  const started = performance.now();
  const { scope } = await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"] });
  // 150 console requests of a burst of 200: all answered, and they leave about 50 calls for the RPCs.
  for (let i = 0; i < 150; i++) expect((await get(t.server.port, "/console/api/scopes?page_size=1", t.keys.reader)).status).toBe(200);
  let admitted = 0;
  let refusedRpc: ConnectError | undefined;
  for (let i = 0; i < 100; i++) {
    try {
      await t.client(ScopeService, "reader").getScope({ scopeId: scope!.scopeId });
      admitted += 1;
    } catch (e) {
      refusedRpc = ConnectError.from(e);
    }
  }
  // At most what the console left, plus what the rate of 1/s gave back meanwhile.
  expect(admitted).toBeLessThanOrEqual(49 + Math.ceil((performance.now() - started) / 1000) + 1);
  expect(refusedRpc?.code).toBe(Code.ResourceExhausted);
  expect(refusedRpc!.findDetails(RetryInfoSchema)).toHaveLength(1);
  // Out of tokens (one may have come back since): a console request is refused now.
  const tries = [];
  for (let i = 0; i < 3; i++) tries.push(await get(t.server.port, "/console/api/scopes", t.keys.reader));
  const r = tries.find((x) => x.status === 429)!;
  expect(r?.status).toBe(429);
  expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(r.body)).toMatchObject({ code: "resource_exhausted" });
  // Another principal's quota is its own.
  expect((await get(t.server.port, "/console/api/scopes", t.keys.writer)).status).toBe(200);
  expect((await t.client(ScopeService, "writer").getScope({ scopeId: w.apiScope })).scope!.scopeId).toBe(w.apiScope);
});

it("an answer past the per-call byte budget is refused, not sent", async () => {
  const small = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_RESULT_BYTES: "2048" } });
  try {
    const scopes = small.client(ScopeService, "writer");
    await small.client(RegistryService, "writer").createProject({ name: "local/api" });
    await small.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "docs", kind: "docs" });
    for (let i = 0; i < 4; i++) await scopes.resolveScope({ projects: ["local/api"], excludePaths: [`${"x".repeat(600)}/${i}`] });
    expect((await get(small.server.port, "/console/api/scopes?page_size=1", small.keys.writer)).status).toBe(200);
    const r = await get(small.server.port, "/console/api/scopes?page_size=4", small.keys.writer);
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body)).toMatchObject({ code: "resource_exhausted" });
  } finally {
    await small.close(true);
  }
});
