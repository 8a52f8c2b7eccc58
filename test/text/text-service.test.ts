import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { doc, makeResource, makeScope, upsert } from "../index/index-fixture.js";

let t: TestServer;
let api: string;
let web: string;
let child: string;
let secret: string;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_RECENT_WINDOW_MS: "3600000" } });
  api = await makeResource(t, "writer", "local/api", "api");
  web = await makeResource(t, "writer", "local/web", "web");
  secret = await makeResource(t, "other", "other/secret", "secret");
  const { RegistryService } = await import("../../gen/acms/v1/registry_pb.js");
  child = (
    await t.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "api-docs", kind: "docs", parentIds: [api] })
  ).resource!.id;
  const shared = "zebra crossing traffic lights";
  await upsert(t, "writer", [
    { resourceId: api, documents: [doc("src/zebra.ts", `${shared} in the api`), doc("secret/zebra.md", `${shared} hidden api notes`)] },
    { resourceId: web, documents: [doc("pages/zebra.md", `${shared} on the web`)] },
    { resourceId: child, documents: [doc("guide/zebra.md", `${shared} guide`)] },
  ]);
  await upsert(t, "other", [{ resourceId: secret, documents: [doc("zebra.md", `${shared} ${shared} other tenant secret`)] }]);
  await upsert(t, "writer", [{ resourceId: web, documents: [doc("old/zebra.md", "zebra old version")] }]);
  await upsert(t, "writer", [{ resourceId: web, documents: [doc("old/zebra.md", "a rewritten page about giraffes")] }]);
  for (let i = 0; i < 30; i++) {
    await upsert(t, "writer", [{ resourceId: api, documents: [doc(`bulk/${i}.md`, `okapi ${"okapi ".repeat(i % 5)}sample ${i}`)] }]);
  }
});
afterAll(async () => {
  await t.close(true);
});

afterEach(() => {
  expect(preventedLeaks.prevented).toBe(0);
});

const search = (principal: string, scopeId: string, query: string, maxResults?: number) =>
  t.client(TextBackendService, principal, scopeId).search({ query, maxResults });
const resourcesOf = async (p: ReturnType<typeof search>) => [...new Set((await p).results.map((r) => r.resourceId))].sort();

describe("TextBackendService isolation", () => {
  it("searches only the scope's projects, never another tenant's", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    expect(await resourcesOf(search("writer", s, "zebra crossing"))).toEqual([api, child].sort());
    const o = await makeScope(t, "other", { projects: ["other/secret"] });
    expect(await resourcesOf(search("other", o, "zebra crossing api web guide"))).toEqual([secret]);
  });

  it("refuses a scope of another principal as NOT_FOUND and a missing scope as FAILED_PRECONDITION", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    await expectCode(search("other", s, "zebra"), Code.NotFound);
    await expectCode(search("admin", s, "zebra"), Code.NotFound);
    await expectCode(t.client(TextBackendService, "writer").search({ query: "zebra" }), Code.FailedPrecondition);
  });

  it("honours excluded resources (with descendants) and denied ids", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api", "local/web"], excludeResources: [api] });
    expect(await resourcesOf(search("writer", s, "zebra crossing"))).toEqual([web]);
    const only = await makeScope(t, "writer", { projects: ["local/api", "local/web"], includeResources: [child] });
    expect(await resourcesOf(search("writer", only, "zebra crossing"))).toEqual([child]);
    const parent = await makeScope(t, "writer", { projects: ["local/api", "local/web"] });
    const { scope: narrowed } = await t.client(ScopeService, "writer", parent).narrowScope({ denyResourceIds: [web] });
    expect(await resourcesOf(search("writer", narrowed!.scopeId, "zebra crossing"))).toEqual([api, child].sort());
  });

  it("honours path filters without losing recall", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"], excludePaths: ["secret/**", "bulk/**"] });
    const paths = (await search("writer", s, "zebra crossing api notes hidden")).results.map((r) => r.path).sort();
    expect(paths).toEqual(["guide/zebra.md", "src/zebra.ts"]);
    const inc = await makeScope(t, "writer", { projects: ["local/api"], includePaths: ["bulk/1*.md"] });
    const bulk = (await search("writer", inc, "okapi", 5)).results;
    expect(bulk).toHaveLength(5);
    expect(bulk.every((r) => /^bulk\/1\d*\.md$/.test(r.path))).toBe(true);
  });

  it("sees superseded versions only through recent and all", async () => {
    const current = await makeScope(t, "writer", { projects: ["local/web"] });
    const recent = await makeScope(t, "writer", { projects: ["local/web"], temporalScope: "recent" });
    const all = await makeScope(t, "writer", { projects: ["local/web"], temporalScope: "all" });
    const paths = async (s: string) => (await search("writer", s, "zebra old version")).results.map((r) => r.path).sort();
    expect(await paths(current)).toEqual(["pages/zebra.md"]);
    expect(await paths(recent)).toEqual(["old/zebra.md", "pages/zebra.md"]);
    expect(await paths(all)).toEqual(["old/zebra.md", "pages/zebra.md"]);
  });
});

describe("TextBackendService answers", () => {
  it("carries scope_id, exhaustive and index_generation, ordered by score then uko_uri, scores in [0, 1]", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    const r = await search("writer", s, "okapi", 7);
    expect(r.scopeId).toBe(s);
    expect(r.exhaustive).toBe(false);
    expect(r.indexGeneration).toBeGreaterThan(0n);
    expect(r.results).toHaveLength(7);
    for (let i = 1; i < r.results.length; i++) {
      const [a, b] = [r.results[i - 1], r.results[i]];
      expect(a.score > b.score || (a.score === b.score && a.ukoUri < b.ukoUri)).toBe(true);
    }
    expect(r.results.every((x) => x.score >= 0 && x.score <= 1 && x.content.includes("okapi"))).toBe(true);
    const everything = await search("writer", s, "okapi", 1000);
    expect(everything.exhaustive).toBe(true);
    expect(everything.results).toHaveLength(30);
  });

  it("streams the same results in the same order, over Connect and gRPC", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api", "local/web"], temporalScope: "all" });
    for (const protocol of ["connect", "grpc"] as const) {
      const c = t.client(TextBackendService, "writer", s, protocol);
      const unary = await c.search({ query: "okapi zebra", maxResults: 25 });
      const streamed = [];
      for await (const m of c.searchStream({ query: "okapi zebra", maxResults: 25 })) streamed.push(m.result);
      expect(streamed).toEqual(unary.results);
      expect(streamed).toHaveLength(25);
    }
  });

  it("stops a stream the client cancels, and keeps serving", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    const ctl = new AbortController();
    const got = [];
    const err = await (async () => {
      try {
        for await (const m of t
          .client(TextBackendService, "writer", s)
          .searchStream({ query: "okapi", maxResults: 30 }, { signal: ctl.signal })) {
          got.push(m);
          if (got.length === 2) ctl.abort();
        }
      } catch (e) {
        return ConnectError.from(e);
      }
      return undefined;
    })();
    // The client reports its own abort as CANCELED or, depending on the transport, as the AbortError it raised.
    expect(err).toBeDefined();
    expect(err!.code === Code.Canceled || /abort/i.test(err!.message)).toBe(true);
    expect((await search("writer", s, "okapi", 3)).results).toHaveLength(3);
  });

  it("stops a stream the client leaves mid-way, and keeps serving", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    const got = [];
    for await (const m of t.client(TextBackendService, "writer", s, "grpc").searchStream({ query: "okapi", maxResults: 30 })) {
      got.push(m.result!.ukoUri);
      if (got.length === 2) break;
    }
    expect(got).toHaveLength(2);
    const unary = await search("writer", s, "okapi", 2);
    expect(unary.results.map((r) => r.ukoUri)).toEqual(got);
  });

  it("validates the request", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    expect(await badFields(search("writer", s, "   "))).toEqual(["query"]);
    expect(await badFields(search("writer", s, "okapi", 0))).toEqual(["max_results"]);
    expect(await badFields(search("writer", s, "okapi", -3))).toEqual(["max_results"]);
    expect(await badFields(search("writer", s, "okapi", 1001))).toEqual(["max_results"]);
    const stream = async () => {
      for await (const _ of t.client(TextBackendService, "writer", s).searchStream({ query: "" })) void _;
    };
    expect(await badFields(stream())).toEqual(["query"]);
  });

  it("answers a query with no indexable terms or hostile syntax without error", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    expect((await search("writer", s, "?!* -- ()")).results).toEqual([]);
    for (const q of ['zebra" OR rid:*', "NEAR(zebra", "zebra AND NOT", "body: zebra"]) {
      const r = await search("writer", s, q);
      expect(r.results.every((x) => x.resourceId === api || x.resourceId === child)).toBe(true);
    }
  });

  it("defaults max_results to 20", async () => {
    const s = await makeScope(t, "writer", { projects: ["local/api"] });
    expect((await search("writer", s, "okapi")).results).toHaveLength(20);
  });
});
