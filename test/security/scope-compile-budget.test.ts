/**
 * Red team, finding 5 of issue 24: one ResolveScope of 256+256 costly globs held the serving thread ~1.6 s
 * (health waited too). Now a scope's globs compile to at most SCOPE_GLOB_BUDGET.maxStates automaton states
 * in all (about 1,700 states per ms: tens of ms, measured in bench/scope-bench.ts), validation stops at the
 * first glob past it, and the request over it is refused. No wall-clock bound here: the tests assert the
 * refusal and the bound on what any accepted scope compiles to.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { compileGlob, MAX_GLOB_STATES } from "../../src/domain/glob-matcher.js";
import { createScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { SCOPE_GLOB_BUDGET, scopeGlobViolations } from "../../src/domain/scope-glob-budget.js";
import { CONTRACT_ENV, seedWorld } from "../contract/contract-fixture.js";
import { sampleScope } from "../scope/scope-store-suite.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const costly = (tag: string, n = 256) => Array.from({ length: n }, (_, i) => `{-500..499}/${tag}${i}`);

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: CONTRACT_ENV });
  await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

it("the 256+256 costly globs of the finding are refused, naming the list that passed the budget", async () => {
  let err: ConnectError | undefined;
  try {
    await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], includePaths: costly("i"), excludePaths: costly("e") });
  } catch (e) {
    err = ConnectError.from(e);
  }
  expect(err?.code).toBe(Code.InvalidArgument);
  expect(err!.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(["include_paths"]);
  expect(err!.rawMessage).toContain(`${SCOPE_GLOB_BUDGET.maxStates} automaton states`);
});

it("the largest scope accepted compiles to at most the budget, and its view holds no more", async () => {
  // As many costly globs as fit: each one's states counted by the matcher itself.
  const one = compileGlob("{-500..499}/x0").states;
  const fit = Math.floor(SCOPE_GLOB_BUDGET.maxStates / (one + 10));
  const { scope } = await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], includePaths: costly("x", fit) });
  expect(scope!.includePaths).toHaveLength(fit);
  const view = createScopedBackendView(sampleScope({ includePaths: scope!.includePaths, excludePaths: scope!.excludePaths }));
  expect(view.paths.states).toBeGreaterThan(SCOPE_GLOB_BUDGET.maxStates / 2);
  expect(view.paths.states).toBeLessThanOrEqual(SCOPE_GLOB_BUDGET.maxStates);
  // One more glob of the kind is over it.
  const more = await t
    .client(ScopeService, "reader")
    .resolveScope({ projects: ["local/api"], includePaths: costly("x", fit + 1) })
    .then(
      () => undefined,
      (e: unknown) => ConnectError.from(e).code,
    );
  expect(more).toBe(Code.InvalidArgument);
});

it("validation of any request compiles at most the budget and one glob", () => {
  // Every glob at the per-pattern cap: the check must stop after the first few, whatever the count.
  const biggest = ["{-500..499}{-500..499}/a", "{-500..499}{-500..499}/b"].map((p) => compileGlob(p).states);
  expect(Math.max(...biggest)).toBeLessThanOrEqual(MAX_GLOB_STATES);
  const compiled: string[] = [];
  const patterns = Array.from({ length: 256 }, (_, i) => `{-500..499}{-500..499}/${i}`);
  const proxy = new Proxy(patterns, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) compiled.push(key);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const violations = scopeGlobViolations([{ field: "exclude_paths", patterns: proxy }]);
  expect(violations.map((v) => v.field)).toEqual(["exclude_paths"]);
  // Each glob is read once to key it and once to compile it: only the first few are ever compiled.
  const compiledGlobs = new Set(compiled.filter((k, i) => compiled.indexOf(k) !== i));
  expect(compiledGlobs.size).toBeLessThanOrEqual(Math.ceil(SCOPE_GLOB_BUDGET.maxStates / Math.min(...biggest)) + 1);
});
