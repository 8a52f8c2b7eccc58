import { Code, ConnectError } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-node";
import { createClient } from "@connectrpc/connect";
import { GraphBackendService, TermKind, type Term } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { isUlid } from "../../src/domain/ulid-id.js";
import { doc, upsert } from "../index/index-fixture.js";
import { authInterceptor, type TestServer } from "../support/test-server.js";
import {
  drain,
  EX,
  expectBadField,
  expectCode,
  expectViolation,
  PROTOCOLS,
  RDFS_LABEL,
  seedWorld,
  startContractServer,
  type ContractWorld,
} from "./contract-fixture.js";

const GHOST = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const UKO = /^uko:\/\/[0-9A-HJKMNP-TV-Z]{26}\/[^#]+(#(0|[1-9][0-9]*))?$/;

/** The rules every result list obeys: descending score, scores in [0, 1], ties broken by uko_uri. */
function expectRanked(results: readonly { ukoUri: string; score: number }[]): void {
  for (const r of results) {
    expect(r.score).toBeGreaterThanOrEqual(0);
    expect(r.score).toBeLessThanOrEqual(1);
    expect(r.ukoUri).toMatch(UKO);
  }
  for (let i = 1; i < results.length; i++) {
    const a = results[i - 1];
    const b = results[i];
    const ok = a.score > b.score || (a.score === b.score && a.ukoUri < b.ukoUri);
    expect(ok ? "ordered" : `${a.ukoUri} ${a.score} before ${b.ukoUri} ${b.score}`).toBe("ordered");
  }
}

const termKey = (t?: Term) => `${TermKind[t?.kind ?? 0]}:${t?.value}`;

describe("Services", () => {
  let t: TestServer;
  let w: ContractWorld;
  beforeAll(async () => {
    t = await startContractServer();
    w = await seedWorld(t);
  });
  afterAll(async () => {
    await t.close(true);
  });

  describe("every scoped response carries scope_id and whether the answer is exhaustive", () => {
    test.each(PROTOCOLS)("exhaustive is false when a limit cut the answer short, true when it did not (%s)", async (protocol) => {
      const text = t.client(TextBackendService, "writer", w.bulkScope, protocol);
      const vector = t.client(VectorBackendService, "writer", w.bulkScope, protocol);
      const rag = t.client(RagService, "writer", w.bulkScope, protocol);
      const got = {
        "Search max_results=3 of 25": (await text.search({ query: "bulk", maxResults: 3 })).exhaustive,
        "Search max_results=1000 of 25": (await text.search({ query: "bulk", maxResults: 1000 })).exhaustive,
        "SimilaritySearch top_k=1000 of 25": (await vector.similaritySearch({ embedding: [0, 0, 0, 1], topK: 1000 })).exhaustive,
        "HybridSearch top_k=5 of 25": (await rag.hybridSearch({ query: "bulk", topK: 5 })).exhaustive,
        "HybridSearch top_k=1000 of 25": (await rag.hybridSearch({ query: "bulk", topK: 1000 })).exhaustive,
      };
      expect(got).toEqual({
        "Search max_results=3 of 25": false,
        "Search max_results=1000 of 25": true,
        "SimilaritySearch top_k=1000 of 25": true,
        "HybridSearch top_k=5 of 25": false,
        "HybridSearch top_k=1000 of 25": true,
      });
    });

    test("SimilaritySearch: exhaustive is true for an exact answer however top_k cut it (top_k=4 of 25: the 4 nearest, exactly)", async () => {
      const vector = t.client(VectorBackendService, "writer", w.bulkScope);
      expect((await vector.similaritySearch({ embedding: [0, 0, 0, 1], topK: 4 })).exhaustive).toBe(true);
    });

    test.each(PROTOCOLS)(
      "streamed answers carry scope_id, exhaustive and index_generation too (acms-scope-id, acms-exhaustive, acms-index-generation headers) (%s)",
      async (protocol) => {
        const missing: string[] = [];
        const check = async (rpc: string, run: (onHeader: (h: Headers) => void) => AsyncIterable<unknown>) => {
          let headers: Headers | undefined;
          await drain(run((h) => (headers = h)));
          const got = {
            scope: headers?.get("acms-scope-id"),
            exhaustive: headers?.get("acms-exhaustive"),
            generation: headers?.get("acms-index-generation"),
          };
          if (
            got.scope !== w.apiScope ||
            !["true", "false"].includes(got.exhaustive ?? "") ||
            !/^[1-9][0-9]*$/.test(got.generation ?? "")
          ) {
            missing.push(`${rpc}: ${JSON.stringify(got)}`);
          }
        };
        await check("SearchStream", (onHeader) =>
          t.client(TextBackendService, "writer", w.apiScope, protocol).searchStream({ query: "zebra" }, { onHeader }),
        );
        await check("SimilaritySearchStream", (onHeader) =>
          t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearchStream({ embedding: [1, 0, 0, 0] }, { onHeader }),
        );
        await check("SparqlQueryStream", (onHeader) =>
          t
            .client(GraphBackendService, "writer", w.apiScope, protocol)
            .sparqlQueryStream({ query: "SELECT * WHERE { ?s ?p ?o }" }, { onHeader }),
        );
        await check("HybridSearchStream", (onHeader) =>
          t.client(RagService, "writer", w.apiScope, protocol).hybridSearchStream({ query: "zebra" }, { onHeader }),
        );
        expect(missing).toEqual([]);
      },
    );
  });

  describe("RegistryService (principals with write access)", () => {
    test.each(PROTOCOLS)("a read-only key may not call the writing RPCs (PERMISSION_DENIED) (%s)", async (protocol) => {
      const reg = t.client(RegistryService, "reader", undefined, protocol);
      await expectCode(reg.createProject({ name: "local/readonly" }), Code.PermissionDenied);
      await expectCode(reg.registerResource({ project: "local/api", alias: "r", kind: "repo" }), Code.PermissionDenied);
      await expectCode(reg.linkResource({ project: "local/frontend", resourceId: w.core, alias: "core" }), Code.PermissionDenied);
    });

    test("a writer may write only on the projects its key allows", async () => {
      const reg = t.client(RegistryService, "writer");
      await expectViolation(reg.createProject({ name: "other/mine" }));
      await expectViolation(reg.registerResource({ project: "other/x", alias: "r", kind: "repo" }));
    });

    test("project names are namespace/name, both parts [a-z0-9][a-z0-9._-]*", async () => {
      const reg = t.client(RegistryService, "admin");
      for (const name of ["a.b-c_d/x.y-z_0", "0/9", "team-1/api.v2"]) expect((await reg.createProject({ name })).project!.name).toBe(name);
      for (const name of ["A/b", "a/B", ".a/b", "a/_b", "a/-b", "a//b", "/b", "a/", "a/b/c", "a b/c", "a/b ", "ä/b"]) {
        await expectBadField(reg.createProject({ name }), "name");
      }
    });

    test("CreateProject returns the project", async () => {
      const { project } = await t.client(RegistryService, "writer").createProject({ name: "local/created" });
      expect(project!.name).toBe("local/created");
      expect(project!.namespace).toBe("local");
    });

    test("ListProjects returns the projects the principal may see", async () => {
      const names = async (p: string) => (await t.client(RegistryService, p).listProjects({})).projects.map((x) => x.name);
      expect(await names("reader")).toEqual(expect.arrayContaining(["local/api", "local/frontend"]));
      expect((await names("reader")).every((n) => n.startsWith("local/"))).toBe(true);
      expect(await names("other")).toEqual(["other/x"]);
      expect(await names("admin")).toEqual(expect.arrayContaining(["local/api", "other/x"]));
    });

    test("RegisterResource: the server assigns a ULID when id is empty, keeps a given one", async () => {
      const reg = t.client(RegistryService, "writer");
      const a = (await reg.registerResource({ project: "local/created", alias: "auto", kind: "docs", metadata: { k: "v" } })).resource!;
      expect(isUlid(a.id)).toBe(true);
      expect(a.kind).toBe("docs");
      expect(a.metadata).toEqual({ k: "v" });
      const chosen = "01J0000000000000000000000A";
      const b = (await reg.registerResource({ project: "local/created", alias: "chosen", kind: "repo", id: chosen, parentIds: [a.id] }))
        .resource!;
      expect(b.id).toBe(chosen);
      expect(b.parentIds).toEqual([a.id]);
    });

    test("LinkResource returns the link; ListResources returns the project's resources with their aliases", async () => {
      const reg = t.client(RegistryService, "writer");
      const { link } = await reg.linkResource({ project: "local/created", resourceId: w.guide, alias: "guide-here" });
      expect([link!.project, link!.resourceId, link!.alias]).toEqual(["local/created", w.guide, "guide-here"]);
      const { resources } = await reg.listResources({ project: "local/created" });
      const byId = new Map(resources.map((r) => [r.id, r]));
      expect(byId.get(w.guide)?.alias).toBe("guide-here");
      expect([...byId.values()].map((r) => r.alias)).toEqual(expect.arrayContaining(["auto", "chosen", "guide-here"]));
    });

    test("ResolveAlias returns resource_id for an alias or an id; NOT_FOUND when neither", async () => {
      const reg = t.client(RegistryService, "reader");
      expect((await reg.resolveAlias({ project: "local/api", aliasOrId: "core" })).resourceId).toBe(w.core);
      expect((await reg.resolveAlias({ project: "local/api", aliasOrId: w.core })).resourceId).toBe(w.core);
      await expectCode(reg.resolveAlias({ project: "local/api", aliasOrId: "nope" }), Code.NotFound);
      await expectCode(reg.resolveAlias({ project: "local/api", aliasOrId: GHOST }), Code.NotFound);
      await expectCode(reg.resolveAlias({ project: "local/api", aliasOrId: w.web }), Code.NotFound);
    });

    test("ValidateAliases returns empty errors for a clean project", async () => {
      expect((await t.client(RegistryService, "reader").validateAliases({ project: "local/api" })).errors).toEqual([]);
    });
  });

  describe("IndexService (principals with write access to the resource's project)", () => {
    test.each(PROTOCOLS)("a read-only key, or a key without the resource's project, is refused (%s)", async (protocol) => {
      const index = (p: string) => t.client(IndexService, p, undefined, protocol);
      await expectCode(index("reader").deleteDocuments({ resourceId: w.guide, paths: ["x.md"] }), Code.PermissionDenied);
      await expectCode(index("reader").rebuild({ resourceIds: [w.guide] }), Code.PermissionDenied);
      await expectViolation(index("writer").deleteDocuments({ resourceId: w.foreign, paths: ["x.md"] }));
      await expectViolation(index("writer").putTriples({ resourceId: w.foreign, triples: [] }));
      await expectViolation(index("other").rebuild({ resourceIds: [w.core] }));
    });

    test("a resource owned by another tenant's project, linked into the writer's, cannot be written by the writer", async () => {
      await t.client(RegistryService, "admin").createProject({ name: "local/borrow" });
      await t.client(RegistryService, "admin").linkResource({ project: "local/borrow", resourceId: w.foreign, alias: "borrowed" });
      const code = (p: Promise<unknown>) =>
        p.then(
          () => "allowed",
          (e: unknown) => Code[ConnectError.from(e).code],
        );
      const outcomes = {
        UpsertDocuments: await code(
          upsert(t, "writer", [{ resourceId: w.foreign, documents: [doc("planted.md", "planted by another tenant")] }]),
        ),
        DeleteDocuments: await code(t.client(IndexService, "writer").deleteDocuments({ resourceId: w.foreign, paths: ["planted.md"] })),
        Rebuild: await code(t.client(IndexService, "writer").rebuild({ resourceIds: [w.foreign], fullRebuild: true })),
      };
      expect(outcomes).toEqual({ UpsertDocuments: "PermissionDenied", DeleteDocuments: "PermissionDenied", Rebuild: "PermissionDenied" });
    });

    test("UpsertDocuments returns counts and an index_generation; without chunks the server chunks the content and stores no vectors", async () => {
      const res = await upsert(t, "writer", [
        { resourceId: w.guide, documents: [doc("upsert/plain.md", "plain capybara text without chunks")] },
        {
          resourceId: w.guide,
          documents: [
            doc("upsert/vec.md", "capybara with a vector", { chunks: [{ text: "capybara with a vector", embedding: [0, 0, 1, 0] }] }),
          ],
        },
      ]);
      expect(res.documentsUpserted).toBe(2);
      expect(res.messagesReceived).toBe(2);
      expect(res.chunksIndexed).toBeGreaterThanOrEqual(2);
      expect(res.vectorsIndexed).toBe(1);
      expect(res.indexGeneration).toBeGreaterThan(0n);
      const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
      const text = await t.client(TextBackendService, "writer", scope).search({ query: "capybara" });
      expect(text.results.map((r) => r.path).sort()).toEqual(["upsert/plain.md", "upsert/vec.md"]);
      const vec = await t.client(VectorBackendService, "writer", scope).similaritySearch({ embedding: [0, 0, 1, 0], topK: 1000 });
      expect(vec.results.map((r) => r.path)).toContain("upsert/vec.md");
      expect(vec.results.map((r) => r.path)).not.toContain("upsert/plain.md");
    });

    test("DeleteDocuments returns the count", async () => {
      await upsert(t, "writer", [{ resourceId: w.guide, documents: [doc("del/a.md", "a"), doc("del/b.md", "b")] }]);
      const res = await t
        .client(IndexService, "writer")
        .deleteDocuments({ resourceId: w.guide, paths: ["del/a.md", "del/b.md", "del/none.md"] });
      expect(res.count).toBe(2);
    });

    test("PutTriples returns the count", async () => {
      const holder = (
        await t.client(RegistryService, "writer").registerResource({ project: "local/created", alias: "triples", kind: "graph" })
      ).resource!.id;
      const res = await t.client(IndexService, "writer").putTriples({
        resourceId: holder,
        triples: [
          {
            subject: { kind: TermKind.IRI, value: `${EX}G1` },
            predicate: { kind: TermKind.IRI, value: `${EX}p` },
            object: { kind: TermKind.LITERAL, value: "g" },
          },
        ],
      });
      expect(res.count).toBe(1);
    });

    test("Rebuild returns a new index_generation; full_rebuild=false never drops existing state; true re-indexes", async () => {
      const search = async () => {
        const r = await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" });
        return r.results.map((x) => x.ukoUri);
      };
      const before = await search();
      const gen0 = (await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" })).indexGeneration;
      const inc = await t.client(IndexService, "writer").rebuild({ resourceIds: [w.core], fullRebuild: false });
      expect(inc.indexGeneration).toBeGreaterThan(gen0);
      expect(await search()).toEqual(before);
      const full = await t.client(IndexService, "writer").rebuild({ resourceIds: [w.core], fullRebuild: true });
      expect(full.indexGeneration).toBeGreaterThan(inc.indexGeneration);
      expect(await search()).toEqual(before);
      const vec = await t.client(VectorBackendService, "writer", w.apiScope).similaritySearch({ embedding: [1, 0, 0, 0] });
      expect(vec.results.map((r) => r.path)).toContain("src/retry.ts");
      const graph = await t.client(GraphBackendService, "writer", w.apiScope).sparqlQuery({ query: `ASK { <${EX}A> <${EX}p> <${EX}B> }` });
      expect(graph.boolean).toBe(true);
    });
  });

  describe("ScopeService", () => {
    test("ResolveScope returns scope_id, resource_ids, project_names, temporal_scope (default current), the four lists as given, parent_scope_id", async () => {
      const { scope } = await t.client(ScopeService, "writer").resolveScope({
        projects: ["local/api"],
        includeResources: ["core"],
        excludeResources: ["lib"],
        includePaths: ["src/**"],
        excludePaths: ["**/*.tmp"],
      });
      expect(isUlid(scope!.scopeId)).toBe(true);
      expect(scope!.resourceIds).toEqual([w.core]);
      expect(scope!.projectNames).toEqual(["local/api"]);
      expect(scope!.temporalScope).toBe("current");
      expect(scope!.includeResources).toEqual(["core"]);
      expect(scope!.excludeResources).toEqual(["lib"]);
      expect(scope!.includePaths).toEqual(["src/**"]);
      expect(scope!.excludePaths).toEqual(["**/*.tmp"]);
      expect(scope!.parentScopeId).toBe("");
      expect(scope!.expandDescendants).toBe(true);
    });

    test("temporal_scope is current, recent or all; anything else is INVALID_ARGUMENT naming it", async () => {
      for (const temporalScope of ["current", "recent", "all"]) {
        const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], temporalScope });
        expect(scope!.temporalScope).toBe(temporalScope);
      }
      await expectBadField(
        t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], temporalScope: "yesterday" }),
        "temporal_scope",
      );
    });

    test("expand_descendants defaults to true; false keeps only the named resources", async () => {
      const on = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includeResources: ["core"] })).scope!;
      expect([...on.resourceIds].sort()).toEqual([w.core, w.lib].sort());
      const off = (
        await t
          .client(ScopeService, "writer")
          .resolveScope({ projects: ["local/api"], includeResources: ["core"], expandDescendants: false })
      ).scope!;
      expect(off.resourceIds).toEqual([w.core]);
      expect(off.expandDescendants).toBe(false);
    });

    test("resolution collects every resource linked into the named projects, and their descendants", async () => {
      const reg = t.client(RegistryService, "writer");
      await reg.createProject({ name: "local/linked" });
      await reg.linkResource({ project: "local/linked", resourceId: w.core, alias: "core-link" });
      const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/linked"] });
      expect([...scope!.resourceIds].sort()).toEqual([w.core, w.lib].sort());
      const res = await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "zebra" });
      expect(res.results.map((r) => r.path).sort()).toEqual(["lib/util.md", "secret/keys.md", "src/retry.ts"]);
    });

    test("path filters: include when the include list is empty or any include glob matches, and no exclude glob matches", async () => {
      const paths = async (includePaths: string[], excludePaths: string[]) => {
        const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includePaths, excludePaths });
        return (await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "zebra" })).results.map((r) => r.path).sort();
      };
      expect(await paths([], [])).toEqual(["lib/util.md", "secret/keys.md", "src/retry.ts"]);
      expect(await paths(["lib/**", "src/**"], [])).toEqual(["lib/util.md", "src/retry.ts"]);
      expect(await paths(["lib/**", "src/**"], ["src/**"])).toEqual(["lib/util.md"]);
      expect(await paths([], ["**/*.md"])).toEqual(["src/retry.ts"]);
    });

    test("GetScope returns the caller's scope", async () => {
      const { scope } = await t.client(ScopeService, "writer").getScope({ scopeId: w.apiScope });
      expect(scope!.scopeId).toBe(w.apiScope);
      expect(scope!.projectNames).toEqual(["local/api"]);
      await expectCode(t.client(ScopeService, "writer").getScope({ scopeId: w.otherScope }), Code.NotFound);
    });

    test.each(PROTOCOLS)("NarrowScope (header scope) returns a new child scope with parent_scope_id (%s)", async (protocol) => {
      const { scope } = await t
        .client(ScopeService, "writer", w.bothScope, protocol)
        .narrowScope({ projects: ["local/api"], excludePaths: ["secret/**"] });
      expect(scope!.scopeId).not.toBe(w.bothScope);
      expect(scope!.parentScopeId).toBe(w.bothScope);
      expect(scope!.projectNames).toEqual(["local/api"]);
      expect(scope!.resourceIds).not.toContain(w.web);
      expect(scope!.excludePaths).toContain("secret/**");
      const res = await t.client(TextBackendService, "writer", scope!.scopeId, protocol).search({ query: "zebra" });
      expect(res.results.map((r) => r.path).sort()).toEqual(["lib/util.md", "src/retry.ts"]);
    });

    test.each(PROTOCOLS)(
      "ValidateProjectScope / ValidateResourceScope answer empty, or PERMISSION_DENIED + ScopeViolation (%s)",
      async (protocol) => {
        const scopes = t.client(ScopeService, "writer", w.apiScope, protocol);
        expect(await scopes.validateProjectScope({ requestedProjects: ["local/api"] })).toEqual(expect.objectContaining({}));
        await scopes.validateResourceScope({ requestedResourceIds: [w.core, w.lib, w.guide] });
        await expectViolation(scopes.validateProjectScope({ requestedProjects: ["local/frontend"] }));
        await expectViolation(scopes.validateResourceScope({ requestedResourceIds: [w.web] }));
      },
    );
  });

  describe.each(PROTOCOLS)("TextBackendService (%s)", (protocol) => {
    test("Search returns TextResult {uko_uri, content, score, metadata, resource_id, path}, ranked, ties by uko_uri", async () => {
      const res = await t.client(TextBackendService, "writer", w.apiScope, protocol).search({ query: "quokka" });
      expect(res.results.map((r) => r.path)).toEqual(["src/twin-a.md", "src/twin-b.md"]);
      expect(res.results[0].score).toBe(res.results[1].score);
      expect(res.results[0].ukoUri < res.results[1].ukoUri).toBe(true);
      for (const r of res.results) {
        expect(r.resourceId).toBe(w.core);
        expect(r.ukoUri.startsWith(`uko://${w.core}/${r.path}`)).toBe(true);
        expect(r.content).toBe("identical twin words quokka");
      }
      const zebra = await t.client(TextBackendService, "writer", w.bothScope, protocol).search({ query: "zebra" });
      expect(zebra.results.length).toBe(4);
      expectRanked(zebra.results);
      expect(zebra.results.map((r) => r.resourceId)).not.toContain(w.foreign);
    });

    test("SearchStream sends the same results, one per message, in rank order", async () => {
      const client = t.client(TextBackendService, "writer", w.bothScope, protocol);
      const unary = await client.search({ query: "zebra quokka" });
      const streamed = await drain(client.searchStream({ query: "zebra quokka" }));
      expect(streamed.map((m) => m.result!.ukoUri)).toEqual(unary.results.map((r) => r.ukoUri));
      expect(streamed.map((m) => m.result!.score)).toEqual(unary.results.map((r) => r.score));
    });
  });

  describe.each(PROTOCOLS)("TextBackendService, group_by_document (%s)", (protocol) => {
    test("one result per document, its best-ranked chunk; max_results counts documents and exhaustive says whether one was left out", async () => {
      await upsert(t, "writer", [
        {
          resourceId: w.guide,
          documents: [
            doc("group/a.md", "a", { chunks: [{ text: "wombat wombat wombat" }, { text: "wombat wombat" }, { text: "wombat" }] }),
            doc("group/b.md", "b", { chunks: [{ text: "wombat wombat" }, { text: "wombat" }] }),
            doc("group/c.md", "c", { chunks: [{ text: "wombat among several other words" }] }),
          ],
        },
      ]);
      const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
      const client = t.client(TextBackendService, "writer", scope, protocol);
      const chunks = await client.search({ query: "wombat", maxResults: 10 });
      expect(chunks.results.length).toBe(6);
      const two = await client.search({ query: "wombat", maxResults: 2, groupByDocument: true });
      expect(two.results.map((r) => [r.path, r.content])).toEqual([
        ["group/a.md", "wombat wombat wombat"],
        ["group/b.md", "wombat wombat"],
      ]);
      expect(two.exhaustive).toBe(false);
      const all = await client.search({ query: "wombat", maxResults: 10, groupByDocument: true });
      expect(all.results.map((r) => r.path)).toEqual(["group/a.md", "group/b.md", "group/c.md"]);
      expect(all.exhaustive).toBe(true);
      // Each document's result is its best chunk as the ungrouped answer ranks it, with the same score.
      for (const r of all.results) expect(r).toEqual(chunks.results.find((c) => c.path === r.path));
      const streamed = await drain(client.searchStream({ query: "wombat", maxResults: 2, groupByDocument: true }));
      expect(streamed.map((m) => m.result!.ukoUri)).toEqual(two.results.map((r) => r.ukoUri));
    });
  });

  describe.each(PROTOCOLS)("VectorBackendService (%s)", (protocol) => {
    test("SimilaritySearch returns VectorResult {uko_uri, content, score (cosine), metadata, resource_id, path}, ranked, ties by uko_uri", async () => {
      const res = await t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [0, 1, 0, 0] });
      expectRanked(res.results);
      expect(res.results.slice(0, 2).map((r) => r.path)).toEqual(["src/twin-a.md", "src/twin-b.md"]);
      expect(res.results[0].score).toBeCloseTo(1, 6);
      expect(res.results[0].content).toBe("identical twin words quokka");
      expect(res.results[0].resourceId).toBe(w.core);
      const both = await t.client(VectorBackendService, "writer", w.bothScope, protocol).similaritySearch({ embedding: [1, 0, 0, 0] });
      expect(both.results.map((r) => r.resourceId)).not.toContain(w.foreign);
      expect(both.results.map((r) => r.path)).toContain("web/ui.md");
    });

    test("SimilaritySearchStream sends the same results, one per message", async () => {
      const client = t.client(VectorBackendService, "writer", w.bothScope, protocol);
      const unary = await client.similaritySearch({ embedding: [1, 1, 0, 0] });
      const streamed = await drain(client.similaritySearchStream({ embedding: [1, 1, 0, 0] }));
      expect(streamed.map((m) => m.result!.ukoUri)).toEqual(unary.results.map((r) => r.ukoUri));
    });

    test("the path filters of the scope apply to vector results", async () => {
      const res = await t
        .client(VectorBackendService, "writer", w.noSecretScope, protocol)
        .similaritySearch({ embedding: [0.8, 0, 0.6, 0], topK: 1000 });
      expect(res.results.map((r) => r.path)).not.toContain("secret/keys.md");
    });
  });

  describe.each(PROTOCOLS)("GraphBackendService (%s)", (protocol) => {
    const graph = (scope: string) => t.client(GraphBackendService, "writer", scope, protocol);

    test("SparqlQuery SELECT: variables and rows (variable -> Term)", async () => {
      const res = await graph(w.apiScope).sparqlQuery({ query: `SELECT ?p ?o WHERE { <${EX}A> ?p ?o } ORDER BY ?p` });
      expect(res.variables).toEqual(["p", "o"]);
      expect(res.rows.map((r) => [termKey(r.bindings.p), termKey(r.bindings.o)])).toEqual([
        [`IRI:${EX}p`, `IRI:${EX}B`],
        [`IRI:${RDFS_LABEL}`, "LITERAL:Alpha zebra"],
      ]);
    });

    test("SparqlQuery ASK: boolean; CONSTRUCT and DESCRIBE: triples", async () => {
      expect((await graph(w.apiScope).sparqlQuery({ query: `ASK { <${EX}A> <${EX}p> <${EX}B> }` })).boolean).toBe(true);
      expect((await graph(w.apiScope).sparqlQuery({ query: `ASK { <${EX}F> ?p ?o }` })).boolean).toBe(false);
      const c = await graph(w.apiScope).sparqlQuery({ query: `CONSTRUCT { ?s <${EX}q> ?o } WHERE { ?s <${EX}p> ?o }` });
      expect(c.triples.map((x) => termKey(x.subject)).sort()).toEqual([`IRI:${EX}A`, `IRI:${EX}B`, `IRI:${EX}C`, `IRI:${EX}D`]);
      const d = await graph(w.apiScope).sparqlQuery({ query: `DESCRIBE <${EX}A>` });
      expect(d.triples.length).toBeGreaterThan(0);
      expect(d.triples.map((x) => termKey(x.object))).not.toContain("LITERAL:foreign secret");
    });

    test("Term carries kind (IRI, LITERAL, BLANK), value, datatype and language", async () => {
      const res = await graph(w.apiScope).sparqlQuery({
        query: `SELECT ?i ?l ?t ?b WHERE { BIND(<${EX}A> AS ?i) BIND("hola"@es AS ?l) BIND(42 AS ?t) BIND(BNODE() AS ?b) }`,
      });
      const row = res.rows[0].bindings;
      expect(row.i.kind).toBe(TermKind.IRI);
      expect([row.l.kind, row.l.value, row.l.language]).toEqual([TermKind.LITERAL, "hola", "es"]);
      expect([row.t.kind, row.t.value, row.t.datatype]).toEqual([TermKind.LITERAL, "42", "http://www.w3.org/2001/XMLSchema#integer"]);
      expect(row.b.kind).toBe(TermKind.BLANK);
    });

    test("SparqlQueryStream streams rows or triples", async () => {
      const rows = await drain(graph(w.apiScope).sparqlQueryStream({ query: "SELECT ?s WHERE { ?s ?p ?o }" }));
      expect(rows[0].item.case).toBe("variables");
      expect(rows.slice(1).every((m) => m.item.case === "row")).toBe(true);
      expect(rows.length - 1).toBe(5);
      const triples = await drain(graph(w.apiScope).sparqlQueryStream({ query: "CONSTRUCT WHERE { ?s ?p ?o }" }));
      expect(triples.length).toBe(5);
      expect(triples.every((m) => m.item.case === "triple")).toBe(true);
      const ask = await drain(graph(w.apiScope).sparqlQueryStream({ query: "ASK { ?s ?p ?o }" }));
      expect(ask.map((m) => m.item)).toEqual([{ case: "boolean", value: true }]);
    });

    test("GetTriples returns every in-scope triple with that subject", async () => {
      const res = await graph(w.apiScope).getTriples({ subject: `${EX}A` });
      expect(res.triples.map((x) => `${termKey(x.predicate)} ${termKey(x.object)}`).sort()).toEqual([
        `IRI:${EX}p IRI:${EX}B`,
        `IRI:${RDFS_LABEL} LITERAL:Alpha zebra`,
      ]);
      const both = await graph(w.bothScope).getTriples({ subject: `${EX}W` });
      expect(both.triples).toHaveLength(1);
      expect((await graph(w.apiScope).getTriples({ subject: `${EX}W` })).triples).toEqual([]);
      expect((await graph(w.apiScope).getTriples({ subject: `${EX}F` })).triples).toEqual([]);
    });

    test("Traverse: depth 0 is the start node's own triples; every in-scope triple within depth hops", async () => {
      const subjects = async (depth?: number) =>
        [...new Set((await graph(w.apiScope).traverse({ start: `${EX}A`, depth })).triples.map((x) => x.subject!.value))].sort();
      expect(await subjects(0)).toEqual([`${EX}A`]);
      expect((await graph(w.apiScope).traverse({ start: `${EX}A`, depth: 0 })).triples).toHaveLength(2);
      expect(await subjects(1)).toEqual([`${EX}A`, `${EX}B`]);
      expect(await subjects(2)).toEqual([`${EX}A`, `${EX}B`, `${EX}C`]);
      expect(await subjects()).toEqual(await subjects(2));
      expect(await subjects(8)).toEqual([`${EX}A`, `${EX}B`, `${EX}C`, `${EX}D`]);
      const all = (await graph(w.apiScope).traverse({ start: `${EX}A`, depth: 8 })).triples.map((x) => termKey(x.object));
      expect(all).not.toContain("LITERAL:foreign secret");
    });
  });

  describe.each(PROTOCOLS)("RagService (%s)", (protocol) => {
    const rag = (scope: string) => t.client(RagService, "writer", scope, protocol);

    test("HybridSearch returns uko_uri, resource_id, path, content, fused score and contributions {source, rank, score}", async () => {
      const res = await rag(w.apiScope).hybridSearch({ query: "retry backoff", embedding: [1, 0, 0, 0] });
      expectRanked(res.results);
      const top = res.results[0];
      expect(top.path).toBe("src/retry.ts");
      expect(top.resourceId).toBe(w.core);
      expect(top.content).toBe("retry with exponential backoff zebra");
      const sources = top.contributions.map((c) => c.source).sort();
      expect(sources).toEqual([Source.TEXT, Source.VECTOR]);
      for (const c of top.contributions) {
        expect(c.rank).toBeGreaterThanOrEqual(1);
        expect(Number.isFinite(c.score)).toBe(true);
      }
      expect(res.results.map((r) => r.resourceId)).not.toContain(w.foreign);
    });

    test("sources empty = every source that applies; named sources restrict the evidence", async () => {
      const all = await rag(w.apiScope).hybridSearch({ query: "alpha zebra", embedding: [1, 0, 0, 0], topK: 50 });
      const used = new Set(all.results.flatMap((r) => r.contributions.map((c) => c.source)));
      expect(used.has(Source.TEXT)).toBe(true);
      expect(used.has(Source.VECTOR)).toBe(true);
      const textOnly = await rag(w.apiScope).hybridSearch({ query: "alpha zebra", embedding: [1, 0, 0, 0], sources: [Source.TEXT] });
      expect(textOnly.results.every((r) => r.contributions.every((c) => c.source === Source.TEXT))).toBe(true);
      const vecOnly = await rag(w.apiScope).hybridSearch({ query: "alpha zebra", embedding: [1, 0, 0, 0], sources: [Source.VECTOR] });
      expect(vecOnly.results.every((r) => r.contributions.every((c) => c.source === Source.VECTOR))).toBe(true);
    });

    test("units with identical evidence come in uko_uri order", async () => {
      const res = await rag(w.apiScope).hybridSearch({ query: "quokka", embedding: [0, 1, 0, 0] });
      expectRanked(res.results);
      expect(res.results.slice(0, 2).map((r) => r.path)).toEqual(["src/twin-a.md", "src/twin-b.md"]);
    });

    test("HybridSearchStream sends the fused results in order", async () => {
      const unary = await rag(w.bothScope).hybridSearch({ query: "zebra quokka", embedding: [1, 0, 0, 0] });
      const streamed = await drain(rag(w.bothScope).hybridSearchStream({ query: "zebra quokka", embedding: [1, 0, 0, 0] }));
      expect(streamed.map((m) => m.result!.ukoUri)).toEqual(unary.results.map((r) => r.ukoUri));
      expect(streamed.map((m) => m.result!.score)).toEqual(unary.results.map((r) => r.score));
    });

    test("FetchContent returns items in exactly the order asked, and missing", async () => {
      const uris = [`uko://${w.core}/src/twin-b.md`, `uko://${w.core}/src/gone.md`, `uko://${w.core}/src/twin-a.md#0`];
      const res = await rag(w.apiScope).fetchContent({ ukoUris: uris });
      expect(res.items.map((i) => i.ukoUri)).toEqual([uris[0], uris[2]]);
      expect(res.missing).toEqual([uris[1]]);
    });
  });

  describe("ContextTierService", () => {
    test.each(PROTOCOLS)("StoreFragment returns the stored fragment (token_count, timestamps filled) (%s)", async (protocol) => {
      const tiers = t.client(ContextTierService, "writer", w.apiScope, protocol);
      const { fragment, displaced } = await tiers.storeFragment({
        fragment: {
          content: "we chose sqlite for the registry",
          tier: Tier.WARM,
          projectName: "local/api",
          metadata: { kind: "decision" },
        },
      });
      expect(fragment!.fragmentId.length).toBeGreaterThan(0);
      expect(fragment!.tier).toBe(Tier.WARM);
      expect(fragment!.tokenCount).toBeGreaterThan(0);
      expect(fragment!.createdAt).toBeDefined();
      expect(fragment!.updatedAt).toBeDefined();
      expect(fragment!.metadata).toEqual({ kind: "decision" });
      expect(displaced).toEqual([]);
    });

    test("GetFragment returns the fragment; a hit or a miss counts in metrics", async () => {
      const tiers = t.client(ContextTierService, "writer", w.apiScope);
      const id = (await tiers.storeFragment({ fragment: { content: "hot fact", tier: Tier.HOT, projectName: "local/api" } })).fragment!
        .fragmentId;
      const m0 = await tiers.getMetrics({});
      expect((await tiers.getFragment({ fragmentId: id })).fragment!.content).toBe("hot fact");
      await expectCode(tiers.getFragment({ fragmentId: "no-such-fragment" }), Code.NotFound);
      const m1 = await tiers.getMetrics({});
      expect(m1.hotHits).toBe(m0.hotHits + 1n);
      expect(m1.hotMisses + m1.warmMisses + m1.misses).toBeGreaterThan(m0.hotMisses + m0.warmMisses + m0.misses);
    });

    test("PromoteFragment goes cold→warm→hot; DemoteFragment hot→warm→cold and runs the summariser", async () => {
      const tiers = t.client(ContextTierService, "writer", w.apiScope);
      const content = "The team decided to use exponential backoff for retries. The cap is thirty seconds. Jitter avoids thundering herds.";
      const id = (await tiers.storeFragment({ fragment: { content, tier: Tier.COLD, projectName: "local/api" } })).fragment!.fragmentId;
      expect((await tiers.promoteFragment({ fragmentId: id })).fragment!.tier).toBe(Tier.WARM);
      expect((await tiers.promoteFragment({ fragmentId: id })).fragment!.tier).toBe(Tier.HOT);
      expect((await tiers.demoteFragment({ fragmentId: id })).fragment!.tier).toBe(Tier.WARM);
      const cold = (await tiers.demoteFragment({ fragmentId: id })).fragment!;
      expect(cold.tier).toBe(Tier.COLD);
      expect(cold.summary.length).toBeGreaterThan(0);
    });

    test("EvictLru returns the evicted fragment ids", async () => {
      const tiers = t.client(ContextTierService, "writer", w.bothScope);
      const id = (await tiers.storeFragment({ fragment: { content: "evict me", tier: Tier.COLD, projectName: "local/frontend" } }))
        .fragment!.fragmentId;
      const { fragmentIds } = await tiers.evictLru({ tier: Tier.COLD, count: 1000 });
      expect(fragmentIds).toContain(id);
      await expectCode(tiers.getFragment({ fragmentId: id }), Code.NotFound);
    });

    test("GetForActor: STRATEGIST sees hot+warm+cold, EXECUTOR hot+warm, REVIEWER hot", async () => {
      await t.client(RegistryService, "writer").createProject({ name: "local/roles" });
      const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/roles"] })).scope!.scopeId;
      const tiers = t.client(ContextTierService, "writer", scope);
      const ids: Record<string, string> = {};
      for (const [name, tier] of [
        ["hot", Tier.HOT],
        ["warm", Tier.WARM],
        ["cold", Tier.COLD],
      ] as const) {
        ids[name] = (
          await tiers.storeFragment({ fragment: { content: `${name} fragment`, tier, projectName: "local/roles" } })
        ).fragment!.fragmentId;
      }
      const seen = async (role: Role) => (await tiers.getForActor({ role })).fragments.map((f) => f.fragmentId).sort();
      expect(await seen(Role.STRATEGIST)).toEqual([ids.hot, ids.warm, ids.cold].sort());
      expect(await seen(Role.EXECUTOR)).toEqual([ids.hot, ids.warm].sort());
      expect(await seen(Role.REVIEWER)).toEqual([ids.hot]);
    });

    test("GetMetrics returns hit and miss counts, population per tier, evictions", async () => {
      const m = await t.client(ContextTierService, "writer", w.apiScope).getMetrics({});
      expect(m.hotPopulation + m.warmPopulation + m.coldPopulation).toBeGreaterThan(0n);
      expect(m.evictions).toBeGreaterThanOrEqual(1n);
    });

    test("another tenant never sees, gets or evicts these fragments", async () => {
      const mine = (
        await t
          .client(ContextTierService, "writer", w.apiScope)
          .storeFragment({ fragment: { content: "private", tier: Tier.COLD, projectName: "local/api" } })
      ).fragment!.fragmentId;
      const theirs = t.client(ContextTierService, "other", w.otherScope);
      await expectCode(theirs.getFragment({ fragmentId: mine }), Code.NotFound);
      expect((await theirs.getForActor({ role: Role.STRATEGIST })).fragments.map((f) => f.fragmentId)).not.toContain(mine);
      expect((await theirs.evictLru({ tier: Tier.COLD, count: 1000 })).fragmentIds).not.toContain(mine);
      expect((await t.client(ContextTierService, "writer", w.apiScope).getFragment({ fragmentId: mine })).fragment!.fragmentId).toBe(mine);
    });
  });

  describe("Also served", () => {
    test.each(PROTOCOLS)("grpc.health.v1.Health answers SERVING (%s)", async (protocol) => {
      const res = await t.client(Health, undefined, undefined, protocol).check({ service: "" });
      expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const svc = await t.client(Health, undefined, undefined, protocol).check({ service: "acms.v1.TextBackendService" });
      expect(svc.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    });

    test("gRPC server reflection lists every acms service, health and reflection", async () => {
      async function* req() {
        yield { messageRequest: { case: "listServices" as const, value: "" } };
      }
      const out = await drain(t.client(ServerReflection, "reader", undefined, "grpc").serverReflectionInfo(req()));
      const r = out[0].messageResponse;
      expect(r.case).toBe("listServicesResponse");
      const names = r.case === "listServicesResponse" ? r.value.service.map((s) => s.name) : [];
      expect(names).toEqual(
        expect.arrayContaining([
          "acms.v1.RegistryService",
          "acms.v1.IndexService",
          "acms.v1.ScopeService",
          "acms.v1.TextBackendService",
          "acms.v1.VectorBackendService",
          "acms.v1.GraphBackendService",
          "acms.v1.RagService",
          "acms.v1.ContextTierService",
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
        ]),
      );
    });

    test("one port speaks gRPC, gRPC-Web and Connect (HTTP/1.1 JSON too)", async () => {
      const web = createClient(
        TextBackendService,
        createGrpcWebTransport({ baseUrl: t.server.url, httpVersion: "1.1", interceptors: [authInterceptor(t.keys.writer, w.apiScope)] }),
      );
      const viaWeb = await web.search({ query: "zebra" });
      const viaGrpc = await t.client(TextBackendService, "writer", w.apiScope, "grpc").search({ query: "zebra" });
      const res = await fetch(`${t.server.url}/acms.v1.TextBackendService/Search`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${t.keys.writer}`, "acms-scope": w.apiScope },
        body: JSON.stringify({ query: "zebra" }),
      });
      const json = (await res.json()) as { results: { ukoUri: string }[]; scopeId: string };
      expect(json.scopeId).toBe(w.apiScope);
      expect(viaWeb.results.map((r) => r.ukoUri)).toEqual(viaGrpc.results.map((r) => r.ukoUri));
      expect(json.results.map((r) => r.ukoUri)).toEqual(viaGrpc.results.map((r) => r.ukoUri));
    });
  });
});
