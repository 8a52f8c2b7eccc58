/**
 * Graph queries of different tenants are queued apart and served in turn on a pool of workers: one tenant
 * flooding slow queries delays another's by at most one query per worker, the time limit counts running
 * time only, and a timed-out query's worker is replaced without making other tenants wait for a reload.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { assertCode, CONTRACT_ENV, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { healthChecksWhile } from "./health-checks-while.js";

let t: TestServer;
let w: ContractWorld;
const LIMIT_MS = 1500;

beforeAll(async () => {
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_SPARQL_TIMEOUT_MS: String(LIMIT_MS), ACMS_GRAPH_WORKERS: "2" } });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

/** A query that runs far past any time limit here (a 12-way cartesian product). */
const SLOW = `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(" ")} }`;

it("tenant A flooding slow queries does not make tenant B's query miss its time limit", async () => {
  const a = t.client(GraphBackendService, "writer", w.apiScope, "grpc");
  const b = t.client(GraphBackendService, "other", w.otherScope, "grpc");
  // Eight slow queries of A: with one queue for all, B's query would wait behind four rounds of two
  // workers (6 s) and pass its 1.5 s limit before it started (the old behaviour: DEADLINE_EXCEEDED).
  const flood = Array.from({ length: 8 }, () =>
    a.sparqlQuery({ query: SLOW }).then(
      () => "answered",
      (e: unknown) => ConnectError.from(e).code,
    ),
  );
  await new Promise((r) => setTimeout(r, 50));
  for (let round = 0; round < 3; round++) {
    const answer = b.sparqlQuery({ query: "SELECT ?s WHERE { ?s ?p ?o } LIMIT 5" });
    const checks = await healthChecksWhile(t.client(Health, undefined, undefined, "grpc"), answer);
    expect((await answer).exhaustive).toBe(true);
    expect(checks.every((s) => s === ServingStatus.SERVING)).toBe(true);
  }
  const codes = await Promise.all(flood);
  // A's own queries stop at the time limit (or could not get a worker in time), never as failures.
  for (const code of codes) expect([Code.DeadlineExceeded, Code.ResourceExhausted, "answered"]).toContain(code);
  // The pool is whole again: A's and B's next queries answer.
  await a.sparqlQuery({ query: "ASK { ?s ?p ?o }" });
  await b.sparqlQuery({ query: "ASK { ?s ?p ?o }" });
});

it("a tenant's queries waiting past the tenant's queue cap are RESOURCE_EXHAUSTED with RetryInfo, not run", async () => {
  const a = t.client(GraphBackendService, "writer", w.apiScope, "grpc");
  const ac = new AbortController();
  const flood = Array.from({ length: 70 }, () =>
    a.sparqlQuery({ query: SLOW }, { signal: ac.signal }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    ),
  );
  const first = await Promise.race(
    flood.map((p) => p.then((e) => (e?.code === Code.ResourceExhausted ? e : new Promise<never>(() => undefined)))),
  );
  assertCode(first, Code.ResourceExhausted);
  expect(first.rawMessage).toMatch(/waiting/);
  expect(first.findDetails(RetryInfoSchema).length).toBe(1);
  // Cancelling the rest frees their places; B is served meanwhile and after.
  await t.client(GraphBackendService, "other", w.otherScope, "grpc").sparqlQuery({ query: "ASK { ?s ?p ?o }" });
  ac.abort();
  await Promise.all(flood);
  await t.client(GraphBackendService, "other", w.otherScope, "grpc").sparqlQuery({ query: "ASK { ?s ?p ?o }" });
});
