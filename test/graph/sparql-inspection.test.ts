import fc from "fast-check";
import { InvalidArgumentError, ScopeViolationError } from "../../src/domain/errors.js";
import { inspectSparqlQuery, MAX_SPARQL_LENGTH } from "../../src/domain/inspect-sparql-query.js";
import { resolveIri } from "../../src/domain/resolve-iri.js";
import { scopeSparqlDataset } from "../../src/domain/scope-sparql-dataset.js";
import { tokenizeSparql } from "../../src/domain/sparql-tokenizer.js";
import { graphIri } from "../../src/domain/uko-uri.js";
import { A, B, C, viewOf } from "./graph-fixtures.js";

describe("resolveIri (RFC 3986 §5.4)", () => {
  const base = "http://a/b/c/d;p?q";
  const cases: Record<string, string> = {
    "g:h": "g:h",
    g: "http://a/b/c/g",
    "./g": "http://a/b/c/g",
    "g/": "http://a/b/c/g/",
    "/g": "http://a/g",
    "//g": "http://g",
    "?y": "http://a/b/c/d;p?y",
    "g?y": "http://a/b/c/g?y",
    "#s": "http://a/b/c/d;p?q#s",
    "g#s": "http://a/b/c/g#s",
    ";x": "http://a/b/c/;x",
    "": "http://a/b/c/d;p?q",
    ".": "http://a/b/c/",
    "./": "http://a/b/c/",
    "..": "http://a/b/",
    "../g": "http://a/b/g",
    "../..": "http://a/",
    "../../g": "http://a/g",
    "../../../g": "http://a/g",
    "/./g": "http://a/g",
    "/../g": "http://a/g",
    "g.": "http://a/b/c/g.",
    "..g": "http://a/b/c/..g",
    "./../g": "http://a/b/g",
    "g/./h": "http://a/b/c/g/h",
    "g/../h": "http://a/b/c/h",
    "g;x=1/../y": "http://a/b/c/y",
  };
  it.each(Object.entries(cases))("%s", (ref, expected) => {
    expect(resolveIri(ref, base)).toBe(expected);
  });

  it("keeps absolute IRIs as written without a base and refuses relative ones", () => {
    expect(resolveIri("uko://01JAAAAAAAAAAAAAAAAAAAAAAA/", undefined)).toBe("uko://01JAAAAAAAAAAAAAAAAAAAAAAA/");
    expect(resolveIri("relative/", undefined)).toBeUndefined();
    expect(resolveIri("", undefined)).toBeUndefined();
  });

  it("resolves against uko graph IRIs", () => {
    expect(resolveIri("", graphIri(A))).toBe(graphIri(A));
    expect(resolveIri(`//${B}/`, graphIri(A))).toBe(graphIri(B));
    expect(resolveIri("../", `${graphIri(A)}x/`)).toBe(graphIri(A));
  });
});

describe("tokenizeSparql", () => {
  const kinds = (q: string) => tokenizeSparql(q).map((t) => `${t.kind}:${t.text}`);

  it("keeps strings, IRIs and comments whole", () => {
    expect(kinds(`SELECT ?x { ?x <http://a#b> "GRAPH <x>" } # FROM <y>\nLIMIT 1`)).toEqual([
      "word:SELECT",
      "var:?x",
      "punct:{",
      "var:?x",
      "iri:<http://a#b>",
      'string:"GRAPH <x>"',
      "punct:}",
      "word:LIMIT",
      "number:1",
    ]);
    expect(kinds(`"""a "" b""" '''c''' 'd\\'e'`)).toEqual(['string:"""a "" b"""', "string:'''c'''", "string:'d\\'e'"]);
  });

  it("tells an IRI from a less-than operator", () => {
    expect(kinds("FILTER(?a < ?b)").includes("punct:<")).toBe(true);
    expect(kinds("FILTER(?a<?b)")).toContain("punct:<");
    expect(kinds("FILTER(?a<?b>?c)")).toContain("iri:<?b>");
    expect(kinds("<=")).toEqual(["punct:<="]);
  });

  it("reads prefixed names with escapes and dots, and decodes \\u in IRIs", () => {
    const [p] = tokenizeSparql("ex:a\\/b.c");
    expect(p).toMatchObject({ kind: "pname", value: "ex", local: "a/b.c" });
    expect(tokenizeSparql(":x")[0]).toMatchObject({ kind: "pname", value: "", local: "x" });
    expect(tokenizeSparql("ex:")[0]).toMatchObject({ kind: "pname", value: "ex", local: "" });
    expect(tokenizeSparql("<uko://\\u0041/>")[0].value).toBe("uko://A/");
  });

  it("refuses an unterminated string", () => {
    expect(() => tokenizeSparql('SELECT * { ?s ?p "x }')).toThrow(InvalidArgumentError);
    expect(() => tokenizeSparql("SELECT * { ?s ?p 'x\n' }")).toThrow(InvalidArgumentError);
  });
});

describe("inspectSparqlQuery", () => {
  it("finds the form and every named graph", () => {
    const r = inspectSparqlQuery(
      `PREFIX g: <uko://> BASE <uko://${A}/> select * from <> FROM NAMED g:${B}\\/ { GRAPH ?g {} GRAPH <//${C}/> {} }`,
    );
    expect(r).toEqual({ form: "SELECT", from: [graphIri(A)], fromNamed: [graphIri(B)], graphNames: [graphIri(C)] });
    expect(inspectSparqlQuery("ask {}").form).toBe("ASK");
    expect(inspectSparqlQuery("CONSTRUCT WHERE { ?s ?p ?o }").form).toBe("CONSTRUCT");
    expect(inspectSparqlQuery("DESCRIBE <http://a>").form).toBe("DESCRIBE");
  });

  it("refuses what it cannot resolve", () => {
    expect(() => inspectSparqlQuery("SELECT * FROM <rel> {}")).toThrow(/no BASE/);
    expect(() => inspectSparqlQuery("SELECT * FROM ex:g {}")).toThrow(/not declared/);
    expect(() => inspectSparqlQuery("SELECT * FROM ?g {}")).toThrow(/must be followed by an IRI/);
    expect(() => inspectSparqlQuery("SELECT * { GRAPH }")).toThrow(/must be followed by an IRI/);
    expect(() => inspectSparqlQuery("SELECT * {} PREFIX a: <http://a>")).toThrow(/before the query form/);
  });

  it("never refuses keywords hidden in strings or comments (property)", () => {
    const keyword = fc.constantFrom("INSERT", "DELETE", "SERVICE", "GRAPH <uko://x/>", "FROM <http://x>", "DROP ALL", "LOAD", "WITH");
    const filler = fc.string({ maxLength: 20 }).map((s) => s.replace(/["\\\n\r]/g, ""));
    fc.assert(
      fc.property(keyword, filler, filler, (k, a, b) => {
        const q = `SELECT ?o { ?s ?p ?o FILTER(?o != "${a}${k}${b}") } # ${k}${b}`;
        expect(inspectSparqlQuery(q)).toEqual({ form: "SELECT", from: [], fromNamed: [], graphNames: [] });
      }),
    );
  });
});

describe("scopeSparqlDataset", () => {
  it("defaults to every in-scope graph, narrows to FROM / FROM NAMED, and names offenders", () => {
    const view = viewOf([A, B]);
    expect(scopeSparqlDataset(inspectSparqlQuery("SELECT * {}"), view)).toEqual({
      defaultGraphs: [graphIri(A), graphIri(B)],
      namedGraphs: [graphIri(A), graphIri(B)],
    });
    expect(scopeSparqlDataset(inspectSparqlQuery(`SELECT * FROM <${graphIri(B)}> FROM <${graphIri(B)}> {}`), view)).toEqual({
      defaultGraphs: [graphIri(B)],
      namedGraphs: [],
    });
    try {
      scopeSparqlDataset(inspectSparqlQuery(`SELECT * FROM <${graphIri(C)}> { GRAPH <http://x/> {} }`), view);
      throw new Error("expected a scope violation");
    } catch (err) {
      expect(err).toBeInstanceOf(ScopeViolationError);
      expect((err as ScopeViolationError).info.resourceIds).toEqual([C]);
      expect((err as ScopeViolationError).info.reason).toMatch(/<http:\/\/x\/> is not a resource graph/);
    }
  });

  it("never hands out a graph outside the scope (property)", () => {
    const ids = [A, B, C];
    const graphName = fc.oneof(
      fc.constantFrom(...ids).map((id) => `<${graphIri(id)}>`),
      fc.constantFrom(...ids).map((id) => `g:${id}\\/`),
      fc.constant("<http://example.org/g>"),
    );
    fc.assert(
      fc.property(
        fc.subarray(ids),
        fc.array(fc.tuple(fc.constantFrom("FROM", "FROM NAMED"), graphName), { maxLength: 3 }),
        fc.array(graphName, { maxLength: 2 }),
        (scope, dataset, graphs) => {
          const q = `PREFIX g: <uko://> SELECT * ${dataset.map(([k, g]) => `${k} ${g}`).join(" ")} { ${graphs.map((g) => `GRAPH ${g} {}`).join(" ")} }`;
          const view = viewOf(scope);
          const allowed = new Set(scope.map(graphIri));
          try {
            const ds = scopeSparqlDataset(inspectSparqlQuery(q), view);
            for (const g of [...ds.defaultGraphs, ...ds.namedGraphs]) expect(allowed.has(g)).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(ScopeViolationError);
          }
        },
      ),
    );
  });
});

describe("inspection is linear in the query's length", () => {
  it("a run of name letters is tokenized as before: prefixed names found at every start that opens one", () => {
    const kinds = (q: string) => tokenizeSparql(q).map((t) => `${t.kind}:${t.text}`);
    expect(kinds("-abc:x")).toEqual(["punct:-", "pname:abc:x"]);
    expect(kinds("0abc:x")).toEqual(["number:0", "pname:abc:x"]);
    expect(kinds("é-é:x")).toEqual(["pname:é-é:x"]);
    expect(kinds("a-b-c:d")).toEqual(["pname:a-b-c:d"]);
    expect(kinds("é.:x")).toEqual(["punct:é", "punct:.", "pname::x"]);
    expect(kinds("ab.:x")).toEqual(["word:ab", "punct:.", "pname::x"]);
    expect(kinds("éa.b.:c")).toEqual(["punct:é", "word:a", "punct:.", "word:b", "punct:.", "pname::c"]);
    expect(kinds("é€é")).toEqual(["punct:é", "punct:€", "punct:é"]);
    expect(kinds("éSELECT")).toEqual(["punct:é", "word:SELECT"]);
  });

  it("64 KB of one repeated letter (non-ASCII, or ASCII with hyphens) is inspected at once", () => {
    // Each of these took the old tokenizer about a minute (a failed prefix match rescanned the run from
    // every letter). Grown from 1 KB to the cap: every size gives the same answer.
    for (const unit of ["é", "€", "a-", "e.", "𝔸"]) {
      for (let size = 1024; size <= 60 * 1024; size *= 4) {
        const body = unit.repeat(Math.floor(size / unit.length));
        expect(inspectSparqlQuery(`SELECT * { ${body} }`)).toEqual({ form: "SELECT", from: [], fromNamed: [], graphNames: [] });
        expect(inspectSparqlQuery(`SELECT * FROM <${graphIri(A)}> { ?s ?p ${body} }`).from).toEqual([graphIri(A)]);
      }
    }
  });

  it("a query over MAX_SPARQL_LENGTH is INVALID_ARGUMENT before it is tokenized", () => {
    expect(() => inspectSparqlQuery(`SELECT * { ${"é".repeat(MAX_SPARQL_LENGTH)} }`)).toThrow(InvalidArgumentError);
  });
});
