import { Code, ConnectError } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { badFields, failure } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import {
  buildFixture,
  COMMON,
  docUri,
  drain,
  expectAllInScope,
  expectViolation,
  graphMarker,
  graphOf,
  Q,
  resolve,
  visibleDocs,
  WORD,
  type FixtureDoc,
  type IsolationFixture,
} from "./isolation-fixture.js";

type Protocol = "connect" | "grpc";

/** Every scope the battery attacks: name → how it is made (principal, request or narrowing). */
const CASES: Array<{
  name: string;
  principal: string;
  req?: Parameters<typeof resolve>[2];
  narrow?: { from: string; deny?: (f: IsolationFixture) => string[]; excludePaths?: string[] };
}> = [
  { name: "local/api", principal: "writer", req: { projects: ["local/api"] } },
  { name: "local/api by the read-only key", principal: "reader", req: { projects: ["local/api"] } },
  {
    name: "local/api minus alias child, minus secret/**",
    principal: "writer",
    req: { projects: ["local/api"], excludeResources: ["child"], excludePaths: ["secret/**"] },
  },
  {
    name: "local/api minus **/secret/**, **/.env and a literal %2F name",
    principal: "writer",
    req: { projects: ["local/api"], excludePaths: ["**/secret/**", "**/.env", "secret%2F*"] },
  },
  {
    name: "local/api + local/web, only top-level *.md, minus secret*",
    principal: "writer",
    req: { projects: ["local/api", "local/web"], includePaths: ["*.md"], excludePaths: ["secret*"] },
  },
  { name: "local/web", principal: "writer", req: { projects: ["local/web"] } },
  {
    name: "local/api + local/web minus bare alias core (both projects)",
    principal: "writer",
    req: { projects: ["local/api", "local/web"], excludeResources: ["core"] },
  },
  {
    name: "local/api + local/web minus local/web:core",
    principal: "writer",
    req: { projects: ["local/api", "local/web"], excludeResources: ["local/web:core"] },
  },
  { name: "local/api only the linked alias common", principal: "writer", req: { projects: ["local/api"], includeResources: ["common"] } },
  {
    name: "local/api + local/web minus the linked resource by its local/api alias",
    principal: "writer",
    req: { projects: ["local/api", "local/web"], excludeResources: ["local/api:common"] },
  },
  {
    name: "local/api including core without descendants",
    principal: "writer",
    req: { projects: ["local/api"], includeResources: ["local/api:core"], expandDescendants: false } as Parameters<typeof resolve>[2],
  },
  { name: "other/secret by other", principal: "other", req: { projects: ["other/secret"] } },
  {
    name: "local/api narrowed: deny apiRoot (and so its descendants)",
    principal: "writer",
    narrow: { from: "local/api", deny: (x) => [x.apiRoot] },
  },
  {
    name: "local/api narrowed: deny apiChild and another tenant's id",
    principal: "writer",
    narrow: { from: "local/api", deny: (x) => [x.apiChild, x.secret] },
  },
  {
    name: "local/api narrowed: exclude src/** and secret/**",
    principal: "writer",
    narrow: { from: "local/api", excludePaths: ["src/**", "secret/**"] },
  },
];

/** How one run of the search isolation suite is set up. */
export interface SearchIsolationOptions {
  /** Server environment (e.g. which keyword index serves). */
  env: Record<string, string>;
  /** Delete a document, then restart the server on the same data before attacking. */
  deleteAndRestart?: boolean;
}

/**
 * The search isolation suite: a multi-tenant fixture attacked on every read path (keyword, vector, hybrid
 * with each source, FetchContent, SPARQL, GetTriples, Traverse; unary and streams; Connect and gRPC) under
 * scopes that exclude by project, alias, `ns/proj:alias`, deny, descendants and path globs. Every answer is
 * compared with the set computed independently from the fixture, and the leak guard must never fire.
 */
export function searchIsolationSuite(opts: SearchIsolationOptions): void {
  let t: TestServer;
  let f: IsolationFixture;
  const scopes = new Map<string, { scope: ResourceScope; principal: string }>();

  beforeAll(async () => {
    t = await startTestServer({ env: opts.env });
    f = await buildFixture(t);
    if (opts.deleteAndRestart) {
      // A deleted document must stay invisible on every path, and everything must hold after a restart
      // (vectors and versions reloaded from disk, scopes read back from the store).
      await t.client(IndexService, "writer").deleteDocuments({ resourceId: f.apiRoot, paths: ["src/app.ts"] });
      f.docs = f.docs.filter((d) => !(d.resource === f.apiRoot && d.path === "src/app.ts"));
    }
    for (const c of CASES) {
      if (c.req) scopes.set(c.name, { scope: await resolve(t, c.principal, c.req), principal: c.principal });
    }
    for (const c of CASES) {
      if (!c.narrow) continue;
      const parent = scopes.get(c.narrow.from)!;
      const { scope } = await t.client(ScopeService, c.principal, parent.scope.scopeId).narrowScope({
        denyResourceIds: c.narrow.deny?.(f) ?? [],
        excludePaths: c.narrow.excludePaths ?? [],
      });
      scopes.set(c.name, { scope: scope!, principal: c.principal });
    }
    if (opts.deleteAndRestart) {
      const { dataDir, keyEntries, keys } = t;
      await t.close(false);
      t = await startTestServer({ env: opts.env, dataDir, keyEntries, keys });
    }
  }, 120_000);

  afterEach(() => {
    expect(preventedLeaks.prevented).toBe(0);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  const key = (resourceId: string, path: string) => `${resourceId}/${path}`;
  const keysOf = (units: readonly { resourceId: string; path: string }[]) =>
    [...new Set(units.map((u) => key(u.resourceId, u.path)))].sort();
  const docKeys = (docs: readonly FixtureDoc[]) => [...new Set(docs.map((d) => key(d.resource, d.path)))].sort();
  const cosine = (a: number[], b: number[]) => {
    const dot = a.reduce((s, x, i) => s + x * b[i], 0);
    return dot / (Math.hypot(...a) * Math.hypot(...b));
  };

  describe("the expected scopes resolve as the contract says", () => {
    it("expands descendants, never past the key, and resolves colliding aliases per project", () => {
      const ids = (name: string) => [...scopes.get(name)!.scope.resourceIds].sort();
      const sorted = (...xs: string[]) => [...xs].sort();
      expect(ids("local/api")).toEqual(sorted(f.apiRoot, f.apiChild, f.apiGrand, f.shared));
      expect(ids("local/api")).not.toContain(f.leaf);
      expect(ids("local/api minus alias child, minus secret/**")).toEqual(sorted(f.apiRoot, f.shared));
      expect(ids("local/web")).toEqual(sorted(f.web, f.shared));
      expect(ids("local/api + local/web minus bare alias core (both projects)")).toEqual([f.shared]);
      expect(ids("local/api + local/web minus local/web:core")).toEqual(sorted(f.apiRoot, f.apiChild, f.apiGrand, f.shared));
      expect(ids("local/api only the linked alias common")).toEqual([f.shared]);
      expect(ids("local/api + local/web minus the linked resource by its local/api alias")).toEqual(
        sorted(f.apiRoot, f.apiChild, f.apiGrand, f.web),
      );
      expect(ids("local/api including core without descendants")).toEqual([f.apiRoot]);
      expect(ids("other/secret by other")).toEqual(sorted(f.secret, f.leaf));
      expect(ids("local/api narrowed: deny apiRoot (and so its descendants)")).toEqual([f.shared]);
      expect(ids("local/api narrowed: deny apiChild and another tenant's id")).toEqual(sorted(f.apiRoot, f.shared));
    });
  });

  describe.each(CASES.map((c) => c.name))("scope %s", (name) => {
    const get = () => scopes.get(name)!;
    const text = (p: Protocol = "connect") => t.client(TextBackendService, get().principal, get().scope.scopeId, p);
    const vector = (p: Protocol = "connect") => t.client(VectorBackendService, get().principal, get().scope.scopeId, p);
    const rag = (p: Protocol = "connect") => t.client(RagService, get().principal, get().scope.scopeId, p);
    const graph = (p: Protocol = "connect") => t.client(GraphBackendService, get().principal, get().scope.scopeId, p);

    it.each(["connect", "grpc"] as const)("keyword search finds exactly the visible documents, unary and stream (%s)", async (p) => {
      const { scope } = get();
      const res = await text(p).search({ query: WORD, maxResults: 1000 });
      expect(res.scopeId).toBe(scope.scopeId);
      expectAllInScope(scope, res.results);
      expect(keysOf(res.results)).toEqual(docKeys(visibleDocs(f, scope)));
      const streamed = await drain(text(p).searchStream({ query: WORD, maxResults: 1000 }));
      expect(streamed.map((m) => [m.result!.ukoUri, m.result!.score])).toEqual(res.results.map((r) => [r.ukoUri, r.score]));
      // A small max_results is filled from the visible rows (filters run before the cut, not after it).
      for (const k of [1, 2, 3]) {
        const small = await text(p).search({ query: WORD, maxResults: k });
        expect(small.results.map((r) => r.ukoUri)).toEqual(res.results.slice(0, k).map((r) => r.ukoUri));
      }
    });

    it("keyword search for each invisible document's own marker finds nothing", async () => {
      const { scope } = get();
      const visible = new Set(visibleDocs(f, scope));
      for (const d of f.docs.filter((x) => !visible.has(x))) {
        const res = await text().search({ query: d.marker });
        expect({ marker: d.marker, results: res.results.map((r) => r.ukoUri) }).toEqual({ marker: d.marker, results: [] });
      }
      expect((await text().search({ query: f.oldMarker })).results).toEqual([]);
    });

    it.each(["connect", "grpc"] as const)(
      "similarity search never returns the nearer out-of-scope chunks, unary and stream (%s)",
      async (p) => {
        const { scope } = get();
        const visible = visibleDocs(f, scope);
        const all = await vector(p).similaritySearch({ embedding: Q, topK: 1000, minScore: 0 });
        expectAllInScope(scope, all.results);
        expect(keysOf(all.results)).toEqual(docKeys(visible));
        for (const r of all.results) expect(r.content).not.toContain(f.oldMarker);
        // A small k must still be filled from the in-scope chunks (the filter is applied before the cut).
        const k = 2;
        const top = await vector(p).similaritySearch({ embedding: Q, topK: k });
        expectAllInScope(scope, top.results);
        const best = [...visible]
          .map((d) => cosine(d.embedding, Q))
          .sort((a, b) => b - a)
          .slice(0, k);
        expect(top.results.map((r) => r.score)).toEqual(best.map((s) => expect.closeTo(s, 5)));
        const streamed = await drain(vector(p).similaritySearchStream({ embedding: Q, topK: 1000, minScore: 0 }));
        expect(streamed.map((m) => [m.result!.ukoUri, m.result!.score])).toEqual(all.results.map((r) => [r.ukoUri, r.score]));
      },
    );

    it.each([
      ["text", [Source.TEXT]],
      ["vector", [Source.VECTOR]],
      ["graph", [Source.GRAPH]],
      ["every source", []],
      ["text+graph", [Source.TEXT, Source.GRAPH]],
    ] as const)("hybrid search over %s stays in scope; the stream equals the unary answer", async (_label, sources) => {
      const { scope } = get();
      const query = `${WORD} gxapiroot gxweb gxsecret gxleaf gxshared gxapichild mksecretkeys mktenantsecret`;
      const req = { query, embedding: Q, topK: 1000, sources: [...sources] };
      const res = await rag().hybridSearch(req);
      expect(res.scopeId).toBe(scope.scopeId);
      expectAllInScope(scope, res.results);
      if (sources.length === 1 && sources[0] === Source.TEXT) expect(keysOf(res.results)).toEqual(docKeys(visibleDocs(f, scope)));
      for (const p of ["connect", "grpc"] as const) {
        const streamed = await drain(rag(p).hybridSearchStream(req));
        expect(streamed.map((m) => [m.result!.ukoUri, m.result!.score])).toEqual(res.results.map((r) => [r.ukoUri, r.score]));
      }
    });

    it("FetchContent returns every visible document and refuses every invisible one, existing or not", async () => {
      const { scope } = get();
      const visible = visibleDocs(f, scope);
      const uris = visible.flatMap((d) => [docUri(d.resource, d.path), `${docUri(d.resource, d.path)}#0`]);
      const res = await rag().fetchContent({ ukoUris: uris });
      expect(res.missing).toEqual([]);
      expect(res.items.map((i) => i.ukoUri)).toEqual(uris);
      expectAllInScope(scope, res.items);
      res.items.forEach((item, i) => expect(item.content).toBe(visible[Math.floor(i / 2)].content));
      const overGrpc = await rag("grpc").fetchContent({ ukoUris: uris });
      expect(overGrpc.items.map((i) => [i.ukoUri, i.content])).toEqual(res.items.map((i) => [i.ukoUri, i.content]));
      const set = new Set(visible);
      // The refusals are independent calls: issued together (each awaited and checked on its own), so the
      // round trips overlap instead of queueing one after another (one by one, a loaded machine took more
      // than jest's 30 s for the hundred-odd calls of one scope; the longer limit is for such a machine).
      const invisibleUris = f.docs
        .filter((x) => !set.has(x))
        .flatMap((d) => [docUri(d.resource, d.path), `${docUri(d.resource, d.path)}#0`]);
      await Promise.all(
        invisibleUris.flatMap((uri) => [
          ...(["connect", "grpc"] as const).map(async (p) =>
            expect([...(await expectViolation(rag(p).fetchContent({ ukoUris: [uri] }))).resourceIds].length).toBeLessThanOrEqual(1),
          ),
          // One bad URI among good ones refuses the whole call: nothing partial leaks.
          expectViolation(rag().fetchContent({ ukoUris: [...uris.slice(0, 1), uri] })),
        ]),
      );
      // An id no resource has is refused exactly like an existing one of another tenant.
      const ghost = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
      const v = await expectViolation(rag().fetchContent({ ukoUris: [docUri(ghost, "readme.md")] }));
      expect(v.resourceIds).toEqual([ghost]);
    }, 120_000);

    it("graph reads see exactly the scope's named graphs", async () => {
      const { scope } = get();
      const graphs = await graph().sparqlQuery({ query: "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }" });
      expect(graphs.rows.map((r) => r.bindings.g.value).sort()).toEqual(scope.resourceIds.map(graphOf).sort());
      const labels = await graph().sparqlQuery({ query: `SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }` });
      expect(labels.rows.map((r) => r.bindings.l.value).sort()).toEqual(
        scope.resourceIds.map((r) => `${WORD} ${graphMarker(f, r)} label`).sort(),
      );
      const common = await graph().getTriples({ subject: COMMON });
      const mentioned = common.triples.filter((x) => x.predicate!.value.endsWith("mentionedIn")).map((x) => x.object!.value);
      expect(mentioned.sort()).toEqual(scope.resourceIds.map((r) => graphMarker(f, r)).sort());
      const walked = await graph().traverse({ start: COMMON, depth: 3 });
      const walkedLabels = walked.triples.filter((x) => x.predicate!.value.endsWith("#label")).map((x) => x.object!.value);
      expect(walkedLabels.sort()).toEqual(labels.rows.map((r) => r.bindings.l.value).sort());
      const out = f.docs.filter((d) => !scope.resourceIds.includes(d.resource));
      for (const r of new Set(out.map((d) => d.resource))) {
        const ask = await graph().sparqlQuery({ query: `ASK { ?s ?p "${graphMarker(f, r)}" }` });
        expect(ask.boolean).toBe(false);
      }
    });
  });

  if (opts.deleteAndRestart) {
    describe("a deleted document", () => {
      it("is invisible on every path, also after the restart", async () => {
        const { scope } = scopes.get("local/api")!;
        const text = t.client(TextBackendService, "writer", scope.scopeId);
        expect((await text.search({ query: "mkapp" })).results).toEqual([]);
        const vec = await t
          .client(VectorBackendService, "writer", scope.scopeId)
          .similaritySearch({ embedding: [0.6, 0.8, 0, 0], topK: 1000, minScore: 0 });
        expect(vec.results.map((r) => r.path)).not.toContain("src/app.ts");
        const uri = docUri(f.apiRoot, "src/app.ts");
        const fetched = await t.client(RagService, "writer", scope.scopeId).fetchContent({ ukoUris: [uri, `${uri}#0`] });
        expect(fetched.items).toEqual([]);
        expect(fetched.missing).toEqual([uri, `${uri}#0`]);
        // The graph still points at it (triples are not derived from documents): the graph source must not revive it.
        const viaGraph = await t
          .client(RagService, "writer", scope.scopeId)
          .hybridSearch({ query: "gxapiroot", sources: [Source.GRAPH], topK: 1000 });
        expect(viaGraph.results.length).toBeGreaterThan(0);
        expect(viaGraph.results.map((r) => r.path)).not.toContain("src/app.ts");
      });
    });
  }

  describe("temporal scope", () => {
    it("a superseded version is invisible under current on every read path, and visible under all", async () => {
      const current = scopes.get("local/api")!.scope;
      const all = await resolve(t, "writer", { projects: ["local/api"], temporalScope: "all" });
      const text = (s: ResourceScope) => t.client(TextBackendService, "writer", s.scopeId);
      expect((await text(current).search({ query: f.oldMarker })).results).toEqual([]);
      const old = await text(all).search({ query: f.oldMarker });
      expect(old.results.map((r) => r.path)).toEqual(["history.md"]);
      const vec = await t
        .client(VectorBackendService, "writer", current.scopeId)
        .similaritySearch({ embedding: Q, topK: 1000, minScore: 0 });
      expect(vec.results.some((r) => r.content.includes(f.oldMarker))).toBe(false);
      const hybrid = await t.client(RagService, "writer", current.scopeId).hybridSearch({ query: f.oldMarker, embedding: Q, topK: 1000 });
      expect(hybrid.results.some((r) => r.content.includes(f.oldMarker))).toBe(false);
      const fetched = await t.client(RagService, "writer", current.scopeId).fetchContent({ ukoUris: [docUri(f.apiRoot, "history.md")] });
      expect(fetched.items.map((i) => i.content)).toEqual([`${WORD} ${f.newMarker} notes`]);
      // The graph points at history.md#0: the graph source must read the live version, not the superseded one.
      const viaGraph = await t
        .client(RagService, "writer", current.scopeId)
        .hybridSearch({ query: "gxapiroot", sources: [Source.GRAPH], topK: 1000 });
      const history = viaGraph.results.filter((r) => r.path === "history.md");
      expect(history.map((r) => r.content)).toEqual([`${WORD} ${f.newMarker} notes`]);
    });
  });

  describe("errors inside streams", () => {
    it.each(["connect", "grpc"] as const)("arrive as INVALID_ARGUMENT with the field named, and nothing before them (%s)", async (p) => {
      const { scope } = scopes.get("local/api")!;
      const c = <S extends Parameters<TestServer["client"]>[0]>(svc: S) => t.client(svc, "writer", scope.scopeId, p);
      expect(await badFields(drain(c(TextBackendService).searchStream({ query: "  " })))).toEqual(["query"]);
      expect(await badFields(drain(c(TextBackendService).searchStream({ query: WORD, maxResults: 0 })))).toEqual(["max_results"]);
      expect(await badFields(drain(c(VectorBackendService).similaritySearchStream({ embedding: [1, 0] })))).toEqual(["embedding"]);
      expect(await badFields(drain(c(RagService).hybridSearchStream({ query: WORD, topK: -1 })))).toEqual(["top_k"]);
      expect(await badFields(drain(c(GraphBackendService).sparqlQueryStream({ query: "DROP ALL" })))).toEqual(["query"]);
    });
  });

  describe("path tricks against FetchContent", () => {
    const narrow = () => scopes.get("local/api minus alias child, minus secret/**")!.scope;
    const rag = () => t.client(RagService, "writer", narrow().scopeId);

    it("refuses spellings of an excluded path that the filter matches", async () => {
      for (const path of ["secret/keys.md", "secret/keys.md#0", "secret/deep/inner.md", "secret/keys.md?x=1", "secret/keys.md%00"]) {
        await expectViolation(rag().fetchContent({ ukoUris: [`uko://${f.apiRoot}/${path}`] }));
      }
    });

    it("treats malformed spellings (dot segments, empty segments, absolute, backslash, bad chunk) as INVALID_ARGUMENT", async () => {
      const bad = [
        `uko://${f.apiRoot}/./secret/keys.md`,
        `uko://${f.apiRoot}/x/../secret/keys.md`,
        `uko://${f.apiRoot}/secret/../secret/keys.md`,
        `uko://${f.apiRoot}//secret/keys.md`,
        `uko://${f.apiRoot}/secret//keys.md`,
        `uko://${f.apiRoot}/secret/keys.md/`,
        `uko://${f.apiRoot}/secret\\keys.md`,
        `uko://${f.apiRoot}/secret/keys.md#x`,
        `uko://${f.apiRoot}/secret/keys.md#-1`,
        `uko://${f.apiRoot}`,
        `uko://${f.apiRoot}/`,
        `uko://not-a-ulid/readme.md`,
        `UKO://${f.apiRoot}/readme.md`,
        `file:///etc/passwd`,
        `uko:${f.apiRoot}/readme.md`,
      ];
      for (let i = 0; i < bad.length; i++) {
        const fields = await badFields(rag().fetchContent({ ukoUris: [`uko://${f.apiRoot}/readme.md`, bad[i]] }));
        expect(fields).toEqual(["uko_uris[1]"]);
      }
    });

    it("never decodes, case-folds or otherwise maps another spelling onto an excluded document", async () => {
      const spellings = [
        "secret%2Fkeys.md",
        "secret%2fkeys.md",
        "%73ecret/keys.md",
        "SECRET/keys.md",
        "Secret/keys.md",
        "SECRET/KEYS.md",
        "secret%2Fdeep%2Finner.md",
      ];
      const uris = spellings.map((p) => `uko://${f.apiRoot}/${p}`);
      const res = await rag().fetchContent({ ukoUris: uris });
      expect(res.items).toEqual([]);
      expect(res.missing).toEqual(uris);
      // The literal `secret%2Fencoded.md` is its own document, outside secret/, and is served as itself.
      const literal = await rag().fetchContent({ ukoUris: [`uko://${f.apiRoot}/secret%2Fencoded.md`] });
      expect(literal.items.map((i) => i.content)).toEqual([`${WORD} mkencoded notes`]);
    });

    it("refuses an in-scope resource id in another letter case rather than mapping it", async () => {
      const err = await failure(rag().fetchContent({ ukoUris: [`uko://${f.apiRoot.toLowerCase()}/readme.md`] }));
      expect([Code[Code.PermissionDenied], Code[Code.InvalidArgument]]).toContain(Code[err.code]);
    });
  });

  describe("query syntax cannot widen a keyword search", () => {
    it.each([
      `${WORD} OR mktenantsecret`,
      `"${WORD}" OR resource_id:*`,
      `mkweb*`,
      `NEAR(${WORD} mkweb)`,
      `path : secret`,
      `{resource_id path} : ${WORD}`,
      `${WORD} NOT mkreadme`,
      `^${WORD}`,
      `" OR 1=1 --`,
      `'); DROP TABLE chunks; --`,
    ])("query %p", async (query) => {
      const { scope } = scopes.get("local/api minus alias child, minus secret/**")!;
      const outcome = await t
        .client(TextBackendService, "writer", scope.scopeId)
        .search({ query, maxResults: 1000 })
        .then(
          (res) => ({ res, err: undefined }),
          (err: unknown) => ({ res: undefined, err: ConnectError.from(err) }),
        );
      // Refusing odd syntax is fine; failing inside the backend is not.
      if (outcome.err) expect(Code[outcome.err.code]).toBe(Code[Code.InvalidArgument]);
      else expectAllInScope(scope, outcome.res!.results);
    });
  });
}
