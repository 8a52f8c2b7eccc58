import { Code, ConnectError } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { doc, upsert } from "../index/index-fixture.js";
import type { TestServer } from "../support/test-server.js";
import {
  drain,
  EX,
  expectBadField,
  expectCode,
  expectViolation,
  PROTOCOLS,
  seedWorld,
  startContractServer,
  type ContractWorld,
} from "./contract-fixture.js";

const GHOST = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const EAST = [1, 0, 0, 0];

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * b[i];
    na += x * x;
    nb += b[i] * b[i];
  });
  return dot / Math.sqrt(na * nb);
}

describe("Precise rules", () => {
  let t: TestServer;
  let w: ContractWorld;
  beforeAll(async () => {
    t = await startContractServer();
    w = await seedWorld(t);
  });
  afterAll(async () => {
    await t.close(true);
  });

  describe.each(PROTOCOLS)("optional numbers (%s)", (protocol) => {
    const text = () => t.client(TextBackendService, "writer", w.apiScope, protocol);
    const vector = () => t.client(VectorBackendService, "writer", w.bulkScope, protocol);
    const rag = () => t.client(RagService, "writer", w.bulkScope, protocol);
    const graph = () => t.client(GraphBackendService, "writer", w.apiScope, protocol);

    test("max_results absent means the default 20; present is honoured", async () => {
      expect((await text().search({ query: "common" })).results).toHaveLength(20);
      expect(await drain(text().searchStream({ query: "common" }))).toHaveLength(20);
      expect((await text().search({ query: "common", maxResults: 3 })).results).toHaveLength(3);
      expect((await text().search({ query: "common", maxResults: 1000 })).results).toHaveLength(w.guidePages);
    });

    test("max_results present and invalid (0, negative, over the cap 1000) is INVALID_ARGUMENT naming max_results", async () => {
      for (const maxResults of [0, -1, 1001]) {
        await expectBadField(text().search({ query: "common", maxResults }), "max_results");
        await expectBadField(drain(text().searchStream({ query: "common", maxResults })), "max_results");
      }
    });

    test("top_k absent means the default 20 (vector and hybrid); present is honoured", async () => {
      const embedding = [0, 0, 0, 1];
      expect((await vector().similaritySearch({ embedding })).results).toHaveLength(20);
      expect(await drain(vector().similaritySearchStream({ embedding }))).toHaveLength(20);
      expect((await vector().similaritySearch({ embedding, topK: 4 })).results).toHaveLength(4);
      expect((await rag().hybridSearch({ query: "bulk" })).results).toHaveLength(20);
      expect((await rag().hybridSearch({ query: "bulk", topK: 5 })).results).toHaveLength(5);
    });

    test("top_k present and invalid (0, negative, over the cap) is INVALID_ARGUMENT naming top_k", async () => {
      for (const topK of [0, -5, 1001]) {
        await expectBadField(vector().similaritySearch({ embedding: EAST, topK }), "top_k");
        await expectBadField(drain(vector().similaritySearchStream({ embedding: EAST, topK })), "top_k");
        await expectBadField(rag().hybridSearch({ query: "bulk", topK }), "top_k");
        await expectBadField(drain(rag().hybridSearchStream({ query: "bulk", topK })), "top_k");
      }
    });

    test("rrf_k absent means 60 (same answer as rrf_k=60); present and invalid is INVALID_ARGUMENT naming rrf_k", async () => {
      const absent = await rag().hybridSearch({ query: "bulk", embedding: [0, 0, 0, 1] });
      const sixty = await rag().hybridSearch({ query: "bulk", embedding: [0, 0, 0, 1], rrfK: 60 });
      expect(absent.results.map((r) => [r.ukoUri, r.score])).toEqual(sixty.results.map((r) => [r.ukoUri, r.score]));
      for (const rrfK of [0, -1, 1001]) {
        await expectBadField(rag().hybridSearch({ query: "bulk", rrfK }), "rrf_k");
        await expectBadField(drain(rag().hybridSearchStream({ query: "bulk", rrfK })), "rrf_k");
      }
    });

    test("depth absent means 2; 0 and 8 are accepted; negative or over 8 is INVALID_ARGUMENT naming depth", async () => {
      const absent = await graph().traverse({ start: `${EX}A` });
      const two = await graph().traverse({ start: `${EX}A`, depth: 2 });
      expect(absent.triples).toEqual(two.triples);
      await graph().traverse({ start: `${EX}A`, depth: 0 });
      await graph().traverse({ start: `${EX}A`, depth: 8 });
      for (const depth of [-1, 9, 1000]) await expectBadField(graph().traverse({ start: `${EX}A`, depth }), "depth");
    });

    test("min_score absent means no threshold; present outside [0, 1] is INVALID_ARGUMENT naming min_score", async () => {
      const all = await t.client(VectorBackendService, "writer", w.apiScope, protocol).similaritySearch({ embedding: EAST });
      expect(all.results.length).toBeGreaterThan(1);
      const high = await t
        .client(VectorBackendService, "writer", w.apiScope, protocol)
        .similaritySearch({ embedding: EAST, minScore: 0.7 });
      expect(high.results.length).toBeGreaterThan(0);
      expect(high.results.every((r) => r.score >= 0.7)).toBe(true);
      for (const minScore of [-0.1, 1.5, Number.NaN]) {
        await expectBadField(vector().similaritySearch({ embedding: EAST, minScore }), "min_score");
        await expectBadField(rag().hybridSearch({ query: "bulk", minScore }), "min_score");
      }
    });
  });

  describe("names in include_resources / exclude_resources", () => {
    test("a ULID, an alias and namespace/project:alias all name a resource", async () => {
      for (const name of [w.guide, "guide", "local/api:guide"]) {
        const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includeResources: [name] });
        expect(scope!.resourceIds).toEqual([w.guide]);
      }
    });

    test("a bare alias applies in every scoped project that has it", async () => {
      const reg = t.client(RegistryService, "writer");
      const a = (await reg.registerResource({ project: "local/api", alias: "twin-alias", kind: "repo" })).resource!.id;
      const f = (await reg.registerResource({ project: "local/frontend", alias: "twin-alias", kind: "repo" })).resource!.id;
      const { scope } = await t
        .client(ScopeService, "writer")
        .resolveScope({ projects: ["local/api", "local/frontend"], includeResources: ["twin-alias"] });
      expect([...scope!.resourceIds].sort()).toEqual([a, f].sort());
      const { scope: one } = await t
        .client(ScopeService, "writer")
        .resolveScope({ projects: ["local/api", "local/frontend"], includeResources: ["local/frontend:twin-alias"] });
      expect(one!.resourceIds).toEqual([f]);
    });

    test("allow and deny act on the named resources together with their descendants (deny after allow)", async () => {
      const { scope: allow } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includeResources: ["core"] });
      expect([...allow!.resourceIds].sort()).toEqual([w.core, w.lib].sort());
      const { scope: deny } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], excludeResources: ["core"] });
      expect(deny!.resourceIds).not.toContain(w.core);
      expect(deny!.resourceIds).not.toContain(w.lib);
      expect(deny!.resourceIds).toContain(w.guide);
      const { scope: both } = await t
        .client(ScopeService, "writer")
        .resolveScope({ projects: ["local/api"], includeResources: ["core"], excludeResources: ["lib"] });
      expect(both!.resourceIds).toEqual([w.core]);
    });

    test("a name that matches nothing is INVALID_ARGUMENT naming the field", async () => {
      const scopes = t.client(ScopeService, "writer");
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], includeResources: ["gide"] }), "include_resources");
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], excludeResources: ["gide"] }), "exclude_resources");
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], excludeResources: [GHOST] }), "exclude_resources");
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], includeResources: ["local/frontend:web"] }), "include_resources");
      // an existing resource outside the named projects matches nothing there
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], includeResources: [w.web] }), "include_resources");
      // another tenant's resource, by id, matches nothing the caller may name
      await expectBadField(scopes.resolveScope({ projects: ["local/api"], includeResources: [w.foreign] }), "include_resources");
    });
  });

  describe("globs", () => {
    const bad = ["", "/etc/**", "../**", "docs/../secret/**", "a".repeat(1025)];

    test("empty, absolute, '..' and over-1024-character patterns are INVALID_ARGUMENT (ResolveScope include_paths and exclude_paths)", async () => {
      const scopes = t.client(ScopeService, "writer");
      for (const g of bad) {
        await expectBadField(scopes.resolveScope({ projects: ["local/api"], includePaths: [g] }), "include_paths");
        await expectBadField(scopes.resolveScope({ projects: ["local/api"], excludePaths: [g] }), "exclude_paths");
      }
    });

    test("the same bad patterns are INVALID_ARGUMENT in NarrowScope exclude_paths", async () => {
      const scopes = t.client(ScopeService, "writer", w.apiScope);
      for (const g of bad) await expectBadField(scopes.narrowScope({ excludePaths: [g] }), "exclude_paths");
    });

    test("relative POSIX patterns with ** (recursive) and a 1,024-character pattern are accepted and filter paths", async () => {
      const scopes = t.client(ScopeService, "writer");
      const long = "a".repeat(1024);
      const paths = async (includePaths: string[], excludePaths: string[] = []) => {
        const { scope } = await scopes.resolveScope({ projects: ["local/api"], includePaths, excludePaths });
        expect(scope!.includePaths).toEqual(includePaths);
        const res = await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "zebra" });
        return res.results.map((r) => r.path).sort();
      };
      expect(await paths(["src/**", long])).toEqual(["src/retry.ts"]);
      expect(await paths(["**/*.md"])).toEqual(["lib/util.md", "secret/keys.md"]);
      expect(await paths([], ["secret/**", long])).toEqual(["lib/util.md", "src/retry.ts"]);
    });
  });

  describe("NarrowScope", () => {
    test("projects not a subset of the parent's is PERMISSION_DENIED with a ScopeViolation naming them", async () => {
      const { violation } = await expectViolation(
        t.client(ScopeService, "writer", w.apiScope).narrowScope({ projects: ["local/frontend"] }),
      );
      expect(violation.projectNames).toEqual(["local/frontend"]);
      expect(violation.scopeProjectNames).toEqual(["local/api"]);
      const viaGrpc = await expectViolation(
        t.client(ScopeService, "writer", w.apiScope, "grpc").narrowScope({ projects: ["local/api", "local/frontend"] }),
      );
      expect(viaGrpc.violation.projectNames).toEqual(["local/frontend"]);
    });

    test("denying an id the parent does not hold changes nothing", async () => {
      const parent = (await t.client(ScopeService, "writer").getScope({ scopeId: w.apiScope })).scope!;
      const { scope } = await t.client(ScopeService, "writer", w.apiScope).narrowScope({ denyResourceIds: [w.web, w.foreign, GHOST] });
      expect([...scope!.resourceIds].sort()).toEqual([...parent.resourceIds].sort());
      expect(scope!.parentScopeId).toBe(w.apiScope);
      expect(scope!.projectNames).toEqual(parent.projectNames);
    });

    test("the child is narrower: a denied resource is out of the child's searches, and the child cannot widen back", async () => {
      const { scope } = await t.client(ScopeService, "writer", w.apiScope).narrowScope({ denyResourceIds: [w.core] });
      expect(scope!.resourceIds).not.toContain(w.core);
      expect(scope!.resourceIds).not.toContain(w.lib);
      const res = await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "zebra" });
      expect(res.results.map((r) => r.resourceId)).toEqual([]);
      await expectViolation(t.client(ScopeService, "writer", scope!.scopeId).validateResourceScope({ requestedResourceIds: [w.core] }));
    });
  });

  describe("vector score", () => {
    test("score is the cosine similarity of the query and the chunk embedding", async () => {
      const query = [1, 1, 0, 0];
      const res = await t.client(VectorBackendService, "writer", w.apiScope).similaritySearch({ embedding: query });
      const expected: Record<string, number[]> = {
        "src/retry.ts": [1, 0, 0, 0],
        "src/twin-a.md": [0, 1, 0, 0],
        "src/twin-b.md": [0, 1, 0, 0],
        "secret/keys.md": [0.8, 0, 0.6, 0],
        "lib/util.md": [0.6, 0.8, 0, 0],
      };
      expect(res.results.map((r) => r.path).sort()).toEqual(Object.keys(expected).sort());
      for (const r of res.results) expect(r.score).toBeCloseTo(cosine(query, expected[r.path]), 5);
    });

    test("a hybrid result's vector contribution carries the cosine too", async () => {
      const query = [1, 1, 0, 0];
      const res = await t
        .client(RagService, "writer", w.apiScope)
        .hybridSearch({ query: "zebra", embedding: query, sources: [Source.VECTOR] });
      const util = res.results.find((r) => r.path === "lib/util.md")!;
      const contribution = util.contributions.find((c) => c.source === Source.VECTOR)!;
      expect(contribution.score).toBeCloseTo(cosine(query, [0.6, 0.8, 0, 0]), 5);
    });

    test("a candidate with a negative cosine is never returned", async () => {
      const res = await t.client(VectorBackendService, "writer", w.apiScope).similaritySearch({ embedding: EAST, topK: 1000 });
      expect(res.results.map((r) => r.path)).not.toContain("src/opposite.md");
      const west = await t.client(VectorBackendService, "writer", w.apiScope).similaritySearch({ embedding: [-1, 0, 0, 0], topK: 1000 });
      expect(west.results.every((r) => r.score >= 0)).toBe(true);
      expect(west.results.map((r) => r.path)).not.toContain("src/retry.ts");
      const stream = await drain(
        t.client(VectorBackendService, "writer", w.apiScope).similaritySearchStream({ embedding: EAST, topK: 1000 }),
      );
      expect(stream.map((m) => m.result!.path)).not.toContain("src/opposite.md");
      const hybrid = await t
        .client(RagService, "writer", w.apiScope)
        .hybridSearch({ query: "west", embedding: EAST, sources: [Source.VECTOR] });
      expect(hybrid.results.map((r) => r.path)).not.toContain("src/opposite.md");
    });
  });

  describe("FetchContent", () => {
    test("items: one per requested position found, in request order, duplicates repeat", async () => {
      const retry = `uko://${w.core}/src/retry.ts`;
      const util = `uko://${w.lib}/lib/util.md#0`;
      const uris = [util, retry, util, `${retry}#0`, retry];
      const res = await t.client(RagService, "writer", w.apiScope).fetchContent({ ukoUris: uris });
      expect(res.items.map((i) => i.ukoUri)).toEqual(uris);
      expect(res.items[1].content).toBe("retry with exponential backoff zebra");
      expect(res.items[0].content).toBe("utility zebra helpers");
      expect(res.missing).toEqual([]);
      expect(res.scopeId).toBe(w.apiScope);
      expect(res.exhaustive).toBe(true);
      const search = await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" });
      expect(res.indexGeneration).toBe(search.indexGeneration);
    });

    test("missing lists the URIs of in-scope resources that hold no such unit", async () => {
      const nowhere = `uko://${w.core}/src/nowhere.md`;
      const badChunk = `uko://${w.core}/src/retry.ts#99`;
      const retry = `uko://${w.core}/src/retry.ts`;
      const res = await t.client(RagService, "writer", w.apiScope).fetchContent({ ukoUris: [nowhere, retry, badChunk] });
      expect(res.items.map((i) => i.ukoUri)).toEqual([retry]);
      expect(res.missing).toEqual([nowhere, badChunk]);
    });

    test.each(PROTOCOLS)(
      "a URI whose resource is not in the effective scope is PERMISSION_DENIED, whether or not it exists (%s)",
      async (protocol) => {
        const rag = t.client(RagService, "writer", w.apiScope, protocol);
        const foreign = await expectViolation(rag.fetchContent({ ukoUris: [`uko://${w.foreign}/x.md`] }));
        expect(foreign.violation.resourceIds).toEqual([w.foreign]);
        const ghost = await expectViolation(rag.fetchContent({ ukoUris: [`uko://${GHOST}/x.md`] }));
        expect(ghost.violation.resourceIds).toEqual([GHOST]);
        expect(ghost.err.rawMessage.split(GHOST).join("<id>")).toBe(foreign.err.rawMessage.split(w.foreign).join("<id>"));
        const web = await expectViolation(rag.fetchContent({ ukoUris: [`uko://${w.core}/src/retry.ts`, `uko://${w.web}/web/ui.md`] }));
        expect(web.violation.resourceIds).toEqual([w.web]);
        await expectViolation(
          t.client(RagService, "writer", w.noSecretScope, protocol).fetchContent({ ukoUris: [`uko://${w.core}/secret/keys.md`] }),
        );
      },
    );

    test("a malformed URI is INVALID_ARGUMENT naming uko_uris", async () => {
      const rag = t.client(RagService, "writer", w.apiScope);
      for (const bad of [
        "",
        "http://x/y",
        `uko://not-a-ulid/x.md`,
        `uko://${w.core}`,
        `uko://${w.core}/x.md#-1`,
        `uko://${w.core}/x.md#abc`,
        `uko://${w.core}/../x.md`,
      ]) {
        await expectBadField(rag.fetchContent({ ukoUris: [bad] }), "uko_uris");
      }
    });
  });

  describe("SPARQL under a scope", () => {
    const sparql = (scope: string, query: string, protocol: "connect" | "grpc" = "connect") =>
      t.client(GraphBackendService, "writer", scope, protocol).sparqlQuery({ query });
    const values = (rows: { bindings: Record<string, { value: string }> }[], v: string) => rows.map((r) => r.bindings[v]?.value).sort();

    test("the default graph is the union of the in-scope named graphs", async () => {
      const res = await sparql(w.bothScope, "SELECT DISTINCT ?s WHERE { ?s ?p ?o }");
      expect(values(res.rows, "s")).toEqual([`${EX}A`, `${EX}B`, `${EX}C`, `${EX}D`, `${EX}W`]);
      const api = await sparql(w.apiScope, `SELECT ?o WHERE { <${EX}A> ?p ?o }`);
      expect(values(api.rows, "o")).toEqual(["Alpha zebra", `${EX}B`]);
    });

    test("the named graphs are the in-scope ones", async () => {
      const res = await sparql(w.bothScope, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }");
      expect(values(res.rows, "g")).toEqual([`uko://${w.core}/`, `uko://${w.web}/`].sort());
      const api = await sparql(w.apiScope, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }");
      expect(values(api.rows, "g")).toEqual([`uko://${w.core}/`]);
    });

    test("FROM / FROM NAMED naming in-scope graphs narrows the dataset", async () => {
      const from = await sparql(w.bothScope, `SELECT DISTINCT ?s FROM <uko://${w.web}/> WHERE { ?s ?p ?o }`);
      expect(values(from.rows, "s")).toEqual([`${EX}W`]);
      const named = await sparql(w.bothScope, `SELECT DISTINCT ?g FROM NAMED <uko://${w.core}/> WHERE { GRAPH ?g { ?s ?p ?o } }`);
      expect(values(named.rows, "g")).toEqual([`uko://${w.core}/`]);
      const graphIri = await sparql(w.bothScope, `SELECT DISTINCT ?s WHERE { GRAPH <uko://${w.web}/> { ?s ?p ?o } }`);
      expect(values(graphIri.rows, "s")).toEqual([`${EX}W`]);
    });

    test.each(PROTOCOLS)("FROM, FROM NAMED or GRAPH <iri> naming any other graph is PERMISSION_DENIED (%s)", async (protocol) => {
      const queries = [
        `SELECT * FROM <uko://${w.foreign}/> WHERE { ?s ?p ?o }`,
        `SELECT * FROM NAMED <uko://${w.foreign}/> WHERE { GRAPH ?g { ?s ?p ?o } }`,
        `SELECT * WHERE { GRAPH <uko://${w.foreign}/> { ?s ?p ?o } }`,
        `SELECT * WHERE { GRAPH <uko://${w.web}/> { ?s ?p ?o } }`,
        `SELECT * WHERE { GRAPH <uko://${GHOST}/> { ?s ?p ?o } }`,
        `SELECT * WHERE { GRAPH <http://example.org/some-graph> { ?s ?p ?o } }`,
        `ASK FROM <uko://${w.foreign}/> { ?s ?p ?o }`,
        `CONSTRUCT { ?s ?p ?o } FROM <uko://${w.foreign}/> WHERE { ?s ?p ?o }`,
      ];
      for (const q of queries) await expectCode(sparql(w.apiScope, q, protocol), Code.PermissionDenied);
      await expectCode(
        drain(t.client(GraphBackendService, "writer", w.apiScope, protocol).sparqlQueryStream({ query: queries[0] })),
        Code.PermissionDenied,
      );
    });

    test.each(PROTOCOLS)("updates, SERVICE and LOAD are INVALID_ARGUMENT (%s)", async (protocol) => {
      const queries = [
        `INSERT DATA { <${EX}x> <${EX}p> <${EX}y> }`,
        `DELETE WHERE { ?s ?p ?o }`,
        `DELETE DATA { GRAPH <uko://${w.core}/> { <${EX}A> <${EX}p> <${EX}B> } }`,
        `CLEAR ALL`,
        `DROP GRAPH <uko://${w.core}/>`,
        `LOAD <http://example.org/data.ttl>`,
        `LOAD <http://example.org/data.ttl> INTO GRAPH <uko://${w.core}/>`,
        `SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }`,
        `SELECT * WHERE { SERVICE SILENT <http://example.org/sparql> { ?s ?p ?o } }`,
      ];
      for (const q of queries) await expectCode(sparql(w.apiScope, q, protocol), Code.InvalidArgument);
      await expectCode(
        drain(t.client(GraphBackendService, "writer", w.apiScope, protocol).sparqlQueryStream({ query: queries[0] })),
        Code.InvalidArgument,
      );
      // the refused update did nothing
      const still = await sparql(w.apiScope, `ASK { <${EX}A> <${EX}p> <${EX}B> }`);
      expect(still.boolean).toBe(true);
    });
  });

  describe("SPARQL under a scope: other spellings of a graph name", () => {
    /** The answer must be refused, or hold nothing of the foreign graph. */
    async function refusedOrClean(query: string): Promise<string> {
      try {
        const res = await t.client(GraphBackendService, "writer", w.apiScope).sparqlQuery({ query });
        const text = JSON.stringify(res.rows.map((r) => r.bindings)) + JSON.stringify(res.triples) + String(res.boolean);
        if (text.includes("foreign secret") || text.includes(`${EX}F`) || text.includes(w.foreign) || res.boolean)
          return `leaked: ${query}`;
        return "clean";
      } catch (err) {
        const e = ConnectError.from(err);
        return e.code === Code.PermissionDenied || e.code === Code.InvalidArgument ? "refused" : `${Code[e.code]}: ${e.rawMessage}`;
      }
    }

    test("prefixed names, BASE-relative IRIs, lower-case keywords, VALUES-bound and \\u-escaped graph names never reach another graph", async () => {
      const f = w.foreign;
      const escaped = `uko://\\u00${f.charCodeAt(0).toString(16)}${f.slice(1)}/`;
      const queries = [
        `PREFIX g: <uko://${f}/> SELECT * FROM g: WHERE { ?s ?p ?o }`,
        `PREFIX g: <uko://${f}/> SELECT * WHERE { GRAPH g: { ?s ?p ?o } }`,
        `BASE <uko://${f}/> SELECT * FROM <> WHERE { ?s ?p ?o }`,
        `BASE <uko://${f}/> SELECT * WHERE { GRAPH <> { ?s ?p ?o } }`,
        `BASE <uko://${f}/x/> SELECT * WHERE { GRAPH <../> { ?s ?p ?o } }`,
        `select * from <uko://${f}/> where { ?s ?p ?o }`,
        `SELECT * WHERE { VALUES ?g { <uko://${f}/> } GRAPH ?g { ?s ?p ?o } }`,
        `SELECT * WHERE { BIND(IRI("uko://${f}/") AS ?g) GRAPH ?g { ?s ?p ?o } }`,
        `SELECT * WHERE { GRAPH <${escaped}> { ?s ?p ?o } }`,
        `SELECT * FROM <${escaped}> WHERE { ?s ?p ?o }`,
        `ASK { GRAPH ?g { <${EX}F> ?p ?o } }`,
        `ASK { <${EX}A> <${EX}secret> ?o }`,
        `SELECT * WHERE { ?s ?p ?o FILTER(?o = "foreign secret") }`,
        `SELECT * WHERE { { SELECT * WHERE { GRAPH <uko://${f}/> { ?s ?p ?o } } } }`,
        `SELECT * WHERE { ?s ?p ?o } # GRAPH <uko://${f}/>`,
        `DESCRIBE <${EX}F>`,
      ];
      const outcomes = [];
      for (const q of queries) outcomes.push(await refusedOrClean(q));
      expect(outcomes.filter((o) => o !== "clean" && o !== "refused")).toEqual([]);
    });
  });

  describe("StoreFragment and GetForActor", () => {
    test("StoreFragment with an empty project_name is INVALID_ARGUMENT naming it", async () => {
      const tiers = t.client(ContextTierService, "writer", w.apiScope);
      await expectBadField(
        tiers.storeFragment({ fragment: { content: "no project", tier: Tier.HOT, projectName: "" } }),
        "fragment.project_name",
      );
    });

    test("StoreFragment needs a project_name in scope and a resource_id in scope (PERMISSION_DENIED + ScopeViolation)", async () => {
      const tiers = t.client(ContextTierService, "writer", w.apiScope);
      const p = await expectViolation(tiers.storeFragment({ fragment: { content: "x", tier: Tier.HOT, projectName: "local/frontend" } }));
      expect(p.violation.projectNames).toEqual(["local/frontend"]);
      expect(p.err.rawMessage).toContain("Projects not in scope: local/frontend. Available: local/api");
      const r = await expectViolation(
        tiers.storeFragment({ fragment: { content: "x", tier: Tier.HOT, projectName: "local/api", resourceId: w.web } }),
      );
      expect(r.violation.resourceIds).toEqual([w.web]);
      const ok = await tiers.storeFragment({
        fragment: { content: "about core", tier: Tier.HOT, projectName: "local/api", resourceId: w.core },
      });
      expect(ok.fragment!.resourceId).toBe(w.core);
    });

    test("GetForActor with no project_names means every project of the scope", async () => {
      const both = t.client(ContextTierService, "writer", w.bothScope);
      const a = (await both.storeFragment({ fragment: { content: "api decision", tier: Tier.HOT, projectName: "local/api" } })).fragment!
        .fragmentId;
      const f = (await both.storeFragment({ fragment: { content: "frontend decision", tier: Tier.HOT, projectName: "local/frontend" } }))
        .fragment!.fragmentId;
      const all = (await both.getForActor({ role: Role.STRATEGIST })).fragments.map((x) => x.fragmentId);
      expect(all).toEqual(expect.arrayContaining([a, f]));
      const onlyFrontend = (await both.getForActor({ role: Role.STRATEGIST, projectNames: ["local/frontend"] })).fragments;
      expect(onlyFrontend.map((x) => x.fragmentId)).toContain(f);
      expect(onlyFrontend.every((x) => x.projectName === "local/frontend")).toBe(true);
      const apiOnly = (await t.client(ContextTierService, "writer", w.apiScope).getForActor({ role: Role.STRATEGIST })).fragments;
      expect(apiOnly.map((x) => x.fragmentId)).toContain(a);
      expect(apiOnly.map((x) => x.fragmentId)).not.toContain(f);
      await expectViolation(
        t.client(ContextTierService, "writer", w.apiScope).getForActor({ role: Role.STRATEGIST, projectNames: ["local/frontend"] }),
      );
    });
  });

  describe("scoped unary responses", () => {
    test.each(PROTOCOLS)("search, graph and RAG responses carry scope_id, exhaustive and index_generation (%s)", async (protocol) => {
      const c = <S extends Parameters<TestServer["client"]>[0]>(s: S) => t.client(s, "writer", w.apiScope, protocol);
      const answers = {
        Search: await c(TextBackendService).search({ query: "zebra" }),
        SimilaritySearch: await c(VectorBackendService).similaritySearch({ embedding: EAST }),
        SparqlQuery: await c(GraphBackendService).sparqlQuery({ query: "SELECT * WHERE { ?s ?p ?o }" }),
        GetTriples: await c(GraphBackendService).getTriples({ subject: `${EX}A` }),
        Traverse: await c(GraphBackendService).traverse({ start: `${EX}A` }),
        HybridSearch: await c(RagService).hybridSearch({ query: "zebra" }),
      };
      for (const [rpc, a] of Object.entries(answers)) {
        expect([rpc, a.scopeId]).toEqual([rpc, w.apiScope]);
        expect([rpc, typeof a.exhaustive]).toEqual([rpc, "boolean"]);
        expect([rpc, a.indexGeneration > 0n]).toEqual([rpc, true]);
      }
    });

    test("every search, graph and RAG unary response message declares scope_id, exhaustive and index_generation (except FetchContent, below)", () => {
      const lacking = [TextBackendService, VectorBackendService, GraphBackendService, RagService]
        .flatMap((s) => s.methods.filter((m) => m.methodKind === "unary" && m.name !== "FetchContent"))
        .filter((m) => !["scope_id", "exhaustive", "index_generation"].every((f) => m.output.fields.some((x) => x.name === f)))
        .map((m) => m.name);
      expect(lacking).toEqual([]);
    });

    test("FetchContent (RAG, unary) carries exhaustive and index_generation too", () => {
      const fields = RagService.method.fetchContent.output.fields.map((f) => f.name);
      expect(fields).toEqual(expect.arrayContaining(["scope_id", "exhaustive", "index_generation"]));
    });

    test("index_generation is the same across backends and is the generation of the latest write", async () => {
      const before = (await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" })).indexGeneration;
      const sparql = (await t.client(GraphBackendService, "writer", w.apiScope).sparqlQuery({ query: "ASK { ?s ?p ?o }" })).indexGeneration;
      expect(sparql).toBe(before);
      const { indexGeneration: written } = await upsert(t, "writer", [
        { resourceId: w.lib, documents: [doc("lib/extra.md", "extra words")] },
      ]);
      expect(written).toBeGreaterThan(before);
      const after = (await t.client(TextBackendService, "writer", w.apiScope).search({ query: "zebra" })).indexGeneration;
      expect(after).toBe(written);
    });
  });
});
