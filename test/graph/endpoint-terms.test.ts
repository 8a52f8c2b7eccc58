import { InvalidArgumentError } from "../../src/domain/errors.js";
import { literal, namedNode, Store } from "oxigraph";
import {
  canonicalDuration,
  normaliseTriple,
  SKOLEM_PREFIX,
  sparqlTerm,
  storedTerm,
  termOfJson,
  termOfNTriples,
  VERBATIM_PREFIX,
} from "../../src/adapters/sparql-endpoint/endpoint-terms.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";

describe("terms between the service and a SPARQL endpoint", () => {
  it("blank nodes travel as skolem IRIs and come back as the same blank nodes", () => {
    const t = normaliseTriple(
      {
        subject: { kind: "blank", value: "_:b1" },
        predicate: { kind: "iri", value: "http://e/p" },
        object: { kind: "blank", value: "b2" },
      },
      "triples[0]",
    );
    expect(sparqlTerm(t.subject)).toBe(`<${SKOLEM_PREFIX}b1>`);
    expect(termOfJson({ type: "uri", value: `${SKOLEM_PREFIX}b2` })).toEqual({ kind: "blank", value: "b2" });
    expect(termOfNTriples({ kind: "iri", value: `${SKOLEM_PREFIX}b1` })).toEqual({ kind: "blank", value: "b1" });
    expect(termOfJson({ type: "bnode", value: "nodeID://b10006" })).toEqual({ kind: "blank", value: "b10006" });
  });

  it("an IRI under the skolem prefix cannot be written (it would come back as a blank node)", () => {
    expect(() =>
      normaliseTriple(
        {
          subject: { kind: "iri", value: `${SKOLEM_PREFIX}x` },
          predicate: { kind: "iri", value: "http://e/p" },
          object: { kind: "literal", value: "o" },
        },
        "triples[3]",
      ),
    ).toThrow(InvalidArgumentError);
  });

  it("literals are escaped for SPARQL Update, language tags lower-cased and xsd:string dropped", () => {
    const t = normaliseTriple(
      {
        subject: { kind: "iri", value: "http://e/s" },
        predicate: { kind: "iri", value: "http://e/p" },
        object: { kind: "literal", value: 'a "q" \\ \n\t\u0001', language: "en-US" },
      },
      "t",
    );
    expect(sparqlTerm(t.object)).toBe('"a \\"q\\" \\\\ \\n\\t\\u0001"@en-us');
    expect(
      normaliseTriple(
        {
          subject: { kind: "iri", value: "http://e/s" },
          predicate: { kind: "iri", value: "http://e/p" },
          object: { kind: "literal", value: "x", datatype: `${XSD}string` },
        },
        "t",
      ).object,
    ).toEqual({
      kind: "literal",
      value: "x",
    });
  });

  it("Virtuoso's booleans and doubles are answered in the embedded engine's canonical form", () => {
    expect(termOfJson({ type: "typed-literal", value: "1", datatype: `${XSD}boolean` })).toEqual({
      kind: "literal",
      value: "true",
      datatype: `${XSD}boolean`,
    });
    expect(termOfJson({ type: "typed-literal", value: "0", datatype: `${XSD}boolean` })).toEqual({
      kind: "literal",
      value: "false",
      datatype: `${XSD}boolean`,
    });
    expect(termOfJson({ type: "typed-literal", value: "1.0", datatype: `${XSD}double` })).toEqual({
      kind: "literal",
      value: "1",
      datatype: `${XSD}double`,
    });
    expect(termOfJson({ type: "typed-literal", value: "1500.0", datatype: `${XSD}float` })).toEqual({
      kind: "literal",
      value: "1500",
      datatype: `${XSD}float`,
    });
    expect(termOfJson({ type: "typed-literal", value: "INF", datatype: `${XSD}double` })).toEqual({
      kind: "literal",
      value: "INF",
      datatype: `${XSD}double`,
    });
    expect(termOfJson({ type: "literal", value: "x", "xml:lang": "EN-us" })).toEqual({ kind: "literal", value: "x", language: "en-us" });
    expect(termOfJson({ type: "typed-literal", value: "x", datatype: `${XSD}string` })).toEqual({ kind: "literal", value: "x" });
  });

  it("Virtuoso's other value forms are answered as the embedded engine answers them", () => {
    expect(termOfJson({ type: "typed-literal", value: "1.5e-07", datatype: `${XSD}double` })).toEqual({
      kind: "literal",
      value: "0.00000015",
      datatype: `${XSD}double`,
    });
    expect(termOfJson({ type: "typed-literal", value: "1e+21", datatype: `${XSD}double` })).toEqual({
      kind: "literal",
      value: "1000000000000000000000",
      datatype: `${XSD}double`,
    });
    expect(termOfJson({ type: "typed-literal", value: "-2.5e-7", datatype: `${XSD}float` })).toEqual({
      kind: "literal",
      value: "-0.00000025",
      datatype: `${XSD}float`,
    });
    expect(termOfJson({ type: "typed-literal", value: "5", datatype: `${XSD}long` })).toEqual({
      kind: "literal",
      value: "5",
      datatype: `${XSD}integer`,
    });
    expect(termOfJson({ type: "typed-literal", value: "-05", datatype: `${XSD}int` })).toEqual({
      kind: "literal",
      value: "-5",
      datatype: `${XSD}integer`,
    });
    expect(termOfNTriples({ kind: "literal", value: "2020-01-01T10:00:00.500+02:00", datatype: `${XSD}dateTime` })).toEqual({
      kind: "literal",
      value: "2020-01-01T10:00:00.5+02:00",
      datatype: `${XSD}dateTime`,
    });
    expect(termOfJson({ type: "typed-literal", value: "2020-01-01T10:00:00.000Z", datatype: `${XSD}dateTime` })).toEqual({
      kind: "literal",
      value: "2020-01-01T10:00:00Z",
      datatype: `${XSD}dateTime`,
    });
    expect(termOfJson({ type: "typed-literal", value: "10:00:00.25", datatype: `${XSD}time` })).toEqual({
      kind: "literal",
      value: "10:00:00.25",
      datatype: `${XSD}time`,
    });
    expect(termOfJson({ type: "typed-literal", value: "PT1H", datatype: `${VERBATIM_PREFIX}${XSD}duration` })).toEqual({
      kind: "literal",
      value: "PT1H",
      datatype: `${XSD}duration`,
    });
  });

  it("literals Virtuoso would refuse or change are stored verbatim; the rest as themselves", () => {
    const stored = (value: string, type: string) =>
      storedTerm({ kind: "literal", value, datatype: type.includes(":") ? type : `${XSD}${type}` });
    const verbatim = (value: string, type: string) => `"${value}"^^<${VERBATIM_PREFIX}${type.includes(":") ? type : `${XSD}${type}`}>`;
    for (const [value, type] of [
      ["abc", "integer"],
      ["1.5", "int"],
      ["9223372036854775808", "integer"],
      ["abc", "boolean"],
      ["2", "boolean"],
      ["abc", "decimal"],
      ["1e3", "decimal"],
      ["abc", "double"],
      ["1e", "float"],
      ["<a/>", "http://www.w3.org/1999/02/22-rdf-syntax-ns#XMLLiteral"],
      ["P", "duration"],
    ]) {
      expect(stored(value, type)).toBe(verbatim(value, type));
    }
    expect(stored("PT60M", "duration")).toBe(verbatim("PT1H", "duration"));
    for (const [value, type] of [
      ["-9223372036854775808", "integer"],
      ["+7", "int"],
      ["1", "boolean"],
      [".5", "decimal"],
      ["-1.5E-7", "double"],
      ["INF", "float"],
      ["NaN", "double"],
      ["abc", "date"],
      ["x", "http://example.org/dt"],
    ]) {
      expect(stored(value, type)).toBe(`"${value}"^^<${type.includes(":") ? type : `${XSD}${type}`}>`);
    }
    expect(storedTerm({ kind: "literal", value: "plain" })).toBe('"plain"');
  });

  it("durations take the embedded engine's canonical form (checked against Oxigraph itself)", () => {
    const cases: [string, string][] = [
      ["PT60M", "duration"],
      ["P1Y2M", "duration"],
      ["P0Y", "duration"],
      ["PT0.000S", "duration"],
      ["P13M", "duration"],
      ["PT36H", "duration"],
      ["-P1DT0.50S", "duration"],
      ["P1DT2H3M4.5S", "duration"],
      ["PT90061S", "duration"],
      ["P2Y0M1DT0H0M0S", "duration"],
      ["-PT1M", "duration"],
      ["PT1H", "dayTimeDuration"],
      ["P1D", "dayTimeDuration"],
      ["PT0S", "dayTimeDuration"],
      ["P12M", "yearMonthDuration"],
      ["P0Y", "yearMonthDuration"],
      ["-P25M", "yearMonthDuration"],
    ];
    const store = new Store();
    const terms = cases.map(([value, type]) => literal(value, namedNode(`${XSD}${type}`)).toString());
    const rows = store.query(`SELECT ?i ?x { VALUES (?i ?x) { ${terms.map((t, i) => `(${i} ${t})`).join(" ")} } }`) as Map<
      string,
      { value: string }
    >[];
    const expected = new Map(rows.map((r) => [Number(r.get("i")?.value), r.get("x")?.value]));
    cases.forEach(([value, type], i) =>
      expect([value, type, canonicalDuration(value, `${XSD}${type}`)]).toEqual([value, type, expected.get(i)]),
    );
    for (const [value, type] of [
      ["P", "duration"],
      ["PT", "duration"],
      ["P1Y", "dayTimeDuration"],
      ["PT1H", "yearMonthDuration"],
      ["1Y", "duration"],
      ["P1H", "duration"],
    ]) {
      expect(canonicalDuration(value, `${XSD}${type}`)).toBeUndefined();
    }
  });
});
