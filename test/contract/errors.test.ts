import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { GraphBackendService, TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { UnavailableError } from "../../src/domain/errors.js";
import type { GraphBackend } from "../../src/ports/graph-backend.js";
import type { TextBackend } from "../../src/ports/text-backend.js";
import { doc, upsert } from "../index/index-fixture.js";
import { authInterceptor, type TestServer } from "../support/test-server.js";
import {
  assertCode,
  drain,
  EX,
  expectBadField,
  expectCode,
  expectViolation,
  failure,
  PROTOCOLS,
  seedWorld,
  startContractServer,
  startCustomServer,
  type ContractWorld,
  type CustomServer,
} from "./contract-fixture.js";

const GHOST = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

/**
 * A gRPC client of TextBackendService on its own new HTTP/2 connection, able to buffer a large outgoing
 * message (node's default client session memory, 10 MB, would reset the stream on its own side first).
 */
async function startFreshGrpcClient(t: TestServer, scopeId: string) {
  const sessionManager = new Http2SessionManager(t.server.url, undefined, { maxSessionMemory: 256 });
  const transport = createGrpcTransport({ baseUrl: t.server.url, sessionManager, interceptors: [authInterceptor(t.keys.writer, scopeId)] });
  return { client: createClient(TextBackendService, transport), close: () => sessionManager.abort() };
}

describe("Errors", () => {
  let t: TestServer;
  let w: ContractWorld;
  beforeAll(async () => {
    t = await startContractServer();
    w = await seedWorld(t);
  });
  afterAll(async () => {
    await t.close(true);
  });

  describe.each(PROTOCOLS)("a request names a resource, project or path outside the call's scope (%s)", (protocol) => {
    test("a project: PERMISSION_DENIED + ScopeViolation (offenders in project_names, the scope's in scope_project_names)", async () => {
      const scopes = t.client(ScopeService, "writer", w.apiScope, protocol);
      const { err, violation } = await expectViolation(
        scopes.validateProjectScope({ requestedProjects: ["local/api", "local/frontend", "other/x"] }),
      );
      expect(violation.projectNames).toEqual(["local/frontend", "other/x"]);
      expect(violation.scopeProjectNames).toEqual(["local/api"]);
      expect(violation.resourceIds).toEqual([]);
      expect(violation.reason.length).toBeGreaterThan(0);
      expect(err.rawMessage).toContain("local/frontend");
    });

    test("a resource: PERMISSION_DENIED + ScopeViolation (offenders in resource_ids), existing or not, same message shape", async () => {
      const scopes = t.client(ScopeService, "writer", w.apiScope, protocol);
      const { violation } = await expectViolation(
        scopes.validateResourceScope({ requestedResourceIds: [w.core, w.web, w.foreign, GHOST] }),
      );
      expect([...violation.resourceIds].sort()).toEqual([w.web, w.foreign, GHOST].sort());
      expect(violation.scopeProjectNames).toEqual(["local/api"]);
      expect(violation.projectNames).toEqual([]);
      const foreign = await expectViolation(scopes.validateResourceScope({ requestedResourceIds: [w.foreign] }));
      const ghost = await expectViolation(scopes.validateResourceScope({ requestedResourceIds: [GHOST] }));
      expect(ghost.err.rawMessage.split(GHOST).join("<id>")).toBe(foreign.err.rawMessage.split(w.foreign).join("<id>"));
    });

    test("a path excluded by the scope's path filters: PERMISSION_DENIED + ScopeViolation", async () => {
      const rag = t.client(RagService, "writer", w.noSecretScope, protocol);
      const { violation } = await expectViolation(rag.fetchContent({ ukoUris: [`uko://${w.core}/secret/keys.md`] }));
      expect(violation.scopeProjectNames).toEqual(["local/api"]);
      expect(violation.reason).toContain("secret/keys.md");
    });

    test("in-scope names pass: the validation RPCs answer empty", async () => {
      const scopes = t.client(ScopeService, "writer", w.bothScope, protocol);
      await scopes.validateProjectScope({ requestedProjects: ["local/api", "local/frontend"] });
      await scopes.validateResourceScope({ requestedResourceIds: [w.core, w.lib, w.web] });
    });
  });

  describe("the scope's effective resource set is empty (everything denied) while it had resources", () => {
    test.each(PROTOCOLS)("PERMISSION_DENIED + ScopeViolation on every scoped RPC that uses it (%s)", async (protocol) => {
      const { scope } = await t
        .client(ScopeService, "writer")
        .resolveScope({ projects: ["local/api"], excludeResources: ["core", "guide"] });
      expect(scope!.resourceIds).toEqual([]);
      const id = scope!.scopeId;
      const calls: Promise<unknown>[] = [
        t.client(TextBackendService, "writer", id, protocol).search({ query: "zebra" }),
        t.client(VectorBackendService, "writer", id, protocol).similaritySearch({ embedding: [1, 0, 0, 0] }),
        t.client(GraphBackendService, "writer", id, protocol).sparqlQuery({ query: "ASK { ?s ?p ?o }" }),
        t.client(RagService, "writer", id, protocol).hybridSearch({ query: "zebra" }),
        t.client(ContextTierService, "writer", id, protocol).getForActor({ role: Role.STRATEGIST }),
      ];
      for (const c of calls) await expectViolation(c);
    });

    test("a project that never had resources gives an empty but usable scope (not an error)", async () => {
      await t.client(RegistryService, "writer").createProject({ name: "local/empty" });
      const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/empty"] });
      const res = await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "zebra" });
      expect(res.results).toEqual([]);
    });
  });

  describe.each(PROTOCOLS)("a precondition on a field fails: INVALID_ARGUMENT + BadRequest naming the field (%s)", (protocol) => {
    test("empty query (Search, SearchStream, HybridSearch, SparqlQuery)", async () => {
      for (const query of ["", "   "]) {
        await expectBadField(t.client(TextBackendService, "writer", w.apiScope, protocol).search({ query }), "query");
        await expectBadField(drain(t.client(TextBackendService, "writer", w.apiScope, protocol).searchStream({ query })), "query");
        await expectBadField(t.client(RagService, "writer", w.apiScope, protocol).hybridSearch({ query }), "query");
        await expectBadField(t.client(GraphBackendService, "writer", w.apiScope, protocol).sparqlQuery({ query }), "query");
      }
    });

    test("max_results <= 0", async () => {
      await expectBadField(
        t.client(TextBackendService, "writer", w.apiScope, protocol).search({ query: "zebra", maxResults: 0 }),
        "max_results",
      );
    });

    test("empty embedding (SimilaritySearch and its stream)", async () => {
      await expectBadField(t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [] }), "embedding");
      await expectBadField(
        drain(t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearchStream({ embedding: [] })),
        "embedding",
      );
    });

    test("wrong embedding dimension (search and upload)", async () => {
      await expectBadField(
        t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [1, 0, 0] }),
        "embedding",
      );
      await expectBadField(
        t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [1, 0, 0, 0, 0] }),
        "embedding",
      );
      await expectBadField(
        t.client(RagService, "writer", w.apiScope, protocol).hybridSearch({ query: "zebra", embedding: [1, 0] }),
        "embedding",
      );
      const err = await failure(
        upsert(t, "writer", [
          { resourceId: w.guide, documents: [doc("bad/dim.md", "bad", { chunks: [{ text: "bad", embedding: [1, 0] }] })] },
        ]),
      );
      assertCode(err, Code.InvalidArgument);
      expect(err.rawMessage).toMatch(/embedding/);
    });

    test("negative depth", async () => {
      await expectBadField(t.client(GraphBackendService, "writer", w.apiScope, protocol).traverse({ start: `${EX}A`, depth: -1 }), "depth");
    });

    test("bad glob", async () => {
      await expectBadField(
        t.client(ScopeService, "writer", undefined, protocol).resolveScope({ projects: ["local/api"], excludePaths: ["/abs/**"] }),
        "exclude_paths",
      );
    });

    test("bad project name (CreateProject, ResolveScope, ValidateProjectScope, StoreFragment, GetForActor)", async () => {
      for (const name of ["Local/API", "local", "local/api/extra", "-x/y", "local/"]) {
        await expectBadField(t.client(RegistryService, "writer", undefined, protocol).createProject({ name }), "name");
        await expectBadField(t.client(ScopeService, "writer", undefined, protocol).resolveScope({ projects: [name] }), "projects");
        await expectBadField(
          t.client(ScopeService, "writer", w.apiScope, protocol).validateProjectScope({ requestedProjects: [name] }),
          "requested_projects",
        );
        await expectBadField(
          t
            .client(ContextTierService, "writer", w.apiScope, protocol)
            .storeFragment({ fragment: { content: "x", tier: Tier.HOT, projectName: name } }),
          "fragment.project_name",
        );
        await expectBadField(
          t.client(ContextTierService, "writer", w.apiScope, protocol).getForActor({ role: Role.REVIEWER, projectNames: [name] }),
          "project_names",
        );
      }
    });

    test("oversize input: a query, a document, a fragment over their limits", async () => {
      const query = "zebra ".repeat(20_000);
      await expectBadField(t.client(TextBackendService, "writer", w.apiScope, protocol).search({ query }), "query");
      await expectBadField(t.client(RagService, "writer", w.apiScope, protocol).hybridSearch({ query }), "query");
      const big = "x".repeat(5 * 1024 * 1024);
      const client = t.client(IndexService, "writer", undefined, protocol);
      await expectBadField(
        client.upsertDocuments(
          (async function* () {
            yield { resourceId: w.guide, documents: [doc("big.md", big)] };
          })(),
        ),
        "documents",
      );
      await expectBadField(
        t
          .client(ContextTierService, "writer", w.apiScope, protocol)
          .storeFragment({ fragment: { content: "y".repeat(300 * 1024), tier: Tier.COLD, projectName: "local/api" } }),
        "fragment.content",
      );
    });
  });

  describe("a message over the transport limit (ACMS_MAX_MESSAGE_BYTES, 16 MiB)", () => {
    test("Connect: refused cleanly with RESOURCE_EXHAUSTED, and the server keeps serving", async () => {
      const err = await expectCode(
        t.client(TextBackendService, "writer", w.apiScope).search({ query: "q".repeat(17 * 1024 * 1024) }),
        Code.ResourceExhausted,
      );
      expect(err.rawMessage).not.toMatch(/\n\s+at /);
      await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" });
    });

    test("gRPC: refused cleanly with RESOURCE_EXHAUSTED, and the same connection keeps serving", async () => {
      const client = await startFreshGrpcClient(t, w.apiScope);
      try {
        await expectCode(client.client.search({ query: "q".repeat(17 * 1024 * 1024) }), Code.ResourceExhausted);
        expect((await client.client.search({ query: "zebra" })).results.length).toBeGreaterThan(0);
      } finally {
        client.close();
      }
    });
  });

  describe("a SPARQL query that is not a read query, or names graphs outside the scope", () => {
    test.each(PROTOCOLS)("not a read query: INVALID_ARGUMENT; an out-of-scope graph: PERMISSION_DENIED (%s)", async (protocol) => {
      const graph = t.client(GraphBackendService, "writer", w.apiScope, protocol);
      await expectCode(graph.sparqlQuery({ query: `INSERT DATA { <${EX}a> <${EX}b> <${EX}c> }` }), Code.InvalidArgument);
      await expectCode(graph.sparqlQuery({ query: "this is not sparql" }), Code.InvalidArgument);
      await expectCode(graph.sparqlQuery({ query: `SELECT * WHERE { GRAPH <uko://${w.foreign}/> { ?s ?p ?o } }` }), Code.PermissionDenied);
    });
  });

  describe("a backend is not configured: UNIMPLEMENTED", () => {
    let s: CustomServer;
    let scopeId: string;
    let resourceId: string;
    beforeAll(async () => {
      s = await startCustomServer((b) => {
        delete b.vector;
        delete b.graph;
        delete b.units;
      });
      await s.client(RegistryService, "writer").createProject({ name: "local/api" });
      resourceId = (await s.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "core", kind: "repo" }))
        .resource!.id;
      scopeId = (await s.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    });
    afterAll(async () => {
      await s.close();
    });

    test.each(PROTOCOLS)(
      "no vector backend: SimilaritySearch and its stream, HybridSearch asking for SOURCE_VECTOR (%s)",
      async (protocol) => {
        const vector = s.client(VectorBackendService, "writer", scopeId, protocol);
        await expectCode(vector.similaritySearch({ embedding: [1, 0, 0, 0] }), Code.Unimplemented);
        await expectCode(drain(vector.similaritySearchStream({ embedding: [1, 0, 0, 0] })), Code.Unimplemented);
        const rag = s.client(RagService, "writer", scopeId, protocol);
        await expectCode(rag.hybridSearch({ query: "x", embedding: [1, 0, 0, 0], sources: [Source.VECTOR] }), Code.Unimplemented);
      },
    );

    test.each(PROTOCOLS)("no graph backend: every graph RPC and PutTriples (%s)", async (protocol) => {
      const graph = s.client(GraphBackendService, "writer", scopeId, protocol);
      await expectCode(graph.sparqlQuery({ query: "ASK { ?s ?p ?o }" }), Code.Unimplemented);
      await expectCode(drain(graph.sparqlQueryStream({ query: "ASK { ?s ?p ?o }" })), Code.Unimplemented);
      await expectCode(graph.getTriples({ subject: `${EX}A` }), Code.Unimplemented);
      await expectCode(graph.traverse({ start: `${EX}A` }), Code.Unimplemented);
      await expectCode(
        s.client(IndexService, "writer", undefined, protocol).putTriples({
          resourceId,
          triples: [
            { subject: { kind: 1, value: `${EX}A` }, predicate: { kind: 1, value: `${EX}p` }, object: { kind: 1, value: `${EX}B` } },
          ],
        }),
        Code.Unimplemented,
      );
      await expectCode(
        s.client(RagService, "writer", scopeId, protocol).hybridSearch({ query: "x", sources: [Source.GRAPH] }),
        Code.Unimplemented,
      );
    });

    test.each(PROTOCOLS)("no document reader: FetchContent (%s)", async (protocol) => {
      await expectCode(
        s.client(RagService, "writer", scopeId, protocol).fetchContent({ ukoUris: [`uko://${resourceId}/a.md`] }),
        Code.Unimplemented,
      );
    });

    test("what is configured keeps working: keyword search and hybrid search over the sources that apply", async () => {
      await s.client(IndexService, "writer").upsertDocuments(
        (async function* () {
          yield { resourceId, documents: [doc("a.md", "zebra stripes")] };
        })(),
      );
      const text = await s.client(TextBackendService, "writer", scopeId).search({ query: "zebra" });
      expect(text.results.map((r) => r.path)).toEqual(["a.md"]);
      const hybrid = await s.client(RagService, "writer", scopeId).hybridSearch({ query: "zebra" });
      expect(hybrid.results.map((r) => r.path)).toEqual(["a.md"]);
    });
  });

  describe("a backend fails: UNAVAILABLE (transient) or INTERNAL, never a stack trace on the wire", () => {
    let s: CustomServer;
    let scopeId: string;
    beforeAll(async () => {
      s = await startCustomServer((b) => {
        const graph = b.graph!;
        const text = b.text;
        b.graph = new Proxy(graph, {
          get(target, prop, receiver) {
            if (prop === "query") {
              return async () => {
                throw new Error(
                  `oxigraph exploded at /work/main/src/adapters/oxigraph/oxigraph-graph-backend.ts:42:7\n    at query (/work/main/node_modules/x.js:1:1)`,
                );
              };
            }
            return Reflect.get(target, prop, receiver) as unknown;
          },
        }) as GraphBackend;
        b.text = new Proxy(text, {
          get(target, prop, receiver) {
            if (prop === "search") {
              return async () => {
                throw new UnavailableError("the keyword index is reloading, retry shortly");
              };
            }
            return Reflect.get(target, prop, receiver) as unknown;
          },
        }) as TextBackend;
      });
      await s.client(RegistryService, "writer").createProject({ name: "local/api" });
      await s.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "core", kind: "repo" });
      scopeId = (await s.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    });
    afterAll(async () => {
      await s.close();
    });

    test.each(PROTOCOLS)("an unexpected backend error is INTERNAL with a generic message (%s)", async (protocol) => {
      const graph = s.client(GraphBackendService, "writer", scopeId, protocol);
      const err = await expectCode(graph.sparqlQuery({ query: "ASK { ?s ?p ?o }" }), Code.Internal);
      expect(err.rawMessage).not.toMatch(/exploded|oxigraph|\.ts|node_modules/);
      const mid = await expectCode(drain(graph.sparqlQueryStream({ query: "SELECT * WHERE { ?s ?p ?o }" })), Code.Internal);
      expect(mid.rawMessage).not.toMatch(/exploded/);
    });

    test.each(PROTOCOLS)("a transient backend failure is UNAVAILABLE (%s)", async (protocol) => {
      await expectCode(s.client(TextBackendService, "writer", scopeId, protocol).search({ query: "zebra" }), Code.Unavailable);
    });

    test("the server keeps serving after backend failures", async () => {
      const health = await s.client(Health, "writer").check({ service: "" });
      expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      await s.client(RegistryService, "writer").listProjects({});
    });
  });

  describe("a query over the server's time limit (ACMS_SPARQL_TIMEOUT_MS)", () => {
    let slow: TestServer;
    let scope: string;
    beforeAll(async () => {
      // A limit an ASK meets even on a loaded machine; the 8-way cartesian product below runs far past it
      // whatever the machine: 60 more in-scope triples make it (6 + 60)^8 solutions to count.
      slow = await startContractServer({ ACMS_SPARQL_TIMEOUT_MS: "1000" });
      const world = await seedWorld(slow);
      scope = world.apiScope;
      await slow.client(IndexService, "writer").putTriples({
        resourceId: world.guide,
        replace: true,
        triples: Array.from({ length: 60 }, (_, i) => ({
          subject: { kind: TermKind.IRI, value: `http://example.org/filler/s${i}` },
          predicate: { kind: TermKind.IRI, value: "http://example.org/filler/p" },
          object: { kind: TermKind.IRI, value: `http://example.org/filler/o${i}` },
        })),
      });
    });
    afterAll(async () => {
      await slow.close(true);
    });

    test.each(PROTOCOLS)("is refused with DEADLINE_EXCEEDED and a plain message, and the server keeps serving (%s)", async (protocol) => {
      const graph = slow.client(GraphBackendService, "writer", scope, protocol);
      const query =
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u . ?v ?w ?x }";
      await expectCode(graph.sparqlQuery({ query }), Code.DeadlineExceeded);
      // the engine restarts after a runaway query (the budget includes waiting for it): it answers again
      let answered: boolean | undefined;
      for (let i = 0; i < 50 && answered === undefined; i++) {
        answered = await graph.sparqlQuery({ query: "ASK { ?s ?p ?o }" }).then(
          (r) => r.boolean,
          async (e: unknown) => {
            expect(Code[ConnectError.from(e).code]).toBe("DeadlineExceeded");
            await new Promise((r) => setTimeout(r, 100));
            return undefined;
          },
        );
      }
      expect(answered).toBe(true);
    });
  });

  describe("messages are for people", () => {
    test.each(PROTOCOLS)("`Projects not in scope: local/frontend. Available: local/api` (%s)", async (protocol) => {
      const { err } = await expectViolation(
        t.client(ScopeService, "writer", w.apiScope, protocol).validateProjectScope({ requestedProjects: ["local/frontend"] }),
      );
      expect(err.rawMessage).toBe("Projects not in scope: local/frontend. Available: local/api");
      const tier = await expectViolation(
        t
          .client(ContextTierService, "writer", w.apiScope, protocol)
          .getForActor({ role: Role.STRATEGIST, projectNames: ["local/frontend"] }),
      );
      expect(tier.err.rawMessage).toBe("Projects not in scope: local/frontend. Available: local/api");
      const narrow = await expectViolation(
        t.client(ScopeService, "writer", w.apiScope, protocol).narrowScope({ projects: ["local/frontend"] }),
      );
      expect(narrow.err.rawMessage).toBe("Projects not in scope: local/frontend. Available: local/api");
    });
  });

  describe("never a stack trace on the wire; the server keeps serving after bad input", () => {
    async function raw(
      path: string,
      body: BodyInit,
      contentType: string,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; text: string }> {
      const res = await fetch(`${t.server.url}${path}`, {
        method: "POST",
        headers: { "content-type": contentType, authorization: `Bearer ${t.keys.writer}`, "acms-scope": w.apiScope, ...headers },
        body,
      });
      return { status: res.status, text: await res.text() };
    }

    test("malformed bodies, unknown methods and wrong content types get a clean error", async () => {
      const answers = [
        await raw("/acms.v1.TextBackendService/Search", "{not json", "application/json"),
        await raw("/acms.v1.TextBackendService/Search", JSON.stringify({ query: 5, maxResults: "many" }), "application/json"),
        await raw("/acms.v1.TextBackendService/Search", new Uint8Array([0xff, 0xff, 0xff, 0x0f, 0x01]), "application/proto"),
        await raw("/acms.v1.TextBackendService/NoSuchMethod", "{}", "application/json"),
        await raw("/acms.v1.NoSuchService/Search", "{}", "application/json"),
        await raw("/acms.v1.TextBackendService/Search", "{}", "text/plain"),
        await raw("/acms.v1.RagService/FetchContent", JSON.stringify({ ukoUris: ["uko://\u0000/\uffff"] }), "application/json"),
      ];
      for (const a of answers) {
        expect(a.status).toBeGreaterThanOrEqual(400);
        expect(a.status).toBeLessThan(600);
        expect(a.text).not.toMatch(/\n\s+at\s|\.ts:\d|node_modules|\/work\//);
      }
    });

    test.each(PROTOCOLS)("a barrage of bad requests never yields a stack trace, and the server still answers (%s)", async (protocol) => {
      const text = t.client(TextBackendService, "writer", w.apiScope, protocol);
      const bad: Promise<unknown>[] = [
        text.search({ query: "\u0000\u0000" }),
        text.search({ query: '"unbalanced AND OR NOT (' }),
        text.search({ query: "*" }),
        t.client(GraphBackendService, "writer", w.apiScope, protocol).sparqlQuery({ query: "SELECT * WHERE { ?s ?p " }),
        t.client(GraphBackendService, "writer", w.apiScope, protocol).traverse({ start: "not an iri <>" }),
        t.client(GraphBackendService, "writer", w.apiScope, protocol).getTriples({ subject: "" }),
        t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [Number.NaN, 0, 0, 0] }),
        t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: [0, 0, 0, 0] }),
        t.client(RagService, "writer", w.apiScope, protocol).hybridSearch({ query: "x", sources: [Source.UNSPECIFIED] }),
        t.client(ContextTierService, "writer", w.apiScope, protocol).getFragment({ fragmentId: "../../etc/passwd" }),
        t.client(ContextTierService, "writer", w.apiScope, protocol).evictLru({ tier: Tier.UNSPECIFIED, count: 1 }),
        t.client(ScopeService, "writer", undefined, protocol).getScope({ scopeId: "\u0000" }),
        t.client(RegistryService, "writer", undefined, protocol).registerResource({ project: "local/api", alias: "", kind: "" }),
        t
          .client(RegistryService, "writer", undefined, protocol)
          .registerResource({ project: "local/api", alias: "x", kind: "repo", id: "not-a-ulid" }),
        t.client(IndexService, "writer", undefined, protocol).deleteDocuments({ resourceId: "nope", paths: ["a"] }),
      ];
      const wrong: string[] = [];
      for (const [i, p] of bad.entries()) {
        let err: ConnectError | undefined;
        try {
          await p;
        } catch (e) {
          err = ConnectError.from(e);
        }
        if (!err) continue;
        assertCode(err, err.code);
        if (err.code === Code.Unknown || err.code === Code.Internal) wrong.push(`#${i}: ${Code[err.code]} ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
      const ok = await text.search({ query: "zebra" });
      expect(ok.results.length).toBeGreaterThan(0);
      const health = await t.client(Health, undefined, undefined, protocol).check({ service: "" });
      expect(health.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    });
  });
});
