import { Code, createClient } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { GraphBackendService, TermKind, type SparqlQueryStreamResponse } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { graphIri } from "../../src/domain/uko-uri.js";
import type { Backends } from "../../src/server/composition/backends.js";
import { failure } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { withScopedRouterTransport } from "../support/with-scoped-router-transport.js";

const EX = "http://example.org/";
const iri = (v: string) => ({ kind: TermKind.IRI, value: EX + v });
const lit = (value: string, more: { datatype?: string; language?: string } = {}) => ({ kind: TermKind.LITERAL, value, ...more });
const blank = (value: string) => ({ kind: TermKind.BLANK, value });

async function badField(p: Promise<unknown>): Promise<string> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[Code.InvalidArgument]);
  return err.findDetails(BadRequestSchema)[0].fieldViolations[0].field;
}

let t: TestServer;
const ids: Record<string, string> = {};
let apiScope: string;
let bothScope: string;
let leaksBefore: number;
let generationAfterWrites: bigint;

const graph = (scopeId: string, protocol: "connect" | "grpc" = "connect") => t.client(GraphBackendService, "writer", scopeId, protocol);

beforeAll(async () => {
  leaksBefore = preventedLeaks.prevented;
  t = await startTestServer({ env: { ACMS_SPARQL_TIMEOUT_MS: "1500" } });
  const admin = t.client(RegistryService, "admin");
  for (const name of ["local/api", "local/web", "other/x"]) await admin.createProject({ name });
  const reg = async (project: string, alias: string) => (await admin.registerResource({ project, alias, kind: "repo" })).resource!.id;
  ids.API = await reg("local/api", "api");
  ids.WEB = await reg("local/web", "web");
  ids.SECRET = await reg("other/x", "secret");
  const writer = t.client(IndexService, "writer");
  await writer.putTriples({
    resourceId: ids.API,
    replace: true,
    triples: [
      { subject: iri("alice"), predicate: iri("knows"), object: iri("bob") },
      { subject: iri("alice"), predicate: iri("name"), object: lit("Alice", { language: "en" }) },
      { subject: iri("bob"), predicate: iri("knows"), object: blank("b1") },
      { subject: blank("b1"), predicate: iri("age"), object: lit("41", { datatype: "http://www.w3.org/2001/XMLSchema#integer" }) },
    ],
  });
  await writer.putTriples({
    resourceId: ids.WEB,
    replace: true,
    triples: [{ subject: iri("alice"), predicate: iri("site"), object: lit("web") }],
  });
  generationAfterWrites = (
    await t.client(IndexService, "other").putTriples({
      resourceId: ids.SECRET,
      replace: true,
      triples: [{ subject: iri("alice"), predicate: iri("secret"), object: lit("other tenant") }],
    })
  ).indexGeneration;
  const scopes = t.client(ScopeService, "writer");
  apiScope = (await scopes.resolveScope({ projects: ["local/api"] })).scope!.scopeId;
  bothScope = (await scopes.resolveScope({ projects: ["local/api", "local/web"] })).scope!.scopeId;
});

afterAll(async () => {
  await t.close(true);
  expect(preventedLeaks.prevented).toBe(leaksBefore);
});

describe("GraphBackendService over the network", () => {
  it("SparqlQuery answers from the scope's graphs only, with scope, generation and metadata", async () => {
    const res = await graph(apiScope).sparqlQuery({ query: `SELECT ?p ?o { <${EX}alice> ?p ?o } ORDER BY ?p` });
    expect(res.variables).toEqual(["p", "o"]);
    expect(res.rows.map((r) => r.bindings.o.value)).toEqual(["bob", "Alice"].map((v, i) => (i === 0 ? EX + v : v)));
    expect(res.rows[1].bindings.o).toMatchObject({ kind: TermKind.LITERAL, value: "Alice", language: "en", datatype: "" });
    expect(res.scopeId).toBe(apiScope);
    expect(res.exhaustive).toBe(true);
    expect(res.indexGeneration).toBe(generationAfterWrites);
    expect(res.metadata.query_form).toBe("SELECT");
    expect(Number(res.metadata.elapsed_ms)).toBeGreaterThanOrEqual(0);
    const both = await graph(bothScope).sparqlQuery({ query: "SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }" });
    expect(both.rows.map((r) => r.bindings.g.value).sort()).toEqual([graphIri(ids.API), graphIri(ids.WEB)].sort());
  });

  it("a graph outside the scope is PERMISSION_DENIED with a ScopeViolation naming it, over Connect and gRPC", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const err = await failure(
        graph(apiScope, protocol).sparqlQuery({ query: `SELECT * { GRAPH <${graphIri(ids.SECRET)}> { ?s ?p ?o } }` }),
      );
      expect(Code[err.code]).toBe(Code[Code.PermissionDenied]);
      const [v] = err.findDetails(ScopeViolationSchema);
      expect(v.resourceIds).toEqual([ids.SECRET]);
      expect(v.scopeProjectNames).toEqual(["local/api"]);
    }
    const from = await failure(graph(apiScope).sparqlQuery({ query: `PREFIX w: <uko://${ids.WEB}/> ASK FROM w: { ?s ?p ?o }` }));
    expect(from.findDetails(ScopeViolationSchema)[0].resourceIds).toEqual([ids.WEB]);
  });

  it("updates, SERVICE, syntax errors and empty queries are INVALID_ARGUMENT on `query`, without a stack", async () => {
    for (const query of [
      "INSERT DATA { <http://a> <http://b> <http://c> }",
      "SELECT * { SERVICE <http://x/> { ?s ?p ?o } }",
      "SELECT * {",
      "",
    ]) {
      expect(await badField(graph(apiScope).sparqlQuery({ query }))).toBe("query");
    }
    const err = await failure(graph(apiScope).sparqlQuery({ query: "SELECT * { ?s ?p" }));
    expect(err.rawMessage).not.toMatch(/\bat .*\.(js|ts):\d+/);
  });

  it("a query past the time limit is DEADLINE_EXCEEDED and the service keeps answering", async () => {
    const filler = Array.from({ length: 40 }, (_, i) => ({ subject: iri(`n${i}`), predicate: iri("next"), object: lit(String(i)) }));
    await t.client(IndexService, "writer").putTriples({ resourceId: ids.WEB, replace: false, triples: filler });
    const slow = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u . ?v ?w ?x }";
    const err = await failure(graph(bothScope).sparqlQuery({ query: slow }));
    expect(Code[err.code]).toBe(Code[Code.DeadlineExceeded]);
    expect((await graph(apiScope).sparqlQuery({ query: "ASK { ?s ?p ?o }" })).boolean).toBe(true);
  });

  it("SparqlQueryStream sends the variables first, then rows; triples; or the boolean", async () => {
    const pieces: SparqlQueryStreamResponse["item"][] = [];
    for await (const m of graph(apiScope).sparqlQueryStream({ query: `SELECT ?o { <${EX}alice> ?p ?o } ORDER BY ?o` })) pieces.push(m.item);
    expect(pieces[0]).toEqual({ case: "variables", value: expect.objectContaining({ names: ["o"] }) });
    expect(pieces.slice(1).map((p) => p.case)).toEqual(["row", "row"]);
    const triples: SparqlQueryStreamResponse["item"][] = [];
    for await (const m of graph(apiScope).sparqlQueryStream({ query: "CONSTRUCT WHERE { ?s ?p ?o }" })) triples.push(m.item);
    expect(triples.length).toBe(4);
    expect(triples.every((p) => p.case === "triple")).toBe(true);
    const ask: SparqlQueryStreamResponse["item"][] = [];
    for await (const m of graph(apiScope).sparqlQueryStream({ query: `ASK { <${EX}alice> <${EX}secret> ?o }` })) ask.push(m.item);
    expect(ask).toEqual([{ case: "boolean", value: false }]);
    const err = await failure(
      (async () => {
        for await (const m of graph(apiScope).sparqlQueryStream({ query: `SELECT * FROM <${graphIri(ids.SECRET)}> { ?s ?p ?o }` })) void m;
      })(),
    );
    expect(Code[err.code]).toBe(Code[Code.PermissionDenied]);
  });

  it("GetTriples returns the subject's in-scope triples, blank nodes included", async () => {
    const res = await graph(apiScope).getTriples({ subject: `${EX}alice` });
    expect(res.triples.map((tr) => tr.predicate!.value).sort()).toEqual([`${EX}knows`, `${EX}name`]);
    expect(res.scopeId).toBe(apiScope);
    expect(res.exhaustive).toBe(true);
    const both = await graph(bothScope).getTriples({ subject: `${EX}alice` });
    expect(both.triples.length).toBe(3);
    const b = await graph(apiScope).getTriples({ subject: "_:b1" });
    expect(b.triples[0].object).toMatchObject({
      kind: TermKind.LITERAL,
      value: "41",
      datatype: "http://www.w3.org/2001/XMLSchema#integer",
    });
    expect(await badField(graph(apiScope).getTriples({ subject: "" }))).toBe("subject");
    expect(await badField(graph(apiScope).getTriples({ subject: "no iri" }))).toBe("subject");
  });

  it("Traverse follows links within depth (default 2) inside the scope and checks depth", async () => {
    const at = async (depth?: number) => (await graph(apiScope).traverse({ start: `${EX}alice`, depth })).triples.length;
    expect(await at(0)).toBe(2);
    expect(await at(1)).toBe(3);
    expect(await at()).toBe(4);
    const res = await graph(apiScope).traverse({ start: `${EX}alice` });
    expect(res.metadata.depth).toBe("2");
    expect(await badField(graph(apiScope).traverse({ start: `${EX}alice`, depth: 9 }))).toBe("depth");
    expect(await badField(graph(apiScope).traverse({ start: `${EX}alice`, depth: -1 }))).toBe("depth");
    expect(await badField(graph(apiScope).traverse({ start: "" }))).toBe("start");
  });

  it("graph RPCs need the scope header", async () => {
    const err = await failure(t.client(GraphBackendService, "writer").sparqlQuery({ query: "ASK { ?s ?p ?o }" }));
    expect(Code[err.code]).toBe(Code[Code.FailedPrecondition]);
  });
});

describe("GraphBackendService without a graph backend", () => {
  it("is UNIMPLEMENTED", async () => {
    const change = async (b: Backends) => {
      await b.graph?.close();
      b.graph = undefined;
    };
    await withScopedRouterTransport({ change }, async (transport) => {
      const client = createClient(GraphBackendService, transport);
      for (const call of [
        client.sparqlQuery({ query: "ASK { ?s ?p ?o }" }),
        client.getTriples({ subject: `${EX}a` }),
        client.traverse({ start: `${EX}a` }),
      ]) {
        expect(Code[(await failure(call)).code]).toBe("Unimplemented");
      }
    });
  });
});
