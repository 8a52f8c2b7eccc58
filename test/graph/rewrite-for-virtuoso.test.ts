import { rewriteForVirtuoso } from "../../src/adapters/sparql-endpoint/rewrite-for-virtuoso.js";
import { SKOLEM_PREFIX, TYPED_PREFIX, normaliseTriple, termOfJson, typedCopy } from "../../src/adapters/sparql-endpoint/endpoint-terms.js";
import { InvalidArgumentError } from "../../src/domain/errors.js";

const skolem = (arg: string) => `(isIRI(${arg}) && STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`;

describe("queries rewritten for Virtuoso", () => {
  it("isBlank also holds for a skolem IRI, isIRI and isURI do not, whatever the case", () => {
    expect(rewriteForVirtuoso("SELECT * { ?s ?p ?o FILTER(isBlank(?o)) }")).toBe(
      `SELECT * { ?s ?p ?o FILTER((isBlank(?o) || ${skolem("?o")})) }`,
    );
    expect(rewriteForVirtuoso("ASK { ?s ?p ?o FILTER(ISIRI(?s) || isUri(?o)) }")).toBe(
      `ASK { ?s ?p ?o FILTER((isIRI(?s) && !STRSTARTS(STR(?s), "${SKOLEM_PREFIX}")) || (isIRI(?o) && !STRSTARTS(STR(?o), "${SKOLEM_PREFIX}"))) }`,
    );
  });

  it("a test's argument is repeated with its own tests and BNODE() rewritten", () => {
    const out = rewriteForVirtuoso("SELECT (isBlank(COALESCE(?x, isIRI(?y), BNODE())) AS ?b) {}");
    expect(out).not.toMatch(/BNODE\(\)/);
    expect(out.match(/STRUUID\(\)/g)).toHaveLength(3);
    expect(out.match(/!STRSTARTS/g)).toHaveLength(3);
    expect(out.startsWith("SELECT ((isBlank(COALESCE(?x, (isIRI(?y) && !STRSTARTS(STR(?y)")).toBe(true);
  });

  it("each ORDER BY condition gets the kind rank SPARQL fixes in front of it, up to LIMIT", () => {
    const out = rewriteForVirtuoso("SELECT * { ?s ?p ?o } ORDER BY ?o DESC(STR(?s)) (LCASE(?p)) ex:f(?o) LIMIT 3");
    const parts = out.slice(out.indexOf("ORDER BY ") + 9, out.indexOf(" LIMIT 3")).split(/ (?=ASC\(IF\(COALESCE|DESC\(IF\(COALESCE)/);
    expect(parts).toHaveLength(4);
    expect(parts[0]).toMatch(/^ASC\(IF\(COALESCE\(STRLEN\(STR\(\?o\)\), -1\) < 0, 0, .*\) \?o$/);
    // STR(?s) itself is rewritten (an error for a skolemised blank node), inside the rank and after it.
    const str = `IF(${skolem("?s")}, ?acms_error, STR(?s))`;
    expect(parts[1].startsWith(`DESC(IF(COALESCE(STRLEN(STR((${str}))), -1) < 0, 0, `)).toBe(true);
    expect(parts[1].endsWith(` DESC(${str})`)).toBe(true);
    expect(parts[2].endsWith(" (LCASE(?p))")).toBe(true);
    expect(parts[3].endsWith(" ex:f(?o)")).toBe(true);
    expect(out.endsWith(" LIMIT 3")).toBe(true);
  });

  it("STR() of a skolem IRI is an error (an unbound variable the query does not use); STRSTARTS and STRLEN stay", () => {
    expect(rewriteForVirtuoso('SELECT (STR(?o) AS ?x) { ?s ?p ?o FILTER(STRSTARTS(?x, "a")) }')).toBe(
      `SELECT (IF(${skolem("?o")}, ?acms_error, STR(?o)) AS ?x) { ?s ?p ?o FILTER(STRSTARTS(?x, "a")) }`,
    );
    expect(rewriteForVirtuoso('SELECT ?acms_error ?acms_error0 { ?acms_error ?p ?acms_error0 FILTER(str(?p) != "") }')).toBe(
      `SELECT ?acms_error ?acms_error0 { ?acms_error ?p ?acms_error0 FILTER(IF(${skolem("?p")}, ?acms_error1, STR(?p)) != "") }`,
    );
    expect(rewriteForVirtuoso("SELECT (STRLEN(STR(STR(?o))) AS ?n) {}")).toBe(
      `SELECT (STRLEN(IF(${skolem(`IF(${skolem("?o")}, ?acms_error, STR(?o))`)}, ?acms_error, STR(IF(${skolem("?o")}, ?acms_error, STR(?o))))) AS ?n) {}`,
    );
  });

  it("strings, IRIs, comments, variables and prefixed names that look like tests stay as written", () => {
    for (const q of [
      'SELECT * { ?s ?p "isBlank(?o)" }',
      "SELECT * { ?s <http://e/isIRI(x)> ?o } # isBlank(?o)",
      "SELECT ?isBlank { ?s ex:isBlank ?isBlank }",
      "SELECT * { ?s ?p ?o FILTER(isBlank(?o }",
      "SELECT ?order { ?s <http://e/order> ?order } # ORDER BY ?s",
    ]) {
      expect(rewriteForVirtuoso(q)).toBe(q);
    }
  });
});

describe("typed literals' exact copies", () => {
  it("a typed literal gets a copy under the reserved datatype prefix, read back as written; other terms none", () => {
    const t = normaliseTriple(
      {
        subject: { kind: "iri", value: "http://e/s" },
        predicate: { kind: "iri", value: "http://e/p" },
        object: { kind: "literal", value: "05", datatype: "http://www.w3.org/2001/XMLSchema#int" },
      },
      "t",
    );
    expect(typedCopy(t.object)).toBe(`"05"^^<${TYPED_PREFIX}http://www.w3.org/2001/XMLSchema#int>`);
    expect(termOfJson({ type: "typed-literal", value: "05", datatype: `${TYPED_PREFIX}http://www.w3.org/2001/XMLSchema#int` })).toEqual(
      t.object,
    );
    expect(typedCopy({ kind: "literal", value: "x" })).toBeUndefined();
    expect(typedCopy({ kind: "literal", value: "x", language: "en" })).toBeUndefined();
    expect(typedCopy({ kind: "iri", value: "http://e/o" })).toBeUndefined();
  });

  it("the reserved prefix cannot be written as a datatype or an IRI", () => {
    const s = { kind: "iri" as const, value: "http://e/s" };
    const p = { kind: "iri" as const, value: "http://e/p" };
    expect(() =>
      normaliseTriple({ subject: s, predicate: p, object: { kind: "literal", value: "1", datatype: `${TYPED_PREFIX}x:y` } }, "t"),
    ).toThrow(InvalidArgumentError);
    expect(() => normaliseTriple({ subject: s, predicate: p, object: { kind: "iri", value: `${TYPED_PREFIX}x` } }, "t")).toThrow(
      InvalidArgumentError,
    );
  });
});
