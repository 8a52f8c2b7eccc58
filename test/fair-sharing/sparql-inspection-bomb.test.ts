/**
 * Fair sharing, SPARQL inspection: queries built to make inspection quadratic (long runs of one letter)
 * are answered, and health keeps answering while they run.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { MAX_SPARQL_LENGTH } from "../../src/domain/inspect-sparql-query.js";
import { assertCode, CONTRACT_ENV, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { healthChecksWhile } from "./health-checks-while.js";

let t: TestServer;
let w: ContractWorld;

beforeAll(async () => {
  t = await startTestServer({ env: CONTRACT_ENV });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

/** The code a call ends with (OK when it answers). */
async function outcome(call: Promise<unknown>): Promise<Code | "OK"> {
  try {
    await call;
    return "OK";
  } catch (e) {
    const err = assertCode(ConnectError.from(e), ConnectError.from(e).code);
    return err.code;
  }
}

it("queries of one letter repeated up to the length cap are answered, and health answers meanwhile", async () => {
  const graph = t.client(GraphBackendService, "writer", w.apiScope, "grpc");
  // The old tokenizer took about 3 s for 16 K of "€" and about a minute for 64 K, all on the serving thread
  // (so this test ran into its time limit, and each health check into its deadline).
  const bombs: Array<Promise<Code | "OK">> = [];
  const sizes: number[] = [];
  for (const letter of ["é", "€", "𝔸", "a-"]) {
    for (const size of [4096, 16384, MAX_SPARQL_LENGTH - 64]) {
      sizes.push(size);
      bombs.push(outcome(graph.sparqlQuery({ query: `SELECT * WHERE { ${letter.repeat(Math.floor(size / letter.length))} }` })));
    }
  }
  const health = t.client(Health, undefined, undefined, "grpc");
  const checks = await healthChecksWhile(health, Promise.all(bombs));
  const codes = await Promise.all(bombs);
  // Junk in a group is a syntax error: the engine refuses it, with a clear code, and nothing waits on it.
  expect(codes).toEqual(sizes.map(() => Code.InvalidArgument));
  expect(checks.length).toBeGreaterThan(0);
  expect(checks.every((s) => s === ServingStatus.SERVING)).toBe(true);
});
