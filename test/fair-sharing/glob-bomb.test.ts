/**
 * Fair sharing, path globs: globs that made a backtracking matcher take minutes against long file names are
 * matched at once (or refused, for extglob groups), and health keeps answering meanwhile.
 */
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { CONTRACT_ENV, expectBadField, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { doc, upsert } from "../index/index-fixture.js";
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

it("alternatives that a regex matcher backtracks on filter long file names at once; health answers meanwhile", async () => {
  // Names of 45 to 360 letters; {a,aa} thirty times against the 45-letter one took micromatch 90 s.
  const names = [45, 90, 360].map((n) => `${"a".repeat(n)}c`);
  await upsert(t, "writer", [{ resourceId: w.guide, documents: names.map((n) => doc(n, "globbomb words")) }]);
  const scopes = t.client(ScopeService, "writer");
  const health = t.client(Health, undefined, undefined, "grpc");
  for (const k of [30, 60, 150]) {
    const { scope } = await scopes.resolveScope({
      projects: ["local/api"],
      includePaths: ["{a,aa}".repeat(k) + "b", `${"{a,aa}".repeat(20)}*c`],
    });
    const text = t.client(TextBackendService, "writer", scope!.scopeId);
    const search = text.search({ query: "globbomb" });
    const checks = await healthChecksWhile(health, search);
    // Only the second glob matches: names of at least 20 letters ending in c.
    expect((await search).results.map((r) => r.path).sort()).toEqual([...names].sort());
    expect(checks.every((s) => s === ServingStatus.SERVING)).toBe(true);
  }
});

it("extglob groups are INVALID_ARGUMENT naming the glob, not a minute of backtracking", async () => {
  const scopes = t.client(ScopeService, "writer");
  for (const glob of ["+(a|aa)", "+(a*)", "*(a*)b", "@(a|aa)x"]) {
    await expectBadField(scopes.resolveScope({ projects: ["local/api"], includePaths: [glob] }), "include_paths[0]");
    await expectBadField(t.client(ScopeService, "writer", w.apiScope).narrowScope({ excludePaths: [glob] }), "exclude_paths[0]");
  }
});
