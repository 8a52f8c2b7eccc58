import { Code } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { buildFixture, COMMON, docUri, drain, ENV, expectViolation, Q, resolve, WORD, type IsolationFixture } from "./isolation-fixture.js";

let t: TestServer;
let f: IsolationFixture;
/** other's scope over other/secret: no other principal may use or see it. */
let otherScope: ResourceScope;
/** writer's scope over local/api. */
let api: ResourceScope;
let fragmentId: string;
const GHOST_SCOPE = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  f = await buildFixture(t);
  otherScope = await resolve(t, "other", { projects: ["other/secret"] });
  api = await resolve(t, "writer", { projects: ["local/api"] });
  const { fragment } = await t.client(ContextTierService, "other", otherScope.scopeId).storeFragment({
    fragment: { content: "other tenant context", projectName: "other/secret", tier: Tier.HOT },
  });
  fragmentId = fragment!.fragmentId;
}, 120_000);

afterEach(() => {
  expect(preventedLeaks.prevented).toBe(0);
});

afterAll(async () => {
  await t?.close(true);
});

type Call = (principal: string, scopeId: string, protocol: "connect" | "grpc") => Promise<unknown>;

/** Every scoped RPC, unary and streaming, with a request that would be valid in the owner's scope. */
const SCOPED_CALLS: Array<[string, Call]> = [
  ["Search", (p, s, pr) => t.client(TextBackendService, p, s, pr).search({ query: WORD })],
  ["SearchStream", (p, s, pr) => drain(t.client(TextBackendService, p, s, pr).searchStream({ query: WORD }))],
  ["SimilaritySearch", (p, s, pr) => t.client(VectorBackendService, p, s, pr).similaritySearch({ embedding: Q })],
  ["SimilaritySearchStream", (p, s, pr) => drain(t.client(VectorBackendService, p, s, pr).similaritySearchStream({ embedding: Q }))],
  ["SparqlQuery", (p, s, pr) => t.client(GraphBackendService, p, s, pr).sparqlQuery({ query: "SELECT * WHERE { ?s ?p ?o }" })],
  [
    "SparqlQueryStream",
    (p, s, pr) => drain(t.client(GraphBackendService, p, s, pr).sparqlQueryStream({ query: "SELECT * WHERE { ?s ?p ?o }" })),
  ],
  ["GetTriples", (p, s, pr) => t.client(GraphBackendService, p, s, pr).getTriples({ subject: COMMON })],
  ["Traverse", (p, s, pr) => t.client(GraphBackendService, p, s, pr).traverse({ start: COMMON })],
  ["HybridSearch", (p, s, pr) => t.client(RagService, p, s, pr).hybridSearch({ query: WORD, embedding: Q })],
  ["HybridSearchStream", (p, s, pr) => drain(t.client(RagService, p, s, pr).hybridSearchStream({ query: WORD, embedding: Q }))],
  ["FetchContent", (p, s, pr) => t.client(RagService, p, s, pr).fetchContent({ ukoUris: [docUri(f.secret, "readme.md")] })],
  [
    "StoreFragment",
    (p, s, pr) => t.client(ContextTierService, p, s, pr).storeFragment({ fragment: { content: "x", projectName: "other/secret" } }),
  ],
  ["GetFragment", (p, s, pr) => t.client(ContextTierService, p, s, pr).getFragment({ fragmentId })],
  ["PromoteFragment", (p, s, pr) => t.client(ContextTierService, p, s, pr).promoteFragment({ fragmentId })],
  ["DemoteFragment", (p, s, pr) => t.client(ContextTierService, p, s, pr).demoteFragment({ fragmentId })],
  ["EvictLru", (p, s, pr) => t.client(ContextTierService, p, s, pr).evictLru({ tier: Tier.HOT, count: 10 })],
  ["GetForActor", (p, s, pr) => t.client(ContextTierService, p, s, pr).getForActor({ role: Role.STRATEGIST })],
  ["GetMetrics", (p, s, pr) => t.client(ContextTierService, p, s, pr).getMetrics({})],
  ["NarrowScope", (p, s, pr) => t.client(ScopeService, p, s, pr).narrowScope({ denyResourceIds: [f.secret] })],
  ["ValidateProjectScope", (p, s, pr) => t.client(ScopeService, p, s, pr).validateProjectScope({ requestedProjects: ["other/secret"] })],
  ["ValidateResourceScope", (p, s, pr) => t.client(ScopeService, p, s, pr).validateResourceScope({ requestedResourceIds: [f.secret] })],
];

/** Calls that change tier placement. */
const MOVES = new Set(["StoreFragment", "PromoteFragment", "DemoteFragment", "EvictLru"]);

/** The message with every ULID replaced, so answers about different ids can be compared. */
const shape = (msg: string) => msg.replace(/[0-9A-HJKMNP-TV-Z]{26}/gi, "<id>");

describe("another principal's scope id", () => {
  it.each(SCOPED_CALLS)(
    "%s answers NOT_FOUND, exactly as for an unknown scope, for every other principal and protocol",
    async (name, call) => {
      for (const principal of ["writer", "reader", "admin"]) {
        for (const protocol of ["connect", "grpc"] as const) {
          const taken = await expectCode(call(principal, otherScope.scopeId, protocol), Code.NotFound);
          const unknown = await expectCode(call(principal, GHOST_SCOPE, protocol), Code.NotFound);
          expect(shape(taken.rawMessage)).toBe(shape(unknown.rawMessage));
          expect(taken.details).toEqual([]);
          // Spellings of the same id do not reach it either.
          for (const spelled of [otherScope.scopeId.toLowerCase(), ` ${otherScope.scopeId} `, `${api.scopeId}, ${otherScope.scopeId}`]) {
            await expectCode(call(principal, spelled, protocol), Code.NotFound);
          }
        }
      }
      // The owner can use it: the refusal above was about the principal, not the request (calls that move
      // fragments are left out, so the next test can check that nothing above moved the owner's fragment).
      if (!MOVES.has(name)) await call("other", otherScope.scopeId, "connect");
    },
  );

  it("GetScope does not show it, and answers as for an unknown id", async () => {
    for (const principal of ["writer", "reader", "admin"]) {
      const taken = await expectCode(t.client(ScopeService, principal).getScope({ scopeId: otherScope.scopeId }), Code.NotFound);
      const unknown = await expectCode(t.client(ScopeService, principal).getScope({ scopeId: GHOST_SCOPE }), Code.NotFound);
      expect(shape(taken.rawMessage)).toBe(shape(unknown.rawMessage));
    }
    expect((await t.client(ScopeService, "other").getScope({ scopeId: otherScope.scopeId })).scope!.resourceIds).toEqual(
      otherScope.resourceIds,
    );
  });

  it("the other tenant's fragment was neither moved nor evicted by any of those calls", async () => {
    const { fragment } = await t.client(ContextTierService, "other", otherScope.scopeId).getFragment({ fragmentId });
    expect(fragment!.tier).toBe(Tier.HOT);
    expect(fragment!.content).toBe("other tenant context");
  });

  it("a scoped call without the header is FAILED_PRECONDITION, before anything else is looked at", async () => {
    await expectCode(t.client(TextBackendService, "writer").search({ query: WORD }), Code.FailedPrecondition);
    for (const [, call] of SCOPED_CALLS) {
      for (const protocol of ["connect", "grpc"] as const) await expectCode(call("writer", "", protocol), Code.FailedPrecondition);
    }
  });
});

describe("Connect JSON over HTTP/1.1 (the second listener)", () => {
  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`${t.server.url}/acms.v1.TextBackendService/Search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  it("scopes the same way, and duplicated or smuggled scope headers reach nothing", async () => {
    const auth = { authorization: `Bearer ${t.keys.writer}` };
    const ok = await post({ ...auth, "acms-scope": api.scopeId }, { query: WORD, maxResults: 1000 });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { results: Array<{ resourceId: string }> };
    for (const r of body.results) expect(api.resourceIds).toContain(r.resourceId);
    const dup = await fetch(`${t.server.url}/acms.v1.TextBackendService/Search`, {
      method: "POST",
      headers: [
        ["content-type", "application/json"],
        ["authorization", `Bearer ${t.keys.writer}`],
        ["acms-scope", api.scopeId],
        ["acms-scope", otherScope.scopeId],
      ],
      body: JSON.stringify({ query: WORD }),
    });
    expect(((await dup.json()) as { code: string }).code).toBe("not_found");
    const smuggled = await post({ ...auth, "acms-scope": otherScope.scopeId }, { query: WORD, scopeId: api.scopeId });
    expect(((await smuggled.json()) as { code: string }).code).not.toBe(undefined);
    expect(smuggled.status).not.toBe(200);
    const twoKeys = await fetch(`${t.server.url}/acms.v1.TextBackendService/Search`, {
      method: "POST",
      headers: [
        ["content-type", "application/json"],
        ["authorization", `Bearer ${t.keys.reader}`],
        ["authorization", `Bearer ${t.keys.other}`],
        ["acms-scope", otherScope.scopeId],
      ],
      body: JSON.stringify({ query: WORD }),
    });
    expect(twoKeys.status).not.toBe(200);
  });
});

describe("validation RPCs", () => {
  const scope = () => t.client(ScopeService, "writer", api.scopeId);

  it("name every project outside the scope, whether or not it exists", async () => {
    const v = await expectViolation(
      scope().validateProjectScope({ requestedProjects: ["local/api", "local/web", "other/secret", "nobody/nothing"] }),
    );
    expect([...v.projectNames].sort()).toEqual(["local/web", "nobody/nothing", "other/secret"]);
    expect([...v.scopeProjectNames]).toEqual(["local/api"]);
    await scope().validateProjectScope({ requestedProjects: ["local/api"] });
  });

  it("name every resource outside the scope, existing or not, other tenant's or merely not linked", async () => {
    const v = await expectViolation(
      scope().validateResourceScope({ requestedResourceIds: [f.apiRoot, f.secret, f.leaf, f.web, GHOST_SCOPE] }),
    );
    expect([...v.resourceIds].sort()).toEqual([f.secret, f.leaf, f.web, GHOST_SCOPE].sort());
    await scope().validateResourceScope({ requestedResourceIds: [f.apiRoot, f.apiChild, f.apiGrand, f.shared] });
    expect(await badFields(scope().validateResourceScope({ requestedResourceIds: ["core"] }))).toEqual(["requested_resource_ids[0]"]);
    expect(await badFields(scope().validateProjectScope({ requestedProjects: ["local"] }))).toEqual(["requested_projects[0]"]);
  });

  it("see denied resources as outside", async () => {
    const denied = await resolve(t, "writer", { projects: ["local/api"], excludeResources: ["child"] });
    const v = await expectViolation(
      t.client(ScopeService, "writer", denied.scopeId).validateResourceScope({ requestedResourceIds: [f.apiChild, f.apiGrand] }),
    );
    expect([...v.resourceIds].sort()).toEqual([f.apiChild, f.apiGrand].sort());
  });
});

describe("ResolveScope cannot reach other tenants", () => {
  const scopes = (p = "writer") => t.client(ScopeService, p);

  it("refuses projects the key does not allow", async () => {
    const v = await expectViolation(scopes().resolveScope({ projects: ["local/api", "other/secret"] }));
    expect([...v.projectNames]).toEqual(["other/secret"]);
    await expectViolation(scopes("other").resolveScope({ projects: ["local/api"] }));
  });

  it("refuses names of resources outside the scope's projects, saying the same for existing and unknown ids", async () => {
    const names = [
      f.secret,
      f.leaf,
      f.web,
      GHOST_SCOPE,
      "other/secret:core",
      "local/web:core",
      "leaf",
      "shared",
      "nosuchalias",
      f.secret.toLowerCase(),
    ];
    for (const field of ["includeResources", "excludeResources"] as const) {
      const err = await expectCode(scopes().resolveScope({ projects: ["local/api"], [field]: names }), Code.InvalidArgument);
      const fields = await badFields(scopes().resolveScope({ projects: ["local/api"], [field]: names }));
      const wire = field === "includeResources" ? "include_resources" : "exclude_resources";
      expect(fields).toEqual(names.map((_, i) => `${wire}[${i}]`));
      expect(err.rawMessage).toBeTruthy();
    }
    const existing = await expectCode(
      scopes().resolveScope({ projects: ["local/api"], includeResources: [f.secret] }),
      Code.InvalidArgument,
    );
    const unknown = await expectCode(
      scopes().resolveScope({ projects: ["local/api"], includeResources: [GHOST_SCOPE] }),
      Code.InvalidArgument,
    );
    expect(shape(existing.rawMessage)).toBe(shape(unknown.rawMessage));
  });

  it("refuses bad globs (absolute, dot-dot, empty, unparsable) naming the field", async () => {
    const globs = ["/secret/**", "../secret/**", "secret/../**", "", "[", "a/../../b"];
    expect(await badFields(scopes().resolveScope({ projects: ["local/api"], excludePaths: globs }))).toEqual(
      globs.map((_, i) => `exclude_paths[${i}]`),
    );
    expect(await badFields(scopes().resolveScope({ projects: ["local/api"], includePaths: globs }))).toEqual(
      globs.map((_, i) => `include_paths[${i}]`),
    );
  });

  it.each(["secret/", "secret/**/", "secret//**", "secret//"])(
    "an exclude glob %p that no document path can match is refused, never silently excluding nothing",
    async (glob) => {
      const outcome = await scopes()
        .resolveScope({ projects: ["local/api"], excludePaths: [glob] })
        .then(
          (r) => ({ scope: r.scope!, err: undefined }),
          (e: unknown) => ({ scope: undefined, err: e }),
        );
      if (outcome.err) {
        expect(await badFields(scopes().resolveScope({ projects: ["local/api"], excludePaths: [glob] }))).toEqual(["exclude_paths[0]"]);
        expect(await badFields(t.client(ScopeService, "writer", api.scopeId).narrowScope({ excludePaths: [glob] }))).toEqual([
          "exclude_paths[0]",
        ]);
      } else {
        const res = await t.client(TextBackendService, "writer", outcome.scope!.scopeId).search({ query: "mksecretkeys" });
        expect(res.results.map((r) => r.path)).toEqual([]);
      }
    },
  );

  it("an admin scope may hold other-tenant descendants, a writer scope never (expansion stops at the key)", async () => {
    const admin = await resolve(t, "admin", { projects: ["local/api"] });
    expect(admin.resourceIds).toContain(f.leaf);
    expect(api.resourceIds).not.toContain(f.leaf);
    expect(api.resourceIds).not.toContain(f.secret);
  });
});

describe("NarrowScope never widens", () => {
  const narrow = (scopeId = api.scopeId) => t.client(ScopeService, "writer", scopeId);

  it("refuses projects the parent lacks, even ones the key allows", async () => {
    expect([...(await expectViolation(narrow().narrowScope({ projects: ["local/web"] }))).projectNames]).toEqual(["local/web"]);
    expect([...(await expectViolation(narrow().narrowScope({ projects: ["other/secret"] }))).projectNames]).toEqual(["other/secret"]);
  });

  it("denying an id the parent lacks changes nothing; narrowing twice keeps shrinking", async () => {
    const { scope: a } = await narrow().narrowScope({ denyResourceIds: [f.secret, f.web, GHOST_SCOPE] });
    expect([...a!.resourceIds]).toEqual([...api.resourceIds]);
    const { scope: b } = await narrow(a!.scopeId).narrowScope({ denyResourceIds: [f.apiChild] });
    expect([...b!.resourceIds].sort()).toEqual([f.apiRoot, f.shared].sort());
    expect(b!.parentScopeId).toBe(a!.scopeId);
    const { scope: c } = await narrow(b!.scopeId).narrowScope({ excludePaths: ["**"] });
    const res = await t.client(TextBackendService, "writer", c!.scopeId).search({ query: WORD, maxResults: 1000 });
    expect(res.results).toEqual([]);
  });

  it("a scope whose every resource is denied refuses every read rather than answering", async () => {
    const { scope } = await narrow().narrowScope({ denyResourceIds: api.resourceIds.slice() });
    expect(scope!.resourceIds).toEqual([]);
    for (const [, call] of SCOPED_CALLS) {
      for (const protocol of ["connect", "grpc"] as const) await expectViolation(call("writer", scope!.scopeId, protocol));
    }
  });

  it("refuses bad deny ids and globs naming the field", async () => {
    expect(await badFields(narrow().narrowScope({ denyResourceIds: ["core"], excludePaths: ["/abs"] }))).toEqual([
      "deny_resource_ids[0]",
      "exclude_paths[0]",
    ]);
  });
});

describe("registry: aliases and links cannot cross tenants", () => {
  const reg = (p = "writer") => t.client(RegistryService, p);

  it("refuses an alias that looks like a resource id, another tenant's or any", async () => {
    for (const alias of [f.secret, f.secret.toLowerCase(), f.apiRoot, GHOST_SCOPE]) {
      expect(await badFields(reg().registerResource({ project: "local/api", alias, kind: "repo" }))).toEqual(["alias"]);
      await expectCode(reg().linkResource({ project: "local/api", resourceId: f.web, alias }), Code.InvalidArgument);
    }
  });

  it("refuses an alias taken in the project, but allows the same alias in another project", async () => {
    await expectCode(reg().registerResource({ project: "local/api", alias: "core", kind: "repo" }), Code.AlreadyExists);
    await expectCode(reg().linkResource({ project: "local/api", resourceId: f.web, alias: "core" }), Code.AlreadyExists);
    expect((await reg().resolveAlias({ project: "local/api", aliasOrId: "core" })).resourceId).toBe(f.apiRoot);
    expect((await reg().resolveAlias({ project: "local/web", aliasOrId: "core" })).resourceId).toBe(f.web);
    expect((await reg("other").resolveAlias({ project: "other/secret", aliasOrId: "core" })).resourceId).toBe(f.secret);
  });

  it("never resolves another tenant's id or alias through an allowed project", async () => {
    for (const name of [f.secret, f.leaf, "leaf"]) {
      const taken = await expectCode(reg().resolveAlias({ project: "local/api", aliasOrId: name }), Code.NotFound);
      const ghost = await expectCode(
        reg().resolveAlias({ project: "local/api", aliasOrId: name.length === 26 ? GHOST_SCOPE : "ghostalias" }),
        Code.NotFound,
      );
      expect(shape(taken.rawMessage).replace(/"[^"]*"/, "")).toBe(shape(ghost.rawMessage).replace(/"[^"]*"/, ""));
    }
    await expectViolation(reg().resolveAlias({ project: "other/secret", aliasOrId: "core" }));
    await expectViolation(reg().listResources({ project: "other/secret" }));
  });

  it("refuses links and parents that reach another tenant's resources", async () => {
    await expectViolation(reg().linkResource({ project: "local/api", resourceId: f.secret, alias: "stolen" }));
    await expectViolation(reg().linkResource({ project: "local/api", resourceId: GHOST_SCOPE, alias: "ghost" }));
    await expectViolation(reg().registerResource({ project: "local/api", alias: "thief", kind: "repo", parentIds: [f.secret] }));
    await expectViolation(reg("other").registerResource({ project: "other/secret", alias: "thief", kind: "repo", parentIds: [f.apiRoot] }));
    await expectViolation(reg("other").linkResource({ project: "other/secret", resourceId: f.apiRoot, alias: "stolen" }));
  });

  it("listings never show another tenant's projects, links or parent ids", async () => {
    const projects = (await reg().listProjects({})).projects.map((p) => p.name);
    expect(projects.filter((p) => !p.startsWith("local/"))).toEqual([]);
    const { resources } = await reg("other").listResources({ project: "other/secret" });
    const leaf = resources.find((r) => r.id === f.leaf)!;
    expect(leaf.parentIds).toEqual([]);
    expect(leaf.links.map((l) => l.project)).toEqual(["other/secret"]);
    const web = await reg().listResources({ project: "local/web" });
    for (const r of web.resources) for (const l of r.links) expect(l.project.startsWith("local/")).toBe(true);
  });
});

describe("writes outside the key", () => {
  async function* once<T>(...ms: T[]): AsyncIterable<T> {
    for (const m of ms) yield m;
  }
  const doc = (path: string) => ({ path, content: `${WORD} mkintruder`, metadata: {}, chunks: [] });

  it("a read-only key cannot write anything", async () => {
    const idx = t.client(IndexService, "reader");
    const reg = t.client(RegistryService, "reader");
    for (const p of ["connect", "grpc"] as const) {
      await expectCode(
        t.client(IndexService, "reader", undefined, p).upsertDocuments(once({ resourceId: f.apiRoot, documents: [doc("intruder.md")] })),
        Code.PermissionDenied,
      );
    }
    await expectCode(idx.deleteDocuments({ resourceId: f.apiRoot, paths: ["readme.md"] }), Code.PermissionDenied);
    await expectCode(idx.putTriples({ resourceId: f.apiRoot, triples: [], replace: true }), Code.PermissionDenied);
    await expectCode(idx.rebuild({ resourceIds: [], fullRebuild: true }), Code.PermissionDenied);
    await expectCode(reg.createProject({ name: "local/readonly" }), Code.PermissionDenied);
    await expectCode(reg.registerResource({ project: "local/api", alias: "ro", kind: "repo" }), Code.PermissionDenied);
    await expectCode(reg.linkResource({ project: "local/api", resourceId: f.web, alias: "ro" }), Code.PermissionDenied);
    const text = t.client(TextBackendService, "writer", api.scopeId);
    expect((await text.search({ query: "mkintruder" })).results).toEqual([]);
    expect((await text.search({ query: "mkreadme" })).results.map((r) => r.path)).toEqual(["readme.md"]);
    expect((await t.client(GraphBackendService, "writer", api.scopeId).getTriples({ subject: COMMON })).triples.length).toBeGreaterThan(0);
  });

  it("a writer cannot write into another tenant's resource, not even as the second message of a stream", async () => {
    const idx = (p: "connect" | "grpc" = "connect") => t.client(IndexService, "writer", undefined, p);
    for (const p of ["connect", "grpc"] as const) {
      const v = await expectViolation(
        idx(p).upsertDocuments(
          once({ resourceId: f.apiRoot, documents: [doc("first.md")] }, { resourceId: f.secret, documents: [doc("intruder.md")] }),
        ),
      );
      expect([...v.resourceIds]).toEqual([f.secret]);
    }
    await expectViolation(idx().deleteDocuments({ resourceId: f.secret, paths: ["readme.md"] }));
    await expectViolation(idx().putTriples({ resourceId: f.secret, triples: [], replace: true }));
    await expectViolation(idx().rebuild({ resourceIds: [f.secret], fullRebuild: true }));
    await expectViolation(idx().deleteDocuments({ resourceId: f.leaf, paths: ["leaf.md"] }));
    // A full rebuild of "everything" by writer leaves other tenants' indexes whole.
    await idx().rebuild({ resourceIds: [], fullRebuild: true });
    const other = t.client(TextBackendService, "other", otherScope.scopeId);
    expect((await other.search({ query: "mktenantsecret" })).results.map((r) => r.resourceId)).toEqual([f.secret]);
    expect((await other.search({ query: "mkintruder" })).results).toEqual([]);
    expect(
      (await t.client(VectorBackendService, "other", otherScope.scopeId).similaritySearch({ embedding: Q, topK: 100 })).results.length,
    ).toBe(2);
  });
});

describe("a key that loses a project", () => {
  it("cannot use scopes it made over that project after a restart, on any scoped call", async () => {
    const web = await resolve(t, "writer", { projects: ["local/web"] });
    const { dataDir, keys } = t;
    const keyEntries = t.keyEntries.map((e) => (e.name === "writer" ? { ...e, projects: ["local/web"] } : e));
    await t.close(false);
    t = await startTestServer({ env: ENV, dataDir, keyEntries, keys });
    for (const [, call] of SCOPED_CALLS) {
      const v = await expectViolation(call("writer", api.scopeId, "grpc"));
      expect([...v.projectNames]).toEqual(["local/api"]);
    }
    const res = await t.client(TextBackendService, "writer", web.scopeId).search({ query: WORD, maxResults: 1000 });
    expect(res.results.length).toBeGreaterThan(0);
    for (const r of res.results) expect(web.resourceIds).toContain(r.resourceId);
    await expectViolation(t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] }));
  });
});
