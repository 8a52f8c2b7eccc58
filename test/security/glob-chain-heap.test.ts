/**
 * Red team, finding 1 of issue 24 (critical): a read-only key ran the server out of heap with 94 chained
 * NarrowScope calls of 256 exclude globs each, or six ResolveScope calls of 256 globs such as
 * `{001..999}{001..999}{001..999}{001..999}` (~600 MiB each). Now: a scope chain holds at most
 * SCOPE_GLOB_BUDGET globs and automaton states (INVALID_ARGUMENT naming the field, as API.md has oversize
 * input), padded ranges compile to digit classes, and the caches of compiled views and of stored scopes are
 * bounded by bytes.
 */
import { Code } from "@connectrpc/connect";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ScopeCache, toStoredScopeRow } from "../../src/adapters/kit/scope-rows.js";
import { compileGlob } from "../../src/domain/glob-matcher.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { SCOPE_GLOB_BUDGET } from "../../src/domain/scope-glob-budget.js";
import type { ScopeStore } from "../../src/ports/scope-store.js";
import { ScopeViewCache } from "../../src/server/access/scope-view-cache.js";
import { CONTRACT_ENV, expectBadField, expectCode, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { sampleScope } from "../scope/scope-store-suite.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const BOMB = "{001..999}{001..999}{001..999}{001..999}";

describe("over the wire", () => {
  let t: TestServer;
  let w: ContractWorld;

  beforeAll(async () => {
    t = await startTestServer({ env: CONTRACT_ENV });
    w = await seedWorld(t);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("a chain of NarrowScope calls stops at the chain's glob count, naming exclude_paths; the parent still serves", async () => {
    const globs = (tag: string) => Array.from({ length: 256 }, (_, i) => `${tag}${i}/**`);
    const { scope: root } = await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], excludePaths: globs("a") });
    const { scope: child } = await t.client(ScopeService, "reader", root!.scopeId).narrowScope({ excludePaths: globs("b") });
    expect(child!.excludePaths).toHaveLength(SCOPE_GLOB_BUDGET.maxGlobs);
    // Repeating the chain's own globs adds nothing, so it is not refused.
    await t.client(ScopeService, "reader", child!.scopeId).narrowScope({ excludePaths: ["a0/**", "b0/**"] });
    await expectBadField(t.client(ScopeService, "reader", child!.scopeId).narrowScope({ excludePaths: ["c/**"] }), "exclude_paths");
    expect((await t.client(ScopeService, "reader").getScope({ scopeId: child!.scopeId })).scope!.excludePaths).toHaveLength(512);
  });

  it("256 padded-range globs are refused by the compiled-size budget, not compiled to hundreds of MiB", async () => {
    const globs = Array.from({ length: 256 }, (_, i) => `${BOMB}${i}`);
    const fields = await expectBadField(
      t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], includePaths: globs }),
      "include_paths",
    );
    expect(fields).toEqual(["include_paths"]);
  });

  it("costly globs within the count are refused once their automata pass the budget", async () => {
    // Each about 4,300 states (a negative range is enumerated): ten of them pass the 40,000-state budget.
    const globs = Array.from({ length: 64 }, (_, i) => `{-500..499}/${i}`);
    await expectBadField(t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], excludePaths: globs }), "exclude_paths");
    await expectBadField(t.client(ScopeService, "writer", w.apiScope).narrowScope({ excludePaths: globs }), "exclude_paths");
    // A bad glob is still named by its index, with the budget's refusal beside it.
    await expectCode(
      t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"], includePaths: ["+(a)"], excludePaths: globs }),
      Code.InvalidArgument,
    );
  });
});

describe("brace expansion", () => {
  it("a padded range compiles to digit classes, not one branch per value", () => {
    expect(compileGlob(BOMB).states).toBeLessThan(200);
    const m = compileGlob("f{001..120}.md");
    for (const [path, ok] of [
      ["f001.md", true],
      ["f099.md", true],
      ["f120.md", true],
      ["f121.md", false],
      ["f000.md", false],
      ["f1.md", false],
      ["f0100.md", false],
    ] as const) {
      expect([path, m.matches(path)]).toEqual([path, ok]);
    }
    // Padded to the wider bound, as bash expands it.
    expect(compileGlob("{01..100}").matches("001")).toBe(true);
    expect(compileGlob("{01..100}").matches("01")).toBe(false);
  });
});

describe("caches bounded by bytes", () => {
  const heavy = (n: number): ResourceScope =>
    sampleScope({ scopeId: `01JSCOPESCOPESCOPESCOPES${String(n).padStart(2, "0")}`, includePaths: [`{-500..499}/${n}`], excludePaths: [] });

  it("the compiled-view cache holds at most its byte budget, however few the entries", () => {
    const store = {} as ScopeStore;
    const views = new ScopeViewCache(store, { size: 10_000, maxBytes: 8 * 1024 * 1024 });
    for (let i = 0; i < 20; i++) views.viewOf(heavy(i));
    expect(views.bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(views.entries).toBeLessThan(20);
    expect(views.entries).toBeGreaterThan(0);
    // The most recent stays cached.
    expect(views.peek(heavy(19).scopeId)).toBeDefined();
    expect(views.peek(heavy(0).scopeId)).toBeUndefined();
  });

  it("the stored-scope cache holds at most its byte budget", () => {
    const cache = new ScopeCache(10_000, 1024 * 1024);
    for (let i = 0; i < 50; i++) {
      const s = sampleScope({ excludePaths: Array.from({ length: 100 }, (_, k) => `${"x".repeat(900)}${k}`) });
      cache.remember(s, toStoredScopeRow(s).body);
    }
    expect(cache.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.bytes).toBeGreaterThan(0);
  });
});
