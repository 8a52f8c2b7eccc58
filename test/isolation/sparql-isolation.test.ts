import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import type { ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import {
  buildFixture,
  COMMON,
  drain,
  ENV,
  EX,
  expectViolation,
  graphMarker,
  graphOf,
  resolve,
  type IsolationFixture,
} from "./isolation-fixture.js";

let t: TestServer;
let f: IsolationFixture;
/** writer's scope over local/api without apiChild (so apiChild and apiGrand are denied). */
let api: ResourceScope;
/** writer's scope over local/empty, which holds no resource at all. */
let empty: ResourceScope;

/** How many triples the other tenant's graph holds before any attack. */
let secretTriples: string;

/** The other tenant's own count of its graph's triples. */
async function secretTripleCount(): Promise<string> {
  const other = await resolve(t, "other", { projects: ["other/secret"] });
  const res = await t
    .client(GraphBackendService, "other", other.scopeId)
    .sparqlQuery({ query: `SELECT (COUNT(*) AS ?n) WHERE { GRAPH <${graphOf(f.secret)}> { ?s ?p ?o } }` });
  return res.rows[0].bindings.n.value;
}

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  f = await buildFixture(t);
  api = await resolve(t, "writer", { projects: ["local/api"], excludeResources: ["child"] });
  empty = await resolve(t, "writer", { projects: ["local/empty"] });
  secretTriples = await secretTripleCount();
}, 120_000);

afterEach(() => {
  expect(preventedLeaks.prevented).toBe(0);
});

afterAll(async () => {
  await t?.close(true);
});

const gql = (scope: ResourceScope = api, protocol: "connect" | "grpc" = "connect") =>
  t.client(GraphBackendService, "writer", scope.scopeId, protocol);
/** Graphs the api scope must never read: other tenants', another project's, and denied descendants'. */
const outside = () => [f.secret, f.leaf, f.web, f.apiChild, f.apiGrand];
const inside = () => [f.apiRoot, f.shared];

/** Every literal and IRI value an answer holds, so a marker of another graph can be looked for anywhere. */
function valuesOf(res: {
  rows: { bindings: Record<string, { value: string }> }[];
  triples: { subject?: { value: string }; predicate?: { value: string }; object?: { value: string } }[];
}): string[] {
  const out: string[] = [];
  for (const r of res.rows) for (const v of Object.values(r.bindings)) out.push(v.value);
  for (const tr of res.triples) out.push(tr.subject!.value, tr.predicate!.value, tr.object!.value);
  return out;
}

function expectNoForeignMarker(values: readonly string[]): void {
  const foreign = outside().map((r) => graphMarker(f, r));
  for (const v of values) for (const m of foreign) expect({ value: v, leaks: v.includes(m) }).toEqual({ value: v, leaks: false });
}

describe("SPARQL that names graphs outside the scope is refused", () => {
  const cases: Array<[string, (g: string) => string]> = [
    ["FROM <iri>", (g) => `SELECT * FROM <${g}> WHERE { ?s ?p ?o }`],
    ["FROM NAMED <iri>", (g) => `SELECT * FROM NAMED <${g}> WHERE { GRAPH ?g { ?s ?p ?o } }`],
    ["GRAPH <iri>", (g) => `SELECT * WHERE { GRAPH <${g}> { ?s ?p ?o } }`],
    ["lower-case keywords", (g) => `select * from named <${g}> where { graph <${g}> { ?s ?p ?o } }`],
    ["a prefixed name", (g) => `PREFIX t: <${g}> SELECT * WHERE { GRAPH t: { ?s ?p ?o } }`],
    ["a prefixed name with a local part", (g) => `PREFIX u: <${g.slice(0, -1)}> SELECT * WHERE { GRAPH u:\\/ { ?s ?p ?o } }`],
    ["an empty prefix", (g) => `PREFIX : <${g}> SELECT * FROM : WHERE { ?s ?p ?o }`],
    ["a BASE-relative IRI", (g) => `BASE <${g}> SELECT * WHERE { GRAPH <> { ?s ?p ?o } }`],
    ["a BASE-relative IRI with a path", (g) => `BASE <${g}x/y> SELECT * FROM <../> WHERE { ?s ?p ?o }`],
    ["a subquery", (g) => `SELECT * WHERE { { SELECT ?s WHERE { GRAPH <${g}> { ?s ?p ?o } } } }`],
    ["an OPTIONAL", (g) => `SELECT * WHERE { ?a ?b ?c OPTIONAL { GRAPH <${g}> { ?s ?p ?o } } }`],
    ["a FILTER EXISTS", (g) => `SELECT * WHERE { ?a ?b ?c FILTER EXISTS { GRAPH <${g}> { ?a ?p ?o } } }`],
    ["a CONSTRUCT", (g) => `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${g}> { ?s ?p ?o } }`],
    ["an ASK", (g) => `ASK { GRAPH <${g}> { ?s ?p ?o } }`],
    ["a DESCRIBE", (g) => `DESCRIBE ?s FROM <${g}> WHERE { ?s ?p ?o }`],
    [
      "a graph behind an IRI with '#' on the same line",
      (g) => `SELECT * WHERE { <uko://${f.apiRoot}/readme.md#0> ?p ?o . GRAPH <${g}> { ?s ?p2 ?o2 } }`,
    ],
    ["a graph after a string holding an escaped quote", (g) => `SELECT * WHERE { ?s ?p "a \\" b" . GRAPH <${g}> { ?s ?p2 ?o2 } }`],
    ["a graph after a long string holding a quote and a #", (g) => `SELECT * WHERE { ?s ?p """x " # y""" . GRAPH <${g}> { ?s ?p2 ?o2 } }`],
    ["a graph after a comment that ends the line", (g) => `SELECT * WHERE { ?s ?p ?o # a comment\n GRAPH <${g}> { ?s ?p2 ?o2 } }`],
  ];

  it.each(cases)("%s", async (_label, make) => {
    for (const r of outside()) {
      const v = await expectViolation(gql().sparqlQuery({ query: make(graphOf(r)) }));
      expect(v.resourceIds).toEqual([r]);
      expect([...v.scopeProjectNames]).toEqual(["local/api"]);
      // The stream refuses the same way, with the detail intact, over both protocols.
      for (const p of ["connect", "grpc"] as const) {
        const sv = await expectViolation(drain(gql(api, p).sparqlQueryStream({ query: make(graphOf(r)) })));
        expect(sv.resourceIds).toEqual([r]);
      }
    }
  });

  it("a graph that is no resource graph at all is refused too (nothing outside the scope may be named)", async () => {
    for (const g of ["http://example.org/g", `uko://${f.apiRoot}`, `uko://${f.apiRoot}/readme.md`, `urn:x-oxigraph:default`]) {
      await expectViolation(gql().sparqlQuery({ query: `SELECT * WHERE { GRAPH <${g}> { ?s ?p ?o } }` }));
    }
  });

  it("in-scope graphs named explicitly narrow the dataset and answer", async () => {
    const res = await gql().sparqlQuery({ query: `SELECT ?o FROM <${graphOf(f.apiRoot)}> WHERE { <${COMMON}> <${EX}mentionedIn> ?o }` });
    expect(res.rows.map((r) => r.bindings.o.value)).toEqual([graphMarker(f, f.apiRoot)]);
    const named = await gql().sparqlQuery({
      query: `SELECT ?g ?o FROM NAMED <${graphOf(f.shared)}> WHERE { GRAPH ?g { <${COMMON}> <${EX}mentionedIn> ?o } }`,
    });
    expect(named.rows.map((r) => [r.bindings.g.value, r.bindings.o.value])).toEqual([[graphOf(f.shared), graphMarker(f, f.shared)]]);
  });
});

describe("SPARQL that does not name graphs still only reads in-scope ones", () => {
  it.each([
    ["GRAPH ?g", `SELECT ?g ?o WHERE { GRAPH ?g { <${COMMON}> <${EX}mentionedIn> ?o } }`],
    [
      "VALUES ?g naming every graph",
      (): string =>
        `SELECT ?g ?o WHERE { VALUES ?g { ${[...inside(), ...outside()].map((r) => `<${graphOf(r)}>`).join(" ")} } GRAPH ?g { ?s ?p ?o } }`,
    ],
    ["BIND of an outside graph", (): string => `SELECT ?o WHERE { BIND(<${graphOf(f.secret)}> AS ?g) GRAPH ?g { ?s ?p ?o } }`],
    ["FILTER on ?g", (): string => `SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } FILTER(?g = <${graphOf(f.secret)}>) }`],
    ["the default graph", `SELECT ?s ?p ?o WHERE { ?s ?p ?o }`],
    ["a property path", `SELECT ?x WHERE { <${COMMON}> (<${EX}next>|^<${EX}next>|<${EX}linksTo>|^<${EX}linksTo>)+ ?x }`],
    ["DESCRIBE of the shared subject", `DESCRIBE <${COMMON}>`],
    ["CONSTRUCT over GRAPH ?g", `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }`],
    [
      "keywords inside strings and comments",
      `SELECT ?o WHERE { ?s ?p ?o FILTER(?o != "FROM <uko://x/> GRAPH SERVICE") } # FROM NAMED <http://x/>`,
    ],
    ["a UNION of GRAPH ?g with the default graph", `SELECT * WHERE { { GRAPH ?g { ?s ?p ?o } } UNION { ?s ?p ?o } }`],
  ] as const)("%s", async (_label, q) => {
    const query = typeof q === "function" ? q() : q;
    const res = await gql().sparqlQuery({ query });
    expectNoForeignMarker(valuesOf(res));
    for (const row of res.rows) if (row.bindings.g) expect(inside().map(graphOf)).toContain(row.bindings.g.value);
    const streamed = await drain(gql().sparqlQueryStream({ query }));
    const streamedValues = streamed.flatMap((m) =>
      m.item.case === "row"
        ? Object.values(m.item.value.bindings).map((x) => x.value)
        : m.item.case === "triple"
          ? [m.item.value.subject!.value, m.item.value.predicate!.value, m.item.value.object!.value]
          : [],
    );
    expectNoForeignMarker(streamedValues);
    expect(streamedValues.sort()).toEqual(valuesOf(res).sort());
  });

  it.each([
    ["an escaped GRAPH keyword", (g: string) => `SELECT ?o WHERE { GR\\u0041PH <${g}> { ?s ?p ?o } }`],
    ["an escaped FROM keyword", (g: string) => `SELECT ?o FR\\u004FM <${g}> WHERE { ?s ?p ?o }`],
    ["an escaped FROM NAMED", (g: string) => `SELECT ?o FROM N\\u0041MED <${g}> WHERE { GRAPH ?g { ?s ?p ?o } }`],
    ["an escaped IRI", (g: string) => `SELECT ?o WHERE { GRAPH <\\u0075${g.slice(1)}> { ?s ?p ?o } }`],
    ["an escaped colon in the IRI", (g: string) => `SELECT ?o WHERE { GRAPH <uko\\u003A${g.slice(4)}> { ?s ?p ?o } }`],
  ] as const)("codepoint escapes: %s are refused or read nothing outside", async (_label, make) => {
    for (const r of outside()) {
      const query = make(graphOf(r));
      const outcome = await gql()
        .sparqlQuery({ query })
        .then(
          (res) => ({ res, code: undefined as Code | undefined }),
          (e: unknown) => ({ res: undefined, code: (e as { code: Code }).code }),
        );
      if (outcome.code !== undefined) expect([Code[Code.InvalidArgument], Code[Code.PermissionDenied]]).toContain(Code[outcome.code]);
      else expectNoForeignMarker(valuesOf(outcome.res!));
    }
  });

  it("ASK about another graph's data is false, not an oracle", async () => {
    for (const r of outside()) {
      expect((await gql().sparqlQuery({ query: `ASK { ?s ?p "${graphMarker(f, r)}" }` })).boolean).toBe(false);
      expect((await gql().sparqlQuery({ query: `ASK { GRAPH ?g { ?s ?p "${graphMarker(f, r)}" } }` })).boolean).toBe(false);
    }
    expect((await gql().sparqlQuery({ query: `ASK { ?s ?p "${graphMarker(f, f.apiRoot)}" }` })).boolean).toBe(true);
  });

  it("a scope with no resources reads nothing at all", async () => {
    for (const query of [
      "SELECT * WHERE { ?s ?p ?o }",
      "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
      `ASK { ?s ?p ?o }`,
      `CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`,
      `DESCRIBE <${COMMON}>`,
    ]) {
      const res = await gql(empty).sparqlQuery({ query });
      expect({ query, rows: res.rows.length, triples: res.triples.length, boolean: res.boolean }).toEqual({
        query,
        rows: 0,
        triples: 0,
        boolean: false,
      });
    }
    expect((await gql(empty).getTriples({ subject: COMMON })).triples).toEqual([]);
    expect((await gql(empty).traverse({ start: COMMON, depth: 8 })).triples).toEqual([]);
  });
});

describe("SPARQL that could reach outside the store is refused", () => {
  it.each([
    ["SERVICE", `SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }`],
    ["SERVICE SILENT", `SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:1/sparql> { ?s ?p ?o } }`],
    ["SERVICE via a prefixed name", `PREFIX e: <http://127.0.0.1:1/> SELECT * WHERE { SERVICE e:sparql { ?s ?p ?o } }`],
    ["SERVICE behind a variable", `SELECT * WHERE { BIND(<http://127.0.0.1:1/> AS ?e) SERVICE ?e { ?s ?p ?o } }`],
    ["INSERT DATA into another graph", (): string => `INSERT DATA { GRAPH <${graphOf(f.secret)}> { <${EX}a> <${EX}b> "c" } }`],
    ["DELETE WHERE", `DELETE WHERE { ?s ?p ?o }`],
    ["DROP ALL", `DROP ALL`],
    ["CLEAR GRAPH", (): string => `CLEAR GRAPH <${graphOf(f.secret)}>`],
    ["LOAD", `LOAD <http://127.0.0.1:1/data.ttl>`],
    ["a read followed by an update", `SELECT * WHERE { ?s ?p ?o } ; DROP ALL`],
  ] as const)("%s", async (_label, q) => {
    const query = typeof q === "function" ? q() : q;
    const err = await gql()
      .sparqlQuery({ query })
      .then(
        () => undefined,
        (e: unknown) => e as { code: Code },
      );
    expect(err).toBeDefined();
    expect([Code[Code.InvalidArgument], Code[Code.PermissionDenied]]).toContain(Code[err!.code]);
    if (err!.code === Code.InvalidArgument) expect(await badFields(gql().sparqlQuery({ query }))).toEqual(["query"]);
    // Nothing was written: the other tenant's graph still answers for itself.
    expect(await secretTripleCount()).toBe(secretTriples);
  });
});

describe("GetTriples and Traverse", () => {
  it("never return a triple of another graph, whatever the start node", async () => {
    const starts = [COMMON, `${EX}secret`, `${EX}leaf`, `${EX}web`, `${EX}apichild`, `${EX}apiroot`];
    for (const s of starts) {
      for (const p of ["connect", "grpc"] as const) {
        const got = await gql(api, p).getTriples({ subject: s });
        expectNoForeignMarker(valuesOf({ rows: [], triples: got.triples }));
        const walked = await gql(api, p).traverse({ start: s, depth: 8 });
        expectNoForeignMarker(valuesOf({ rows: [], triples: walked.triples }));
        expect(walked.scopeId).toBe(api.scopeId);
      }
    }
    expect((await gql().getTriples({ subject: `${EX}secret` })).triples).toEqual([]);
  });

  it("refuse a start node that is a uko:// IRI of an out-of-scope resource, as any other request naming it", async () => {
    for (const s of [`uko://${f.secret}/readme.md`, `uko://${f.secret}/readme.md#0`, graphOf(f.secret)]) {
      for (const p of ["connect", "grpc"] as const) {
        for (const call of [() => gql(api, p).getTriples({ subject: s }), () => gql(api, p).traverse({ start: s, depth: 8 })]) {
          const err = await call().then(
            () => undefined,
            (e: unknown) => ConnectError.from(e),
          );
          expect(err?.code).toBe(Code.PermissionDenied);
          expect(err?.findDetails(ScopeViolationSchema)[0]?.resourceIds).toEqual([f.secret]);
        }
      }
    }
  });
});
