import { createServer, type Server } from "node:http";
import { UnavailableError, InvalidArgumentError, DeadlineExceededError } from "../../src/domain/errors.js";
import { graphIri } from "../../src/domain/uko-uri.js";
import { SparqlEndpointGraphBackend } from "../../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import { FOREIGN_GRAPH, startVirtuoso, type VirtuosoInstance } from "../support/engines/virtuoso.js";
import { A, A_TRIPLES, B, B_TRIPLES, EX, blank, iri, keysOf, lit, triple, viewOf } from "./graph-fixtures.js";

/**
 * What the endpoint adapter adds on top of the shared suite: defence in depth through the endpoint
 * user's graph permissions, credentials kept out of errors, the endpoint's failures mapped to codes,
 * concurrent queries, and large writes split into several requests.
 */

/** A resource graph of another deployment on the same Virtuoso, private to the service user. */
const OTHER = "01JZZZZZZZZZZZZZZZZZZZZZZZ";
const OPTS = { timeoutMs: 20_000 };
const SLOW_QUERY = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u }";

let virtuoso: VirtuosoInstance;
let backend: SparqlEndpointGraphBackend;

const open = (extra: Partial<Parameters<typeof SparqlEndpointGraphBackend.open>[0]> = {}) =>
  SparqlEndpointGraphBackend.open({
    queryUrl: virtuoso.authQueryUrl,
    updateUrl: virtuoso.authQueryUrl,
    user: virtuoso.user,
    password: virtuoso.password,
    ...extra,
  });

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

/** Runs a query as anyone who can reach the endpoint without the service's credentials. */
async function anonymous(query: string): Promise<unknown[]> {
  const res = await fetch(virtuoso.anonymousUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/sparql-results+json" },
    body: `query=${encodeURIComponent(query)}`,
  });
  const json = (await res.json()) as { results: { bindings: unknown[] } };
  return json.results.bindings;
}

beforeAll(async () => {
  virtuoso = await startVirtuoso();
  virtuoso.sql(
    [
      `SPARQL INSERT DATA { GRAPH <${graphIri(OTHER)}> { <${EX}alice> <${EX}secret> "OTHER-DEPLOYMENT-SECRET" } };`,
      `DB.DBA.RDF_GRAPH_GROUP_INS('http://www.openlinksw.com/schemas/virtrdf#PrivateGraphs', '${graphIri(OTHER)}');`,
      "",
    ].join("\n"),
  );
  backend = await open();
  await backend.putTriples(A, A_TRIPLES, true);
  await backend.putTriples(B, B_TRIPLES, true);
}, 180_000);

afterAll(async () => {
  await backend?.close();
  await virtuoso?.stop();
});

describe("defence in depth: the endpoint user's graph permissions", () => {
  it("a graph the user may not read answers nothing even to a query the scope let through", async () => {
    const r = await backend.query(viewOf([A, OTHER]), `SELECT ?o { GRAPH ?g { <${EX}alice> <${EX}secret> ?o } }`, OPTS);
    expect(r.form === "SELECT" && r.rows).toEqual([]);
    const own = await backend.getTriples(viewOf([OTHER]), `${EX}alice`, OPTS);
    expect(own.triples).toEqual([]);
    expect(virtuoso.sql(`SPARQL SELECT COUNT(*) FROM <${graphIri(OTHER)}> WHERE { ?s ?p ?o };`)).toMatch(/\b1\b/);
  });

  it("nor does a graph of another application, named directly", async () => {
    const res = await fetch(virtuoso.authQueryUrl, { method: "POST" }).catch(() => undefined);
    expect(res?.status).toBe(401);
    const r = await backend.query(viewOf([A]), `SELECT ?o { <http://foreign.example/s> ?p ?o }`, OPTS);
    expect(r.form === "SELECT" && r.rows).toEqual([]);
    expect(virtuoso.sql(`SPARQL SELECT COUNT(*) FROM <${FOREIGN_GRAPH}> WHERE { ?s ?p ?o };`)).toMatch(/\b1\b/);
  });

  it("a graph the user may not write is refused and stays as it was", async () => {
    const err = await rejection(backend.putTriples(OTHER, [triple(iri("x"), iri("y"), lit("overwritten"))], true));
    // A backend failure for the caller (the service is configured not to own that graph), never a write.
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toMatch(/permission|not allowed|access/i);
    expect(err.message).not.toContain(virtuoso.password);
    const left = virtuoso.sql(`SPARQL SELECT ?o FROM <${graphIri(OTHER)}> WHERE { ?s ?p ?o };`);
    expect(left).toContain("OTHER-DEPLOYMENT-SECRET");
    expect(left).not.toContain("overwritten");
  });

  it("anonymous users of the endpoint read none of the service's graphs", async () => {
    expect(await anonymous(`SELECT * { GRAPH <${graphIri(A)}> { ?s ?p ?o } }`)).toEqual([]);
    expect(await anonymous("SELECT * { GRAPH ?g { ?s ?p ?o } }")).toEqual([]);
  });
});

describe("the endpoint's failures as codes, credentials never shown", () => {
  it("a wrong password is UNAVAILABLE and names neither password", async () => {
    const err = await rejection(open({ password: "not-the-password" }));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toMatch(/credentials/);
    expect(err.message).not.toContain("not-the-password");
    expect(err.message).not.toContain(virtuoso.password);
  });

  it("an endpoint that is down is UNAVAILABLE", async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await rejection(open({ queryUrl: `http://127.0.0.1:${port}/sparql`, updateUrl: `http://127.0.0.1:${port}/sparql` }));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toMatch(/unreachable/);
  });

  it("the endpoint's syntax error is INVALID_ARGUMENT with its message and no stack", async () => {
    // Parses for the service's inspection, not for Virtuoso: an unknown function.
    const err = await rejection(backend.query(viewOf([A]), "SELECT * { ?s ?p ?o FILTER(<http://example.org/nofn>(?o)) }", OPTS));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toMatch(/SPARQL endpoint/);
    expect(err.message).not.toMatch(/\n\s+at /);
  });
});

describe("concurrency and large writes", () => {
  it("a slow query does not hold the others", async () => {
    const order: string[] = [];
    const slow = backend.query(viewOf([A, B]), SLOW_QUERY, { timeoutMs: 15_000 }).then(
      () => order.push("slow"),
      (err: Error) => order.push(err instanceof DeadlineExceededError ? "slow" : `slow failed: ${err.message}`),
    );
    for (let i = 0; i < 5; i++) {
      const r = await backend.query(viewOf([A]), `SELECT ?o { <${EX}alice> <${EX}name> ?o }`, OPTS);
      expect(r.form === "SELECT" && r.rows.length).toBe(1);
      order.push(`fast${i}`);
    }
    await slow;
    expect(order.slice(0, 5)).toEqual(["fast0", "fast1", "fast2", "fast3", "fast4"]);
    expect(order[5]).toBe("slow");
  }, 30_000);

  it("a store written before typed-literal copies gets them once, at open, so GetTriples answers its typed literals", async () => {
    const old = "01JDDDDDDDDDDDDDDDDDDDDDDD";
    virtuoso.sql(
      [
        "SPARQL DELETE WHERE { GRAPH <urn:x-acms:service-meta> { <urn:x-acms:service-meta> <urn:x-acms:typed-copies> ?done } };",
        `SPARQL INSERT DATA { GRAPH <${graphIri(old)}> { <${EX}old> <${EX}v> "42"^^<http://www.w3.org/2001/XMLSchema#integer> . <${EX}old> <${EX}w> "kept" } };`,
        "",
      ].join("\n"),
    );
    expect(keysOf((await backend.getTriples(viewOf([old]), `${EX}old`, OPTS)).triples)).toEqual(
      keysOf([triple(iri("old"), iri("w"), lit("kept"))]),
    );
    const reopened = await open({});
    const expected = [
      triple(iri("old"), iri("v"), lit("42", { datatype: "http://www.w3.org/2001/XMLSchema#integer" })),
      triple(iri("old"), iri("w"), lit("kept")),
    ];
    expect(keysOf((await reopened.getTriples(viewOf([old]), `${EX}old`, OPTS)).triples)).toEqual(keysOf(expected));
    expect(
      virtuoso.sql(
        'SPARQL SELECT (CONCAT("copies=", STR(COUNT(*))) AS ?c) WHERE { GRAPH <urn:x-acms:service-meta> { ?s <urn:x-acms:typed-copies> ?o } };',
      ),
    ).toMatch(/copies=1\b/);
    await reopened.clearResource(old);
    await reopened.close();
  }, 60_000);

  it("a write larger than one request is split, and a large replace swaps the whole graph at once", async () => {
    const small = await open({ maxUpdateBytes: 4096 });
    const many = Array.from({ length: 600 }, (_, i) => triple(iri(`n${i}`), iri("v"), lit(`value ${i} ${"x".repeat(20)}`)));
    expect(await small.putTriples(B, many, true)).toBe(600);
    const r = await small.query(viewOf([B]), "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", OPTS);
    expect(r.form === "SELECT" && r.rows[0].n.value).toBe("600");
    expect(await small.putTriples(B, many.slice(0, 10), false)).toBe(10);
    const again = await small.query(viewOf([B]), "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", OPTS);
    expect(again.form === "SELECT" && again.rows[0].n.value).toBe("600");
    expect(
      virtuoso.sql("SPARQL SELECT COUNT(DISTINCT ?g) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), 'urn:x-acms:staging')) };"),
    ).toMatch(/\b0\b/);
    // Typed literals' exact copies go through the staging graph too: a large replace swaps them with the graph.
    const typed = Array.from({ length: 300 }, (_, i) =>
      triple(iri("t"), iri("v"), lit(`0${i}`, { datatype: "http://www.w3.org/2001/XMLSchema#int" })),
    );
    expect(await small.putTriples(B, [...many, ...typed], true)).toBe(900);
    expect((await small.getTriples(viewOf([B]), `${EX}t`, OPTS)).triples.map((t) => t.object.value).sort()).toEqual(
      typed.map((t) => t.object.value).sort(),
    );
    expect(await small.putTriples(B, [...many, ...typed.slice(0, 5)], true)).toBe(605);
    expect((await small.getTriples(viewOf([B]), `${EX}t`, OPTS)).triples.map((t) => t.object.value).sort()).toEqual(
      typed
        .slice(0, 5)
        .map((t) => t.object.value)
        .sort(),
    );
    expect(
      virtuoso.sql("SPARQL SELECT COUNT(DISTINCT ?g) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), 'urn:x-acms:staging')) };"),
    ).toMatch(/\b0\b/);
    await small.close();
    await backend.putTriples(B, B_TRIPLES, true);
  }, 60_000);
});

describe('where Virtuoso still differs from Oxigraph (README, "Where Virtuoso differs"): pinned', () => {
  const V = "01JVVVVVVVVVVVVVVVVVVVVVVV";
  const XSD = "http://www.w3.org/2001/XMLSchema#";
  const one = async (query: string) => {
    const r = await backend.query(viewOf([V]), query, OPTS);
    if (r.form !== "SELECT") throw new Error("SELECT expected");
    return r.rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, t]) => [k, t.datatype ? `${t.value}^^${t.datatype.replace(XSD, "xsd:")}` : t.value])),
    );
  };

  beforeAll(async () => {
    const at = (s: string, value: string, type: string) => triple(iri(s), iri("v"), lit(value, { datatype: `${XSD}${type}` }));
    await backend.putTriples(
      V,
      [
        at("i", "05", "int"),
        at("d", "123456789012", "double"),
        at("z", "-0", "double"),
        at("inf", "INF", "double"),
        at("u", "PT60M", "duration"),
      ],
      true,
    );
    await backend.putTriples(V, [triple(blank("b"), iri("v"), lit("x"))], false);
  });

  it('functions inside a query see Virtuoso\'s values: DATATYPE() of an xsd:int is xsd:int, STR() of INF is "inf" (Oxigraph: xsd:integer, "INF")', async () => {
    expect(await one(`SELECT ?o (DATATYPE(?o) AS ?t) { <${EX}i> ?p ?o }`)).toEqual([{ o: "5^^xsd:integer", t: `${XSD}int` }]);
    expect(await one(`SELECT (STR(?o) AS ?s) { <${EX}inf> ?p ?o }`)).toEqual([{ s: "inf" }]);
  });

  it("a double in an answer has 6 significant digits, and -0 is 0 (Oxigraph: 123456789012, -0)", async () => {
    expect(await one(`SELECT ?o (STR(?o) AS ?s) { <${EX}d> ?p ?o }`)).toEqual([{ o: "123457000000^^xsd:double", s: "123456789012" }]);
    expect(await one(`SELECT ?o { <${EX}z> ?p ?o }`)).toEqual([{ o: "0^^xsd:double" }]);
  });

  it("a literal stored verbatim has the verbatim datatype inside a query; a duration literal in a query is refused", async () => {
    expect(await one(`SELECT ?o (DATATYPE(?o) AS ?t) { <${EX}u> ?p ?o }`)).toEqual([
      { o: "PT1H^^xsd:duration", t: `urn:x-acms-verbatim:${XSD}duration` },
    ]);
    expect(await one(`SELECT ?o { <${EX}u> ?p ?o FILTER(STR(?o) = "PT1H") }`)).toEqual([{ o: "PT1H^^xsd:duration" }]);
    // Virtuoso cannot compile it ("S0022 ... No column PT60MD"): the caller's query, so INVALID_ARGUMENT.
    const err = await rejection(backend.query(viewOf([V]), `SELECT ?o { <${EX}u> ?p ?o FILTER(?o = "PT60M"^^<${XSD}duration>) }`, OPTS));
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toMatch(/S0022/);
  });

  it('CONCAT() of an error is the empty string, so CONCAT(STR(blank), "-") is "-" (SPARQL, Oxigraph: unbound)', async () => {
    expect(await one(`SELECT (CONCAT(STR(?s), "-") AS ?c) { ?s <${EX}v> "x" }`)).toEqual([{ c: "-" }]);
  });
});
