import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeadlineExceededError, InvalidArgumentError, ScopeViolationError } from "../../src/domain/errors.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { graphIri } from "../../src/domain/uko-uri.js";
import type { GraphBackend, GraphQueryResult } from "../../src/ports/graph-backend.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";
import { A, A_TRIPLES, B, B_TRIPLES, C, C_TRIPLES, EX, XSD, blank, iri, keysOf, lit, triple, viewOf } from "./graph-fixtures.js";

/** How one adapter of the GraphBackend port is run through the shared suite. */
export interface GraphBackendSuiteOptions extends ConformanceOptions {
  /** Opens the backend whose durable state lives in `dataDir` (opening the same directory again is a restart). */
  create(dataDir: string, opts: { maxResults?: number }): Promise<GraphBackend>;
  /** Whether its store belongs to one deployment alone, so it lists its resources (GraphBackend.resourceIds). */
  ownsStore: boolean;
}

const OPTS = { timeoutMs: 20_000 };

/** A query whose cost grows with the sixth power of the triple count: seconds on a few dozen triples. */
const SLOW_QUERY = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u }";

function rows(r: GraphQueryResult) {
  if (r.form !== "SELECT") throw new Error(`expected SELECT, got ${r.form}`);
  return r.rows;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

async function expectScopeViolation(p: Promise<unknown>, resourceIds: string[], reason?: RegExp): Promise<void> {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(ScopeViolationError);
  const info = (err as ScopeViolationError).info;
  expect([...info.resourceIds].sort()).toEqual([...resourceIds].sort());
  expect(info.scopeProjectNames).toEqual(["local/graph"]);
  if (reason) expect(info.reason).toMatch(reason);
}

async function expectInvalid(p: Promise<unknown>, description?: RegExp): Promise<void> {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(InvalidArgumentError);
  const v = (err as InvalidArgumentError).violations[0];
  if (description) expect(v.description).toMatch(description);
}

/**
 * The conformance suite of the GraphBackend port: writes, scoped SPARQL (dataset restriction, FROM /
 * FROM NAMED / GRAPH checks, prefixed names, BASE tricks, SERVICE and updates refused, keywords inside
 * strings and comments left alone, subqueries), lossless terms, GetTriples, Traverse, result caps, time
 * limits, cancellation and restarts. Every adapter runs it.
 */
export function runGraphBackendSuite(opts: GraphBackendSuiteOptions): void {
  conformanceSuite("GraphBackend", opts, (test) => {
    let dir: string;
    let backend: GraphBackend;
    const open: GraphBackend[] = [];
    let leaksBefore: number;

    async function make(maxResults?: number, at = dir): Promise<GraphBackend> {
      const b = await opts.create(at, { maxResults });
      open.push(b);
      return b;
    }

    async function seed(b: GraphBackend): Promise<void> {
      await b.putTriples(A, A_TRIPLES, true);
      await b.putTriples(B, B_TRIPLES, true);
      await b.putTriples(C, C_TRIPLES, true);
    }

    const select = async (scope: string[], q: string, b: GraphBackend = backend) => rows(await b.query(viewOf(scope), q, OPTS));
    const values = async (scope: string[], q: string, v: string) => (await select(scope, q)).map((r) => r[v]?.value).sort();

    beforeAll(() => {
      leaksBefore = preventedLeaks.prevented;
    });
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "acms-graph-"));
      backend = await make();
      await seed(backend);
    });
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
      rmSync(dir, { recursive: true, force: true });
    });
    afterAll(() => {
      expect(preventedLeaks.prevented).toBe(leaksBefore);
    });

    describe("writes", () => {
      test("putTriples counts distinct triples and replace swaps the graph", async () => {
        expect(await backend.putTriples(A, [A_TRIPLES[0], A_TRIPLES[0], A_TRIPLES[1]], false)).toBe(2);
        expect(await values([A], "SELECT ?o { <http://example.org/alice> <http://example.org/knows> ?o }", "o")).toEqual([`${EX}bob`]);
        await backend.putTriples(A, [triple(iri("x"), iri("y"), lit("z"))], false);
        expect((await select([A], "SELECT * { ?s ?p ?o }")).length).toBe(A_TRIPLES.length + 1);
        await backend.putTriples(A, [triple(iri("x"), iri("y"), lit("only"))], true);
        expect(await values([A], "SELECT ?o { ?s ?p ?o }", "o")).toEqual(["only"]);
        expect((await select([B], "SELECT * { ?s ?p ?o }")).length).toBe(B_TRIPLES.length);
      });

      test("clearResource drops one graph only", async () => {
        await backend.clearResource(A);
        expect(await select([A], "SELECT * { ?s ?p ?o }")).toEqual([]);
        expect((await select([B], "SELECT * { ?s ?p ?o }")).length).toBe(B_TRIPLES.length);
      });

      test("eraseResource counts and drops one graph, with its typed literals, and survives a reopen", async () => {
        await backend.putTriples(
          A,
          [triple(iri("typed"), iri("p"), { kind: "literal", value: "0042", datatype: "http://www.w3.org/2001/XMLSchema#int" })],
          false,
        );
        const g = backend.generation();
        expect(await backend.eraseResource(A)).toBe(A_TRIPLES.length + 1);
        expect(backend.generation()).toBeGreaterThan(g);
        expect(await select([A], "SELECT * { ?s ?p ?o }")).toEqual([]);
        expect((await backend.getTriples(viewOf([A]), `${EX}typed`, OPTS)).triples).toEqual([]);
        expect((await select([B], "SELECT * { ?s ?p ?o }")).length).toBe(B_TRIPLES.length);
        expect(await backend.eraseResource(A)).toBe(0);
        const again = await make();
        expect(await select([A], "SELECT * { ?s ?p ?o }", again)).toEqual([]);
      });

      test("resourceIds names each resource holding a triple, typed literals included, and none erased or cleared (a store of one deployment only)", async () => {
        if (!opts.ownsStore) {
          // A store other deployments may share has no listing: the start-up sweep would erase their graphs.
          expect(backend.resourceIds).toBeUndefined();
          return;
        }
        await backend.putTriples(
          C,
          [triple(iri("typed"), iri("p"), { kind: "literal", value: "0042", datatype: "http://www.w3.org/2001/XMLSchema#int" })],
          false,
        );
        const held = async (b: GraphBackend = backend) => (await b.resourceIds!()).sort();
        expect(await held()).toEqual([A, B, C].sort());
        await backend.eraseResource(A);
        await backend.clearResource(B);
        expect(await held()).toEqual([C]);
        await backend.eraseResource(C);
        expect(await held()).toEqual([]);
        expect(await held(await make())).toEqual([]);
      });

      test("generation grows with every write", async () => {
        const g = backend.generation();
        await backend.putTriples(A, [A_TRIPLES[0]], false);
        expect(backend.generation()).toBeGreaterThan(g);
      });

      test("bad terms are INVALID_ARGUMENT naming the field", async () => {
        const err = await rejection(
          backend.putTriples(A, [A_TRIPLES[0], triple(iri("a"), iri("b"), { kind: "iri", value: "not an iri" })], false),
        );
        expect(err).toBeInstanceOf(InvalidArgumentError);
        expect((err as InvalidArgumentError).violations[0].field).toBe("triples[1].object.value");
        await expectInvalid(backend.putTriples(A, [triple(lit("s"), iri("p"), lit("o"))], false));
        await expectInvalid(backend.putTriples(A, [triple(iri("s"), blank("p"), lit("o"))], false));
        await expectInvalid(backend.putTriples(A, [triple(iri("s"), iri("p"), lit("o", { language: "not a tag!" }))], false));
        await expectInvalid(backend.putTriples("not-a-ulid", [A_TRIPLES[0]], false));
        expect((await select([A], "SELECT * { ?s ?p ?o }")).length).toBe(A_TRIPLES.length);
      });
    });

    describe("scoped SPARQL", () => {
      test("the default graph is the union of the in-scope graphs only", async () => {
        expect(await values([A], `SELECT ?o { <${EX}alice> ?p ?o }`, "o")).toEqual(
          [`${EX}bob`, "30", "Alice", 'plain "quoted"\nline'].sort(),
        );
        expect(await values([A, B], `SELECT ?o { <${EX}alice> <${EX}secret> ?o }`, "o")).toEqual(["B-secret"]);
        expect(await values([B, C], `SELECT ?o { <${EX}alice> <${EX}secret> ?o }`, "o")).toEqual(["B-secret", "C-secret"]);
        expect(await select([], "SELECT * { ?s ?p ?o }")).toEqual([]);
      });

      test("GRAPH ?g visits in-scope graphs only", async () => {
        expect(await values([A], "SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }", "g")).toEqual([graphIri(A)]);
        expect(await values([A, C], "SELECT DISTINCT ?g { GRAPH ?g { ?s ?p ?o } }", "g")).toEqual([graphIri(A), graphIri(C)].sort());
        expect(await select([], "SELECT * { GRAPH ?g { ?s ?p ?o } }")).toEqual([]);
      });

      test("a graph bound by VALUES outside the scope reads nothing", async () => {
        expect(await select([A], `SELECT * { VALUES ?g { <${graphIri(B)}> } GRAPH ?g { ?s ?p ?o } }`)).toEqual([]);
      });

      test("FROM, FROM NAMED and GRAPH <iri> naming other graphs are scope violations", async () => {
        await expectScopeViolation(backend.query(viewOf([A]), `SELECT * FROM <${graphIri(B)}> { ?s ?p ?o }`, OPTS), [B]);
        await expectScopeViolation(backend.query(viewOf([A]), `SELECT * FROM NAMED <${graphIri(B)}> { GRAPH ?g { ?s ?p ?o } }`, OPTS), [B]);
        await expectScopeViolation(backend.query(viewOf([A]), `SELECT * { GRAPH <${graphIri(C)}> { ?s ?p ?o } }`, OPTS), [C]);
        await expectScopeViolation(
          backend.query(viewOf([A]), `ASK FROM <${graphIri(A)}> FROM <${graphIri(B)}> FROM NAMED <${graphIri(C)}> { ?s ?p ?o }`, OPTS),
          [B, C],
        );
        await expectScopeViolation(
          backend.query(viewOf([A]), "SELECT * FROM <http://example.org/g> { ?s ?p ?o }", OPTS),
          [],
          /not a resource graph/,
        );
        await expectScopeViolation(
          backend.query(viewOf([A]), "SELECT * { GRAPH <urn:x:default> { ?s ?p ?o } }", OPTS),
          [],
          /urn:x:default/,
        );
      });

      test("FROM and FROM NAMED naming in-scope graphs narrow the dataset", async () => {
        expect(await values([A, B], `SELECT ?o FROM <${graphIri(B)}> { <${EX}alice> ?p ?o }`, "o")).toEqual(["B-secret"]);
        expect(await select([A, B], `SELECT * FROM NAMED <${graphIri(A)}> { ?s ?p ?o }`)).toEqual([]);
        expect(await values([A, B], `SELECT DISTINCT ?g FROM NAMED <${graphIri(A)}> { GRAPH ?g { ?s ?p ?o } }`, "g")).toEqual([
          graphIri(A),
        ]);
        expect(await select([A, B], `SELECT * FROM <${graphIri(A)}> { GRAPH ?g { ?s ?p ?o } }`)).toEqual([]);
      });

      test("prefixed graph names are resolved before the check", async () => {
        await expectScopeViolation(backend.query(viewOf([A]), `PREFIX g: <${graphIri(B)}> SELECT * { GRAPH g: { ?s ?p ?o } }`, OPTS), [B]);
        await expectScopeViolation(backend.query(viewOf([A]), `PREFIX u: <uko://> SELECT * { GRAPH u:${B}\\/ { ?s ?p ?o } }`, OPTS), [B]);
        await expectScopeViolation(backend.query(viewOf([A]), `prefix : <uko://${C}/> select * from : { ?s ?p ?o }`, OPTS), [C]);
        expect(await values([A, B], `PREFIX g: <${graphIri(B)}> SELECT ?o { GRAPH g: { <${EX}alice> ?p ?o } }`, "o")).toEqual(["B-secret"]);
        await expectInvalid(backend.query(viewOf([A]), "SELECT * { GRAPH nope:x { ?s ?p ?o } }", OPTS), /not declared/);
      });

      test("BASE and relative IRIs are resolved before the check", async () => {
        await expectScopeViolation(backend.query(viewOf([A]), `BASE <${graphIri(B)}> SELECT * FROM <> { ?s ?p ?o }`, OPTS), [B]);
        await expectScopeViolation(backend.query(viewOf([A]), `BASE <${graphIri(A)}> SELECT * { GRAPH <//${B}/> { ?s ?p ?o } }`, OPTS), [
          B,
        ]);
        await expectScopeViolation(
          backend.query(viewOf([A]), `BASE <${graphIri(A)}x/> SELECT * FROM <../../${B}/> { ?s ?p ?o }`, OPTS),
          [],
          /not a resource graph/,
        );
        await expectScopeViolation(
          backend.query(viewOf([A]), `BASE <http://evil.example/> PREFIX g: <uko://${B}/> SELECT * FROM g: { ?s ?p ?o }`, OPTS),
          [B],
        );
        await expectScopeViolation(backend.query(viewOf([A]), `BASE <uko://${B}/x/> PREFIX g: <..> SELECT * FROM g: { ?s ?p ?o }`, OPTS), [
          B,
        ]);
        expect(await values([A, B], `BASE <uko://${A}/deep/> SELECT ?o FROM <../> { <${EX}alice> <${EX}name> ?o }`, "o")).toEqual([
          "Alice",
        ]);
        await expectInvalid(backend.query(viewOf([A]), `SELECT * FROM <${B}/> { ?s ?p ?o }`, OPTS), /no BASE/);
      });

      test("SERVICE and updates are INVALID_ARGUMENT", async () => {
        const refused = [
          "SELECT * { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
          "SELECT * { SERVICE SILENT ?x { ?s ?p ?o } }",
          "INSERT DATA { <http://a> <http://b> <http://c> }",
          `DELETE WHERE { GRAPH <${graphIri(B)}> { ?s ?p ?o } }`,
          "LOAD <http://example.org/data.ttl>",
          `CLEAR GRAPH <${graphIri(B)}>`,
          "DROP ALL",
          `CREATE GRAPH <${graphIri(C)}>`,
          `COPY <${graphIri(B)}> TO <${graphIri(A)}>`,
          `MOVE <${graphIri(B)}> TO <${graphIri(A)}>`,
          `ADD <${graphIri(B)}> TO <${graphIri(A)}>`,
          `WITH <${graphIri(B)}> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }`,
          "PREFIX ex: <http://example.org/> INSERT DATA { ex:a ex:b ex:c }",
          "SELECT * { ?s ?p ?o } ; INSERT DATA { <http://a> <http://b> <http://c> }",
          "DESCRIBE <http://a> DELETE",
          "NOTAQUERY { ?s ?p ?o }",
          "PREFIX ex: <http://example.org/>",
        ];
        for (const q of refused) await expectInvalid(backend.query(viewOf([A, B]), q, OPTS));
        expect((await select([B], "SELECT * { ?s ?p ?o }")).length).toBe(B_TRIPLES.length);
      });

      test("keywords and graph names inside strings, IRIs, comments and names are not refused", async () => {
        const ok = [
          `SELECT ?o { ?s ?p ?o FILTER(?o != "INSERT DATA SERVICE FROM <${graphIri(B)}>") }`,
          `SELECT ?o { ?s ?p ?o FILTER(?o != 'GRAPH <${graphIri(B)}> { }') }`,
          `SELECT ?o { ?s ?p ?o FILTER(?o != """multi\nline DELETE "quoted" GRAPH <${graphIri(C)}>""") }`,
          `SELECT ?o { ?s ?p ?o FILTER(?o != '''DROP ALL''') }`,
          `SELECT ?o # FROM <${graphIri(B)}> SERVICE DELETE\n{ ?s ?p ?o }`,
          "SELECT ?o { ?s <http://example.org/SERVICE#INSERT> ?o }",
          "PREFIX ex: <http://example.org/> SELECT ?o { ?s ex:delete ?o . OPTIONAL { ?s ex:SERVICE ?x } }",
          "SELECT ?graph ?from ?service ?insert { ?graph ?from ?service OPTIONAL { ?service ?insert ?graph } }",
          `SELECT ?o { ?s ?p ?o FILTER(STR(?o) < "z" && 1 < 2) }`,
          `SELECT ?o { ?s ?p ?o FILTER(?o != "esc \\" GRAPH <${graphIri(B)}> \\"") }`,
        ];
        for (const q of ok) {
          const r = await backend.query(viewOf([A]), q, OPTS);
          expect(r.form).toBe("SELECT");
        }
        expect((await select([A], ok[0])).length).toBe(A_TRIPLES.length);
      });

      test("nested subqueries stay inside the scope", async () => {
        expect(await values([A], "SELECT DISTINCT ?g { { SELECT ?g { GRAPH ?g { ?s ?p ?o } } } }", "g")).toEqual([graphIri(A)]);
        expect(await values([A], `SELECT ?o { { SELECT ?o { { SELECT ?o { <${EX}alice> <${EX}secret> ?o } } } } }`, "o")).toEqual([]);
        await expectScopeViolation(backend.query(viewOf([A]), `SELECT * { { SELECT ?s { GRAPH <${graphIri(B)}> { ?s ?p ?o } } } }`, OPTS), [
          B,
        ]);
        expect(
          await values([A], `SELECT ?o { <${EX}alice> ?p ?o FILTER EXISTS { GRAPH ?g { <${EX}alice> <${EX}secret> ?x } } }`, "o"),
        ).toEqual([]);
      });

      test("ASK, CONSTRUCT and DESCRIBE see the scope only", async () => {
        const ask = await backend.query(viewOf([A]), `ASK { <${EX}alice> <${EX}secret> ?o }`, OPTS);
        expect(ask).toEqual({ form: "ASK", boolean: false, exhaustive: true });
        expect(await backend.query(viewOf([B]), `ASK { <${EX}alice> <${EX}secret> ?o }`, OPTS)).toMatchObject({ boolean: true });
        const construct = await backend.query(viewOf([A]), `CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`, OPTS);
        expect(construct.form).toBe("CONSTRUCT");
        if (construct.form !== "CONSTRUCT") return;
        expect(keysOf(construct.triples)).toEqual(keysOf(A_TRIPLES));
        const describe = await backend.query(viewOf([A]), `DESCRIBE <${EX}alice>`, OPTS);
        expect(describe.form).toBe("DESCRIBE");
        if (describe.form !== "DESCRIBE") return;
        expect(keysOf(describe.triples)).toEqual(keysOf(A_TRIPLES.filter((t) => t.subject.value === `${EX}alice`)));
      });

      test("terms come back lossless: IRIs, plain, typed and language literals, blank nodes", async () => {
        const r = await backend.query(viewOf([A]), "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", OPTS);
        if (r.form !== "CONSTRUCT") throw new Error("CONSTRUCT expected");
        expect(keysOf(r.triples)).toEqual(keysOf(A_TRIPLES));
        const sel = await select([A], `SELECT ?o { ?s ?p ?o } ORDER BY STR(?o)`);
        const objects = sel.map((row) => row.o);
        expect(objects).toContainEqual(lit("Alice", { language: "en" }));
        expect(objects).toContainEqual(lit("30", { datatype: `${XSD}integer` }));
        expect(objects).toContainEqual(lit('plain "quoted"\nline'));
        expect(objects).toContainEqual(blank("a1"));
        expect(objects).toContainEqual(iri("carol"));
        for (const o of objects) if (o.kind === "literal" && o.value === "Carol") expect(o).toEqual(lit("Carol"));
        const mixed = [
          triple(blank("x"), iri("v"), lit("", {})),
          triple(blank("x"), iri("v"), lit("dt", { datatype: `${XSD}string` })),
          triple(blank("x"), iri("v"), lit("ja", { language: "ja-JP" })),
          triple(blank("x"), iri("v"), lit("√ unicode ☃ \u{1F600}", { datatype: "http://example.org/dt" })),
          triple(blank("x"), iri("v"), iri("http://example.org/é?q=1#frag")),
          triple(blank("x"), iri("v"), lit("esc \\ \t \u0001 \r \"q\" 's' @en ^^<x> .\n<a> <b> <c> .")),
        ];
        await backend.putTriples(C, mixed, true);
        const got = await backend.query(viewOf([C]), "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", OPTS);
        if (got.form !== "CONSTRUCT") throw new Error("CONSTRUCT expected");
        expect(keysOf(got.triples)).toEqual(
          keysOf([
            mixed[0],
            triple(blank("x"), iri("v"), lit("dt")),
            triple(blank("x"), iri("v"), lit("ja", { language: "ja-jp" })),
            mixed[3],
            mixed[4],
            mixed[5],
          ]),
        );
      });

      test("SELECT keeps projection order and leaves unbound variables out", async () => {
        const r = await backend.query(
          viewOf([A]),
          `SELECT ?z ?s ?missing { ?s <${EX}name> ?z OPTIONAL { ?s <${EX}nothing> ?missing } } ORDER BY STR(?z)`,
          OPTS,
        );
        if (r.form !== "SELECT") throw new Error("SELECT expected");
        expect(r.variables).toEqual(["z", "s", "missing"]);
        expect(r.rows).toEqual([
          { z: lit("Alice", { language: "en" }), s: iri("alice") },
          { z: lit("Carol"), s: iri("carol") },
        ]);
        expect(r.exhaustive).toBe(true);
      });

      test("ORDER BY gives the order SPARQL 1.1 fixes: unbound, blank nodes, IRIs, literals; numbers, dates and simple literals by value", async () => {
        const rank = iri("rank");
        await backend.putTriples(
          C,
          [
            triple(iri("n1"), rank, lit("10", { datatype: `${XSD}integer` })),
            triple(iri("n2"), rank, lit("2", { datatype: `${XSD}integer` })),
            triple(iri("n3"), rank, lit("-1", { datatype: `${XSD}integer` })),
            triple(iri("n4"), rank, lit("3.5", { datatype: `${XSD}decimal` })),
            triple(iri("d1"), iri("day"), lit("2021-03-01", { datatype: `${XSD}date` })),
            triple(iri("d2"), iri("day"), lit("2020-12-31", { datatype: `${XSD}date` })),
            triple(iri("s1"), iri("word"), lit("b")),
            triple(iri("s2"), iri("word"), lit("B")),
            triple(iri("s3"), iri("word"), lit("a")),
            triple(iri("m1"), iri("mixed"), lit("zz")),
            triple(iri("m2"), iri("mixed"), iri("zz-node")),
            triple(iri("m3"), iri("mixed"), lit("aa", { language: "en" })),
            triple(iri("m4"), iri("mixed"), iri("aa-node")),
            triple(iri("m5"), iri("mixed"), blank("zz-blank")),
            triple(iri("m1"), iri("tag"), lit("t")),
            triple(iri("m3"), iri("tag"), lit("t")),
          ],
          true,
        );
        const ordered = async (q: string, v: string) => (await select([C], q)).map((r) => r[v]?.value ?? "(unbound)");
        expect(await ordered(`SELECT ?o { ?s <${EX}rank> ?o } ORDER BY ?o`, "o")).toEqual(["-1", "2", "3.5", "10"]);
        expect(await ordered(`SELECT ?o { ?s <${EX}rank> ?o } ORDER BY DESC(?o)`, "o")).toEqual(["10", "3.5", "2", "-1"]);
        expect(await ordered(`SELECT ?o { ?s <${EX}day> ?o } ORDER BY ?o`, "o")).toEqual(["2020-12-31", "2021-03-01"]);
        expect(await ordered(`SELECT ?o { ?s <${EX}word> ?o } ORDER BY ?o`, "o")).toEqual(["B", "a", "b"]);
        // Blank nodes, then IRIs, then literals, each kind in its own order; a plain and a language-tagged
        // literal have no order between them in SPARQL 1.1 (15.1), so only which literals come last is fixed.
        const mixed = await ordered(`SELECT ?o { ?s <${EX}mixed> ?o } ORDER BY ?o`, "o");
        expect(mixed.slice(0, 3)).toEqual(["zz-blank", `${EX}aa-node`, `${EX}zz-node`]);
        expect([...mixed.slice(3)].sort()).toEqual(["aa", "zz"]);
        const down = await ordered(`SELECT ?o { ?s <${EX}mixed> ?o } ORDER BY DESC(?o)`, "o");
        expect([...down.slice(0, 2)].sort()).toEqual(["aa", "zz"]);
        expect(down.slice(2)).toEqual([`${EX}zz-node`, `${EX}aa-node`, "zz-blank"]);
        // Unbound sorts first, ascending; last, descending.
        const withUnbound = `SELECT ?s ?t { ?s <${EX}mixed> ?o OPTIONAL { ?s <${EX}tag> ?t } }`;
        expect(await ordered(`${withUnbound} ORDER BY ?t ?s`, "s")).toEqual([`${EX}m2`, `${EX}m4`, `${EX}m5`, `${EX}m1`, `${EX}m3`]);
        expect(await ordered(`${withUnbound} ORDER BY DESC(?t) ASC(?s)`, "s")).toEqual([
          `${EX}m1`,
          `${EX}m3`,
          `${EX}m2`,
          `${EX}m4`,
          `${EX}m5`,
        ]);
        expect(await ordered(`${withUnbound} ORDER BY (STR(?s)) LIMIT 2`, "s")).toEqual([`${EX}m1`, `${EX}m2`]);
      });

      test("stored blank nodes are blank nodes inside a query: isBlank true, isIRI and isURI false", async () => {
        expect(await select([A], "SELECT ?o { ?s ?p ?o FILTER(isBlank(?o)) }")).toEqual([{ o: blank("a1") }]);
        expect(await select([A], "SELECT DISTINCT ?s { ?s ?p ?o FILTER(ISBLANK(?s)) }")).toEqual([{ s: blank("a1") }]);
        expect(await values([A], `SELECT ?o { ?s <${EX}knows> ?o FILTER(isIRI(?o)) }`, "o")).toEqual([`${EX}bob`, `${EX}carol`]);
        expect(await values([A], `SELECT ?o { ?s <${EX}knows> ?o FILTER(isUri(?o)) }`, "o")).toEqual([`${EX}bob`, `${EX}carol`]);
        expect(await values([A], `SELECT ?s { ?s ?p ?o FILTER(!isBlank(?s) && isBlank(COALESCE(?o, ?s))) }`, "s")).toEqual([`${EX}bob`]);
        expect(
          await select([A], `SELECT ?o { <${EX}bob> <${EX}knows> ?o FILTER(isBlank(?o) && !isIRI(?o) && !isURI(?o) && !isLiteral(?o)) }`),
        ).toEqual([{ o: blank("a1") }]);
        expect(
          await values([A], `SELECT ?o { ?s ?p ?o FILTER(isLiteral(?o) && STR(?o) != "isBlank(?o)") FILTER(!isBlank(?s)) }`, "o"),
        ).toEqual(["30", "Alice", "Carol", 'plain "quoted"\nline']);
        expect(await values([A], "SELECT ?n { BIND(BNODE() AS ?n) FILTER(isBlank(?n) && !isIRI(?n)) }", "n")).toHaveLength(1);
      });

      test("STR() of a blank node is an error, as SPARQL says: unbound when projected, false in a FILTER", async () => {
        const r = await select([A], `SELECT ?o (STR(?o) AS ?x) (COALESCE(STR(?o), "none") AS ?y) { <${EX}bob> <${EX}knows> ?o }`);
        expect(r).toEqual([{ o: blank("a1"), y: lit("none") }]);
        expect(await select([A], `SELECT ?o { <${EX}bob> <${EX}knows> ?o FILTER(STR(?o) != "") }`)).toEqual([]);
        expect(await select([A], `SELECT ?o { <${EX}bob> <${EX}knows> ?o FILTER(!BOUND(?missing) && STRLEN(STR(?o)) >= 0) }`)).toEqual([]);
        expect(await values([A], `SELECT ?x { ?s <${EX}knows> ?o BIND(STR(?o) AS ?x) }`, "x")).toEqual([
          `${EX}bob`,
          `${EX}carol`,
          undefined,
        ]);
        // A variable the rewrite could pick for its error is left alone.
        expect(
          await values([A], `SELECT ?acms_error { ?s <${EX}knows> ?acms_error FILTER(STR(?acms_error) != "") }`, "acms_error"),
        ).toEqual([`${EX}bob`, `${EX}carol`]);
      });

      test("ill-typed literals, durations and XML literals are kept, and SPARQL answers literals in one canonical form", async () => {
        const p = iri("v");
        const rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
        const cases: [string, string, string, string][] = [
          // written lexical form, datatype, answered lexical form, answered datatype
          ["abc", `${XSD}integer`, "abc", `${XSD}integer`],
          ["1.5", `${XSD}integer`, "1.5", `${XSD}integer`],
          ["99999999999999999999", `${XSD}integer`, "99999999999999999999", `${XSD}integer`],
          ["abc", `${XSD}boolean`, "abc", `${XSD}boolean`],
          ["abc", `${XSD}decimal`, "abc", `${XSD}decimal`],
          ["abc", `${XSD}double`, "abc", `${XSD}double`],
          ["PT60M", `${XSD}duration`, "PT1H", `${XSD}duration`],
          ["P1Y2M", `${XSD}duration`, "P1Y2M", `${XSD}duration`],
          ["-P1DT0.50S", `${XSD}duration`, "-P1DT0.5S", `${XSD}duration`],
          ["P12M", `${XSD}yearMonthDuration`, "P1Y", `${XSD}yearMonthDuration`],
          ["PT1H", `${XSD}dayTimeDuration`, "PT1H", `${XSD}dayTimeDuration`],
          ["<a/>", `${rdf}XMLLiteral`, "<a/>", `${rdf}XMLLiteral`],
          ["05", `${XSD}int`, "5", `${XSD}integer`],
          ["5", `${XSD}long`, "5", `${XSD}integer`],
          ["7", `${XSD}unsignedByte`, "7", `${XSD}integer`],
          ["1.5E-7", `${XSD}double`, "0.00000015", `${XSD}double`],
          ["2020-01-01T10:00:00.500+02:00", `${XSD}dateTime`, "2020-01-01T10:00:00.5+02:00", `${XSD}dateTime`],
          ["10:00:00.250", `${XSD}time`, "10:00:00.25", `${XSD}time`],
        ];
        const written = cases.map(([value, datatype], i) => triple(iri(`lit${i}`), p, lit(value, { datatype })));
        expect(await backend.putTriples(C, written, true)).toBe(cases.length);
        const answered = await select([C], `SELECT ?s ?o { ?s <${EX}v> ?o }`);
        const got = new Map(answered.map((row) => [row.s.value, row.o]));
        cases.forEach(([, , value, datatype], i) => expect([i, got.get(`${EX}lit${i}`)]).toEqual([i, lit(value, { datatype })]));
        const constructed = await backend.query(viewOf([C]), `CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`, OPTS);
        if (constructed.form !== "CONSTRUCT") throw new Error("CONSTRUCT expected");
        expect(keysOf(constructed.triples)).toEqual(
          keysOf(cases.map(([, , value, datatype], i) => triple(iri(`lit${i}`), p, lit(value, { datatype })))),
        );
        // GetTriples and Traverse answer each exactly as written.
        for (let i = 0; i < cases.length; i++) {
          expect(keysOf((await backend.getTriples(viewOf([C]), `${EX}lit${i}`, OPTS)).triples)).toEqual(keysOf([written[i]]));
        }
        // Two durations of one value written on one subject are both kept by GetTriples.
        const twice = [
          triple(iri("d"), p, lit("PT60M", { datatype: `${XSD}duration` })),
          triple(iri("d"), p, lit("PT1H", { datatype: `${XSD}duration` })),
        ];
        expect(await backend.putTriples(C, twice, true)).toBe(2);
        expect(keysOf((await backend.getTriples(viewOf([C]), `${EX}d`, OPTS)).triples)).toEqual(keysOf(twice));
        expect(await values([C], `SELECT ?o { <${EX}d> ?p ?o }`, "o")).toEqual(["PT1H"]);
      });

      test("syntax errors, empty and oversize queries are INVALID_ARGUMENT", async () => {
        const err = await rejection(backend.query(viewOf([A]), "SELECT * { ?s ?p ", OPTS));
        expect(err).toBeInstanceOf(InvalidArgumentError);
        expect((err as InvalidArgumentError).violations[0].field).toBe("query");
        expect(err.message).not.toMatch(/\n\s+at /);
        await expectInvalid(backend.query(viewOf([A]), "   ", OPTS), /empty/);
        await expectInvalid(backend.query(viewOf([A]), `SELECT * { ?s ?p ?o } #${"x".repeat(70_000)}`, OPTS), /at most/);
        await expectInvalid(backend.query(viewOf([A]), 'SELECT * { ?s ?p "unterminated }', OPTS), /unterminated/);
      });

      test("a capped answer says it is not exhaustive", async () => {
        const small = await make(3, mkdtempSync(join(dir, "cap-")));
        await seed(small);
        const r = await small.query(viewOf([A]), "SELECT * { ?s ?p ?o }", OPTS);
        expect(r).toMatchObject({ form: "SELECT", exhaustive: false });
        expect(rows(r).length).toBe(3);
        const c = await small.query(viewOf([A]), "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", OPTS);
        expect(c).toMatchObject({ exhaustive: false });
        const fits = await small.query(viewOf([C]), "SELECT * { ?s ?p ?o }", OPTS);
        expect(fits.exhaustive).toBe(true);
      });
    });

    describe("GetTriples and Traverse", () => {
      test("GetTriples returns the subject's in-scope triples with their resource", async () => {
        const r = await backend.getTriples(viewOf([A]), `${EX}alice`, OPTS);
        expect(keysOf(r.triples)).toEqual(keysOf(A_TRIPLES.filter((t) => t.subject.value === `${EX}alice`)));
        expect(new Set(r.triples.map((t) => t.resourceId))).toEqual(new Set([A]));
        expect(r.exhaustive).toBe(true);
        const both = await backend.getTriples(viewOf([A, B]), `${EX}alice`, OPTS);
        expect(both.triples.length).toBe(5);
        expect(both.triples.find((t) => t.object.value === "B-secret")?.resourceId).toBe(B);
        expect((await backend.getTriples(viewOf([C]), `${EX}bob`, OPTS)).triples).toEqual([]);
        expect((await backend.getTriples(viewOf([A]), "_:a1", OPTS)).triples).toEqual([
          { ...triple(blank("a1"), iri("knows"), iri("carol")), resourceId: A },
        ]);
      });

      test("GetTriples and Traverse answer typed literals exactly as written: lexical form and datatype", async () => {
        const p = iri("v");
        const typed = [
          lit("05", { datatype: `${XSD}int` }),
          lit("1.50", { datatype: `${XSD}decimal` }),
          lit("2020-01-01", { datatype: `${XSD}date` }),
          lit("2020-01-01T10:00:00.500+02:00", { datatype: `${XSD}dateTime` }),
          lit("1", { datatype: `${XSD}integer` }),
          lit("007", { datatype: `${XSD}integer` }),
          lit("true", { datatype: `${XSD}boolean` }),
          lit("1", { datatype: `${XSD}boolean` }),
          lit("1e3", { datatype: `${XSD}double` }),
          lit("1.5", { datatype: `${XSD}float` }),
          lit("2020", { datatype: `${XSD}gYear` }),
          lit("5", { datatype: `${XSD}long` }),
          lit("x", { datatype: "http://example.org/dt" }),
        ];
        const others = [lit("plain"), lit("lang", { language: "en" }), iri("t2"), blank("t3")];
        const written = [...typed, ...others].map((o) => triple(iri("t1"), p, o));
        const next = [
          triple(iri("t2"), p, lit("0042", { datatype: `${XSD}integer` })),
          triple(blank("t3"), p, lit("+7", { datatype: `${XSD}int` })),
        ];
        expect(await backend.putTriples(C, [...written, ...next], true)).toBe(written.length + next.length);
        const got = await backend.getTriples(viewOf([C]), `${EX}t1`, OPTS);
        expect(keysOf(got.triples)).toEqual(keysOf(written));
        expect(new Set(got.triples.map((t) => t.resourceId))).toEqual(new Set([C]));
        const walked = await backend.traverse(viewOf([C]), `${EX}t1`, 1, OPTS);
        expect(keysOf(walked.triples)).toEqual(keysOf([...written, ...next]));
        expect(new Set(walked.triples.map((t) => t.resourceId))).toEqual(new Set([C]));
        // Out of scope, replaced and cleared resources keep no exact copy behind.
        expect((await backend.getTriples(viewOf([A, B]), `${EX}t1`, OPTS)).triples).toEqual([]);
        await backend.putTriples(C, [triple(iri("t1"), p, lit("only"))], true);
        expect(keysOf((await backend.getTriples(viewOf([C]), `${EX}t1`, OPTS)).triples)).toEqual(
          keysOf([triple(iri("t1"), p, lit("only"))]),
        );
        await backend.putTriples(C, next, false);
        await backend.clearResource(C);
        expect((await backend.traverse(viewOf([C]), `${EX}t2`, 2, OPTS)).triples).toEqual([]);
      });

      test("GetTriples refuses a subject that is neither an IRI nor _:label", async () => {
        for (const s of ["", "not an iri", "relative/path", "_:", "_:bad label"]) {
          const err = await rejection(backend.getTriples(viewOf([A]), s, OPTS));
          expect(err).toBeInstanceOf(InvalidArgumentError);
          expect((err as InvalidArgumentError).violations[0].field).toBe("subject");
        }
      });

      test("Traverse follows IRI and blank objects hop by hop inside the scope", async () => {
        const at = async (scope: string[], depth: number) =>
          keysOf((await backend.traverse(viewOf(scope), `${EX}alice`, depth, OPTS)).triples);
        const alice = A_TRIPLES.filter((t) => t.subject.value === `${EX}alice`);
        expect(await at([A], 0)).toEqual(keysOf(alice));
        expect(await at([A], 1)).toEqual(keysOf([...alice, A_TRIPLES[4]]));
        expect(await at([A], 2)).toEqual(keysOf([...alice, A_TRIPLES[4], A_TRIPLES[5]]));
        expect(await at([A], 8)).toEqual(keysOf(A_TRIPLES));
        const withB = await at([A, B], 8);
        expect(withB).toEqual(keysOf([...A_TRIPLES, ...B_TRIPLES]));
        expect(await at([C], 8)).toEqual(keysOf(C_TRIPLES));
        expect((await backend.traverse(viewOf([]), `${EX}alice`, 8, OPTS)).triples).toEqual([]);
        await expectInvalid(backend.traverse(viewOf([A]), "", 1, OPTS));
      });

      test("Traverse stops at the cap and says so", async () => {
        const small = await make(2, mkdtempSync(join(dir, "cap-")));
        await seed(small);
        const r = await small.traverse(viewOf([A]), `${EX}alice`, 8, OPTS);
        expect(r.triples.length).toBe(2);
        expect(r.exhaustive).toBe(false);
      });
    });

    describe("time limits and durability", () => {
      test("a query past its time limit is DEADLINE_EXCEEDED and the backend keeps serving", async () => {
        // How soon past its limit the query stops is a figure of bench/robustness-bench.ts, not a pass condition.
        const err = await rejection(backend.query(viewOf([A, B, C]), SLOW_QUERY, { timeoutMs: 300 }));
        expect(err).toBeInstanceOf(DeadlineExceededError);
        await backend.putTriples(C, [triple(iri("after"), iri("timeout"), lit("yes"))], false);
        expect(await values([C], `SELECT ?o { <${EX}after> ?p ?o }`, "o")).toEqual(["yes"]);
        expect((await select([A], "SELECT * { ?s ?p ?o }")).length).toBe(A_TRIPLES.length);
      }, 30_000);

      test("an aborted query stops and the backend keeps serving", async () => {
        const ac = new AbortController();
        const p = backend.query(viewOf([A, B, C]), SLOW_QUERY, { timeoutMs: 20_000, signal: ac.signal });
        setTimeout(() => ac.abort(new Error("client went away")), 100);
        const err = await rejection(p);
        expect(err.message).toBe("client went away");
        expect((await select([B], "SELECT * { ?s ?p ?o }")).length).toBe(B_TRIPLES.length);
      }, 30_000);

      test("a restart keeps every triple, blank node label and the generation", async () => {
        await backend.putTriples(C, [triple(blank("keep"), iri("label"), lit("stable"))], false);
        const generation = backend.generation();
        await backend.close();
        const reopened = await make();
        expect(reopened.generation()).toBe(generation);
        const all = await reopened.query(viewOf([A]), "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", OPTS);
        if (all.form !== "CONSTRUCT") throw new Error("CONSTRUCT expected");
        expect(keysOf(all.triples)).toEqual(keysOf(A_TRIPLES));
        expect((await reopened.getTriples(viewOf([C]), "_:keep", OPTS)).triples.map((t) => t.object.value)).toEqual(["stable"]);
        expect((await select([B], "SELECT * { ?s ?p ?o }", reopened)).length).toBe(B_TRIPLES.length);
      });
    });
  });
}
